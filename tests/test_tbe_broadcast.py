"""Broadcasting on the TBE model (ThresholdGradV2D and ReluGrad are ``ELEWISE_WITH_BROADCAST``, kernel_flavours
§5.2/§5.3): aclnnThresholdBackward reaches the L0 kernel with both inputs in their own shapes, and on the TBE SoCs
the default kernel is the TBE one. The tiling (worked by hand below) tiles the output; the copy-in reads each
tile's input elements with the broadcast applied. Bit-exact against the broadcasting oracles of ``golden``, on
every TBE SoC, for fp32/fp16/bf16/int8/uint8/int32, threshold != 0 (ThresholdGradV2D) and 0 (ReluGrad).

Which SoC has ``tik.vcopy`` is stated from the CANN 8.1.RC1 inis in this file's own table (:data:`VCOPY`).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_bits_equal

import ascend_lab as al
from ascend_lab import golden, tbe
from ascend_lab.ascendc import KernelError
from ascend_lab.ascendc.launcher import launch
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16
from ascend_lab.opdev.tiling_data import TilingError
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.relu_grad.op_kernel import tbe as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import tbe as tg
from ascend_lab.tbe import dsl

#: ``api_check_support("tik.vcopy")`` = the ini lists Intrinsic_vcopy (CANN 8.1.RC1 platform_config): Ascend910B4.ini
#: and Ascend910_9392.ini do (128=Intrinsic_vcopy), Ascend910A.ini and Ascend310P3.ini do not, so 910A and 310P take
#: vcmpsel / min-max-mul.
VCOPY = {"Ascend910A": False, "Ascend910B4": True, "Ascend910_9392": True, "Ascend310P3": False}
#: bf16 reaches the TBE kernels only where aclnn allows it (§5.6): 910B and 910_93.
BF16_SOCS = ("Ascend910B4", "Ascend910_9392")
F32 = np.dtype(np.float32)

#: (grad shape, feature shape): trailing axis, leading axis, 0-d, both broadcasting, mixed ranks, middle axis.
PATTERNS = [
    ((4, 1), (4, 1000)),          # grad broadcast along the trailing axis
    ((1000,), (3, 1000)),         # grad broadcast along a leading (added) axis
    ((), (5, 7)),                 # a 0-d grad
    ((4, 1), (1, 1000)),          # both inputs broadcast
    ((3, 1, 5), (4, 5)),          # mixed ranks, middle axis
    ((2, 3, 40), (2, 1, 40)),     # the feature broadcasts (middle axis)
    ((6, 1, 7, 1), (1, 5, 1, 9)), # alternating axes: four fused axes
]


def _data(rng: np.random.Generator, shape: tuple[int, ...], dt: np.dtype, scale: float) -> np.ndarray:
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.clip(np.round(rng.standard_normal(shape) * scale), info.min, info.max).astype(dt)
    a = (rng.standard_normal(shape) * scale).astype(dt)
    flat = a.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dt)[: flat.size]
    flat[: specials.size] = specials            # NaN/inf/signed zero in every case that has room
    return a


def _oracle(g: np.ndarray, x: np.ndarray, thr: float, soc: str) -> np.ndarray:
    if thr == 0:
        return golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc])
    return golden.threshold_grad_v2_d_legacy_tbe(g, x, thr, vcopy=VCOPY[soc])


def _check(g: np.ndarray, x: np.ndarray, thr: float, soc: str, *, trace: bool = False) -> al.Run:
    run = al.threshold_backward(g, x, thr, soc=soc, trace=trace)
    assert run.status == 0, run.messages
    assert run.kernel == "tbe" and "BroadcastTo" not in run.graph, (run.kernel, run.graph)
    ref = _oracle(g, x, thr, soc)
    assert ref.shape == np.broadcast_shapes(g.shape, x.shape)
    # ReluGrad's min/max/mul path: a NaN times a NaN mask returns one of the two NaNs (which one is undocumented)
    assert_bits_equal(run.out, ref, f"{soc} {g.dtype} {g.shape} x {x.shape} thr={thr}", any_nan=thr == 0)
    return run


# --- kernels vs oracles through al.threshold_backward (the default dispatch is TBE on these SoCs) ----------------
@pytest.mark.parametrize("soc", list(VCOPY))
@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.uint8, np.int32])
def test_broadcast_patterns_bit_exact(soc, dt):
    rng = np.random.default_rng(7)
    dt = np.dtype(dt)
    for gs, xs in PATTERNS:
        g, x = _data(rng, gs, dt, 20.0), _data(rng, xs, dt, 3.0)
        for thr in (0.3, -1.5, 0.0):
            _check(g, x, thr, soc)


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_broadcast_bf16(soc):
    rng = np.random.default_rng(8)
    for gs, xs in PATTERNS:
        g, x = _data(rng, gs, np.dtype(bfloat16), 20.0), _data(rng, xs, np.dtype(bfloat16), 3.0)
        for thr in (0.3, 0.0):
            _check(g, x, thr, soc)


def test_broadcast_plain_formula_and_nan_paths():
    """Away from NaN, both paths give ``x > thr ? g : 0``; a NaN feature gives 0 on 910A (vcmpsel 'gt') and the
    gradient elsewhere (vsel of vcmp 'le')."""
    g = np.array([[1.0], [2.0], [-3.0]], dtype=F32)                     # (3, 1)
    x = np.array([np.nan, -1.0, 0.5, 2.0], dtype=F32)                   # (4,)
    a = _check(g, x, 0.25, "Ascend910A").out
    b = _check(g, x, 0.25, "Ascend910B4").out
    np.testing.assert_array_equal(a[:, 1:], np.where(x[1:] > 0.25, g, 0).astype(F32))
    np.testing.assert_array_equal(a[:, 1:], b[:, 1:])
    assert (a[:, 0] == 0).all() and np.array_equal(b[:, 0], g[:, 0])


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend910B4"])
def test_broadcast_many_cores_many_tiles_double_buffered(soc):
    """Enough output for every core, several UB tiles per core and a double-buffered key; the grad row repeats."""
    rng = np.random.default_rng(9)
    g = rng.standard_normal(100_003).astype(F32)
    x = rng.standard_normal((6, 100_003)).astype(F32)
    run = _check(g, x, 0.1, soc)
    td = run.tiling
    assert tbe.schedule.is_broadcast(td) and tbe.schedule.double_buffered(td)
    assert td.tilingKey == tbe.schedule.BROADCAST_TILING_KEY + tbe.schedule.DB_TILING_KEY
    assert td.dim0 == x.size and td.blockDim == get_soc(soc).vector_core_num and td.ubFactor < td.blockFactor
    run = _check(g.astype(np.float16), x.astype(np.float16), 0.0, soc)       # ReluGrad, fp16
    assert tbe.schedule.is_broadcast(run.tiling)


def test_equal_shapes_keep_the_elewise_tiling():
    """No broadcast axis: broadcast_v3.cc turns to the elewise tiling -- same struct, same key, same result."""
    rng = np.random.default_rng(10)
    g, x = rng.standard_normal((30, 50)).astype(F32), rng.standard_normal((30, 50)).astype(F32)
    run = _check(g, x, 0.2, "Ascend910B4")
    assert type(run.tiling) is tg.ThresholdGradV2DTbeTilingData
    info = get_soc("Ascend910B4")
    assert run.tiling == tg.tiling(1500, "float32", info.vector_core_num, info.core_mem_size_ub, threshold=0.2)
    # (1, 1500) against (1500,) has no broadcast axis either
    td = tg.tiling_for_shapes([(1, 1500), (1500,)], (1, 1500), "float32", 40, 196352, threshold=0.2)
    assert type(td) is tg.ThresholdGradV2DTbeTilingData and td.tilingKey == tbe.schedule.COMMON_TILING_KEY


# --- the tiling, worked by hand --------------------------------------------------------------------------------
def test_fuse_broadcast_shapes():
    fuse = tbe.schedule.fuse_broadcast_shapes
    assert fuse([(4, 1), (4, 1000)], (4, 1000)) == ([4, 1000], [[4, 1], [4, 1000]])
    assert fuse([(1000,), (3, 1000)], (3, 1000)) == ([3, 1000], [[1, 1000], [3, 1000]])
    assert fuse([(), (5, 7)], (5, 7)) == ([35], [[1], [35]])                         # one broadcast state: fused
    assert fuse([(1, 2, 3, 1), (5, 2, 3, 7)], (5, 2, 3, 7)) == ([5, 6, 7], [[1, 6, 1], [5, 6, 7]])
    assert fuse([(6, 1, 7, 1), (1, 5, 1, 9)], (6, 5, 7, 9)) == ([6, 5, 7, 9], [[6, 1, 7, 1], [1, 5, 1, 9]])
    assert fuse([(1, 1), (1,)], (1, 1)) == ([1], [[1], [1]])


def test_broadcast_tiling_by_hand():
    # (4, 1) x (4, 1000) fp32 on 910B4: 40 cores, UB 196352 as the tiling sees it (GetCoreMemSize, §6); the
    # broadcast schedule divides the ini's 196608 (coexist 4, extra 64: tests/test_tbe_storage_bound.py example 3):
    # maxUb = ((196608 - 128)//4//32*32)//4 = 12280, maxUbDb = 6136.
    # Output N = 4000 >= 8*40*2 = 640 -> multi-core: blockFactor = roundUp(ceil(4000/40) = 100, 128) = 128,
    # blockDim = ceil(4000/128) = 32; 128 <= min(12280, 16383): no double buffer. Key 200000000.
    td = tg.tiling_for_shapes([(4, 1), (4, 1000)], (4, 1000), "float32", 40, 196352, threshold=0.5)
    assert (td.dim0, td.blockFactor, td.ubFactor, td.blockDim, td.tilingKey) == (4000, 128, 128, 32, 200000000)
    assert td.shapeLen == 2 and tbe.schedule.broadcast_dims(td) == ([4, 1000], [[4, 1], [4, 1000]])
    assert [getattr(td, f"inputDims[0][{j}]") for j in range(8)] == [4, 1, 1, 1, 1, 1, 1, 1]
    assert float(td.threshold) == 0.5
    # the struct: dim0, blockFactor, ubFactor, threshold, shapeLen, then 2 x 8 dims, all 4 bytes
    assert len(td.to_bytes()) == 4 * (5 + 16)
    # a 0-d grad against 7 elements of int8 on 310P3 (8 cores): 7 < 32*8*2 -> one core, one tile of 7
    td = rg.tiling_for_shapes([(), (7,)], (7,), "int8", 8, 262144)
    assert (td.dim0, td.blockFactor, td.ubFactor, td.blockDim, td.tilingKey) == (7, 7, 7, 1, 200000000)
    # the core ranges describe the output
    td = tg.tiling_for_shapes([(1000,), (3, 1000)], (3, 1000), "float16", 40, 196352)
    ranges = tbe.core_ranges(td, "float16")
    assert sum(r["data_num"] for r in ranges) == 3000 and ranges[-1]["padded_end"] == 3000


def test_broadcast_tiling_refusals():
    with pytest.raises(TilingError, match="do not broadcast"):
        tg.tiling_for_shapes([(3, 4), (5, 4)], (3, 4), "float32", 40, 196352)
    with pytest.raises(TilingError, match="not to the output shape"):
        tg.tiling_for_shapes([(4, 1), (4, 5)], (2, 4, 5), "float32", 40, 196352)
    with pytest.raises(TilingError, match="supports"):
        rg.tiling_for_shapes([(4, 1), (4, 5)], (4, 5), "float64", 40, 196352)
    # an empty output: elewise's empty tiling (one core, key INT32_MAX), whatever the shapes
    td = tg.tiling_for_shapes([(0, 1), (1, 5)], (0, 5), "float32", 40, 196352)
    assert (td.blockDim, td.tilingKey, td.dim0) == (1, 2**31 - 1, 0)


def test_empty_broadcast_output_through_aclnn():
    g, x = np.zeros((0, 1), dtype=F32), np.ones((1, 5), dtype=F32)
    run = al.threshold_backward(g, x, 0.5, soc="Ascend910B4")
    assert run.status == 0 and run.out.shape == (0, 5)


# --- the copy-in: bytes read, GM checks -------------------------------------------------------------------------
def test_broadcast_copy_reads_the_distinct_bytes():
    """(4, 1) grad against (4, 1000) features: each 128-element tile reads the grad elements of the rows it
    covers (one or two, 4 bytes each) in one MTE2 event, and the features contiguously (DataCopyPad)."""
    rng = np.random.default_rng(11)
    g, x = rng.standard_normal((4, 1)).astype(F32), rng.standard_normal((4, 1000)).astype(F32)
    run = _check(g, x, 0.3, "Ascend910B4", trace=True)
    kr = run.kernel_runs[0]
    td = kr.tiling
    mte2 = [e for e in kr.trace.events if e.pipe == "MTE2"]
    grad_ev = [e for e in mte2 if "input_gradient" in e.detail]
    feat_ev = [e for e in mte2 if "input_feature" in e.detail]
    tiles = [t for r in tbe.core_ranges(td, "float32") for t in r["tiles"]]
    assert len(grad_ev) == len(feat_ev) == len(tiles) == 32
    want = sorted(((off, 4 * ((off + n - 1) // 1000 - off // 1000 + 1)) for _, off, n in tiles))
    got = sorted((int(e.detail.split("output elements ")[1].split("..")[0]), e.nbytes) for e in grad_ev)
    assert got == want and {e.instr for e in grad_ev} == {"DataCopy"}
    assert {e.instr for e in feat_ev} == {"DataCopyPad"} and sum(e.nbytes for e in feat_ev) == x.nbytes
    assert sum(c.bytes_in for c in kr.trace.cores) == sum(e.nbytes for e in mte2) == x.nbytes + sum(n for _, n in want)
    assert not kr.warnings


def _tbe_launch(td, g, x, soc="Ascend910B4"):
    """Launch the TBE ThresholdGradV2D on host arrays with a hand-made tiling (what the L0 node does)."""
    out = np.zeros(td.dim0, dtype=g.dtype)
    args = [gm_from_array(g.reshape(-1), "input_gradient"), gm_from_array(x.reshape(-1), "input_feature"),
            gm_from_array(out, "output_backprops")]
    return launch(tg.threshold_grad_v2_d, td.blockDim, args, td.to_bytes(), get_soc(soc), outputs=(2,),
                  record=False, kernel_name="ThresholdGradV2D", tiling_data=td,
                  **tg.template_args(td, g.dtype)), args[2].ptr.allocation


def test_broadcast_copy_goes_through_the_gm_checks():
    """A tiling that claims a larger grad than the tensor holds makes the broadcast read run past it: the
    simulator's GM read checks stop the kernel (gm-out-of-bounds, naming the tensor and the broadcast copy)."""
    rng = np.random.default_rng(12)
    g, x = rng.standard_normal((4, 1)).astype(F32), rng.standard_normal((4, 1000)).astype(F32)
    td = tg.tiling_for_shapes([g.shape, x.shape], x.shape, "float32", 40, 196352, threshold=0.3)
    run, out = _tbe_launch(td, g, x)
    assert not run.warnings
    assert_bits_equal(out.buffer[:x.nbytes].view(F32).reshape(x.shape), _oracle(g, x, 0.3, "Ascend910B4"))
    bad = td.replace(**{"inputDims[0][0]": 1, "inputDims[0][1]": 1000})     # grad "is" (1, 1000): 4000 B, not 16
    with pytest.raises(KernelError, match=r"gm-out-of-bounds.*input_gradient.*DataCopy\(broadcast\)"):
        _tbe_launch(bad, g, x)


def test_launch_refuses_a_one_dim_tiling_for_broadcast_tensors():
    info = get_soc("Ascend910B4")
    td = tg.tiling(4000, "float32", info.vector_core_num, info.core_mem_size_ub, threshold=0.3)

    class _T:          # the two aclTensor methods launch reads, for a tensor of ``n`` elements
        def __init__(self, n):
            self.n = n

        def Size(self):
            return self.n

    with pytest.raises(ValueError, match="tiling_shapes"):
        tg.launch(td, _T(4), _T(4000), _T(4000), info)


# --- the description and the program ----------------------------------------------------------------------------
def test_description_broadcasts_and_the_program_does_not_change():
    with dsl.compile_for("Ascend910B4"):
        plain = tg.describe("int8", 0.5)
        brc = tg.describe("int8", 0.5, shapes=((4, 1), (1000,)))
        plain_rg = rg.describe("float16")
        brc_rg = rg.describe("float16", shapes=((), (3, 5)))
    ops = [t.op for t in brc.nodes]
    assert ops.count("broadcast") == 2 and "broadcast" not in [t.op for t in plain.nodes]
    assert brc.output.shape == (4, 1000) and "broadcast(" in brc.describe() and "[4, 1000]" in brc.describe()
    # the elementwise count (Compute.coexist): a broadcast node takes its operand's place, the peak stays
    assert plain.coexist == brc.coexist == 4
    # the broadcast nodes lower to nothing: the copy-in delivers broadcast tiles
    assert tbe.build(brc, "Ascend910B4").listing == tbe.build(plain, "Ascend910B4").listing
    assert tbe.build(brc_rg, "Ascend910B4").listing == tbe.build(plain_rg, "Ascend910B4").listing
    assert brc_rg.output.shape == (3, 5)


def test_dsl_broadcast_rules():
    assert dsl.broadcast_shapes((4, 1), (1000,), "a", "b") == ((4, 1), (1, 1000), (4, 1000))
    assert dsl.broadcast_shapes((), (2, 3)) == ((1, 1), (2, 3), (2, 3))
    with pytest.raises(ValueError, match="do not broadcast"):
        dsl.broadcast_shapes((3,), (4,), "input_x", "input_y")
    t = dsl.placeholder((1, 5), "float32", "t")
    assert dsl.broadcast(t, (1, 5)) is t
    b = dsl.broadcast(t, (3, 5))
    assert (b.op, b.shape, b.inputs[0] is t, b.is_tensor_broadcast, b.is_scalar_broadcast) == \
        ("broadcast", (3, 5), True, True, False)
    with pytest.raises(ValueError, match="broadcast"):
        dsl.broadcast(t, (5,))
    with pytest.raises(ValueError, match="broadcast"):
        dsl.broadcast(t, (2, 4))
    assert dsl.broadcast(0, (3,), "float32").is_scalar_broadcast


def test_registry_wires_tiling_shapes():
    for op, mod in (("threshold_grad_v2_d", tg), ("relu_grad", rg)):
        k = registry.get(op).kernel("tbe")
        assert k.tiling_shapes is mod.tiling_for_shapes
    assert registry.get("hard_sigmoid_grad").kernel("tbe").tiling_shapes is None      # ELEWISE, no broadcast (§5.1)


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend910B4"])
def test_broadcast_traced_and_untraced_agree(soc):
    """Broadcast copy-ins (one input, the other or both), ThresholdGradV2D and ReluGrad, fp32 and int8: the oracle's
    bits and the same cycles with the trace on or off; the trace records a broadcast DataCopy per broadcast input."""
    rng = np.random.default_rng(11)
    for gs, xs in PATTERNS:
        for dt, thr in ((np.float32, 0.3), (np.int8, 0.0)):
            g, x = _data(rng, gs, np.dtype(dt), 20.0), _data(rng, xs, np.dtype(dt), 3.0)
            traced = al.threshold_backward(g, x, thr, soc=soc, trace=True)
            quiet = al.threshold_backward(g, x, thr, soc=soc, trace=False)
            assert traced.status == quiet.status == 0 and tbe.schedule.is_broadcast(traced.tiling), traced.messages
            assert_bits_equal(traced.out, _oracle(g, x, thr, soc))
            assert traced.out.tobytes() == quiet.out.tobytes() and traced.cycles == quiet.cycles
            assert any("broadcast GM" in (e.detail or "") for e in traced.trace.events)


def test_findings_of_the_copy_ins():
    """A run the sanitizer stops -- a broadcast read past the grad (CopyIn's broadcast copy), a plain read past
    tensors shorter than the tiling says (CopyIn's DataCopyPad) -- names the read, the tensor and its size."""
    rng = np.random.default_rng(13)
    g, x = rng.standard_normal((4, 1)).astype(F32), rng.standard_normal((4, 1000)).astype(F32)
    td = tg.tiling_for_shapes([g.shape, x.shape], x.shape, "float32", 40, 196352, threshold=0.3)
    bad = td.replace(**{"inputDims[0][0]": 1, "inputDims[0][1]": 1000})
    short = tg.tiling(5000, "float32", 2, 196352, threshold=0.3)
    cases = [(bad, g, x, "DataCopy(broadcast)", "GM read of 512 B at byte 0 of input_gradient is outside the tensor "
              "(16 B)"),
             (short, x[:3].reshape(-1), x[3].reshape(-1), "DataCopyPad", "GM read of 10240 B at byte 0 of "
              "input_feature is outside the tensor (4000 B)")]
    for tiling, a, b, instr, detail in cases:
        with pytest.raises(KernelError) as info:
            _tbe_launch(tiling, a, b)
        e = info.value
        assert (e.kind, e.instruction, e.core, e.tile) == ("gm-out-of-bounds", instr, 0, 0)
        assert e.detail.startswith(detail), e.detail


def test_distinct_count_is_numpys_unique():
    """The broadcast copy's distinct-element count (its MTE2 bytes) is ``np.unique(...).size`` on both of its
    paths: a mark per value (short span) and a sort (long span), for repeating, strided and random indices."""
    rng = np.random.default_rng(14)
    out_dims = [6, 1, 7, 9]
    for k in range(200):
        span = int(rng.integers(1, 3000))
        size = int(rng.integers(1, 2000))
        rel = rng.integers(0, span, size)
        if k % 3 == 0:                                    # a broadcast pattern: tile of a repeating row
            row = int(rng.integers(1, 500))
            rel = np.arange(int(rng.integers(0, 10_000)), size + 10_000)[:size] % row
            span = int(rel.max()) + 1 + int(rng.integers(0, 3 * size))
        assert tbe.copy_in.distinct_count(rel, span) == np.unique(rel).size, (k, span, size)
    for size in (1, 2, 100):                              # the sort path for certain: span far above 4 x size
        rel = rng.integers(0, 10**6, size)
        assert tbe.copy_in.distinct_count(rel, 10**6) == np.unique(rel).size
    strides = tbe.copy_in.broadcast_strides([6, 1, 7, 1])
    flat = np.arange(100, 400)
    idx = sum((flat // int(np.prod(out_dims[j + 1:])) % out_dims[j]) * s for j, s in enumerate(strides))
    assert tbe.copy_in.distinct_count(idx - idx.min(), int(idx.max() - idx.min()) + 1) == np.unique(idx).size


def test_broadcast_index_is_the_row_major_formula():
    """The broadcast copy's input index of each output element is ``sum(coordinate * stride)`` over the output's
    row-major coordinates, for random shapes, broadcast axes and ranges (past the output's end too, as a bad
    tiling asks)."""
    rng = np.random.default_rng(15)
    for _ in range(500):
        out = [int(d) for d in rng.integers(2, 9, int(rng.integers(1, 6)))]
        ins = [d if rng.random() < 0.5 else 1 for d in out]
        strides = tbe.copy_in.broadcast_strides(ins)
        start = int(rng.integers(0, 2 * int(np.prod(out))))
        count = int(rng.integers(1, int(np.prod(out)) + 1))
        flat = np.arange(start, start + count)
        coords = np.unravel_index(flat % int(np.prod(out)), out)
        expected = sum(c * s for c, s in zip(coords, strides, strict=True))
        got = tbe.copy_in.broadcast_index(out, strides, start, count)
        assert got.dtype == np.int64 and np.array_equal(got, expected), (out, ins, start, count)

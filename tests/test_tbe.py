"""The TBE model: the DSL's dtype rules, the elementwise schedule (worked by hand below), and the three legacy
TBE kernels bit-exact against oracles written from ``kernel_flavours.md`` §5 (``ascend_lab.golden``).

Which SoC has ``tik.vcopy`` these tests state from the CANN 8.1.RC1 inis in their own table (:data:`VCOPY`),
independently of the simulator's catalogue.
"""

from __future__ import annotations

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import golden, tbe
from ascend_lab.ascendc import VECIN, LocalTensor, TPipe, TQue
from ascend_lab.ascendc.launcher import launch as ascendc_launch
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import tbe as hsg
from ascend_lab.ops.relu_grad.op_kernel import tbe as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import tbe as tg
from ascend_lab.standalone import run_kernel
from ascend_lab.tbe import dsl, lowering

#: ``api_check_support("tik.vcopy")`` = the ini lists Intrinsic_vcopy (CANN 8.1.RC1 data/platform_config):
#: Ascend910B4.ini and Ascend910_9392.ini have ``128=Intrinsic_vcopy``; Ascend910A.ini and Ascend310P3.ini have none.
VCOPY = {"Ascend910A": False, "Ascend910B4": True, "Ascend910_9392": True, "Ascend310P3": False}
#: bf16 reaches the TBE kernels only where aclnn allows it (§5.6): 910B and 910_93.
BF16_SOCS = ("Ascend910B4", "Ascend910_9392")
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _assert_bits(out: np.ndarray, ref: np.ndarray, *, any_nan: bool = False) -> None:
    """Bit for bit. ``any_nan``: where both are NaN any payload passes -- for ReluGrad's ``g * mask``, where a
    NaN grad times a NaN mask returns one of the two NaNs, and which one is not documented."""
    assert out.dtype == ref.dtype and out.shape == ref.shape
    u = np.dtype(f"u{out.dtype.itemsize}")
    differ = np.ascontiguousarray(out).view(u) != np.ascontiguousarray(ref).view(u)
    if any_nan and out.dtype.kind in "fV":
        differ &= ~(np.isnan(out.astype(np.float32)) & np.isnan(ref.astype(np.float32)))
    bad = np.flatnonzero(differ)
    assert bad.size == 0, f"{bad.size} mismatches, first at {bad[:5]}: {out[bad[:5]]} vs {ref[bad[:5]]}"


def _all_patterns(dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """x: every 16-bit pattern once; grad: the same patterns in a fixed shuffled order (infs and NaNs included)."""
    x = np.arange(2**16, dtype=np.uint16).view(dt)
    g = np.random.default_rng(16).permutation(np.arange(2**16, dtype=np.uint16)).view(dt)
    return g, x


# --- the schedule, worked by hand ------------------------------------------------------------------------------
def _tiling(op_tiling, n, dtype, soc, **attrs):
    info = get_soc(soc)
    return op_tiling(n, dtype, info.vector_core_num, info.core_mem_size_ub, **attrs)


# The compile-time count and the ubFactor it leads to are worked by hand in tests/test_tbe_storage_bound.py.


def test_schedule_empty_and_core_ranges():
    td = _tiling(rg.tiling, 0, "float32", "Ascend910B4")
    assert (td.blockDim, td.tilingKey, td.dim0) == (1, 2**31 - 1, 0)
    td = _tiling(rg.tiling, 100_000, "float16", "Ascend910B4")
    ranges = tbe.core_ranges(td, "float16")
    assert sum(r["data_num"] for r in ranges) == 100_000
    assert all(r["offset"] % 128 == 0 and r["padding"] == 0 for r in ranges)
    assert ranges[-1]["padded_end"] == 100_000


def test_schedule_refuses_other_dtypes():
    with pytest.raises(ValueError, match="supports"):
        _tiling(hsg.tiling, 10, "int32", "Ascend910B4")
    with pytest.raises(ValueError, match="supports"):
        _tiling(rg.tiling, 10, "int64", "Ascend910B4")


# --- the DSL ---------------------------------------------------------------------------------------------------
def test_dsl_dtype_rules():
    x = dsl.placeholder((8,), "int32", "x")
    with pytest.raises(TypeError, match="vcmpsel supports"):
        dsl.vcmpsel(x, 1, "gt", x, 0)
    with pytest.raises(TypeError, match="share one dtype"):
        dsl.vmul(dsl.placeholder((8,), "float16"), dsl.placeholder((8,), "float32"))
    with pytest.raises(TypeError, match="vabs supports"):
        dsl.vabs(x)
    with pytest.raises(TypeError, match="condition"):
        dsl.vsel(dsl.placeholder((8,), "float16"), 0, dsl.placeholder((8,), "float16"))
    h = dsl.placeholder((8,), "float16")
    assert float(dsl.vmuls(h, 1 / 6).args[1]) == 0.1666259765625      # the scalar takes the tensor's dtype
    assert dsl.vcmp(h, 0, "le", "bit").dtype == "uint1"
    assert dsl.vcmp(h, 0, "le").dtype == "bool"


def test_cast_to_routes_and_truncation():
    i8 = dsl.placeholder((8,), "int8")
    up = dsl.cast_to(i8, "float32")
    assert (up.dtype, up.inputs[0].dtype, up.inputs[0].inputs[0] is i8) == ("float32", "float16", True)
    down = dsl.cast_to(up, "int8")
    assert down.attrs["round"] == "CAST_TRUNC" and down.inputs[0].attrs["round"] == "CAST_RINT"
    assert dsl.cast_to(dsl.placeholder((8,), "float32"), "int32").attrs["round"] == "CAST_TRUNC"
    h = dsl.placeholder((8,), "float16")
    not_integral = dsl.cast_to(h, "int8", f1628IntegerFlag=False)
    assert not_integral.inputs[0].op == "vadds" and float(not_integral.inputs[0].args[1]) == -0.5


def test_lowering_refuses_tensor_tensor_min():
    with dsl.compile_for("Ascend910A"):
        a, b = dsl.placeholder((8,), "float16", "a"), dsl.placeholder((8,), "float16", "b")
        c = dsl.Compute("m", (a, b), dsl.vmin(a, b))
    with pytest.raises(NotImplementedError, match="Min/Max"):
        tbe.build(c, "Ascend910A")


def test_per_soc_paths_in_the_descriptions():
    with dsl.compile_for("Ascend910A"):
        assert dsl.api_check_support("tik.vcopy") is False
        ops_a = [t.op for t in tg.describe("float32").nodes]
        relu_a = [t.op for t in rg.describe("float16").nodes]
    with dsl.compile_for("Ascend910B4"):
        ops_b = [t.op for t in tg.describe("float32").nodes]
        relu_b = [t.op for t in rg.describe("float16").nodes]
    assert "vcmpsel" in ops_a and "vsel" in ops_b
    assert "vmin" in relu_a and "vsel" in relu_b
    with pytest.raises(ValueError, match="built for"):
        with dsl.compile_for("Ascend950PR"):
            pass


# --- kernels vs oracles -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("soc", list(VCOPY))
def test_exhaustive_fp16(soc):
    g, x = _all_patterns(F16)
    _, out = run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="tbe", alpha=hsg.ALPHA_EXPERIMENTAL, record=False)
    _assert_bits(out, golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=hsg.ALPHA_EXPERIMENTAL))
    for thr in (0.5, -1.25, 65504.0):
        _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=thr, record=False)
        _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, thr, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_exhaustive_bf16(soc):
    g, x = _all_patterns(bfloat16)
    _, out = run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="tbe", alpha=hsg.ALPHA_EXPERIMENTAL, record=False)
    _assert_bits(out, golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=hsg.ALPHA_EXPERIMENTAL))
    _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=0.3, record=False)
    _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, 0.3, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)


def _fp32_cases(n: int = 30_000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(32)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0, -3.0, np.nextafter(3, 0), 1e-45, -1e-45,
                        2.0**-126, 2.0**-127, 0.5, np.nextafter(0.5, 1), 1.0], dtype=F32)
    x = np.concatenate([np.repeat(special, len(special)), (rng.standard_normal(n) * 4).astype(F32)])
    g = np.concatenate([np.tile(special, len(special)), rng.standard_normal(n).astype(F32)])
    return g, x


@pytest.mark.parametrize("soc", list(VCOPY))
def test_fp32_specials_and_random(soc):
    g, x = _fp32_cases()
    _, out = run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="tbe", alpha=hsg.ALPHA_EXPERIMENTAL, record=False)
    _assert_bits(out, golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=hsg.ALPHA_EXPERIMENTAL))
    _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=0.5, record=False)
    _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, 0.5, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3"])
def test_exhaustive_int8_pairs(soc, dt):
    vals = np.arange(256, dtype=np.uint8).view(dt)
    g, x = (a.ravel() for a in np.meshgrid(vals, vals))          # every (grad, feature) pair
    for thr in (0.0, 2.5, -7.0):
        _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=thr, record=False)
        _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, thr, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)
    np.testing.assert_array_equal(out, np.where(x > 0, g, 0).astype(dt))


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend910B4"])
def test_int32_beyond_two_to_the_24(soc):
    info = np.iinfo(np.int32)
    edge = np.array([info.min, info.max, 2**24 + 1, -(2**24) - 1, 16777217, 0, 1, -1, 3], dtype=np.int32)
    rng = np.random.default_rng(3)
    g = np.concatenate([np.repeat(edge, edge.size), rng.integers(info.min, info.max, 5000, dtype=np.int32)])
    x = np.concatenate([np.tile(edge, edge.size), rng.integers(info.min, info.max, 5000, dtype=np.int32)])
    _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=16777216.0, record=False)
    ref = golden.threshold_grad_v2_d_legacy_tbe(g, x, 16777216.0, vcopy=VCOPY[soc])
    _assert_bits(out, ref)
    assert not np.array_equal(ref, np.where(x > 16777216, g, 0))     # the fp32 route is inexact above 2^24
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)
    np.testing.assert_array_equal(out, np.where(x > 0, g, 0))        # the int32 min/max/mul path is exact


def test_nan_and_inf_per_soc():
    g = np.array([1.0, np.inf, -2.0, 5.0], dtype=F32)
    x = np.array([np.nan, -1.0, -1.0, 3.0], dtype=F32)
    _, a = run_kernel("threshold_grad_v2_d", g, x, soc="Ascend910A", kernel="tbe", threshold=0.0)
    _, b = run_kernel("threshold_grad_v2_d", g, x, soc="Ascend910B4", kernel="tbe", threshold=0.0)
    assert a[0] == 0 and b[0] == 1.0                                  # NaN -> 0 (vcmpsel gt) vs NaN -> g (vsel)
    _, ra = run_kernel("relu_grad", g, x, soc="Ascend910A", kernel="tbe")
    _, rb = run_kernel("relu_grad", g, x, soc="Ascend910B4", kernel="tbe")
    assert np.isnan(ra[1]) and rb[1] == 0                              # inf * 0 on the min/max/mul path
    assert np.signbit(ra[2]) and not np.signbit(rb[2])                 # -2 * 0 = -0 there, +0 from vsel
    _, h = run_kernel("hard_sigmoid_grad", g, x, soc="Ascend910A", kernel="tbe")
    assert h[0] == 0 and h[3] == 0 and h[1] == np.inf                  # NaN x -> 0; x = 3 -> 0 (|x| < 3)


# --- trace, UB layout, registry --------------------------------------------------------------------------------
def test_trace_and_ub_layout():
    g, x = _fp32_cases(200_000)
    run, _ = run_kernel("hard_sigmoid_grad", g, x, soc="Ascend910B4", kernel="tbe", record=True)
    pipes = {e.pipe for e in run.trace.events}
    assert {"MTE2", "V", "MTE3"} <= pipes
    assert {e.instr for e in run.trace.events if e.pipe == "V"} >= {"Muls", "CompareScalar", "Select"}
    layout = run.trace.ub_layout[0]
    names = [b.name for b in layout]
    td = run.tiling
    blocks = 2 if tbe.schedule.double_buffered(td) else 1
    assert sum(n.startswith("inQueue_grad_input[") for n in names) == blocks
    assert any(n.startswith("outQueue[") for n in names) and "mask0" in names
    used = max(b.offset + b.size for b in layout)
    assert used <= get_soc("Ascend910B4").ub_size - 8 * 1024 - 256
    assert run.cycles > 0 and not run.warnings


def test_registry_has_the_tbe_flavour():
    for op in ("hard_sigmoid_grad", "threshold_grad_v2_d", "relu_grad"):
        k = registry.get(op).kernel("tbe")
        assert k.socs == ("ascend910", "ascend910b", "ascend910_93", "ascend310p")
        td = k.tiling(10_000, "float16", 40, 196608)
        assert k.template(td, "float16", 2)["bufferNum"] == (2 if tbe.schedule.double_buffered(td) else 1)


# --- the generated tile body ---------------------------------------------------------------------------------------
def _op_cases(soc: str):
    """(op, dtype, attrs) of the three TBE kernels on ``soc``, every dtype they take there."""
    floats = ["float32", "float16"] + (["bfloat16"] if soc in BF16_SOCS else [])
    yield from (("hard_sigmoid_grad", dt, {}) for dt in floats)
    for dt in [*floats, "int8", "uint8", "int32"]:
        yield "threshold_grad_v2_d", dt, {"threshold": 0.5}
        yield "relu_grad", dt, {}


def _inputs(dt: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    if dt in ("int8", "uint8", "int32"):
        info = np.iinfo(dt)
        return tuple(rng.integers(info.min, info.max, n, endpoint=True, dtype=dt) for _ in range(2))
    np_dt = bfloat16 if dt == "bfloat16" else np.dtype(dt)
    g, x = ((rng.standard_normal(n) * 4).astype(np_dt) for _ in range(2))
    x[:8] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.0, -3.0, 0.5], dtype=np_dt)
    return g, x


def _oracle(op: str, g: np.ndarray, x: np.ndarray, soc: str, attrs: dict) -> np.ndarray:
    if op == "hard_sigmoid_grad":
        return golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=attrs["alpha"])
    if op == "threshold_grad_v2_d":
        return golden.threshold_grad_v2_d_legacy_tbe(g, x, attrs["threshold"], vcopy=VCOPY[soc])
    return golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc])


@pytest.mark.parametrize("soc", list(VCOPY))
def test_many_tiles_and_one_tile_match_the_oracles(soc):
    """Every kernel and dtype, double-buffered over several tiles per core (2 cores, a small UB, a short last tile
    and a short last core) traced with snapshots, and single-buffered (one tile per core) untraced: the oracle's
    bits, and the same cycles traced or not."""
    for op, dt, attrs in _op_cases(soc):
        attrs = {"alpha": hsg.ALPHA_EXPERIMENTAL} if op == "hard_sigmoid_grad" else attrs
        g, x = _inputs(dt, 10_007)
        run, out = run_kernel(op, g, x, soc=soc, kernel="tbe", core_num=2, ub_size=32768, record=True,
                              snapshot=True, **attrs)
        td = run.tiling
        assert tbe.schedule.double_buffered(td) and td.blockFactor > 2 * td.ubFactor, td
        assert any(e.values is not None for e in run.trace.events)
        _assert_bits(out, _oracle(op, g, x, soc, attrs), any_nan=op == "relu_grad")
        quiet, _ = run_kernel(op, g, x, soc=soc, kernel="tbe", core_num=2, ub_size=32768, record=False, **attrs)
        assert quiet.cycles == run.cycles
        g, x = _inputs(dt, 1000)
        run, out = run_kernel(op, g, x, soc=soc, kernel="tbe", record=False, **attrs)
        assert not tbe.schedule.double_buffered(run.tiling)
        _assert_bits(out, _oracle(op, g, x, soc, attrs), any_nan=op == "relu_grad")


def test_kernel_source_is_the_program_written_out():
    """The tile body a learner can print: every step of the listing, in order, between the queue calls."""
    prog = hsg.hard_sigmoid_grad.program("float32", "Ascend910B4", (0.25,))
    src = prog.kernel_source()
    compile(src, "<test>", "exec")
    compute = src[src.index("def Compute"):src.index("def CopyOut")].splitlines()
    calls = [line.strip().split("(")[0] for line in compute]
    steps = [line.split("(")[0] for line in prog.listing]
    first = calls.index(steps[0])
    assert calls[first:first + len(steps)] == steps
    assert calls[1:3] == ["grad_input = inQueue_grad_input.DeQue", "data_input = inQueue_data_input.DeQue"]
    assert "data_input_int32 = _retyped(data_input, int32" in src          # the sign-bit view, per tile
    assert "DataCopyPad(grad_input, grad_inputGm[off], p[0])" in src and "broadcast_copy" not in src
    brc = tg.threshold_grad_v2_d.program("float32", "Ascend910B4", (0.5,)).kernel_source([True, False])
    assert brc.count("broadcast_copy(") == 1 and brc.count("DataCopyPad(") == 2
    with pytest.raises(ValueError, match="one flag per input"):
        prog.kernel_source([True])


def test_tile_body_names_stay_valid_python():
    """Placeholders named like the body's own variables, a keyword or a builtin still give a body that runs."""
    def describe(dtype: str) -> dsl.Compute:
        a, b = dsl.placeholder((1,), dtype, "n"), dsl.placeholder((1,), dtype, "lambda")
        return dsl.Compute("names", (a, b), dsl.vmul(dsl.vadds(a, 1.5), dsl.vabs(b)))

    entry = tbe.make_entry("names", lambda dtype: describe(dtype), tbe.schedule.TbeElewiseTilingData)
    info = get_soc("Ascend910B4")
    a, b = _inputs("float32", 5000)
    td = tbe.schedule.op_tiling("Names", describe, ("float32",), a.size, "float32", 2, 32768)

    def launch_once():
        args = [gm_from_array(a, "a"), gm_from_array(b, "b"), gm_from_array(None, "out", nbytes=a.nbytes)]
        run = ascendc_launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=True,
                             kernel_name="Names", tiling_data=td, **lowering.template_args(td, "float32"))
        return run, args[2].ptr.allocation.buffer[:a.nbytes].view(np.float32).copy()

    got = launch_once()
    assert got[0].cycles > 0 and not got[0].trace.warnings
    with np.errstate(invalid="ignore"):
        _assert_bits(got[1], (a + np.float32(1.5)) * np.abs(b))
    src = entry.program("float32", "Ascend910B4", ()).kernel_source()
    assert "n_ = inQueue_n.DeQue" in src and "lambda_ = inQueue_lambda.DeQue" in src


def test_retyped_view_is_reinterpret_cast():
    """The per-tile view of a queue block equals ReinterpretCast's in every field (its numpy view: the same bytes,
    shape and strides) and shares the block's life: FreeTensor kills both."""
    seen = []

    def kernel(x, workspace, tiling):
        pipe, q = TPipe(), TQue(VECIN, 2, name="q")
        pipe.InitBuffer(q, 2, 1000)
        cache: dict = {}
        for _ in range(5):
            t = q.AllocTensor(np.float32)
            fast, ref = tbe.program.retyped(t, np.dtype(np.int16), cache), t.ReinterpretCast(np.int16)
            for name in LocalTensor.__slots__:
                a, b = getattr(fast, name), getattr(ref, name)
                if isinstance(a, np.ndarray):
                    assert (a.__array_interface__, a.dtype) == (b.__array_interface__, b.dtype), name
                else:
                    assert a is b or a == b, name
            assert fast.life is t.life and fast.alive
            q.EnQue(t)
            q.FreeTensor(q.DeQue(np.float32))
            assert not fast.alive and not ref.alive
            seen.append(fast.tile)
        assert len(cache) == 2                       # one numpy view per block

    ascendc_launch(kernel, 1, [gm_from_array(np.zeros(8, np.float32), "x")], b"", get_soc("Ascend910B4"),
                   outputs=(0,), record=True)
    assert seen == [0, 1, 2, 3, 4]


def test_program_for_a_tiling_is_the_program_the_run_ran():
    """``entry.program_for(td, dtype, soc)`` reads the attribute values from the tiling as the entry does: for an
    aclnn run's tiling it is the very (cached) Program that run used, and a different alpha gives another one."""
    rng = np.random.default_rng(9)
    g, x = rng.standard_normal((2, 5_000)).astype(np.float32)
    run = al.hardsigmoid_backward(g, x, soc="Ascend910B4", kernel="tbe")
    entry = hsg.hard_sigmoid_grad
    prog = entry.program_for(run.tiling, np.float32, "Ascend910B4")
    assert prog is entry.program("float32", "Ascend910B4", (run.tiling.alpha,))
    assert prog is entry.program_for(run.tiling, "float32", get_soc("Ascend910B4"))
    other = run.tiling.replace(alpha=np.float32(0.25))
    assert entry.program_for(other, np.float32, "Ascend910B4") is not prog


# --- golden listings: what the lowering emits, pinned line by line ---------------------------------------------------
#: HardSigmoidGrad fp32 on Ascend910B4, alpha 0.25: vmuls, vabs (sign bit, -x, Select), vcmpsel (compare, select).
HSG_LISTING = [
    'Muls(inQueue_grad_input, inQueue_grad_input, 0.25)',
    'CompareScalar(mask0, inQueue_data_input as int32, 0, LT)   # sign bit',
    'Muls(tmp0_float32, inQueue_data_input, -1)',
    'Select(tmp0_float32, mask0, tmp0_float32, inQueue_data_input, TENSOR_TENSOR)',
    'CompareScalar(mask0, tmp0_float32, 3.0, LT)',
    'Select(outQueue, mask0, inQueue_grad_input, 0.0, TENSOR_SCALAR)',
]
#: ThresholdGradV2D int8 on Ascend910A (no tik.vcopy): casts through fp16 to fp32, vcmpsel GT, casts back.
TGV2D_INT8_910A_LISTING = [
    'Cast(tmp0_float16, inQueue_data_input_features, CAST_NONE)   # int8 -> float16',
    'Cast(tmp1_float32, tmp0_float16, CAST_NONE)   # float16 -> float32',
    'Cast(tmp0_float16, inQueue_data_input_gradients, CAST_NONE)   # int8 -> float16',
    'Cast(tmp2_float32, tmp0_float16, CAST_NONE)   # float16 -> float32',
    'CompareScalar(mask0, tmp1_float32, 0.5, GT)',
    'Select(tmp1_float32, mask0, tmp2_float32, 0.0, TENSOR_SCALAR)',
    'Cast(tmp0_float16, tmp1_float32, CAST_RINT)   # float32 -> float16',
    'Cast(outQueue, tmp0_float16, CAST_TRUNC)   # float16 -> int8',
]
#: The generated tile body of the HardSigmoidGrad program above, as chapter 12.6 prints it.
HSG_TILE_BODY = """\
# The tile body of TBE hard_sigmoid_grad (float32) for Ascend910B4, generated from the program's steps
# by ascend_lab.tbe.lowering (Program.kernel_source) and compiled once: TbeElewiseKernel.Process runs it per tile.
#   s0 = np.float32(0.25)
#   s1 = np.int32(0)
#   s2 = np.float32(-1.0)
#   s3 = np.float32(3.0)
#   s4 = np.float32(0.0)
def bind(self):
    \"\"\"This kernel's queues, GM tensors and buffers, under the names the tile body uses.\"\"\"
    inQueue_grad_input, inQueue_data_input = self.inQueues
    outQueue = self.outQueue
    grad_inputGm, data_inputGm, outGm = self.gms
    tmp0_float32, mask0 = self.temps
    ubFactor = self.ubFactor
    data_input_int32_views = {}   # data_input's blocks as int32, by UB offset

    def CopyIn(self, i, n, p):
        off = i * ubFactor
        grad_input = inQueue_grad_input.AllocTensor(float32)
        DataCopyPad(grad_input, grad_inputGm[off], p[0])
        inQueue_grad_input.EnQue(grad_input)
        data_input = inQueue_data_input.AllocTensor(float32)
        DataCopyPad(data_input, data_inputGm[off], p[1])
        inQueue_data_input.EnQue(data_input)

    def Compute(self, n):
        grad_input = inQueue_grad_input.DeQue(float32)
        data_input = inQueue_data_input.DeQue(float32)
        out = outQueue.AllocTensor(float32)
        data_input_int32 = _retyped(data_input, int32, data_input_int32_views)
        n64 = -(-n // 64) * 64
        Muls(grad_input, grad_input, s0, n)
        CompareScalar(mask0, data_input_int32, s1, LT, n64)   # sign bit
        Muls(tmp0_float32, data_input, s2, n)
        Select(tmp0_float32, mask0, tmp0_float32, data_input, VSEL_TENSOR_TENSOR_MODE, n)
        CompareScalar(mask0, tmp0_float32, s3, LT, n64)
        Select(out, mask0, grad_input, s4, VSEL_TENSOR_SCALAR_MODE, n)
        outQueue.EnQue(out)
        inQueue_grad_input.FreeTensor(grad_input)
        inQueue_data_input.FreeTensor(data_input)

    def CopyOut(self, i, n, p):
        out = outQueue.DeQue(float32)
        DataCopyPad(outGm[i * ubFactor], out, p[2])
        outQueue.FreeTensor(out)

    return CopyIn, Compute, CopyOut
"""


def test_golden_listings():
    """The plan and the generated tile body of two programs, as text: any change to the lowering shows here."""
    prog = hsg.hard_sigmoid_grad.program("float32", "Ascend910B4", (0.25,))
    assert prog.listing == HSG_LISTING
    assert prog.kernel_source() == HSG_TILE_BODY
    assert tg.threshold_grad_v2_d.program("int8", "Ascend910A", (0.5,)).listing == TGV2D_INT8_910A_LISTING

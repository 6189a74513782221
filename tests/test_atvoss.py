"""The atvoss elementwise/broadcast template and the 950 ThresholdGradV2D / ReluGrad DAGs on it.

Facts from ``sources/kernel_flavours.md`` §3: the DAG tables of §3.2 (order, slots, BufferNum), the
live-buffer counts of §3.3, BroadcastBaseTiling of §3.4, the six worked tilings and the broadcast example of
§3.6, the numerics of §3.7. Outputs are compared as raw bits with ``ascend_lab.golden`` (written from §3)
and with a plain-numpy formula written here.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ascend_lab import acl, atvoss, golden
from ascend_lab.ascendc import Abs, KernelError
from ascend_lab.ascendc.launcher import launch
from ascend_lab.atvoss import (
    CAST_RINT,
    DEFAULT_TILING_WORKSPACE_SIZE,
    BroadcastOneDimTilingData,
    BroadcastOneDimTilingDataAdvance,
    Cast,
    Compare,
    CopyInBrc,
    CopyOut,
    Dag,
    Duplicate,
    In,
    Mul,
    Node,
    Select,
    Var,
    advance_split,
    broadcast_base_tiling,
    broadcast_sch,
    dimension_collapse,
    emit,
    plan,
    pool_bytes,
    sch_mode_of,
    schedule,
    tiling_key,
)
from ascend_lab.base.platform import get_soc
from ascend_lab.book.calls import dense_tensor
from ascend_lab.opdev.tiling_data import TilingError
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.relu_grad.op_kernel import main as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import main as tg
from ascend_lab.standalone import make_soc, run_kernel

SOC = "Ascend950PR"
CORES, UB = 64, 253952
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
I8, U8, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64))


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_bits(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    bad = bits(got) != bits(want)
    assert not bad.any(), f"{what}: {bad.sum()} differ, e.g. got {got[bad][:6]!r} want {want[bad][:6]!r}"


# --- §3.2 / §3.3: DAG order, slots, live buffers -----------------------------------------------------------
def _slots(dag) -> list[tuple[str, str]]:
    return [(n.op, r["slot"]) for n, r in zip(dag.funlist, dag.table(), strict=True)]


def test_tg_half_dag_table():
    """§3.2 TG U in {half, bf16}: ten nodes, slots 0/7 3 4 5 6 1/8 3 4 2/9."""
    for dt in (F16, BF16):
        d = tg.dag(dt)
        assert _slots(d) == [("CopyInBrc", "0/7"), ("Cast", "3"), ("Duplicate", "4"), ("Compare", "5"),
                             ("Duplicate", "6"), ("CopyInBrc", "1/8"), ("Cast", "3"), ("Select", "4"),
                             ("Cast", "2/9"), ("CopyOut", "—")]
        assert d.funlist[0].inputs[0].index == 1 and d.funlist[5].inputs[0].index == 0   # self first, then grad


def test_tg_float_dag_table():
    """§3.2 TG float: the casts vanish (IsCastNoOp); BufferNum 8."""
    d = tg.dag(F32)
    assert _slots(d) == [("CopyInBrc", "0/5"), ("Duplicate", "3"), ("Compare", "4"), ("Duplicate", "3"),
                         ("CopyInBrc", "1/6"), ("Select", "2/7"), ("CopyOut", "—")]


def test_tg_int_dag_tables():
    """§3.2 TG int32 (RINT in and out) and int8/uint8 (through half)."""
    d = tg.dag(I32)
    casts = [n.attrs["mode"] for n in d.funlist if n.op == "Cast"]
    assert casts == [1, 1, 1]
    for dt in (I8, U8):
        d = tg.dag(dt)
        assert _slots(d) == [("CopyInBrc", "0/7"), ("Cast", "3"), ("Cast", "4"), ("Duplicate", "5"),
                             ("Compare", "6"), ("Duplicate", "3"), ("CopyInBrc", "1/8"), ("Cast", "4"),
                             ("Cast", "5"), ("Select", "4"), ("Cast", "6"), ("Cast", "2/9"), ("CopyOut", "—")]
        assert [n.attrs["mode"] for n in d.funlist if n.op == "Cast"] == [0, 0, 0, 0, 1, 1]


def test_rg_dag_tables():
    for dt in (F16, BF16, F32, I32, I64):
        assert _slots(rg.dag(dt)) == [("CopyInBrc", "0/7"), ("CopyInBrc", "1/8"), ("Duplicate", "3"),
                                      ("Compare", "4"), ("Duplicate", "5"), ("Select", "6"), ("Mul", "2/9"),
                                      ("CopyOut", "—")]
    for dt in (I8, U8):
        assert _slots(rg.dag(dt)) == [("CopyInBrc", "0/8"), ("Cast", "3"), ("CopyInBrc", "1/9"), ("Duplicate", "4"),
                                      ("Compare", "5"), ("Duplicate", "6"), ("Select", "7"), ("Cast", "5"),
                                      ("Mul", "4"), ("Cast", "2/10"), ("CopyOut", "—")]


@pytest.mark.parametrize("dag, nddma, ub_brc, max_b, min_b", [
    *[(("tg", dt), 10, 12, 4, 1) for dt in (F16, BF16, I32, I8, U8)],
    (("tg", F32), 8, 10, 4, 1),
    (("rg", F16), 10, 12, 2, 1), (("rg", BF16), 10, 12, 2, 1),
    (("rg", F32), 10, 12, 4, 1), (("rg", I32), 10, 12, 4, 1),
    (("rg", I64), 10, 12, 8, 1),
    (("rg", I8), 11, 13, 2, 1), (("rg", U8), 11, 13, 2, 1),
])
def test_live_buffer_counts(dag, nddma, ub_brc, max_b, min_b):
    """§3.3: GetBufferNum<true,true>, <false,true>, MaxDtypeBytes, MinDtypeBytes."""
    op, dt = dag
    d = (tg if op == "tg" else rg).dag(dt)
    assert (d.buffer_num(True), d.buffer_num(False), d.max_dtype_bytes, d.min_dtype_bytes) == \
        (nddma, ub_brc, max_b, min_b)


# --- §3.4 / §3.6: tiling ----------------------------------------------------------------------------------
def test_tiling_key_layout():
    assert tiling_key(201, 3) == 196615 and tiling_key(202, 3) == 196616 and tiling_key(1, 3) == 196608
    assert sch_mode_of(65539) == 102
    with pytest.raises(ValueError, match="schMode"):
        tiling_key(200, 1)


def test_one_dim_tiling_counts_every_input_of_the_dag():
    """TemplateOp.tiling(n) gives each of the DAG's inputs n elements, however many there are (three here):
    the same tiling as the inputs' shapes spelled out, and not the two-input tiling of the same n."""
    from ascend_lab.atvoss import CopyInBrc, CopyOut, Dag, In, Mul
    from ascend_lab.atvoss.kernel import TemplateOp

    def dag3(_dt: object) -> Dag:
        a, b, c = (CopyInBrc(In(i, F32)) for i in range(3))
        return Dag([CopyOut(0, Mul(Mul(a, b), c))], "Mul3")

    def dag2(_dt: object) -> Dag:
        return Dag([CopyOut(0, Mul(CopyInBrc(In(0, F32)), CopyInBrc(In(1, F32))))], "Mul2")

    soc = get_soc("Ascend950PR")
    op3, op2 = TemplateOp("Mul3", dag3, {F32: 3}), TemplateOp("Mul2", dag2, {F32: 3})
    n = 10**6
    td = op3.tiling(n, F32, soc.vector_core_num, soc.ub_size)
    assert td == op3.tiling_for_shapes([(n,)] * 3, (n,), F32, soc.vector_core_num, soc.ub_size)
    assert td != op2.tiling(n, F32, soc.vector_core_num, soc.ub_size)


@pytest.mark.parametrize("dt, n, a, ub_former, ub_tail, bf, bt, block_num, pool, key", [
    (F32, 10**6, 8, 7936, 64, 2, 1, 64, 253952, 196615),
    (F16, 65, 10, 192, 65, 1, 1, 1, 7680, 65543),
    (I8, 333333, 10, 6336, 3861, 1, 1, 53, 253440, 327687),
])
def test_worked_tilings_tg_201(dt, n, a, ub_former, ub_tail, bf, bt, block_num, pool, key):
    """§3.6 TG rows (schMode 201, threshold in scalarData[0..3])."""
    td = tg.tiling(n, dt, CORES, UB, threshold=0.25)
    assert isinstance(td, BroadcastOneDimTilingData)
    assert tg.dag(dt).buffer_num() == a
    assert (td.ubFormer, td.ubTail, td.blockFormer, td.blockTail, td.blockNum, td.blockDim, td.tilingKey) == \
        (ub_former, ub_tail, bf, bt, block_num, block_num, key)
    assert pool_bytes(tg.dag(dt), td) == pool
    assert td.scalar(0) == np.float32(0.25) and td.to_bytes()[40:44] == np.float32(0.25).tobytes()


def test_tg_fp16_half_core_rule():
    """§3.6 fp16 N=65: 6336 first, the half-core rule gives 32, raised to the 8 KB floor of 192."""
    d = tg.dag(F16)
    assert (UB // 10) // 128 * 128 // d.max_dtype_bytes == 6336
    td = tg.tiling(65, F16, CORES, UB)
    assert td.ubFormer == 192 == (8192 // 10) // 128 * 128 // 4


@pytest.mark.parametrize("dt, n, a, tile, ub_outer, block_num, kbf, kbt, kut, pool, key", [
    (F32, 10**6, 10, 6272, 160, 54, 3, 1, 2752, 250880, 196616),
    (F16, 65, 10, 512, 1, 1, 1, 1, 65, 10240, 65544),
    (I8, 333333, 11, 5120, 66, 33, 2, 2, 533, 112640, 262152),
])
def test_worked_tilings_rg_202(dt, n, a, tile, ub_outer, block_num, kbf, kbt, kut, pool, key):
    """§3.6 RG rows (schMode 202) and what the kernel recomputes."""
    td = rg.tiling(n, dt, CORES, UB)
    assert isinstance(td, BroadcastOneDimTilingDataAdvance)
    assert rg.dag(dt).buffer_num() == a
    sp = advance_split(td)
    assert (td.tileNum, sp["ubOuter"], td.blockNum, td.blockDim, td.tilingKey) == (tile, ub_outer, block_num,
                                                                                    block_num, key)
    assert (sp["blockFormer"], sp["blockTail"], sp["ubTail"]) == (kbf, kbt, kut)
    assert pool_bytes(rg.dag(dt), td) == pool


def test_rg_fp16_small_input_rule():
    """§3.6 fp16 N=65: 12544 first, then 512/MinDtypeBytes, blockFormer 1 forced to 2."""
    assert (UB // 10) // 512 * 512 // 2 == 12544
    td = rg.tiling(65, F16, CORES, UB)
    assert td.tileNum == 512 and td.blockNum == 1


@pytest.mark.parametrize("dt, path, bufnum, max_elem, ub_former, ub_outer, ub_tail, bf, bn, bt, sch, key", [
    (F32, "NDDMA", 8, 7936, 15, 69, 4, 2, 35, 1, 1, 196608),
    (F16, "UB-broadcast", 12, 5120, 10, 103, 4, 2, 52, 1, 102, 65539),
])
def test_broadcast_example(dt, path, bufnum, max_elem, ub_former, ub_outer, ub_tail, bf, bn, bt, sch, key):
    """§3.6 grad [1024, 512], self [1, 512]."""
    td = tg.tiling_for_shapes([(1024, 512), (1, 512)], (1024, 512), dt, CORES, UB, threshold=1.0)
    assert (td.ubSplitAxis, td.elemNum, td.ubFormer, td.ubOuter, td.ubTail) == (0, max_elem, ub_former, ub_outer,
                                                                               ub_tail)
    assert (td.blockFormer, td.blockNum, td.blockTail, sch_mode_of(td.tilingKey), td.tilingKey) == (bf, bn, bt, sch,
                                                                                                   key)
    assert pool_bytes(tg.dag(dt), td) == max_elem * 4 * bufnum
    assert td.array("outputDims")[:2] == [1024, 512] and td.array("outputStrides")[:2] == [512, 1]
    # CopyBrc nodes in DAG order: self (In1) first -- its axis 0 is broadcast (stride 0)
    assert td.array("inputBrcStrides", 0)[:2] == [0, 1] and td.array("inputBrcStrides", 1)[:2] == [512, 1]


def test_collapse_and_paths():
    dims, strides = dimension_collapse([(2, 3, 4), (2, 3, 4)], (2, 3, 4))
    assert dims == [[24], [24], [24]] and strides == [[1], [1], [1]]
    dims, strides = dimension_collapse([(4, 1), (4, 1000)], (4, 1000))
    assert dims == [[4, 1], [4, 1000], [4, 1000]] and strides[0] == [1, 0]
    td = tg.tiling_for_shapes([(1,), (5000,)], (5000,), F32, CORES, UB)        # a scalar input stays one-dim
    assert sch_mode_of(td.tilingKey) == 201 and td.scalarFlag == 0b01
    td = rg.tiling_for_shapes([(5000,), (1,)], (5000,), F32, CORES, UB)
    assert sch_mode_of(td.tilingKey) == 202 and td.scalarFlag == 0b10
    with pytest.raises(TilingError):
        tg.tiling_for_shapes([(4, 3), (4, 1000)], (4, 1000), F32, CORES, UB)
    with pytest.raises(TilingError):
        rg.tiling(0, F32, CORES, UB)


def test_structs_and_workspace():
    assert BroadcastOneDimTilingData.SIZE == 56 and BroadcastOneDimTilingDataAdvance.SIZE == 16
    td = tg.tiling(10**6, F32, CORES, UB, threshold=1.5)
    back = BroadcastOneDimTilingData.from_bytes(td.to_bytes(), blockDim=td.blockDim, tilingKey=td.tilingKey)
    assert back == td
    td2 = tg.tiling_for_shapes([(1024, 512), (1, 512)], (1024, 512), F32, CORES, UB)
    assert td2.SIZE == 632 and len(td2.to_bytes()) == 632
    assert DEFAULT_TILING_WORKSPACE_SIZE == 16 * 2**20
    for key in ("threshold_grad_v2_d", "relu_grad"):
        k = registry.get(key).kernel("main")
        assert k.socs == ("ascend950",)
        assert k.workspace(get_soc(SOC)) == 16 * 2**20


def test_core_ranges_cover_output():
    for op, n, dt in (("threshold_grad_v2_d", 10**6, F32), ("relu_grad", 333333, I8)):
        k = registry.get(op).kernel("main")
        td = k.tiling(n, dt, CORES, UB)
        rows = k.core_ranges(td, dt, n)
        assert rows[0]["offset"] == 0 and rows[-1]["padded_end"] == n
        assert sum(r["data_num"] for r in rows) == n
        assert all(a["padded_end"] == b["offset"] for a, b in zip(rows, rows[1:], strict=False))
        assert {"core", "kind", "offset", "data_num", "tile_num", "tail", "padded_end", "padding", "bytes",
                "tiles"} <= set(rows[0])


# --- §3.5: the kernel side ------------------------------------------------------------------------------------
def test_trace_ub_layout_and_double_buffering():
    """The pool is slot k at k * ubFormer * MaxDtypeBytes; ping/pong copy-ins overlap compute."""
    g = np.ones(4 * 7936 * 64, np.float32)
    x = np.linspace(-2, 2, g.size, dtype=np.float32)
    run, _ = run_kernel("threshold_grad_v2_d", g, x, soc=SOC, kernel="main", record=True, cores=[0])
    layout = run.trace.ub_layout[0]
    assert [b.offset for b in layout] == [k * 7936 * 4 for k in range(8)]
    mte2 = [e for e in run.trace.events if e.core == 0 and e.pipe == "MTE2"]
    vec = [e for e in run.trace.events if e.core == 0 and e.pipe == "V"]
    assert len(mte2) == 2 * 4 and {e.instr for e in vec} == {"Duplicate", "Compare", "Select"}
    # tile 1's copy-in starts before tile 0's compute ends (double buffering)
    assert min(e.start for e in mte2 if e.tile == 1) < max(e.end for e in vec if e.tile == 0)


# --- §3.7: numerics, bit-exact ---------------------------------------------------------------------------------
def _all_patterns(dt: np.dtype) -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt)


def _grads(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n).astype(np.float32) * np.float32(3)
    g[::97] = np.inf
    g[1::97] = -np.inf
    g[2::97] = np.nan
    g[3::97] = -0.0
    return g.astype(dt)


def _formula_tg(g: np.ndarray, x: np.ndarray, thr: float) -> np.ndarray:
    """§3.7 by hand: fp32 compare against the fp32 threshold, NaN x passes grad."""
    keep = ~(x.astype(np.float32) <= np.float32(thr))
    return np.where(keep, g, g.dtype.type(0))


def _formula_rg(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """§3.7 by hand: grad * (x <= 0 ? 0 : 1) in fp32, then back to T (exact for these values)."""
    with np.errstate(invalid="ignore"):
        m = np.where(x.astype(np.float32) <= 0, np.float32(0), np.float32(1))
        return (g.astype(np.float32) * m).astype(g.dtype)


@pytest.mark.parametrize("dt", [F16, BF16])
@pytest.mark.parametrize("thr", [0.5, 0.1, -3.0])
def test_tg_exhaustive_x(dt, thr):
    x = _all_patterns(dt)
    g = _grads(dt, x.size, 1)
    _, out = run_kernel("threshold_grad_v2_d", g, x, threshold=thr, soc=SOC, kernel="main", record=False)
    want = golden.threshold_grad_v2_d_main950(g, x, thr)
    assert_bits(out, want, f"golden {dt} thr {thr}")
    nan_g = np.isnan(g.astype(np.float32))
    assert_bits(out[~nan_g], _formula_tg(g, x, thr)[~nan_g], "formula")
    assert np.array_equal(np.isnan(out.astype(np.float32)), np.isnan(_formula_tg(g, x, thr).astype(np.float32)))


def test_tg_threshold_not_rounded_to_half():
    """0.1 is not a half: x = half(0.1) = 0.0999755859375 <= 0.1f, so it is zeroed (EXP/TBE would keep it)."""
    x = np.full(64, np.float16(0.1))
    g = np.ones(64, np.float16)
    _, out = run_kernel("threshold_grad_v2_d", g, x, threshold=0.1, soc=SOC, kernel="main", record=False)
    assert (out == 0).all()


@pytest.mark.parametrize("dt", [F16, BF16])
def test_rg_exhaustive_x(dt):
    x = _all_patterns(dt)
    g = _grads(dt, x.size, 2)
    _, out = run_kernel("relu_grad", g, x, soc=SOC, kernel="main", record=False)
    want = golden.relu_grad_main950(g, x)
    assert_bits(out, want, f"golden {dt}")
    f = _formula_rg(g, x)
    ok = ~np.isnan(f.astype(np.float32))
    assert_bits(out[ok], f[ok], "formula")
    assert np.array_equal(np.isnan(out.astype(np.float32)), ~ok)
    # §3.7: inf/NaN grad where x <= 0 gives NaN; negative grad there gives -0; NaN x passes grad
    xf = x.astype(np.float32)
    gf = g.astype(np.float32)
    le = xf <= 0
    assert np.isnan(out.astype(np.float32)[le & ~np.isfinite(gf)]).all()
    neg = le & (gf < 0) & np.isfinite(gf)
    assert (bits(out[neg]) == bits(np.array([-0.0], dt))[0]).all()
    nanx = np.isnan(xf) & ~np.isnan(gf)
    assert_bits(out[nanx], g[nanx], "NaN x")


@pytest.mark.parametrize("dt", [I8, U8])
def test_small_ints_all_values(dt):
    v = np.arange(256, dtype=np.uint8).view(dt)
    x, g = np.repeat(v, 256), np.tile(v, 256)
    _, out = run_kernel("threshold_grad_v2_d", g, x, threshold=3.5, soc=SOC, kernel="main", record=False)
    assert_bits(out, golden.threshold_grad_v2_d_main950(g, x, 3.5))
    assert_bits(out, np.where(x > 3.5, g, 0).astype(dt))
    _, out = run_kernel("relu_grad", g, x, soc=SOC, kernel="main", record=False)
    assert_bits(out, golden.relu_grad_main950(g, x))
    assert_bits(out, np.where(x > 0, g, 0).astype(dt))


def test_int32_beyond_2_24():
    """TG goes through fp32 with RINT (16777217 -> 16777216); RG multiplies in int32 (exact); int64 exact."""
    g = np.array([16777217, -16777219, 2**31 - 1, 123, 2**24 + 3, -5], np.int32)
    x = np.array([5, 5, 5, 5, 0, -1], np.int32)
    _, out = run_kernel("threshold_grad_v2_d", g, x, threshold=1.0, soc=SOC, kernel="main", record=False)
    assert_bits(out, golden.threshold_grad_v2_d_main950(g, x, 1.0))
    assert out[0] == 16777216 and out[1] == -16777220 and out[2] == 2**31 - 1 and out[4] == 0
    _, out = run_kernel("relu_grad", g, x, soc=SOC, kernel="main", record=False)
    assert_bits(out, golden.relu_grad_main950(g, x))
    assert_bits(out, np.where(x > 0, g, 0).astype(np.int32))
    g64 = np.array([2**53 + 1, -(2**62), 7], np.int64)
    x64 = np.array([1, 1, 0], np.int64)
    _, out = run_kernel("relu_grad", g64, x64, soc=SOC, kernel="main", record=False)
    assert_bits(out, np.array([2**53 + 1, -(2**62), 0], np.int64))
    assert_bits(out, golden.relu_grad_main950(g64, x64))


@pytest.mark.parametrize("n", [1, 64, 511, 512, 513, 4097, 100003])
def test_sizes_fp32(n):
    rng = np.random.default_rng(n)
    g = rng.standard_normal(n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    run, out = run_kernel("threshold_grad_v2_d", g, x, threshold=0.0, soc=SOC, kernel="main", record=False)
    assert_bits(out, golden.threshold_grad_v2_d_main950(g, x, 0.0))
    assert not run.warnings
    run, out = run_kernel("relu_grad", g, x, soc=SOC, kernel="main", record=False)
    assert_bits(out, golden.relu_grad_main950(g, x))
    assert not run.warnings


# --- broadcast through the KernelSpec launch -------------------------------------------------------------------
@pytest.fixture
def device():
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    try:
        yield
    finally:
        acl.aclrtResetDevice(0)
        acl.aclFinalize()


def _launch(op: str, g: np.ndarray, x: np.ndarray, thr: float = 1.0) -> tuple[np.ndarray, object]:
    k = registry.get(op).kernel("main")
    out_shape = np.broadcast_shapes(g.shape, x.shape)
    soc = get_soc(SOC)
    attrs = {"threshold": thr} if op == "threshold_grad_v2_d" else {}
    td = k.tiling_shapes([g.shape, x.shape], out_shape, g.dtype, soc.vector_core_num, soc.ub_size, **attrs)
    out = np.zeros(out_shape, g.dtype)
    tg_, tx, to = dense_tensor(g), dense_tensor(x), dense_tensor(out)
    run = k.launch(td, tg_, tx, to, soc, record=False)
    host = np.zeros_like(out)
    acl.aclrtMemcpy(host, host.nbytes, to.data, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return host, run


@pytest.mark.parametrize("dt", [F32, F16, BF16, I32, I8])
def test_broadcast_one_axis(device, dt):
    """grad (4, 1) against self (4, 1000): the NDDMA schedule with a stride-0 copy of grad."""
    rng = np.random.default_rng(7)
    g = (rng.standard_normal((4, 1)) * 50).astype(dt)
    x = (rng.standard_normal((4, 1000)) * 3).astype(dt)
    out, run = _launch("threshold_grad_v2_d", g, x, 0.5)
    assert sch_mode_of(run.tiling.tilingKey) in (1, 2)
    assert_bits(out, golden.threshold_grad_v2_d_main950(g, x, 0.5), "TG")
    out, run = _launch("relu_grad", g, x)
    assert_bits(out, golden.relu_grad_main950(g, x), "RG")
    # and the other way round, with more rows than fit one UB loop
    g2 = (rng.standard_normal((3000, 700)) * 5).astype(dt)
    x2 = (rng.standard_normal((1, 700)) * 3).astype(dt)
    out, run = _launch("relu_grad", g2, x2)
    assert_bits(out, golden.relu_grad_main950(g2, x2), "RG rows")
    assert run.tiling.blockNum > 1


def test_broadcast_core_ranges_cover_output():
    k = registry.get("threshold_grad_v2_d").kernel("main")
    td = k.tiling_shapes([(3000, 700), (1, 700)], (3000, 700), F32, CORES, UB)
    rows = k.core_ranges(td, F32)
    runs = sorted(t for r in rows for t in ((s, ln) for _, s, ln in r["tiles"]))
    assert runs[0][0] == 0 and all(a[0] + a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))
    assert runs[-1][0] + runs[-1][1] == 3000 * 700


def test_ub_broadcast_schedule_runs(device):
    """fp16 with an aligned last axis picks UB-broadcast (102): the copy of the un-broadcast row, AscendC's
    Broadcast in UB, then the DAG (tests/test_atvoss_broadcast.py covers 101-109 in depth)."""
    g = np.arange(64 * 512, dtype=np.float32).reshape(64, 512).astype(np.float16)
    x = np.linspace(-1, 1, 512, dtype=np.float16).reshape(1, 512)
    out, run = _launch("relu_grad", g, x)
    assert sch_mode_of(run.tiling.tilingKey) == 102
    assert_bits(out, golden.relu_grad_main950(g, x), "RG 102")


# --- the instantiation: the generated tile body is what runs ---------------------------------------------------
def _fingerprint(run, out: np.ndarray) -> dict:
    """Everything a launch leaves: output bits, every field of every event (snapshots as bytes), cycles, the cores'
    summaries, warnings with their lines, the UB layouts."""
    def value(v):
        return (v.dtype.str, v.shape, v.tobytes()) if isinstance(v, np.ndarray) else v

    tr = run.trace
    return {"out": (out.dtype.str, out.shape, np.ascontiguousarray(out).tobytes()),
            "events": [tuple(value(getattr(e, f.name)) for f in dataclasses.fields(e)) for e in tr.events],
            "cycles": tr.cycles, "cores": [dataclasses.astuple(c) for c in tr.cores],
            "warnings": [(dataclasses.astuple(w), str(w.line)) for w in tr.warnings],
            "layout": {c: [dataclasses.astuple(b) for b in bs] for c, bs in tr.ub_layout.items()}}


def _traced_and_untraced(launch_once) -> dict:
    """The launch untraced and traced: recording changes no output bit, cycle or warning (the trace only watches);
    returns the traced run's fingerprint."""
    plain, traced = _fingerprint(*launch_once(False)), _fingerprint(*launch_once(True))
    assert traced["events"] and not plain["events"]
    for key in ("out", "cycles", "cores", "warnings", "layout"):
        assert plain[key] == traced[key], key
    return traced


def _tiles_of_core0(fp: dict) -> set[int]:
    return {e[3] for e in fp["events"] if e[0] == 0 and e[3] is not None}


SOC4 = make_soc(SOC, core_num=4)          # several tiles per core at small sizes: odd and even, a tail
ONE_DIM = [("threshold_grad_v2_d", dt) for dt in (F32, F16, BF16, I32, I8)] + \
          [("relu_grad", dt) for dt in (F32, F16, I8, I64)]


def _want(op: str, g: np.ndarray, x: np.ndarray) -> np.ndarray:
    return golden.threshold_grad_v2_d_main950(g, x, 0.5) if op == "threshold_grad_v2_d" else \
        golden.relu_grad_main950(g, x)


@pytest.mark.parametrize("op, dt", ONE_DIM, ids=[f"{o}-{d}" for o, d in ONE_DIM])
def test_one_dim_tiles_bit_exact_traced_or_not(op, dt):
    """201 (TG) / 202 (RG) with odd and even tiles and a tail on each core: the golden's bits untraced, traced and
    with snapshots; a snapshot adds values to the events and changes nothing else."""
    n = 250003
    if dt.kind == "f":
        g, x = _grads(dt, n, 3), np.linspace(-3, 3, n, dtype=np.float32).astype(dt)
    else:
        g, x = (np.arange(n) % 97 - 40).astype(dt), (np.arange(n) % 11 - 5).astype(dt)

    def once(record, snapshot=False):
        return run_kernel(op, g, x, threshold=0.5, soc=SOC4, kernel="main", record=record, snapshot=snapshot)

    traced = _traced_and_untraced(once)
    snap = _fingerprint(*once(True, True))
    values = [f.name for f in dataclasses.fields(once(True)[0].trace.events[0])].index("values")
    assert [e[:values] + e[values + 1:] for e in snap["events"]] == \
        [e[:values] + e[values + 1:] for e in traced["events"]]
    assert any(e[values] is not None for e in snap["events"]) and all(e[values] is None for e in traced["events"])
    assert max(_tiles_of_core0(traced)) >= 3                                  # odd and even tiles past the first two
    assert sch_mode_of(once(False)[0].tiling.tilingKey) == (201 if op == "threshold_grad_v2_d" else 202)
    assert_bits(np.frombuffer(traced["out"][2], dt), _want(op, g, x))


def _launch_on(op: str, g: np.ndarray, x: np.ndarray, record: bool, soc=SOC4, thr: float = 0.5):
    k = registry.get(op).kernel("main")
    out_shape = np.broadcast_shapes(g.shape, x.shape)
    attrs = {"threshold": thr} if op == "threshold_grad_v2_d" else {}
    td = k.tiling_shapes([g.shape, x.shape], out_shape, g.dtype, soc.vector_core_num, soc.ub_size, **attrs)
    to = dense_tensor(np.zeros(out_shape, g.dtype))
    run = k.launch(td, dense_tensor(g), dense_tensor(x), to, soc, record=record)
    host = np.zeros(out_shape, g.dtype)
    acl.aclrtMemcpy(host, host.nbytes, to.data, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return run, host


# (op, dtype, grad shape, self shape, schMode on 4 cores): scalar inputs (scalarFlag), NDDMA, UB-broadcast
SHAPED = [
    ("threshold_grad_v2_d", F32, (1,), (150000,), 201),
    ("threshold_grad_v2_d", F16, (150000,), (1,), 201),
    ("relu_grad", F32, (150000,), (1,), 202),
    ("relu_grad", I8, (1,), (300000,), 202),
    ("threshold_grad_v2_d", F32, (4, 1), (4, 1000), 1),
    ("threshold_grad_v2_d", I8, (4, 1), (4, 1000), 1),
    ("relu_grad", F32, (3000, 700), (1, 700), 1),
    ("threshold_grad_v2_d", F16, (200, 1), (200, 12000), 101),
    ("relu_grad", F16, (1024, 512), (1, 512), 102),
    ("threshold_grad_v2_d", I8, (1024, 512), (1, 512), 102),
    ("relu_grad", I64, (600, 512), (1, 512), 102),
    ("threshold_grad_v2_d", F16, (4, 1, 64), (4, 32, 64), 103),
    ("relu_grad", BF16, (1, 8, 1, 64), (6, 8, 5, 64), 104),
    ("threshold_grad_v2_d", F16, (3, 1, 4, 1, 32), (3, 5, 4, 6, 32), 109),
]


@pytest.mark.parametrize("op, dt, gs, xs, mode", SHAPED, ids=[f"{m}-{o}-{d}-{g}x{x}" for o, d, g, x, m in SHAPED])
def test_shaped_schedules_bit_exact(device, op, dt, gs, xs, mode):
    """Scalar inputs (Duplicate on tiles 0 and 1 only), NDDMA (in_copy) and UB-broadcast (in_copy + expand, the
    persistent slots): the golden's bits on the expected schedule, traced or not, with no warning."""
    rng = np.random.default_rng(5)
    g = (rng.standard_normal(gs) * 20).astype(dt)
    x = (rng.standard_normal(xs) * 3).astype(dt)
    got = _traced_and_untraced(lambda record: _launch_on(op, g, x, record))
    run, out = _launch_on(op, g, x, False)
    assert sch_mode_of(run.tiling.tilingKey) == mode and not got["warnings"]
    assert_bits(out, _want(op, g, x))
    if mode in (201, 202):                     # a scalar input: Duplicate-d into its slot on tiles 0 and 1 only
        tiles = [e[3] for e in got["events"] if e[2] == "Duplicate" and e[0] == 0]
        assert max(_tiles_of_core0(got)) >= 2
        per_tile = {t: tiles.count(t) for t in set(tiles)}
        assert per_tile[0] == per_tile[1] == per_tile[2] + 1


def test_findings_inside_the_tile_body_name_no_line():
    """A finding made inside the generated body is library code's: the gm-padding warning of a short output has no
    line, and a strict policy turns the same finding into a KernelError without one."""
    spec = registry.get("relu_grad")
    k = spec.kernel("main")
    soc = get_soc(SOC)
    n = 100003
    g = np.linspace(-1, 1, n, dtype=np.float32)
    td = k.tiling(n, g.dtype, soc.vector_core_num, soc.ub_size)

    def once(record=True, strict=None):
        args = [gm_from_array(g, k.args[0]), gm_from_array(g, k.args[1]),
                gm_from_array(None, k.args[2], nbytes=(n - 5) * 4)]
        run = launch(k.entry, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=record, strict=strict,
                     kernel_name=spec.op_type, tiling_data=td, **k.template(td, g.dtype, k.buffer_num))
        return run, args[2].ptr.allocation.buffer[:(n - 5) * 4].view(np.float32)

    got = _traced_and_untraced(once)
    assert [w[0][3] for w in got["warnings"]] == ["gm-padding"] and got["warnings"][0][1] == "None"
    assert_bits(np.frombuffer(got["out"][2], F32), golden.relu_grad_main950(g, g)[:n - 5])
    with pytest.raises(KernelError) as info:
        once(strict=lambda w: "no padding here")
    assert info.value.kind == "gm-padding" and info.value.line is None and "no padding here" in str(info.value)


def test_instantiation_source():
    """The instantiation is readable straight-line code: one AscendC call per line, in funlist order, compiled once
    per DAG and schedule family."""
    src = schedule.instantiation(tg.dag(F32), 201)
    body = src[src.index("# 0: CopyInBrc"):]
    calls = re.findall(r"\b(q\d+\.\w+|DataCopyPad|Duplicate|Compare|Select|Cast|Mul|gm_value)\(", body)
    assert calls == ["q0.AllocTensor", "DataCopyPad", "q0.EnQue", "Duplicate", "q0.DeQue", "Compare", "Compare",
                     "q0.FreeTensor", "Duplicate", "q4.AllocTensor", "DataCopyPad", "q4.EnQue", "q4.DeQue",
                     "q5.AllocTensor", "Select", "q5.EnQue", "q4.FreeTensor", "q5.DeQue", "DataCopyPad",
                     "q5.FreeTensor"]
    assert "Select(x5, x2, x3, x4, VSEL_TENSOR_TENSOR_MODE, length)" in src
    assert "DataCopyPad(out0[out_offset], t, p4)" in src and "x1 = buf[1].Get(float32)" in src
    compile(src, "<instantiation>", "exec")
    assert schedule.instantiation(tg.dag(F32), 202) is src                    # one instantiation per family
    scalar = schedule.instantiation(tg.dag(F16), 201, [0])
    assert "gm_value(in0, i)" in scalar and "if i < 2:" in scalar and "in0[out_offset]" not in scalar
    assert "in_copy(n0, x0, in0)" in schedule.instantiation(rg.dag(F32), 1)
    ub = schedule.instantiation(rg.dag(F16), 109)
    assert "brc = expand(n0)" in ub and "brc(x0, t)" in ub
    assert tg.OP.instantiation(F32) == src
    with pytest.raises(ValueError, match="one-dim"):
        schedule.instantiation(tg.dag(F32), 102, [0])
    with pytest.raises(ValueError, match="GM input"):
        schedule.instantiation(tg.dag(F32), 201, [2])
    with pytest.raises(NotImplementedError, match="301"):
        schedule.instantiation(tg.dag(F32), 301)


LISTINGS = Path(__file__).parent / "data" / "atvoss"
#: Golden listings of the tile body: (file, DAG module, dtype, schMode, scalar inputs). One per schedule family
#: and step kind (copy-in, scalar input, NDDMA in_copy, UB-broadcast expand), so that a change to the emitted code
#: shows in review. An intended change: write ``instantiation(...)`` to the file and commit it with the change.
GOLDEN_LISTINGS = [("tg_float32_201.txt", tg, F32, 201, ()), ("tg_float16_201_scalar_in0.txt", tg, F16, 201, (0,)),
                   ("rg_int8_nddma.txt", rg, I8, 1, ()), ("tg_float16_ub_broadcast.txt", tg, F16, 102, ())]


@pytest.mark.parametrize("name, mod, dt, mode, scalars", GOLDEN_LISTINGS, ids=[g[0] for g in GOLDEN_LISTINGS])
def test_instantiation_matches_its_golden_listing(name, mod, dt, mode, scalars):
    want = (LISTINGS / name).read_text(encoding="utf-8")
    got = schedule.instantiation(mod.dag(dt), mode, scalars)
    diff = "\n".join(difflib.unified_diff(want.splitlines(), got.splitlines(), name, "instantiation", lineterm=""))
    assert got == want, f"the emitted tile body changed (tests/data/atvoss/{name}):\n{diff}"


def test_every_node_kind_has_an_emitter():
    """Each kind of step and each compute node a DAG may declare has its emitter; an unknown one is refused by name."""
    assert set(emit.EMITTERS) == {plan.CopyIn, plan.ScalarIn, plan.CopyBrc, plan.Compute, plan.CopyOut}
    assert set(emit.INSTRUCTIONS) == {"Cast", "Duplicate", "Compare", "Select", "Mul"}
    d = tg.dag(F32)
    bad = dataclasses.replace(plan.walk(d, plan.pool_layout(d, frozenset(), False), frozenset())[1],
                              node=dataclasses.replace(d.funlist[1], op="Abs"))
    with pytest.raises(NotImplementedError, match="node Abs"):
        emit.generate(d, "one-dim", plan.pool_layout(d, frozenset(), False), [bad])


@pytest.mark.parametrize("shapes, out_shape, mode", [
    ([(50000,), (1,), (50000,)], (50000,), 201),              # In1 a scalar input
    ([(1,), (90000,), (90000,)], (90000,), 201),              # In0 a scalar input, read by two casts
    ([(300, 200), (300, 1), (1, 200)], (300, 200), 1),        # NDDMA, two broadcast inputs
    ([(64, 512), (1, 512), (64, 512)], (64, 512), 102),       # UB-broadcast
])
def test_instantiation_of_a_dag_with_two_outputs(shapes, out_shape, mode):
    """A DAG of three inputs (half, half, float) and two outputs -- a Mul cast back to half, a Compare GT/Select
    against a Var -- on each schedule family computes what numpy does, traced or not."""
    a, b, c = CopyInBrc(In(0, F16)), CopyInBrc(In(1, F16)), CopyInBrc(In(2, F32))
    af = Cast(F32, a)
    prod = Cast(F16, Mul(af, Cast(F32, b)), CAST_RINT)
    sel = Select(Compare(af, c, 1), Duplicate(F32, Var(0, F32)), c)
    dag = Dag([CopyOut(0, prod), CopyOut(1, sel)], "TwoOutputs")
    soc = SOC4
    td = broadcast_base_tiling(dag, shapes, out_shape, soc.vector_core_num, soc.ub_size, dtype_id=1, scalars=(0.25,))
    assert sch_mode_of(td.tilingKey) == mode
    rng = np.random.default_rng(1)
    arrs = [(rng.standard_normal(s) * 3).astype(d) for s, d in zip(shapes, (F16, F16, F32), strict=True)]
    n = int(np.prod(out_shape))
    entry = functools.partial(broadcast_sch, dag=dag, sch_mode=mode, tiling_class=type(td))

    def once(record: bool):
        args = [gm_from_array(x, f"in{k}") for k, x in enumerate(arrs)] + \
               [gm_from_array(None, "out0", nbytes=n * 2), gm_from_array(None, "out1", nbytes=n * 4)]
        run = launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(3, 4), record=record, tiling_data=td)
        out = np.concatenate([args[3].ptr.allocation.buffer[:n * 2], args[4].ptr.allocation.buffer[:n * 4]])
        return run, out

    got = _traced_and_untraced(once)
    ab, bb, cb = (np.broadcast_to(x, out_shape).astype(np.float32).reshape(-1) for x in arrs)
    out = np.frombuffer(got["out"][2], np.uint8)
    assert_bits(out[:n * 2].view(F16), (ab * bb).astype(F16))
    assert_bits(out[n * 2:].view(F32), np.where(ab > cb, np.float32(0.25), cb))


def test_a_node_kind_is_its_emitter_and_its_call(monkeypatch):
    """ARCHITECTURE.md's recipe: an ``Abs`` node, taught to the template by one emitter and its call alone, is
    planned (slots, DeQue/FreeTensor), emitted and run on every schedule family -- numpy's bits, no warning."""
    def emit_abs(out, k, node, x):
        out.body.append(f"        Abs(x{k}, {x[0]}, length)")

    monkeypatch.setitem(emit.INSTRUCTIONS, "Abs", emit_abs)
    monkeypatch.setitem(emit.CALLS, "Abs", Abs)
    for shapes, out_shape, mode in (([(100003,), (1,)], (100003,), 202), ([(300, 200), (300, 1)], (300, 200), 1),
                                    ([(64, 512), (1, 512)], (64, 512), 102)):
        a, b = CopyInBrc(In(0, F16)), CopyInBrc(In(1, F16))
        dag = Dag([CopyOut(0, Mul(Node("Abs", F16, (a,)), b))], "AbsMul")
        td = broadcast_base_tiling(dag, shapes, out_shape, SOC4.vector_core_num, SOC4.ub_size, dtype_id=1)
        assert sch_mode_of(td.tilingKey) == mode
        assert "Abs(x1, x0, length)" in schedule.instantiation(dag, mode)
        rng = np.random.default_rng(2)
        xa, xb = ((rng.standard_normal(s) * 3).astype(F16) for s in shapes)
        n = int(np.prod(out_shape))
        args = [gm_from_array(xa, "in0"), gm_from_array(xb, "in1"), gm_from_array(None, "out0", nbytes=n * 2)]
        entry = functools.partial(broadcast_sch, dag=dag, sch_mode=mode, tiling_class=type(td))
        run = launch(entry, td.blockDim, args, td.to_bytes(), SOC4, outputs=(2,), record=True, tiling_data=td)
        assert not run.trace.warnings and any(e.instr == "Abs" for e in run.trace.events)
        assert_bits(args[2].ptr.allocation.buffer[:n * 2].view(F16).reshape(out_shape), np.abs(xa) * xb)

def test_package_stays_small():
    """Issue 21: no function of the package over 60 lines, no module over ~600, and each emitter small."""
    root = Path(atvoss.__file__).parent
    for path in sorted(root.glob("*.py")):
        src = path.read_text(encoding="utf-8")
        assert src.count("\n") <= 600, path.name
        for fn in (n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            assert fn.end_lineno - fn.lineno < 60, f"{path.name}:{fn.lineno} {fn.name}"
    for fn in [*emit.EMITTERS.values(), *emit.INSTRUCTIONS.values()]:
        assert len(inspect.getsource(fn).splitlines()) <= 22, fn.__name__     # ~15 lines of code and a docstring

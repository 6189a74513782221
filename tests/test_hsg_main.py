"""The shipping HardSigmoidGrad on Ascend950: the ops-nn main-tree kernel (``op_kernel/main.py``).

Checked against kernel_flavours.md §2: the §2.1 tiling and its worked table, the §2.2 UB plan and its
offsets table (read from a plan-only launch), the §2.2 instruction sequence (from the recorded trace),
and the numbers, bit for bit, against ``golden.hard_sigmoid_grad_main950`` and a second oracle written
here from §2.2 alone -- over every fp16 and every bf16 bit pattern (NaNs and infinities included) as x
and as the gradient, and over fp32 boundaries and specials.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ascend_lab import golden
from ascend_lab import standalone as sa
from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.ascendc import launch
from ascend_lab.opdev.tiling_data import TilingError
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.hard_sigmoid_grad import op_host
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import main as hsg_main

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
SOC = "Ascend950PR"
UB_950, CORES_950 = 253952, 64
ALPHA = np.float32(1.0) / np.float32(6.0)        # 1.0f / 6.0f, §1 / §2.1


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def assert_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    bad = bits(got) != bits(want)
    assert not bad.any(), f"{what}: {int(bad.sum())} differ, e.g. got {got[bad][:6]!r} want {want[bad][:6]!r}"


def every_pattern(dtype: np.dtype) -> np.ndarray:
    """All 65536 bit patterns of a 16-bit float: finite values, both infinities, every NaN."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)


def run_main(g: np.ndarray, x: np.ndarray, **kw) -> tuple:
    return sa.run_kernel("hard_sigmoid_grad", g, x, soc=SOC, kernel="main", **kw)


# --- an oracle from §2.2 alone: numpy fp32 arithmetic, one rounding at the end ----------------------------------

def bf16_ties_away(v32: np.ndarray) -> np.ndarray:
    """fp32 -> bf16 with CAST_ROUND: add half an ulp to the magnitude's bits, drop the low 16; NaN stays quiet."""
    u = np.ascontiguousarray(v32, F32).view(np.uint32).astype(np.uint64)
    mag = u & 0x7FFFFFFF
    top = np.where(mag > 0x7F800000, (mag >> 16) | 0x40, (mag + 0x8000) >> 16)
    return (top | ((u >> 16) & 0x8000)).astype(np.uint16).view(BF16)


def oracle_22(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """§2.2 Numerics: alpha*g where 0 < fl(fl(alpha*x) + 0.5) < 1, else +0, in fp32; fp16 RINT, bf16 ROUND."""
    with np.errstate(all="ignore"):
        t = x.astype(F32) * ALPHA + np.float32(0.5)      # two fp32 roundings: no FMA in numpy's float32
        r = g.astype(F32) * ALPHA
        out = np.where((t > 0) & (t < 1), r, np.float32(0))
        if g.dtype == F16:
            return out.astype(F16)                         # IEEE round to nearest even
        return bf16_ties_away(out) if g.dtype == BF16 else out


def check(g: np.ndarray, x: np.ndarray, what: str, **kw) -> np.ndarray:
    _, out = run_main(g, x, **kw)
    assert_bits(out, golden.hard_sigmoid_grad_main950(g, x), "golden " + what)
    assert_bits(out, oracle_22(g, x), "§2.2 oracle " + what)
    return out


# --- registration ---------------------------------------------------------------------------------------------

def test_main_kernel_is_registered_for_950_after_the_experimental_one():
    spec = registry.get("HardSigmoidGrad")
    assert list(spec.kernels)[0] == "experimental"
    k = spec.kernel("main")
    assert k.flavour == "main" and k.socs == ("ascend950",)
    assert k.tiling is op_host.tiling_main950 and k.entry is hsg_main.hard_sigmoid_grad
    assert k.launch is hsg_main.launch and k.tiling_data is op_host.HardSigmoidGradTilingData
    assert k.source == "ops-nn:activation/hard_sigmoid_grad/op_kernel/arch35/hard_sigmoid_grad.h"
    assert k.args == ("gradOutput", "self", "gradInput") and k.tile_field == "ubFactor"


# --- §2.1 tiling ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("dtype", "n", "block_factor", "block_dim", "ub_factor", "key"), [
    (DT.ACL_FLOAT, 1_000_000, 15625, 64, 7936, 0),
    (DT.ACL_FLOAT16, 1_000_000, 15625, 64, 9024, 1),
    (DT.ACL_FLOAT16, 65, 65, 1, 9024, 1),
    (DT.ACL_BF16, 333_333, 5209, 64, 9024, 2),
    (DT.ACL_FLOAT, 1000, 1000, 1, 7936, 0),
])
def test_worked_tiling_table(dtype, n, block_factor, block_dim, ub_factor, key):
    td = op_host.tiling_main950(n, dtype, CORES_950, UB_950)
    assert (td.blockFactor, td.blockDim, td.ubFactor, td.tilingKey) == (block_factor, block_dim, ub_factor, key)
    assert td.totalLength == n and td.alpha == float(ALPHA) and td.beta == 0.5
    # the registry and the standalone driver reach the same function with the 950's platform numbers
    assert sa.tiling_for("hard_sigmoid_grad", n, dtype, sa.make_soc(SOC), kernel="main") == td
    ranges = op_host.core_ranges(td, tiles=False)
    assert len(ranges) == block_dim and sum(r["data_num"] for r in ranges) == n


def test_tiling_rules():
    # 1024 is the first N that is split over the cores; below it one core takes everything
    assert op_host.tiling_main950(1023, DT.ACL_FLOAT, 64, UB_950).blockDim == 1
    td = op_host.tiling_main950(1024, DT.ACL_FLOAT, 64, UB_950)
    assert (td.blockFactor, td.blockDim) == (16, 64)
    # N = 0: all-zero struct, one core, the dtype's key
    td = op_host.tiling_main950(0, DT.ACL_BF16, 64, UB_950)
    assert (td.totalLength, td.blockFactor, td.ubFactor, td.alpha, td.beta) == (0, 0, 0, 0.0, 0.0)
    assert (td.blockDim, td.tilingKey) == (1, 2)
    # ubFactor is a multiple of 64 elements: 7 x 4 B x 64 = 1792 B is the smallest UB for fp16/bf16
    assert op_host.tiling_main950(5000, DT.ACL_FLOAT16, 1, 1792).ubFactor == 64
    assert op_host.tiling_main950(5000, DT.ACL_FLOAT16, 1, 1792 + 1791).ubFactor == 64
    with pytest.raises(TilingError, match="ubFactor 0"):
        op_host.tiling_main950(5000, DT.ACL_FLOAT16, 1, 1791)
    with pytest.raises(TilingError, match="ub_size is 0"):
        op_host.tiling_main950(0, DT.ACL_FLOAT, 64, 0)
    for bad in ({"alpha": 0.0}, {"alpha": float("inf")}, {"alpha": float("nan")}, {"alpha": 1e-50},
                {"beta": float("nan")}, {"beta": float("-inf")}):
        with pytest.raises(TilingError, match="alpha must be finite"):
            op_host.tiling_main950(10, DT.ACL_FLOAT, 64, UB_950, **bad)
    assert op_host.tiling_main950(10, DT.ACL_FLOAT, 64, UB_950, alpha=-2.0, beta=1e30).alpha == -2.0


# --- §2.2 UB plan ---------------------------------------------------------------------------------------------

_Q = ("gradOutputQueue[0]", "gradOutputQueue[1]", "selfQueue[0]", "selfQueue[1]",
      "gradInputQueue[0]", "gradInputQueue[1]")


@pytest.mark.parametrize(("dtype", "offsets", "mask_bytes", "end"), [
    ("float32", (0, 31744, 63488, 95232, 126976, 158720, 190464, 222208), 992, 223200),
    ("float16", (0, 18048, 36096, 54144, 72192, 90240, 108288, 144384, 180480, 216576), 1152, 217728),
    ("bfloat16", (0, 18048, 36096, 54144, 72192, 90240, 108288, 144384, 180480, 216576), 1152, 217728),
])
def test_ub_offsets_table(dtype, offsets, mask_bytes, end):
    plan = sa.ub_plan("hard_sigmoid_grad", 1_000_000, dtype, soc=SOC, kernel="main")
    names = _Q + (("tmpBuf", "maskBuf") if dtype == "float32" else ("tmpBuf", "gradFp32Buf", "selfFp32Buf", "maskBuf"))
    buffers = plan["buffers"]
    assert [b.name for b in buffers] == list(names)
    assert [b.offset for b in buffers] == list(offsets)
    ub_factor = plan["tiling"].ubFactor
    item = 4 if dtype == "float32" else 2
    want_sizes = [ub_factor * item] * 6 + [ub_factor * 4] * (len(names) - 7) + [mask_bytes]
    assert [b.size for b in buffers] == want_sizes
    assert plan["used"] == end and plan["overflow"] == 0
    # bump allocation: each buffer starts where the previous one ends
    assert all(a.offset + a.size == b.offset for a, b in zip(buffers, buffers[1:], strict=False))


def test_mask_buffer_is_at_least_one_block():
    # ubFactor 64 -> 8 mask bytes, rounded up to the 32-byte minimum
    plan = sa.ub_plan("hard_sigmoid_grad", 100, "float16", soc=SOC, ub_size=1792, kernel="main")
    assert plan["tiling"].ubFactor == 64
    assert plan["buffers"][-1].name == "maskBuf" and plan["buffers"][-1].size == 32


def test_core_without_work_returns_before_touching_ub():
    td = op_host.tiling_main950(3000, DT.ACL_FLOAT, 4, UB_950)       # blockFactor 750, blockDim 4
    g = np.ones(3000, F32)
    args = [gm_from_array(g, "gradOutput"), gm_from_array(g, "self"), gm_from_array(np.zeros_like(g), "gradInput")]
    run = launch(hsg_main.hard_sigmoid_grad, td.blockDim + 2, args, td.to_bytes(), sa.make_soc(SOC),
                 outputs=(2,), record=True, tiling_data=td, **hsg_main.template_args(td, None))
    assert sorted(run.trace.ub_layout) == [0, 1, 2, 3]
    assert {e.core for e in run.trace.events} == {0, 1, 2, 3}


# --- §2.2 instruction sequence, from the trace ------------------------------------------------------------------

_SEQ_F32 = ["Duplicate", "Muls", "Adds", "Muls", "CompareScalar", "Select", "CompareScalar", "Select"]
_SEQ_CAST = ["Duplicate", "Cast", "Cast", "Muls", "Adds", "Muls", "CompareScalar", "Select", "CompareScalar",
             "Select", "Cast"]


@pytest.mark.parametrize(("dtype", "seq", "final"), [
    (F32, _SEQ_F32, None), (F16, _SEQ_CAST, "CAST_RINT"), (BF16, _SEQ_CAST, "CAST_ROUND"),
])
def test_trace_shows_the_22_sequence(dtype, seq, final):
    n = 100                                             # one core (N < 1024), one tile, A = roundUp(100, 64) = 128
    x = np.linspace(-4, 4, n).astype(dtype)
    run, _ = run_main(np.ones(n, dtype), x)
    ev = [e for e in run.trace.events if e.pipe == "V"]
    assert [e.instr for e in ev] == seq
    assert ev[0].count == 128 and ev[0].buffer == "tmpBuf" and "-1.0" in ev[0].detail
    compares = [e for e in ev if e.instr == "CompareScalar"]
    assert [e.count for e in compares] == [128, 128]
    assert "GT" in compares[0].detail and "LT" in compares[1].detail
    selects = [e for e in ev if e.instr == "Select"]
    assert all(e.count == n and "VSEL_TENSOR_SCALAR_MODE" in e.detail for e in selects)
    assert hsg_main.SELMODE.VSEL_TENSOR_SCALAR_MODE == 1                                 # "Select mode 1"
    muls = [e for e in ev if e.instr in ("Muls", "Adds")]
    assert all(f"float {float(ALPHA)!r}" in e.detail for e in muls if e.instr == "Muls")  # alpha = 1/6f in fp32
    assert all(e.count == n for e in muls)
    if final is None:
        assert selects[-1].buffer.startswith("gradInputQueue")
    else:
        casts = [e for e in ev if e.instr == "Cast"]
        assert all("CAST_NONE" in e.detail for e in casts[:2])
        assert final in casts[-1].detail and casts[-1].buffer.startswith("gradInputQueue")
        assert selects[-1].buffer == "selfFp32Buf"        # the product reuses selfFp32


# --- numbers: exhaustive fp16 / bf16, fp32 specials -------------------------------------------------------------

def varied_grad(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    """Normal values of several magnitudes, with +-0, +-inf and NaN sprinkled in."""
    r = np.random.default_rng(seed)
    g = (r.standard_normal(n) * np.exp2(r.integers(-20, 12, n))).astype(F32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], F32)
    g[r.integers(0, n, n // 16)] = specials[r.integers(0, specials.size, n // 16)]
    return g.astype(dtype)


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_every_bit_pattern_as_x(dtype):
    x = every_pattern(dtype)
    g = varied_grad(dtype, x.size, 1)
    assert np.isnan(g.astype(F32)).any() and np.isinf(g.astype(F32)).any()
    out = check(g, x, f"{dtype} every x")
    x32 = x.astype(F32)
    # a NaN x never passes the fp32 mask; |x| >= 3 never does either (alpha*3 + 0.5 rounds to 1 exactly)
    assert not bits(out)[np.isnan(x32)].any()
    assert not bits(out)[np.abs(x32) >= 3].any()
    # inside the band an inf or NaN grad comes through
    inside = np.abs(x32) < 2.9
    assert np.isnan(out.astype(F32)[inside & np.isnan(g.astype(F32))]).all()
    assert np.isinf(out.astype(F32)[inside & np.isinf(g.astype(F32))]).all()


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_every_bit_pattern_as_grad(dtype):
    g = every_pattern(dtype)
    x = np.random.default_rng(2).uniform(-2.9, 2.9, g.size).astype(dtype)       # inside the band
    out = check(g, x, f"{dtype} every grad")
    # one rounding of the exact fp32 product: fp16 differs from the experimental half(alpha) arithmetic
    with np.errstate(invalid="ignore"):                                         # NaN grads
        prod = g.astype(F32) * ALPHA
    assert_bits(out, prod.astype(F16) if dtype == F16 else bf16_ties_away(prod), "grad*alpha")
    if dtype == F16:
        exp = golden.hard_sigmoid_grad(g, x)                                     # fp16 in half, half(alpha)
        finite = np.isfinite(g)
        assert (bits(out) != bits(exp))[finite].sum() > 1000


def test_bf16_rounds_ties_away_from_zero():
    # products that land exactly on a bf16 tie: CAST_ROUND and RNE differ where the kept bit is even
    g = every_pattern(BF16)
    g = g[np.isfinite(g.astype(F32))]
    p = (g.astype(F32) * ALPHA).view(np.uint32)
    tie_even = ((p & 0xFFFF) == 0x8000) & (((p >> 16) & 1) == 0)
    assert tie_even.sum() > 0
    _, out = run_main(g, np.zeros(g.size, BF16))
    rne = (g.astype(F32) * ALPHA).astype(BF16)
    assert np.array_equal(bits(out) != bits(rne), tie_even)


def fp32_specials() -> np.ndarray:
    f = np.float32
    edges = []
    for v in (-3.0, 3.0, 0.0, -2.9999998, 2.9999998):
        c = f(v)
        edges += [np.nextafter(c, f(-np.inf)), c, np.nextafter(c, f(np.inf))]
    walk = np.float32(-3.0) + np.arange(-40, 41, dtype=np.int32).astype(F32) * np.float32(2.0 ** -22)
    other = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38,
             1.1754944e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, 6.0, -6.0]
    return np.concatenate([np.array(edges, F32), walk.astype(F32), np.array(other, F32)])


def test_fp32_specials_and_band_edges():
    x = fp32_specials()
    gv = np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4028235e38, -2.5], F32)
    xs, gs = np.meshgrid(x, gv)                        # every x with every grad
    out = check(gs.ravel(), xs.ravel(), "fp32 specials")
    # the band is decided in fp32 with alpha = 1/6f: x = -3 gives fl(fl(-3 * alpha) + 0.5) = 0, blocked
    t = np.float32(np.float32(-3.0) * ALPHA) + np.float32(0.5)
    assert t == 0
    pick = (xs.ravel() == np.float32(-3.0)) & (gs.ravel() == 1.0)
    assert (out[pick] == 0).all()
    # a value in the band keeps the product bit for bit, subnormal and -0 included
    inside = (xs.ravel() == np.float32(0.5))
    assert_bits(out[inside], (gs.ravel()[inside] * ALPHA).astype(F32), "in band")


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
@pytest.mark.parametrize(("n", "core_num", "ub_size"), [
    (1000, None, 1792 * 2),       # one core, several tiles of 64 or 128 and a tail not a multiple of 64
    (5000, 3, 4096),              # three cores, the last one short, several tiles each
    (1025, None, None),           # blockFactor 17 over 61 cores, the last one of 5
    (1, None, None),
])
def test_tiles_tails_and_cores(dtype, n, core_num, ub_size):
    r = np.random.default_rng(n)
    x = r.uniform(-4, 4, n).astype(dtype)
    g = r.standard_normal(n).astype(dtype)
    check(g, x, f"{dtype} n={n}", core_num=core_num, ub_size=ub_size)


def test_direct_launch_on_another_soc_is_a_what_if():
    # the main kernel is registered for ascend950 only, but the tiling and the kernel run anywhere
    spec = registry.get("hard_sigmoid_grad")
    assert not spec.kernel("main").registered_for(sa.make_soc("Ascend910B4"))
    x = np.linspace(-4, 4, 3000).astype(F32)
    g = np.full(3000, 2.0, F32)
    run, out = sa.run_kernel("hard_sigmoid_grad", g, x, soc="Ascend910B4", kernel="main")
    td = run.tiling                                     # the main tiling with the 910B's platform numbers
    assert td.alpha == float(ALPHA) and td.ubFactor % 64 == 0 and td.tilingKey == 0
    assert (td.blockFactor, td.blockDim) == (75, 40)    # 3000 over the 910B4's 40 vector cores
    assert_bits(out, golden.hard_sigmoid_grad_main950(g, x), "910B what-if")

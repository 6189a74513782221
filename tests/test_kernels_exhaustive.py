"""The simulated kernels against the oracles, bit for bit, over whole value spaces.

Every output is compared as raw bits (``helpers.assert_bits_equal``: NaN payloads and signed zeros count)
with ``ascend_lab.golden`` and, for the exhaustive sweeps, also with a second oracle written here from the
references alone (cann_facts §2.3/§2.4 HardSigmoidGrad, §4.2 ThresholdGradV2D, kernel_flavours §4 ReluGrad,
cann_facts §9 boundary table). The simulator's ``Cast`` has its own implementation (``ascendc.numerics``) and
golden's cast is a separate, smaller one, so a rounding mistake in either shows up here as a mismatch; the
plain-numpy oracle is a third opinion that depends on neither.

Which kernel (kernel_flavours §1): the sweeps test the ops-nn *experimental* kernels, so they ask for them on a
SoC whose op definition registers them -- HardSigmoidGrad on Ascend950PR, ThresholdGradV2D and ReluGrad on
Ascend910B4. The "every SoC" tests run what a stock install runs there (TBE or main) and compare with the
oracle of the kernel that ran (``helpers.oracle_of``), so every flavour is checked bit for bit.

Sweeps: every finite fp16 (63,488) and bf16 (65,280) value as the input x/feature and as the gradient;
int8/uint8 all 256 values; int32 beyond 2^24; fp32 boundaries and specials; sizes around tile and core
boundaries; non-contiguous and broadcast inputs; every SoC of the catalogue.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_bits_equal, bits, oracle_of

import ascend_lab as al
from ascend_lab import golden
from ascend_lab.base.platform import NpuArch, SocVersion, get_soc, socs
from ascend_lab.ops.hard_sigmoid_grad import op_host as hs_host
from ascend_lab.ops.threshold_grad_v2_d import op_host as th_host

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, U8, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64))
INVALID = 161002
RUNTIME_ERROR = 361001
EXP = "experimental"
HS_SOC = "Ascend950PR"                     # the experimental HardSigmoidGrad registers ascend950 (kernel_flavours §1)
TH_SOC = "Ascend910B4"                     # the experimental ThresholdGradV2D/ReluGrad register ascend910b (§1)
ALPHA = np.float32(0.16666666)             # the experimental aclnn's alpha (cann_facts §1.3)
FLT_EPSILON = np.float32(1.1920929e-07)
ALL_SOCS = socs()


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def all_finite(dtype: np.dtype) -> np.ndarray:
    v = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    return v[np.isfinite(v.astype(np.float32))]


def has_bf16(soc: str) -> bool:
    """cann_facts §1.1 (HardsigmoidBackward: SocVersion in [910B, 910E] or regbase) and §3.1
    (ThresholdBackward: NpuArch 2201 or 3510) agree for every SoC of the catalogue."""
    s = get_soc(soc)
    return s.npu_arch in (NpuArch.DAV_2201, NpuArch.DAV_3510) or (
        SocVersion.ASCEND910B <= s.soc_version <= SocVersion.ASCEND910E)


def hs(g, x, soc=HS_SOC, kernel=EXP):
    r = al.hardsigmoid_backward(g, x, soc=soc, kernel=kernel)
    assert r.status == 0, r.messages
    assert kernel is None or r.kernel == kernel, (r.kernel, kernel)
    return r


def th(g, x, thr, soc=TH_SOC, kernel=EXP):
    r = al.threshold_backward(g, x, thr, soc=soc, kernel=kernel)
    assert r.status == 0, r.messages
    assert kernel is None or r.kernel == kernel, (r.kernel, kernel)
    want_op = "ReluGrad" if abs(np.float32(thr)) <= FLT_EPSILON else "ThresholdGradV2D"
    assert want_op in r.graph, r.graph
    return r


# --- independent oracles (numpy only, from the references) ---------------------------------------------------

def f16_round(v64: np.ndarray) -> np.ndarray:
    """float64 -> float16, one IEEE round-to-nearest-even (numpy converts double to half directly)."""
    with np.errstate(over="ignore"):
        return np.asarray(v64, F64).astype(F16)


def bf16_round_half_away(v32: np.ndarray) -> np.ndarray:
    """fp32 -> bf16 with CAST_ROUND (ties away from zero), on finite or infinite inputs and quiet NaNs."""
    u = np.ascontiguousarray(v32, F32).view(np.uint32).astype(np.uint64)
    mag = u & 0x7FFFFFFF
    out = np.where(mag > 0x7F800000, mag >> 16 | 0x40, (mag + 0x8000) >> 16)
    return ((out | ((u >> 16) & 0x8000)).astype(np.uint16)).view(BF16)


def hs_oracle(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """cann_facts §2.3/§2.4: (0 < alpha*x + beta < 1) ? grad*alpha : 0, each step rounded in the compute dtype."""
    if g.dtype == F16:
        a16 = f16_round(np.float64(ALPHA))                        # half(0.16666666) = 0.1666259765625
        assert float(a16) == 0.1666259765625
        tmp = f16_round(f16_round(x.astype(F64) * float(a16)).astype(F64) + 0.5)
        res = f16_round(g.astype(F64) * float(a16))
        return np.where((tmp > 0) & (tmp < 1), res, F16.type(0))
    g32, x32 = g.astype(F32), x.astype(F32)
    with np.errstate(all="ignore"):
        tmp = (x32 * ALPHA) + np.float32(0.5)
        res = g32 * ALPHA
    out = np.where((tmp > 0) & (tmp < 1), res, np.float32(0))
    return out if g.dtype == F32 else bf16_round_half_away(out)


def half_of(thr: float) -> np.float16:
    with np.errstate(over="ignore"):
        return np.float32(thr).astype(F16)


def th_oracle(g: np.ndarray, x: np.ndarray, thr: float) -> np.ndarray:
    """cann_facts §4.2: feature > thr ? grad : 0; fp16 against half(thr); integer and bf16 through fp32
    (int32 -> fp32 rounds to nearest, back with truncation, saturating)."""
    thr32 = np.float32(thr)
    if g.dtype == F16:
        return np.where(x > half_of(thr), g, F16.type(0))
    keep = x.astype(F32) > thr32
    if g.dtype == I32:
        g32 = g.astype(F32).astype(F64)                          # RNE to fp32, exact in fp64
        return np.where(keep, np.clip(np.trunc(g32), -2.0**31, 2.0**31 - 1), 0).astype(I32)
    return np.where(keep, g, g.dtype.type(0))                     # fp32, bf16, int8, uint8: exact round trips


def relu_oracle(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The experimental ReluGrad (kernel_flavours §4), per dtype:

    * fp32/fp16: CompareScalar LE + Duplicate 0 + Select mode 2: x <= 0 -> +0, else grad bit for bit (a NaN
      feature keeps its gradient; an inf/NaN gradient where x <= 0 gives +0).
    * bf16: the mask max(min(x, 2^-126), 0) is multiplied by constexpr ints 2^38, 2^44, 2^44 that wrap to 0,
      so the output is grad * (+0): a zero with the gradient's sign, or NaN where the feature is NaN or the
      gradient is inf/NaN (the source defect, UNCONFIRMED on device). The mask is +0 for x = -0 too: Max(-0, +0)
      is taken to give +0, as numpy's maximum does (the vector unit's signed-zero rule is UNCONFIRMED).
    * int8/uint8 (the chain in half, a subnormal 2^-24 times 4096 * 4096 = 1) and int32 (min/max/mul in int32):
      exactly x > 0 ? grad : 0.
    """
    if g.dtype in (F32, F16):
        return np.where(x <= 0, g.dtype.type(0), g)
    if g.dtype == BF16:
        x32, g32 = x.astype(F32), g.astype(F32)
        nan = np.isnan(x32) | ~np.isfinite(g32)
        out = np.where(nan, np.float32(np.nan), np.where(np.signbit(g32), np.float32(-0.0), np.float32(0.0)))
        return out.astype(BF16)
    return np.where(x > 0, g, g.dtype.type(0))


def check_hs(g, x, soc=HS_SOC, what=""):
    """The experimental HardSigmoidGrad against golden and the §2.3/§2.4 oracle."""
    out = hs(g, x, soc).out
    assert_bits_equal(out, golden.hard_sigmoid_grad(g, x), "golden " + what)
    assert_bits_equal(out, hs_oracle(g, x), "oracle " + what)
    return out


def check_th(g, x, thr, soc=TH_SOC, what=""):
    """The experimental ThresholdGradV2D (|thr| > FLT_EPSILON) or ReluGrad against golden and the oracles here.
    NaNs from the bf16 ReluGrad defect match any NaN in the independent oracle (it does not model payloads)."""
    out = th(g, x, thr, soc).out
    relu = abs(np.float32(thr)) <= FLT_EPSILON
    want = golden.relu_grad_experimental(g, x) if relu else golden.threshold_grad_v2_d(g, x, thr)
    assert_bits_equal(out, want, f"golden {what} thr={thr}")
    assert_bits_equal(out, relu_oracle(g, x) if relu else th_oracle(g, x, thr), f"oracle {what} thr={thr}",
                      any_nan=relu)
    return out


def check_default(run: al.Run, g, x, what=""):
    """Whatever kernel the SoC ran by default, against that kernel's own oracle."""
    name, oracle = oracle_of(run)
    assert_bits_equal(run.out, oracle(g, x), f"{what} ({run.kernel} kernel) vs {name}")
    return run.out


# --- HardsigmoidBackward: fp16 and bf16, every finite value ---------------------------------------------------

@pytest.mark.parametrize(("soc", "kernel"), [(HS_SOC, EXP), (HS_SOC, None), (TH_SOC, None)])
def test_hs_fp16_every_finite_x(soc, kernel):
    """The experimental kernel against both oracles; the stock kernels (main on 950, TBE on 910B4) against
    their own."""
    x = all_finite(F16)
    assert x.size == 63488
    g = (rng(1).standard_normal(x.size) * 8).astype(F16)
    if kernel == EXP:
        out = check_hs(g, x, soc, "fp16 x sweep")
    else:
        out = check_default(hs(g, x, soc, kernel=None), g, x, f"fp16 x sweep on {soc}")
    # §9 table: x = -3 is blocked (tmp = 0 exactly), -2.998 passes, 3 is blocked -- on the native fp16 path, and
    # likewise on the main kernel's fp32 path and TBE's |x| < 3 (kernel_flavours §2.2, §5.1)
    for v, passes in ((-3.0, False), (-2.998046875, True), (2.998046875, True), (3.0, False)):
        i = int(np.flatnonzero(x == F16.type(v))[0])
        assert (out[i] != 0) == passes or g[i] == 0, (v, out[i], g[i])


def test_hs_fp16_every_finite_grad_in_the_pass_region():
    g = all_finite(F16)
    x = rng(2).uniform(-2.9, 2.9, g.size).astype(F16)
    out = check_hs(g, x, what="fp16 grad sweep")
    # grad * half(alpha) rounded once to half: ties, subnormals, overflow-free (|g| * 0.1666 < 65504)
    assert_bits_equal(out, f16_round(g.astype(F64) * 0.1666259765625), "grad*alpha")
    # §9: 19,492 of the 63,488 finite fp16 grads differ from PyTorch (fp32 math with 1/6f, RNE to half)
    pytorch = golden.hard_sigmoid_grad_pytorch(g, x)
    assert int((bits(out) != bits(pytorch)).sum()) == 19492


def test_hs_bf16_every_finite_x_and_grad():
    v = all_finite(BF16)
    assert v.size == 65280
    r = rng(3)
    check_hs((r.standard_normal(v.size) * 4).astype(BF16), v, what="bf16 x sweep")
    x = r.uniform(-2.9, 2.9, v.size).astype(BF16)
    out = check_hs(v, x, what="bf16 grad sweep")
    # bf16 goes through fp32 and back with CAST_ROUND (§2.4): grad*alpha in fp32, ties away from zero
    assert_bits_equal(out, bf16_round_half_away(v.astype(F32) * ALPHA), "bf16 grad*alpha")
    # §9: 86 of the 65,280 finite bf16 grads give an fp32 product exactly on a bf16 tie. Half-away and RNE
    # only disagree on the ties whose kept bit is even (44 of them); the note says all 86 differ, which
    # does not hold (reported).
    p = (v.astype(F32) * ALPHA).view(np.uint32)
    tie = (p & 0xFFFF) == 0x8000
    assert int(tie.sum()) == 86
    rne = (v.astype(F32) * ALPHA).astype(BF16)
    differ = bits(out) != bits(rne)
    assert np.array_equal(differ, tie & ((p >> 16) & 1 == 0))


def test_hs_boundaries_per_dtype_follow_the_reference_table():
    """cann_facts §9, column 'fp32 path alpha=0.16666666f' (fp32, bf16) and 'native fp16 path' (fp16)."""
    table = {
        F32: [(-3.0000002, 0), (-3.0, 1), (-2.9999998, 1), (2.9999998, 1), (3.0, 0)],
        F16: [(-3.0, 0), (-2.998046875, 1), (2.998046875, 1), (3.0, 0), (-3.001953125, 0), (3.001953125, 0)],
        BF16: [(-3.0, 1), (-2.984375, 1), (2.984375, 1), (3.0, 0), (-3.015625, 0), (3.015625, 0)],
    }
    for dt, rows in table.items():
        x = np.array([v for v, _ in rows], np.float64).astype(np.float32).astype(dt)
        g = np.full(x.shape, 6.0, np.float32).astype(dt)
        out = check_hs(g, x, what=f"boundaries {dt}")
        assert [int(o != 0) for o in out.astype(np.float32)] == [p for _, p in rows], (dt, out)


def test_hs_fp32_random_with_specials():
    r = rng(4)
    specials = np.array([-3.0, -3.0000002, -2.9999998, 2.9999998, 3.0, 3.0000002, np.nan, -np.nan, np.inf,
                         -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38, 5e-39, 3.4028235e38,
                         -3.4028235e38, 0.5, -0.5], np.float32)
    n = 50_001
    x = r.uniform(-6, 6, n).astype(np.float32)
    g = (r.standard_normal(n) * 10).astype(np.float32)
    x[: specials.size] = specials
    g[specials.size: 2 * specials.size] = specials                # special grads with x in the pass region
    x[specials.size: 2 * specials.size] = 0.25
    for k, s in enumerate(specials):                               # every special x with every special grad
        x[2 * specials.size + k * specials.size: 2 * specials.size + (k + 1) * specials.size] = s
        g[2 * specials.size + k * specials.size: 2 * specials.size + (k + 1) * specials.size] = specials
    sub = r.integers(1, 1 << 23, 2000).astype(np.uint32).view(np.float32)     # subnormals, both signs
    x[-4000:-2000] = sub * np.where(r.random(2000) < 0.5, -1, 1).astype(np.float32)
    g[-2000:] = sub
    out = check_hs(g, x, what="fp32 specials")
    assert np.isnan(out[specials.size + 6]) and out[6] == 0 and out[0] == np.float32(0) * 0 + g[0] * ALPHA


def _hs_tiling(n: int, dtype: np.dtype) -> hs_host.HardSigmoidGradTilingData:
    """The experimental tiling as the aclnn path runs it on HS_SOC (GetCoreMemSize(UB), kernel_flavours §6)."""
    s = get_soc(HS_SOC)
    return hs_host.tiling(n, dtype.name if dtype != BF16 else "bfloat16", s.vector_core_num, s.core_mem_size_ub)


#: Sizes around the dtype's tile (ubFactor u) and core boundaries (64 cores on Ascend950PR): 1, 31, 33, u - 1,
#: u, u + 1, 2u + 1, one element more than a full tile on every core, and two tiles per core plus one.
SIZE_CASES = {"1": lambda u, c: 1, "31": lambda u, c: 31, "33": lambda u, c: 33, "u-1": lambda u, c: u - 1,
              "u": lambda u, c: u, "u+1": lambda u, c: u + 1, "2u+1": lambda u, c: 2 * u + 1,
              "cores*u+1": lambda u, c: c * u + 1, "cores*2u+1": lambda u, c: c * 2 * u + 1}


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
@pytest.mark.parametrize("case", SIZE_CASES)
def test_hs_sizes_and_tails(dtype, case):
    n = SIZE_CASES[case](_hs_tiling(10**9, dtype).ubFactor, get_soc(HS_SOC).vector_core_num)
    td = _hs_tiling(n, dtype)
    r = rng(n)
    g = (r.standard_normal(n) * 3).astype(np.float32).astype(dtype)
    x = r.uniform(-4, 4, n).astype(np.float32).astype(dtype)
    run = hs(g, x)
    assert run.tiling == td
    assert_bits_equal(run.out, golden.hard_sigmoid_grad(g, x), f"n={n}")
    assert_bits_equal(run.out, hs_oracle(g, x), f"n={n}")


def test_hs_one_element_more_than_a_core_boundary():
    # Ascend950PR: 64 cores, GetCoreMemSize(UB) 253952 B (kernel_flavours §6: no 256 B kfc reserve off A2/A3),
    # so the fp32 tile is FloorAlign(253952 / 4 / 8, 32) = 7936 (cann_facts §2.1). n = 64 x 7936 + 1 gives
    # blockFactor CeilDiv(n, 64) = 7937: every core has one full tile and a 1-element tail, the last core fewer
    # (64 x 7937 = 507968 covers n = 507905 on 64 cores, 63 would not)
    n = 64 * 7936 + 1
    td = hs_host.tiling(n, "float32", 64, 253952)
    assert (td.blockFactor, td.ubFactor, td.blockDim) == (7937, 7936, 64)
    assert td == _hs_tiling(n, F32)
    r = rng(5)
    g, x = r.standard_normal(n).astype(np.float32), r.uniform(-4, 4, n).astype(np.float32)
    check_hs(g, x, what="core boundary")


def test_hs_non_contiguous_inputs():
    r = rng(6)
    base_g = r.standard_normal((300, 70)).astype(np.float32)
    base_x = r.uniform(-4, 4, (70, 600)).astype(np.float32)
    g, x = base_g[::3, 5:], base_x.T[::6, 5:]
    assert g.shape == x.shape and not g.flags.c_contiguous and not x.flags.c_contiguous
    check_hs(g.copy(), x.copy(), what="copies")
    out = hs(g, x).out
    assert_bits_equal(out, golden.hard_sigmoid_grad(g.copy(), x.copy()), "non-contiguous")
    h = base_g.astype(F16)[1::2, ::-1]
    out = hs(h, h[::-1]).out
    assert_bits_equal(out, golden.hard_sigmoid_grad(h.copy(), h[::-1].copy()), "fp16 negative strides")


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_hs_every_soc(soc):
    r = rng(7)
    n = 70_001
    for dt in (F32, F16, BF16):
        g = (r.standard_normal(n) * 3).astype(np.float32).astype(dt)
        x = r.uniform(-4, 4, n).astype(np.float32).astype(dt)
        if dt == BF16 and not has_bf16(soc):
            assert al.hardsigmoid_backward(g, x, soc=soc).status == INVALID
            continue
        check_default(hs(g, x, soc, kernel=None), g, x, f"{soc} {dt}")


# --- ThresholdBackward ----------------------------------------------------------------------------------------

def test_th_fp16_every_finite_feature_against_several_thresholds():
    x = all_finite(F16)
    g = (rng(8).standard_normal(x.size) * 5).astype(F16)
    g[g == 0] = F16.type(1)
    for thr in (0.10002, -1.5, 1.0, 1e-3, 65504.0, -70000.0, 0.0):
        out = check_th(g, x, thr, what="fp16 sweep")
        # the threshold is rounded to half first (§4.2; half(0) = 0 for ReluGrad): count the features that pass
        assert int((out != 0).sum()) == int((x > half_of(thr)).sum())
    # §9: thr 0.10002 -> half 0.10003662; feature 0.10003662 is blocked (PyTorch would pass it)
    assert float(np.float16(np.float32(0.10002))) == 0.100036621093750
    out = th(g, x, 0.10002).out
    i = int(np.flatnonzero(x == np.float16(0.10003662))[0])
    assert out[i] == 0 and out[i + 1] == g[i + 1] and x[i] > np.float32(0.10002)


def test_th_bf16_every_finite_feature_and_grad():
    v = all_finite(BF16)
    r = rng(9)
    g = (r.standard_normal(v.size) * 5).astype(BF16)
    for thr in (0.10002, -2.5, 1.0, 3e38, 0.0):
        check_th(g, v, thr, what="bf16 feature sweep")
    x = np.full(v.size, 2.0, np.float32).astype(BF16)
    out = check_th(v, x, 1.0, what="bf16 grad sweep")
    assert_bits_equal(out, v, "bf16 grads pass unchanged through fp32 and CAST_RINT")


def test_th_fp32_random_with_specials_and_nan_features():
    r = rng(10)
    n = 30_011
    g = (r.standard_normal(n) * 7).astype(np.float32)
    x = r.uniform(-3, 3, n).astype(np.float32)
    x[:8] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 0.5]
    g[8:16] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3.4028235e38]
    x[8:16] = 2.0
    for thr in (0.5, -1.25, 0.0, 1e-8, -1e-7, 2.0):
        out = check_th(g, x, thr, what="fp32")
        relu = abs(np.float32(thr)) <= FLT_EPSILON
        # NaN feature: ThresholdGradV2D's GT compare drops it (cann_facts §4.2); the experimental ReluGrad's
        # CompareScalar LE is false for NaN, so Select mode 2 keeps the gradient (kernel_flavours §4)
        assert_bits_equal(out[:2], g[:2] if relu else np.zeros(2, np.float32), f"NaN features thr={thr}")


def test_th_fp32_thresholds_within_flt_epsilon_are_relu():
    # §3.2 / §9: |thr| <= FLT_EPSILON runs ReluGrad: thr=1e-8, feature=5e-9 -> grad (PyTorch: 0)
    g = np.array([1.0, 2.0, 3.0], np.float32)
    x = np.array([5e-9, 0.0, -5e-9], np.float32)
    r = th(g, x, 1e-8)
    assert r.graph[-2] == "ReluGrad"
    assert r.out.tolist() == [1.0, 0.0, 0.0]
    r = th(g, x, 1.2e-7)                                            # just above FLT_EPSILON: ThresholdGradV2D
    assert r.out.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", [I8, U8])
def test_th_int8_uint8_all_256_values(dtype):
    x = np.arange(256, dtype=np.int64).astype(np.uint8).view(dtype)
    for seed in range(3):
        g = rng(11 + seed).permutation(x)
        for thr in (0.5, -0.5, 1.0, 126.5, -128.5, 254.9, 300.0, -1e9, 0.0):
            out = check_th(g, x, thr, what=str(dtype))
            if abs(thr) > FLT_EPSILON:
                np.testing.assert_array_equal(out, np.where(x.astype(np.float64) > thr, g, 0).astype(dtype))
    # all 65,536 (grad, feature) pairs at once
    gg, xx = (a.ravel() for a in np.meshgrid(x, x))
    check_th(gg, xx, 7.25, what=f"{dtype} pairs")
    check_th(gg, xx, 0.0, what=f"{dtype} pairs relu")


def test_th_int32_beyond_2_pow_24():
    big = np.array([2**24 - 1, 2**24, 2**24 + 1, 2**24 + 3, 123456789, 2**31 - 1, -2**31, -2**31 + 1,
                    -(2**24) - 1, 2**30 + 64, 0, -1, 1], np.int64).astype(I32)
    g = np.tile(big, big.size)
    x = np.repeat(big, big.size)
    for thr in (0.5, 16777216.0, 16777217.0, -0.5, 2.0**31, -2.0**31, 0.0):
        check_th(g, x, thr, what="int32")
    out = th(big, np.full(big.size, 5, np.int32), 0.5).out
    # fp32 RNE then truncation back (§4.2/§9): 2^24+1 -> 2^24, 123456789 -> 123456792, 2^31-1 saturates
    assert out[[2, 4, 5, 6]].tolist() == [2**24, 123456792, 2**31 - 1, -2**31]
    # a feature of 2^24+1 equals 2^24 in fp32, so it is not > 16777216
    out = th(np.array([7, 7], np.int32), np.array([2**24 + 1, 2**24 + 2], np.int32), 16777216.0).out
    assert out.tolist() == [0, 7]
    r = rng(12)
    g = r.integers(-2**31, 2**31, 100_003, dtype=np.int64).astype(I32)
    x = r.integers(-2**31, 2**31, 100_003, dtype=np.int64).astype(I32)
    check_th(g, x, 1000.5, what="int32 random")


@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32, I8, U8])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 255, 257])
def test_th_small_sizes(dtype, n):
    r = rng(n)
    g = r.integers(-100, 100, n).astype(dtype)
    x = r.integers(-3, 3, n).astype(dtype)
    for thr in (0.5, 0.0):
        check_th(g, x, thr, what=f"{dtype} n={n}")


@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32, I8, U8])
def test_th_multi_tile_and_tail_on_every_core(dtype):
    """Enough elements for two full tiles plus a tail on every one of the 40 cores (cann_facts §4.1)."""
    s = get_soc(TH_SOC)
    ub = s.core_mem_size_ub              # 196352 B on Ascend910B4: what the tiling sees (kernel_flavours §6)
    probe = th_host.tiling(10**9, dtype.name if dtype != BF16 else "bfloat16", s.vector_core_num, ub)
    n = s.vector_core_num * (2 * probe.tileDataNum + 300) + 7
    td = th_host.tiling(n, dtype.name if dtype != BF16 else "bfloat16", s.vector_core_num, ub, threshold=0.5)
    assert td.blockDim == 40 and td.finalSmallTileNum == 3 and td.finalBigTileNum == 3
    r = rng(13)
    g = r.integers(-100, 100, n).astype(dtype)
    x = r.integers(-3, 3, n).astype(dtype)
    run = th(g, x, 0.5)
    assert run.tiling == td
    assert_bits_equal(run.out, golden.threshold_grad_v2_d(g, x, 0.5))
    assert_bits_equal(run.out, th_oracle(g, x, 0.5))


def test_th_non_contiguous_inputs():
    r = rng(14)
    base = r.standard_normal((40, 60)).astype(np.float32)
    g, x = base[::2, ::3], base.T[5:25, ::2][:, :20]
    assert g.shape == x.shape and not g.flags.c_contiguous and not x.flags.c_contiguous
    out = th(g, x, 0.1).out
    assert_bits_equal(out, th_oracle(g.copy(), x.copy(), 0.1), "views")
    assert_bits_equal(out, golden.threshold_grad_v2_d(g.copy(), x.copy(), 0.1), "views, golden")


@pytest.mark.parametrize("soc", ["Ascend910A", TH_SOC, "Ascend310P3", "Ascend950PR"])
@pytest.mark.parametrize("thr", [-0.2, 0.0])
def test_th_broadcast_inputs_on_the_stock_kernels(soc, thr):
    """No BroadcastTo node (kernel_flavours §6): the inputs reach the kernel with their own shapes, and the
    stock kernels (TBE, main) broadcast them natively -- bit-exact against their own (broadcasting) oracles and,
    away from NaN and the half(thr) rounding, against the plain formula."""
    r = rng(14)
    gb = r.standard_normal((3, 1, 5)).astype(F16)
    xb = r.standard_normal((4, 5)).astype(F16)
    run = th(gb, xb, thr, soc, kernel=None)
    assert run.out.shape == (3, 4, 5) and "BroadcastTo" not in run.graph
    check_default(run, gb, xb, f"broadcast {soc}")
    bg, bx = np.broadcast_arrays(gb, xb)
    np.testing.assert_array_equal(run.out, np.where(bx > thr, bg, 0).astype(F16))


def test_th_broadcast_on_the_experimental_kernel_reads_past_the_smaller_input():
    """The experimental ThresholdGradV2D counts input 0's elements only (cann_facts §4.1) and reads both inputs
    at the same offsets, so a broadcast call reads past the smaller input -- the real kernel's defect
    (kernel_flavours §6). Within the tensor's GM padding the sanitizer reports gm-padding; beyond it the
    kernel stops with gm-out-of-bounds and phase 2 returns 361001."""
    r = rng(14)
    g = r.standard_normal((4, 5)).astype(np.float32)
    x = r.standard_normal(5).astype(np.float32)
    run = th(g, x, 0.3)
    assert run.out.shape == (4, 5)
    found = [w for k in run.kernel_runs for w in k.warnings if w.kind == "gm-padding"]
    assert any("input_feature" in w.message and "reads" in w.message for w in found), found
    # the first row pairs grad with the feature's real 5 elements; the other rows read whatever lies past x
    assert_bits_equal(run.out[0], th_oracle(g[0], x, 0.3), "row 0")
    # 2000 gradient elements: the feature's 20 B plus its 256 B padding are far too short
    big = r.standard_normal((400, 5)).astype(np.float32)
    run = al.threshold_backward(big, x, 0.3, soc=TH_SOC, kernel=EXP)
    assert run.status == RUNTIME_ERROR and run.out is None
    assert "gm-out-of-bounds" in run.messages[-1] and "input_feature" in run.messages[-1], run.messages


def test_th_int64_only_on_950_with_threshold_zero():
    r = rng(15)
    g = r.integers(-2**62, 2**62, 10_007, dtype=np.int64)
    x = r.integers(-5, 5, 10_007, dtype=np.int64)
    g[:4] = [2**53 + 1, -(2**63), 2**63 - 1, 7]
    x[:4] = 1
    # int64 reaches only the 950 ReluGrad, whose stock kernel is the main (atvoss) one: grad x mask in int64,
    # exact (kernel_flavours §3.7)
    run = th(g, x, 0.0, "Ascend950PR", kernel="main")
    out = check_default(run, g, x, "int64")
    assert_bits_equal(out, np.where(x <= 0, 0, g), "int64, plain formula")
    assert out[:4].tolist() == [2**53 + 1, -(2**63), 2**63 - 1, 7]       # native int64: no fp32 rounding
    assert al.threshold_backward(g, x, 0.5, soc="Ascend950PR").status == INVALID     # cann_facts §3.2
    assert al.threshold_backward(g, x, 0.0, soc=TH_SOC).status == INVALID


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_th_every_soc_every_dtype(soc):
    r = rng(16)
    n = 50_021
    for dt in (F32, F16, BF16, I32, I8, U8):
        if dt.kind == "f" or dt == BF16:
            g = (r.standard_normal(n) * 4).astype(np.float32).astype(dt)
            x = r.uniform(-2, 2, n).astype(np.float32).astype(dt)
        else:
            info = np.iinfo(dt)
            g = r.integers(info.min, info.max, n, endpoint=True).astype(dt)
            x = r.integers(max(info.min, -3), 4, n).astype(dt)
        for thr in (0.75, 0.0):
            if dt == BF16 and not has_bf16(soc):
                assert al.threshold_backward(g, x, thr, soc=soc).status == INVALID
                continue
            check_default(th(g, x, thr, soc, kernel=None), g, x, f"{soc} {dt} thr={thr}")

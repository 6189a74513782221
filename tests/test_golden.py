"""Tests for ascend_lab.golden: its cast against the simulator's separate implementation
(``ascendc.numerics``, itself tested against brute-force references in tests/test_numerics.py) and against
ml_dtypes and hand-written rules; the kernels against the facts of sources/cann_facts.md (§2, §4, §5, §9)."""

from __future__ import annotations

import math
import struct

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_bits_equal, bits
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ascend_lab import golden as G
from ascend_lab.ascendc import numerics as N

BF = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
MODES6 = ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD")
MODES5 = MODES6[:-1]
RNG = np.random.default_rng(20260822)
# ml_dtypes warns when a bf16 NaN is widened with astype; the tests do that on purpose
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")


def all_patterns(dt: np.dtype) -> np.ndarray:
    return np.arange(65536, dtype=np.uint16).view(dt)


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Same dtype, shape and bits; a NaN matches any NaN (the casts' NaN payloads are checked on their own)."""
    assert_bits_equal(got, want, any_nan=True)


# ------------------------------------------------------------------------------------------
# cast: golden's reduced implementation against the simulator's, conversion by conversion
# ------------------------------------------------------------------------------------------

NEAREST = ("CAST_NONE", "CAST_RINT")
SIX = ("CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_TRUNC", "CAST_FLOOR", "CAST_CEIL")
INTS = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64))


def fp32_probe_values() -> np.ndarray:
    """Every upper-16-bit pattern combined with lower halves around the fp16 and bf16 rounding points."""
    lows = [0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000,
            0x7FFF, 0x8000, 0x8001, 0xFFFF, *RNG.integers(0, 65536, 4).tolist()]
    hi = np.arange(65536, dtype=np.uint32) << 16
    u = (hi[:, None] | np.array(lows, np.uint32)[None, :]).ravel()
    return u.view(F32)


def probe(src: np.dtype) -> np.ndarray:
    """Inputs of ``src`` that reach every rounding case: all 16-bit patterns, the fp32 probe set, float64
    midpoints between halves and wide random values, whole integer ranges or their edges."""
    if src in (F16, BF):
        return all_patterns(src)
    if src == F32:
        return fp32_probe_values()
    if src == F64:
        h = all_patterns(F16).astype(F64)
        h = np.unique(h[np.isfinite(h)])
        mid = (h[:-1] + h[1:]) / 2
        return np.concatenate([mid, mid * (1 + 2.0**-40), mid * (1 - 2.0**-40), RNG.uniform(-7e4, 7e4, 5000),
                               RNG.uniform(-5e9, 5e9, 2000), [np.nan, np.inf, -np.inf, -0.0, 2.0**-1074]])
    info = np.iinfo(src)
    if src.itemsize <= 2:
        return np.arange(info.min, int(info.max) + 1).astype(src)
    edges = [info.min, info.max, 0, 1, -1 if info.min else 2, 2**24 + 1, 2**24 + 3, 65519, 65520]
    return np.concatenate([RNG.integers(info.min, info.max, 20000, dtype=src, endpoint=True),
                           np.array(edges).astype(src)])


def supported() -> list[tuple[np.dtype, np.dtype, str]]:
    """Every (source, destination, mode) golden.cast models (its docstring's list)."""
    floats = (F16, BF, F32, F64)
    cases = []
    for src in floats:
        cases.append((src, src, "CAST_NONE"))
        for dst in floats:
            if dst.itemsize > src.itemsize:
                cases += [(src, dst, m) for m in SIX]                            # widening
        for dst in INTS[:-1]:
            cases += [(src, dst, m) for m in SIX]                                # float -> int, saturating
    for src in (F16, F32):
        cases += [(src, BF, m) for m in SIX]                                     # -> bf16 on the fp32 bits
    for src in INTS[:4]:
        cases += [(src, BF, m) for m in NEAREST]
    cases += [(s, F16, m) for s in (F32, F64, BF) for m in NEAREST]              # nearest-even narrowing
    cases += [(F64, F32, m) for m in NEAREST]
    cases += [(s, d, m) for s in INTS for d in (F16, F32, F64) for m in NEAREST]
    cases += [(s, d, "CAST_NONE") for s in INTS for d in INTS]                   # int -> int, saturating
    return cases


@pytest.mark.parametrize("src, dst, mode", supported(), ids=lambda v: str(v))
def test_cast_agrees_with_the_simulator(src, dst, mode):
    x = probe(src)
    with np.errstate(all="ignore"):
        want = N.cast(x, dst, mode)
    got = G.cast(x, dst, mode)
    assert got.dtype == dst
    assert_same_bits(got, want)
    if dst.kind == "f" or dst == BF:                 # NaN stays NaN (bits above allow any NaN for a NaN)
        assert np.array_equal(np.isnan(got.astype(F64)), np.isnan(want.astype(F64)))


@pytest.mark.parametrize("src, dst, mode", [
    (F32, F16, "CAST_ODD"), (F32, F16, "CAST_TRUNC"), (F32, F16, "CAST_ROUND"), (F64, F32, "CAST_FLOOR"),
    (F32, BF, "CAST_ODD"), (F64, BF, "CAST_RINT"), (np.dtype(np.int32), BF, "CAST_NONE"),
    (F32, F32, "CAST_RINT"), (F16, F16, "CAST_TRUNC"), (F32, np.dtype(np.int64), "CAST_RINT"),
    (F32, np.dtype(np.int8), "CAST_ODD"), (np.dtype(np.int32), F32, "CAST_TRUNC"),
    (np.dtype(np.int32), np.dtype(np.int8), "CAST_ODD"),
])
def test_cast_outside_its_reduced_table_raises_value_error(src, dst, mode):
    x = np.ones(3, src)
    with pytest.raises(ValueError, match=f"golden.cast does not model {src} -> {dst} with {mode}"):
        G.cast(x, dst, mode)
    if mode != "CAST_ODD" or dst == F16:
        N.cast(x, dst, mode)                           # the simulator models these


def test_cast_rejects_bool_and_complex():
    for bad in (np.ones(2, np.bool_), np.ones(2, np.complex64)):
        with pytest.raises(TypeError):
            G.cast(bad, F32)


def test_fp32_to_bf16_rint_agrees_with_ml_dtypes():
    x = np.concatenate([
        RNG.standard_normal(100000).astype(F32) * np.float32(1e3),
        (RNG.integers(0, 2**32, 100000, dtype=np.uint64).astype(np.uint32)).view(F32),
        # exact ties: lower half 0x8000 with even and odd upper halves
        ((np.arange(0, 65536, dtype=np.uint32) << 16) | 0x8000).view(F32),
    ])
    x = x[np.isfinite(x)]
    assert_same_bits(G.cast(x, "bfloat16", "CAST_RINT"), x.astype(BF))


def test_bf16_modes_by_hand():
    # 1 + 2^-8 is the tie between bf16 1.0 and 1.0078125; 1 + 2^-8 + 2^-20 lies just above it
    x = np.array([1 + 2.0**-8, -(1 + 2.0**-8), 1 + 2.0**-8 + 2.0**-20, 1 + 3 * 2.0**-8, 3.4e38, -3.4e38], F32)
    want = {
        "CAST_RINT": [1.0, -1.0, 1.0078125, 1.015625, np.inf, -np.inf],
        "CAST_ROUND": [1.0078125, -1.0078125, 1.0078125, 1.015625, np.inf, -np.inf],
        "CAST_TRUNC": [1.0, -1.0, 1.0, 1.0078125, 3.3895314e38, -3.3895314e38],
        "CAST_FLOOR": [1.0, -1.0078125, 1.0, 1.0078125, 3.3895314e38, -np.inf],
        "CAST_CEIL": [1.0078125, -1.0, 1.0078125, 1.015625, np.inf, -3.3895314e38],
    }
    for mode, w in want.items():
        np.testing.assert_array_equal(G.cast(x, BF, mode).astype(F32), np.array(w, F32), err_msg=mode)


@pytest.mark.parametrize("src", [F16, BF, F32, F64])
@pytest.mark.parametrize("dst", ["int8", "uint8", "int32"])
def test_float_to_int_modes_and_saturation(src, dst):
    with np.errstate(over="ignore"):
        x = np.concatenate([RNG.uniform(-300, 300, 4000), np.arange(-260, 260) / 2,
                            RNG.uniform(-3e9, 3e9, 1000)]).astype(src)
    x = x[np.isfinite(x.astype(F64))]
    x64 = x.astype(F64)
    info = np.iinfo(dst)
    refs = {
        "CAST_TRUNC": np.trunc(x64), "CAST_FLOOR": np.floor(x64), "CAST_CEIL": np.ceil(x64),
        "CAST_RINT": np.rint(x64), "CAST_NONE": np.rint(x64),
        "CAST_ROUND": np.where(x64 >= 0, np.floor(x64 + 0.5), np.ceil(x64 - 0.5)),
    }
    for mode, r in refs.items():
        got = G.cast(x, dst, mode)
        assert got.dtype == np.dtype(dst)
        np.testing.assert_array_equal(got.astype(np.int64), np.clip(r, info.min, info.max).astype(np.int64),
                                      err_msg=mode)
    special = np.array([np.nan, np.inf, -np.inf, -0.0], src)
    for mode in refs:
        np.testing.assert_array_equal(G.cast(special, dst, mode).astype(np.int64), [0, info.max, info.min, 0])


def test_round_half_away_is_exact_next_to_one_half():
    # 0.5 - 2^-54 is the largest double below 0.5: ROUND must give 0 (floor(x + 0.5) would give 1)
    x = np.array([0.5 - 2.0**-54, -(0.5 - 2.0**-54), 0.5, -0.5, 2.5, -2.5], F64)
    assert G.cast(x, np.int32, "CAST_ROUND").tolist() == [0, 0, 1, -1, 3, -3]


def test_cast_misc():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7], F32)
    out = G.cast(x, "float32")
    assert out.tolist() == x.tolist() and not np.shares_memory(out, x)
    assert G.cast(np.int8([-128, 127]), "float16").tolist() == [-128.0, 127.0]
    assert G.cast(np.int32([70000, -5]), np.int8).tolist() == [127, -5]
    assert G.cast(np.uint32([2**32 - 1, 5]), np.int32).tolist() == [2**31 - 1, 5]
    assert G.cast(np.int64([-1, 300]), np.uint8).tolist() == [0, 255]
    assert G.round_mode("rint") == "CAST_RINT" and G.round_mode(4) == "CAST_ROUND"
    with pytest.raises(ValueError):
        G.round_mode("CAST_SIDEWAYS")


def test_rounded_ops_take_python_scalars_as_nearest_values():
    a = np.array([1.0, 3.0], F64)
    assert G.rounded_mul(a, 0.3).tolist() == [0.3, 0.3 * 3.0]          # T(0.3) for T = double is 0.3 itself
    assert G.rounded_add(a, 0.25).tolist() == [1.25, 3.25]
    h = np.array([1.0], F16)
    assert G.rounded_mul(h, 0.1).tolist() == [float(np.float16(0.1))]


# ------------------------------------------------------------------------------------------
# HardSigmoidGrad
# ------------------------------------------------------------------------------------------

HS_FLAVOURS = {
    "pytorch": G.hard_sigmoid_grad_pytorch,
    "tbe": G.hard_sigmoid_grad_legacy_tbe,
    "experimental": G.hard_sigmoid_grad,
    "main950": G.hard_sigmoid_grad_main950,
}


def passes(fn, dt, xv) -> int:
    x = np.array([xv], dt)
    return int(fn(np.ones(1, dt), x)[0] != 0)


@pytest.mark.parametrize("xv, expect", [
    # x            pytorch tbe experimental(0.16666666f) main950(1/6f)   (cann_facts §9 table, fp32)
    (-3.0000002, (0, 0, 0, 0)),
    (-3.0, (0, 0, 1, 0)),
    (-2.9999998, (1, 1, 1, 1)),
    (2.9999998, (1, 1, 1, 0)),
    (3.0, (0, 0, 0, 0)),
])
def test_fp32_boundary_table(xv, expect):
    assert tuple(passes(fn, F32, xv) for fn in HS_FLAVOURS.values()) == expect


def test_fp16_and_bf16_boundaries():
    assert [passes(fn, F16, -3.0) for fn in HS_FLAVOURS.values()] == [0, 0, 0, 0]  # native half path blocks -3
    # the same fp16 x through the fp32 path with alpha 0.16666666f passes (§9 "fp32 path" column)
    assert passes(G.hard_sigmoid_grad, F32, float(np.float16(-3.0))) == 1
    assert [passes(fn, BF, -3.0) for fn in HS_FLAVOURS.values()] == [0, 0, 1, 0]
    for dt, xs in ((F16, (2.998046875, -2.998046875, 3.001953125, -3.001953125, 3.0)),
                   (BF, (2.984375, -2.984375, 3.015625, -3.015625, 3.0))):
        for xv in xs:
            want = passes(G.hard_sigmoid_grad_pytorch, dt, xv)
            assert [passes(fn, dt, xv) for fn in HS_FLAVOURS.values()] == [want] * 4, (dt, xv)


def test_fp32_values_at_the_boundary():
    g = np.array([1.0, 1.0], F32)
    out = G.hard_sigmoid_grad(g, np.array([-3.0, 0.0], F32))
    assert out.tolist() == [float(np.float32(0.16666666))] * 2
    assert G.hard_sigmoid_grad_main950(g, np.array([0.0, 1.0], F32)).tolist() == [float(np.float32(1) / 6)] * 2


def test_legacy_tbe_mask_is_pytorch_mask_exhaustive_fp16():
    x = all_patterns(F16)
    g = np.ones_like(x)
    m_tbe = G.hard_sigmoid_grad_legacy_tbe(g, x) != 0
    m_pt = G.hard_sigmoid_grad_pytorch(g, x) != 0
    assert np.array_equal(m_tbe, m_pt)
    assert m_pt.sum() == np.sum((x.astype(F64) > -3) & (x.astype(F64) < 3))


def finite(dt):
    v = all_patterns(dt)
    return v[np.isfinite(v.astype(F64))]


def test_fp16_value_differences_exhaustive():
    g = finite(F16)
    assert g.size == 63488
    x = np.zeros_like(g)
    pt = G.hard_sigmoid_grad_pytorch(g, x)
    native = G.hard_sigmoid_grad(g, x)
    # published figure (cann_facts §9): 19,492 of 63,488
    assert int(np.sum(bits(native) != bits(pt))) == 19492
    assert int(np.sum(bits(G.hard_sigmoid_grad_legacy_tbe(g, x)) != bits(pt))) == 19492
    assert_same_bits(G.hard_sigmoid_grad_main950(g, x), pt)
    # independent check of the native value: half(g * half(alpha)) via float64 and numpy's rounding
    a16 = np.float16(np.float32(0.16666666))
    assert float(a16) == 0.1666259765625
    assert_same_bits(native, (g.astype(F64) * float(a16)).astype(F16))


def test_bf16_value_differences_exhaustive():
    g = finite(BF)
    assert g.size == 65280
    x = np.zeros_like(g)
    pt = G.hard_sigmoid_grad_pytorch(g, x)
    main = G.hard_sigmoid_grad_main950(g, x)
    # where does the fp32 product g * (1/6f) sit exactly halfway between two bf16 values?
    prod = (g.astype(F64) * float(G.ALPHA_MAIN950)).astype(F32)  # exact product, one rounding
    u = bits(prod)
    tie = (u & 0xFFFF) == 0x8000
    # cann_facts §9 says "86 patterns land exactly on a bf16 tie and differ by 1 ulp". 86 is the
    # number of ties; half-away and half-even only disagree on the ties whose lower bf16
    # neighbour is even (at an odd one both round up), which leaves 44.
    assert int(tie.sum()) == 86
    differ = bits(main) != bits(pt)
    assert np.array_equal(differ, tie & (((u >> 16) & 1) == 0))
    assert int(differ.sum()) == 44
    # the experimental kernel (alpha 0.16666666f) differs from PyTorch on the very same patterns
    assert np.array_equal(bits(G.hard_sigmoid_grad(g, x)) != bits(pt), differ)


def py_f32(v: float) -> float:
    """Round a Python float to float32 (C cast, nearest-even); overflow means +-inf."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


@settings(max_examples=60, deadline=None)
@given(
    data=hnp.arrays(np.float32, st.integers(1, 40), elements=st.floats(width=32, allow_nan=True)),
    grads=st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=40, max_size=40),
    alpha=st.one_of(st.just(0.16666666), st.floats(-4, 4, width=32)),
    beta=st.one_of(st.just(0.5), st.floats(-2, 2, width=32)),
)
def test_fp32_matches_scalar_formula(data, grads, alpha, beta):
    g = np.array(grads[: data.size], F32)
    out = G.hard_sigmoid_grad(g, data, alpha=alpha, beta=beta)
    a, b = py_f32(alpha), py_f32(beta)
    for gi, xi, oi in zip(g.tolist(), data.tolist(), out.tolist(), strict=True):
        if math.isnan(xi):
            want = 0.0
        else:
            tmp = py_f32(py_f32(xi * a) + b)
            want = py_f32(gi * a) if (tmp > 0 and tmp < 1) else 0.0
        assert oi == want or (math.isnan(oi) and math.isnan(want)), (gi, xi, oi, want)


def test_hs_dtypes_shapes_and_copies():
    g = np.ones(4, F32)
    x = np.zeros(4, F32)
    for fn in HS_FLAVOURS.values():
        out = fn(g, x)
        assert out.dtype == F32 and not np.shares_memory(out, g) and not np.shares_memory(out, x)
        with pytest.raises(TypeError):
            fn(g, x.astype(F16))
        with pytest.raises(ValueError):
            fn(g, np.zeros(5, F32))
        with pytest.raises(TypeError):
            fn(g.astype(np.int32), x.astype(np.int32))
    with pytest.raises(ValueError):
        G.hard_sigmoid_grad_main950(g, x, alpha=0.0)
    for dt in (F16, BF):
        assert G.hard_sigmoid_grad(g.astype(dt), x.astype(dt)).dtype == dt
        nan_x = np.full(4, np.nan, dt)
        assert not G.hard_sigmoid_grad(g.astype(dt), nan_x).astype(F32).any()


# ------------------------------------------------------------------------------------------
# ThresholdGradV2D / ThresholdBackward
# ------------------------------------------------------------------------------------------

TH_FLAVOURS = {
    "experimental": G.threshold_grad_v2_d,
    "main950": G.threshold_grad_v2_d_main950,
    "tbe_vcopy": lambda g, f, t: G.threshold_grad_v2_d_legacy_tbe(g, f, t, vcopy=True),
    "tbe_vcmpsel": lambda g, f, t: G.threshold_grad_v2_d_legacy_tbe(g, f, t, vcopy=False),
    "pytorch": G.threshold_backward_pytorch,
}


@pytest.mark.parametrize("dt", [F32, F16, BF])
@pytest.mark.parametrize("name", list(TH_FLAVOURS))
def test_threshold_seed_sample(dt, name):
    f = np.array([0.2, 1.2, 2.2, 3.2], dt)
    g = np.array([4.5, 4.4, 4.3, 4.2], dt)
    out = TH_FLAVOURS[name](g, f, 1.0)
    want = np.array([0.0, 4.4, 4.3, 4.2], dt)
    assert_same_bits(out, want)


def test_fp16_threshold_rounded_to_half():
    assert float(np.float16(0.10002)) == pytest.approx(0.10003662, abs=1e-8)
    f = np.array([np.float16(0.10002)], F16)
    g = np.array([2.0], F16)
    assert G.threshold_grad_v2_d(g, f, 0.10002).tolist() == [0.0]  # half(x) > half(thr): false
    assert G.threshold_backward_pytorch(g, f, 0.10002).tolist() == [2.0]
    assert G.threshold_grad_v2_d_main950(g, f, 0.10002).tolist() == [2.0]


def test_int32_precision_loss():
    g = np.array([2**24 + 1, 2**31 - 1, -(2**24 + 3), 5], np.int32)
    f = np.array([5, 5, 5, 2**24 + 1], np.int32)
    thr = float(2**24)
    exp = G.threshold_grad_v2_d(g, f, thr)
    # grads round to fp32 (RINT) and truncate back (2^31 saturates); feature 2^24+1 -> 2^24 is not > 2^24
    assert exp.tolist() == [0, 0, 0, 0]
    exp = G.threshold_grad_v2_d(g, f, 1.0)
    assert exp.dtype == np.int32
    assert exp.tolist() == [2**24, 2**31 - 1, -(2**24 + 4), 5]
    assert G.threshold_grad_v2_d_main950(g, f, 1.0).tolist() == [2**24, 2**31 - 1, -(2**24 + 4), 5]
    assert G.threshold_backward_pytorch(g, f, 1.0).tolist() == g.tolist()
    assert G.threshold_backward_pytorch(g, f, thr).tolist() == [0, 0, 0, 5]


@pytest.mark.parametrize("dt", [F32, F16, BF])
def test_nan_feature(dt):
    f = np.array([np.nan, 2.0], dt)
    g = np.array([3.0, 3.0], dt)
    got = {name: fn(g, f, 1.0).astype(F64).tolist() for name, fn in TH_FLAVOURS.items()}
    assert got == {"experimental": [0.0, 3.0], "main950": [3.0, 3.0], "tbe_vcopy": [3.0, 3.0],
                   "tbe_vcmpsel": [0.0, 3.0], "pytorch": [3.0, 3.0]}


@pytest.mark.parametrize("dt", [np.int32, np.int8])
def test_integer_fractional_threshold(dt):
    f = np.array([0, 1, -1], dt)
    g = np.array([7, 7, 7], dt)
    assert G.threshold_grad_v2_d(g, f, -0.5).tolist() == [7, 7, 0]  # 0.0 > -0.5
    assert G.threshold_grad_v2_d_main950(g, f, -0.5).tolist() == [7, 7, 0]
    assert G.threshold_backward_pytorch(g, f, -0.5).tolist() == [0, 7, 0]  # thr -> int 0


def test_pytorch_integer_threshold_out_of_range():
    with pytest.raises(ValueError):
        G.threshold_backward_pytorch(np.ones(2, np.uint8), np.ones(2, np.uint8), -0.5)
    with pytest.raises(ValueError):
        G.threshold_backward_pytorch(np.ones(2, np.int8), np.ones(2, np.int8), float("nan"))


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32])
def test_integer_threshold_random(dt):
    info = np.iinfo(dt)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    f = RNG.integers(lo, hi, 3000, endpoint=True).astype(dt)
    g = RNG.integers(lo, hi, 3000, endpoint=True).astype(dt)
    want = np.where(f.astype(np.int64) > 3, g, 0).astype(dt)
    for name, fn in TH_FLAVOURS.items():
        got = fn(g, f, 3.5 if name != "pytorch" else 3)
        assert got.dtype == np.dtype(dt)
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_threshold_broadcast_and_errors():
    g = np.arange(6, dtype=F32).reshape(2, 3)
    f = np.array([0.0, 2.0, 5.0], F32)
    np.testing.assert_array_equal(G.threshold_grad_v2_d_main950(g, f, 1.0), [[0, 1, 2], [0, 4, 5]])
    with pytest.raises(ValueError):
        G.threshold_grad_v2_d(g, f, 1.0)  # the experimental tiling has no broadcast
    with pytest.raises(TypeError):
        G.threshold_grad_v2_d(g, g.astype(F16), 1.0)
    with pytest.raises(TypeError):
        G.threshold_grad_v2_d(np.ones(3, np.int64), np.ones(3, np.int64), 1.0)


def test_tbe_without_fp32_vcmpsel_compares_in_half():
    f = np.array([1.0002], F32)  # half(1.0002) == 1.0, which is not > 1
    g = np.array([1.0001], F32)
    assert G.threshold_grad_v2_d_legacy_tbe(g, f, 1.0, vcopy=False).tolist() == [float(np.float32(1.0001))]
    assert G.threshold_grad_v2_d_legacy_tbe(g, f, 1.0, vcopy=False, fp32_vcmpsel=False).tolist() == [0.0]
    g2 = np.array([1.0001], F32)
    out = G.threshold_grad_v2_d_legacy_tbe(g2, np.array([5.0], F32), 1.0, fp32_vcmpsel=False)
    assert out.tolist() == [1.0]  # the grad went through half


# ------------------------------------------------------------------------------------------
# ReluGrad
# ------------------------------------------------------------------------------------------

def test_relu_grad_select_semantics():
    g = np.array([np.inf, np.nan, -np.inf, 5.0, np.inf], F32)
    f = np.array([-1.0, 0.0, -2.0, 1.0, 1.0], F32)
    for dt in (F32, F16, BF):
        out = G.relu_grad(g.astype(dt), f.astype(dt))
        assert bits(out.astype(F32))[:3].tolist() == [0, 0, 0]  # exactly +0 from the Select, even for inf/NaN grads
        assert out.astype(F32)[3:].tolist() == [5.0, np.inf]
        # NaN feature: NaN <= 0 is false, so the gradient passes (PyTorch semantics)
        assert G.relu_grad(np.array([2.0], dt), np.array([np.nan], dt)).astype(F32).tolist() == [2.0]


def test_relu_grad_bf16_mask():
    g = RNG.standard_normal(5000).astype(BF)
    f = RNG.standard_normal(5000).astype(BF)
    want = np.where(f.astype(F32) > 0, g.astype(F32), 0).astype(BF)
    got = G.relu_grad(g, f)
    np.testing.assert_array_equal(got.astype(F32), want.astype(F32))
    # a positive subnormal feature is > 0: the whole gradient passes
    assert G.relu_grad(np.array([1.0], BF), np.array([2.0**-130], BF)).astype(F32).tolist() == [1.0]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int64])
def test_relu_grad_ints(dt):
    info = np.iinfo(dt)
    f = RNG.integers(info.min, info.max, 5000, endpoint=True, dtype=dt)
    g = RNG.integers(info.min, info.max, 5000, endpoint=True, dtype=dt)
    f[:3] = [0, 1, info.min]
    got = G.relu_grad(g, f)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_array_equal(got, np.where(f > 0, g, 0).astype(dt))


def test_relu_grad_int32_goes_through_fp32():
    g = np.array([2**24 + 1, 7, -(2**31), 2**31 - 1], np.int32)
    f = np.array([1, -1, 5, 5], np.int32)
    got = G.relu_grad(g, f)
    # fp32 has 24 mantissa bits: 2^24+1 rounds to 2^24 on the way in; 2^31-1 rounds up to 2^31 and saturates
    assert got.tolist() == [2**24, 0, -(2**31), 2**31 - 1]


def test_relu_grad_errors():
    with pytest.raises(TypeError):
        G.relu_grad(np.ones(2, F64), np.ones(2, F64))
    with pytest.raises(ValueError):
        G.relu_grad(np.ones(2, F32), np.ones(3, F32))


def test_narrowing_quiets_signalling_nans_like_ieee():
    """IEEE 754: a signalling NaN converted to a narrower float becomes quiet, keeping sign and payload top;
    the oracle and the simulator's Cast agree on every such bit pattern."""
    bits32 = np.array([0x7F800001, 0xFF800001, 0x7FA00000, 0x7FBFFFFF, 0x7FC00001], np.uint32)
    out = G.cast(bits32.view(np.float32), np.float16, "CAST_RINT").view(np.uint16)
    assert [hex(v) for v in out] == ["0x7e00", "0xfe00", "0x7f00", "0x7fff", "0x7e00"]
    rng = np.random.default_rng(7)
    nans = (rng.integers(0, 2**22, 50_000, dtype=np.uint32) | np.uint32(0x7F800001)).view(np.float32)
    assert np.array_equal(G.cast(nans, np.float16, "CAST_RINT").view(np.uint16),
                          N.cast(nans, np.float16, "CAST_RINT").view(np.uint16))

"""The simulator's own numerics (``ascend_lab.ascendc.numerics``): ``Cast`` in every RoundMode against
brute-force references written here (a sorted table of every 16-bit float, exact fractions, exact integer
arithmetic), never against the oracle ``golden``, whose cast is a separate, smaller implementation
(tests/test_golden.py compares the two).

Facts: AscendC ``RoundMode`` (sources/ascendc_facts.md §1.6, cann_facts.md §10): RINT ties to even,
ROUND ties away from zero, TRUNC/FLOOR/CEIL directed, ODD round-to-odd (float -> half only); float -> int
saturates with NaN -> 0; narrowing floats follow IEEE overflow.
"""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_bits_equal, bits

from ascend_lab.ascendc import RoundMode
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
# An independent reference for float -> 16-bit float rounding: a sorted table of every finite
# value of the target format, searched for the two neighbours of each input.
# ------------------------------------------------------------------------------------------

class TableRounder:
    def __init__(self, dt: np.dtype, sentinel: float):
        pat = np.arange(65536, dtype=np.uint16)
        with np.errstate(invalid="ignore"):
            vals = pat.view(dt).astype(F64)
        keep = np.isfinite(vals) & ~((vals == 0) & (pat >= 0x8000))  # one zero (+0)
        order = np.argsort(vals[keep], kind="stable")
        self.vals = np.concatenate([[-sentinel], vals[keep][order], [sentinel]])
        self.pats = np.concatenate([[0xFC00 if dt == F16 else 0xFF80], pat[keep][order],
                                    [0x7C00 if dt == F16 else 0x7F80]]).astype(np.uint16)
        self.sentinel = sentinel
        self.dt = dt

    def __call__(self, x64: np.ndarray, mode: str) -> np.ndarray:
        x64 = np.asarray(x64, F64)
        assert np.all(np.abs(x64) < self.sentinel)
        i = np.searchsorted(self.vals, x64, side="right") - 1
        lo, hi = self.vals[i], self.vals[i + 1]
        plo, phi = self.pats[i], self.pats[i + 1]
        exact = lo == x64
        mid = (lo + hi) / 2
        lo_even = (plo & 1) == 0
        if mode == "CAST_RINT":
            pick = np.where(x64 < mid, plo, np.where(x64 > mid, phi, np.where(lo_even, plo, phi)))
        elif mode == "CAST_ROUND":
            pick = np.where(x64 < mid, plo, np.where(x64 > mid, phi, np.where(x64 > 0, phi, plo)))
        elif mode == "CAST_FLOOR":
            pick = plo
        elif mode == "CAST_CEIL":
            pick = phi
        elif mode == "CAST_TRUNC":
            pick = np.where(x64 > 0, plo, phi)
        elif mode == "CAST_ODD":
            pick = np.where(lo_even, phi, plo)
        pick = np.where(exact, plo, pick)
        # a zero result carries the sign of the input (IEEE)
        zero = (pick & 0x7FFF) == 0
        pick = np.where(zero & np.signbit(x64), pick | 0x8000, pick)
        return pick.astype(np.uint16).view(self.dt)


REF_F16 = TableRounder(F16, 65536.0)
REF_BF16 = TableRounder(BF, 2.0**128)


def fp32_probe_values() -> np.ndarray:
    """Every upper-16-bit pattern combined with lower halves around the fp16 and bf16 rounding points."""
    lows = [0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000,
            0x7FFF, 0x8000, 0x8001, 0xFFFF, *RNG.integers(0, 65536, 4).tolist()]
    hi = np.arange(65536, dtype=np.uint32) << 16
    u = (hi[:, None] | np.array(lows, np.uint32)[None, :]).ravel()
    return u.view(F32)


# ------------------------------------------------------------------------------------------
# cast
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [F16, BF])
@pytest.mark.parametrize("mode", ["CAST_NONE", *MODES5])
def test_16bit_to_fp32_and_back_is_exact(dt, mode):
    x = all_patterns(dt)
    wide = N.cast(x, "float32", "CAST_NONE")
    assert wide.dtype == F32
    assert_same_bits(wide, x.astype(F32))  # widening is exact
    back = N.cast(wide, dt, mode)
    nan = np.isnan(x.astype(F64))
    assert np.array_equal(bits(back)[~nan], bits(x)[~nan])
    assert np.isnan(back[nan].astype(F64)).all()


@pytest.mark.parametrize("mode", MODES6)
def test_fp32_to_fp16_matches_table_reference(mode):
    x = fp32_probe_values()
    x = x[np.isfinite(x) & (np.abs(x) < 65536)]
    assert_same_bits(N.cast(x, "float16", mode), REF_F16(x.astype(F64), mode))


@pytest.mark.parametrize("mode", MODES5)
def test_fp32_to_bf16_matches_table_reference(mode):
    x = fp32_probe_values()
    x = x[np.isfinite(x) & (np.abs(x.astype(F64)) < 2.0**128)]
    assert_same_bits(N.cast(x, "bfloat16", mode), REF_BF16(x.astype(F64), mode))


@pytest.mark.parametrize("mode", MODES6)
def test_float64_to_fp16_has_no_double_rounding(mode):
    # midpoints between neighbouring halves, nudged by far less than an fp32 ulp: a naive
    # float64 -> float32 -> float16 conversion would round these twice and get ties wrong
    h = all_patterns(F16).astype(F64)
    h = np.unique(h[np.isfinite(h) & (np.abs(h) < 65504)])
    mid = (h[:-1] + h[1:]) / 2
    rel = np.abs(mid) * 2.0**-40 + 2.0**-80
    x = np.concatenate([mid, mid + rel, mid - rel, RNG.uniform(-7e4, 7e4, 5000)])
    x = x[np.abs(x) < 65536]
    assert_same_bits(N.cast(x, "float16", mode), REF_F16(x, mode))


@pytest.mark.parametrize("mode", MODES5)
def test_float64_to_bf16_and_fp32(mode):
    b = all_patterns(BF).astype(F64)
    b = np.unique(b[np.isfinite(b)])
    mid = (b[:-1] + b[1:]) / 2
    x = np.concatenate([mid, mid * (1 + 2.0**-45), mid * (1 - 2.0**-45)])
    x = x[np.abs(x) < 2.0**127]
    assert_same_bits(N.cast(x, "bfloat16", mode), REF_BF16(x, mode))
    # float64 -> float32 on a few hundred values, checked with exact fractions
    y = np.concatenate([RNG.normal(0, 1e3, 200), np.float32(RNG.normal(0, 10, 100)).astype(F64) * (1 + 2.0**-24),
                        np.array([1 + 2.0**-24, -(1 + 2.0**-24), 1 + 3 * 2.0**-24, 2.0**-149 * 1.5])])
    got = N.cast(y, "float32", mode)
    for v, r in zip(y.tolist(), got.tolist(), strict=True):
        c = np.float32(v)
        lo = c if float(c) <= v else np.nextafter(c, np.float32(-np.inf))
        hi = np.nextafter(lo, np.float32(np.inf)) if float(lo) != v else lo
        fv, flo, fhi = Fraction(v), Fraction(float(lo)), Fraction(float(hi))
        if flo == fv:
            want = lo
        elif mode == "CAST_FLOOR":
            want = lo
        elif mode == "CAST_CEIL":
            want = hi
        elif mode == "CAST_TRUNC":
            want = lo if v > 0 else hi
        else:
            d_lo, d_hi = fv - flo, fhi - fv
            if d_lo != d_hi:
                want = lo if d_lo < d_hi else hi
            elif mode == "CAST_ROUND":
                want = hi if v > 0 else lo
            else:
                want = lo if int(bits(np.array(lo))) % 2 == 0 else hi
        assert r == float(want), (v, mode, r, float(want))


def test_fp32_to_bf16_rint_agrees_with_ml_dtypes():
    x = np.concatenate([
        RNG.standard_normal(100000).astype(F32) * np.float32(1e3),
        (RNG.integers(0, 2**32, 100000, dtype=np.uint64).astype(np.uint32)).view(F32),
        # exact ties: lower half 0x8000 with even and odd upper halves
        ((np.arange(0, 65536, dtype=np.uint32) << 16) | 0x8000).view(F32),
    ])
    x = x[np.isfinite(x)]
    assert_same_bits(N.cast(x, "bfloat16", "CAST_RINT"), x.astype(BF))


def test_cast_round_differs_from_rint_only_on_ties():
    for dt, ref_mid in ((BF, 0x8000), (F16, None)):
        x = fp32_probe_values()
        x = x[np.isfinite(x) & (np.abs(x) < 60000)]
        rint = N.cast(x, dt, "CAST_RINT")
        rnd = N.cast(x, dt, "CAST_ROUND")
        differ = bits(rint) != bits(rnd)
        if ref_mid is not None:
            u = bits(x)
            tie_even = ((u & 0xFFFF) == ref_mid) & (((u >> 16) & 1) == 0)
            assert np.array_equal(differ, tie_even & ((u & 0x7F800000) != 0x7F800000))
        # wherever they differ, x is exactly halfway between the two results and ROUND is the larger magnitude
        a, b = rint[differ].astype(F64), rnd[differ].astype(F64)
        assert differ.sum() > 1000
        assert np.array_equal((a + b) / 2, x[differ].astype(F64))
        assert np.all(np.abs(b) > np.abs(a))


def test_float_overflow_follows_ieee():
    x = np.array([70000.0, -70000.0, 65519.0, 65520.0, -65520.0, np.inf, -np.inf, np.nan], F32)
    want = {
        "CAST_RINT": [np.inf, -np.inf, 65504, np.inf, -np.inf, np.inf, -np.inf, np.nan],
        "CAST_ROUND": [np.inf, -np.inf, 65504, np.inf, -np.inf, np.inf, -np.inf, np.nan],
        "CAST_FLOOR": [65504, -np.inf, 65504, 65504, -np.inf, np.inf, -np.inf, np.nan],
        "CAST_CEIL": [np.inf, -65504, np.inf, np.inf, -65504, np.inf, -np.inf, np.nan],
        "CAST_TRUNC": [65504, -65504, 65504, 65504, -65504, np.inf, -np.inf, np.nan],
        "CAST_ODD": [65504, -65504, 65504, 65504, -65504, np.inf, -np.inf, np.nan],
    }
    for mode, w in want.items():
        np.testing.assert_array_equal(N.cast(x, "float16", mode), np.array(w, F16), err_msg=mode)
    big = np.array([3.4e38, -3.4e38], F32)  # beyond bf16 max 3.3895e38 + half ulp
    np.testing.assert_array_equal(N.cast(big, "bf16", "CAST_RINT").astype(F32), [np.inf, -np.inf])
    np.testing.assert_array_equal(N.cast(big, "bf16", "CAST_TRUNC").astype(F32),
                                  np.array([3.3895314e38, -3.3895314e38], F32))


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
        got = N.cast(x, dst, mode)
        assert got.dtype == np.dtype(dst)
        np.testing.assert_array_equal(got.astype(np.int64), np.clip(r, info.min, info.max).astype(np.int64),
                                      err_msg=mode)
    # monotone: a larger input never gives a smaller result
    order = np.argsort(x64, kind="stable")
    for mode in ("CAST_TRUNC", "CAST_FLOOR", "CAST_CEIL"):
        assert np.all(np.diff(N.cast(x[order], dst, mode).astype(np.int64)) >= 0)
    special = np.array([np.nan, np.inf, -np.inf, -0.0], src)
    for mode in refs:
        np.testing.assert_array_equal(N.cast(special, dst, mode).astype(np.int64), [0, info.max, info.min, 0])


def test_int_to_float_and_int64():
    v = np.array([2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1, -(2**31), 0, 7], np.int32)
    np.testing.assert_array_equal(N.cast(v, "float32", "CAST_NONE"),
                                  np.array([2**24, 2**24 + 4, -(2**24), 2**31, -(2**31), 0, 7], F32))
    np.testing.assert_array_equal(N.cast(v, "float32", "CAST_TRUNC")[:2], np.array([2**24, 2**24 + 2], F32))
    np.testing.assert_array_equal(N.cast(v, "float32", "CAST_CEIL")[:2], np.array([2**24 + 2, 2**24 + 4], F32))
    np.testing.assert_array_equal(N.cast(v, "float32", "CAST_ROUND")[:3],
                                  np.array([2**24 + 2, 2**24 + 4, -(2**24 + 2)], F32))
    # int64 -> float32: exact integer arithmetic as the reference
    w = np.concatenate([RNG.integers(-2**62, 2**62, 300, dtype=np.int64),
                        np.array([2**53 + 1, 2**62 + 2**38 + 1, -(2**63), 2**63 - 1, (2**24 + 1) << 30], np.int64)])
    for mode in MODES5:
        got = N.cast(w, "float32", mode)
        for iv, g in zip(w.tolist(), got.tolist(), strict=True):
            e = max(abs(iv).bit_length() - 24, 0)
            q, r = divmod(iv, 1 << e)  # floor division
            lo, hi = q << e, (q + (r != 0)) << e
            if r == 0:
                want = lo
            elif mode == "CAST_FLOOR":
                want = lo
            elif mode == "CAST_CEIL":
                want = hi
            elif mode == "CAST_TRUNC":
                want = lo if iv > 0 else hi
            elif 2 * r != (1 << e):
                want = lo if 2 * r < (1 << e) else hi
            elif mode == "CAST_ROUND":
                want = hi if iv > 0 else lo
            else:
                want = lo if (q % 2 == 0) else hi
            assert g == float(want), (iv, mode)


def test_cast_misc():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7], F32)
    np.testing.assert_array_equal(N.cast(x, "float32", "CAST_RINT"), np.array([0, 2, 2, -0.0, -2, 4], F32))
    np.testing.assert_array_equal(N.cast(x, "float32", "CAST_ROUND"), np.array([1, 2, 3, -1, -3, 4], F32))
    assert N.cast(x, "float32").tolist() == x.tolist()
    assert N.cast(np.int8([-128, 127]), "float16").tolist() == [-128.0, 127.0]
    assert N.cast(np.int32([70000, -5]), np.int8).tolist() == [127, -5]
    assert N.round_mode("rint") is RoundMode.CAST_RINT and N.round_mode(4) is RoundMode.CAST_ROUND
    with pytest.raises(ValueError):
        N.cast(x, "bfloat16", "CAST_ODD")
    with pytest.raises(ValueError):
        N.cast(x, "int32", "CAST_ODD")
    with pytest.raises(ValueError):
        N.round_mode("CAST_SIDEWAYS")


def test_round_mode_enum_and_names():
    # AscendC enum values (ascendc_facts §1.6): NONE 0, RINT 1, FLOOR 2, CEIL 3, ROUND 4, TRUNC 5, ODD 6
    assert [(m.name, int(m)) for m in RoundMode] == [
        ("CAST_NONE", 0), ("CAST_RINT", 1), ("CAST_FLOOR", 2), ("CAST_CEIL", 3), ("CAST_ROUND", 4),
        ("CAST_TRUNC", 5), ("CAST_ODD", 6)]
    for spelling in ("CAST_TRUNC", "trunc", " Trunc ", 5, np.int8(5), RoundMode.CAST_TRUNC):
        assert N.round_mode(spelling) is RoundMode.CAST_TRUNC
    for bad in (7, -1, True, 2.0, "CAST_HYBRID"):
        with pytest.raises(ValueError):
            N.round_mode(bad)


def test_scalar_operand_rounds_once():
    # T(alpha) for T = bf16: 1 + 2^-8 + 2^-30 lies just above the tie between 1 and 1 + 2^-7, so the nearest
    # bf16 is 1 + 2^-7. Through fp32 first (what ml_dtypes does with a double) it would land on the tie
    # and round to even, 1.0.
    v = 1 + 2.0**-8 + 2.0**-30
    assert float(np.float32(v)) == 1 + 2.0**-8
    got = N.scalar(BF, v)
    assert type(got) is BF.type and float(got) == 1 + 2.0**-7
    assert float(N.scalar(BF, np.float32(1 + 2.0**-8))) == 1.0          # an fp32 tie: even
    assert float(N.scalar(BF, 3)) == 3.0
    h = N.scalar(F16, 0.1)
    assert type(h) is np.float16 and float(h) == float(np.float16(0.1))
    same = np.float32(0.25)
    assert N.scalar(F32, same) is same                                 # already the type: returned as is


def test_cast_rejects_what_it_does_not_model():
    with pytest.raises(TypeError):
        N.cast(np.ones(2, np.bool_), F16)
    with pytest.raises(TypeError):
        N.cast(np.ones(2, np.complex64), F32)
    with pytest.raises(ValueError):
        N.cast(np.ones(2, F32), np.int32, "CAST_HYBRID")
    with pytest.raises(ValueError):
        N.cast(np.ones(2, np.int64), F64, "CAST_TRUNC")

"""The simulated AI Core's own numerics: AscendC ``RoundMode`` and the conversions of ``Cast``.

The simulator does not borrow its arithmetic from the test oracle (:mod:`ascend_lab.golden`): the two are
written separately so that the exhaustive cross-checks compare two implementations, and a mistake in one
cannot cancel out against the other. This module implements the whole A2 ``Cast`` table the kernels may
meet (``shared/reference/ascendc_facts.md`` §1.6, ``cann_facts.md`` §10); the oracle only the few
conversions its formulas use, in a different way (numpy/ml_dtypes ``astype`` and bit arithmetic).

How: every conversion is exact bit manipulation, or one correctly rounded numpy conversion followed by a
``nextafter`` correction towards the neighbour the mode asks for. Narrowing to fp16/bf16 from a wider
value goes through fp32 *rounded to odd*, which keeps enough bits (24 >= 11 + 2 and 24 >= 8 + 2) for the
second rounding to be exact in every mode. Nothing loops over elements.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from ..dtypes import bfloat16, to_numpy


class RoundMode(IntEnum):
    """Cast rounding: NONE (exact or RINT), RINT half-even, FLOOR, CEIL, ROUND half-away, TRUNC, ODD.
    (AscendC enum values; the hardware's CAST_HYBRID, stochastic rounding for hifloat8 on Ascend950, is not
    modelled.)"""
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_FLOOR = 2
    CAST_CEIL = 3
    CAST_ROUND = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


#: The mode names in enum order (``ROUND_MODES[m] == RoundMode(m).name``).
ROUND_MODES: tuple[str, ...] = tuple(m.name for m in RoundMode)

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BF16 = bfloat16
_FLOATS = (F16, BF16, F32, F64)
_INTS = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64))
_UINT_OF = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def round_mode(mode: Any) -> RoundMode:
    """Normalise a round mode: a :class:`RoundMode`, its int value, or a name (``"CAST_RINT"``, ``"rint"``)."""
    if isinstance(mode, RoundMode):
        return mode
    if isinstance(mode, str):
        key = mode.strip().upper()
        key = key if key.startswith("CAST_") else "CAST_" + key
        if key in ROUND_MODES:
            return RoundMode[key]
        raise ValueError(f"unknown round mode {mode!r}; use one of {', '.join(ROUND_MODES)}")
    name = getattr(mode, "name", None)
    if isinstance(name, str):
        return round_mode(name)
    if isinstance(mode, (int, np.integer)) and not isinstance(mode, bool) and 0 <= int(mode) < len(ROUND_MODES):
        return RoundMode(int(mode))
    raise ValueError(f"cannot interpret {mode!r} as a round mode; use one of {', '.join(ROUND_MODES)}")


def scalar(dtype: np.dtype, value: Any) -> Any:
    """A scalar operand converted to the instruction dtype (``T(alpha)``), nearest-even.

    This runs for every scalar instruction of every tile, so a value that already has the type is
    returned as is and numpy's own conversion (one rounding) does the rest. ml_dtypes would turn a
    Python float (a double) into a bf16 through fp32, rounding twice, so bf16 scalars go through
    :func:`cast`. The launcher silences numpy's overflow warnings, as the hardware has none."""
    if type(value) is dtype.type:
        return value
    if dtype is BF16:
        return cast(np.asarray(value), BF16, RoundMode.CAST_RINT)[()]
    return dtype.type(value)


# --- float -> narrower float ------------------------------------------------------------------------
def _apply_mode(x64: np.ndarray, r: np.ndarray, mode: RoundMode) -> np.ndarray:
    """Turn ``r`` (``x64`` rounded to nearest-even in a narrower float dtype) into ``mode``'s result.

    ``x64`` holds the exact value. Its two neighbours in the narrow format are ``r`` and
    ``nextafter(r)`` on the side of ``x64``; IEEE overflow falls out naturally (the neighbour of
    the largest finite value is inf, and round-to-nearest already gave inf past the midpoint).
    """
    if mode == RoundMode.CAST_RINT:
        return r
    r64 = r.astype(F64)
    inexact = (r64 != x64) & ~np.isnan(x64)
    went_up = r64 > x64
    inf = np.array(np.inf, r.dtype)
    lo = np.where(went_up, np.nextafter(r, -inf), r)
    hi = np.where(went_up, r, np.nextafter(r, inf))
    positive = x64 > 0
    if mode == RoundMode.CAST_FLOOR:
        pick = lo
    elif mode == RoundMode.CAST_CEIL:
        pick = hi
    elif mode == RoundMode.CAST_TRUNC:
        pick = np.where(positive, lo, hi)
    elif mode == RoundMode.CAST_ROUND:  # ties away from zero; everything else is already nearest
        tie = (lo.astype(F64) + hi.astype(F64)) * 0.5 == x64
        pick = np.where(tie, np.where(positive, hi, lo), r)
    elif mode == RoundMode.CAST_ODD:  # inexact -> the neighbour whose last significand bit is 1
        pick = np.where(lo.view(_UINT_OF[r.dtype.itemsize]) & 1, lo, hi)
    else:
        raise ValueError(f"{mode.name} is not a rounding of a float to a narrower float")
    return np.where(inexact, pick, r).astype(r.dtype)


def _f64_to_f32(x64: np.ndarray, mode: RoundMode) -> np.ndarray:
    return _apply_mode(x64, x64.astype(F32), mode)          # astype: IEEE RNE, overflow -> inf


def _f32_to_bf16(x32: np.ndarray, mode: RoundMode) -> np.ndarray:
    """fp32 -> bf16 on the bit pattern: keep the top 16 bits, round the magnitude by ``mode``."""
    u = np.ascontiguousarray(x32, dtype=F32).view(np.uint32)
    sign = (u >> 16) & np.uint32(0x8000)
    mag = u & np.uint32(0x7FFFFFFF)
    top = mag >> 16
    rest = mag & np.uint32(0xFFFF)
    inexact = rest != 0
    negative = sign != 0
    if mode == RoundMode.CAST_RINT:
        up = (rest > 0x8000) | ((rest == 0x8000) & ((top & 1) == 1))
    elif mode == RoundMode.CAST_ROUND:
        up = rest >= 0x8000
    elif mode == RoundMode.CAST_TRUNC:
        up = np.zeros(u.shape, bool)
    elif mode == RoundMode.CAST_FLOOR:
        up = inexact & negative
    elif mode == RoundMode.CAST_CEIL:
        up = inexact & ~negative
    elif mode == RoundMode.CAST_ODD:
        up = np.zeros(u.shape, bool)
        top = top | inexact.astype(np.uint32)
    else:
        raise ValueError(f"{mode.name} is not a rounding of fp32 to bf16")
    out = top + up.astype(np.uint32)  # a carry into the exponent is the correct result (up to inf)
    nan = mag > 0x7F800000
    out = np.where(nan, (mag >> 16) | 0x0040, out)  # NaN stays a (quiet) NaN
    return (out | sign).astype(np.uint16).view(BF16).reshape(np.shape(x32))


def _to_float_from_f64(x64: np.ndarray, dst: np.dtype, mode: RoundMode, exact_f32: bool) -> np.ndarray:
    """Round exact float64 values to ``dst`` (fp32, fp16 or bf16).

    For fp16/bf16 the value is first rounded to fp32 *to odd*, which keeps enough information
    (24 >= 11 + 2 and 24 >= 8 + 2 bits) for every mode of the second rounding to be exact.
    """
    if dst == F32:
        return _f64_to_f32(x64, mode)
    x32 = x64.astype(F32) if exact_f32 else _f64_to_f32(x64, RoundMode.CAST_ODD)
    if dst == BF16:
        return _f32_to_bf16(x32, mode)
    return _apply_mode(x32.astype(F64), x32.astype(F16), mode)   # numpy fp32 -> fp16 is IEEE RNE


def _int64_to_f64_odd(v: np.ndarray) -> np.ndarray:
    """int64 -> float64 rounded to odd (exact TwoSum of the high and low 32-bit halves)."""
    a = (v >> 32).astype(F64) * 2.0**32
    b = (v & np.int64(0xFFFFFFFF)).astype(F64)
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    step = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where((err != 0) & even, step, s)


# --- float -> int -----------------------------------------------------------------------------------
def _round_to_integral(x64: np.ndarray, mode: RoundMode) -> np.ndarray:
    if mode in (RoundMode.CAST_NONE, RoundMode.CAST_RINT):
        return np.rint(x64)
    if mode == RoundMode.CAST_FLOOR:
        return np.floor(x64)
    if mode == RoundMode.CAST_CEIL:
        return np.ceil(x64)
    if mode == RoundMode.CAST_TRUNC:
        return np.trunc(x64)
    if mode == RoundMode.CAST_ROUND:
        t = np.trunc(x64)
        return np.where(np.abs(x64 - t) >= 0.5, t + np.sign(x64), t)
    raise ValueError(f"{mode.name} is not defined for a conversion to an integral value")


def _saturate_to_int(r64: np.ndarray, dst: np.dtype) -> np.ndarray:
    """Integral float64 values -> integer dtype, saturating; NaN -> 0 (AscendC default, cann_facts §10)."""
    info = np.iinfo(dst)
    top = float(int(info.max) + 1)  # a power of two, exact in float64
    bottom = float(int(info.min))
    high = r64 >= top
    low = r64 < bottom
    bad = high | low | np.isnan(r64)
    out = np.where(bad, 0.0, r64).astype(dst)
    out = np.where(high, info.max, out)
    out = np.where(low, info.min, out)
    return out.astype(dst)


def cast(x: np.ndarray, dst_dtype: Any, mode: Any = RoundMode.CAST_NONE) -> np.ndarray:
    """AscendC ``Cast``: convert ``x`` to ``dst_dtype`` with a :class:`RoundMode` (cann_facts §10).

    * ``CAST_NONE`` is exact when the conversion is lossless and ``CAST_RINT`` when lossy, which
      is the same as always using RINT (RINT of a representable value is that value). The one
      exception is float -> same float dtype: NONE copies, the other modes round to an integral
      value (the ``float->float {R,F,C,R,T}`` pair of the A2 table).
    * ``CAST_RINT`` ties to even, ``CAST_ROUND`` ties away from zero, ``CAST_TRUNC`` toward 0,
      ``CAST_FLOOR``/``CAST_CEIL`` toward -inf/+inf, ``CAST_ODD`` round-to-odd (to float16 only).
    * float -> int saturates to the integer range and maps NaN to 0; int -> narrower int
      saturates too (§10 "overflow saturates by default").
    * float -> narrower float follows IEEE (Inf/NaN mode, the default and on 950 the only
      overflow mode of A2/A3/950): finite overflow rounds to inf or to the largest finite value
      as the mode directs; NaN stays NaN.
    """
    x = np.asarray(x)
    dst = to_numpy(dst_dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf handling is explicit below
        return _cast(x, dst, round_mode(mode))


def _cast(x: np.ndarray, dst: np.dtype, mode: RoundMode) -> np.ndarray:
    src = x.dtype
    if src == np.bool_ or dst == np.bool_ or src.kind == "c" or dst.kind == "c":
        raise TypeError(f"cast {src} -> {dst} is not modelled (bool and complex casts are not kernel casts)")
    if src not in _FLOATS + _INTS:
        raise TypeError(f"cast from {src} is not modelled; sources: {', '.join(map(str, _FLOATS + _INTS))}")
    if mode == RoundMode.CAST_ODD and not (src in _FLOATS and src != F16 and dst == F16):
        raise ValueError(f"CAST_ODD is only defined for float -> float16, not {src} -> {dst}")

    if src in _FLOATS and dst == src:
        if mode == RoundMode.CAST_NONE:
            return x.copy()
        return _round_to_integral(x.astype(F64), mode).astype(dst)
    if src in _INTS and dst in _INTS:
        info = np.iinfo(dst)
        return np.clip(x, max(info.min, np.iinfo(src).min), min(info.max, np.iinfo(src).max)).astype(dst)
    if dst in _INTS:
        return _saturate_to_int(_round_to_integral(x.astype(F64), mode), dst)
    # -> float
    rmode = RoundMode.CAST_RINT if mode == RoundMode.CAST_NONE else mode
    if src == np.int64:
        x64, exact_f32 = _int64_to_f64_odd(x), False
        if dst == F64:
            if rmode != RoundMode.CAST_RINT:
                raise ValueError("int64 -> float64 is modelled with CAST_NONE/CAST_RINT only")
            return x.astype(F64)
    else:
        x64 = x.astype(F64)  # exact for every other source
        exact_f32 = src in (F16, BF16, F32) or (src in _INTS and src.itemsize <= 2)
        if dst == F64:
            return x64
    if src in (F16, BF16) and dst == F32:
        return x.astype(F32)  # lossless widening
    return _to_float_from_f64(x64, dst, rmode, exact_f32)

"""The oracles' rounding: AscendC ``Cast`` per ``RoundMode`` and one-rounding ``Muls``/``Adds``/``Mul``/``Add`` in the
operands' own dtype -- written differently from the simulator's :mod:`ascend_lab.ascendc.numerics` on purpose."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import bfloat16, to_numpy

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BF16 = bfloat16


#: AscendC ``RoundMode`` names in enum order (CAST_NONE = 0, ...; §10). CAST_HYBRID is not modelled.
ROUND_MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD")

_FLOATS = (F16, BF16, F32, F64)
_INTS = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64))
#: Sources whose every value is exact in fp32 (so one rounding of the fp32 value is the whole conversion).
_EXACT_IN_F32 = (F16, BF16, F32) + tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))
_FLOAT_TO_INT = ("CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_TRUNC", "CAST_FLOOR", "CAST_CEIL")
#: The component type of each complex dtype a real value can be cast to (real part, imaginary part +0).
_COMPLEX_PART = {np.dtype(np.complex64): F32, np.dtype(np.complex128): F64}


# --------------------------------------------------------------------------------------------
# Rounding helpers
#
# The simulator has its own implementation of ``Cast`` (``ascend_lab.ascendc.numerics``); this one is
# written differently on purpose and covers only what the oracles, the tests and the book use, so that
# the cross-checks compare two implementations: correctly rounded numpy/ml_dtypes ``astype`` for
# nearest-even, integer bias-and-shift on the fp32 bits for bf16, numpy's rounding functions and a clip
# for float -> int. Anything else raises ValueError.
# --------------------------------------------------------------------------------------------

def round_mode(mode: Any) -> str:
    """Normalise a round mode: ``"CAST_RINT"``, ``"rint"``, the enum value ``1`` or an enum member."""
    if isinstance(mode, str):
        key = mode.strip().upper()
        key = key if key.startswith("CAST_") else "CAST_" + key
        if key in ROUND_MODES:
            return key
        raise ValueError(f"unknown round mode {mode!r}; use one of {', '.join(ROUND_MODES)}")
    name = getattr(mode, "name", None)
    if isinstance(name, str):
        return round_mode(name)
    if isinstance(mode, (int, np.integer)) and not isinstance(mode, bool):
        if 0 <= int(mode) < len(ROUND_MODES):
            return ROUND_MODES[int(mode)]
    raise ValueError(f"cannot interpret {mode!r} as a round mode; use one of {', '.join(ROUND_MODES)}")


def _unsupported(src: np.dtype, dst: np.dtype, mode: str, why: str) -> ValueError:
    return ValueError(f"golden.cast does not model {src} -> {dst} with {mode}: {why} (the oracle's cast covers "
                      "only the conversions its formulas use; the simulator's Cast models the whole table)")


def _to_bf16(x32: np.ndarray, mode: str) -> np.ndarray:
    """fp32 -> bf16 by adding a rounding bias to the magnitude's bits and dropping the low 16.

    Bias 0x7FFF + (bit 16) rounds half to even (RINT), 0x8000 half away from zero (ROUND), 0 toward
    zero (TRUNC) and 0xFFFF away from zero (FLOOR of a negative, CEIL of a positive). A carry into the
    exponent is the right answer, up to infinity; NaN keeps its top bits and is made quiet."""
    u = np.ascontiguousarray(x32, F32).view(np.uint32).astype(np.uint64)
    mag, sign = u & 0x7FFFFFFF, (u >> 16) & 0x8000
    negative = sign != 0
    if mode in ("CAST_NONE", "CAST_RINT"):
        bias = 0x7FFF + ((mag >> 16) & 1)
    elif mode == "CAST_ROUND":
        bias = np.uint64(0x8000)
    elif mode == "CAST_TRUNC":
        bias = np.uint64(0)
    elif mode in ("CAST_FLOOR", "CAST_CEIL"):
        away = negative if mode == "CAST_FLOOR" else ~negative
        bias = np.where(away, np.uint64(0xFFFF), np.uint64(0))
    else:
        raise _unsupported(x32.dtype, BF16, mode, "bf16 is rounded with NONE, RINT, ROUND, TRUNC, FLOOR or CEIL")
    top = np.where(mag > 0x7F800000, (mag >> 16) | 0x40, (mag + bias) >> 16)
    return (top | sign).astype(np.uint16).view(BF16).reshape(np.shape(x32))


def _to_int(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    """Float -> int of at most 32 bits: round to an integral value, then clip (NaN -> 0, saturation)."""
    if dst.itemsize > 4:
        raise _unsupported(x.dtype, dst, mode, "float -> int is modelled for 8- to 32-bit integers")
    v = x.astype(F64)
    if mode in ("CAST_NONE", "CAST_RINT"):
        r = np.rint(v)
    elif mode == "CAST_TRUNC":
        r = np.trunc(v)
    elif mode == "CAST_FLOOR":
        r = np.floor(v)
    elif mode == "CAST_CEIL":
        r = np.ceil(v)
    elif mode == "CAST_ROUND":
        a = np.abs(v)
        whole = np.floor(a)
        r = np.copysign(whole + (a - whole >= 0.5), v)     # a - floor(a) is exact
    else:
        raise _unsupported(x.dtype, dst, mode, f"float -> int rounds with one of {', '.join(_FLOAT_TO_INT)}")
    info = np.iinfo(dst)
    return np.clip(np.nan_to_num(r, nan=0.0), info.min, info.max).astype(dst)


def cast(x: np.ndarray, dst_dtype: Any, mode: Any = "CAST_NONE") -> np.ndarray:
    """AscendC ``Cast`` (cann_facts §10), as far as the oracles need it: ``x`` to ``dst_dtype`` with a
    ``RoundMode``.

    * widening (fp16/bf16 -> fp32/fp64, fp32 -> fp64, int -> wider int) is exact, whatever the mode;
      ``CAST_NONE`` of a float to its own dtype copies;
    * ``CAST_NONE``/``CAST_RINT`` to fp16/fp32 (from floats and ints) is numpy's IEEE round-to-nearest-even;
    * to bf16 (from fp32 or anything exact in fp32): ``CAST_NONE``/``CAST_RINT``, ``CAST_ROUND``
      (ties away from zero), ``CAST_TRUNC``, ``CAST_FLOOR``, ``CAST_CEIL``, on the fp32 bits;
    * float -> int8..int32/uint32 with any of those six modes saturates to the range, NaN -> 0;
      int -> int saturates too;
    * a real float or int -> complex64/complex128 (``CAST_NONE``/``CAST_RINT``): the real part is the value cast
      to the component type (fp32/fp64) as above, the imaginary part +0 -- the AI CPU Cast kernel's
      ``static_cast<std::complex<float>>`` (fp16 through float first), which ``l0op::Cast`` picks for these
      pairs on every architecture but the 950's AI Core list (ops-math ``math/cast/op_kernel_aicpu/
      cast_aicpu.cpp``, ``Set*Map``; kernel_flavours §6). An aclnn API whose ``out`` passes ``CanCast`` reaches it
      (``CanCast(FLOAT, COMPLEX64)`` is true, cann_facts §7).

    Every other conversion (``CAST_ODD``, directed modes to fp16/fp32, float64 -> bf16, rounding a float
    to an integral value of its own dtype, ...) raises ValueError.
    """
    x = np.asarray(x)
    dst = to_numpy(dst_dtype)
    mode = round_mode(mode)
    src = x.dtype
    part = _COMPLEX_PART.get(dst)
    if part is not None and src in _FLOATS + _INTS:
        if mode not in ("CAST_NONE", "CAST_RINT"):
            raise _unsupported(src, dst, mode, "a complex value is reached with CAST_NONE or CAST_RINT")
        out = np.zeros(x.shape, dst)                       # imaginary part +0
        out.real = cast(x, part)                           # the real part: one conversion to fp32/fp64
        return out
    if src not in _FLOATS + _INTS or dst not in _FLOATS + _INTS:
        raise TypeError(f"cast {src} -> {dst} is not modelled; dtypes: {', '.join(map(str, _FLOATS + _INTS))}")
    if mode == "CAST_ODD":
        raise _unsupported(src, dst, mode, "round-to-odd is not needed by any oracle")
    with np.errstate(invalid="ignore", over="ignore"):     # overflow to inf and NaN -> int are intended
        if src == dst:
            if mode == "CAST_NONE" or src.kind in "iu":
                return x.copy()
            raise _unsupported(src, dst, mode, "only CAST_NONE keeps a float in its own dtype")
        if dst.kind in "iu":
            if src.kind in "iu":
                info = np.iinfo(dst)
                return np.clip(x.astype(np.int64), info.min, info.max).astype(dst)
            return _to_int(x, dst, mode)
        if src in _FLOATS and dst.itemsize > src.itemsize:
            return x.astype(dst)                           # widening: exact
        if dst == BF16:
            if src not in _EXACT_IN_F32:
                raise _unsupported(src, dst, mode, "bf16 is reached from fp32 or a type exact in fp32")
            return _to_bf16(x.astype(F32), mode)
        if mode not in ("CAST_NONE", "CAST_RINT"):
            raise _unsupported(src, dst, mode, "fp16/fp32/fp64 are reached with CAST_NONE or CAST_RINT")
        if src == BF16:
            x = x.astype(F32)                             # exact; then one rounding below
        return _quiet_nans(x, x.astype(dst))              # numpy: IEEE round to nearest even


_UINT_OF = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_MANT_BITS = {2: 10, 4: 23, 8: 52}


def _quiet_nans(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE 754 (§6.2): a NaN converted to a narrower float is a quiet NaN with the source's sign and the top of
    its payload. numpy keeps a signalling NaN signalling (and forces a payload of 1 where the kept bits are 0),
    so NaN results are rebuilt here from the source bits: sign | exponent all ones | quiet bit | payload top."""
    nan = np.isnan(y)
    if y.dtype.kind != "f" or not nan.any():
        return y
    src_bits, dst_bits = x.dtype.itemsize, y.dtype.itemsize
    sx = x[nan].view(_UINT_OF[src_bits]).astype(np.uint64)
    drop = _MANT_BITS[src_bits] - _MANT_BITS[dst_bits]
    mant_mask = (1 << _MANT_BITS[dst_bits]) - 1
    payload = (sx >> np.uint64(drop)) & np.uint64(mant_mask)
    quiet = np.uint64(1 << (_MANT_BITS[dst_bits] - 1))
    sign = (sx >> np.uint64(8 * src_bits - 1)) << np.uint64(8 * dst_bits - 1)
    exp_all = np.uint64(((1 << (8 * dst_bits - 1)) - 1) ^ mant_mask)
    out = y.view(_UINT_OF[dst_bits]).copy()
    out[nan] = (sign | exp_all | quiet | payload).astype(_UINT_OF[dst_bits])
    return out.view(y.dtype)


def _operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """A Python number as ``b`` becomes ``T(b)`` (nearest-even); numpy operands must match ``a``."""
    a = np.asarray(a)
    if isinstance(b, (int, float)) and not isinstance(b, bool) and a.dtype in (F16, F32, F64):
        return a, cast(np.asarray(float(b), F64), a.dtype, "CAST_NONE")    # NONE: exact, or nearest-even
    return a, np.asarray(b)


def _check_same_float(a: np.ndarray, b: np.ndarray) -> np.dtype:
    if a.dtype != b.dtype or a.dtype not in (F16, F32, F64):
        raise TypeError("expected two float16/float32/float64 operands of one dtype, "
                        f"got {a.dtype} and {b.dtype}")
    return a.dtype


def rounded_mul(a: np.ndarray, b: Any) -> np.ndarray:
    """``Mul``/``Muls`` in ``a``'s dtype: exact product, one IEEE RNE rounding (no FMA).

    float16: the product of two halves has at most 22 significant bits, so it is exact in
    float64 and rounded once. float32/float64: numpy's own arithmetic is IEEE RNE.
    """
    a, b = _operands(a, b)
    dt = _check_same_float(a, b)
    with np.errstate(all="ignore"):  # inf * 0 = NaN and overflow to inf are the IEEE results we want
        if dt == F16:
            return cast(a.astype(F64) * b.astype(F64), F16, "CAST_RINT")
        return np.multiply(a, b, dtype=dt)


def rounded_add(a: np.ndarray, b: Any) -> np.ndarray:
    """``Add``/``Adds`` in ``a``'s dtype with one IEEE RNE rounding.

    float16: the sum of two halves spans at most 2^16 .. 2^-24 (51 bits), exact in float64.
    """
    a, b = _operands(a, b)
    dt = _check_same_float(a, b)
    with np.errstate(all="ignore"):  # inf + -inf = NaN is the IEEE result
        if dt == F16:
            return cast(a.astype(F64) + b.astype(F64), F16, "CAST_RINT")
        return np.add(a, b, dtype=dt)


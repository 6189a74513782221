"""Plain-numpy oracles that reproduce the simulated kernels' arithmetic bit for bit.

Every function works on whole arrays (no Python loop over elements) and rounds each
instruction's result in that instruction's own dtype, exactly as the AscendC / TBE kernels
described in ``reference/cann_facts.md`` do:

* ``Muls``/``Adds``/``Mul`` round to nearest-even in the instruction dtype after every op;
  there is no fused multiply-add (§2.3, §11 "assumed IEEE RNE").
* ``Cast`` follows AscendC's ``RoundMode`` (§10): see :func:`cast`.
* ``CompareScalar`` + ``Select`` give exactly ``grad`` or ``T(0)`` (+0.0); a NaN operand makes
  every comparison false.

The PyTorch references (§9) are here too, so the book can show where CANN and PyTorch differ.
The kernel simulator is tested against these oracles; :func:`cast`, :func:`rounded_mul` and
:func:`rounded_add` are meant to be reused by its ``Cast``/``Mul``/``Add`` instructions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .dtypes import bfloat16, to_numpy

__all__ = [
    "ROUND_MODES",
    "round_mode",
    "cast",
    "rounded_mul",
    "rounded_add",
    "hard_sigmoid_grad",
    "hard_sigmoid_grad_main950",
    "hard_sigmoid_grad_legacy_tbe",
    "hard_sigmoid_grad_pytorch",
    "threshold_grad_v2_d",
    "threshold_grad_v2_d_main950",
    "threshold_grad_v2_d_legacy_tbe",
    "threshold_backward_pytorch",
    "relu_grad",
    "ALPHA_EXPERIMENTAL",
    "ALPHA_MAIN950",
    "ALPHA_PYTORCH",
]

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BF16 = bfloat16

#: alpha of the experimental kernel and the old aclnn (§1.3): ``0.16666666f``.
ALPHA_EXPERIMENTAL = np.float32(0.16666666)
#: alpha of the main-tree aclnn since 2026-05-22 (§1.3): ``1.0f/6.0f``.
ALPHA_MAIN950 = np.float32(1.0) / np.float32(6.0)
#: PyTorch's ``one_sixth`` (§9): also ``1.0f/6.0f``.
ALPHA_PYTORCH = ALPHA_MAIN950

#: AscendC ``RoundMode`` names in enum order (CAST_NONE = 0, ...; §10). CAST_HYBRID is not modelled.
ROUND_MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD")

_FLOATS = (F16, BF16, F32, F64)
_INTS = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64))


# --------------------------------------------------------------------------------------------
# Rounding helpers
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


def _uint_view(dt: np.dtype) -> np.dtype:
    return {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}[dt.itemsize]


def _apply_mode(x64: np.ndarray, r: np.ndarray, mode: str) -> np.ndarray:
    """Turn ``r`` (``x64`` rounded to nearest-even in a narrower float dtype) into ``mode``'s result.

    ``x64`` holds the exact value. Its two neighbours in the narrow format are ``r`` and
    ``nextafter(r)`` on the side of ``x64``; IEEE overflow falls out naturally (the neighbour of
    the largest finite value is inf, and round-to-nearest already gave inf past the midpoint).
    """
    if mode == "CAST_RINT":
        return r
    with np.errstate(over="ignore", invalid="ignore"):
        r64 = r.astype(F64)
        inexact = (r64 != x64) & ~np.isnan(x64)
        went_up = r64 > x64
        inf = np.array(np.inf, r.dtype)
        lo = np.where(went_up, np.nextafter(r, -inf), r)
        hi = np.where(went_up, r, np.nextafter(r, inf))
        positive = x64 > 0
        if mode == "CAST_FLOOR":
            pick = lo
        elif mode == "CAST_CEIL":
            pick = hi
        elif mode == "CAST_TRUNC":
            pick = np.where(positive, lo, hi)
        elif mode == "CAST_ROUND":  # ties away from zero; everything else is already nearest
            tie = (lo.astype(F64) + hi.astype(F64)) * 0.5 == x64
            pick = np.where(tie, np.where(positive, hi, lo), r)
        elif mode == "CAST_ODD":  # inexact -> the neighbour whose last significand bit is 1
            pick = np.where(lo.view(_uint_view(r.dtype)) & 1, lo, hi)
        else:  # pragma: no cover - guarded by callers
            raise ValueError(mode)
    return np.where(inexact, pick, r).astype(r.dtype)


def _f64_to_f32(x64: np.ndarray, mode: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        r = x64.astype(F32)  # IEEE RNE, overflow -> inf
    return _apply_mode(x64, r, mode)


def _f32_to_bf16(x32: np.ndarray, mode: str) -> np.ndarray:
    """fp32 -> bf16 on the bit pattern: keep the top 16 bits, round the magnitude by ``mode``."""
    u = np.ascontiguousarray(x32, dtype=F32).view(np.uint32)
    sign = (u >> 16) & np.uint32(0x8000)
    mag = u & np.uint32(0x7FFFFFFF)
    top = mag >> 16
    rest = mag & np.uint32(0xFFFF)
    inexact = rest != 0
    negative = sign != 0
    if mode == "CAST_RINT":
        up = (rest > 0x8000) | ((rest == 0x8000) & ((top & 1) == 1))
    elif mode == "CAST_ROUND":
        up = rest >= 0x8000
    elif mode == "CAST_TRUNC":
        up = np.zeros(u.shape, bool)
    elif mode == "CAST_FLOOR":
        up = inexact & negative
    elif mode == "CAST_CEIL":
        up = inexact & ~negative
    elif mode == "CAST_ODD":
        up = np.zeros(u.shape, bool)
        top = top | inexact.astype(np.uint32)
    else:  # pragma: no cover
        raise ValueError(mode)
    out = top + up.astype(np.uint32)  # a carry into the exponent is the correct result (up to inf)
    nan = mag > 0x7F800000
    out = np.where(nan, (mag >> 16) | 0x0040, out)  # NaN stays a (quiet) NaN
    return (out | sign).astype(np.uint16).view(BF16).reshape(np.shape(x32))


def _to_float_from_f64(x64: np.ndarray, dst: np.dtype, mode: str, exact_f32: bool) -> np.ndarray:
    """Round exact float64 values to ``dst`` (fp32, fp16 or bf16).

    For fp16/bf16 the value is first rounded to fp32 *to odd*, which keeps enough information
    (24 >= 11 + 2 and 24 >= 8 + 2 bits) for every mode of the second rounding to be exact.
    """
    if dst == F32:
        return _f64_to_f32(x64, mode)
    x32 = x64.astype(F32) if exact_f32 else _f64_to_f32(x64, "CAST_ODD")
    if dst == BF16:
        return _f32_to_bf16(x32, mode)
    with np.errstate(over="ignore"):
        r = x32.astype(F16)  # numpy fp32 -> fp16 is IEEE RNE
    return _apply_mode(x32.astype(F64), r, mode)


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


def _round_to_integral(x64: np.ndarray, mode: str) -> np.ndarray:
    if mode in ("CAST_NONE", "CAST_RINT"):
        return np.rint(x64)
    if mode == "CAST_FLOOR":
        return np.floor(x64)
    if mode == "CAST_CEIL":
        return np.ceil(x64)
    if mode == "CAST_TRUNC":
        return np.trunc(x64)
    if mode == "CAST_ROUND":
        t = np.trunc(x64)
        with np.errstate(invalid="ignore"):
            return np.where(np.abs(x64 - t) >= 0.5, t + np.sign(x64), t)
    raise ValueError(f"{mode} is not defined for a conversion to an integer type")


def _saturate_to_int(r64: np.ndarray, dst: np.dtype) -> np.ndarray:
    """Integral float64 values -> integer dtype, saturating; NaN -> 0 (AscendC default, §10)."""
    info = np.iinfo(dst)
    top = float(int(info.max) + 1)  # a power of two, exact in float64
    bottom = float(int(info.min))
    with np.errstate(invalid="ignore"):
        high = r64 >= top
        low = r64 < bottom
        bad = high | low | np.isnan(r64)
        out = np.where(bad, 0.0, r64).astype(dst)
    out = np.where(high, info.max, out)
    out = np.where(low, info.min, out)
    return out.astype(dst)


def cast(x: np.ndarray, dst_dtype: Any, mode: Any = "CAST_NONE") -> np.ndarray:
    """AscendC ``Cast`` (§10): convert ``x`` to ``dst_dtype`` with a ``RoundMode``.

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
    * fp32 -> bf16 works on the uint32 bit pattern; every conversion is exact bit manipulation or
      a correctly rounded numpy conversion followed by a nextafter correction.
    """
    x = np.asarray(x)
    dst = to_numpy(dst_dtype)
    mode = round_mode(mode)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf handling is explicit below
        return _cast(x, dst, mode)


def _cast(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    src = x.dtype
    if src == np.bool_ or dst == np.bool_ or src.kind == "c" or dst.kind == "c":
        raise TypeError(f"cast {src} -> {dst} is not modelled (bool and complex casts are not kernel casts)")
    if src not in _FLOATS + _INTS:
        raise TypeError(f"cast from {src} is not modelled; sources: {', '.join(map(str, _FLOATS + _INTS))}")
    if mode == "CAST_ODD" and not (src in _FLOATS and src != F16 and dst == F16):
        raise ValueError(f"CAST_ODD is only defined for float -> float16, not {src} -> {dst}")

    if src in _FLOATS and dst == src:
        if mode == "CAST_NONE":
            return x.copy()
        return _round_to_integral(x.astype(F64), mode).astype(dst)
    if src in _INTS and dst in _INTS:
        info = np.iinfo(dst)
        return np.clip(x, max(info.min, np.iinfo(src).min), min(info.max, np.iinfo(src).max)).astype(dst)
    if dst in _INTS:
        return _saturate_to_int(_round_to_integral(x.astype(F64), mode), dst)
    # -> float
    rmode = "CAST_RINT" if mode == "CAST_NONE" else mode
    if src == np.int64:
        x64, exact_f32 = _int64_to_f64_odd(x), False
        if dst == F64:
            if rmode != "CAST_RINT":
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


def _operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """A Python number as ``b`` becomes ``T(b)`` (nearest-even); numpy operands must match ``a``."""
    a = np.asarray(a)
    if isinstance(b, (int, float)) and not isinstance(b, bool) and a.dtype in (F16, F32, F64):
        return a, cast(np.asarray(float(b), F64), a.dtype, "CAST_RINT")
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


# --------------------------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------------------------

def _pair(grad: Any, x: Any, allowed: tuple[np.dtype, ...], what: str,
          broadcast: bool = False) -> tuple[np.ndarray, np.ndarray]:
    g = np.asarray(grad)
    f = np.asarray(x)
    names = ", ".join(str(d) for d in allowed)
    if g.dtype not in allowed or f.dtype not in allowed:
        raise TypeError(f"{what}: dtypes must be one of {names}; got grad {g.dtype} and input {f.dtype}")
    if g.dtype != f.dtype:
        raise TypeError(f"{what}: grad and input must have the same dtype, got {g.dtype} and {f.dtype}")
    if broadcast:
        try:
            g, f = np.broadcast_arrays(g, f)
        except ValueError:
            raise ValueError(f"{what}: shapes {g.shape} and {f.shape} do not broadcast") from None
    elif g.shape != f.shape:
        raise ValueError(f"{what}: grad and input must have the same shape, got {g.shape} and {f.shape}")
    return g, f


def _zero(dt: np.dtype) -> np.ndarray:
    return np.zeros((), dt)


def _scalar_f32(value: Any, what: str) -> np.float32:
    """A host float attribute as the kernel sees it: a C ``float`` (tiling data / op attr)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number, got {value!r}") from None
    with np.errstate(over="ignore"):
        return np.float32(v)


def _half_of(v32: np.float32) -> np.ndarray:
    """``T(scalar)`` for T = half: the fp32 scalar rounded to nearest-even."""
    return cast(np.asarray(v32, F32), F16, "CAST_RINT")


# --------------------------------------------------------------------------------------------
# HardSigmoidGrad
# --------------------------------------------------------------------------------------------

_HS_DTYPES = (F32, F16, BF16)


def _hs_fp32_core(g32: np.ndarray, x32: np.ndarray, a: np.float32, b: np.float32) -> np.ndarray:
    """Muls, Adds, Muls, CompareScalar GT 0 / LT 1, two Selects, all in fp32 (§2.3/§2.5)."""
    tmp = rounded_add(rounded_mul(x32, a), b)
    res = rounded_mul(g32, a)
    keep = (tmp > 0) & (tmp < 1)  # NaN -> both false -> 0
    return np.where(keep, res, _zero(F32))


def hard_sigmoid_grad(grad: np.ndarray, x: np.ndarray, alpha: Any = ALPHA_EXPERIMENTAL,
                      beta: Any = 0.5) -> np.ndarray:
    """Experimental arch35 kernel (§2.3, §2.4): ``(0 < alpha*x+beta < 1) ? grad*alpha : 0``.

    alpha/beta arrive as fp32 tiling data. fp32 and fp16 compute natively in T, every
    Muls/Adds rounding to T (so fp16 uses ``half(alpha) = 0.1666259765625``). bf16 is cast to
    fp32 exactly, computed like fp32 and cast back with CAST_ROUND (ties away from zero, §2.4).
    """
    g, f = _pair(grad, x, _HS_DTYPES, "hard_sigmoid_grad")
    a32, b32 = _scalar_f32(alpha, "alpha"), _scalar_f32(beta, "beta")
    if g.dtype == F32:
        return _hs_fp32_core(g, f, a32, b32)
    if g.dtype == F16:
        a16, b16 = _half_of(a32), _half_of(b32)
        tmp = rounded_add(rounded_mul(f, a16), b16)
        res = rounded_mul(g, a16)
        keep = (tmp > 0) & (tmp < 1)
        return np.where(keep, res, _zero(F16))
    out32 = _hs_fp32_core(cast(g, F32), cast(f, F32), a32, b32)
    return cast(out32, BF16, "CAST_ROUND")


def hard_sigmoid_grad_main950(grad: np.ndarray, x: np.ndarray, alpha: Any = ALPHA_MAIN950,
                              beta: Any = 0.5) -> np.ndarray:
    """Main-tree Ascend950 kernel (§2.5): alpha = 1/6f, every dtype computed in fp32.

    fp16/bf16 are widened exactly (CAST_NONE) and cast back with CAST_RINT (fp16) or
    CAST_ROUND (bf16). The main tiling rejects a non-finite or zero alpha and a non-finite beta
    (§2.2), so this raises ValueError for them.
    """
    g, f = _pair(grad, x, _HS_DTYPES, "hard_sigmoid_grad_main950")
    a32, b32 = _scalar_f32(alpha, "alpha"), _scalar_f32(beta, "beta")
    if not np.isfinite(a32) or a32 == 0 or not np.isfinite(b32):
        raise ValueError(f"alpha must be finite and non-zero and beta finite (got {alpha!r}, {beta!r})")
    out32 = _hs_fp32_core(cast(g, F32), cast(f, F32), a32, b32)
    if g.dtype == F32:
        return out32
    return cast(out32, g.dtype, "CAST_RINT" if g.dtype == F16 else "CAST_ROUND")


def hard_sigmoid_grad_legacy_tbe(grad: np.ndarray, x: np.ndarray, alpha: Any = 0.16666666) -> np.ndarray:
    """Legacy TBE kernel (§2.6): ``|x| < 3 ? grad*alpha : 0``; beta is ignored.

    Compute dtype is fp32 for fp32/bf16 (bf16 widened exactly) and fp16 for fp16, with alpha a
    constant of that dtype (``half(0.16666666) = 0.16662598``). bf16 is rounded back with
    ``tbe.round`` (round half to even).
    """
    g, f = _pair(grad, x, _HS_DTYPES, "hard_sigmoid_grad_legacy_tbe")
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise TypeError(f"alpha must be a real number, got {alpha!r}") from None
    if g.dtype == F16:
        a_c = cast(np.asarray(a, F64), F16, "CAST_RINT")  # tvm.const(alpha, "float16")
        g_c, f_c = g, f
    else:
        a_c = cast(np.asarray(a, F64), F32, "CAST_RINT")
        g_c, f_c = cast(g, F32), cast(f, F32)
    res = rounded_mul(g_c, a_c)
    out = np.where(np.abs(f_c) < 3, res, _zero(res.dtype))  # vcmpsel(vabs(x), 3.0, 'lt', res, 0)
    return cast(out, BF16, "CAST_RINT") if g.dtype == BF16 else out


def hard_sigmoid_grad_pytorch(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch ``hardsigmoid_backward`` (§9): ``(-3 < x < 3) ? grad * (1.0f/6.0f) : 0``.

    half/bf16 compute in float (opmath) and round back to nearest-even; float32 computes in
    float; float64 in double with the *float* constant 1.0f/6.0f widened. Same dtype required
    (PyTorch would promote; the CANN kernels compare against same-dtype inputs).
    """
    g, f = _pair(grad, x, _HS_DTYPES + (F64,), "hard_sigmoid_grad_pytorch")
    if g.dtype == F64:
        return np.where((f > -3) & (f < 3), g * np.float64(ALPHA_PYTORCH), _zero(F64))
    g32, f32 = cast(g, F32), cast(f, F32)
    out32 = np.where((f32 > -3) & (f32 < 3), rounded_mul(g32, ALPHA_PYTORCH), _zero(F32))
    return out32 if g.dtype == F32 else cast(out32, g.dtype, "CAST_RINT")


# --------------------------------------------------------------------------------------------
# ThresholdGradV2D / ReluGrad
# --------------------------------------------------------------------------------------------

I8, U8, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64))
_THR_DTYPES = (F32, F16, BF16, I32, I8, U8)


def _widen_f32(a: np.ndarray) -> np.ndarray:
    """Kernel route to fp32: bf16/fp16 exact, int32 CAST_NONE (= RINT), int8/uint8 via half (exact)."""
    if a.dtype in (I8, U8):
        return cast(cast(a, F16, "CAST_NONE"), F32, "CAST_NONE")
    return cast(a, F32, "CAST_NONE")


def threshold_grad_v2_d(grad: np.ndarray, feature: np.ndarray, threshold: Any) -> np.ndarray:
    """Experimental 910B AscendC kernel (§4.2): ``feature > thr ? grad : 0`` (NaN feature -> 0).

    thr is the fp32 tiling value. fp32 compares in fp32; fp16 compares in half against
    ``half(thr)``; bf16 goes to fp32 and back with CAST_RINT; int32 goes to fp32 with CAST_NONE
    (RINT: |v| > 2^24 lose bits) and back with CAST_TRUNC (saturating); int8/uint8 go
    half -> fp32 and back fp32 -> half (CAST_NONE) -> int with CAST_TRUNC.
    """
    g, f = _pair(grad, feature, _THR_DTYPES, "threshold_grad_v2_d")
    thr = _scalar_f32(threshold, "threshold")
    if g.dtype == F32:
        return np.where(f > thr, g, _zero(F32))
    if g.dtype == F16:
        return np.where(f > _half_of(thr), g, _zero(F16))
    out32 = np.where(_widen_f32(f) > thr, _widen_f32(g), _zero(F32))
    if g.dtype == BF16:
        return cast(out32, BF16, "CAST_RINT")
    if g.dtype == I32:
        return cast(out32, I32, "CAST_TRUNC")
    return cast(cast(out32, F16, "CAST_NONE"), g.dtype, "CAST_TRUNC")


def threshold_grad_v2_d_main950(grad: np.ndarray, feature: np.ndarray, threshold: Any) -> np.ndarray:
    """Main-tree Ascend950 DAG (§4.3): all in fp32, ``feature <= thr ? 0 : grad`` (NaN -> grad).

    Inputs widen to fp32 (fp16/bf16 CAST_NONE, int32 CAST_RINT, int8/uint8 via half); the
    result casts back with CAST_RINT (int8/uint8 fp32 -> half -> int, both RINT, saturating).
    Broadcasting is allowed, as in the atvoss broadcast template.
    """
    g, f = _pair(grad, feature, _THR_DTYPES, "threshold_grad_v2_d_main950", broadcast=True)
    thr = _scalar_f32(threshold, "threshold")
    if g.dtype == F32:
        return np.where(f <= thr, _zero(F32), g)
    out32 = np.where(_widen_f32(f) <= thr, _zero(F32), _widen_f32(g))
    if g.dtype in (I8, U8):
        return cast(cast(out32, F16, "CAST_RINT"), g.dtype, "CAST_RINT")
    return cast(out32, g.dtype, "CAST_RINT")


def threshold_grad_v2_d_legacy_tbe(grad: np.ndarray, feature: np.ndarray, threshold: Any,
                                   vcopy: bool = True, *, fp32_vcmpsel: bool = True) -> np.ndarray:
    """Legacy TBE kernel (§4.4), with broadcasting.

    int8/int32/uint8 go to fp32 (``tbe.cast_to``: int32 RINT, int8/uint8 via half, exact); bf16
    is widened to fp32 by the ``support_bfp16`` wrapper. The threshold becomes a constant of the
    compute dtype. ``vcopy=True``: ``vsel(vcmp(f, thr, 'le'), 0, grad)`` (NaN -> grad);
    ``vcopy=False``: ``vcmpsel(f, thr, 'gt', grad, 0)`` (NaN -> 0). ``fp32_vcmpsel=False``
    models a platform without fp32 vcmpsel: fp32 data is compared in fp16 (RINT both ways).
    Cast back: floats round to nearest-even; ints truncate (``cast_to``'s default), saturating,
    int8/uint8 through half.
    """
    g, f = _pair(grad, feature, _THR_DTYPES, "threshold_grad_v2_d_legacy_tbe", broadcast=True)
    thr = _scalar_f32(threshold, "threshold")
    ori = g.dtype
    if ori in (I8, U8, I32, BF16):
        g, f = _widen_f32(g), _widen_f32(f)
    narrowed = g.dtype == F32 and not fp32_vcmpsel
    if narrowed:
        g, f = cast(g, F16, "CAST_RINT"), cast(f, F16, "CAST_RINT")
    thr_c = _half_of(thr) if g.dtype == F16 else thr
    zero = _zero(g.dtype)
    out = np.where(f <= thr_c, zero, g) if vcopy else np.where(f > thr_c, g, zero)
    if narrowed:
        out = cast(out, F32, "CAST_NONE")
    if ori == out.dtype:
        return out
    if ori == BF16:
        return cast(out, BF16, "CAST_RINT")
    if ori == I32:
        return cast(out, I32, "CAST_TRUNC")
    return cast(cast(out, F16, "CAST_RINT"), ori, "CAST_TRUNC")


def threshold_backward_pytorch(grad: np.ndarray, x: np.ndarray, threshold: Any) -> np.ndarray:
    """PyTorch ``threshold_backward`` (§9): ``x <= thr ? 0 : grad`` (NaN -> grad), broadcasting.

    half/bf16 compare ``float(x) <= float(thr)``; float32/float64 use ``thr`` in that dtype;
    integer dtypes truncate ``thr`` toward zero to the type (``Scalar::to<scalar_t>``, which
    raises for NaN or an out-of-range threshold, as PyTorch does).
    """
    allowed = _THR_DTYPES + (F64, I64, np.dtype(np.int16))
    g, f = _pair(grad, x, allowed, "threshold_backward_pytorch", broadcast=True)
    dt = g.dtype
    if dt.kind in "iu":
        t = float(threshold)
        info = np.iinfo(dt)
        if math.isnan(t) or t < info.min or t > info.max:
            raise ValueError(f"threshold {threshold!r} cannot be converted to {dt} without overflow")
        thr_c: Any = dt.type(math.trunc(t))
        f_c = f
    elif dt == F64:
        thr_c, f_c = np.float64(float(threshold)), f
    else:
        thr_c = _scalar_f32(threshold, "threshold")
        f_c = cast(f, F32) if dt != F32 else f
    return np.where(f_c <= thr_c, _zero(dt), g)


_RELU_DTYPES = (F32, F16, BF16, I8, U8, I32, I64)


def relu_grad(grad: np.ndarray, feature: np.ndarray) -> np.ndarray:
    """ReluGrad as the simulator runs it when |threshold| <= FLT_EPSILON (§3.2, §5):
    ``out = (feature <= 0) ? 0 : grad`` by CompareScalar(LE) + Not + Select, so NaN features keep
    their gradient and inf/NaN gradients pass untouched where feature > 0 (no multiply).

    The select happens in the kernel's working dtype: fp32/fp16/int64 natively; bf16 and int32 through
    fp32 (CAST_NONE in; back with CAST_RINT for bf16, CAST_TRUNC for int32, so int32 gradients beyond
    2^24 lose precision exactly as in ThresholdGradV2D); int8/uint8 through half (exact).
    """
    g, f = _pair(grad, feature, _RELU_DTYPES, "relu_grad")
    dt = g.dtype
    if dt in (F32, F16, I64):
        return np.where(f <= 0, _zero(dt), g)
    if dt in (BF16, I32):
        g_w, f_w = cast(g, F32), cast(f, F32)
        out = np.where(f_w <= 0, np.float32(0), g_w)
        return cast(out, dt, "CAST_RINT" if dt == BF16 else "CAST_TRUNC")
    g_h, f_h = cast(g, F16), cast(f, F16)
    out = np.where(f_h <= 0, np.float16(0), g_h)
    return cast(out, dt, "CAST_TRUNC")

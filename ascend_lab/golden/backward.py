"""The operators' oracles: HardSigmoidGrad, ThresholdGradV2D and ReluGrad per kernel flavour (experimental, main
on the 950, the legacy TBE kernels) and the PyTorch references, each bit for bit, from :mod:`.rounding`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .rounding import BF16, F16, F32, F64, cast, rounded_add, rounded_mul

#: alpha of the experimental kernel and the old aclnn (§1.3): ``0.16666666f``.
ALPHA_EXPERIMENTAL = np.float32(0.16666666)
#: alpha of the main-tree aclnn since 2026-05-22 (§1.3): ``1.0f/6.0f``.
ALPHA_MAIN950 = np.float32(1.0) / np.float32(6.0)
#: PyTorch's ``one_sixth`` (§9): also ``1.0f/6.0f``.
ALPHA_PYTORCH = ALPHA_MAIN950


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
    """Main-tree Ascend950 kernel, the one a stock CANN runs there (kernel_flavours.md §2.2; cann_facts §2.5):
    ``alpha*g`` where ``0 < fl(fl(alpha*x) + beta) < 1``, else +0, alpha = 1/6f, every dtype computed in fp32.

    fp16/bf16 are widened exactly (CAST_NONE), the mask is computed on the fp32 values (so a NaN x gives 0),
    the product ``fl(g*alpha)`` is kept bit for bit inside the band (an inf or NaN grad propagates) and
    rounded exactly once at the end: CAST_RINT to fp16, CAST_ROUND (ties away from zero) to bf16. The main
    tiling rejects a non-finite or zero alpha and a non-finite beta (§2.1), so this raises ValueError for them.
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
    a32 = cast(np.asarray(a, F64), F32, "CAST_RINT")         # the op attribute is a C float
    if g.dtype == F16:
        a_c = cast(a32, F16, "CAST_RINT")                     # tvm.const(alpha, "float16")
        g_c, f_c = g, f
    else:
        a_c = a32
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
    """Main-tree Ascend950 DAG (kernel_flavours.md §3.2, §3.7): all in fp32, ``feature <= thr ? 0 : grad``
    (NaN -> grad).

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
    """The select rule of ReluGrad, ``out = (feature <= 0) ? 0 : grad`` (the simulator's former ReluGrad
    model, kept for its callers): NaN features keep their gradient, inf/NaN gradients pass untouched where
    feature > 0 (no multiply). Every ReluGrad kernel gives these values on fp32/fp16 finite gradients (up to
    the sign of a zero), but no kernel follows it everywhere: see ``relu_grad_experimental`` (910B custom
    package) and the TBE and main-tree oracles for what each kernel computes.

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


_RELU_EXP_DTYPES = (F32, F16, BF16, I8, U8, I32)


def _cxx_int(literal: int) -> int:
    """``constexpr int c = literal;``: a literal outside ``int`` wraps modulo 2^32."""
    return (literal + 2**31) % 2**32 - 2**31


def relu_grad_experimental(grad: np.ndarray, feature: np.ndarray) -> np.ndarray:
    """ReluGrad of the ops-nn experimental custom package (ascend910b), from ``kernel_flavours.md`` §4.

    * fp32, fp16: CompareScalar(x, 0, LE) + Duplicate(0) + Select mode 2, so ``x <= 0 -> +0``, else ``grad``
      bit for bit: a NaN feature keeps its gradient, an inf/NaN gradient with ``x <= 0`` gives 0.
    * bf16, in fp32: ``m = max(min(x, 2^-126), 0) * C * D * D`` with C and D the ``constexpr int`` 2^38 and
      2^44, which wrap to 0; then ``bf16_RINT(m * grad)``. The output is grad * 0 = +-0, or NaN for inf/NaN
      gradients and NaN features: the source defect (UNCONFIRMED on device).
    * int8, uint8, in half: ``m = max(min(x, 2^-24), 0) * 4096 * 4096`` (a half subnormal times 2^24 is 1),
      then ``RINT(m * grad)`` back to the integer type: exactly ``x > 0 ? grad : 0``.
    * int32: ``m = max(min(x, 1), 0) * 1 * 1``, then ``grad * m`` in int32: exact.

    Min/Max are taken as numpy's ``minimum``/``maximum`` (a NaN operand gives NaN; ``max(-0, +0)`` keeps the
    first operand): what the vector unit does with NaN and signed zeros is not documented (UNCONFIRMED);
    for bf16 these choices decide only the sign of a zero and whether a NaN feature gives NaN.
    """
    g, f = _pair(grad, feature, _RELU_EXP_DTYPES, "relu_grad_experimental")
    dt = g.dtype
    if dt in (F32, F16):
        return np.where(f <= 0, _zero(dt), g)
    with np.errstate(invalid="ignore"):              # 0 * inf = NaN is the result the kernel computes
        if dt == BF16:
            m = np.maximum(np.minimum(cast(f, F32), np.float32(2.0**-126)), np.float32(0))
            for scale in (2**38, 2**44, 2**44):
                m = np.multiply(m, np.float32(_cxx_int(scale)), dtype=F32)
            return cast(np.multiply(m, cast(g, F32), dtype=F32), BF16, "CAST_RINT")
        if dt in (I8, U8):
            m = np.maximum(np.minimum(cast(f, F16), np.float16(2.0**-24)), np.float16(0))
            m = rounded_mul(rounded_mul(m, 4096.0), 4096.0)
            return cast(rounded_mul(m, cast(g, F16)), dt, "CAST_RINT")
    m = np.maximum(np.minimum(f, np.int32(1)), np.int32(0))
    return np.multiply(g, m, dtype=I32)


def relu_grad_main950(grad: np.ndarray, feature: np.ndarray) -> np.ndarray:
    """ReluGrad of the Ascend950 main tree (atvoss DAG), from ``kernel_flavours.md`` §3.2 and §3.7.

    ``m = (feature <= 0) ? 0 : 1`` in T, then ``out = grad * m`` in T (one IEEE RNE rounding; for bf16 the
    exact product rounded once to bf16); int8/uint8 multiply in half and cast back with CAST_RINT. So a NaN
    feature keeps its gradient (m = 1), an inf/NaN gradient where feature <= 0 gives NaN (inf * 0), a
    negative gradient there gives -0, and int32/int64 are exact. Broadcasting is allowed (the template's
    CopyInBrc).
    """
    g, f = _pair(grad, feature, _RELU_DTYPES, "relu_grad_main950", broadcast=True)
    dt = g.dtype
    with np.errstate(invalid="ignore"):              # inf * 0 = NaN is the result the kernel computes
        keep = ~(f <= 0)                             # NaN feature: LE false -> kept
        if dt in (F32, F16):
            return rounded_mul(g, np.where(keep, dt.type(1), dt.type(0)))
        if dt == BF16:
            return cast(np.multiply(cast(g, F32), keep.astype(F32), dtype=F32), BF16, "CAST_RINT")
        if dt in (I8, U8):
            prod = rounded_mul(cast(g, F16, "CAST_NONE"), keep.astype(F16))
            return cast(prod, dt, "CAST_RINT")
        return np.multiply(g, keep.astype(dt), dtype=dt)


def relu_grad_legacy_tbe(grad: np.ndarray, feature: np.ndarray, vcopy: bool = True) -> np.ndarray:
    """Legacy TBE ReluGrad (``kernel_flavours.md`` §5.3), with broadcasting.

    * bf16: the compute is registered with ``support_bfp16=True``, so TBE's framework (``register_op_compute``,
      CANN 8.1.RC1 ``tbe/common/register/operation_func_mgr.py:42-176``) casts bf16 inputs to fp32 before the
      compute runs -- on a SoC whose ``vadd`` has no bf16 and whose ``vconv`` has bf162f32, i.e. 910B/910_93, the
      only SoCs aclnn sends bf16 to -- and rounds the fp32 result back to bf16 (``tbe.round``, half to even). The
      compute sees fp32: bf16 follows the fp32 rules below, then is rounded.
    * ``vcopy`` (``after_v200()``, i.e. ``tik.vcopy``) and an fp16/fp32 input as the compute sees it (so bf16
      too): ``x <= 0 ? 0 : grad`` by vcmp + vsel, bit for bit (a NaN feature keeps its gradient, -0 never
      appears).
    * Otherwise, in the compute dtype (fp32 for fp32/bf16, fp16 for fp16/int8/uint8, int32 for int32):
      ``mask = max(min(x, tiny), 0) * s1 * s2`` (fp32: ``* s2`` twice), tiny/s1/s2 = 2^-126/2^38/2^44 (fp32),
      2^-24/2^12/2^12 (fp16), 1/1/1 (int32), every product rounded in that dtype; ``out = grad * mask``.
      So ``x <= 0`` gives ``grad * 0`` (-0 for a negative grad, NaN for an inf/NaN grad) and an fp32 subnormal
      ``x`` scales the gradient down. min/max are numpy's (a NaN feature gives NaN; ``max(-0, +0)`` keeps
      -0), i.e. IEEE 754: this path runs for floats only on 910A/310P, whose vector units have no INF/NaN mode, and
      what their saturation mode does with inf/NaN operands (and signed zeros in min/max) is not documented.
    * int8/uint8 come back from fp16 with ``cast_to`` (truncating, saturating); bf16 with ``round`` (RINT).
    * int64 (vcmp in bool mode, then vsel): ``x <= 0 ? 0 : grad``.
    """
    g, f = _pair(grad, feature, _RELU_DTYPES, "relu_grad_legacy_tbe", broadcast=True)
    dt = g.dtype
    if dt == BF16:                                   # the support_bfp16 wrapper: fp32 in, round half-even back
        return cast(relu_grad_legacy_tbe(cast(g, F32), cast(f, F32), vcopy), BF16, "CAST_RINT")
    if dt == I64 or (vcopy and dt in (F32, F16)):
        return np.where(f <= 0, _zero(dt), g)
    if dt == I32:
        m = np.maximum(np.minimum(f, np.int32(1)), np.int32(0))
        return np.multiply(g, m, dtype=I32)
    wide = F16 if dt in (F16, I8, U8) else F32
    g_c, f_c = cast(g, wide), cast(f, wide)
    tiny, scales = (2.0**-24, (2.0**12, 2.0**12)) if wide == F16 else (2.0**-126, (2.0**38, 2.0**44, 2.0**44))
    with np.errstate(invalid="ignore"):              # 0 * inf = NaN is what the kernel computes
        m = np.maximum(np.minimum(f_c, wide.type(tiny)), wide.type(0))
        for s in scales:
            m = rounded_mul(m, s)
        out = rounded_mul(g_c, m)
    if dt in (I8, U8):
        return cast(out, dt, "CAST_TRUNC")
    return out

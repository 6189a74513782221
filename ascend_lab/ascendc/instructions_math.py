"""The basic vector API of the ops-nn elementwise kernels beyond :mod:`.instructions`: ``Sub``, ``Div``, ``Subs``,
``Divs``, ``Abs``, ``Exp``, ``Ln``, ``Sqrt``, ``Rsqrt``, ``Reciprocal``, ``Relu``, ``LeakyRelu``, ``And``, ``Or``,
``Axpy`` -- their count form (``Exp(dst, src, count)``), as asc-devkit
``include/basic_api/kernel_operator_vec_*_intf.h`` declares it.

Each instruction works as those of :mod:`.instructions` do: the sanitizer checks its operands (UB bounds, races,
uninitialised reads) and its element type against the list the AscendC library offers on the SoC's architecture
(:data:`DTYPES`: the ``SupportType<T, ...>`` static_assert of the count form in asc-devkit
``impl/basic_api/dav_{c100,m200,c220,3510}/kernel_operator_vec_{binary,unary,binary_scalar,ternary_scalar}_impl.h``
@ 82b89a15; a type outside it is an ``unsupported-on-soc`` finding), it computes in its own element type, and it
occupies PIPE_V for GE-ATT V1's cycles (:data:`.cost_model.MATH_COST`; a row GE-ATT lacks borrows a named one,
:data:`.cost_model.MATH_BORROWED`).

Numerics -- the one place this is said
--------------------------------------
* **Exact and IEEE operations** (``Sub``, ``Subs``, ``Abs``, ``Relu``, ``LeakyRelu``'s product, ``And``, ``Or``) are
  computed in the instruction's dtype with numpy / ml_dtypes: an IEEE result rounded once to nearest-even; integers
  wrap (``Sub`` of int16 -32768 - 1 = 32767, ``Abs`` of the most negative integer is itself).
* **Division, square root, transcendental** (``Div``, ``Divs``, ``Reciprocal``, ``Sqrt``, ``Rsqrt``, ``Exp``,
  ``Ln``) and ``Axpy``: the hardware's exact bits are not public (its Exp/Ln/Rsqrt approximations, whether its
  divider rounds correctly). The simulator computes each **in float64 and rounds once to the instruction's dtype**
  (nearest-even, :func:`.numerics.cast`): the correctly rounded result (for ``Div``/``Reciprocal``/``Sqrt`` exactly
  -- float64 holds more than 2p + 2 bits of every fp32/fp16 operand; for ``Exp``/``Ln``/``Rsqrt`` except where the
  float64 result lies within one float64 ulp of a rounding boundary). ``Axpy`` (dst += src * scalar) is one fused
  rounding: the product is exact in float64, the sum rounds there and then once more to T. The real hardware may
  differ by an ulp or so; tests compare against numpy within this stated model.
* IEEE specials as numpy has them: ``x / 0`` = ±inf, ``0 / 0`` = NaN, ``Ln(0)`` = -inf, ``Ln(x < 0)`` = NaN,
  ``Sqrt(-x)`` = NaN, ``Rsqrt(0)`` = inf, ``Exp`` overflows to inf and underflows through the subnormals to 0;
  subnormal inputs and results are kept (no flush to zero -- UNCONFIRMED on device, as for ``Add``/``Mul``).
  ``Relu`` and NaN: NaN propagates (``max(NaN, 0)``), as ``Max`` does (UNCONFIRMED on device).
* Integer ``Div`` (the 950 only) truncates toward zero; division by zero gives 0 (UNCONFIRMED on device).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .issue import check_local as _check_local
from .issue import show as _show
from .issue import tile_of as _tile_of
from .issue import ub_operand as _span
from .issue import vector_done as _vector_done
from .math_common import DTYPES as DTYPES  # public here too: the count form's lists, by architecture
from .math_common import FLOAT64, check_dtype, divide, round_once, same_dtype, unary, via_float64
from .numerics import scalar as _scalar
from .tensor import LocalTensor

__all__ = ["Abs", "And", "Axpy", "Div", "Divs", "Exp", "LeakyRelu", "Ln", "Or", "Reciprocal", "Relu", "Rsqrt",
           "Sqrt", "Sub", "Subs", "DTYPES", "NAMESPACE"]

# --- one source -------------------------------------------------------------------------------------------------
def Abs(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = |src| (exact; integers wrap: the most negative value stays itself)."""
    unary("Abs", lambda x, dt: np.abs(x), dst, src, count)


def Exp(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = e^src, correctly rounded in dst's dtype (module doc: float64, one rounding)."""
    unary("Exp", via_float64(np.exp), dst, src, count)


def Ln(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = ln(src) (natural log; ln 0 = -inf, ln of a negative = NaN), correctly rounded in dst's dtype."""
    unary("Ln", via_float64(np.log), dst, src, count)


def Sqrt(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = sqrt(src) (NaN for a negative, -0 for -0), correctly rounded in dst's dtype."""
    unary("Sqrt", via_float64(np.sqrt), dst, src, count)


def Rsqrt(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = 1 / sqrt(src) (inf for +0, -inf for -0), rounded once to dst's dtype."""
    unary("Rsqrt", via_float64(lambda x: 1.0 / np.sqrt(x)), dst, src, count)


def Reciprocal(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = 1 / src (±inf for ±0), correctly rounded in dst's dtype."""
    unary("Reciprocal", via_float64(lambda x: 1.0 / x), dst, src, count)


def Relu(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = max(src, 0) (NaN propagates, UNCONFIRMED on device; ``Relu(-0)`` keeps numpy's max(-0, 0))."""
    unary("Relu", lambda x, dt: np.maximum(x, x.dtype.type(0)), dst, src, count)


# --- two sources ------------------------------------------------------------------------------------------------
def _binary(api: str, fn: Any, dst: LocalTensor, a: LocalTensor, b: LocalTensor, count: int) -> None:
    _check_local(api, dst, a, b)
    dt = same_dtype(api, dst, a, b)
    ctx = dst.ctx
    check_dtype(ctx, api, _tile_of(dst, a, b), dt)
    count = int(count)
    x, y = _span(a, count, api, False), _span(b, count, api, False)
    with np.errstate(all="ignore"):
        out = fn(x, y, dt)
    _span(dst, count, api, True)[...] = out
    _vector_done(ctx, api, dst, count, dt.itemsize, lambda: f"{dst.buffer} = {a.buffer} {api} {b.buffer}", a, b,
                 integer=dt.kind in "iu")


def Sub(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = src0 - src1, rounded in the common dtype (integers wrap)."""
    _binary("Sub", lambda x, y, dt: np.subtract(x, y), dst, src0, src1, count)


def Div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = src0 / src1, correctly rounded in the common dtype (module doc); integers (the 950) truncate."""
    _binary("Div", divide, dst, src0, src1, count)


def And(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """Bitwise AND of integer elements."""
    _binary("And", lambda x, y, dt: np.bitwise_and(x, y), dst, src0, src1, count)


def Or(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """Bitwise OR of integer elements."""
    _binary("Or", lambda x, y, dt: np.bitwise_or(x, y), dst, src0, src1, count)


# --- a tensor and a scalar --------------------------------------------------------------------------------------
def _with_scalar(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, scalar: Any, count: int,
                 scalar_first: bool = False) -> None:
    _check_local(api, dst, src)
    dt = same_dtype(api, dst, src)
    ctx = dst.ctx
    check_dtype(ctx, api, _tile_of(dst, src), dt)
    count = int(count)
    s = _scalar(dt, scalar)
    x = _span(src, count, api, False)
    with np.errstate(all="ignore"):
        out = fn(np.full_like(x, s), x, dt) if scalar_first else fn(x, np.full_like(x, s), dt)
    _span(dst, count, api, True)[...] = out
    text = (lambda: f"{dst.buffer} = {_show(s)} {api} {src.buffer}") if scalar_first else \
        (lambda: f"{dst.buffer} = {src.buffer} {api} {_show(s)}")
    _vector_done(ctx, api, dst, count, dt.itemsize, text, src, integer=dt.kind in "iu")


def _scalar_form(api: str, fn: Any, dst: LocalTensor, a: Any, b: Any, count: int) -> None:
    """``Subs``/``Divs``: ``(dst, src, scalar, count)`` or, scalar first, ``(dst, scalar, src, count)``."""
    if isinstance(a, LocalTensor):
        _with_scalar(api, fn, dst, a, b, count)
    else:
        _with_scalar(api, fn, dst, b, a, count, scalar_first=True)


def Subs(dst: LocalTensor, src0: Any, src1: Any, count: int) -> None:
    """dst = src - scalar (``Subs(dst, src, scalar, count)``) or scalar - src (``Subs(dst, scalar, src, count)``),
    rounded in dst's dtype. The count form exists on the Ascend950 only."""
    _scalar_form("Subs", lambda x, y, dt: np.subtract(x, y), dst, src0, src1, count)


def Divs(dst: LocalTensor, src0: Any, src1: Any, count: int) -> None:
    """dst = src / scalar or scalar / src (as :func:`Subs`), correctly rounded in dst's dtype. Ascend950 only."""
    _scalar_form("Divs", divide, dst, src0, src1, count)


def LeakyRelu(dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    """dst = src where src >= 0, else src * scalar (the product rounded in dst's dtype; NaN stays NaN)."""
    _with_scalar("LeakyRelu", lambda x, s, dt: np.where(x >= 0, x, np.multiply(x, s)), dst, src, scalar, count)


def Axpy(dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    """dst = src * scalar + dst (``Axpy(LocalTensor<T> dst, LocalTensor<U> src, U scalar, count)``; (T, U) is
    (half, half), (float, float) or (float, half); the 950 adds bfloat16 and 64-bit integers). Floating point: one
    fused rounding to T (module doc); integers wrap."""
    _check_local("Axpy", dst, src)
    ctx = dst.ctx
    t, u = dst.dtype, src.dtype
    check_dtype(ctx, "Axpy", _tile_of(dst, src), (t, u))
    count = int(count)
    s = _scalar(u, scalar)
    x = _span(src, count, "Axpy", False)
    acc = _span(dst, count, "Axpy", False)
    with np.errstate(all="ignore"):
        if t.kind in "iu":
            out = np.add(acc, np.multiply(x, s))
        else:
            out = round_once(acc.astype(FLOAT64) + x.astype(FLOAT64) * np.float64(s), t)
    _span(dst, count, "Axpy", True)[...] = out
    _vector_done(ctx, "Axpy", dst, count, max(t.itemsize, u.itemsize),
                 lambda: f"{dst.buffer} += {src.buffer} * {_show(s)}", src, reads=(src, dst), integer=t.kind in "iu")


#: The names the C++ front end's translated code calls (``cxx.kernel._namespace``).
NAMESPACE: dict[str, Any] = {n: globals()[n] for n in __all__ if n not in ("DTYPES", "NAMESPACE")}

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

from ..base.platform import NpuArch
from ..dtypes import bfloat16
from . import sanitizer
from .issue import check_local as _check_local
from .issue import show as _show
from .issue import tile_of as _tile_of
from .issue import ub_operand as _span
from .issue import vector_done as _vector_done
from .numerics import RoundMode, cast
from .numerics import scalar as _scalar
from .tensor import LocalTensor

__all__ = ["Abs", "And", "Axpy", "Div", "Divs", "Exp", "LeakyRelu", "Ln", "Or", "Reciprocal", "Relu", "Rsqrt",
           "Sqrt", "Sub", "Subs", "DTYPES", "NAMESPACE"]

_H, _F, _BF = np.dtype(np.float16), np.dtype(np.float32), np.dtype(bfloat16)
_I8, _U8, _I16, _U16 = (np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))
_I32, _U32, _I64, _U64 = (np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
_F64 = np.dtype(np.float64)


def _s(*ts: Any) -> frozenset[Any]:
    return frozenset(ts)


_HF = _s(_H, _F)
#: Atlas A2/A3 (``dav_c220``): the count form's static_assert / ASCENDC_ASSERT lists.
_A2 = {"Sub": _s(_H, _F, _I16, _I32), "Div": _HF, "And": _s(_I16, _U16, _I32, _U32), "Or": _s(_I16, _U16, _I32, _U32),
       "Abs": _HF, "Exp": _HF, "Ln": _HF, "Sqrt": _HF, "Rsqrt": _HF, "Reciprocal": _HF, "Relu": _s(_H, _F, _I32),
       "LeakyRelu": _HF, "Axpy": _s((_H, _H), (_F, _F), (_F, _H)), "Subs": _s(), "Divs": _s(),
       "Log": _HF, "Sigmoid": _HF, "Tanh": _HF, "Erf": _HF}
#: Ascend310P (``dav_m200``): as A2/A3, but And/Or of 16-bit types only.
_310P = {**_A2, "And": _s(_I16, _U16), "Or": _s(_I16, _U16)}
#: Ascend950 (``dav_3510``, count form; complex types are not modelled here, integer Reciprocal neither).
_950 = {"Sub": _s(_U8, _I8, _H, _U16, _I16, _BF, _U32, _I32, _F, _I64, _U64),
        "Div": _s(_U16, _I16, _U32, _I32, _H, _F, _I64, _U64),
        "And": _s(_U8, _I8, _I16, _U16, _U32, _I32, _I64, _U64), "Or": _s(_U8, _I8, _I16, _U16, _U32, _I32, _I64, _U64),
        "Abs": _s(_I8, _H, _I16, _F, _I32, _I64), "Exp": _HF, "Ln": _HF, "Sqrt": _HF, "Rsqrt": _HF, "Reciprocal": _HF,
        "Relu": _s(_H, _F, _I32, _I64), "LeakyRelu": _HF,
        "Axpy": _s((_H, _H), (_F, _F), (_BF, _BF), (_F, _H), (_I64, _I64), (_U64, _U64)),
        "Subs": _s(_H, _BF, _F, _I16, _I32, _I64, _U64), "Divs": _s(_H, _F, _I64, _U64),
        "Log": _HF, "Sigmoid": _HF, "Tanh": _HF, "Erf": _HF}

#: Element types each instruction's count form takes, by architecture (asc-devkit @ 82b89a15, see the module doc).
#: Atlas training (910A, ``dav_c100``) has no dtype assert in its implementation: the 310P lists are used for it.
DTYPES: dict[NpuArch, dict[str, frozenset[Any]]] = {
    NpuArch.DAV_1001: _310P, NpuArch.DAV_2002: _310P, NpuArch.DAV_2201: _A2, NpuArch.DAV_3002: _A2,
    NpuArch.DAV_3510: _950,
}
_ONLY_950 = "the count form of Subs/Divs is implemented for the Ascend950 (dav_3510) only"


def _check(ctx: Any, api: str, tile: int | None, dtype: Any) -> None:
    key = ("math", api, dtype)
    if key in ctx.api_checked:
        return
    table = DTYPES.get(ctx.soc.npu_arch, _A2)
    sanitizer.check_api_dtype(ctx, api, ctx.current_tile if tile is None else tile, dtype, table[api], _ONLY_950)
    ctx.api_checked.add(key)


def _round(x64: np.ndarray, dt: np.dtype) -> np.ndarray:
    """A float64 result rounded once to ``dt`` (nearest-even)."""
    return x64 if dt == _F64 else cast(x64, dt, RoundMode.CAST_RINT)


def _same(api: str, *ts: LocalTensor) -> np.dtype:
    dt = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != dt:
            raise TypeError(f"{api}: operands must share one dtype, got {', '.join(str(x.dtype) for x in ts)}")
    return dt


# --- one source -------------------------------------------------------------------------------------------------
def _unary(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, count: int) -> None:
    _check_local(api, dst, src)
    dt = _same(api, dst, src)
    ctx = dst.ctx
    _check(ctx, api, _tile_of(dst, src), dt)
    count = int(count)
    with np.errstate(all="ignore"):
        out = fn(_span(src, count, api, False), dt)
    _span(dst, count, api, True)[...] = out
    _vector_done(ctx, api, dst, count, dt.itemsize, lambda: f"{dst.buffer} = {api}({src.buffer})", src,
                 integer=dt.kind in "iu")


def _f64(fn: Any) -> Any:
    """An elementwise float64 function, rounded once to the instruction's dtype."""
    return lambda x, dt: _round(fn(x.astype(_F64)), dt)


def Abs(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = |src| (exact; integers wrap: the most negative value stays itself)."""
    _unary("Abs", lambda x, dt: np.abs(x), dst, src, count)


def Exp(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = e^src, correctly rounded in dst's dtype (module doc: float64, one rounding)."""
    _unary("Exp", _f64(np.exp), dst, src, count)


def Ln(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = ln(src) (natural log; ln 0 = -inf, ln of a negative = NaN), correctly rounded in dst's dtype."""
    _unary("Ln", _f64(np.log), dst, src, count)


def Sqrt(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = sqrt(src) (NaN for a negative, -0 for -0), correctly rounded in dst's dtype."""
    _unary("Sqrt", _f64(np.sqrt), dst, src, count)


def Rsqrt(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = 1 / sqrt(src) (inf for +0, -inf for -0), rounded once to dst's dtype."""
    _unary("Rsqrt", _f64(lambda x: 1.0 / np.sqrt(x)), dst, src, count)


def Reciprocal(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = 1 / src (±inf for ±0), correctly rounded in dst's dtype."""
    _unary("Reciprocal", _f64(lambda x: 1.0 / x), dst, src, count)


def Relu(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """dst = max(src, 0) (NaN propagates, UNCONFIRMED on device; ``Relu(-0)`` keeps numpy's max(-0, 0))."""
    _unary("Relu", lambda x, dt: np.maximum(x, x.dtype.type(0)), dst, src, count)


# --- two sources ------------------------------------------------------------------------------------------------
def _binary(api: str, fn: Any, dst: LocalTensor, a: LocalTensor, b: LocalTensor, count: int) -> None:
    _check_local(api, dst, a, b)
    dt = _same(api, dst, a, b)
    ctx = dst.ctx
    _check(ctx, api, _tile_of(dst, a, b), dt)
    count = int(count)
    x, y = _span(a, count, api, False), _span(b, count, api, False)
    with np.errstate(all="ignore"):
        out = fn(x, y, dt)
    _span(dst, count, api, True)[...] = out
    _vector_done(ctx, api, dst, count, dt.itemsize, lambda: f"{dst.buffer} = {a.buffer} {api} {b.buffer}", a, b,
                 integer=dt.kind in "iu")


def _divide(x: np.ndarray, y: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu":                       # C's truncation toward zero, wrapping; x / 0 -> 0 (UNCONFIRMED)
        q, r = np.floor_divide(x, y), np.remainder(x, y)      # numpy: MIN // -1 wraps to MIN, x // 0 == x % 0 == 0
        if dt.kind == "i":                                     # floor -> truncation: one up where the signs differ
            q = q + ((r != 0) & ((x < 0) != (y < 0))).astype(dt)
        return q.astype(dt)
    return _round(x.astype(_F64) / y.astype(_F64), dt)


def Sub(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = src0 - src1, rounded in the common dtype (integers wrap)."""
    _binary("Sub", lambda x, y, dt: np.subtract(x, y), dst, src0, src1, count)


def Div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = src0 / src1, correctly rounded in the common dtype (module doc); integers (the 950) truncate."""
    _binary("Div", _divide, dst, src0, src1, count)


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
    dt = _same(api, dst, src)
    ctx = dst.ctx
    _check(ctx, api, _tile_of(dst, src), dt)
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
    _scalar_form("Divs", _divide, dst, src0, src1, count)


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
    _check(ctx, "Axpy", _tile_of(dst, src), (t, u))
    count = int(count)
    s = _scalar(u, scalar)
    x = _span(src, count, "Axpy", False)
    acc = _span(dst, count, "Axpy", False)
    with np.errstate(all="ignore"):
        if t.kind in "iu":
            out = np.add(acc, np.multiply(x, s))
        else:
            out = _round(acc.astype(_F64) + x.astype(_F64) * np.float64(s), t)
    _span(dst, count, "Axpy", True)[...] = out
    _vector_done(ctx, "Axpy", dst, count, max(t.itemsize, u.itemsize),
                 lambda: f"{dst.buffer} += {src.buffer} * {_show(s)}", src, reads=(src, dst), integer=t.kind in "iu")


#: The names the C++ front end's translated code calls (``cxx.kernel._namespace``).
NAMESPACE: dict[str, Any] = {n: globals()[n] for n in __all__ if n not in ("DTYPES", "NAMESPACE")}

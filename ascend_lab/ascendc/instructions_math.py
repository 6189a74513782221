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

from enum import IntEnum
from typing import Any

import numpy as np

from ..base.platform import NpuArch
from ..dtypes import bfloat16
from . import sanitizer
from .core import reserved_ub_bytes
from .instructions import Adds, Cast, Duplicate, Maxs, Mins, Muls, _check_local, _show, _span, _tile_of, _vector_done
from .numerics import RoundMode, cast
from .numerics import scalar as _scalar
from .sanitizer import REPEAT_BYTES
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
       "Log": _HF, "Sigmoid": _HF, "Tanh": _HF}
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
        "Log": _HF, "Sigmoid": _HF, "Tanh": _HF}

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


# --- WholeReduceSum / WholeReduceMax / WholeReduceMin (mask/repeat form) ------------------------------------------
class ReduceOrder(IntEnum):
    """Where WholeReduceMax/Min put the value and its index (AscendC ``ReduceOrder``)."""
    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


_ALL_ORDERS = frozenset(ReduceOrder)
#: WholeReduce* element types and ReduceOrders by architecture (AD ``归约计算/ReduceRepeat.md``, the API's current
#: name: 数据类型, 约束说明). 910A: half and ORDER_VALUE_INDEX only; 310P: half/float, VALUE_INDEX or INDEX_VALUE.
REDUCE_DTYPES: dict[NpuArch, dict[str, frozenset[Any]]] = {
    NpuArch.DAV_1001: {"Sum": _s(_H), "MaxMin": _s(_H), "orders": _s(ReduceOrder.ORDER_VALUE_INDEX)},
    NpuArch.DAV_2002: {"Sum": _HF, "MaxMin": _HF,
                       "orders": _s(ReduceOrder.ORDER_VALUE_INDEX, ReduceOrder.ORDER_INDEX_VALUE)},
    NpuArch.DAV_2201: {"Sum": _HF, "MaxMin": _HF, "orders": _ALL_ORDERS},
    NpuArch.DAV_3002: {"Sum": _HF, "MaxMin": _HF,
                       "orders": _s(ReduceOrder.ORDER_VALUE_INDEX, ReduceOrder.ORDER_ONLY_VALUE)},
    NpuArch.DAV_3510: {"Sum": _s(_H, _F, _I32, _U32), "MaxMin": _s(_I16, _U16, _H, _I32, _U32, _F),
                       "orders": _ALL_ORDERS},
}


def _lanes(mask: Any, per: int) -> np.ndarray:
    """The lanes of a repeat a mask selects: an int (continuous mode: the first ``mask``) or ``[hi... lo]`` words
    (bit mode: ``mask[0]`` bit i = lane i, ``mask[1]`` bit i = lane 64 + i)."""
    if isinstance(mask, (list, tuple, np.ndarray)):
        bits = np.zeros(per, dtype=bool)
        for w, word in enumerate(mask[:2]):
            for i in range(64):
                if w * 64 + i < per and (int(word) >> i) & 1:
                    bits[w * 64 + i] = True
        return bits
    m = int(mask)
    if not 0 <= m <= per:
        raise ValueError(f"a continuous mask selects 0..{per} lanes of a 256-byte repeat here, not {m}")
    return np.arange(per) < m


def _reduce_source(api: str, src: LocalTensor, repeat: int, blk_stride: int, rep_stride: int,
                   per: int) -> np.ndarray:
    """The ``repeat`` x ``per`` elements the repeats read (8 blocks of 32 bytes each, ``blk_stride`` blocks apart,
    repeats ``rep_stride`` blocks apart). The sanitizer sees the whole span from the first to the last read."""
    blk = 32 // src.dtype.itemsize
    r = np.arange(repeat)[:, None]
    lane = np.arange(per)[None, :]
    idx = (r * rep_stride + (lane // blk) * blk_stride) * blk + lane % blk
    span = _span(src, int(idx.max()) + 1, api, False)
    return span[idx]


def _tree_sum(v: np.ndarray) -> np.ndarray:
    """Sum of each row by the binary tree the docs draw (pairs of neighbours, then pairs of pairs ...), every
    addition rounded in the row's dtype."""
    while v.shape[1] > 1:
        v = v[:, 0::2] + v[:, 1::2]
    return v[:, 0]


def _reduce(api: str, dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
            src_blk_stride: int, src_rep_stride: int, order: Any) -> None:
    _check_local(api, dst, src)
    dt = _same(api, dst, src)
    ctx = dst.ctx
    tile = _tile_of(dst, src)
    limits = REDUCE_DTYPES.get(ctx.soc.npu_arch, REDUCE_DTYPES[NpuArch.DAV_2201])
    key = ("math", api, dt, None if order is None else int(order))
    if key not in ctx.api_checked:
        t = ctx.current_tile if tile is None else tile
        sanitizer.check_api_dtype(ctx, api, t, dt, limits["Sum" if api == "WholeReduceSum" else "MaxMin"])
        if order is not None:
            sanitizer.check_api_dtype(ctx, f"{api} with {ReduceOrder(order).name}", t, dt,
                                      limits["MaxMin"] if ReduceOrder(order) in limits["orders"] else _s(),
                                      "another architecture offers it")
        ctx.api_checked.add(key)
    repeat = int(repeat)
    per = REPEAT_BYTES // dt.itemsize
    if repeat == 0:
        return
    lanes = _lanes(mask, per)
    if not lanes.any():
        return
    x = _reduce_source(api, src, repeat, int(src_blk_stride), int(src_rep_stride), per)
    ui = np.dtype(f"u{dt.itemsize}")
    with np.errstate(all="ignore"):
        if api == "WholeReduceSum":
            vals, idx = _tree_sum(np.where(lanes, x, dt.type(0))), None
        else:
            pick = np.argmax if api == "WholeReduceMax" else np.argmin
            fill = np.array(-np.inf if api == "WholeReduceMax" else np.inf).astype(dt) if dt.kind not in "iu" else \
                (np.iinfo(dt).min if api == "WholeReduceMax" else np.iinfo(dt).max)
            masked = np.where(lanes, x, fill)
            idx = pick(masked, axis=1)
            vals = masked[np.arange(repeat), idx]
    o = ReduceOrder.ORDER_ONLY_VALUE if order is None else ReduceOrder(order)
    stride = int(dst_rep_stride)
    if o in (ReduceOrder.ORDER_VALUE_INDEX, ReduceOrder.ORDER_INDEX_VALUE):
        width = 2
    elif o == ReduceOrder.ORDER_ONLY_INDEX:
        width = 4 // dt.itemsize if dt.itemsize < 4 else 1
    else:
        width = 1
    pos = np.arange(repeat) * stride * width
    out = _span(dst, int(pos.max()) + width, api, True)
    if o == ReduceOrder.ORDER_ONLY_VALUE:
        out[pos] = vals
    elif o == ReduceOrder.ORDER_ONLY_INDEX:               # the index as uint32 (A2/A3/950: ReduceRepeat.md)
        words = out.view(np.uint8)
        w = words[:(int(pos.max()) + width) * dt.itemsize].view(np.uint32)
        w[pos * dt.itemsize // 4] = idx.astype(np.uint32)
    else:
        first, second = (0, 1) if o == ReduceOrder.ORDER_VALUE_INDEX else (1, 0)
        out[pos + first] = vals
        out.view(ui)[pos + second] = idx.astype(ui)
    count = repeat * per
    _vector_done(ctx, api, dst, count, dt.itemsize,
                 lambda: f"{dst.buffer} = {api}({src.buffer}, mask {mask}, {repeat} repeats)", src,
                 integer=dt.kind in "iu")


def WholeReduceSum(dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int) -> None:
    """``WholeReduceSum(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride)``: the sum of each
    256-byte repeat's masked lanes (the rest count as 0) by a binary tree of additions rounded in T, written to
    ``dst[r * dstRepStride]``. ``mask``: an int (continuous mode) or two 64-bit words (bit mode). The sanitizer sees
    the whole span between the first and last element read (or written): a gap left by a stride counts as read (or
    written) too."""
    _reduce("WholeReduceSum", dst, src, mask, repeat, dst_rep_stride, src_blk_stride, src_rep_stride, None)


def WholeReduceMax(dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int,
                   order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX) -> None:
    """The largest masked lane of each repeat and its lane index (the smallest index among equal maxima; a NaN is
    the maximum, as numpy's argmax has it -- UNCONFIRMED on device), laid out by ``order``: [value, index] pairs
    (the index's bits as an unsigned integer of T's width) every ``dstRepStride`` pairs, [index, value], the value
    alone, or the index alone as uint32."""
    _reduce("WholeReduceMax", dst, src, mask, repeat, dst_rep_stride, src_blk_stride, src_rep_stride, order)


def WholeReduceMin(dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int,
                   order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX) -> None:
    """The smallest masked lane of each repeat and its index, as :func:`WholeReduceMax`."""
    _reduce("WholeReduceMin", dst, src, mask, repeat, dst_rep_stride, src_blk_stride, src_rep_stride, order)


__all__ += ["ReduceOrder", "REDUCE_DTYPES", "WholeReduceMax", "WholeReduceMin", "WholeReduceSum"]
NAMESPACE.update(ReduceOrder=ReduceOrder, WholeReduceSum=WholeReduceSum, WholeReduceMax=WholeReduceMax,
                 WholeReduceMin=WholeReduceMin)


# --- high-level math API: Log, Sigmoid, Tanh (adv_api; the documented compositions) ---------------------------------
# Where the library composes basic instructions (A2/A3, 310P, 910A), the simulator runs that composition -- the same
# instructions in the same order over the same chunks of the temporary buffer, each rounding in its own dtype and
# each an event of the trace with its own cost row. On the Ascend950 the library runs one register-based loop
# (``__simd_vf__``) that computes in float32 registers and rounds to T once at the store: one event, costed with
# GE-ATT's fit of the whole API (V1 = V2: ``Sigmoid`` perf_param_v1.cpp:410-414, ``Tanh`` :438-442).

_LOG_ARCHS = "the high-level Log exists on A2/A3, 310P and the 950 (adv_api/math/log.h)"


def Log(dst: LocalTensor, src: LocalTensor, count: int | None = None) -> None:
    """``AscendC::Log(dst, src[, calCount])`` (adv_api/math/log.h): the natural logarithm, one ``Ln`` over
    ``calCount`` elements (the whole of src when omitted); on the 950 its own loop, the same correctly rounded
    result here. Not on Atlas training (910A), where the library compiles it to nothing."""
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_1001:
        sanitizer.check_api_dtype(ctx, "Log", ctx.current_tile, dst.dtype, _s(), _LOG_ARCHS)
    _unary("Log", _f64(np.log), dst, src, src.size if count is None else count)


def _stack_buffer(ctx: Any) -> LocalTensor:
    """``PopStackBuffer<uint8_t, TPosition::LCM>``: the UB the TPipe has not allocated (from its 32-byte aligned top
    to the end of UB less the SoC's reserve). UNCONFIRMED in its exact extent; it is not a buffer of the plan, so the
    race checks do not see it."""
    start = -(-ctx.ub_top // 32) * 32
    end = ctx.ub.size - reserved_ub_bytes(ctx.soc)
    return LocalTensor(ctx, np.uint8, start, max(end - start, 0), "stack buffer")


def _vf_once(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """The 950's register loop: ``fn`` over float32 (each step rounded in float32), stored to T (RINT)."""
    _check_local(api, dst, src)
    dt = _same(api, dst, src)
    ctx = dst.ctx
    _check(ctx, api, _tile_of(dst, src), dt)
    count = int(count)
    x = _span(src, count, api, False).astype(_F)
    with np.errstate(all="ignore"):
        y = fn(x)
    _span(dst, count, api, True)[...] = y if dt == _F else cast(y, dt, RoundMode.CAST_RINT)
    _vector_done(ctx, api, dst, count, dt.itemsize, lambda: f"{dst.buffer} = {api}({src.buffer})", src)


def _f32(fn: Any) -> Any:
    """A float32 step whose exact result is rounded once to float32 (Exp, Div)."""
    return lambda *a: fn(*(np.asarray(v, np.float64) for v in a)).astype(_F)


_EXP32, _DIV32 = _f32(np.exp), _f32(np.divide)


def _sigmoid32(x: np.ndarray) -> np.ndarray:
    t = _EXP32(np.multiply(x, _F.type(-1)))
    return _DIV32(np.ones_like(t), np.add(t, _F.type(1)))


def _tanh32(x: np.ndarray) -> np.ndarray:
    c = np.maximum(np.minimum(x, _F.type(8.8)), _F.type(-8.8))
    e = _EXP32(np.multiply(c, _F.type(2)))
    return _DIV32(np.add(e, _F.type(-1)), np.add(e, _F.type(1)))


def _chunks(count: int, split: int) -> list[tuple[int, int]]:
    return [(o, min(split, count - o)) for o in range(0, count, split)]


def Sigmoid(dst: LocalTensor, src: LocalTensor, *args: Any) -> None:
    """``Sigmoid(dst, src[, sharedTmpBuffer][, calCount])`` (adv_api/activation/sigmoid.h): 1 / (1 + e^-x).

    A2/A3, 310P, 910A: the library's composition in T, over chunks of ``sharedTmpBuffer.GetSize() / sizeof(T)``
    elements -- ``Muls(dst, src, -1)``, ``Exp(dst, dst)``, ``Adds(dst, dst, 1)``, ``Duplicate(tmp, 1)``,
    ``Div(dst, tmp, dst)`` (sigmoid_impl.h) -- so a half Sigmoid rounds to half at every step. Without a
    sharedTmpBuffer the library pops its stack buffer (the UB the TPipe left free). Ascend950: one float32 loop
    (sigmoid_3510_impl.h), no temporary buffer."""
    tmp, count = _tmp_and_count(src, args)
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_3510:
        _vf_once("Sigmoid", _sigmoid32, dst, src, count)
        return
    _check_local("Sigmoid", dst, src)
    dt = _same("Sigmoid", dst, src)
    _check(ctx, "Sigmoid", _tile_of(dst, src), dt)
    buf = (tmp if tmp is not None else _stack_buffer(ctx)).ReinterpretCast(dt)
    split = buf.size
    if split == 0:
        raise ValueError("Sigmoid: the temporary buffer holds no element of T (splitSize == 0: the library asserts)")
    for off, n in _chunks(int(count), split):
        d, s = dst[off], src[off]
        Muls(d, s, -1.0, n)
        Exp(d, d, n)
        Adds(d, d, 1.0, n)
        Duplicate(buf, 1.0, n)
        Div(d, buf, d, n)


def Tanh(dst: LocalTensor, src: LocalTensor, *args: Any) -> None:
    """``Tanh(dst, src[, sharedTmpBuffer][, calCount])`` (adv_api/math/tanh.h): (e^2x - 1) / (e^2x + 1) with x
    clipped to [-8.8, 8.8], in float32.

    A2/A3, 310P, 910A: the library's composition (tanh_common_impl.h) over chunks of ``stackSize`` floats --
    the temporary buffer (as float) halved for half (a float copy of the chunk, then the clip buffer), whole for
    float, rounded down to 32-element multiples: [``Cast`` half->float,] ``Mins`` 8.8, ``Maxs`` -8.8, ``Muls`` 2,
    ``Exp``, ``Adds`` -1 (to dst), ``Adds`` 1, ``Div`` [, ``Cast`` float->half]. Ascend950: one float32 loop, the
    same formula (tanh_3510_impl.h, the default TanhConfig -- UNCONFIRMED which of its two algorithms that is)."""
    tmp, count = _tmp_and_count(src, args)
    ctx = dst.ctx
    if ctx.soc.npu_arch == NpuArch.DAV_3510:
        _vf_once("Tanh", _tanh32, dst, src, count)
        return
    _check_local("Tanh", dst, src)
    dt = _same("Tanh", dst, src)
    _check(ctx, "Tanh", _tile_of(dst, src), dt)
    buf = (tmp if tmp is not None else _stack_buffer(ctx)).ReinterpretCast(_F)
    half = dt.itemsize == 2
    stack = buf.size // (2 if half else 1) // 32 * 32
    if stack == 0:
        raise ValueError("Tanh: the temporary buffer is too small (stackSize == 0: the library asserts)")
    conv, clip = (buf, buf[stack]) if half else (None, buf)
    for off, n in _chunks(int(count), stack):
        d, s = dst[off], src[off]
        if half:
            Cast(conv, s, RoundMode.CAST_NONE, n)
            d32, s32 = conv, conv
        else:
            d32, s32 = d, s
        Mins(clip, s32, 8.8, n)
        Maxs(clip, clip, -8.8, n)
        Muls(clip, clip, 2.0, n)
        Exp(clip, clip, n)
        Adds(d32, clip, -1.0, n)
        Adds(clip, clip, 1.0, n)
        Div(d32, d32, clip, n)
        if half:
            Cast(d, conv, RoundMode.CAST_NONE, n)


def _tmp_and_count(src: LocalTensor, args: tuple[Any, ...]) -> tuple[LocalTensor | None, int]:
    """(sharedTmpBuffer, calCount) of the overloads ``(tmp)``, ``(tmp, count)``, ``(count)``, ``()``."""
    tmp = next((a for a in args if isinstance(a, LocalTensor)), None)
    counts = [a for a in args if not isinstance(a, LocalTensor)]
    if len(args) > 2 or len(counts) > 1:
        raise TypeError("takes (dst, src[, sharedTmpBuffer][, calCount])")
    return tmp, int(counts[0]) if counts else src.size


__all__ += ["Log", "Sigmoid", "Tanh"]
NAMESPACE.update(Log=Log, Sigmoid=Sigmoid, Tanh=Tanh)


# --- BlockReduceSum / BlockReduceMax / BlockReduceMin (mask/repeat form) ------------------------------------------
#: BlockReduce* element types by architecture (AD ``归约计算/ReduceDataBlock.md``, the API's current name).
BLOCK_REDUCE_DTYPES: dict[NpuArch, frozenset[Any]] = {
    NpuArch.DAV_1001: _s(_H), NpuArch.DAV_2002: _HF, NpuArch.DAV_2201: _HF, NpuArch.DAV_3002: _HF,
    NpuArch.DAV_3510: _HF,
}


def _block_reduce(api: str, dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                  src_blk_stride: int, src_rep_stride: int) -> None:
    _check_local(api, dst, src)
    dt = _same(api, dst, src)
    ctx = dst.ctx
    key = ("math", api, dt)
    if key not in ctx.api_checked:
        tile = _tile_of(dst, src)
        sanitizer.check_api_dtype(ctx, api, ctx.current_tile if tile is None else tile, dt,
                                  BLOCK_REDUCE_DTYPES.get(ctx.soc.npu_arch, _HF))
        ctx.api_checked.add(key)
    repeat = int(repeat)
    per = REPEAT_BYTES // dt.itemsize
    blk = 32 // dt.itemsize
    lanes = _lanes(mask, per)
    if repeat == 0 or not lanes.any():
        return
    x = _reduce_source(api, src, repeat, int(src_blk_stride), int(src_rep_stride), per).reshape(repeat, 8, blk)
    on = lanes.reshape(8, blk)
    with np.errstate(all="ignore"):
        if api == "BlockReduceSum":
            vals = np.stack([_tree_sum(np.where(on[j], x[:, j], dt.type(0))) for j in range(8)], axis=1)
        else:
            big = api == "BlockReduceMax"
            fill = dt.type(-np.inf if big else np.inf)
            masked = np.where(on[None], x, fill)
            vals = masked.max(axis=2) if big else masked.min(axis=2)
    live = on.any(axis=1)                      # a block with no lane in the mask
    pos = (np.arange(repeat)[:, None] * int(dst_rep_stride) * 8 + np.arange(8)[None, :])
    out = _span(dst, int(pos.max()) + 1, api, True)
    if ctx.soc.npu_arch == NpuArch.DAV_3510:   # the 950 writes the reduction's identity there
        out[pos] = vals
    else:                                      # A2/A3 (and here 310P, 910A): nothing written there
        out[pos[:, live]] = vals[:, live]
    _vector_done(ctx, api, dst, repeat * per, dt.itemsize,
                 lambda: f"{dst.buffer} = {api}({src.buffer}, mask {mask}, {repeat} repeats)", src)


def BlockReduceSum(dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int) -> None:
    """``BlockReduceSum(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)`` (note: repeatTime
    before mask, unlike WholeReduce): each 32-byte block of each repeat summed by a binary tree in T (masked-out
    lanes count as 0), the 8 results of repeat r at ``dst[r * dstRepStride * 8 ...]``. A block with no lane in the
    mask: nothing written on A2/A3 (its old value stays), 0 written on the 950 (ReduceDataBlock.md)."""
    _block_reduce("BlockReduceSum", dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride)


def BlockReduceMax(dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int) -> None:
    """The largest masked lane of each 32-byte block, as :func:`BlockReduceSum` lays them out (-inf written for an
    empty block on the 950; NaN propagates, UNCONFIRMED on device)."""
    _block_reduce("BlockReduceMax", dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride)


def BlockReduceMin(dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int) -> None:
    """The smallest masked lane of each 32-byte block (+inf for an empty block on the 950)."""
    _block_reduce("BlockReduceMin", dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride)


__all__ += ["BLOCK_REDUCE_DTYPES", "BlockReduceMax", "BlockReduceMin", "BlockReduceSum"]
NAMESPACE.update(BlockReduceSum=BlockReduceSum, BlockReduceMax=BlockReduceMax, BlockReduceMin=BlockReduceMin)

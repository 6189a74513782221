"""What the vector instruction modules share: the element-type constants, the count form's dtype lists per
architecture, and the steps every count-form instruction takes (one dtype for all operands, that dtype checked
against the SoC's list, the result computed and rounded as :mod:`.instructions_math` states).

They live here, not in :mod:`.instructions_math`, because :mod:`.instructions_adv`, :mod:`.instructions_reduce` and
:mod:`.mask` (the masked/repeat form of the same instructions) compute with the same numerics and check against the
same lists: one definition, imported by name, instead of four modules reaching into each other's private helpers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.platform import NpuArch
from ..dtypes import bfloat16
from . import sanitizer
from .issue import check_local as _check_local
from .issue import tile_of as _tile_of
from .issue import ub_operand as _span
from .issue import vector_done as _vector_done
from .numerics import RoundMode, cast
from .tensor import LocalTensor

__all__ = ["HALF", "FLOAT", "BFLOAT16", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64",
           "FLOAT64", "HALF_OR_FLOAT", "DTYPES", "dtype_set", "check_dtype", "round_once", "same_dtype", "unary",
           "via_float64", "divide"]

#: The element types by their C++ names' meaning (numpy dtypes; bfloat16 from ml_dtypes).
HALF, FLOAT, BFLOAT16 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(bfloat16)
INT8, UINT8, INT16, UINT16 = (np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))
INT32, UINT32, INT64, UINT64 = (np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
FLOAT64 = np.dtype(np.float64)


def dtype_set(*ts: Any) -> frozenset[Any]:
    """The element types (or (T, U) pairs) one instruction accepts: a frozenset, so the tables cannot drift."""
    return frozenset(ts)


#: The most common list: half and float only.
HALF_OR_FLOAT = dtype_set(HALF, FLOAT)
#: Atlas A2/A3 (``dav_c220``): the count form's static_assert / ASCENDC_ASSERT lists.
_A2 = {"Sub": dtype_set(HALF, FLOAT, INT16, INT32), "Div": HALF_OR_FLOAT,
       "And": dtype_set(INT16, UINT16, INT32, UINT32), "Or": dtype_set(INT16, UINT16, INT32, UINT32),
       "Abs": HALF_OR_FLOAT, "Exp": HALF_OR_FLOAT, "Ln": HALF_OR_FLOAT, "Sqrt": HALF_OR_FLOAT, "Rsqrt": HALF_OR_FLOAT,
       "Reciprocal": HALF_OR_FLOAT, "Relu": dtype_set(HALF, FLOAT, INT32), "LeakyRelu": HALF_OR_FLOAT,
       "Axpy": dtype_set((HALF, HALF), (FLOAT, FLOAT), (FLOAT, HALF)), "Subs": dtype_set(), "Divs": dtype_set(),
       "Log": HALF_OR_FLOAT, "Sigmoid": HALF_OR_FLOAT, "Tanh": HALF_OR_FLOAT, "Erf": HALF_OR_FLOAT}
#: Ascend310P (``dav_m200``): as A2/A3, but And/Or of 16-bit types only.
_310P = {**_A2, "And": dtype_set(INT16, UINT16), "Or": dtype_set(INT16, UINT16)}
#: Ascend950 (``dav_3510``, count form; complex types are not modelled here, integer Reciprocal neither).
_950 = {"Sub": dtype_set(UINT8, INT8, HALF, UINT16, INT16, BFLOAT16, UINT32, INT32, FLOAT, INT64, UINT64),
        "Div": dtype_set(UINT16, INT16, UINT32, INT32, HALF, FLOAT, INT64, UINT64),
        "And": dtype_set(UINT8, INT8, INT16, UINT16, UINT32, INT32, INT64, UINT64),
        "Or": dtype_set(UINT8, INT8, INT16, UINT16, UINT32, INT32, INT64, UINT64),
        "Abs": dtype_set(INT8, HALF, INT16, FLOAT, INT32, INT64), "Exp": HALF_OR_FLOAT, "Ln": HALF_OR_FLOAT,
        "Sqrt": HALF_OR_FLOAT, "Rsqrt": HALF_OR_FLOAT, "Reciprocal": HALF_OR_FLOAT,
        "Relu": dtype_set(HALF, FLOAT, INT32, INT64), "LeakyRelu": HALF_OR_FLOAT,
        "Axpy": dtype_set((HALF, HALF), (FLOAT, FLOAT), (BFLOAT16, BFLOAT16), (FLOAT, HALF), (INT64, INT64),
                          (UINT64, UINT64)),
        "Subs": dtype_set(HALF, BFLOAT16, FLOAT, INT16, INT32, INT64, UINT64),
        "Divs": dtype_set(HALF, FLOAT, INT64, UINT64),
        "Log": HALF_OR_FLOAT, "Sigmoid": HALF_OR_FLOAT, "Tanh": HALF_OR_FLOAT, "Erf": HALF_OR_FLOAT}

#: Element types each instruction's count form takes, by architecture (asc-devkit @ 82b89a15, see
#: :mod:`.instructions_math`). Atlas training (910A, ``dav_c100``) has no dtype assert in its implementation: the
#: 310P lists are used for it.
DTYPES: dict[NpuArch, dict[str, frozenset[Any]]] = {
    NpuArch.DAV_1001: _310P, NpuArch.DAV_2002: _310P, NpuArch.DAV_2201: _A2, NpuArch.DAV_3002: _A2,
    NpuArch.DAV_3510: _950,
}
_ONLY_950 = "the count form of Subs/Divs is implemented for the Ascend950 (dav_3510) only"


def check_dtype(ctx: Any, api: str, tile: int | None, dtype: Any) -> None:
    """Report ``dtype`` (or a (T, U) pair) outside ``api``'s list on this SoC as an ``unsupported-on-soc``
    finding -- once per (api, dtype) and launch, since a kernel issues the same instruction every tile."""
    key = ("math", api, dtype)
    if key in ctx.api_checked:
        return
    table = DTYPES.get(ctx.soc.npu_arch, _A2)
    sanitizer.check_api_dtype(ctx, api, ctx.current_tile if tile is None else tile, dtype, table[api], _ONLY_950)
    ctx.api_checked.add(key)


def round_once(x64: np.ndarray, dt: np.dtype) -> np.ndarray:
    """A float64 result rounded once to ``dt`` (nearest-even): the numerics model's single rounding."""
    return x64 if dt == FLOAT64 else cast(x64, dt, RoundMode.CAST_RINT)


def same_dtype(api: str, *ts: LocalTensor) -> np.dtype:
    """The one dtype all operands share (the count form has no mixed-type variant); a TypeError otherwise."""
    dt = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != dt:
            raise TypeError(f"{api}: operands must share one dtype, got {', '.join(str(x.dtype) for x in ts)}")
    return dt


def unary(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """A one-source count-form instruction: operands checked, ``fn(src_span, dtype)`` written to dst's first
    ``count`` elements, the PIPE_V event recorded -- the steps Exp, Ln, Abs, Log ... all take."""
    _check_local(api, dst, src)
    dt = same_dtype(api, dst, src)
    ctx = dst.ctx
    check_dtype(ctx, api, _tile_of(dst, src), dt)
    count = int(count)
    with np.errstate(all="ignore"):
        out = fn(_span(src, count, api, False), dt)
    _span(dst, count, api, True)[...] = out
    _vector_done(ctx, api, dst, count, dt.itemsize, lambda: f"{dst.buffer} = {api}({src.buffer})", src,
                 integer=dt.kind in "iu")


def via_float64(fn: Any) -> Any:
    """An elementwise float64 function, rounded once to the instruction's dtype (the model for Exp, Ln, Sqrt ...:
    the hardware's exact approximations are not public)."""
    return lambda x, dt: round_once(fn(x.astype(FLOAT64)), dt)


def divide(x: np.ndarray, y: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``x / y`` in ``dt``: floats correctly rounded (via float64), integers truncated toward zero as C does."""
    if dt.kind in "iu":                       # C's truncation toward zero, wrapping; x / 0 -> 0 (UNCONFIRMED)
        q, r = np.floor_divide(x, y), np.remainder(x, y)      # numpy: MIN // -1 wraps to MIN, x // 0 == x % 0 == 0
        if dt.kind == "i":                                     # floor -> truncation: one up where the signs differ
            q = q + ((r != 0) & ((x < 0) != (y < 0))).astype(dt)
        return q.astype(dt)
    return round_once(x.astype(FLOAT64) / y.astype(FLOAT64), dt)

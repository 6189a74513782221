"""The AscendC instructions the kernels use, each one numpy operation over a whole tile.

Every instruction (1) runs the sanitizer checks on its operands (:mod:`.sanitizer`), (2) computes in its
own dtype -- ``Muls`` on half rounds to half, ``Cast`` uses the requested ``RoundMode`` (:mod:`.numerics`)
-- and (3) occupies its pipe for the cycles the cost model gives (``CoreContext.issue``), recording an
event when tracing. Pipes: DataCopy/DataCopyPad GM->UB on MTE2, UB->GM on MTE3, everything else on V.

This module holds the elementwise arithmetic (Muls, Adds, Maxs, Mins, Mul, Add, Min, Max, Not, Duplicate, Cast) and
PipeBarrier, and re-exports the others, so ``ascendc.instructions.X`` names every instruction:

=====================  =========================================================================================
:mod:`.issue`          what every instruction shares: operand checks, cycles (bank conflicts), the trace event
:mod:`.datacopy`       DataCopy, DataCopyPad and their parameter structs (GM <-> UB on MTE2/MTE3)
:mod:`.compare`        Compare, CompareScalar, Select (bit-masks), CMPMODE, SELMODE
:mod:`.broadcast`      Broadcast and GetBroadCastMaxMinTmpSize
=====================  =========================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import sanitizer
from .arith_dtypes import check_arith
from .broadcast import Broadcast, GetBroadCastMaxMinTmpSize
from .compare import CMPMODE, SELMODE, Compare, CompareScalar, Select
from .core import current
from .cost_model import cast_fit
from .datacopy import DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams
from .issue import check_local, show, tile_of, ub_operand, vector_done
from .numerics import RoundMode, cast
from .numerics import scalar as _scalar
from .sanitizer import REPEAT_BYTES
from .tensor import LocalTensor

__all__ = [
    "CMPMODE", "PIPES", "REPEAT_BYTES", "SELMODE", "Add", "Adds", "Broadcast", "Cast", "Compare", "CompareScalar",
    "DataCopy", "DataCopyExtParams", "DataCopyPad", "DataCopyPadExtParams", "DataCopyPadParams", "DataCopyParams",
    "Duplicate", "GetBroadCastMaxMinTmpSize", "Max", "Maxs", "Min", "Mins", "Mul", "Muls", "Not", "PipeBarrier",
    "Select",
]

def _unary_scalar(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    check_local(api, dst, src)
    dt = dst.dtype
    if src.dtype is not dt and src.dtype != dt:
        raise TypeError(f"{api}: dst is {dst.dtype} but src is {src.dtype}; they must match")
    ctx = dst.ctx
    if ("arith", api, dt) not in ctx.api_checked:
        check_arith(ctx, api, tile_of(dst, src), dt)
    s = _scalar(dt, scalar)
    fn(ub_operand(src, count, api, False), s, out=ub_operand(dst, count, api, True))
    vector_done(dst.ctx, api, dst, count, dt.itemsize,
                 lambda: f"{dst.buffer} = {src.buffer} {api} {show(s)}", src, integer=dt.kind in "iu")


def Muls(dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    """dst = src * scalar, rounded to dst's dtype (the scalar is first converted to that dtype)."""
    _unary_scalar("Muls", np.multiply, dst, src, scalar, count)


def Adds(dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    """dst = src + scalar, rounded to dst's dtype."""
    _unary_scalar("Adds", np.add, dst, src, scalar, count)


def Maxs(dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    """dst = max(src, scalar) elementwise."""
    _unary_scalar("Maxs", np.maximum, dst, src, scalar, count)


def Mins(dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    """dst = min(src, scalar) elementwise."""
    _unary_scalar("Mins", np.minimum, dst, src, scalar, count)


def _binary(api: str, fn: Any, dst: LocalTensor, a: LocalTensor, b: LocalTensor, count: int) -> None:
    if not (dst.__class__ is a.__class__ is b.__class__ is LocalTensor):
        check_local(api, dst, a, b)
    if not (a.dtype == b.dtype == dst.dtype):
        raise TypeError(f"{api}: operands must share one dtype, got {dst.dtype}, {a.dtype}, {b.dtype}")
    ctx = dst.ctx
    if ("arith", api, dst.dtype) not in ctx.api_checked:
        check_arith(ctx, api, tile_of(dst, a, b), dst.dtype)
    fn(ub_operand(a, count, api, False), ub_operand(b, count, api, False), out=ub_operand(dst, count, api, True))
    vector_done(dst.ctx, api, dst, count, dst.dtype.itemsize, lambda: f"{dst.buffer} = {a.buffer} {api} {b.buffer}",
                 a, b)


def Mul(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = src0 * src1, rounded to the common dtype."""
    _binary("Mul", np.multiply, dst, src0, src1, count)


def Add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = src0 + src1, rounded to the common dtype."""
    _binary("Add", np.add, dst, src0, src1, count)


def Min(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = min(src0, src1) elementwise (float, half, int32...). A NaN operand gives NaN, as ``Mins`` does
    (UNCONFIRMED on device: the vector unit's NaN and signed-zero choice is not documented)."""
    _binary("Min", np.minimum, dst, src0, src1, count)


def Max(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """dst = max(src0, src1) elementwise; NaN propagates as in :func:`Min` (UNCONFIRMED on device)."""
    _binary("Max", np.maximum, dst, src0, src1, count)


def Not(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """Bitwise NOT over ``count`` int16/uint16 elements (used here to invert a compare bit-mask)."""
    check_local("Not", dst, src)
    if dst.dtype.itemsize != 2 or dst.dtype.kind not in "iu":
        raise TypeError(f"Not works on int16/uint16 tensors, not {dst.dtype}")
    np.invert(ub_operand(src, count, "Not", False), out=ub_operand(dst, count, "Not", True))
    vector_done(dst.ctx, "Not", dst, count, 2, lambda: f"{dst.buffer} = ~{src.buffer}", src)


def Duplicate(dst: LocalTensor, scalar: Any, count: int) -> None:
    """Fill the first ``count`` elements of dst with the scalar (converted to dst's dtype)."""
    if dst.__class__ is not LocalTensor:
        check_local("Duplicate", dst)
    ctx = dst.ctx
    if ("arith", "Duplicate", dst.dtype) not in ctx.api_checked:
        check_arith(ctx, "Duplicate", dst.tile, dst.dtype)
    s = scalar if type(scalar) is dst.dtype.type else _scalar(dst.dtype, scalar)
    ub_operand(dst, count, "Duplicate", True).fill(s)          # (fill: cheaper than [...] = s for a tile)
    vector_done(dst.ctx, "Duplicate", dst, count, dst.dtype.itemsize, lambda: f"{dst.buffer} = {show(s)}")


def Cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, count: int) -> None:
    """Convert with AscendC's RoundMode (CAST_NONE, CAST_RINT, CAST_ROUND, CAST_TRUNC, ...), saturating
    float->int conversions."""
    check_local("Cast", dst, src)
    mode = RoundMode(round_mode)
    s = ub_operand(src, count, "Cast", False)                     # the read first (sanitizer.ub_access)
    ub_operand(dst, count, "Cast", True)[...] = cast(s, dst.dtype, mode)
    width = max(dst.dtype.itemsize, src.dtype.itemsize)     # the repeat's lanes; the cost row is the direction's
    vector_done(dst.ctx, "Cast", dst, count, width,
                 lambda: f"{dst.buffer} = {mode.name}({src.buffer}: {src.dtype}->{dst.dtype})", src,
                 cast_dir=cast_fit(src.dtype, dst.dtype))



PIPES = ("PIPE_V", "PIPE_MTE2", "PIPE_MTE3", "PIPE_ALL")


def PipeBarrier(pipe: str = "PIPE_V") -> None:
    """``PipeBarrier<pipe>()``. A one-pipe barrier (PIPE_V, PIPE_MTE2, PIPE_MTE3) changes nothing here: in-order
    issue per pipe already orders that pipe's instructions in this simulator. ``PIPE_ALL`` drains every pipe
    (ascendc_facts §1.2): all pipes wait for the slowest, and for the sanitizer every buffer outside a queue is
    free to the next pipe that touches it (no ``ub-race`` across it)."""
    if pipe not in PIPES:
        raise ValueError(f"PipeBarrier takes one of {', '.join(PIPES)}, got {pipe!r} (PIPE_S is not allowed)")
    if pipe == "PIPE_ALL":
        ctx = current()
        ctx.barrier_all()
        sanitizer.pipe_barrier_all(ctx)

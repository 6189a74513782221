"""The AscendC instructions the kernels use, each one numpy operation over a whole tile.

Every instruction (1) runs the sanitizer checks on its operands (:mod:`.sanitizer`), (2) computes in its
own dtype -- ``Muls`` on half rounds to half, ``Cast`` uses the requested ``RoundMode`` (:mod:`.numerics`)
-- and (3) occupies its pipe for the cycles the cost model gives (``CoreContext.issue``), recording an
event when tracing. Pipes: DataCopy/DataCopyPad GM->UB on MTE2, UB->GM on MTE3, everything else on V.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from typing import Any

import numpy as np

from ..base.platform import NpuArch, SocInfo
from . import sanitizer
from .core import CoreContext, current, reserved_ub_bytes, select_scratch
from .cost_model import cast_fit, compare_row, ge_att_table, vector_cycles
from .numerics import RoundMode, cast
from .numerics import scalar as _scalar
from .sanitizer import REPEAT_BYTES
from .tensor import GlobalTensor, LocalTensor, _typed_view
from .ub_banks import count_form


class CMPMODE(IntEnum):
    """Comparison of CompareScalar/Compare (AscendC enum values)."""
    LT = 0
    GT = 1
    EQ = 2
    LE = 3
    GE = 4
    NE = 5


class SELMODE(IntEnum):
    """How Select reads its mask and second operand (AscendC enum values)."""
    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2


# numpy's bit (un)packing without its __array_function__ dispatcher: called with keywords on every tile, the
# dispatcher costs more than packing a tile (0.9 us of 1.6 us for 8K elements); plain arrays need no dispatch
_packbits = getattr(np.packbits, "_implementation", np.packbits)
_unpackbits = getattr(np.unpackbits, "_implementation", np.unpackbits)

_CMP = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
        CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


@dataclass(slots=True)
class DataCopyParams:
    """``DataCopyParams{blockCount, blockLen, srcStride, dstStride}`` -- for DataCopyPad, blockLen is in bytes."""
    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0


DataCopyExtParams = DataCopyParams


@dataclass(slots=True)
class DataCopyPadParams:
    """``DataCopyPadParams{isPad, leftPadding, rightPadding, paddingValue}``."""
    isPad: bool = False
    leftPadding: int = 0
    rightPadding: int = 0
    paddingValue: Any = 0


DataCopyPadExtParams = DataCopyPadParams


def _tile_of(*tensors: Any) -> int | None:
    for t in tensors:
        tile = getattr(t, "tile", None)
        if tile is not None:
            return tile
    return None


#: Entries a SoC's vector-cost memo may hold before it starts afresh (a kernel uses a few dozen layouts).
_MEMO_LIMIT = 1 << 16


def _banked_cost(arch: NpuArch, api: str, dst: LocalTensor, count: int, width: int, reads: tuple[Any, ...],
                 mask: LocalTensor | None, dst_mask: bool, integer: bool = False,
                 cast_dir: tuple[str, str] | None = None) -> tuple[float, int]:
    """(cycles, beats added by bank conflicts) of a count-form instruction under the UB bank rules
    (:mod:`.ub_banks`): ``dst`` written (a bit-mask when ``dst_mask``), each of ``reads`` read at its own element
    width, ``mask`` read one bit per element; 256 / ``width`` elements per repeat; ``integer``: the operands are of
    an integer type (its own cost row where there is one, :func:`.cost_model.vector_cycles`); ``cast_dir``: the
    direction whose fit a Cast uses (:func:`.cost_model.cast_fit`)."""
    ops = [(dst.offset, 1 if dst_mask else dst.dtype.itemsize << 3, True)]
    for s in reads:
        ops.append((s.offset, s.dtype.itemsize << 3, False))
    if mask is not None:
        ops.append((mask.offset, 1, False))
    beats = count_form(arch, REPEAT_BYTES // width, count, tuple(ops))
    table = ge_att_table(arch)                        # GE-ATT V2 on the Ascend950, V1 elsewhere
    if beats.conflicts:
        return vector_cycles(api, width, count, beats.per_repeat, integer, cast_dir, table), beats.conflicts
    return vector_cycles(api, width, count, 1.0, integer, cast_dir, table), 0


def _vector_done(ctx: CoreContext, api: str, dst: LocalTensor, count: int, width: int, detail: Any,
                 *srcs: Any, out_bytes: int | None = None, reads: tuple[Any, ...] | None = None,
                 mask: LocalTensor | None = None, integer: bool = False,
                 cast_dir: tuple[str, str] | None = None, row: str | None = None) -> None:
    """Occupy PIPE_V for the instruction's cycles; ``detail`` is a callable, only evaluated when tracing.

    ``width`` and ``integer`` (the operands are of an integer type) choose the cost row: int32 and float32 have the
    same width but not always the same cost (GE-ATT V1 fits int32 ``Muls`` apart, :data:`.cost_model.INTEGER_ROWS`);
    ``cast_dir`` is the direction whose fit a Cast uses -- f16->f32 and f32->f16 cost differently at one layout;
    ``row`` the cost row when it is not ``api``'s own (a compare's mode/alignment row, :func:`.cost_model.compare_row`:
    GT and LT cost differently at one layout). The event keeps ``api`` as its name.

    The cycles include the beats UB bank conflicts add (:mod:`.ub_banks`), from the UB addresses of ``dst`` (a
    bit-mask when ``out_bytes`` is given), of the tensors read (``reads``, default ``srcs``) and of a bit-mask read
    per repeat (``mask``); ``srcs`` also name the tile. The event records the added beats (``bank_conflicts``)."""
    memo = ctx.cost.vector_memo
    cost = api if row is None else row
    if memo is None:                                   # no bank model on this SoC
        conflicts = 0
        start, end = ctx.issue("V", vector_cycles(cost, width, count, 1.0, integer, cast_dir, ctx.cost.table))
    else:
        # the answer depends only on these (flat key: this runs for every vector instruction of every tile)
        rd = srcs if reads is None else reads
        m = -1 if mask is None else mask.offset
        n = len(rd)
        if n == 0:                                     # Duplicate
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m)
        elif n == 1:
            s = rd[0]
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m, s.offset,
                   s.dtype.itemsize)
        elif n == 2:
            s, t = rd
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m, s.offset,
                   s.dtype.itemsize, t.offset, t.dtype.itemsize)
        else:
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m,
                   *[x for s in rd for x in (s.offset, s.dtype.itemsize)])
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            hit = memo[key] = _banked_cost(ctx.soc.npu_arch, cost, dst, count, width, rd, mask, out_bytes is not None,
                                           integer, cast_dir)
        cycles, conflicts = hit
        start, end = ctx.issue("V", cycles)
    if ctx.record:
        values = None
        if ctx.snapshot:
            if api in ("CompareScalar", "Compare"):
                values = np.unpackbits(ctx.ub[dst.offset:dst.offset + count // 8], bitorder="little").astype(bool)
            else:
                values = dst.data[:count].copy() if count <= dst.size else None
        nbytes = count * dst.dtype.itemsize if out_bytes is None else out_bytes
        tile = _tile_of(dst, *srcs)
        ctx.event("V", api, ctx.current_tile if tile is None else tile, start, end, nbytes=nbytes, count=count,
                  ub=(dst.offset, dst.offset + nbytes), buffer=dst.buffer, detail=detail(), values=values,
                  bank_conflicts=conflicts)


def _check_local(instr: str, *ts: Any) -> None:
    for t in ts:
        if t.__class__ is not LocalTensor and not isinstance(t, LocalTensor):
            raise TypeError(f"{instr} needs LocalTensor operands, got {type(t).__name__}")


def _show(value: Any) -> str:
    """The exact value of a scalar operand with its type, e.g. ``half 0.10003662109375`` (numpy's own
    repr would print the shortest string that round-trips, ``0.1``, hiding the rounding)."""
    dt = getattr(value, "dtype", None) or np.asarray(value).dtype
    exact = repr(float(value)) if dt.kind in "fV" else str(int(value))
    return f"{_type_name(dt)} {exact}"


@cache
def _type_name(dt: np.dtype) -> str:
    """AscendC's name for an element type (``half``, ``float``, ``bfloat16``, ``int8``...)."""
    return {"float16": "half", "float32": "float"}.get(dt.name, dt.name)


# --- data movement ----------------------------------------------------------------------------------
def DataCopy(dst: Any, src: Any, count: int | DataCopyParams) -> None:
    """Contiguous copy GM->UB (MTE2) or UB->GM (MTE3). ``count * sizeof(T)`` must be a multiple of 32 B:
    the hardware would silently round it down, the simulator refuses it (use DataCopyPad)."""
    if isinstance(count, DataCopyParams):
        if count.blockCount != 1 or count.srcStride or count.dstStride:
            raise sanitizer.unmodelled_copy("DataCopy", f"strided DataCopy (blockCount={count.blockCount}, srcStride="
                                            f"{count.srcStride}, dstStride={count.dstStride}) is not modelled by the "
                                            "simulator; copy one contiguous block per call (blockCount=1, no strides)")
        count = count.blockLen * 32 // (dst.dtype.itemsize)
    count = int(count)
    if isinstance(dst, LocalTensor) and isinstance(src, GlobalTensor):
        _copy(dst.ctx, "DataCopy", dst, src, count, count * dst.dtype.itemsize, gm_to_ub=True, pad=False)
    elif isinstance(dst, GlobalTensor) and isinstance(src, LocalTensor):
        _copy(src.ctx, "DataCopy", src, dst, count, count * src.dtype.itemsize, gm_to_ub=False, pad=False)
    elif isinstance(dst, LocalTensor) and isinstance(src, LocalTensor):
        ctx = dst.ctx
        _span(dst, count, "DataCopy", True)[...] = _span(src, count, "DataCopy", False)   # (the read runs first)
        _vector_done(ctx, "Copy", dst, count, dst.dtype.itemsize, lambda: f"UB {src.buffer} -> UB {dst.buffer}", src)
    else:
        raise TypeError("DataCopy(dst, src, count) takes a LocalTensor and a GlobalTensor (or two LocalTensors)")


def DataCopyPad(dst: Any, src: Any, params: DataCopyParams, pad: DataCopyPadParams | None = None) -> None:
    """Copy ``blockLen`` bytes (any multiple of sizeof(T)); in UB the block is padded to 32 B, and only
    ``blockLen`` bytes land in GM. One block (``blockCount == 1``) is what these kernels use."""
    nbytes = params.blockLen
    if params.blockCount == 1 and not nbytes % 32 and nbytes and _copy_fast(dst, src, nbytes):
        return
    if params.blockCount == 0 or nbytes == 0:
        return
    if params.blockCount != 1:
        raise sanitizer.unmodelled_copy("DataCopyPad", f"DataCopyPad with blockCount={params.blockCount} is not "
                                        "modelled by the simulator; copy one block per call (blockCount=1)")
    if isinstance(dst, LocalTensor) and isinstance(src, GlobalTensor):
        item = dst.dtype.itemsize
        tensor, gm, to_ub = dst, src, True
    elif isinstance(dst, GlobalTensor) and isinstance(src, LocalTensor):
        item = src.dtype.itemsize
        tensor, gm, to_ub = src, dst, False
    else:
        raise TypeError("DataCopyPad(dst, src, params[, padParams]) takes a LocalTensor and a GlobalTensor")
    if params.blockLen % item:
        sanitizer.check_pad_block(tensor, params.blockLen, item)
    _copy(tensor.ctx, "DataCopyPad", tensor, gm, params.blockLen // item, params.blockLen, to_ub, True, pad)


def _copy_fast(dst: Any, src: Any, nbytes: int) -> bool:
    """DataCopyPad of whole 32-byte blocks with tracing off, when every check of :func:`_copy` would pass with
    nothing to report (the common case of every tile): a live UB tensor, 32-byte aligned, held by the copy's pipe or
    free to it, nothing poisoned pending, clean (a copy to GM) or written by this copy (a copy to UB: the sanitizer's
    ``ub_access`` records the write, as ``_span`` would have it do), and the GM span inside its live tensor,
    element-aligned (``GlobalTensor.gm_slice``'s fast answer). Then it does what :func:`_copy` would -- the same
    state changes in the same order, the same timing -- and returns True; otherwise it changes nothing and returns
    False."""
    if dst.__class__ is LocalTensor:
        local, gm, pipe = dst, src, "MTE2"
    else:
        local, gm, pipe = src, dst, "MTE3"
    if gm.__class__ is not GlobalTensor or local.__class__ is not LocalTensor:
        return False
    ctx = local.ctx
    r = local.region
    item = local.dtype.itemsize
    count = nbytes // item
    if (ctx.record or r is None or count > local.size or not local.life.alive or local.offset % 32
            or gm.dtype.itemsize != item):
        return False
    owner = r.owner
    if not (owner is None or owner == pipe) or (pipe == "MTE2" and ctx.taint is not None):
        return False
    clean = r.clean
    if not clean and pipe == "MTE3":                 # a read of a buffer not known clean: the sanitizer's checks
        return False
    alloc, start, arg_start = gm._alloc, gm._start, gm._arg_start
    end = start + nbytes
    if (alloc is None or start % item or start < arg_start or end > arg_start + gm._arg_nbytes
            or alloc.freed or (pipe == "MTE3" and alloc.lent)):      # a write to lent bytes: copied in first
        return False
    typed = gm._typed[0]
    if typed is None:                                # gm_slice's view of the allocation, made as it makes it
        typed = gm._typed[0] = _typed_view(alloc, gm._typed, gm.dtype)
    cost = ctx.cost
    if pipe == "MTE2":
        r.owner, r.wrote = pipe, True
        if not clean:                                # a buffer's first writes: the sanitizer records them
            a = local.offset * 8
            sanitizer.ub_access(local, a, a + nbytes * 8, item * 8, "DataCopyPad", True, pipe)
        (local.data if count == local.size else local.data[:count])[...] = typed[start // item:end // item]
        cycles = cost._in_cache.get(nbytes)
        ctx.issue("MTE2", cost.copy_in(nbytes) if cycles is None else cycles)
        ctx.summary.bytes_in += nbytes
    else:
        if owner is None:
            r.owner, r.wrote = pipe, False
        typed[start // item:end // item] = local.data if count == local.size else local.data[:count]
        cycles = cost._out_cache.get(nbytes)
        ctx.issue("MTE3", cost.copy_out(nbytes) if cycles is None else cycles)
        summary = ctx.summary
        summary.bytes_out += nbytes
        summary.tiles += 1
    return True


def _copy(ctx: CoreContext, instr: str, local: LocalTensor, gm: GlobalTensor, count: int, nbytes: int,
          gm_to_ub: bool, pad: bool, pad_params: DataCopyPadParams | None = None) -> None:
    tile = local.tile
    if local.offset % 32 or (not pad and nbytes % 32):
        sanitizer.check_copy(ctx, instr, local, count, nbytes, pad)
    if gm_to_ub:
        ub_count = count
        if pad:
            ub_count = -(-nbytes // 32) * 32 // local.dtype.itemsize
        ub = _span(local, ub_count, instr, True, "MTE2")
        g = gm.gm_slice(ctx, count, instr, tile, write=False)
        if ub_count > count:
            ub[:count] = g
            fill = pad_params.paddingValue if (pad_params is not None and pad_params.isPad) else g[0]
            ub[count:] = fill
        else:
            ub[...] = g
        cost = ctx.cost
        cycles = cost._in_cache.get(nbytes)                # CostModel.copy_in's memo, read inline (every copy)
        start, end = ctx.issue("MTE2", cost.copy_in(nbytes) if cycles is None else cycles)
        ctx.summary.bytes_in += nbytes
        if ctx.record:
            ctx.event("MTE2", instr, tile, start, end, nbytes=nbytes, count=count, ub=local.ub_range(ub_count),
                      buffer=local.buffer, detail=f"GM {gm.label()} -> UB {local.buffer}",
                      values=ub[:count].copy() if ctx.snapshot else None)
    else:
        g = gm.gm_slice(ctx, count, instr, tile, write=True)      # where it lands is checked before what it holds
        ub = _span(local, count, instr, False, "MTE3", gm)
        g[...] = ub
        cost = ctx.cost
        cycles = cost._out_cache.get(nbytes)               # CostModel.copy_out's memo, read inline
        start, end = ctx.issue("MTE3", cost.copy_out(nbytes) if cycles is None else cycles)
        ctx.summary.bytes_out += nbytes
        ctx.summary.tiles += 1
        if ctx.record:
            ctx.event("MTE3", instr, tile, start, end, nbytes=nbytes, count=count, ub=local.ub_range(count),
                      buffer=local.buffer, detail=f"UB {local.buffer} -> GM {gm.label()}",
                      values=ub.copy() if ctx.snapshot else None)


# --- vector arithmetic -----------------------------------------------------------------------------------
def _span(t: LocalTensor, count: int, instr: str, write: bool, pipe: str = "V",
          result: GlobalTensor | None = None) -> np.ndarray:
    """``sanitizer.ub_span`` with its common case answered without a call: a live tensor, in bounds, on a buffer
    that is fully written with no poison (``clean``) and held by this pipe; a write also needs no poisoned
    elements pending from the instruction's reads (``ctx.taint``). An instruction's reads must come before its
    write: the write takes over what the reads found (see ``sanitizer.ub_access``). ``result``: for a copy to GM,
    where it lands (the sanitizer works out which elements land in this core's part of the tensor)."""
    r = t.region
    if r is not None and r.clean and count <= t.size and t.life.alive:
        owner = r.owner
        if owner is pipe or owner is None:              # held by this pipe, or free to it (just allocated)
            if not write:
                if owner is None:
                    r.owner, r.wrote = pipe, False
                # the whole tensor is the common case (a tile fills its block): its view as is, no new slice
                return t.data if count == t.size else t.data[:count]
            if t.ctx.taint is None:
                r.owner, r.wrote = pipe, True
                return t.data if count == t.size else t.data[:count]
    return sanitizer.ub_span(t, count, instr, write, pipe, result)


def _unary_scalar(api: str, fn: Any, dst: LocalTensor, src: LocalTensor, scalar: Any, count: int) -> None:
    _check_local(api, dst, src)
    dt = dst.dtype
    if src.dtype is not dt and src.dtype != dt:
        raise TypeError(f"{api}: dst is {dst.dtype} but src is {src.dtype}; they must match")
    s = _scalar(dt, scalar)
    fn(_span(src, count, api, False), s, out=_span(dst, count, api, True))
    _vector_done(dst.ctx, api, dst, count, dt.itemsize,
                 lambda: f"{dst.buffer} = {src.buffer} {api} {_show(s)}", src, integer=dt.kind in "iu")


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
        _check_local(api, dst, a, b)
    if not (a.dtype == b.dtype == dst.dtype):
        raise TypeError(f"{api}: operands must share one dtype, got {dst.dtype}, {a.dtype}, {b.dtype}")
    fn(_span(a, count, api, False), _span(b, count, api, False), out=_span(dst, count, api, True))
    _vector_done(dst.ctx, api, dst, count, dst.dtype.itemsize, lambda: f"{dst.buffer} = {a.buffer} {api} {b.buffer}",
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
    _check_local("Not", dst, src)
    if dst.dtype.itemsize != 2 or dst.dtype.kind not in "iu":
        raise TypeError(f"Not works on int16/uint16 tensors, not {dst.dtype}")
    np.invert(_span(src, count, "Not", False), out=_span(dst, count, "Not", True))
    _vector_done(dst.ctx, "Not", dst, count, 2, lambda: f"{dst.buffer} = ~{src.buffer}", src)


def Duplicate(dst: LocalTensor, scalar: Any, count: int) -> None:
    """Fill the first ``count`` elements of dst with the scalar (converted to dst's dtype)."""
    if dst.__class__ is not LocalTensor:
        _check_local("Duplicate", dst)
    s = scalar if type(scalar) is dst.dtype.type else _scalar(dst.dtype, scalar)
    _span(dst, count, "Duplicate", True).fill(s)          # (fill: cheaper than [...] = s for a tile)
    _vector_done(dst.ctx, "Duplicate", dst, count, dst.dtype.itemsize, lambda: f"{dst.buffer} = {_show(s)}")


# --- Broadcast (high-level API, 张量变换) ------------------------------------------------------------------
def _brc_fused(dst_shape: tuple[int, ...], src_shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The destination shape the 950 library works on (``GetBroadcastTilingInfoImpl``, AD
    ``broadcast_common_impl.h``): runs of broadcast axes and runs of equal axes fused into one each; a b64 type is
    moved as pairs of b32 (the last axis doubled, or a trailing axis of 2 when the last axis is broadcast)."""
    out: list[int] = []
    brc: list[bool] = []
    for d, s in zip(dst_shape, src_shape, strict=True):
        b = s == 1 and d != 1
        if out and brc[-1] == b:
            out[-1] *= d
        else:
            out.append(d)
            brc.append(b)
    if itemsize == 8 and int(np.prod(src_shape)) != int(np.prod(dst_shape)):
        if brc[-1]:
            out.append(2)
        else:
            out[-1] *= 2
    return tuple(out)


def GetBroadCastMaxMinTmpSize(soc: SocInfo, src_shape: tuple[int, ...] | list[int],
                              dst_shape: tuple[int, ...] | list[int], type_size: int,
                              is_reuse_source: bool = False) -> tuple[int, int]:
    """``GetBroadCastMaxMinTmpSize`` (host side): ``(maxValue, minValue)`` bytes of sharedTmpBuffer that
    ``Broadcast<T, dim, axis>`` needs, as AD ``impl/adv_api/tiling/pad/broadcast_tiling.cpp`` @ 82b89a15 computes
    them. A2/A3 (DAV_2201) and 310P (DAV_2002) need a brcb/copy scratch (plus a half copy of src and dst for
    b8 types, which are broadcast in half); the 950 needs none except 32 B (+ the half copies) for a b8 copy or
    scalar broadcast -- its other cases leave both values at the caller's 0. ValueError where the host API
    asserts (shapes that do not broadcast, dim not 1/2 before the 950, an unaligned dim[1] on A2/A3 axis 0)."""
    src, dst = tuple(int(d) for d in src_shape), tuple(int(d) for d in dst_shape)
    arch = soc.npu_arch
    old = arch in (NpuArch.DAV_2201, NpuArch.DAV_2002)
    if old and (type_size not in (1, 2, 4) or len(src) not in (1, 2)):
        raise ValueError(f"GetBroadCastMaxMinTmpSize on {soc.name}: typeSize must be 1, 2 or 4 and the shapes 1-D or "
                         f"2-D, got typeSize {type_size} and {len(src)} dims")
    if len(src) != len(dst) or type_size <= 0 or any(s != d and s != 1 for s, d in zip(src, dst, strict=True)):
        raise ValueError(f"GetBroadCastMaxMinTmpSize: srcShape {list(src)} cannot broadcast to dstShape {list(dst)} "
                         f"(typeSize {type_size})")
    src_size, dst_size = int(np.prod(src)), int(np.prod(dst))

    def cast_tmp() -> tuple[int, int]:          # b8 is broadcast in half: room for src and dst in half
        if type_size != 1:
            return 0, type_size
        return (-(-src_size // 16) * 16 + -(-dst_size // 16) * 16) * 2, 2

    if src_size in (1, dst_size):
        if type_size != 1:
            return 0, 0
        extra = cast_tmp()[0] + 32
        return extra, extra
    axis = 1 if len(src) > 1 and src[1] == 1 else 0
    cast_bytes, size = cast_tmp()
    if old and axis == 0:
        if dst[1] % (32 // size):
            raise ValueError(f"GetBroadCastMaxMinTmpSize: dim[1] = {dst[1]} is not 32-byte aligned")
        return 32 + cast_bytes, 32 + cast_bytes
    blk = 32 // size
    if arch == NpuArch.DAV_2201:
        first, cols = dst[0], dst[1]
        brcb_min = blk * blk * size
        brcb_max = -(-first // 8) * 8 * blk * size
        if cols % blk == 0:
            return brcb_max + cast_bytes, brcb_min + cast_bytes
        cols_align = -(-cols // blk) * blk
        return (brcb_max + first * cols_align * size + cast_bytes,
                brcb_min + blk * cols_align * size + cast_bytes)
    if arch == NpuArch.DAV_2002:
        if dst[0] % blk:
            raise ValueError(f"GetBroadCastMaxMinTmpSize: dim[0] = {dst[0]} is not 32-byte aligned")
        lo = 32 + cast_bytes + blk * -(-dst[1] // 8) * size
        return 32 + cast_bytes + dst[0] * dst[1] * size, lo
    return 0, 0


def Broadcast(dst: LocalTensor, src: LocalTensor, dst_shape: tuple[int, ...] | list[int],
              src_shape: tuple[int, ...] | list[int], shared_tmp: LocalTensor | None = None, *,
              axis: int | None = None, const_rank: int = -1) -> None:
    """Broadcast ``src`` (``src_shape``, row-major) to ``dst`` (``dst_shape``) in UB: an axis where src has 1 and
    dst has n repeats the source n times (numpy broadcasting with equal ranks). AD ``高阶API/张量变换/Broadcast.md``.

    * ``axis`` given: ``Broadcast<T, dim, axis>(dst, src, dstShape, srcShape[, sharedTmpBuffer])`` -- dim =
      ``len(dst_shape)`` is 1 or 2, ``axis`` the dimension broadcast; offered on A2/A3, 310P AI Core and the 950.
    * ``axis`` None: the 950's shape-driven ``Broadcast<T, constRank>(dst, src, dstShape, srcShape, &tiling)``
      with its ``GetBroadcastTilingInfo`` folded in (rank 1..9, ``const_rank`` -1 or the rank) -- the call the
      atvoss UB-broadcast schedules make.

    A pure copy (no rounding: the raw element bits move, NaN payloads included). On the 950 an un-broadcast call
    (equal element counts) is ``DataCopy`` of the count rounded up to a 32-byte block, as the library does. The
    checks: dtypes equal (TypeError), shapes that broadcast (ValueError), the API's limits per SoC and its
    constraints -- alignment, no overlap, tmp size (``sanitizer.check_broadcast``), UB bounds of both operands.
    ``shared_tmp`` is checked against :func:`GetBroadCastMaxMinTmpSize`'s minimum; its scratch contents are not
    modelled (the 950 ignores it; the shape-driven form uses the library's own stack buffer, not modelled).
    PIPE_V, costed with GE-ATT's vector ``Copy`` API fit over dst's elements, as GE-ATT costs a broadcast
    (``cost_model.BORROWED_ROWS``)."""
    _check_local("Broadcast", dst, src)
    if shared_tmp is not None:
        _check_local("Broadcast", shared_tmp)
    if src.dtype != dst.dtype:
        raise TypeError(f"Broadcast: dst is {dst.dtype} but src is {src.dtype}; they must match")
    dshape, sshape = tuple(int(d) for d in dst_shape), tuple(int(d) for d in src_shape)
    if not dshape or len(dshape) != len(sshape):
        raise ValueError(f"Broadcast: dstShape {list(dshape)} and srcShape {list(sshape)} must have the same number "
                         "of dims (at least one)")
    if any(d < 1 or s < 1 or (s != d and s != 1) for d, s in zip(dshape, sshape, strict=True)):
        raise ValueError(f"Broadcast: srcShape {list(sshape)} does not broadcast to dstShape {list(dshape)} (each src "
                         "dim must be 1 or equal to dst's, all positive)")
    if axis is None and const_rank not in (-1, len(dshape)):
        raise ValueError(f"Broadcast: constRank {const_rank} must be -1 or the rank {len(dshape)}")
    ctx = dst.ctx
    item = dst.dtype.itemsize
    n_dst, n_src = int(np.prod(dshape)), int(np.prod(sshape))
    fuse = axis is None and (const_rank == -1 or const_rank > 4)
    fused = _brc_fused(dshape, sshape, item) if fuse else dshape
    tmp_min = 0 if shared_tmp is None else GetBroadCastMaxMinTmpSize(ctx.soc, sshape, dshape, item)[1]
    sanitizer.check_broadcast(ctx, dst, src, dshape, sshape, axis, fused, shared_tmp, tmp_min)
    ui = _UINT[item]
    if n_src == n_dst:                             # nothing broadcast: a copy (950: whole 32-byte blocks)
        n = -(-n_dst * item // 32) * 32 // item if ctx.soc.npu_arch == NpuArch.DAV_3510 else n_dst
        s = _span(src, n, "Broadcast", False).view(ui)
        _span(dst, n, "Broadcast", True).view(ui)[...] = s
    else:
        s = _span(src, n_src, "Broadcast", False).view(ui)
        if ctx.taint is not None:     # a poisoned source element may reach any destination element (ub_access)
            ctx.taint = [(0, n_dst, 1)]
        out = np.broadcast_to(s.reshape(sshape), dshape)
        _span(dst, n_dst, "Broadcast", True).view(ui).reshape(dshape)[...] = out
    form = f"<{_type_name(dst.dtype)}, {len(dshape)}, {axis}>" if axis is not None else \
        f"<{_type_name(dst.dtype)}, {const_rank}>"
    _vector_done(ctx, "Broadcast", dst, n_dst, item,
                 lambda: f"{dst.buffer} {list(dshape)} = Broadcast{form}({src.buffer} {list(sshape)})", src,
                 reads=None if n_src == n_dst else ())     # how a broadcast reads its source: not documented


def Cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, count: int) -> None:
    """Convert with AscendC's RoundMode (CAST_NONE, CAST_RINT, CAST_ROUND, CAST_TRUNC, ...), saturating
    float->int conversions."""
    _check_local("Cast", dst, src)
    mode = RoundMode(round_mode)
    s = _span(src, count, "Cast", False)                     # the read first (sanitizer.ub_access)
    _span(dst, count, "Cast", True)[...] = cast(s, dst.dtype, mode)
    width = max(dst.dtype.itemsize, src.dtype.itemsize)     # the repeat's lanes; the cost row is the direction's
    _vector_done(dst.ctx, "Cast", dst, count, width,
                 lambda: f"{dst.buffer} = {mode.name}({src.buffer}: {src.dtype}->{dst.dtype})", src,
                 cast_dir=cast_fit(src.dtype, dst.dtype))


# --- compare and select ------------------------------------------------------------------------------
_CMP_FN = {int(k): v for k, v in _CMP.items()}
_DAV_3510 = NpuArch.DAV_3510          # read once (an enum member's attribute lookup, every Compare)
_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _mask_span(t: LocalTensor, nbits: int, instr: str, write: bool) -> np.ndarray:
    """The bytes holding the first ``nbits`` bits of a mask tensor (whatever its declared element type). The
    sanitizer sees the access bit by bit: bit i of a mask is element i of the instruction."""
    nbytes = -(-nbits // 8)
    r = t.region
    ctx = t.ctx
    if t.life.alive and nbytes <= t.nbytes:
        owner = r.owner if r is not None else False
        if owner == "V" and r.clean and (not write or ctx.taint is None):
            if write:
                r.wrote = True
        else:
            # a mask fills only the start of its slot, so the slot is never ``clean``: ``ub_access``'s own early
            # answers (a span already known written / already read clean, no race, nothing poisoned), inline
            a = t.offset * 8
            span = (a, a + nbits)
            if write:
                if ((owner is None or owner == "V") and ctx.taint is None and not ctx.poison.lo
                        and span in ctx.written_spans):
                    r.owner, r.wrote = "V", True
                else:
                    sanitizer.ub_access(t, a, a + nbits, 1, instr, write, "V")
            elif not (owner == "V" and span in ctx.clean_spans):
                sanitizer.ub_access(t, a, a + nbits, 1, instr, write, "V")
        return ctx.ub[t.offset:t.offset + nbytes]
    raw = sanitizer.ub_span(t.ReinterpretCast(np.uint8), nbytes, instr, write, "V")
    return raw


def _pack(cond: np.ndarray, item: int) -> np.ndarray:
    """Compare results as a little-endian bit-mask. A count that is not a whole number of 256-byte repeats
    reaches here only on the 950, whose library masks the tail lanes with a predicate and stores the last
    repeat's mask register whole: the tail bits are written as 0 (zeroing predicate; UNCONFIRMED on device)."""
    pad = -cond.size % (REPEAT_BYTES // item)
    if pad:
        cond = np.concatenate((cond, np.zeros(pad, dtype=bool)))
    return _packbits(cond, bitorder="little")


def CompareScalar(dst: LocalTensor, src: LocalTensor, scalar: Any, mode: CMPMODE, count: int) -> None:
    """Bit i of dst (a uint8 bit-mask, little-endian) = src[i] <mode> scalar, over whole 256-B repeats (on the
    950 over ``count`` elements exactly, the tail predicate-masked). ``Compares`` in today's API."""
    if not (dst.__class__ is src.__class__ is LocalTensor):
        _check_local("CompareScalar", dst, src)
    ctx = src.ctx
    mode = int(mode)
    key = ("CompareScalar", src.dtype, mode)           # the API limits depend on nothing else (as in Compare)
    if key not in ctx.api_checked:
        sanitizer.check_compare(ctx, "CompareScalar", _tile_of(src, dst), src.dtype, mode)
        ctx.api_checked.add(key)
    count = int(count)
    per = REPEAT_BYTES // src.dtype.itemsize
    # whole_repeats and _pack, their common case (whole repeats: nothing to warn about, no tail bits) inline
    n = count if not count % per else sanitizer.whole_repeats(ctx, "CompareScalar", src, count)
    s = _scalar(src.dtype, scalar)
    cond = _CMP_FN[mode](_span(src, n, "CompareScalar", False), s)
    packed = _packbits(cond, bitorder="little") if not n % per else _pack(cond, src.dtype.itemsize)
    _mask_span(dst, packed.size * 8, "CompareScalar", True)[...] = packed
    _vector_done(ctx, "CompareScalar", dst, n, src.dtype.itemsize,
                 lambda: f"{dst.buffer} bits = {src.buffer} {CMPMODE(mode).name} {_show(s)}", src,
                 out_bytes=packed.size, row=compare_row("CompareScalar", mode, n, src.dtype.itemsize))


def Compare(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mode: CMPMODE, count: int) -> None:
    """Tensor-tensor compare into a bit-mask, over whole 256-byte repeats (like CompareScalar; on the 950 over
    ``count`` elements, the tail predicate-masked)."""
    if not (dst.__class__ is src0.__class__ is src1.__class__ is LocalTensor):
        _check_local("Compare", dst, src0, src1)
    ctx = src0.ctx
    m = int(mode)
    key = ("Compare", src0.dtype, m)
    if key not in ctx.api_checked:
        sanitizer.check_compare(ctx, "Compare", _tile_of(src0, src1, dst), src0.dtype, m)
        ctx.api_checked.add(key)
    count = int(count)
    # the 950 compares every element (whole_repeats answers count there without a finding)
    n = count if ctx.soc.npu_arch == _DAV_3510 else sanitizer.whole_repeats(ctx, "Compare", src0, count)
    cond = _CMP_FN[m](_span(src0, n, "Compare", False), _span(src1, n, "Compare", False))
    # _pack, its common case (whole repeats: no tail bits to zero) inline
    packed = (_packbits(cond, bitorder="little") if not n % (REPEAT_BYTES // src0.dtype.itemsize)
              else _pack(cond, src0.dtype.itemsize))
    _mask_span(dst, packed.size * 8, "Compare", True)[...] = packed
    _vector_done(ctx, "Compare", dst, n, src0.dtype.itemsize,
                 lambda: f"{dst.buffer} bits = {src0.buffer} {CMPMODE(mode).name} {src1.buffer}", src0, src1,
                 out_bytes=packed.size, row=compare_row("Compare", m, n, src0.dtype.itemsize))


#: Select's modes as plain ints (an enum member's attribute lookup costs more than the compare, every tile)
_SPR, _TS, _TT = (int(SELMODE.VSEL_CMPMASK_SPR), int(SELMODE.VSEL_TENSOR_SCALAR_MODE),
                  int(SELMODE.VSEL_TENSOR_TENSOR_MODE))


def Select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: Any, sel_mode: SELMODE,
           count: int) -> None:
    """dst[i] = src0[i] where mask bit i is 1, else src1 (a scalar in VSEL_TENSOR_SCALAR_MODE, a tensor
    in VSEL_TENSOR_TENSOR_MODE; in VSEL_CMPMASK_SPR the first 256/sizeof(T) bits repeat).

    Done as the hardware does it, bit by bit: ``(src0 & m) | (src1 & ~m)`` on the raw element bits, so
    NaN payloads, signed zeros and infinities pass untouched.

    Modes 1 and 2 first write the library's scratch on A2/A3 and 310P (kernel_flavours §4): 32 copies of the
    scalar (mode 1) or of the selMask's UB address as uint32 (mode 2) at TMP_UB_OFFSET; the sanitizer stops the
    kernel if a buffer lies there, and the trace records the reserve the plan had to keep (``ub_reserved``)."""
    if not (dst.__class__ is sel_mask.__class__ is src0.__class__ is LocalTensor):
        _check_local("Select", dst, sel_mask, src0)
    ctx = dst.ctx
    count = int(count)
    mode = int(sel_mode)
    key = ("Select", dst.dtype, sel_mask.dtype, mode)
    if ctx.api == "ascendc" and key not in ctx.api_checked:
        tile = _tile_of(dst, sel_mask, src0)
        tile = ctx.current_tile if tile is None else tile
        sanitizer.check_select(ctx, tile, dst.dtype, sel_mask.dtype, mode)
        scratch = None
        if mode:
            scratch = select_scratch(ctx.soc, 4 if mode == _TT else dst.dtype.itemsize)
            if scratch is not None and sanitizer.check_select_scratch(ctx, tile, mode, scratch):
                _write_scratch(ctx, scratch, dst.dtype, src1 if mode == _TS else None,
                               sel_mask.offset)
        if scratch is None:             # no scratch on this SoC: nothing here depends on the UB plan either
            ctx.api_checked.add(key)
    if mode == _SPR:
        per = REPEAT_BYTES // dst.dtype.itemsize
        first = _unpackbits(_mask_span(sel_mask, per, "Select", False), count=per, bitorder="little")
        if ctx.taint is not None:          # element i uses bit i % per: repeat the poisoned bits over the count
            ctx.taint = _repeat_taint(ctx.taint, per, count)
        bits = np.resize(first, count)
        lanes = None
    else:
        raw = _mask_span(sel_mask, count, "Select", False)
        if mode == _TT or mode == _TS:
            bits = None                                 # one gather: mask byte -> 8 all-ones/all-zeros lanes
            table = _LANES.get(dst.dtype.itemsize)
            if table is None:
                table = _LANES[dst.dtype.itemsize] = _lane_masks(dst.dtype.itemsize)
            lanes = table.take(raw, axis=0).reshape(-1)
            if lanes.size != count:
                lanes = lanes[:count]
        else:
            bits = _unpackbits(raw, count=count, bitorder="little")
    ui = _UINT[dst.dtype.itemsize]
    # lanes are all-ones where the mask bit is 1, all-zeros elsewhere: ``a & lanes`` keeps a's raw bits there
    a = _span(src0, count, "Select", False).view(ui)
    if mode == _TS:
        other = _scalar(dst.dtype, src1)
        # a numpy scalar reinterprets in one call; anything else (an ml_dtypes scalar) through a 0-d array
        other_bits = other.view(ui) if isinstance(other, np.generic) and other.dtype.itemsize == ui.itemsize \
            else np.asarray(other).view(ui)[()]
        rest = None if other_bits == 0 else np.bitwise_and(np.invert(lanes), other_bits)
        label = lambda: _show(_scalar(dst.dtype, src1))  # noqa: E731
    else:
        if src1.__class__ is not LocalTensor:
            _check_local("Select", src1)
        b = _span(src1, count, "Select", False).view(ui)
        label = lambda: src1.buffer  # noqa: E731
    d = _span(dst, count, "Select", True).view(ui)
    if mode != _TS:
        # lanes all-ones where the bit is 1: b ^ ((a ^ b) & lanes) is a's bits there, b's elsewhere
        if lanes is None:
            lanes = bits.astype(ui)
            np.negative(lanes, out=lanes)
        # every operand is a window of this core's UB at its tensor's offset: byte ranges tell whether they overlap
        # (what np.may_share_memory would answer, without its two calls per tile)
        nb = count * dst.dtype.itemsize
        lo = dst.offset
        if (lo + nb <= src0.offset or src0.offset + nb <= lo) and (lo + nb <= src1.offset or src1.offset + nb <= lo):
            np.bitwise_xor(a, b, out=d)                  # dst apart from both sources: no temporary
            np.bitwise_and(d, lanes, out=d)
            np.bitwise_xor(d, b, out=d)
        else:
            np.bitwise_and(np.bitwise_xor(a, b), lanes, out=lanes)
            np.bitwise_xor(lanes, b, out=d)
    else:
        np.bitwise_and(a, lanes, out=d)                      # bit 1 -> src0 ...
        if rest is not None:
            np.bitwise_or(d, rest, out=d)                    # ... bit 0 -> src1
    _vector_done(ctx, "Select", dst, count, dst.dtype.itemsize,
                 lambda: f"{dst.buffer} = mask {sel_mask.buffer} ? {src0.buffer} : {label()} "
                         f"({SELMODE(mode).name})", src0, sel_mask,
                 reads=(src0, src1) if mode == _TT else (src0,),
                 mask=None if mode == _SPR else sel_mask)   # mode 0: mask in CMPMASK


#: ``_lane_masks`` by element size, read without a call (every Select of every tile)
_LANES: dict[int, np.ndarray] = {}


@cache
def _lane_masks(itemsize: int) -> np.ndarray:
    """Row k: the 8 lanes mask byte k selects (bit i set -> lane i all ones), as unsigned ``itemsize``-byte ints."""
    lanes = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(_UINT[itemsize])
    np.negative(lanes, out=lanes)
    lanes.flags.writeable = False
    return lanes


def _repeat_taint(taint: list[tuple[int, int, int]], per: int, count: int) -> list[tuple[int, int, int]]:
    """Select mode 0: the poisoned bits of the first repeat's mask, seen by every repeat of ``count`` elements
    (bits are element indices; more than 64 repeats are summed up as the whole span)."""
    repeats = -(-count // per)
    if repeats > 64:
        return [(0, count, 1)]
    return [(k * per + lo, min(k * per + hi, count), 1) for k in range(repeats) for lo, hi, _ in taint
            if k * per + lo < count]


def _write_scratch(ctx: CoreContext, scratch: tuple[int, int], dtype: np.dtype, scalar: Any, mask_addr: int) -> None:
    """What VselImpl writes before the vsel: Duplicate of the scalar in T (mode 1) or of the selMask address as
    uint32 (mode 2) over 32 elements at TMP_UB_OFFSET. The trace keeps the reserve this implies."""
    start, end = scratch
    if scalar is not None:
        fill = np.full(32, _scalar(dtype, scalar), dtype=dtype)
    else:
        fill = np.full(32, mask_addr, dtype=np.uint32)
    ctx.ub[start:end] = fill.view(np.uint8)[:end - start]
    reserve = reserved_ub_bytes(ctx.soc)
    if reserve > ctx.trace.ub_reserved:
        ctx.trace.ub_reserved = reserve


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

"""DataCopy and DataCopyPad: contiguous GM <-> UB copies on MTE2 (in) and MTE3 (out), and UB -> UB copies on V.

A copy runs the sanitizer's copy checks (32-byte alignment, GM bounds and padding, :mod:`.sanitizer.gm`), moves
the bytes and occupies its pipe for the cost model's copy cycles. ``_copy_fast`` answers the common case of every
tile (whole 32-byte blocks, tracing off, nothing to report) with the same state changes and timing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import sanitizer
from .core import CoreContext
from .issue import ub_operand, vector_done
from .tensor import GlobalTensor, LocalTensor, typed_view


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
        s = ub_operand(src, count, "DataCopy", False)                 # the read first (sanitizer.ub_access)
        ub_operand(dst, count, "DataCopy", True)[...] = s
        vector_done(ctx, "Copy", dst, count, dst.dtype.itemsize, lambda: f"UB {src.buffer} -> UB {dst.buffer}", src)
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
    ``ub_access`` records the write, as ``ub_operand`` would have it do), and the GM span inside its live tensor,
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
    alloc, start, arg_start = gm.allocation, gm.byte_offset, gm.arg_start
    end = start + nbytes
    if (alloc is None or start % item or start < arg_start or end > arg_start + gm.arg_nbytes
            or alloc.freed or (pipe == "MTE3" and alloc.lent)):      # a write to lent bytes: copied in first
        return False
    typed = gm.typed_cache[0]
    if typed is None:                                # gm_slice's view of the allocation, made as it makes it
        typed = gm.typed_cache[0] = typed_view(alloc, gm.typed_cache, gm.dtype)
    cost = ctx.cost
    if pipe == "MTE2":
        r.owner, r.wrote = pipe, True
        if not clean:                                # a buffer's first writes: the sanitizer records them
            a = local.offset * 8
            sanitizer.ub_access(local, a, a + nbytes * 8, item * 8, "DataCopyPad", True, pipe)
        (local.data if count == local.size else local.data[:count])[...] = typed[start // item:end // item]
        cycles = cost.copy_in_memo.get(nbytes)      # the memo inline: calling copy_in measured +1-2% per launch
        ctx.issue("MTE2", cost.copy_in(nbytes) if cycles is None else cycles)
        ctx.summary.bytes_in += nbytes
    else:
        if owner is None:
            r.owner, r.wrote = pipe, False
        typed[start // item:end // item] = local.data if count == local.size else local.data[:count]
        cycles = cost.copy_out_memo.get(nbytes)
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
        ub = ub_operand(local, ub_count, instr, True, "MTE2")
        g = gm.gm_slice(ctx, count, instr, tile, write=False)
        if ub_count > count:
            ub[:count] = g
            fill = pad_params.paddingValue if (pad_params is not None and pad_params.isPad) else g[0]
            ub[count:] = fill
        else:
            ub[...] = g
        cost = ctx.cost
        cycles = cost.copy_in_memo.get(nbytes)             # CostModel.copy_in's memo, read inline (every copy)
        start, end = ctx.issue("MTE2", cost.copy_in(nbytes) if cycles is None else cycles)
        ctx.summary.bytes_in += nbytes
        if ctx.record:
            ctx.event("MTE2", instr, tile, start, end, nbytes=nbytes, count=count, ub=local.ub_range(ub_count),
                      buffer=local.buffer, detail=f"GM {gm.label()} -> UB {local.buffer}",
                      values=ub[:count].copy() if ctx.snapshot else None)
    else:
        g = gm.gm_slice(ctx, count, instr, tile, write=True)      # where it lands is checked before what it holds
        ub = ub_operand(local, count, instr, False, "MTE3", gm)
        g[...] = ub
        cost = ctx.cost
        cycles = cost.copy_out_memo.get(nbytes)            # CostModel.copy_out's memo, read inline
        start, end = ctx.issue("MTE3", cost.copy_out(nbytes) if cycles is None else cycles)
        ctx.summary.bytes_out += nbytes
        ctx.summary.tiles += 1
        if ctx.record:
            ctx.event("MTE3", instr, tile, start, end, nbytes=nbytes, count=count, ub=local.ub_range(count),
                      buffer=local.buffer, detail=f"UB {local.buffer} -> GM {gm.label()}",
                      values=ub.copy() if ctx.snapshot else None)


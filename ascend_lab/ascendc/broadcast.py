"""Broadcast (high-level API, 张量变换) and its host-side GetBroadCastMaxMinTmpSize, per architecture."""

from __future__ import annotations

import numpy as np

from ..base.platform import NpuArch, SocInfo
from . import sanitizer
from .issue import UINT, check_local, type_name, ub_operand, vector_done
from .tensor import LocalTensor


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
    check_local("Broadcast", dst, src)
    if shared_tmp is not None:
        check_local("Broadcast", shared_tmp)
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
    ui = UINT[item]
    if n_src == n_dst:                             # nothing broadcast: a copy (950: whole 32-byte blocks)
        n = -(-n_dst * item // 32) * 32 // item if ctx.soc.npu_arch == NpuArch.DAV_3510 else n_dst
        s = ub_operand(src, n, "Broadcast", False).view(ui)
        ub_operand(dst, n, "Broadcast", True).view(ui)[...] = s
    else:
        s = ub_operand(src, n_src, "Broadcast", False).view(ui)
        if ctx.taint is not None:     # a poisoned source element may reach any destination element (ub_access)
            ctx.taint = [(0, n_dst, 1)]
        out = np.broadcast_to(s.reshape(sshape), dshape)
        ub_operand(dst, n_dst, "Broadcast", True).view(ui).reshape(dshape)[...] = out
    form = f"<{type_name(dst.dtype)}, {len(dshape)}, {axis}>" if axis is not None else \
        f"<{type_name(dst.dtype)}, {const_rank}>"
    vector_done(ctx, "Broadcast", dst, n_dst, item,
                 lambda: f"{dst.buffer} {list(dshape)} = Broadcast{form}({src.buffer} {list(sshape)})", src,
                 reads=None if n_src == n_dst else ())     # how a broadcast reads its source: not documented


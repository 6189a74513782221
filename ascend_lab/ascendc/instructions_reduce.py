"""The reductions of the basic vector API, mask/repeat form: ``WholeReduceSum/Max/Min`` (one result per repeat) and
``BlockReduceSum/Max/Min`` (one result per 32-byte block), as asc-devkit declares them (AD ``归约计算/ReduceRepeat.md``,
``ReduceDataBlock.md`` @ 82b89a15).

The mask is the instruction's ``mask`` argument, or with ``isSetMask = false`` the mask register (:mod:`.mask`):
in Counter mode the register's count decides the repeats (the last one partial) and ``repeatTime`` is ignored --
how the ops-nn LogSoftmaxV2 kernel reduces a row of any length (``SetMaskCount(); SetVectorMask<float>(0, n);
WholeReduceSum<float, false>(..., MASK_PLACEHOLDER, 1, 1, 1, 8)``). Numerics as :mod:`.instructions_math` states
them: every addition of a sum's binary tree rounds in T.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from ..base.platform import NpuArch
from . import sanitizer
from .issue import check_local as _check_local
from .issue import tile_of as _tile_of
from .issue import ub_operand as _span
from .issue import vector_done as _vector_done
from .mask import lanes as _mask_lanes
from .math_common import FLOAT, HALF, HALF_OR_FLOAT, INT16, INT32, UINT16, UINT32, dtype_set, same_dtype
from .sanitizer import REPEAT_BYTES
from .tensor import LocalTensor

__all__ = ["BLOCK_REDUCE_DTYPES", "BlockReduceMax", "BlockReduceMin", "BlockReduceSum", "NAMESPACE",
           "REDUCE_DTYPES", "ReduceOrder", "WholeReduceMax", "WholeReduceMin", "WholeReduceSum"]


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
    NpuArch.DAV_1001: {"Sum": dtype_set(HALF), "MaxMin": dtype_set(HALF),
                       "orders": dtype_set(ReduceOrder.ORDER_VALUE_INDEX)},
    NpuArch.DAV_2002: {"Sum": HALF_OR_FLOAT, "MaxMin": HALF_OR_FLOAT,
                       "orders": dtype_set(ReduceOrder.ORDER_VALUE_INDEX, ReduceOrder.ORDER_INDEX_VALUE)},
    NpuArch.DAV_2201: {"Sum": HALF_OR_FLOAT, "MaxMin": HALF_OR_FLOAT, "orders": _ALL_ORDERS},
    NpuArch.DAV_3002: {"Sum": HALF_OR_FLOAT, "MaxMin": HALF_OR_FLOAT,
                       "orders": dtype_set(ReduceOrder.ORDER_VALUE_INDEX, ReduceOrder.ORDER_ONLY_VALUE)},
    NpuArch.DAV_3510: {"Sum": dtype_set(HALF, FLOAT, INT32, UINT32),
                       "MaxMin": dtype_set(INT16, UINT16, HALF, INT32, UINT32, FLOAT),
                       "orders": _ALL_ORDERS},
}


def _reduce_source(api: str, src: LocalTensor, repeat: int, blk_stride: int, rep_stride: int,
                   per: int, lanes: np.ndarray) -> np.ndarray:
    """The ``repeat`` x ``per`` elements the repeats read (8 blocks of 32 bytes each, ``blk_stride`` blocks apart,
    repeats ``rep_stride`` blocks apart). The sanitizer sees the whole span from the first to the last read."""
    blk = 32 // src.dtype.itemsize
    r = np.arange(repeat)[:, None]
    lane = np.arange(per)[None, :]
    idx = (r * rep_stride + (lane // blk) * blk_stride) * blk + lane % blk
    end = int(idx[lanes].max()) + 1              # up to the last lane selected (Counter mode: the count's end)
    span = _span(src, end, api, False)
    return span[np.minimum(idx, end - 1)]       # lanes past it are masked out: any value will do


def _tree_sum(v: np.ndarray) -> np.ndarray:
    """Sum of each row by the binary tree the docs draw (pairs of neighbours, then pairs of pairs ...), every
    addition rounded in the row's dtype."""
    while v.shape[1] > 1:
        v = v[:, 0::2] + v[:, 1::2]
    return v[:, 0]


def _reduce(api: str, dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
            src_blk_stride: int, src_rep_stride: int, order: Any, is_set_mask: bool) -> None:
    _check_local(api, dst, src)
    dt = same_dtype(api, dst, src)
    ctx = dst.ctx
    tile = _tile_of(dst, src)
    limits = REDUCE_DTYPES.get(ctx.soc.npu_arch, REDUCE_DTYPES[NpuArch.DAV_2201])
    key = ("math", api, dt, None if order is None else int(order))
    if key not in ctx.api_checked:
        t = ctx.current_tile if tile is None else tile
        sanitizer.check_api_dtype(ctx, api, t, dt, limits["Sum" if api == "WholeReduceSum" else "MaxMin"])
        if order is not None:
            sanitizer.check_api_dtype(ctx, f"{api} with {ReduceOrder(order).name}", t, dt,
                                      limits["MaxMin"] if ReduceOrder(order) in limits["orders"] else dtype_set(),
                                      "another architecture offers it")
        ctx.api_checked.add(key)
    per = REPEAT_BYTES // dt.itemsize
    lanes = _mask_lanes(ctx, dt, mask, int(repeat), is_set_mask)      # (repeats, per): Counter mode infers them
    repeat = lanes.shape[0]
    if repeat == 0 or not lanes.any():
        return
    x = _reduce_source(api, src, repeat, int(src_blk_stride), int(src_rep_stride), per, lanes)
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
                   src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """``WholeReduceSum(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride)``: the sum of each
    256-byte repeat's masked lanes (the rest count as 0) by a binary tree of additions rounded in T, written to
    ``dst[r * dstRepStride]``. ``mask``: an int (continuous mode) or two 64-bit words (bit mode). The sanitizer sees
    the whole span between the first and last element read (or written): a gap left by a stride counts as read (or
    written) too."""
    _reduce("WholeReduceSum", dst, src, mask, repeat, dst_rep_stride, src_blk_stride, src_rep_stride, None, is_set_mask)


def WholeReduceMax(dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int,
                   order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX, is_set_mask: bool = True) -> None:
    """The largest masked lane of each repeat and its lane index (the smallest index among equal maxima; a NaN is
    the maximum, as numpy's argmax has it -- UNCONFIRMED on device), laid out by ``order``: [value, index] pairs
    (the index's bits as an unsigned integer of T's width) every ``dstRepStride`` pairs, [index, value], the value
    alone, or the index alone as uint32."""
    _reduce("WholeReduceMax", dst, src, mask, repeat, dst_rep_stride, src_blk_stride, src_rep_stride, order,
            is_set_mask)


def WholeReduceMin(dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int,
                   order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX, is_set_mask: bool = True) -> None:
    """The smallest masked lane of each repeat and its index, as :func:`WholeReduceMax`."""
    _reduce("WholeReduceMin", dst, src, mask, repeat, dst_rep_stride, src_blk_stride, src_rep_stride, order,
            is_set_mask)


#: BlockReduce* element types by architecture (AD ``归约计算/ReduceDataBlock.md``, the API's current name).
BLOCK_REDUCE_DTYPES: dict[NpuArch, frozenset[Any]] = {
    NpuArch.DAV_1001: dtype_set(HALF), NpuArch.DAV_2002: HALF_OR_FLOAT, NpuArch.DAV_2201: HALF_OR_FLOAT,
    NpuArch.DAV_3002: HALF_OR_FLOAT,
    NpuArch.DAV_3510: HALF_OR_FLOAT,
}


def _block_reduce(api: str, dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                  src_blk_stride: int, src_rep_stride: int, is_set_mask: bool) -> None:
    _check_local(api, dst, src)
    dt = same_dtype(api, dst, src)
    ctx = dst.ctx
    key = ("math", api, dt)
    if key not in ctx.api_checked:
        tile = _tile_of(dst, src)
        sanitizer.check_api_dtype(ctx, api, ctx.current_tile if tile is None else tile, dt,
                                  BLOCK_REDUCE_DTYPES.get(ctx.soc.npu_arch, HALF_OR_FLOAT))
        ctx.api_checked.add(key)
    per = REPEAT_BYTES // dt.itemsize
    blk = 32 // dt.itemsize
    lanes = _mask_lanes(ctx, dt, mask, int(repeat), is_set_mask)      # (repeats, per): Counter mode infers them
    repeat = lanes.shape[0]
    if repeat == 0 or not lanes.any():
        return
    x = _reduce_source(api, src, repeat, int(src_blk_stride), int(src_rep_stride), per, lanes).reshape(repeat, 8, blk)
    on = lanes.reshape(repeat, 8, blk)
    with np.errstate(all="ignore"):
        if api == "BlockReduceSum":
            vals = _tree_sum(np.where(on, x, dt.type(0)).reshape(repeat * 8, blk)).reshape(repeat, 8)
        else:
            big = api == "BlockReduceMax"
            fill = dt.type(-np.inf if big else np.inf)
            masked = np.where(on, x, fill)
            vals = masked.max(axis=2) if big else masked.min(axis=2)
    live = on.any(axis=2)                      # a block with no lane in the mask
    pos = (np.arange(repeat)[:, None] * int(dst_rep_stride) * 8 + np.arange(8)[None, :])
    out = _span(dst, int(pos.max()) + 1, api, True)
    if ctx.soc.npu_arch == NpuArch.DAV_3510:   # the 950 writes the reduction's identity there
        out[pos] = vals
    else:                                      # A2/A3 (and here 310P, 910A): nothing written there
        out[pos[live]] = vals[live]
    _vector_done(ctx, api, dst, repeat * per, dt.itemsize,
                 lambda: f"{dst.buffer} = {api}({src.buffer}, mask {mask}, {repeat} repeats)", src)


def BlockReduceSum(dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """``BlockReduceSum(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)`` (note: repeatTime
    before mask, unlike WholeReduce): each 32-byte block of each repeat summed by a binary tree in T (masked-out
    lanes count as 0), the 8 results of repeat r at ``dst[r * dstRepStride * 8 ...]``. A block with no lane in the
    mask: nothing written on A2/A3 (its old value stays), 0 written on the 950 (ReduceDataBlock.md)."""
    _block_reduce("BlockReduceSum", dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                  is_set_mask)


def BlockReduceMax(dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """The largest masked lane of each 32-byte block, as :func:`BlockReduceSum` lays them out (-inf written for an
    empty block on the 950; NaN propagates, UNCONFIRMED on device)."""
    _block_reduce("BlockReduceMax", dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                  is_set_mask)


def BlockReduceMin(dst: LocalTensor, src: LocalTensor, repeat: int, mask: Any, dst_rep_stride: int,
                   src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """The smallest masked lane of each 32-byte block (+inf for an empty block on the 950)."""
    _block_reduce("BlockReduceMin", dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
                  is_set_mask)


NAMESPACE: dict[str, Any] = {n: globals()[n] for n in ("ReduceOrder", "WholeReduceSum", "WholeReduceMax",
                                                        "WholeReduceMin", "BlockReduceSum", "BlockReduceMax",
                                                        "BlockReduceMin")}

"""The 256-byte-block tiling of the ops-nn experimental elementwise kernels, shared by ThresholdGradV2D and ReluGrad.

Both ``threshold_grad_v2_d_tiling.cpp`` and ``relu_grad_tiling.cpp`` (``cann_facts.md`` §4.1, ``kernel_flavours.md``
§4) split the input into 256-byte blocks the same way and differ only in their per-dtype UB budget
(``ubDataNumber``); their kernels (``Init``/``Process``, §4.2) walk the eight resulting fields the same way. Both
L0 wrappers broadcast the two input shapes the same way. One copy of each lives here, so neither operator package
imports the other. Numpy-free: the live tiling page runs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...acl.types import dtype_itemsize as itemsize
from ...opdev.op_def import infer_shape_same_as_input
from ...opdev.tiling_data import TilingData, TilingError

__all__ = ["BLOCK_SIZE", "block_core_ranges", "block_tiling", "broadcast_infer_shape"]

#: Bytes of one "block" the tiling counts in: one 256-byte vector repeat (CompareScalar/Select work on
#: whole 256-B repeats, cann_facts §10), so every tile and core gets a whole number of repeats
#: (``#define BLOCK_SIZE 256U``).
BLOCK_SIZE = 256


def block_tiling(input_num: int, input_bytes: int, core_num: int, ub_size: int,
                 ub_data_num: int, op_name: str) -> dict[str, int]:
    """The 256-byte-block split of the experimental ThresholdGradV2D and ReluGrad tilings (§4.1, §5).

    Returns the eight uint64 fields plus ``blockDim``. Split ``inputNum`` elements, padded up to whole
    256-byte blocks, over at most ``core_num`` cores: every core gets ``e`` blocks and the first
    ``tailBlockNum`` cores ("big" cores) one block more; each core's share is cut into tiles of
    ``tileDataNum`` elements with a shorter last tile. ``op_name`` names the operator in the errors.
    """
    if core_num == 0:
        raise TilingError(f"{op_name} tiling: core_num is 0 (GetCoreNumAiv() returned 0); "
                          "need at least 1 core")
    if input_num == 0:
        raise TilingError(f"{op_name} tiling: inputNum is 0; the tiling returns GRAPH_FAILED for empty input "
                          "(aclnn skips the kernel for empty tensors before tiling is reached)")
    tile_block_num = (ub_size // BLOCK_SIZE) // ub_data_num  # 256-B blocks per tile
    if tile_block_num == 0:
        # CANN does not check this and would divide by zero below; the simulator refuses instead.
        raise TilingError(f"{op_name} tiling: ub_size {ub_size} B gives 0 blocks per tile "
                          f"(needs >= {BLOCK_SIZE * ub_data_num} B for ubDataNumber {ub_data_num})")
    tile_data_num = tile_block_num * BLOCK_SIZE // input_bytes
    input_length_align = (input_num * input_bytes + BLOCK_SIZE - 1) // BLOCK_SIZE * BLOCK_SIZE
    total_blocks = input_length_align // BLOCK_SIZE
    if tile_data_num >= input_num:
        core_num = 1  # everything fits one tile: one core
    else:
        core_num = min(core_num, total_blocks)
    e, tail_block_num = divmod(total_blocks, core_num)  # the first tail_block_num cores are "big"
    small = _share(e, input_bytes, tile_block_num, tile_data_num)
    big = _share(e + 1, input_bytes, tile_block_num, tile_data_num)
    return {
        "smallCoreDataNum": small[0], "bigCoreDataNum": big[0],
        "finalBigTileNum": big[1], "finalSmallTileNum": small[1],
        "tileDataNum": tile_data_num,
        "smallTailDataNum": small[2], "bigTailDataNum": big[2],
        "tailBlockNum": tail_block_num,
        "blockDim": core_num,
    }


def _share(blocks: int, input_bytes: int, tile_block_num: int, tile_data_num: int) -> tuple[int, int, int]:
    """(elements, tiles, last tile's elements) of a core holding ``blocks`` 256-byte blocks, as the C++ computes
    them for the small cores (``e`` blocks) and again for the big ones (``e + 1``)."""
    data_num = blocks * BLOCK_SIZE // input_bytes
    whole = blocks // tile_block_num
    tiles = whole + (1 if blocks % tile_block_num else 0)
    tail = data_num - tile_data_num * whole
    return data_num, tiles, tail if tail != 0 else tile_data_num


def block_core_ranges(td: TilingData, dtype: Any, input_num: int | None = None, *,
                      tiles: bool = True) -> list[dict[str, Any]]:
    """What each core does, following the kernels' ``Init`` and ``Process`` (§4.2).

    One dict per core: ``core``, ``kind`` ("big" for the first ``tailBlockNum`` cores, else "small"),
    ``offset`` (first element in GM), ``data_num`` (elements it reads and writes, padding included),
    ``tile_num``, ``tail`` (length of the last tile), ``padded_end`` (``offset + data_num``),
    ``bytes`` (``data_num * sizeof(T)``) and ``tiles``: ``[(tile_index, start, length), ...]`` with
    ``start`` an absolute element index. With ``input_num``, also ``padding``: elements this core
    touches at or past ``input_num`` (the kernel's plain DataCopy reads/writes them).

    Works for any TilingData with the eight 256-byte-block fields (ThresholdGradV2D, ReluGrad).
    ``tiles=False`` leaves out the per-tile lists, for inputs with millions of tiles.
    """
    size = itemsize(dtype)
    small, big, tail_blocks = td.smallCoreDataNum, td.bigCoreDataNum, td.tailBlockNum
    out = []
    for core in range(td.blockDim):
        if core < tail_blocks:
            kind, data_num, tile_num, tail = "big", big, td.finalBigTileNum, td.bigTailDataNum
            offset = big * core
        else:
            kind, data_num, tile_num, tail = "small", small, td.finalSmallTileNum, td.smallTailDataNum
            offset = big * core - (big - small) * (core - tail_blocks)
        entry: dict[str, Any] = {
            "core": core, "kind": kind, "offset": offset, "data_num": data_num, "tile_num": tile_num,
            "tail": tail, "padded_end": offset + data_num, "bytes": data_num * size,
        }
        if tiles:
            entry["tiles"] = [(i, offset + i * td.tileDataNum, td.tileDataNum if i < tile_num - 1 else tail)
                              for i in range(tile_num)]
        if input_num is not None:
            entry["padding"] = offset + data_num - max(offset, min(offset + data_num, input_num))
        out.append(entry)
    return out


def broadcast_infer_shape(input_shape: Iterable[int], other_shape: Iterable[int] | None = None) -> tuple[int, ...]:
    """Output shape: input 0's shape, or the numpy broadcast of both inputs when ``other_shape`` is given.

    The L0 wrappers (``op_api/threshold_grad.cpp``) broadcast gradient and feature shapes (§3.2 step 10);
    the experimental tilings then ignore broadcasting and count input 0 only (§4.1, §9).
    """
    shape = infer_shape_same_as_input(input_shape)
    if other_shape is None:
        return shape
    other = infer_shape_same_as_input(other_shape)
    rank = max(len(shape), len(other))
    a, b = (1,) * (rank - len(shape)) + shape, (1,) * (rank - len(other)) + other
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
        raise ValueError(f"shapes {shape} and {other} do not broadcast")
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))

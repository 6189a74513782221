"""ThresholdGradV2D host side: op definition, infer-shape and the experimental 256-byte-block tiling.

Mirrors ``ops-nn:experimental/activation/threshold_grad_v2_d/op_host/``: ``threshold_grad_v2_d_def.cpp``
(``OP_DEF``), the infer-shape registration (``infer_shape``) and ``threshold_grad_v2_d_tiling.cpp``
(``tiling``; ``cann_facts.md`` §4.1). ``core_ranges`` turns a tiling into what each core of the kernel
(``op_kernel/threshold_grad_v2_d.h`` ``Init``/``Process``, §4.2) will touch, for figures and checks.

The block split (``_block_tiling``) is shared with the experimental ReluGrad tiling, which differs only
in its per-dtype UB budget (§5).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...acl.types import aclDataType as DT
from ...acl.types import dtype_itemsize as itemsize  # numpy-free (the live tiling page)
from ...opdev.op_def import Attr, Input, OpDef, Output, infer_shape_same_as_input
from ...opdev.tiling_data import TilingData, TilingError, float32, require_count, uint64
from ...tbe.schedule import TbeElewiseTilingData

__all__ = [
    "ThresholdGradV2DTbeTilingData",
    "BLOCK_SIZE", "OP_DEF", "UB_DATA_NUMBER", "ThresholdGradV2DTilingData",
    "core_ranges", "infer_shape", "tiling", "ub_data_number",
]

_DTYPES = (DT.ACL_FLOAT16, DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_INT32, DT.ACL_INT8, DT.ACL_UINT8)

OP_DEF = OpDef(
    name="ThresholdGradV2D",
    inputs=(Input("input_gradient", dtypes=_DTYPES), Input("input_feature", dtypes=_DTYPES)),
    outputs=(Output("output_backprops", dtypes=_DTYPES),),
    attrs=(Attr("threshold", "float", 1.0),),
    aicore_configs=("ascend910b",),
    precision_reduce=True,
    source="ops-nn:experimental/activation/threshold_grad_v2_d/op_host/threshold_grad_v2_d_def.cpp",
)

#: Bytes of one "block" the tiling counts in: one 256-byte vector repeat (CompareScalar/Select work on
#: whole 256-B repeats, cann_facts §10), so every tile and core gets a whole number of repeats.
BLOCK_SIZE = 256

#: ``ubDataNumber``: how many tile-sized slices of UB one element needs (§4.1 UB_NUM_* constants).
UB_DATA_NUMBER: dict[DT, int] = {DT.ACL_FLOAT: 7, DT.ACL_FLOAT16: 7, DT.ACL_INT32: 8, DT.ACL_BF16: 10}
_UB_DATA_NUMBER_OTHER = 14  # UB_NUM_INT8_UINT8: the tiling's `else` branch, taken by int8/uint8


def ub_data_number(dtype: Any) -> int:
    dt = OP_DEF.require_dtype(dtype)
    return UB_DATA_NUMBER.get(dt, _UB_DATA_NUMBER_OTHER)


class ThresholdGradV2DTbeTilingData(TbeElewiseTilingData):
    """The TBE kernel's run-time variables plus the threshold (a compile-time constant in TBE, carried here;
    ``op_kernel/tbe.py``). Declared on the host side so the tiling imports without the kernel."""

    threshold: float32


class ThresholdGradV2DTilingData(TilingData):
    """``ThresholdGradV2DTilingData`` of ``threshold_grad_v2_d_tiling.h`` (8 x uint64 + float = 72 bytes)."""

    smallCoreDataNum: uint64
    bigCoreDataNum: uint64
    finalBigTileNum: uint64
    finalSmallTileNum: uint64
    tileDataNum: uint64
    smallTailDataNum: uint64
    bigTailDataNum: uint64
    tailBlockNum: uint64
    threshold: float32


def infer_shape(input_shape: Iterable[int], other_shape: Iterable[int] | None = None) -> tuple[int, ...]:
    """Output shape: input 0's shape, or the numpy broadcast of both inputs when ``other_shape`` is given.

    The L0 wrapper (``op_api/threshold_grad.cpp``) broadcasts gradient and feature shapes (§3.2 step 10);
    the experimental tiling then ignores broadcasting and counts input 0 only (§4.1, §9).
    """
    shape = infer_shape_same_as_input(input_shape)
    if other_shape is None:
        return shape
    other = infer_shape_same_as_input(other_shape)
    try:
        return _broadcast_shapes(shape, other)
    except ValueError:
        raise ValueError(f"shapes {shape} and {other} do not broadcast") from None


def _broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """``np.broadcast_shapes(a, b)`` without numpy: right-aligned, each pair equal or one of them 1."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
        raise ValueError(f"shapes {a} and {b} do not broadcast")
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))


def _block_tiling(input_num: int, input_bytes: int, core_num: int, ub_size: int,
                  ub_data_num: int, op_name: str) -> dict[str, int]:
    """The 256-byte-block split shared by the experimental ThresholdGradV2D and ReluGrad tilings (§4.1, §5).

    Returns the eight uint64 fields plus ``blockDim``. Split ``inputNum`` elements, padded up to whole
    256-byte blocks, over at most ``core_num`` cores: every core gets ``e`` blocks and the first
    ``tailBlockNum`` cores ("big" cores) one block more; each core's share is cut into tiles of
    ``tileDataNum`` elements with a shorter last tile.
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
    small_core_data_num = e * BLOCK_SIZE // input_bytes
    small_tile_num = e // tile_block_num
    final_small_tile_num = small_tile_num + (1 if e % tile_block_num else 0)
    small_tail_data_num = small_core_data_num - tile_data_num * small_tile_num
    if small_tail_data_num == 0:
        small_tail_data_num = tile_data_num

    e += 1
    big_core_data_num = e * BLOCK_SIZE // input_bytes
    big_tile_num = e // tile_block_num
    final_big_tile_num = big_tile_num + (1 if e % tile_block_num else 0)
    big_tail_data_num = big_core_data_num - tile_data_num * big_tile_num
    if big_tail_data_num == 0:
        big_tail_data_num = tile_data_num

    return {
        "smallCoreDataNum": small_core_data_num,
        "bigCoreDataNum": big_core_data_num,
        "finalBigTileNum": final_big_tile_num,
        "finalSmallTileNum": final_small_tile_num,
        "tileDataNum": tile_data_num,
        "smallTailDataNum": small_tail_data_num,
        "bigTailDataNum": big_tail_data_num,
        "tailBlockNum": tail_block_num,
        "blockDim": core_num,
    }


def tiling(input_num: int, dtype: Any, core_num: int, ub_size: int,
           threshold: float = 1.0) -> ThresholdGradV2DTilingData:
    """``ThresholdGradV2D`` experimental tiling (§4.1): ``blockDim = coreNum`` after the split, tilingKey 0.

    ``input_num`` is the element count of input 0; ``core_num`` is ``GetCoreNumAiv()``; ``ub_size`` is
    ``GetCoreMemSize(UB)`` in bytes. Raises ``TilingError`` where CANN returns GRAPH_FAILED.
    """
    dt = OP_DEF.require_dtype(dtype)
    input_num = require_count("input_num", input_num)
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size)
    fields = _block_tiling(input_num, itemsize(dt), core_num, ub_size, ub_data_number(dt), OP_DEF.name)
    # schMode is a 1-bit template parameter the kernel ignores; the tiling always selects 0.
    return ThresholdGradV2DTilingData(**fields, threshold=threshold, tilingKey=0)


def core_ranges(td: TilingData, dtype: Any, input_num: int | None = None, *,
                tiles: bool = True) -> list[dict[str, Any]]:
    """What each core does, following the kernel's ``Init`` and ``Process`` (§4.2).

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

"""ReluGrad host side: op definition, infer-shape and the experimental 256-byte-block tiling.

aclnnThresholdBackward calls ReluGrad instead of ThresholdGradV2D when ``|threshold| <= FLT_EPSILON``
(``cann_facts.md`` §3.2 step 10). Mirrors ``ops-nn:experimental/activation/relu_grad/op_host/``
(``relu_grad_def.cpp`` and ``relu_grad_tiling.cpp``, §5): the same block split as ThresholdGradV2D
(shared code: ``threshold_grad_v2_d.op_host._block_tiling``) with ReluGrad's own UB budget per dtype.

The op definition lists both families of the two ops-nn copies: the experimental AscendC kernel is
registered for ascend910b, the main-tree one (atvoss broadcast template) for ascend950.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...acl.types import aclDataType as DT
from ...dtypes import itemsize
from ...opdev.op_def import Input, OpDef, Output
from ...opdev.tiling_data import TilingData, require_count, uint64
from ..threshold_grad_v2_d import op_host as _tgv2d

__all__ = ["OP_DEF", "EXPERIMENTAL_UB_NUM", "UB_DATA_NUMBER", "ReluGradTilingData", "core_ranges", "infer_shape",
           "tiling"]

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT32, DT.ACL_INT64)

OP_DEF = OpDef(
    name="ReluGrad",
    inputs=(Input("gradients", dtypes=_DTYPES), Input("features", dtypes=_DTYPES)),
    outputs=(Output("backprops", dtypes=_DTYPES),),
    aicore_configs=("ascend910b", "ascend950"),
    source="ops-nn:experimental/activation/relu_grad/op_host/relu_grad_def.cpp (ascend910b) + "
           "activation/relu_grad/op_host/relu_grad_def.cpp (ascend950)",
)

#: The experimental AscendC ReluGrad declares UB_NUM_FLOAT_FLOAT16 = 7, UB_NUM_BF16_INT8_UINT8 = 10 and
#: UB_NUM_INT32 = 6 (§5). Those cannot hold three double-buffered queues plus a mask for int32 once the
#: 8 KB Select reserve is taken, so the simulator runs ReluGrad on ThresholdGradV2D's kernel skeleton and
#: uses ThresholdGradV2D's numbers (§4.1); int64 (ascend950 only) gets 7 (8-byte elements: 6 x 8 B of
#: queues + mask fit in 7 x 8 B). ``EXPERIMENTAL_UB_NUM`` keeps the declared values for the book.
EXPERIMENTAL_UB_NUM: dict[DT, int] = {
    DT.ACL_FLOAT: 7, DT.ACL_FLOAT16: 7, DT.ACL_BF16: 10, DT.ACL_INT8: 10, DT.ACL_UINT8: 10, DT.ACL_INT32: 6,
}
UB_DATA_NUMBER: dict[DT, int] = {
    DT.ACL_FLOAT: 7, DT.ACL_FLOAT16: 7, DT.ACL_INT32: 8, DT.ACL_BF16: 10,
    DT.ACL_INT8: 14, DT.ACL_UINT8: 14, DT.ACL_INT64: 7,
}


class ReluGradTilingData(TilingData):
    """``ReluGradTilingData`` of the experimental ``relu_grad_tiling.h`` (8 x uint64 = 64 bytes)."""

    smallCoreDataNum: uint64
    bigCoreDataNum: uint64
    finalBigTileNum: uint64
    finalSmallTileNum: uint64
    tileDataNum: uint64
    smallTailDataNum: uint64
    bigTailDataNum: uint64
    tailBlockNum: uint64


def infer_shape(input_shape: Iterable[int], other_shape: Iterable[int] | None = None) -> tuple[int, ...]:
    """As ThresholdGradV2D: input 0's shape, or the broadcast of both when ``other_shape`` is given."""
    return _tgv2d.infer_shape(input_shape, other_shape)


def tiling(input_num: int, dtype: Any, core_num: int, ub_size: int) -> ReluGradTilingData:
    """Experimental ReluGrad tiling (§5 = §4.1 with ReluGrad's UB_NUM). ``core_num`` is ``GetCoreNum()``,
    which for this vector-only kernel is the AIV count. tilingKey 0."""
    dt = OP_DEF.require_dtype(dtype)
    input_num = require_count("input_num", input_num)
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size)
    fields = _tgv2d._block_tiling(input_num, itemsize(dt), core_num, ub_size, UB_DATA_NUMBER[dt], OP_DEF.name)
    return ReluGradTilingData(**fields, tilingKey=0)


def core_ranges(td: TilingData, dtype: Any, input_num: int | None = None, *,
                tiles: bool = True) -> list[dict[str, Any]]:
    """Per-core work of the ReluGrad kernel: identical offsets and tiles to ThresholdGradV2D's kernel."""
    return _tgv2d.core_ranges(td, dtype, input_num, tiles=tiles)

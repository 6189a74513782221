"""ThresholdGradV2D host side: op definition, infer-shape and the experimental 256-byte-block tiling.

Mirrors ``ops-nn:experimental/activation/threshold_grad_v2_d/op_host/``: ``threshold_grad_v2_d_def.cpp``
(``OP_DEF``), the infer-shape registration (``infer_shape``) and ``threshold_grad_v2_d_tiling.cpp``
(``tiling``; ``cann_facts.md`` §4.1). ``core_ranges`` turns a tiling into what each core of the kernel
(``op_kernel/threshold_grad_v2_d.h`` ``Init``/``Process``, §4.2) will touch, for figures and checks.

The block split, the kernel's per-core walk and the shape broadcast are shared with the experimental ReluGrad
tiling, which differs only in its per-dtype UB budget (§5): they live in ``ops/common/block_tiling.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...acl.types import aclDataType as DT
from ...acl.types import dtype_itemsize as itemsize  # numpy-free (the live tiling page)
from ...opdev.op_def import Attr, Input, OpDef, Output
from ...opdev.tiling_data import TilingData, float32, require_count, uint64
from ...tbe.schedule import TbeElewiseTilingData
from ..common.block_tiling import BLOCK_SIZE, block_core_ranges, block_tiling, broadcast_infer_shape

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
    """Output shape: input 0's shape, or the broadcast of both inputs (the L0 wrapper broadcasts, §3.2 step 10;
    the tiling counts input 0 only). Defined here, in the module that holds ``OP_DEF`` (the spec finds it so)."""
    return broadcast_infer_shape(input_shape, other_shape)


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
    fields = block_tiling(input_num, itemsize(dt), core_num, ub_size, ub_data_number(dt), OP_DEF.name)
    # schMode is a 1-bit template parameter the kernel ignores; the tiling always selects 0.
    return ThresholdGradV2DTilingData(**fields, threshold=threshold, tilingKey=0)


#: What each core does (``Init``/``Process``, §4.2): the block walk both experimental kernels share.
core_ranges = block_core_ranges

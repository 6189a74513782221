"""ReluGrad host side: op definition, infer-shape, the experimental tiling and its workspace request.

aclnnThresholdBackward calls ReluGrad instead of ThresholdGradV2D when ``|threshold| <= FLT_EPSILON``
(``cann_facts.md`` §3.2 step 10). The tiling mirrors the ops-nn experimental custom package,
``experimental/activation/relu_grad/op_host/relu_grad_tiling.cpp`` (``kernel_flavours.md`` §4):

* ``BLOCK_SIZE = 256`` and ``UB_NUM`` = {f32/f16: 7, bf16/int8/uint8: 10, int32: 6};
* ``core = GetCoreNum()`` (the vector-core count on A2/A3) and ``ub = GetCoreMemSize(UB)``;
* ``tileBlocks = (ub / 256) / UB_NUM``, ``tileData = tileBlocks * 256 / bytes``,
  ``L = roundUp(N * bytes, 256)``; one core if ``tileData >= N``, else ``min(core, L / 256)``;
* the big/small core split over 256-byte blocks, which is the same code as the experimental
  ThresholdGradV2D's (both use ``ops/common/block_tiling.py``);
* tilingKey ``GET_TPL_TILING_KEY(0)``, TilingData 8 x uint64, and one workspace of
  ``GetLibApiWorkSpaceSize()`` bytes (:func:`workspace_size`).

The op definition. ops-nn has two ReluGrad op definitions: the experimental one (``ascend910b``:
f32, f16, bf16, int8, uint8, int32) and the main-tree one (``ascend950``: the same plus int64). ``OP_DEF``
is their union, as one L0 op type is; the experimental package is built only for
:data:`EXPERIMENTAL_DTYPES`, so its tiling refuses int64 (the int64 kernel is the 950 main-tree one).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...acl.types import aclDataType as DT
from ...acl.types import dtype_itemsize as itemsize  # acl.types' dtype helpers: this module imports without numpy
from ...base.platform import SocInfo, get_soc, lib_api_workspace_size
from ...opdev.op_def import Input, OpDef, Output
from ...opdev.tiling_data import TilingData, require_count, uint64
from ...tbe.schedule import TbeElewiseTilingData
from ..common.block_tiling import BLOCK_SIZE, block_core_ranges, block_tiling, broadcast_infer_shape

__all__ = ["BLOCK_SIZE", "EXPERIMENTAL_DTYPES", "OP_DEF", "UB_NUM", "ReluGradTbeTilingData", "ReluGradTilingData",
           "core_ranges",
           "infer_shape", "tiling", "ub_num", "workspace_size"]

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT32, DT.ACL_INT64)

OP_DEF = OpDef(
    name="ReluGrad",
    inputs=(Input("gradients", dtypes=_DTYPES), Input("features", dtypes=_DTYPES)),
    outputs=(Output("backprops", dtypes=_DTYPES),),
    aicore_configs=("ascend910b", "ascend950"),
    source="ops-nn:experimental/activation/relu_grad/op_host/relu_grad_def.cpp (ascend910b; no int64) + "
           "activation/relu_grad/op_host/relu_grad_def.cpp (ascend950; with int64)",
)

#: The dtypes the experimental op definition registers (``relu_grad_def.cpp``, ascend910b): no int64.
EXPERIMENTAL_DTYPES: tuple[DT, ...] = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_UINT8,
                                       DT.ACL_INT32)

#: ``ubDataNumber``: how many tile-sized slices of UB one tile needs, per dtype (``UB_NUM_FLOAT_FLOAT16 7``,
#: ``UB_NUM_BF16_INT8_UINT8 10``, ``UB_NUM_INT32 6``). The source tests int32, then float/float16, and gives
#: every other dtype 10. The kernel's real plan (mask or temporaries, then 3 double-buffered queues) needs
#: 6.25, 6.5, 10, 10 and 6 slices: the int32 plan uses 6 of 6, close to the whole UB.
UB_NUM: dict[DT, int] = {
    DT.ACL_FLOAT: 7, DT.ACL_FLOAT16: 7, DT.ACL_BF16: 10, DT.ACL_INT8: 10, DT.ACL_UINT8: 10, DT.ACL_INT32: 6,
}

def _require_experimental(dtype: Any) -> DT:
    dt = OP_DEF.require_dtype(dtype)
    if dt not in EXPERIMENTAL_DTYPES:
        raise ValueError(f"the experimental ReluGrad has no kernel for {dt.short}: its op definition (ascend910b) "
                         f"lists {', '.join(d.short for d in EXPERIMENTAL_DTYPES)}; int64 ReluGrad is the "
                         "Ascend950 main-tree kernel")
    return dt


def ub_num(dtype: Any) -> int:
    """``ubDataNumber`` of the experimental tiling for ``dtype`` (ValueError for a dtype it is not built for)."""
    return UB_NUM[_require_experimental(dtype)]


def workspace_size(soc: str | SocInfo | None = None) -> int:
    """The workspace the experimental ReluGrad tiling requests: ``usrSize (0) + GetLibApiWorkSpaceSize()``,
    i.e. 16 MiB on DAV_2201 (910B, 910_93) and DAV_3510 (950), 2 MiB on the other architectures.
    ``soc`` is a catalogue name or entry (default: the SoC in force). The executor, not this function,
    turns it into ``workspaceSize`` (its bucket rule adds 512 B of rounding)."""
    return lib_api_workspace_size(get_soc(soc))              # usrSize is 0: only the library's workspace


class ReluGradTbeTilingData(TbeElewiseTilingData):
    """The TBE kernel's run-time variables (ReluGrad has no attribute; ``op_kernel/tbe.py``), declared on the
    host side so the tiling imports without the kernel."""


class ReluGradTilingData(TilingData):
    """``ReluGradTilingData`` of the experimental ``relu_grad_tiling_data.h`` (8 x uint64 = 64 bytes)."""

    smallCoreDataNum: uint64
    bigCoreDataNum: uint64
    finalBigTileNum: uint64
    finalSmallTileNum: uint64
    tileDataNum: uint64
    smallTailDataNum: uint64
    bigTailDataNum: uint64
    tailBlockNum: uint64


def infer_shape(input_shape: Iterable[int], other_shape: Iterable[int] | None = None) -> tuple[int, ...]:
    """Output shape: input 0's shape, or the broadcast of both inputs (the L0 wrapper broadcasts, §3.2 step 10;
    the tiling counts input 0 only). Defined here, in the module that holds ``OP_DEF`` (the spec finds it so)."""
    return broadcast_infer_shape(input_shape, other_shape)


def tiling(input_num: int, dtype: Any, core_num: int, ub_size: int) -> ReluGradTilingData:
    """The experimental ReluGrad tiling (``relu_grad_tiling.cpp``; ``kernel_flavours.md`` §4).

    ``input_num`` is input 0's element count, ``core_num`` is ``GetCoreNum()`` (on A2/A3 the AIV count; the
    kernel is vector-only), ``ub_size`` is ``GetCoreMemSize(UB)`` (196352 B on 910B/910_93 as CANN reports
    it). Returns the eight fields plus ``blockDim`` and tilingKey 0. Raises ``TilingError`` where CANN
    returns GRAPH_FAILED (0 elements, 0 cores) and where CANN would divide by zero (a UB too small for one
    block per slice), ValueError for a dtype the experimental package is not built for.
    """
    dt = _require_experimental(dtype)
    input_num = require_count("input_num", input_num)
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size)
    fields = block_tiling(input_num, itemsize(dt), core_num, ub_size, UB_NUM[dt], OP_DEF.name)
    return ReluGradTilingData(**fields, tilingKey=0)


def core_ranges(td: TilingData, dtype: Any, input_num: int | None = None, *,
                tiles: bool = True) -> list[dict[str, Any]]:
    """Per-core work of the experimental kernel (``relu_grad.h`` ``Init``/``Process``): the first
    ``tailBlockNum`` cores are big, offsets and tiles are computed as in the experimental ThresholdGradV2D
    (``ops/common/block_tiling.block_core_ranges``: same fields)."""
    return block_core_ranges(td, dtype, input_num, tiles=tiles)

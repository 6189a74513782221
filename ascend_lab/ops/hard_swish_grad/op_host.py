"""HardSwishGrad host side: op definition, infer-shape and the tiling (numpy-free: the live tiling page runs it).

The tiling is the gallery family's (chapter "A family of kernels"): each core takes ``blockFactor`` elements (a whole
number of 256-byte float repeats, so every core's slice starts on a repeat), each tile ``ubFactor`` of them -- as
many as fit when every element of a tile needs :data:`UB_BYTES_PER_ELEMENT` bytes of UB: the three double-buffered
queues (dy, x, dx) in T, the float32 work (x, dy, the slope) and two compare bit-masks (a byte per element is
counted for them; ``ubFactor`` is a multiple of 256 so the second mask starts on a 32-byte boundary).
"""

from __future__ import annotations

from typing import Any

from ...acl.types import aclDataType as DT
from ...acl.types import dtype_itemsize
from ...opdev.op_def import Input, OpDef, Output, infer_shape_same_as_input
from ...opdev.tiling_data import TilingData, int64, require_count
from ..common.gallery_tiling import core_ranges, family_tiling, tiling_dtype

__all__ = ["BUFFER_NUM", "FLOAT_SLOTS", "OP_DEF", "HardSwishGradTilingData", "core_ranges", "infer_shape", "tiling",
           "tiling_dtype", "ub_bytes_per_element"]

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)
OP_DEF = OpDef(
    name="HardSwishGrad", inputs=(Input("dy", dtypes=_DTYPES), Input("x", dtypes=_DTYPES)),
    outputs=(Output("dx", dtypes=_DTYPES),), aicore_configs=("ascend910b",),
    source="ascend_lab gallery (written for the book, in the style of ops-nn experimental/activation)")

#: ``BUFFER_NUM`` of the kernel's queues.
BUFFER_NUM = 2
#: float32 work buffers per element: x, dy (fp16/bf16 cast up), the slope.
FLOAT_SLOTS = 3
#: ubFactor and blockFactor are multiples of 256 elements (whole float repeats; 32-byte aligned masks).
_ALIGN = 256


class HardSwishGradTilingData(TilingData):
    """The struct of the kernel's ``hard_swish_grad_tiling_data.h`` (3 x int64 = 24 bytes): the element count,
    each core's share and the elements of one UB tile."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64


def infer_shape(shape: Any, *others: Any) -> tuple[int, ...]:
    return infer_shape_same_as_input(shape)


def ub_bytes_per_element(dtype: Any) -> int:
    """UB bytes one element of a tile needs: 3 queues x BUFFER_NUM in T, FLOAT_SLOTS floats, a byte of masks."""
    return 3 * BUFFER_NUM * dtype_itemsize(OP_DEF.require_dtype(dtype)) + 4 * FLOAT_SLOTS + 1


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int) -> HardSwishGradTilingData:
    """The tiling for ``total_length`` elements of ``dtype`` on ``core_num`` cores of ``ub_size`` bytes of UB;
    ``tilingKey`` 0/1/2 for float32/float16/bfloat16 (the family's arithmetic: ``ops.common.gallery_tiling``)."""
    dt = OP_DEF.require_dtype(dtype)
    n = require_count("total_length", total_length)
    per_element = ub_bytes_per_element(dt)
    return family_tiling(HardSwishGradTilingData, "HardSwishGrad", n, dt.short, core_num, ub_size, per_element, _ALIGN)

"""DiffScaleAdd host side: op definition, infer-shape, tiling (numpy-free: the live tiling page runs it)."""

from __future__ import annotations

from typing import Any

from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.opdev.op_def import Input, OpDef, Output, infer_shape_same_as_input
from ascend_lab.opdev.tiling_data import TilingData, float32, int64

from ..common import core_ranges, elementwise_tiling, tiling_dtype

__all__ = ["OP_DEF", "SCALE", "DiffScaleAddTilingData", "core_ranges", "infer_shape", "tiling", "tiling_dtype"]

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
OP_DEF = OpDef(name="DiffScaleAdd",
               inputs=(Input("x", dtypes=_DTYPES), Input("y", dtypes=_DTYPES), Input("z", dtypes=_DTYPES)),
               outputs=(Output("out", dtypes=_DTYPES),), aicore_configs=("ascend910b", "ascend950"),
               source="tests/fixture_ops/diff_scale_add")
SCALE = 0.25


class DiffScaleAddTilingData(TilingData):
    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    scale: float32


def infer_shape(shape: Any, *others: Any) -> tuple[int, ...]:
    return infer_shape_same_as_input(shape)


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int, scale: float = SCALE) -> DiffScaleAddTilingData:
    return elementwise_tiling(DiffScaleAddTilingData, OP_DEF, total_length, dtype, core_num, ub_size, scale=scale)

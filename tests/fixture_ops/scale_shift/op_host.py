"""ScaleShift host side: op definition, infer-shape, tiling (numpy-free: the live tiling page runs it)."""

from __future__ import annotations

from typing import Any

from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.opdev.op_def import Input, OpDef, Output, infer_shape_same_as_input
from ascend_lab.opdev.tiling_data import TilingData, float32, int64

from ..common import core_ranges, elementwise_tiling, tiling_dtype

__all__ = ["BIAS", "GAIN", "OP_DEF", "ScaleShiftTilingData", "core_ranges", "infer_shape", "tiling", "tiling_dtype"]

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
OP_DEF = OpDef(name="ScaleShift", inputs=(Input("x", dtypes=_DTYPES),), outputs=(Output("y", dtypes=_DTYPES),),
               aicore_configs=("ascend910b", "ascend950"), source="tests/fixture_ops/scale_shift")
GAIN, BIAS = 2.0, 0.5


class ScaleShiftTilingData(TilingData):
    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    gain: float32
    bias: float32


def infer_shape(shape: Any) -> tuple[int, ...]:
    return infer_shape_same_as_input(shape)


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int, gain: float = GAIN,
           bias: float = BIAS) -> ScaleShiftTilingData:
    return elementwise_tiling(ScaleShiftTilingData, OP_DEF, total_length, dtype, core_num, ub_size, gain=gain,
                              bias=bias)

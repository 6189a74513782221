"""MulGrad host side: op definition and a HardSigmoidGrad-style tiling (blockFactor per core, ubFactor per tile)."""

from __future__ import annotations

from typing import Any

from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.dtypes import itemsize
from ascend_lab.opdev.op_def import Input, OpDef, Output, infer_shape_same_as_input
from ascend_lab.opdev.tiling_data import TilingData, ceil_div, floor_align, int64, require_count

_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
OP_DEF = OpDef(name="MulGrad", inputs=(Input("grad", dtypes=_DTYPES), Input("x", dtypes=_DTYPES)),
               outputs=(Output("y", dtypes=_DTYPES),), aicore_configs=("ascend910b", "ascend950"),
               source="tests/fixture_ops/mul_grad")
BUFFERS = 7   # three double-buffered queues, plus one block of room for the library's reserved UB


class MulGradTilingData(TilingData):
    totalLength: int64
    blockFactor: int64
    ubFactor: int64


def infer_shape(shape: Any, other: Any = None) -> tuple[int, ...]:
    return infer_shape_same_as_input(shape)


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int) -> MulGradTilingData:
    dt = OP_DEF.require_dtype(dtype)
    n = require_count("total_length", total_length)
    if n == 0:
        return MulGradTilingData(totalLength=0, blockFactor=0, ubFactor=0, blockDim=1, tilingKey=0)
    factor = ceil_div(n, core_num)
    ub_factor = floor_align(ub_size // itemsize(dt) // BUFFERS, 32)
    return MulGradTilingData(totalLength=n, blockFactor=factor, ubFactor=ub_factor, blockDim=ceil_div(n, factor),
                             tilingKey=0 if dt == DT.ACL_FLOAT else 1)


def core_ranges(td: MulGradTilingData, dtype: Any = None, n: int | None = None, *,
                tiles: bool = True) -> list[dict[str, Any]]:
    size = itemsize(dtype) if dtype is not None else (4 if td.tilingKey == 0 else 2)
    out = []
    for core in range(td.blockDim):
        offset = core * td.blockFactor
        data = min(td.blockFactor, td.totalLength - offset)
        if data <= 0:
            continue
        count = ceil_div(data, td.ubFactor)
        row: dict[str, Any] = {"core": core, "kind": "big" if data == td.blockFactor else "small", "offset": offset,
                               "data_num": data, "tile_num": count, "tail": data - (count - 1) * td.ubFactor,
                               "padded_end": offset + data, "padding": 0, "bytes": data * size}
        if tiles:
            row["tiles"] = [(i, offset + i * td.ubFactor, min(td.ubFactor, data - i * td.ubFactor))
                            for i in range(count)]
        out.append(row)
    return out

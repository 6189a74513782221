"""What the two C++ fixture operators share: a numpy-free elementwise tiling and the launch of a C++ kernel file.

Each core takes ``blockFactor`` elements (a multiple of 32 bytes, so every core's slice starts on a block), each
tile ``ubFactor`` (``BUFFER_NUM`` buffers of every tensor fit in the UB). The host half imports without numpy: the
live tiling page (and ``tests/test_tiling_no_numpy.py``) runs it where there is none.
"""

from __future__ import annotations

from typing import Any

from ascend_lab.acl.types import dtype_itemsize
from ascend_lab.opdev.op_def import OpDef
from ascend_lab.opdev.tiling_data import (
    TilingData,
    TilingError,
    block_factor_ranges,
    ceil_div,
    floor_align,
    require_count,
)

#: ``static constexpr int32_t BUFFER_NUM = 2`` in the kernels.
BUFFER_NUM = 2


def elementwise_tiling(cls: type[TilingData], op_def: OpDef, n: Any, dtype: Any, core_num: int, ub_size: int,
                       **attrs: float) -> Any:
    """``cls`` for ``n`` elements: one slice per core, tiles that fit ``BUFFER_NUM`` buffers of every tensor of
    ``op_def`` in ``ub_size`` bytes; ``tilingKey`` 0 for float32, 1 for float16 (the dtype, for a bare tiling)."""
    dt = op_def.require_dtype(dtype)
    n = require_count("total_length", n)
    key = 0 if dt.short == "float32" else 1
    if n == 0:
        return cls(totalLength=0, blockFactor=0, ubFactor=0, **attrs, blockDim=1, tilingKey=key)
    size = dtype_itemsize(dt)
    tensors = len(op_def.inputs) + len(op_def.outputs)
    ub_factor = floor_align(ub_size // size // (tensors * BUFFER_NUM), 32 // size)
    if ub_factor == 0:
        raise TilingError(f"{op_def.name}: a UB of {ub_size} B holds no 32-byte block for each of the "
                          f"{tensors * BUFFER_NUM} buffers")
    factor = ceil_div(ceil_div(n, core_num), 32 // size) * (32 // size)
    return cls(totalLength=n, blockFactor=factor, ubFactor=ub_factor, **attrs, blockDim=ceil_div(n, factor),
               tilingKey=key)


def tiling_dtype(td: Any) -> str:
    """The dtype a tiling's key encodes."""
    return "float32" if td.tilingKey == 0 else "float16"


def core_ranges(td: Any, dtype: Any = None, n: int | None = None, *, tiles: bool = True) -> list[dict[str, Any]]:
    """What each core moves: ``blockFactor`` elements from ``blockFactor * core``, in tiles of ``ubFactor``."""
    if td.totalLength == 0:
        return []
    size = dtype_itemsize(dtype if dtype is not None else tiling_dtype(td))
    return block_factor_ranges(td.totalLength, td.blockFactor, td.ubFactor, td.blockDim, size, tiles=tiles)

"""The tiling of the gallery's kernel family (chapter 12.7), shared by SiluGrad, GeluGrad and HardSwishGrad.

Each core takes ``blockFactor`` elements (a multiple of ``align``: whole float repeats, so every core's slice
starts on a repeat), each tile ``ubFactor`` of them -- as many as fit when every element of a tile needs
``bytes_per_element`` bytes of UB. The three operators differ only in that budget (their float work buffers and
masks) and in ``align``; the arithmetic lives here once, so no operator package imports another. The tiling key
is the dtype: 0 float32, 1 float16, 2 bfloat16. Numpy-free: the live tiling page runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...acl.types import dtype_itemsize
from ...opdev.tiling_data import TilingData, TilingError, block_factor_ranges, ceil_div, floor_align

__all__ = ["KEYS", "core_ranges", "family_tiling", "tiling_dtype"]

#: The tiling key of each dtype (the kernels' ``schMode`` template argument).
KEYS = {"float32": 0, "float16": 1, "bfloat16": 2}


def family_tiling(make: Callable[..., TilingData], op_name: str, n: int, dtype: str, core_num: int, ub_size: int,
                  bytes_per_element: int, align: int) -> TilingData:
    """``make(...)`` (the op's TilingData class) filled for ``n`` elements of ``dtype`` on ``core_num`` cores of
    ``ub_size`` bytes of UB; a UB that holds no ``align``-element tile is a TilingError naming ``op_name``."""
    key = KEYS[dtype]
    if n == 0:
        return make(totalLength=0, blockFactor=0, ubFactor=0, blockDim=1, tilingKey=key)
    ub_factor = floor_align(ub_size // bytes_per_element, align)
    if ub_factor == 0:
        raise TilingError(f"{op_name}: a UB of {ub_size} B holds no {align}-element tile "
                          f"({bytes_per_element} B per element)")
    factor = ceil_div(ceil_div(n, core_num), align) * align
    return make(totalLength=n, blockFactor=factor, ubFactor=ub_factor, blockDim=ceil_div(n, factor), tilingKey=key)


def tiling_dtype(td: Any) -> str:
    """The dtype a tiling's key encodes."""
    return {v: k for k, v in KEYS.items()}[td.tilingKey]


def core_ranges(td: Any, dtype: Any = None, n: int | None = None, *, tiles: bool = True) -> list[dict[str, Any]]:
    """What each core moves: ``blockFactor`` elements from ``blockFactor * core``, in tiles of ``ubFactor``."""
    if td.totalLength == 0:
        return []
    size = dtype_itemsize(dtype if dtype is not None else tiling_dtype(td))
    return block_factor_ranges(td.totalLength, td.blockFactor, td.ubFactor, td.blockDim, size, tiles=tiles)

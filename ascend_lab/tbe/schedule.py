"""The automatic elementwise schedule of the TBE model: compile info, then the runtime tiling.

A TBE kernel's tiling happens in two places (``kernel_flavours.md`` §5.5):

* **at compile time** the elementwise schedule counts how many tile-sized tensors live at once
  (``coexist``) and writes ``_base_info = [core, maxDtypeBytes, maxUb, maxUbDb]`` into the compile info;
* **at run time** ``op_tiling/elewise_v3.cc`` (canndev mirror @01e6dc6c) turns the element count into a
  block split, a UB split and a double-buffer decision, and hands the kernel ``blockDim``, a tiling key and
  the variables ``[dim, blockFactor, ubFactor]``.

The run-time rules are public and reproduced exactly (:func:`elewise_tiling`, citing ``elewise_v3.cc``
lines). The compile-time count is **a model**: the shipping ``elewise_schedule.py`` walks the graph and
adds temporaries we cannot see for these kernels, so ``coexist`` follows §5.5's PROPOSAL --
``#inputs + #outputs + 1``, ``+1`` when a cast to fp32 is live -- with ``maxUb = floor(floor(UB /
coexist) / 32) * 32 / maxDtypeBytes`` (``maxUbDb`` the same with UB / 2) and UB the platform's whole UB
(262144 on 910A/310P, 196608 on A2/A3). The UI labels it "TBE (modelled schedule)".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..dtypes import itemsize
from ..dtypes import name as dtype_name
from ..opdev.tiling_data import TilingData, TilingError, ceil_div, int32, require_count
from .dsl import Compute, compile_for, storage

__all__ = [
    "ALIGN", "COMMON_TILING_KEY", "DB_TILING_KEY", "EMPTY_TILING_KEY", "SCHEDULE_LABEL", "SPLIT_FACTORS",
    "CompileInfo", "TbeElewiseTilingData", "compile_info", "core_ranges", "double_buffered", "elewise_tiling",
    "op_tiling",
]

#: How the book and UI name this schedule: the compile-time half is a model, not the shipping code.
SCHEDULE_LABEL = "TBE (modelled schedule)"
#: ``SPLIT_FACTORS`` (elewise_v3.cc:32-37): the most elements one UB tile may hold, by maxDtypeBytes.
SPLIT_FACTORS: dict[int, int] = {1: 32767, 2: 32767, 4: 16383, 8: 8191}
#: ``ELEWISE_REPEAT_NUMS`` (:38): block and UB factors are multiples of 128 elements.
ALIGN = 128
#: ``CalcCommonKey`` (:350-357): 210000000 for the common elementwise pattern, +10000 when double-buffered.
COMMON_TILING_KEY = 210000000
DB_TILING_KEY = 10000
#: ``DoEmptyTiling``: an empty input runs one core with key INT32_MAX.
EMPTY_TILING_KEY = 2**31 - 1
_BLOCK_BYTES = 32


@dataclass(frozen=True)
class CompileInfo:
    """What the compile step hands the run-time tiling (``_base_info``) plus how it was counted."""
    core_num: int
    ub_size: int
    coexist: int
    max_dtype_bytes: int
    max_ub: int          # elements per tile, single buffer
    max_ub_db: int       # elements per tile, double buffer
    out_dtype: str

    @property
    def base_info(self) -> list[int]:
        """``_base_info`` as the compile info stores it: [core, maxDtypeBytes, maxUb, maxUbDb]."""
        return [self.core_num, self.max_dtype_bytes, self.max_ub, self.max_ub_db]


def compile_info(compute: Compute, core_num: int, ub_size: int) -> CompileInfo:
    """The compile info of ``compute`` for ``core_num`` cores and ``ub_size`` bytes of UB (the MODEL above)."""
    core_num = require_count("core_num", core_num)
    ub_size = require_count("ub_size", ub_size)
    if core_num == 0:
        raise TilingError("TBE elementwise tiling: core_num is 0; need at least one core")
    coexist, width = compute.coexist, compute.max_dtype_bytes
    max_ub = (ub_size // coexist) // _BLOCK_BYTES * _BLOCK_BYTES // width
    max_ub_db = (ub_size // 2 // coexist) // _BLOCK_BYTES * _BLOCK_BYTES // width
    return CompileInfo(core_num, ub_size, coexist, width, max_ub, max_ub_db, compute.output.dtype)


class TbeElewiseTilingData(TilingData):
    """The run-time variables of a one-dimensional TBE elementwise kernel (``AddTilingData`` order,
    elewise_v3.cc ``WriteCommonData``: the fused dim, then blockFactor, then ubFactor, as int32)."""

    dim0: int32
    blockFactor: int32
    ubFactor: int32


def double_buffered(td: TilingData) -> bool:
    """Whether the tiling key asks for the double-buffered kernel (key + 10000)."""
    return td.tilingKey != EMPTY_TILING_KEY and (td.tilingKey // DB_TILING_KEY) % 10 == 1


def elewise_tiling(n: int, info: CompileInfo, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
                   **extra: Any) -> TbeElewiseTilingData:
    """elewise_v3.cc ``DoTiling`` for one fused dimension of ``n`` elements.

    1. Empty input: blockDim 1, key INT32_MAX (``DoEmptyTiling``).
    2. Multi-core only if ``n >= elemsPerBlock(outDtype) * core * 2`` (:313-318); otherwise one core,
       ``blockFactor = ubFactor = n`` and no double buffer.
    3. ``blockFactor = roundUp(ceil(n / core), 128)``, ``blockDim = ceil(n / blockFactor)`` (:320-326).
    4. Double buffer if ``blockFactor > min(maxUb, splitFactor)`` (:359-379).
    5. ``limit = min(maxUbDb if double-buffered else maxUb, splitFactor)``; if ``limit < blockFactor`` split
       into ``ceil(blockFactor / limit)`` near-equal chunks rounded up to 128, or down when that passes the
       limit (:328-348).
    6. Key 210000000, + 10000 when double-buffered (:350-357).

    ``extra`` fills the fields a subclass adds (an operator's attributes, see the op's ``tbe.py``).
    """
    n = require_count("n", n)
    if n == 0:
        return cls(dim0=0, blockFactor=0, ubFactor=0, blockDim=1, tilingKey=EMPTY_TILING_KEY, **extra)
    if n > 2**31 - 1:
        raise TilingError(f"TBE elementwise tiling: {n} elements do not fit the int32 tiling variables")
    split = SPLIT_FACTORS[info.max_dtype_bytes]
    per_block = _BLOCK_BYTES // storage(info.out_dtype).itemsize
    db = False
    if n < per_block * info.core_num * 2:
        block_dim, block_factor, ub_factor = 1, n, n
    else:
        block_factor = ceil_div(ceil_div(n, info.core_num), ALIGN) * ALIGN
        block_dim = ceil_div(n, block_factor)
        db = block_factor > min(info.max_ub, split)
        limit = min(info.max_ub_db if db else info.max_ub, split)
        ub_factor = block_factor
        if limit < ub_factor:
            if limit <= 0:
                raise TilingError(f"TBE elementwise tiling: ub limit must be greater than zero, but it is {limit}")
            ub_for_num = ceil_div(ub_factor, limit)
            adjust = ceil_div(ub_factor, ub_for_num)
            ub_factor = ceil_div(adjust, ALIGN) * ALIGN
            if ub_factor > limit:
                ub_factor = adjust // ALIGN * ALIGN
    key = COMMON_TILING_KEY + (DB_TILING_KEY if db else 0)
    return cls(dim0=n, blockFactor=block_factor, ubFactor=ub_factor, blockDim=block_dim, tilingKey=key, **extra)


def core_ranges(td: TilingData, dtype: Any = None, n: int | None = None, *,
                tiles: bool = True) -> list[dict[str, Any]]:
    """What each core of a TBE elementwise kernel does, in the shape the other kernels' ``core_ranges`` use.

    Core ``i`` starts at ``blockFactor * i`` and handles ``min(blockFactor, dim0 - offset)`` elements in
    tiles of ``ubFactor`` (a shorter last tile). Copies move exact byte counts (32-byte aligned in UB, no
    GM overrun), so ``padding`` is 0. ``bytes`` uses ``dtype`` (default 4 bytes per element)."""
    total, factor, ub_factor = td.dim0, td.blockFactor, td.ubFactor
    if total > 0 and ub_factor <= 0:
        raise TilingError(f"ubFactor is {ub_factor}: the kernel would loop forever")
    size = itemsize(dtype) if dtype is not None else 4
    out = []
    for core in range(td.blockDim):
        offset = factor * core
        data_num = min(factor, total - offset)
        if data_num <= 0:
            continue
        tile_num = ceil_div(data_num, ub_factor)
        entry: dict[str, Any] = {
            "core": core, "kind": "big" if data_num == factor else "small", "offset": offset,
            "data_num": data_num, "tile_num": tile_num, "tail": data_num - (tile_num - 1) * ub_factor,
            "padded_end": offset + data_num, "padding": 0, "bytes": data_num * size,
        }
        if tiles:
            entry["tiles"] = [(i, offset + i * ub_factor, min(ub_factor, data_num - i * ub_factor))
                              for i in range(tile_num)]
        out.append(entry)
    return out


def op_tiling(op_type: str, describe: Callable[[str], Compute], dtypes: Sequence[str], n: int, dtype: Any,
              core_num: int, ub_size: int, cls: type[TbeElewiseTilingData] = TbeElewiseTilingData,
              **extra: Any) -> TbeElewiseTilingData:
    """An operator's TBE tiling: its description's compile info, then :func:`elewise_tiling`.

    ``describe(dtype_name)`` is built for a representative TBE SoC: ``coexist`` and ``maxDtypeBytes`` count
    inputs, outputs, casts to fp32 and dtypes, which every per-SoC path of these kernels shares."""
    name = dtype_name(dtype)
    if name not in dtypes:
        raise TilingError(f"TBE {op_type} supports {', '.join(dtypes)}, got {name}")
    with compile_for("Ascend910B4"):
        compute = describe(name)
    return elewise_tiling(n, compile_info(compute, core_num, ub_size), cls, **extra)

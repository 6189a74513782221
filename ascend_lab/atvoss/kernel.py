"""An operator on the template: its DAG per dtype, host tiling, template arguments and per-core ranges.

An ops-nn operator built on atvoss writes three small things -- the DAG header (one DAG per dtype family),
the arch35 tiling (dtype checks, ``BroadcastBaseTiling<Dag>::DoTiling``, ``SetScalar``, the tiling key with
its own dtype ids) and the kernel entry (``BroadcastSch<schMode, Dag>``). :class:`TemplateOp` holds the
first two as data and gives the registry what a ``KernelSpec`` needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dtypes import to_numpy
from ..opdev.tiling_data import TilingData, TilingError
from .dag import Dag
from .schedule import instantiation
from .tiling import (
    broadcast_base_tiling,
    dimension_collapse,
    sch_mode_of,
    template_core_ranges,
    workspace_size,
)

__all__ = ["TemplateOp"]


@dataclass(frozen=True)
class TemplateOp:
    """``dag_for(dtype)`` -> the op's DAG for that input dtype; ``dtype_ids`` -> the key's dtype id per dtype
    (the op's ``*_struct.h``); ``scalars(attrs)`` -> the values the host passes to ``SetScalar<float>``."""
    name: str
    dag_for: Callable[[np.dtype], Dag]
    dtype_ids: Mapping[np.dtype, int]
    scalars: Callable[[Mapping[str, Any]], Sequence[float]] = lambda attrs: ()

    def dtype(self, dtype: Any) -> np.dtype:
        dt = np.dtype(dtype) if isinstance(dtype, (np.dtype, type)) else to_numpy(dtype)
        if dt not in self.dtype_ids:
            names = ", ".join(str(d) for d in self.dtype_ids)
            raise TilingError(f"{self.name} (atvoss) supports {names}; got {dt}")
        return dt

    def tiling_for_shapes(self, shapes: Sequence[Sequence[int]], out_shape: Sequence[int], dtype: Any,
                          core_num: int, ub_size: int, **attrs: Any) -> TilingData:
        """The op's arch35 tiling on the inputs' own shapes (broadcast allowed)."""
        dt = self.dtype(dtype)
        return broadcast_base_tiling(self.dag_for(dt), shapes, out_shape, core_num, ub_size,
                                     dtype_id=self.dtype_ids[dt], scalars=self.scalars(attrs))

    def tiling(self, n: int, dtype: Any, core_num: int, ub_size: int, **attrs: Any) -> TilingData:
        """The tiling for every input of the op's DAG holding ``n`` elements (the registry's one-dimensional
        call), however many inputs the DAG has."""
        if n <= 0:
            raise TilingError(f"{self.name}: the template's tiling fails on an empty tensor (dimLength is zero)")
        inputs = self.dag_for(self.dtype(dtype)).input_size
        return self.tiling_for_shapes([(n,)] * inputs, (n,), dtype, core_num, ub_size, **attrs)

    def template_args(self, td: TilingData, dtype: Any, buffer_num: int = 2) -> dict[str, Any]:
        """``BroadcastSch<schMode, Dag>``: the DAG of the dtype, the schMode the key selects, the struct.

        ``buffer_num`` is accepted for a uniform signature and ignored: the template's double buffering is
        its ping/pong slots, not a BUFFER_NUM constant."""
        dt = self.dtype(dtype)
        return {"dag": self.dag_for(dt), "sch_mode": sch_mode_of(td.tilingKey), "tiling_class": type(td)}

    def instantiation(self, dtype: Any, sch_mode: int = 201, scalar_inputs: Sequence[int] = ()) -> str:
        """The Python source the simulator runs for every tile of ``BroadcastSch<sch_mode, Dag>`` with the DAG of
        ``dtype`` (:func:`.schedule.instantiation`): the template instantiated, one AscendC call per line."""
        return instantiation(self.dag_for(self.dtype(dtype)), sch_mode, scalar_inputs)

    def workspace_size(self, soc: Any = None) -> int:
        """16 MiB, as every BroadcastBaseTiling requests (kernel_flavours.md §3.1)."""
        return workspace_size(soc)

    def core_ranges(self, td: TilingData, dtype: Any = None, n: int | None = None, *,
                    tiles: bool = True) -> list[dict[str, Any]]:
        """What each core writes of the **output** (rows as the other kernels' ``core_ranges``).

        One-dim schedules: core b starts at ``blockFormer * tile * b`` and runs ``blockFormer`` tiles
        (``blockTail`` on the last core); only the last tile of the last core is ``ubTail`` long. kind is
        "big" for a full share, "small" for a shorter last core. General broadcast: each UB loop writes one
        contiguous run of the output; ``tiles`` lists them as (index, start, length). DataCopyPad moves exact
        bytes, so ``padding`` is 0. ``dtype`` sets ``bytes`` (default: the key's dtype via the DAG)."""
        if dtype is not None:
            size = self.dtype(dtype).itemsize
        else:                                   # the key's dtype id (the first dtype with that id)
            size = next((d.itemsize for d, i in self.dtype_ids.items() if i == td.tilingKey >> 16), 1)
        return template_core_ranges(td, size, tiles=tiles)

    def collapse(self, shapes: Sequence[Sequence[int]], out_shape: Sequence[int]) -> tuple[list, list]:
        """DimensionCollapse of these shapes (for explanations)."""
        return dimension_collapse(shapes, out_shape)

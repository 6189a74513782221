"""Tile maps and dtype-support tables of registered operators: the data viz draws, asked of the registry.

A bare TilingData does not say whose it is; the registry knows (``registry.op_for_tiling``), and the op's kernel
spec knows how its cores walk the tiling (``KernelSpec.core_ranges``). These functions ask it, build the plain
records of :mod:`ascend_lab.viz.data` (:class:`~ascend_lab.viz.data.TileMap`) and hand them to viz's figures,
which only draw. ``viz.tile_map``, ``viz.plot_tile_map``, ``viz.support_table`` and ``viz.plot_support`` are
these functions (the viz package re-exports them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from ..atvoss.tiling import advance_split, sch_mode_of
from ..base import platform
from ..dtypes import as_acl_dtype, itemsize
from ..live.tile_map import TileSegment, span, tile_map_parts
from ..ops import registry
from ..viz.data import TileMap
from ..viz.figures import support_figure, tile_map_figure

__all__ = ["SUPPORT_DTYPES", "plot_support", "plot_template_tile_map", "plot_tile_map", "support_table",
           "template_tile_map", "tile_map"]


# --- tile map of a registered op's tiling -------------------------------------------------------------------------
def _tiling_of(source: Any) -> Any:
    """A TilingData, or something carrying one (a ``Run``, a ``KernelRun``, a ``ub_plan`` dict)."""
    if isinstance(source, dict) and "tiling" in source:
        return source["tiling"]
    td = getattr(source, "tiling", None)
    if td is not None and hasattr(td, "as_dict"):
        return td
    if hasattr(source, "as_dict") and hasattr(source, "blockDim"):
        return source
    raise TypeError(f"need a TilingData (or a run/plan carrying one), got {type(source).__name__}")


def tile_map(source: Any, dtype: Any = None, n: int | None = None, *, ranges: list[dict[str, Any]] | None = None,
             tile_field: str | None = None) -> TileMap:
    """Per-core tile assignment of a tiling: one segment per tile, from the op's ``core_ranges``.

    The registry finds the op from the TilingData's class. Some tilings know their dtype (HardSigmoidGrad's
    tilingKey) and N (totalLength); others need ``dtype`` (for bytes) and ``n`` (to show the padding past
    the logical end); a ``Run`` supplies both. For a tiling of an op that is not registered (a learner's),
    pass its per-core ``ranges`` (``core_ranges`` rows) and the ``tile_field`` naming the tile size.
    """
    td = _tiling_of(source)
    if ranges is not None:
        return _tile_map_from(td, None if dtype is None else as_acl_dtype(dtype), n, ranges, tile_field or "ubFactor",
                              type(td).__name__.removesuffix("TilingData"))
    node = getattr(source, "kernel_node", None)
    if node is not None:                  # a Run says which op and kernel made the tiling (a struct may be shared)
        spec = registry.get(node.op)
        kernel = spec.kernel(node.attrs["kernel"])
    else:
        spec, kernel = registry.op_for_tiling(td)
    out = getattr(source, "out", None)
    if dtype is None and out is not None:
        dtype = out.dtype
    if dtype is None:
        dtype = kernel.tiling_dtype(td)
    if dtype is None:
        raise ValueError(f"{spec.op_type} tilings do not record their dtype: pass dtype= (and n= for the padding)")
    dt = as_acl_dtype(dtype)          # the door: one aclDataType from here down (core_ranges, tile_map_parts)
    if n is None and out is not None:
        n = int(out.size)
    if n is None:
        n = getattr(td, "totalLength", None)
    cores = kernel.core_ranges(td, dt, n)
    field = kernel.tile_field if hasattr(td, kernel.tile_field) else None
    return _tile_map_from(td, dt, n, cores, field, spec.op_type)


def _tile_map_from(td: Any, dtype: Any, n: int | None, cores: list[dict[str, Any]], tile_field: str | None,
                   op: str) -> TileMap:
    return TileMap(**tile_map_parts(td, dtype, n, cores, tile_field, op))


def plot_tile_map(source: Any, dtype: Any = None, n: int | None = None, *, ranges: list[dict[str, Any]] | None = None,
                  tile_field: str | None = None) -> Figure:
    """Per-core tile assignment: the flat tensor split into cores (top) and each core's tiles (bottom), big vs
    small cores, the tail tile and (ThresholdGradV2D) the padding past the logical end.

    ``source`` is a TilingData (or a Run / KernelRun / ub_plan dict carrying one); ThresholdGradV2D needs
    ``dtype`` and ``n`` for bytes and padding (a Run supplies both). ``ranges``/``tile_field``: see
    :func:`tile_map` (a tiling of an op that is not registered).
    """
    return tile_map_figure(tile_map(source, dtype, n, ranges=ranges, tile_field=tile_field))


# --- a template tiling's tile map ---------------------------------------------------------------------------------
def template_tile_map(td: Any, op: str, dtype: Any, n: int | None = None) -> TileMap:
    """The tile map of a ``BroadcastBaseTiling`` result of ``op`` (a registered op on the template): one segment
    per tile of the **output**, from the op's own ``core_ranges``. A tile is ``ubFormer`` (201) or ``tileNum``
    (202) elements, or for the general broadcast schedules ``ubFormer`` rows of the split axis times the
    output's inner dims; the tail is ``ubTail`` of the same."""
    spec = registry.get(op)
    kernel = spec.kernel("main")
    dt = as_acl_dtype(dtype)
    cores = kernel.core_ranges(td, dt)
    mode = sch_mode_of(td.tilingKey)
    if mode == 201:
        field, tile, bf, bt, tail = "ubFormer", td.ubFormer, td.blockFormer, td.blockTail, td.ubTail
    elif mode == 202:
        sp = advance_split(td)
        field, tile, bf, bt, tail = "tileNum", td.tileNum, sp["blockFormer"], sp["blockTail"], sp["ubTail"]
    else:
        rank = td.shapeLen
        inner = math.prod(td.array("outputDims")[td.ubSplitAxis + 1:rank])
        field = f"ubFormer x {inner}" if inner != 1 else "ubFormer"
        tile, bf, bt, tail = td.ubFormer * inner, td.blockFormer, td.blockTail, td.ubTail * inner
    segments = []
    for c in cores:
        for i, start, length in c["tiles"]:
            segments.append(TileSegment(c["core"], c["kind"], i, start, start + length, length < tile))
    end = max((c["padded_end"] for c in cores), default=0)
    big = [c["core"] for c in cores if c["kind"] == "big"]
    small = [c["core"] for c in cores if c["kind"] == "small"]
    labels = {"big": f"cores {span(big)}: blockFormer = {bf} tile{'s' if bf != 1 else ''} each" if big else "",
              "small": (f"core {span(small)}: blockTail = {bt} tile{'s' if bt != 1 else ''}, the last one "
                        f"{tail:,} elements" if small else ""),
              "tail": f"tail tile: ubTail = {tail:,} elements"}
    count = f"{n:,}" if n is not None else f"{end:,}"
    title = (f"{spec.op_type} (atvoss schMode {mode}) tiling of N = {count} {dt.short} output elements: blockDim = "
             f"{td.blockDim} core{'s' if td.blockDim != 1 else ''}, {field} = {tile:,} elements "
             f"({tile * itemsize(dt):,} B) per tile")
    fields = dict(td.as_dict(), blockDim=td.blockDim, tilingKey=td.tilingKey)
    return TileMap(spec.op_type, dt.short, itemsize(dt), n, end, field, tile, cores, segments, None, fields, title,
                     labels)




def plot_template_tile_map(td: Any, op: str, dtype: Any, n: int | None = None) -> Figure:
    """:func:`template_tile_map` drawn by the ordinary tile-map figure (cores on top, each core's tiles below)."""
    return tile_map_figure(template_tile_map(td, op, dtype, n))


# --- dtype support lists ------------------------------------------------------------------------------------------
SUPPORT_DTYPES = ("float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64")


def support_table(socs: Sequence[str] | None = None) -> dict[str, Any]:
    """The dtype support list of every registered aclnn API on each SoC, from the ops' own ``GetDtypeSupportList``.

    One entry per API, keyed by its name without ``aclnn`` (``"HardsigmoidBackward"``). An API whose list does
    not depend on its scalars gives bool [soc, dtype]; one with several ``support_cases`` (ThresholdBackward:
    threshold 1 and threshold 0) gives int [soc, dtype] = the number of cases that accept the dtype, so for
    ThresholdBackward 2 = any threshold, 1 = only when the threshold is 0 (ReluGrad; int64 on the 950).
    """
    names = list(socs or platform.socs())
    dts = [as_acl_dtype(d) for d in SUPPORT_DTYPES]
    out: dict[str, Any] = {"socs": names, "dtypes": [d.short for d in dts], "apis": []}
    for _, api in registry.aclnn_apis():
        table = np.zeros((len(names), len(dts)), dtype=int)
        for i, name in enumerate(names):
            with platform.soc(name):
                lists = [api.dtype_support(**case) for case in api.support_cases]
            for j, d in enumerate(dts):
                table[i, j] = sum(d in lst for lst in lists)
        out[api.name] = table.astype(bool) if len(api.support_cases) == 1 else table
        out["apis"].append({"name": api.name, "api": api.api, "cases": len(api.support_cases),
                            "partial": api.partial_support})
    return out


def plot_support(socs: Sequence[str] | None = None) -> Figure:
    """Which input dtypes each operator accepts on each SoC (the ops' own GetDtypeSupportList)."""
    return support_figure(support_table(socs))

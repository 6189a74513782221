"""The per-core tile assignment of a tiling, as plain data: what the tile map draws, without numpy.

:func:`tile_map_parts` turns a tiling and its kernel's ``core_ranges`` rows into one segment per tile (core, tile
index, start, end, tail or not), the legend text and a title. ``ascend_lab.viz.data.tile_map`` (the matplotlib
tile map's data) and the live tiling page (``live.live_tiling``, run in the reader's browser by pyodide, which
has no numpy) both call it, so the figure and the page show the same assignment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..acl.types import as_acl_dtype, dtype_itemsize

__all__ = ["REPEAT_BYTES", "TileSegment", "span", "tile_labels", "tile_map_parts"]

REPEAT_BYTES = 256              # one vector repeat (CompareScalar/Select work on whole repeats)


@dataclass(frozen=True)
class TileSegment:
    core: int
    kind: str          # "big" / "small" core
    tile: int          # tile index within the core
    start: int         # absolute element index in the flat tensor
    end: int           # exclusive
    tail: bool         # the core's last tile, shorter than a full tile

    @property
    def length(self) -> int:
        return self.end - self.start


def tile_map_parts(td: Any, dtype: Any, n: int | None, cores: list[dict[str, Any]], tile_field: str | None,
                   op: str) -> dict[str, Any]:
    """The fields of a tile map (``viz.data.TileMap``) of ``td``: ``cores`` are the kernel's ``core_ranges`` rows
    (with their tiles), ``tile_field`` names the struct's tile size (None: the longest tile of the rows)."""
    fields = dict(td.as_dict(), blockDim=td.blockDim, tilingKey=td.tilingKey)
    if dtype is None:
        raise ValueError(f"{op} tilings do not record their dtype: pass dtype=")
    dt = as_acl_dtype(dtype).short
    tile_elems = (getattr(td, tile_field) if tile_field else
                  max((length for c in cores for _, _, length in c.get("tiles", [])), default=0))
    tile_field = tile_field or "tile"
    item = dtype_itemsize(dtype)          # the aclDataType the caller passed, not its name parsed again
    segments = []
    for c in cores:
        last = c["tile_num"] - 1
        for i, start, length in c["tiles"]:
            segments.append(TileSegment(c["core"], c["kind"], i, start, start + length,
                                        i == last and length < tile_elems))
    padded_end = max((c["padded_end"] for c in cores), default=0)
    padding = (n, padded_end) if n is not None and padded_end > n else None
    title = (f"{op} tiling of N = {f'{n:,}' if n is not None else '?'} {dt} elements: blockDim = {td.blockDim} "
             f"core{'s' if td.blockDim != 1 else ''}, "
             f"{tile_field} = {tile_elems} elements ({tile_elems * item} B) per tile")
    return {"op": op, "dtype": dt, "itemsize": item, "n": n, "padded_end": padded_end, "tile_field": tile_field,
            "tile_elems": tile_elems, "cores": cores, "segments": segments, "padding": padding, "fields": fields,
            "title": title, "labels": tile_labels(td, cores, n, padding, item)}


def span(ids: list[int]) -> str:
    if not ids:
        return "none"
    return str(ids[0]) if len(ids) == 1 else f"{ids[0]}-{ids[-1]}"


def tile_labels(td: Any, cores: list[dict[str, Any]], n: int | None, padding: tuple[int, int] | None,
                 item: int) -> dict[str, str]:
    big = [c["core"] for c in cores if c["kind"] == "big"]
    small = [c["core"] for c in cores if c["kind"] == "small"]
    if hasattr(td, "blockFactor"):
        labels = {
            "big": f"cores {span(big)}: blockFactor = {td.blockFactor} elements each",
            "small": (f"core {span(small)}: the rest, {cores[-1]['data_num']} elements" if small else ""),
            "tail": "tail tile: shorter than ubFactor = " + str(td.ubFactor),
        }
    elif not hasattr(td, "tailBlockNum"):                   # a tiling without named splits: say it from the rows
        tile = max((length for c in cores for _, _, length in c.get("tiles", [])), default=0)
        sizes = sorted({c["data_num"] for c in cores}, reverse=True)
        labels = {
            "big": f"cores {span(big)}: {sizes[0] if sizes else 0} elements each" if big else "",
            "small": f"cores {span(small)}: {cores[-1]['data_num']} elements" if small else "",
            "tail": f"tail tile: shorter than {tile} elements",
        }
    else:
        labels = {
            "big": (f"big cores {span(big)} (tailBlockNum = {td.tailBlockNum}): bigCoreDataNum = "
                    f"{td.bigCoreDataNum}, finalBigTileNum = {td.finalBigTileNum}, bigTailDataNum = "
                    f"{td.bigTailDataNum}") if big else "",
            "small": (f"small cores {span(small)}: smallCoreDataNum = {td.smallCoreDataNum}, finalSmallTileNum = "
                      f"{td.finalSmallTileNum}, smallTailDataNum = {td.smallTailDataNum}") if small else "",
            "tail": f"tail tile: shorter than tileDataNum = {td.tileDataNum}",
        }
    if padding is not None:
        pad = padding[1] - padding[0]
        labels["padding"] = (f"past the logical end N = {n}: {pad} elements = {pad * item} B read and written "
                             f"(whole {REPEAT_BYTES}-byte blocks)")
    return labels

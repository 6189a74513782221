"""The tile map: the flat tensor split into cores (top) and each core's tiles (bottom)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from . import data as D
from . import style as S
from .drawing import (
    add_legend,
    count_ticks,
    data_width_in,
    rects,
    text_width_in,
    veiled,
    wrap,
)

#: Above this many tiles the tile map draws a sample of each core's tiles (they repeat one pattern).
MAX_DRAWN_TILES = 3000


# --- tile map --------------------------------------------------------------------------------------------------
def tile_map_figure(tm: D.TileMap) -> Figure:
    """A figure of its own for a tile map's data (cores on top, each core's tiles below), whoever computed it
    (``viz.plot_tile_map`` -- :func:`ascend_lab.explore.tile_maps.plot_tile_map` -- asks the registry for it)."""
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 3.2 + min(len(tm.cores), 48) * 0.05)
        top, bottom = fig.subplots(2, 1, height_ratios=[1, 3.4])
        draw_tile_map(tm, top, bottom, own=True)
        fig.suptitle(wrap(tm.title, fontsize=S.TITLE), fontsize=S.TITLE)
    return fig


def draw_tile_map(tm: D.TileMap, top: Axes, bottom: Axes, own: bool = False) -> None:
    """Draw a :class:`.data.TileMap` into two axes (``own``: the figure is ours, put the legend below it)."""
    _draw_cores(tm, top)
    segs, thinned = _drawn_segments(tm)
    tails = _draw_tiles(tm, bottom, segs)
    bottom.set_title("each core's tiles (colour = tile index; pale, outlined = the shorter tail tile)"
                     + (f"; {len(tm.segments):,} tiles, full ones merged" if thinned else ""),
                     fontsize=S.FONT,
                     loc="left")
    handles = [Patch(facecolor=S.CORE_COLORS[k], label=tm.labels[k]) for k in ("big", "small") if tm.labels.get(k)]
    if tails:
        handles.append(Patch(facecolor=veiled("#888888"), edgecolor="black", lw=0.9, label=tm.labels["tail"]))
    if tm.padding is not None:
        handles.append(Patch(facecolor="white", edgecolor=S.OVERFLOW, hatch="////", label=tm.labels["padding"]))
    add_legend(bottom.figure, own, bottom, handles if own else [], ncols=1)


def _draw_cores(tm: D.TileMap, top: Axes) -> None:
    """Top axes: the flat tensor split into cores (named where the name fits), the padding past N hatched."""
    cores = tm.cores
    end = max(tm.padded_end, tm.n or 0, 1)
    top.set_xlim(0, end)
    top.set_ylim(-0.6, 0.6)
    rects(top, [c["offset"] for c in cores], [c["padded_end"] for c in cores], [0] * len(cores), 0.8,
          [S.CORE_COLORS[c["kind"]] for c in cores], edge="white", lw=0.6)
    for c in cores:
        label = f"core {c['core']}"
        if data_width_in(top, c["data_num"]) > text_width_in(label) + 0.05:
            top.text((c["offset"] + c["padded_end"]) / 2, 0, label, ha="center", va="center", color="white",
                     fontsize=S.SMALL)
    top.set_yticks([])
    top.spines["left"].set_visible(False)
    count_ticks(top)
    top.set_xlabel("element index in the flat tensor", labelpad=1)
    top.set_title("the tensor, split into cores" + ("" if tm.padding is None else " (red line: the logical end N)"),
                  fontsize=S.FONT, loc="left")
    if tm.padding is not None:
        p0, p1 = tm.padding
        rects(top, p0, p1, 0, 0.8, "none", edge=S.OVERFLOW, hatch="////", lw=0.8, zorder=3)
        top.axvline(p0, color=S.OVERFLOW, lw=1.2, zorder=4)


def _drawn_segments(tm: D.TileMap) -> tuple[list[Any], bool]:
    """The tile segments to draw and whether they were thinned: above ``MAX_DRAWN_TILES``, each core's full tiles
    as one bar and its last tile apart."""
    segs = tm.segments
    if len(segs) <= MAX_DRAWN_TILES:
        return segs, False
    last = {}
    for seg in segs:
        last[seg.core] = seg
    return [replace(last[c["core"]], tile=-1, start=c["offset"], end=last[c["core"]].start, tail=False)
            for c in tm.cores if last[c["core"]].start > c["offset"]] + list(last.values()), True


def _draw_tiles(tm: D.TileMap, bottom: Axes, segs: list[Any]) -> list[Any]:
    """Bottom axes: one row per core, element offset within the core, each tile coloured by its index, the tail
    tiles veiled and outlined, the padding hatched; returns the tail segments drawn."""
    cores = tm.cores
    offset = {c["core"]: c["offset"] for c in cores}
    nrows = len(cores)
    max_len = max((c["data_num"] for c in cores), default=1)
    annotate = nrows <= 12
    bottom.set_xlim(0, max_len * (1.32 if annotate else 1.0))
    bottom.set_ylim(nrows - 0.5, -0.5)
    height = 0.8 if nrows <= 48 else 1.0
    rects(bottom, [s.start - offset[s.core] for s in segs], [s.end - offset[s.core] for s in segs],
          [s.core for s in segs], height,
          [S.CORE_COLORS[s.kind] if s.tile < 0 else S.tile_color(s.tile) for s in segs],
          edge=S.EDGE if len(segs) <= 400 else None, lw=0.3)
    tails = [s for s in segs if s.tail]
    if tails:   # a white veil and a black outline: cheap to draw even for thousands of cores x tiles
        rects(bottom, [s.start - offset[s.core] for s in tails], [s.end - offset[s.core] for s in tails],
              [s.core for s in tails], height, (1, 1, 1, 0.45), edge="black", lw=0.9 if nrows <= 16 else 0.3,
              zorder=3)
    if tm.padding is not None:
        p0, p1 = tm.padding
        for c in cores:
            lo, hi = max(p0, c["offset"]), min(p1, c["padded_end"])
            if hi > lo:
                rects(bottom, lo - c["offset"], hi - c["offset"], c["core"], height, "none", edge=S.OVERFLOW,
                      hatch="////", lw=0.8, zorder=4)
    if annotate:
        for c in cores:
            text = f" {c['data_num']:,} el., {c['tile_num']} tile{'s' if c['tile_num'] != 1 else ''}"
            bottom.text(c["data_num"], c["core"], text, va="center", ha="left", fontsize=S.SMALL)
    step = max(1, int(np.ceil(nrows / 8)))
    bottom.set_yticks([c["core"] for c in cores][::step], [f"core {c['core']}" for c in cores][::step])
    count_ticks(bottom)
    bottom.set_xlabel(f"element offset within the core (a tile = {tm.tile_field} = {tm.tile_elems:,} elements)")
    return tails

"""Static figures: each draws what a :mod:`.data` function returns, with the book's palette.

Every ``plot_*`` function returns a :class:`~.style.BookFigure` (shown once in a notebook, unknown to
pyplot). The ``draw_*`` functions draw the same content into axes they are given: the explorers and the
animations reuse one figure and redraw into it. Titles, labels and legend entries come from the data
(tiling numbers, buffer and instruction names), never typed here.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

from ..dtypes import BOOK_DTYPES, as_acl_dtype
from . import data as D
from . import style as S

__all__ = [
    "plot_buffer_num", "plot_dtype_tables", "plot_l0_graph", "plot_mask_steps", "plot_pipeline", "plot_ub_layout",
    "plot_ub_occupancy", "support_figure", "tile_map_figure",
]


# --- helpers -------------------------------------------------------------------------------------------------
def rects(ax: Axes, x0: Any, x1: Any, y: Any, height: float, colors: Any, edge: str | None = S.EDGE,
          lw: float = 0.4, hatch: str | None = None, zorder: float = 2, alpha: float | None = None) -> PolyCollection:
    """Many rectangles [x0, x1] x [y - h/2, y + h/2] as one collection (fast for thousands of tiles)."""
    x0, x1, y = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float)) for v in (x0, x1, y)))
    lo, hi = y - height / 2, y + height / 2
    verts = np.stack([np.stack([x0, lo], -1), np.stack([x0, hi], -1), np.stack([x1, hi], -1),
                      np.stack([x1, lo], -1)], axis=1) if x0.size else np.zeros((0, 4, 2))
    pc = PolyCollection(verts, facecolors=colors, edgecolors=edge or "none", linewidths=lw, zorder=zorder,
                        alpha=alpha)
    if hatch:
        pc.set_hatch(hatch)
    ax.add_collection(pc)
    return pc


def clear(ax: Axes) -> None:
    """Remove what a ``draw_*`` function added but keep the axes and their tick objects: much cheaper than
    ``ax.cla()``, which rebuilds every tick (the explorers redraw into the same axes on every update)."""
    for group in (ax.collections, ax.texts, ax.lines, ax.patches, ax.images):
        for artist in list(group):
            artist.remove()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    for loc in ("left", "center", "right"):
        ax.set_title("", loc=loc)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_facecolor("white")
    ax.set_axis_on()


def _bytes_fmt(x: float, _pos: Any = None) -> str:
    """Tick label for byte offsets: 0, 512, 48K, 192K (K = 1024 B)."""
    if x == 0:
        return "0"
    if abs(x) >= 1024:
        return f"{x / 1024:g}K" if x % 1024 == 0 else f"{x / 1024:.1f}K"
    return f"{x:g}"


def _count_fmt(x: float, _pos: Any = None) -> str:
    """Tick label for element counts and cycles: 12,288 / 15M."""
    if abs(x) >= 10_000_000:
        return f"{x / 1e6:g}M"
    return f"{x:,.0f}"


def _count_ticks(ax: Axes) -> None:
    """At most ~6 round x ticks (each tick is several artists: fewer ticks, faster redraws)."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(_count_fmt))


def _veiled(color: str) -> tuple[float, float, float]:
    r, g, b = to_rgb(color)
    return (r + (1 - r) * 0.45, g + (1 - g) * 0.45, b + (1 - b) * 0.45)


def _byte_ticks(ax: Axes, right: float) -> None:
    """Byte ticks on round binary multiples (1K, 2K, ... 64K): the sizes buffers are made of."""
    step = 256
    while right / step > 7:
        step *= 2
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes_fmt))


def wrap(text: str, width_in: float = S.PAGE_WIDTH - 0.4, fontsize: float = S.FONT) -> str:
    """Wrap a data-made title to the width it has on the page."""
    return textwrap.fill(text, max(int(width_in * 72 / (fontsize * 0.55)), 20), break_long_words=False)


def add_legend(fig: Figure, own: bool, ax: Axes, handles: list[Any], ncols: int = 3) -> None:
    """Below the figure when the figure is ours (constrained layout makes room), else inside ``ax``."""
    if not handles:
        return
    if own:
        fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False, fontsize=S.SMALL)
    else:
        ax.legend(handles=handles, loc="upper right", fontsize=S.SMALL, framealpha=0.85)


def _text_width_in(text: str, fontsize: float = S.SMALL) -> float:
    return len(text) * fontsize * 0.6 / 72


def _data_width_in(ax: Axes, width: float) -> float:
    """How many inches ``width`` x-units of ``ax`` take on the page."""
    x0, x1 = ax.get_xlim()
    return abs(width) / max(abs(x1 - x0), 1e-12) * ax.get_position().width * ax.figure.get_figwidth()


def _ax_width_in(ax: Axes) -> float:
    """Width of ``ax`` in inches (what a left-aligned title or a label can use)."""
    return ax.get_position().width * ax.figure.get_figwidth()


def _data_height_in(ax: Axes, height: float) -> float:
    y0, y1 = ax.get_ylim()
    return abs(height) / max(abs(y1 - y0), 1e-12) * ax.get_position().height * ax.figure.get_figheight()


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
    cores = tm.cores
    end = max(tm.padded_end, tm.n or 0, 1)
    top.set_xlim(0, end)
    top.set_ylim(-0.6, 0.6)
    rects(top, [c["offset"] for c in cores], [c["padded_end"] for c in cores], [0] * len(cores), 0.8,
          [S.CORE_COLORS[c["kind"]] for c in cores], edge="white", lw=0.6)
    for c in cores:
        label = f"core {c['core']}"
        if _data_width_in(top, c["data_num"]) > _text_width_in(label) + 0.05:
            top.text((c["offset"] + c["padded_end"]) / 2, 0, label, ha="center", va="center", color="white",
                     fontsize=S.SMALL)
    top.set_yticks([])
    top.spines["left"].set_visible(False)
    _count_ticks(top)
    top.set_xlabel("element index in the flat tensor", labelpad=1)
    top.set_title("the tensor, split into cores" + ("" if tm.padding is None else " (red line: the logical end N)"),
                  fontsize=S.FONT, loc="left")
    if tm.padding is not None:
        p0, p1 = tm.padding
        rects(top, p0, p1, 0, 0.8, "none", edge=S.OVERFLOW, hatch="////", lw=0.8, zorder=3)
        top.axvline(p0, color=S.OVERFLOW, lw=1.2, zorder=4)
    # bottom: one row per core, element offset within the core
    segs = tm.segments
    thinned = len(segs) > MAX_DRAWN_TILES
    if thinned:   # too many to draw one by one: each core's full tiles as one bar, its last tile apart
        last = {}
        for seg in segs:
            last[seg.core] = seg
        segs = [replace(last[c["core"]], tile=-1, start=c["offset"], end=last[c["core"]].start, tail=False)
                for c in cores if last[c["core"]].start > c["offset"]] + list(last.values())
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
    _count_ticks(bottom)
    bottom.set_xlabel(f"element offset within the core (a tile = {tm.tile_field} = {tm.tile_elems:,} elements)")
    bottom.set_title("each core's tiles (colour = tile index; pale, outlined = the shorter tail tile)"
                     + (f"; {len(tm.segments):,} tiles, full ones merged" if thinned else ""),
                     fontsize=S.FONT,
                     loc="left")
    handles = [Patch(facecolor=S.CORE_COLORS[k], label=tm.labels[k]) for k in ("big", "small") if tm.labels.get(k)]
    if tails:
        handles.append(Patch(facecolor=_veiled("#888888"), edgecolor="black", lw=0.9, label=tm.labels["tail"]))
    if tm.padding is not None:
        handles.append(Patch(facecolor="white", edgecolor=S.OVERFLOW, hatch="////", label=tm.labels["padding"]))
    add_legend(bottom.figure, own, bottom, handles if own else [], ncols=1)


# --- UB layout -----------------------------------------------------------------------------------------------
#: A UB plan whose narrowest buffer would be drawn narrower than this (inches) gets a zoomed second bar.
ZOOM_BELOW_IN = 0.45


def _ub_source(source: Any, core: int) -> tuple[Any, int]:
    """What ``plot_ub_layout`` accepts beyond ``data.ub_bar``'s sources: ``viz.step_kernel``'s KernelSteps (its
    core) and the ``(run, output)`` pair a launch helper returns."""
    if hasattr(source, "run") and hasattr(source, "core") and hasattr(source, "records"):
        return source.run, source.core
    if isinstance(source, tuple) and source and hasattr(source[0], "trace"):
        return source[0], core
    return source, core


def needs_zoom(bar: D.UBBar, width_in: float) -> bool:
    """Would a buffer be drawn too narrow to read on a bar of the whole UB?"""
    sizes = [b.size for b in bar.buffers if b.size > 0]
    if not sizes or bar.overflow:
        return False
    return min(sizes) / max(bar.capacity, 1) * width_in < ZOOM_BELOW_IN and bar.used < 0.6 * bar.capacity


def zoom_span(bar: D.UBBar) -> tuple[float, float]:
    """The byte range a zoomed bar shows: the buffers and a little of what follows them."""
    return 0.0, max(bar.used * 1.06, 64.0)


def plot_ub_layout(source: Any, core: int = 0) -> Figure:
    """The UB of one core as an address bar to scale: queue blocks (x BUFFER_NUM), TBufs, the free gap, the
    library's reserved top and the capacity; an over-capacity plan shows its overflow in red. When the buffers
    are small next to the UB (a small kernel, a short tile), a second bar zooms on the bytes they use, so every
    block is drawn wide enough to name. Labels never overlap: a name that does not fit in its block goes above
    the bar on a leader line, spread sideways and stacked in rows as needed.

    ``source``: ``ops.standalone.ub_plan(...)``, a Trace, a KernelRun -- of a registered op or of your own
    kernel -- or the ``KernelSteps`` of :func:`ascend_lab.viz.step_kernel` (its core)::

        steps = viz.step_kernel(MyKernel, td, [x], soc="Ascend910B4")
        viz.plot_ub_layout(steps)          # or viz.plot_ub_layout(run) for any run of your kernel
    """
    source, core = _ub_source(source, core)
    bar = D.ub_bar(source, core)
    zoom = needs_zoom(bar, S.PAGE_WIDTH - 0.5)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 4.6 if zoom else 2.9)
        if zoom:
            ax, ax_zoom = fig.subplots(2, 1, height_ratios=(1, 1.15))
        else:
            ax, ax_zoom = fig.add_subplot(), None
        draw_ub_bar(bar, ax, own=True, zoomed_below=ax_zoom is not None)
        if ax_zoom is not None:
            draw_ub_bar(bar, ax_zoom, span=zoom_span(bar), legend=False)
        _fit_titles(fig, [a for a in (ax, ax_zoom) if a is not None])
        fig.set_layout_engine("none")             # freeze the layout: labels are placed in measured pixels
        for a in (ax, ax_zoom):
            if a is not None:
                _place_ub_labels(a)
    return fig


def draw_ub_bar(bar: D.UBBar, ax: Axes, own: bool = False, highlight: tuple[int, int] | None = None,
                fill: dict[str, str] | None = None, labels: dict[str, str] | None = None,
                block_labels: bool = True, span: tuple[float, float] | None = None, legend: bool = True,
                zoomed_below: bool = False) -> None:
    """``fill`` / ``labels`` override a buffer's face colour and label by name; ``block_labels=False`` leaves
    the queue blocks unlabelled inside (the UB animation writes the tile they hold there); ``highlight``
    outlines a byte range (the kernel stepper); ``span`` shows only that byte range (a zoom on small buffers).

    For a figure of its own (``own``), the labels are placed by the caller once the layout is done (they are
    measured in pixels: :func:`_place_ub_labels`); otherwise here, in the axes' current geometry."""
    right = max(bar.capacity, bar.used) * 1.01
    lo, hi = span if span is not None else (0.0, right)
    ax.set_xlim(lo, hi)
    ax.set_ylim(-1.25, 1.6)
    segs = bar.segments
    base = [s for s in segs if s.kind != "overflow"]
    faces = [(fill or {}).get(s.name, S.KIND_COLORS.get(s.kind, "#EEEEEE")) for s in base]
    rects(ax, [s.start for s in base], [s.end for s in base], 0.0, 1.3, faces, lw=0.5)
    reserved = [s for s in segs if s.kind == "reserved"]
    if reserved:
        rects(ax, [s.start for s in reserved], [s.end for s in reserved], 0.0, 1.3, "none", edge="#777777",
              hatch="xx", lw=0.5, zorder=2.5)
    over = [s for s in segs if s.kind == "overflow"]
    if over:
        rects(ax, [s.start for s in over], [s.end for s in over], 0.0, 1.3, S.OVERFLOW, edge="black", lw=0.5,
              zorder=3, alpha=0.85)
    if hi >= bar.capacity:
        ax.axvline(bar.capacity, color="black", lw=1.4, zorder=6)
        limits = f"capacity {bar.capacity:,} B (solid) "
        if bar.reserved:
            ax.axvline(bar.usable, color="#555555", lw=1.0, ls="--", zorder=6)
            limits = f"usable {bar.usable:,} B (dashed), " + limits
    else:
        limits = f"bytes {lo:,.0f} to {hi:,.0f} of {bar.capacity:,} shown"
    # over the capacity / usable lines, on a white ground, ending a little left of the capacity line
    ax.annotate(limits.rstrip(), (min(bar.capacity, hi), -0.78), xytext=(-3, 0), textcoords="offset points",
                ha="right", va="top", fontsize=S.SMALL, zorder=8,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
    if highlight is not None:
        rects(ax, highlight[0], highlight[1], 0.0, 1.42, "none", edge="black", lw=2.2, zorder=7)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
    _byte_ticks(ax, hi - lo)
    ax.set_xlabel("UB address (bytes; K = 1024 B)" if span is None else "UB address (bytes), zoomed")
    title = bar.title if span is None else f"zoom on bytes {lo:,.0f} to {hi:,.0f}: every buffer to scale"
    if zoomed_below:
        title += " (the buffers are zoomed below)"
    ax.set_title(wrap(title, _ax_width_in(ax)), fontsize=S.FONT,
                 color=S.OVERFLOW if bar.overflow else "black", loc="left")
    visible = [s for s in segs if s.end > lo and s.start < hi]
    ax._ub_label_artists = []                     # a redraw (``clear``) already removed the previous labels
    ax._ub_label_job = (visible, labels or {}, bool(over), block_labels, (lo, hi))   # for _place_ub_labels
    if not own:
        _place_ub_labels(ax)
    kinds = [k for k in ("VECIN", "VECOUT", "VECCALC", "free", "reserved") if any(s.kind == k for s in segs)]
    handles = [Patch(facecolor=S.KIND_COLORS[k], edgecolor=S.EDGE, hatch="xx" if k == "reserved" else None,
                     label=S.KIND_NAMES[k]) for k in kinds]
    if over:
        handles.append(Patch(facecolor=S.OVERFLOW, label=f"over capacity: {bar.overflow:,} B"))
    if own and legend:
        add_legend(ax.figure, own, ax, handles, ncols=3)


def _fit_titles(fig: Figure, axes: Sequence[Axes], pad_px: float = 4.0) -> None:
    """Run the layout, then re-wrap any left-aligned title that would run past the figure's right edge (the
    character-count wrap is an estimate; this measures) and lay out again so the taller title gets its room."""
    for _ in range(3):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        right = fig.bbox.x1 - pad_px
        changed = False
        for ax in axes:
            title = ax.title if ax.get_title(loc="center") else ax._left_title
            box = title.get_window_extent(renderer)
            if box.x1 > right:
                longest = max(len(line) for line in title.get_text().splitlines())   # the line the box measures
                text = " ".join(title.get_text().split())
                chars = max(int(longest * (right - box.x0) / max(box.width, 1.0)) - 2, 12)
                title.set_text(textwrap.fill(text, chars, break_long_words=True))
                changed = True
        if not changed:
            return


_INDEXED = re.compile(r"^(?P<base>.*)\[(?P<i>\d+)\]$")
#: Pixels kept free around a label (inside a block, and between two labels).
_LABEL_PAD = 3.0


def _remove_ub_labels(ax: Axes) -> None:
    for artist in getattr(ax, "_ub_label_artists", []):
        if artist.axes is not None:
            artist.remove()
    ax._ub_label_artists = []


def _place_ub_labels(ax: Axes) -> None:
    """Label the segments ``draw_ub_bar`` left in ``ax._ub_label_job``, measured in the axes' final pixels:

    * a queue block gets "[i]" (and its size) inside, a TBuf / the free gap / the reserved top its name and size
      inside -- horizontally if the text fits the block's width, else rotated if it fits the bar's height;
    * a queue's name goes once above its blocks (on a bracket line) when its blocks are wide enough;
    * every other name becomes a callout above the bar with a leader line to its block: callouts are spread
      sideways so that no two overlap, in as many rows as they need, above the queue names; the y range grows
      so that the rows fit inside the axes, under the title.

    The placement is decided first (text sizes are measured once and cached), the y range settled, and only then
    are the artists made -- an explorer redraws this on every update.
    """
    job = getattr(ax, "_ub_label_job", None)
    if job is None:
        return
    segs, labels, skip_reserved, block_labels, (lo, hi) = job
    renderer = ax.figure.canvas.get_renderer()
    _remove_ub_labels(ax)
    plan = None
    for _ in range(3):                # the rows the callouts need change the bar's height in pixels: settle it
        plan = _plan_ub_labels(ax, renderer, segs, labels, skip_reserved, block_labels, lo, hi)
        if plan["ylim"] is None:
            break
        ax.set_ylim(*plan["ylim"])
    _draw_ub_labels(ax, plan)


#: Measured (width, height) in pixels of a label text at (text, font size, dpi): the same few texts recur.
_TEXT_SIZES: dict[tuple[str, float, float], tuple[float, float]] = {}


def _measure(ax: Axes, renderer: Any, text: str) -> tuple[float, float]:
    key = (text, S.SMALL, ax.figure.dpi)
    size = _TEXT_SIZES.get(key)
    if size is None:
        t = ax.text(0, 0, text, fontsize=S.SMALL)
        box = t.get_window_extent(renderer)
        t.remove()
        size = _TEXT_SIZES[key] = (box.width, box.height)
        if len(_TEXT_SIZES) > 4096:
            _TEXT_SIZES.clear()
    return size


def _plan_ub_labels(ax: Axes, renderer: Any, segs: list[D.UBSegment], labels: dict[str, str],
                    skip_reserved: bool, block_labels: bool, lo: float, hi: float) -> dict[str, Any]:
    """Where each label goes in the axes' current geometry; ``ylim`` is the y range the callout rows need when it
    differs from the current one (then plan again), else None."""
    to_px = ax.transData.transform
    ax_box = ax.get_window_extent(renderer)

    def y_px(y: float) -> float:
        return float(to_px((lo, y))[1])

    def width_px(a: float, b: float) -> float:
        a, b = max(a, lo), min(b, hi)
        return float(to_px((b, 0))[0] - to_px((a, 0))[0]) if b > a else 0.0

    bar_h_px = y_px(0.65) - y_px(-0.65)
    inside_labels: list[tuple[float, str, str, float]] = []      # (x, text, colour, rotation)

    def inside(seg: D.UBSegment, lines: list[str], color: str) -> bool:
        w_px = width_px(seg.start, seg.end)
        mid = (max(seg.start, lo) + min(seg.end, hi)) / 2
        for k in range(len(lines), 0, -1):
            text = "\n".join(lines[:k])
            tw, th = _measure(ax, renderer, text)
            if w_px >= tw + 2 * _LABEL_PAD and bar_h_px >= th + 2 * _LABEL_PAD:
                inside_labels.append((mid, text, color, 0.0))
                return True
            if w_px >= th + 2 * _LABEL_PAD and bar_h_px >= tw + 2 * _LABEL_PAD:
                inside_labels.append((mid, text, color, 90.0))
                return True
        return False

    callouts: list[tuple[float, str]] = []
    groups: dict[str, list[D.UBSegment]] = {}
    for seg in segs:
        if seg.kind == "reserved" and skip_reserved:
            continue
        name = labels.get(seg.name, seg.name)
        if not name:
            continue
        color = "white" if seg.kind == "overflow" else "black"
        mid = (max(seg.start, lo) + min(seg.end, hi)) / 2
        m = _INDEXED.match(name)
        if seg.kind == "overflow":
            if m:
                groups.setdefault(m["base"], []).append(seg)
                inside(seg, [f"[{m['i']}]", f"over by {seg.size:,} B"], color)
            elif not inside(seg, [name, f"over by {seg.size:,} B"], color):
                callouts.append((mid, name))
            continue
        if m:
            groups.setdefault(m["base"], []).append(seg)
            if block_labels:
                inside(seg, [f"[{m['i']}]", f"{seg.size:,} B"], color)
        elif not inside(seg, [name, f"{seg.size:,} B"], color) and seg.kind != "free":
            callouts.append((mid, name))

    group_labels: list[tuple[float, float, str]] = []            # (start, end, queue name) over their blocks
    for base, members in groups.items():
        g_lo, g_hi = max(min(m.start for m in members), lo), min(max(m.end for m in members), hi)
        if width_px(g_lo, g_hi) >= _measure(ax, renderer, base)[0] + 2 * _LABEL_PAD:
            group_labels.append((g_lo, g_hi, base))
        else:
            callouts.append(((g_lo + g_hi) / 2, base))

    plan: dict[str, Any] = {"inside": inside_labels, "groups": group_labels, "callouts": [], "ylim": None}
    if not callouts:
        return plan
    callouts.sort()
    sizes = [_measure(ax, renderer, text) for _, text in callouts]
    pitch = max(h for _, h in sizes) + 2 * _LABEL_PAD
    rows = _pack_rows([float(to_px((x, 0))[0]) for x, _ in callouts], [w for w, _ in sizes],
                      ax_box.x0 + _LABEL_PAD, ax_box.x1 - _LABEL_PAD)
    n_rows = max(r for r, _ in rows) + 1
    need_px = (n_rows + 1) * pitch + _LABEL_PAD         # the queue-name row, the callout rows, a margin
    y0, y1 = ax.get_ylim()
    if ax_box.y1 - y_px(0.65) + 0.5 < need_px:
        frac = min(need_px / ax_box.height, 0.75)      # the part of the axes above the bar top the rows need
        top = (0.65 - frac * y0) / (1 - frac)
        if abs(top - y1) > 1e-6:
            plan["ylim"] = (y0, top)
            return plan
    base_px = y_px(0.65) + pitch + _LABEL_PAD
    inv = ax.transData.inverted().transform
    for (x_data, text), (row, cx) in zip(callouts, rows, strict=True):
        tx, ty = inv((cx, base_px + row * pitch))
        plan["callouts"].append((x_data, float(tx), float(ty), text))
    return plan


def _draw_ub_labels(ax: Axes, plan: dict[str, Any]) -> None:
    artists: list[Any] = []
    for x, text, color, rotation in plan["inside"]:
        artists.append(ax.text(x, 0, text, ha="center", va="center", fontsize=S.SMALL, zorder=5, color=color,
                               rotation=rotation))
    if plan["groups"]:
        for g_lo, g_hi, base in plan["groups"]:
            artists.append(ax.text((g_lo + g_hi) / 2, 0.72, base, ha="center", va="bottom", fontsize=S.SMALL,
                                   zorder=5))
        margin = [(g_hi - g_lo) * 0.02 for g_lo, g_hi, _ in plan["groups"]]
        artists.append(ax.hlines([0.68] * len(margin), [g[0] + m for g, m in zip(plan["groups"], margin, strict=True)],
                                 [g[1] - m for g, m in zip(plan["groups"], margin, strict=True)], colors="black",
                                 lw=0.6))
    if plan["callouts"]:
        segments = []
        for x_data, tx, ty, text in plan["callouts"]:
            artists.append(ax.text(tx, ty, text, ha="center", va="bottom", fontsize=S.SMALL, zorder=5))
            segments.append([(x_data, 0.66), (x_data, 0.7), (tx, ty - 0.02)])
        artists.append(ax.add_collection(LineCollection(segments, colors="black", linewidths=0.6, zorder=4)))
    ax._ub_label_artists = artists


def _pack_rows(centres: list[float], widths: list[float], left: float, right: float) -> list[tuple[int, float]]:
    """(row, centre x in pixels) for labels wanted at ``centres`` (sorted) of ``widths``: each row holds labels
    side by side with ``_LABEL_PAD`` between them, pushed sideways as little as possible and kept inside
    [left, right]. Rows are added (labels dealt to them in turn) until all fit."""
    n = len(centres)
    for n_rows in range(1, n + 1):
        placed: list[tuple[int, float]] = []
        ok = True
        for row in range(n_rows):
            members = list(range(row, n, n_rows))
            spans = _pack_line([centres[i] for i in members], [widths[i] for i in members], left, right)
            if spans is None:
                ok = False
                break
            placed += list(zip(members, spans, strict=True))
        if ok:
            out = dict(placed)
            return [(i % n_rows, out[i]) for i in range(n)]
    return [(i, left + widths[i] / 2) for i in range(n)]      # wider than the axes: one per row, from the left


def _pack_line(centres: list[float], widths: list[float], left: float, right: float) -> list[float] | None:
    """Centres for labels on one line, in order, no two overlapping, each as near its wanted centre as the others
    allow, all inside [left, right]; None when they do not fit side by side."""
    total = sum(widths) + _LABEL_PAD * 2 * (len(widths) - 1)
    if total > right - left:
        return None
    xs: list[float] = []
    for c, w in zip(centres, widths, strict=True):           # push right past the previous label
        x = max(c, left + w / 2)
        if xs:
            x = max(x, xs[-1] + widths[len(xs) - 1] / 2 + 2 * _LABEL_PAD + w / 2)
        xs.append(x)
    for k in range(len(xs) - 1, -1, -1):                      # then pull back left from the right edge
        if k == len(xs) - 1:
            limit = right - widths[k] / 2
        else:
            limit = xs[k + 1] - widths[k + 1] / 2 - 2 * _LABEL_PAD - widths[k] / 2
        xs[k] = min(xs[k], limit)
    return xs


# --- UB occupancy ------------------------------------------------------------------------------------------------
def plot_ub_occupancy(source: Any, core: int = 0) -> Figure:
    """UB bytes in use over simulated cycles on one core, stacked by buffer kind, against the usable size."""
    occ = D.occupancy(source, core)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 3.0)
        ax = fig.add_subplot()
        draw_occupancy(occ, ax, own=True)
    return fig


def draw_occupancy(occ: D.Occupancy, ax: Axes, own: bool = False, now: float | None = None) -> None:
    """Draw a :class:`.data.Occupancy` as a stacked step curve; ``now`` adds a time cursor."""
    t = occ.times if occ.times[-1] >= occ.makespan else np.append(occ.times, occ.makespan)
    order = [k for k in ("VECCALC", "VECIN", "VECOUT") if k in occ.by_kind]
    curves = [np.resize(occ.by_kind[k], t.size) for k in order]
    ax.stackplot(t, *curves, step="post", colors=[S.KIND_COLORS[k] for k in order],
                 labels=[S.KIND_NAMES[k] for k in order], edgecolor=S.EDGE, linewidth=0.3)
    ax.axhline(occ.usable, color="black", lw=1.0, ls="--")
    ax.text(occ.makespan, occ.usable, f"usable {occ.usable:,} B", ha="right", va="bottom", fontsize=S.SMALL)
    ax.axhline(occ.peak, color="#555555", lw=0.8, ls=":")
    ax.text(occ.makespan * 0.01, occ.peak, f"peak {occ.peak:,} B", ha="left", va="top", fontsize=S.SMALL,
            color="#333333")
    if now is not None:
        ax.axvline(now, color="black", lw=1.2)
    ax.set_xlim(0, max(occ.makespan, 1.0))
    top = max(occ.usable, occ.peak) * 1.15
    ax.set_ylim(0, top)
    ax.yaxis.set_major_locator(MultipleLocator(_binary_step(top, 6)))
    ax.yaxis.set_major_formatter(FuncFormatter(_bytes_fmt))
    _count_ticks(ax)
    ax.set_xlabel("simulated cycles since the core started")
    ax.set_ylabel("UB in use (bytes)")
    ax.set_title(wrap(occ.title, _ax_width_in(ax)), fontsize=S.FONT, loc="left")
    if own:
        add_legend(ax.figure, own, ax, ax.get_legend_handles_labels()[0], ncols=3)


def _binary_step(top: float, most: int) -> int:
    step = 256
    while top / step > most:
        step *= 2
    return step


# --- pipeline lanes ------------------------------------------------------------------------------------------------
def plot_pipeline(source: Any, cores: Sequence[int] | None = None, note: str = "") -> Figure:
    """MTE2 / V / MTE3 lanes of each core over simulated cycles; a tile keeps its colour in every lane.
    ``note`` is added to the x label (e.g. what part of a big problem was simulated)."""
    ln = D.lanes(source, cores)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.6 + 0.3 * len(ln.cores) * 3.5)
        ax = fig.add_subplot()
        draw_lanes(ln, ax, note=note, own=True)
    return fig


def lane_y(ln: D.Lanes) -> dict[tuple[int, str], float]:
    """y position of each (core, pipe) lane: three lanes per core, a gap between cores."""
    ys: dict[tuple[int, str], float] = {}
    y = 0.0
    for c in ln.cores:
        for p in D.LANE_PIPES:
            ys[(c, p)] = y
            y += 1.0
        y += 0.5
    return ys


def draw_lanes(ln: D.Lanes, ax: Axes, note: str = "", own: bool = False, upto: float | None = None,
               xmax: float | None = None, highlight: int | None = None, legend: bool = True) -> PolyCollection:
    """``upto``: draw only what happened before that cycle (animation); ``highlight``: index of a bar to
    outline, later bars faded (kernel stepper)."""
    ys = lane_y(ln)
    bars = ln.bars
    x0 = np.array([b.start for b in bars])
    x1 = np.array([b.end for b in bars])
    if upto is not None:
        x1 = np.minimum(x1, upto)
        x0 = np.minimum(x0, x1)
    pc = rects(ax, x0, x1, [ys[(b.core, b.pipe)] for b in bars], 0.72, [S.tile_color(b.tile) for b in bars], lw=0.3)
    if highlight is not None and bars:
        pc.set_alpha(None)
        faces = pc.get_facecolors()
        faces[highlight + 1:, 3] = 0.2
        pc.set_facecolors(faces)
        b = bars[highlight]
        rects(ax, b.start, b.end, ys[(b.core, b.pipe)], 0.98, "none", edge="black", lw=2.0, zorder=4)
    ax.set_yticks(list(ys.values()), [f"core {c}  {p}" if len(ln.cores) > 1 else S.PIPE_NAMES[p] for c, p in ys])
    for tick, (_, p) in zip(ax.get_yticklabels(), ys, strict=True):
        tick.set_color(S.PIPE_COLORS[p])
        tick.set_fontweight("bold")
    span = xmax if xmax is not None else max(ln.makespan.values(), default=1.0)
    ax.set_xlim(0, max(span, 1.0) * 1.01)
    ax.set_ylim(max(ys.values(), default=0) + 0.6, -0.6)
    _count_ticks(ax)
    ax.set_xlabel(wrap("simulated cycles since the core started" + (f" -- {note}" if note else ""),
                        _ax_width_in(ax)))
    ax.grid(axis="x", color=S.GRID, lw=0.5)
    ax.set_axisbelow(True)
    ax.set_title(wrap(ln.title, _ax_width_in(ax)), fontsize=S.FONT, loc="left")
    if legend:
        shown = min(ln.tiles, 9)
        handles = [Patch(facecolor=S.tile_color(i), edgecolor=S.EDGE, label=f"tile {i}") for i in range(shown)]
        if ln.tiles > 9:
            handles.append(Patch(facecolor="white", label=f"colours repeat every 9 of the {ln.tiles} tiles"))
        add_legend(ax.figure, own, ax, handles, ncols=min(len(handles), 5))
    return pc


def plot_buffer_num(study: dict[str, Any]) -> Figure:
    """Core 0 with BUFFER_NUM = 1 (top) and 2 (bottom) on one cycle axis, with the estimated speed-up, drawn
    from a study of ``ascend_lab.ops.standalone.buffer_num_study`` (the two runs and their cycles)."""
    st = dict(study)
    st.setdefault("lanes", {bn: D.lanes(r.trace, [0]) for bn, r in study["runs"].items()})
    n, dtype = st["n"], st["dtype"]
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 4.6)
        axes = fig.subplots(2, 1, sharex=True)
        span = max(st["cycles"].values())
        for ax, bn in zip(axes, (1, 2), strict=True):
            draw_lanes(st["lanes"][bn], ax, xmax=span, own=True, legend=bn == 2)
            ax.set_title(f"BUFFER_NUM = {bn}: {st['cycles'][bn]:,.0f} cycles on core 0", fontsize=S.FONT, loc="left")
        axes[0].set_xlabel("")
        run = st["runs"][2]
        fig.suptitle(wrap(f"{run.kernel} {as_acl_dtype(dtype).short}, N = {n:,} on {run.trace.soc}: with two "
                           f"blocks per queue MTE2 fills one while V computes on the other -- estimated speed-up "
                           f"x{st['speedup']:.2f}", fontsize=S.TITLE), fontsize=S.TITLE)
    return fig


# --- mask / select steps -------------------------------------------------------------------------------------------
_ROW_COLORS = {"input": S.PIPE_COLORS["MTE2"], "value": S.PIPE_COLORS["V"], "output": S.PIPE_COLORS["MTE3"]}


def plot_mask_steps(source: Any, core: int = 0, tile: int = 0) -> Figure:
    """Values after every instruction of one tile (a ``snapshot=True`` run): the inputs copied in, each vector
    result (alpha*x, +beta ... or the feature cast for the compare), each CompareScalar's bit-mask (dark = 1),
    each Select's result; dashed lines mark the 256-byte repeats."""
    rows = D.mask_steps(source, core, tile)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.0 + 0.62 * len(rows))
        axes = fig.subplots(len(rows), 1, sharex=True, squeeze=False)[:, 0]
        draw_mask_rows(rows, axes)
        fig.suptitle(mask_title(source, rows, core, tile), fontsize=S.FONT)
    return fig


def mask_title(source: Any, rows: list[D.MaskRow], core: int, tile: int) -> str:
    trace = source.trace if hasattr(source, "trace") else source
    return wrap(f"{trace.kernel}, core {core}, tile {tile}: {len(rows[0].values)} elements, one row per "
                 f"instruction (mask rows: dark = bit 1; dashed: {D.REPEAT_BYTES}-byte repeats)")


def draw_mask_rows(rows: list[D.MaskRow], axes: Sequence[Axes], upto: int | None = None) -> None:
    """``upto``: rows after it are drawn empty and the row itself highlighted (the stepping animation)."""
    n = max(len(r.values) for r in rows)
    for row, ax in zip(rows, axes, strict=True):
        i = row.index
        visible = upto is None or i <= upto
        ax.set_xlim(-0.5, n - 0.5)
        for k in range(row.repeat, n, row.repeat):
            ax.axvline(k - 0.5, color="#666666", lw=0.8, ls="--", zorder=3, gid="repeat")
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        label = f"{i}. {row.instr}: {row.detail}"
        if row.kind == "mask":
            label += f"  ->  {int(row.values.sum())} of {len(row.values)} bits set"
        ax.text(0.0, 1.03, label, transform=ax.transAxes, fontsize=S.SMALL, va="bottom", ha="left",
                color="black" if visible else "#BBBBBB")
        if not visible:
            continue
        if upto is not None and i == upto:
            ax.set_facecolor("#FFF6D5")
        vals = row.values
        if row.kind == "mask":
            ax.imshow(vals[None, :].astype(float), aspect="auto", cmap=ListedColormap(list(S.MASK_COLORS)),
                      vmin=0, vmax=1, extent=(-0.5, len(vals) - 0.5, -0.5, 0.5), interpolation="nearest")
            ax.set_ylim(-0.5, 0.5)
        else:
            v = vals.astype(np.float64)
            ax.step(np.arange(len(v)), v, where="mid", color=_ROW_COLORS[row.kind], lw=1.1)
            finite = v[np.isfinite(v)]
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            pad = (hi - lo) * 0.15 or 0.5
            ax.set_ylim(lo - pad, hi + pad)
            ax.set_yticks([lo, hi], [f"{lo:.4g}", f"{hi:.4g}"])
            ax.tick_params(axis="y", length=2)
            ax.axhline(0, color="#AAAAAA", lw=0.5)
    last = rows[-1]
    what = "elements of the compared tensor" if last.kind == "mask" else f"{last.values.dtype} elements"
    axes[-1].set_xlabel(f"element index in the tile (a repeat = {D.REPEAT_BYTES} B = {last.repeat} {what})")


# --- dtype tables ----------------------------------------------------------------------------------------------------
_CATEGORY_COLORS = {"float": "#C6DBEF", "bfloat": "#C6DBEF", "int": "#FDD0A2", "uint": "#FDD0A2", "bool": "#DDDDDD",
                    "complex": "#DADAEB", "": "#FFFFFF"}


def abbr(name: str) -> str:
    """float32 -> f32, bfloat16 -> bf16, uint8 -> u8, complex64 -> c64, bool -> b."""
    for long, short in (("bfloat", "bf"), ("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c"),
                        ("bool", "b")):
        if name.startswith(long):
            return short + name[len(long):]
    return name


def _category(name: str) -> str:
    return name.rstrip("0123456789") if name else ""


def plot_dtype_tables(dtypes: Sequence[Any] | None = None) -> Figure:
    """PromoteType(row, column) and CanCast(row -> column) as coloured matrices (opbase's own tables)."""
    dts = list(dtypes or BOOK_DTYPES)
    names, promote = D.promote_matrix(dts)
    _, cancast = D.cancast_matrix(dts)
    short = [abbr(n) for n in names]
    k = len(names)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 5.2)
        a1, a2 = fig.subplots(1, 2)
        rgb = np.array([[to_rgb(_CATEGORY_COLORS.get(_category(c), "#FFFFFF")) for c in row] for row in promote])
        a1.imshow(rgb, interpolation="nearest")
        for i in range(k):
            for j in range(k):
                a1.text(j, i, abbr(promote[i][j]) if promote[i][j] else "-", ha="center", va="center",
                        fontsize=S.SMALL, fontweight="bold" if i == j else "normal")
        a1.set_title("PromoteType(row, column):\nthe dtype two inputs meet in", fontsize=S.FONT)
        a2.imshow(np.where(cancast[..., None], to_rgb("#A1D99B"), to_rgb("#FCBBA1")), interpolation="nearest")
        for i in range(k):
            for j in range(k):
                a2.text(j, i, "yes" if cancast[i, j] else "no", ha="center", va="center", fontsize=S.SMALL)
        a2.set_title("CanCast(row -> column):\nmay a result be written into out?", fontsize=S.FONT)
        for ax, (xl, yl) in ((a1, ("second input dtype", "first input dtype")),
                             (a2, ("to: the out dtype", "from: the result dtype"))):
            ax.set_xticks(range(k), short)
            ax.set_yticks(range(k), short)
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.tick_params(length=0)
            for sp in ax.spines.values():
                sp.set_visible(False)
        handles = [Patch(facecolor=_CATEGORY_COLORS[c], edgecolor=S.EDGE, label=lab) for c, lab in
                   (("float", "floating result"), ("int", "integer result"), ("bool", "bool result"),
                    ("complex", "complex result"), ("", "-: no common dtype"))]
        handles += [Patch(facecolor="#A1D99B", edgecolor=S.EDGE, label="CanCast: yes"),
                    Patch(facecolor="#FCBBA1", edgecolor=S.EDGE, label="CanCast: no (161002)")]
        add_legend(fig, True, a1, handles, ncols=4)
        fig.suptitle("opbase dtype rules (f = float, bf = bfloat, i = int, u = uint, b = bool, c = complex; "
                     "the number is bits)", fontsize=S.FONT)
    return fig


def support_figure(table: dict[str, Any]) -> Figure:
    """Which input dtypes each operator accepts on each SoC: a table of ``explore.tile_maps.support_table``
    (the ops' own GetDtypeSupportList; ``viz.plot_support`` computes and draws it)."""
    names, dts = table["socs"], [abbr(d) for d in table["dtypes"]]
    yes, zero_only, no = "#A1D99B", "#FFE699", "#F3F3F3"
    apis = table["apis"]
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.8 + 0.26 * len(names))
        axes = np.atleast_1d(fig.subplots(1, len(apis), sharey=True))
        handles = [Patch(facecolor=yes, edgecolor=S.EDGE, label="in the dtype support list")]
        for ax, api in zip(axes, apis, strict=True):
            counts = np.asarray(table[api["name"]], dtype=int)       # cases (scalar values) that accept the dtype
            level = np.where(counts == api["cases"], 2, np.where(counts > 0, 1, 0))
            pal = np.array([to_rgb(no), to_rgb(zero_only), to_rgb(yes)])
            ax.imshow(pal[level], aspect="auto", interpolation="nearest")
            cell, legend = api["partial"]
            for i in range(len(names)):
                for j in range(len(dts)):
                    ax.text(j, i, {2: "yes", 1: cell, 0: ""}[int(level[i, j])], ha="center", va="center",
                            fontsize=S.SMALL)
            ax.set_title(api["api"], fontsize=S.FONT)
            ax.set_xticks(range(len(dts)), dts)
            ax.set_xlabel("input dtype")
            ax.tick_params(length=0)
            for sp in ax.spines.values():
                sp.set_visible(False)
            if legend and (level == 1).any():
                handles.append(Patch(facecolor=zero_only, edgecolor=S.EDGE, label=legend))
        axes[0].set_yticks(range(len(names)), names)
        handles.append(Patch(facecolor=no, edgecolor=S.EDGE, label="rejected: 161002"))
        add_legend(fig, True, axes[0], handles, ncols=3)
        fig.suptitle("dtype support list per SoC (each operator's GetDtypeSupportList)", fontsize=S.FONT)
    return fig


# --- L0 graph ---------------------------------------------------------------------------------------------------
def plot_l0_graph(run: Any) -> Figure:
    """The L0 graph a call built (``run.nodes``): one box per node with its tensors, arrows from producer to
    consumer, a Cast in orange, a no-op node dashed, and under each box the reason it is there."""
    g = D.l0_graph(run)
    lines = sum(_l0_layout(g)[1]) if g["status"] == 0 and g["nodes"] else 6
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 0.9 + _LINE_IN * lines)
        ax = fig.add_subplot()
        draw_l0_graph(g, ax, own=True)
    return fig


_LINE_IN = S.SMALL * 1.3 / 72          # one line of 8 pt text, in inches


def _l0_texts(g: dict[str, Any], pos: dict[int, tuple[float, int]]) -> dict[int, tuple[str, str]]:
    """(box text, wrapped reason) per node; a reason wraps to the room left and right of its node."""
    out = {}
    for i, n in enumerate(g["nodes"]):
        sources = "".join(f"{s} -> " for s in n["sources"])
        body = f"{n['op']}\n{sources}{', '.join(n['inputs'])} -> {', '.join(n['outputs'])}"
        if n["tiling"]:
            body += f"\n{n['tiling']}"
        x = 0.04 + 0.92 * pos[i][0]
        room_in = 2 * min(x, 1 - x) * (S.PAGE_WIDTH - 0.5)
        width = min(max(int(room_in * 72 / (S.SMALL * 0.58)), 24), 90)
        out[i] = (body, textwrap.fill(n["why"], width))
    return out


def _l0_layout(g: dict[str, Any]) -> tuple[dict[int, tuple[float, int]], list[float]]:
    """Node positions and the height of each layer in lines (box + reason + room for the arrow)."""
    pos = _layer_positions(g)
    texts = _l0_texts(g, pos)
    layers = max(layer for _, layer in pos.values()) + 1
    heights = [0.0] * layers
    for i, (body, why) in texts.items():
        layer = pos[i][1]
        heights[layer] = max(heights[layer], body.count("\n") + 1 + why.count("\n") + 1 + 2.6)
    return pos, heights


def _layer_positions(g: dict[str, Any]) -> dict[int, tuple[float, int]]:
    """x in [0, 1] and layer of every node: the first layer spread evenly, later nodes under the mean x of
    their producers (so arrows do not cut through other boxes), pushed apart when they collide."""
    nodes = g["nodes"]
    producers: dict[int, list[int]] = {}
    for i, j in g["edges"]:
        producers.setdefault(j, []).append(i)
    pos: dict[int, tuple[float, int]] = {}
    layers = max((n["layer"] for n in nodes), default=0) + 1
    for layer in range(layers):
        idx = [i for i, n in enumerate(nodes) if n["layer"] == layer]
        if layer == 0 or len(idx) > 1:
            xs = [(k + 0.5) / len(idx) for k in range(len(idx))]
            if layer > 0:
                idx.sort(key=lambda i: np.mean([pos[p][0] for p in producers.get(i, [])] or [0.5]))
        else:
            xs = [float(np.mean([pos[p][0] for p in producers.get(idx[0], [])] or [0.5]))]
        for i, x in zip(idx, xs, strict=True):
            pos[i] = (x, layer)
    return pos


def draw_l0_graph(g: dict[str, Any], ax: Axes, own: bool = False) -> None:
    """Draw :func:`.data.l0_graph`'s nodes as boxes in layers, or the failed call's status and message."""
    ax.set_axis_off()
    ax.set_title(wrap(g["title"]), fontsize=S.FONT, loc="left", color="black" if g["status"] == 0 else S.OVERFLOW)
    if g["status"] != 0 or not g["nodes"]:
        text = "\n".join(textwrap.fill(m, 90) for m in g["messages"]) or "no L0 graph: nothing was launched"
        ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=S.SMALL, transform=ax.transAxes,
                bbox={"boxstyle": "round", "fc": "#FDE0DD" if g["status"] else "#F0F0F0", "ec": S.OVERFLOW})
        return
    nodes = g["nodes"]
    pos, heights = _l0_layout(g)
    texts = _l0_texts(g, pos)
    tops = 1.0 - np.concatenate([[0.0], np.cumsum(heights)[:-1]]) / sum(heights)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    boxes, whys = {}, {}
    for i, n in enumerate(nodes):
        x, layer = pos[i]
        body, why = texts[i]
        edge = S.PIPE_COLORS["V"] if n["is_cast"] else ("black" if n["launches_kernel"] else "#888888")
        boxes[i] = ax.text(0.04 + 0.92 * x, tops[layer] - 0.3 / sum(heights), body, ha="center", va="top",
                           fontsize=S.SMALL, zorder=3,
                           bbox={"boxstyle": "round,pad=0.3", "fc": "#FFF1E6" if n["is_cast"] else "white",
                                 "ec": edge, "lw": 1.6 if n["is_cast"] else 1.0,
                                 "ls": "-" if n["launches_kernel"] else "--"})
        whys[i] = ax.annotate(why, (0.5, 0), xycoords=boxes[i], xytext=(0, -5),
                              textcoords="offset points", ha="center", va="top", fontsize=S.SMALL, style="italic",
                              color="#444444", zorder=3)
    for i, j in g["edges"]:
        ax.annotate("", (0.5, 1.0), xycoords=boxes[j], xytext=(0.5, 0.0), textcoords=whys[i],
                    arrowprops={"arrowstyle": "->", "lw": 0.9, "color": "#555555", "shrinkA": 2, "shrinkB": 4},
                    zorder=1)
    handles = [Patch(facecolor="#FFF1E6", edgecolor=S.PIPE_COLORS["V"], label="Cast: the dtypes differ"),
               Patch(facecolor="white", edgecolor="#888888", ls="--", label="no-op (nothing launched)"),
               Patch(facecolor="white", edgecolor="black", label="does work")]
    if own:
        add_legend(ax.figure, own, ax, handles, ncols=3)

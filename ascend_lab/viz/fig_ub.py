"""The UB layout bar (one core's plan, zoomed where buffers are narrow) and UB occupancy over time."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MultipleLocator

from . import data as D
from . import style as S
from .drawing import (
    add_legend,
    ax_width_in,
    byte_ticks,
    bytes_fmt,
    count_ticks,
    rects,
    wrap,
)
from .ub_labels import fit_titles, place_ub_labels, set_label_job

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

    ``source``: ``ascend_lab.standalone.ub_plan(...)``, a Trace, a KernelRun -- of a registered op or of your own
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
        fit_titles(fig, [a for a in (ax, ax_zoom) if a is not None])
        fig.set_layout_engine("none")             # freeze the layout: labels are placed in measured pixels
        for a in (ax, ax_zoom):
            if a is not None:
                place_ub_labels(a)
    return fig


def draw_ub_bar(bar: D.UBBar, ax: Axes, own: bool = False, highlight: tuple[int, int] | None = None,
                fill: dict[str, str] | None = None, labels: dict[str, str] | None = None,
                block_labels: bool = True, span: tuple[float, float] | None = None, legend: bool = True,
                zoomed_below: bool = False) -> None:
    """``fill`` / ``labels`` override a buffer's face colour and label by name; ``block_labels=False`` leaves
    the queue blocks unlabelled inside (the UB animation writes the tile they hold there); ``highlight``
    outlines a byte range (the kernel stepper); ``span`` shows only that byte range (a zoom on small buffers).

    For a figure of its own (``own``), the labels are placed by the caller once the layout is done (they are
    measured in pixels: :func:`place_ub_labels`); otherwise here, in the axes' current geometry."""
    right = max(bar.capacity, bar.used) * 1.01
    lo, hi = span if span is not None else (0.0, right)
    ax.set_xlim(lo, hi)
    ax.set_ylim(-1.25, 1.6)
    segs = bar.segments
    over = _draw_blocks(ax, segs, fill)
    _draw_limits(ax, bar, lo, hi)
    if highlight is not None:
        rects(ax, highlight[0], highlight[1], 0.0, 1.42, "none", edge="black", lw=2.2, zorder=7)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
    byte_ticks(ax, hi - lo)
    ax.set_xlabel("UB address (bytes; K = 1024 B)" if span is None else "UB address (bytes), zoomed")
    title = bar.title if span is None else f"zoom on bytes {lo:,.0f} to {hi:,.0f}: every buffer to scale"
    if zoomed_below:
        title += " (the buffers are zoomed below)"
    ax.set_title(wrap(title, ax_width_in(ax)), fontsize=S.FONT,
                 color=S.OVERFLOW if bar.overflow else "black", loc="left")
    visible = [s for s in segs if s.end > lo and s.start < hi]
    set_label_job(ax, (visible, labels or {}, bool(over), block_labels, (lo, hi)))
    if not own:
        place_ub_labels(ax)
    kinds = [k for k in ("VECIN", "VECOUT", "VECCALC", "free", "reserved") if any(s.kind == k for s in segs)]
    handles = [Patch(facecolor=S.KIND_COLORS[k], edgecolor=S.EDGE, hatch="xx" if k == "reserved" else None,
                     label=S.KIND_NAMES[k]) for k in kinds]
    if over:
        handles.append(Patch(facecolor=S.OVERFLOW, label=f"over capacity: {bar.overflow:,} B"))
    if own and legend:
        add_legend(ax.figure, own, ax, handles, ncols=3)



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
    ax.yaxis.set_major_formatter(FuncFormatter(bytes_fmt))
    count_ticks(ax)
    ax.set_xlabel("simulated cycles since the core started")
    ax.set_ylabel("UB in use (bytes)")
    ax.set_title(wrap(occ.title, ax_width_in(ax)), fontsize=S.FONT, loc="left")
    if own:
        add_legend(ax.figure, own, ax, ax.get_legend_handles_labels()[0], ncols=3)


def _binary_step(top: float, most: int) -> int:
    step = 256
    while top / step > most:
        step *= 2
    return step


def _draw_blocks(ax: Axes, segs: list[D.UBSegment], fill: dict[str, str] | None) -> list[D.UBSegment]:
    """The plan's blocks coloured by kind (``fill`` overrides by name), the reserve hatched, what lies past the
    capacity in red on top; returns the overflow segments."""
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
    return over


def _draw_limits(ax: Axes, bar: D.UBBar, lo: float, hi: float) -> None:
    """The capacity line (and the usable line when the library reserves UB), said in a note over them; or, for a
    zoom that ends before the capacity, which bytes are shown."""
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

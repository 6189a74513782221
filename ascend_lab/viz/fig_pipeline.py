"""Pipeline lanes (each core's MTE2 / V / MTE3 / S over time), the BUFFER_NUM study and the mask / Select steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..dtypes import as_acl_dtype
from . import data as D
from . import style as S
from .drawing import (
    add_legend,
    ax_width_in,
    count_ticks,
    rects,
    wrap,
)


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
    count_ticks(ax)
    ax.set_xlabel(wrap("simulated cycles since the core started" + (f" -- {note}" if note else ""),
                        ax_width_in(ax)))
    ax.grid(axis="x", color=S.GRID, lw=0.5)
    ax.set_axisbelow(True)
    ax.set_title(wrap(ln.title, ax_width_in(ax)), fontsize=S.FONT, loc="left")
    if legend:
        shown = min(ln.tiles, 9)
        handles = [Patch(facecolor=S.tile_color(i), edgecolor=S.EDGE, label=f"tile {i}") for i in range(shown)]
        if ln.tiles > 9:
            handles.append(Patch(facecolor="white", label=f"colours repeat every 9 of the {ln.tiles} tiles"))
        add_legend(ax.figure, own, ax, handles, ncols=min(len(handles), 5))
    return pc


def plot_buffer_num(study: dict[str, Any]) -> Figure:
    """Core 0 with BUFFER_NUM = 1 (top) and 2 (bottom) on one cycle axis, with the estimated speed-up, drawn
    from a study of ``ascend_lab.standalone.buffer_num_study`` (the two runs and their cycles)."""
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

"""Animations over a trace: the pipeline filling and draining, UB blocks taken and released tile by tile,
the mask/select steps of one tile.

Each function returns a :class:`matplotlib.animation.FuncAnimation` on a figure pyplot does not know
(so nothing is shown twice); turn it into page HTML with :func:`.html.anim_html`. Frames are few
(``frames`` <= 60) and small (72 dpi, at most 7.5 in wide) so a page stays well under 2 MB per animation
(docs/jupyterbook_notes.md P11). The first frame is the state before anything ran, the last the state at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.colors import to_rgb

from . import data as D
from . import figures as F
from . import style as S


class BookAnimation(FuncAnimation):
    """A ``FuncAnimation`` that says which figure it draws (``figure``): :func:`.html.anim_html` closes that figure
    and takes its alt text from it (matplotlib keeps it only in a private field)."""

    def __init__(self, fig: Any, *args: Any, **kwargs: Any):
        super().__init__(fig, *args, **kwargs)
        self.figure = fig

    def _post_draw(self, framedata: Any, blit: bool) -> None:
        """Nothing to flush after a frame is set up: the book's figures are drawn by Agg and never shown on a screen,
        and saving a frame (``to_jshtml``, ``save``) draws the figure itself. FuncAnimation's ``draw_idle`` here drew
        every frame a second time (chapter 8's 40-frame pipeline animation: 80 full draws -> 40, 3.5 s -> 2.3 s)."""
        if blit:
            super()._post_draw(framedata, blit)


MAX_FRAMES = 60

__all__ = ["MAX_FRAMES", "animate_mask_steps", "animate_pipeline", "animate_ub", "frame_times"]


def _axes(fig: Any, left: float, bottom: float, right: float, top: float) -> Any:
    """Axes placed by margins in inches (fixed layout: every frame has the same geometry, and no layout
    engine runs per frame)."""
    w, h = fig.get_figwidth(), fig.get_figheight()
    return fig.add_axes((left / w, bottom / h, 1 - (left + right) / w, 1 - (bottom + top) / h))


def _frames(frames: int) -> int:
    if not 2 <= int(frames) <= MAX_FRAMES:
        raise ValueError(f"frames must be between 2 and {MAX_FRAMES} (page weight, docs/jupyterbook_notes.md P11), "
                         f"got {frames}")
    return int(frames)


def frame_times(makespan: float, frames: int) -> np.ndarray:
    """Evenly spaced cycles from 0 to the end of the run, one per frame."""
    return np.linspace(0.0, float(makespan), _frames(frames))


def animate_pipeline(source: Any, cores: Sequence[int] | None = None, frames: int = 40,
                     interval: int = 120) -> FuncAnimation:
    """The MTE2 / V / MTE3 lanes growing with simulated time: the pipeline fills, overlaps and drains."""
    ln = D.lanes(source, cores)
    span = max(ln.makespan.values(), default=1.0)
    times = frame_times(span, frames)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.5 + 1.0 * len(ln.cores), dpi=S.FRAME_DPI, layout=None)
        ax = _axes(fig, 1.3, 0.55, 0.2, 0.75)
        pc = F.draw_lanes(ln, ax, upto=0.0, xmax=span, legend=False)
        now = ax.axvline(0.0, color="black", lw=1.2, zorder=5)
        clock = fig.text(0.99, 0.99, "", ha="right", va="top", fontsize=S.SMALL)
        ax.set_title(F.wrap(ln.title, 5.5), fontsize=S.FONT, loc="left")
    ys = F.lane_y(ln)
    start = np.array([b.start for b in ln.bars])
    end = np.array([b.end for b in ln.bars])
    y = np.array([ys[(b.core, b.pipe)] for b in ln.bars])
    lo, hi = y - 0.36, y + 0.36

    def update(k: int) -> tuple[Any, ...]:
        t = times[k]
        x1 = np.minimum(end, t)
        x0 = np.minimum(start, x1)
        pc.set_verts(np.stack([np.stack([x0, lo], -1), np.stack([x0, hi], -1), np.stack([x1, hi], -1),
                               np.stack([x1, lo], -1)], axis=1))
        now.set_xdata([t, t])
        done = int(np.sum(end <= t))
        clock.set_text(f"cycle {t:,.0f} of {span:,.0f}: {done} of {len(end)} instructions done")
        return pc, now, clock

    update(0)
    return BookAnimation(fig, update, frames=len(times), interval=interval, blit=False, repeat=False)


def animate_ub(source: Any, core: int = 0, frames: int = 40, interval: int = 150) -> FuncAnimation:
    """The UB address bar over time: a queue block takes its tile's colour (and label) from AllocTensor to
    FreeTensor and is pale when free; TBufs stay allocated. Below, the occupancy curve with a time cursor."""
    occ = D.occupancy(source, core)
    trace = source.trace if hasattr(source, "trace") else source
    bar = D.ub_bar(trace, core)
    changes = np.unique(np.concatenate([[0.0], [iv.t0 for iv in occ.intervals], [iv.t1 for iv in occ.intervals],
                                        [occ.makespan]]))
    n = _frames(frames)
    times = changes if changes.size <= n else np.linspace(0.0, occ.makespan, n)
    queue = [b for b in bar.buffers if b.kind in ("VECIN", "VECOUT")]
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 5.4, dpi=S.FRAME_DPI, layout=None)
        ax_bar = _axes(fig, 0.3, 3.35, 0.3, 0.5)
        ax_occ = _axes(fig, 0.85, 0.75, 0.3, 2.95)
        F.draw_ub_bar(bar, ax_bar, block_labels=False)
        pc = F.rects(ax_bar, [b.offset for b in queue], [b.offset + b.size for b in queue], 0.0, 1.3,
                     [S.KIND_COLORS[b.kind] for b in queue], lw=0.6, zorder=4)
        texts = [ax_bar.text(b.offset + b.size / 2, 0, "", ha="center", va="center", fontsize=S.SMALL, zorder=6,
                             color="white", fontweight="bold") for b in queue]
        F.draw_occupancy(occ, ax_occ)
        ax_occ.set_title(F.wrap(occ.title, 6.2), fontsize=S.FONT, loc="left")
        cursor = ax_occ.axvline(0.0, color="black", lw=1.4, zorder=6)
        clock = fig.text(0.98, 0.005, "", ha="right", va="bottom", fontsize=S.SMALL)
        fig.text(0.02, 0.005, "queue blocks: coloured by the tile they hold, pale while free", ha="left",
                 va="bottom", fontsize=S.SMALL)

    def update(k: int) -> tuple[Any, ...]:
        t = times[k]
        held = {iv.name: iv for iv in occ.intervals if iv.t0 <= t < iv.t1}
        faces = []
        for b, text in zip(queue, texts, strict=True):
            iv = held.get(b.name)
            faces.append(S.tile_color(iv.tile) if iv is not None else _pale(S.KIND_COLORS[b.kind]))
            text.set_text("" if iv is None else f"tile {iv.tile}")
        pc.set_facecolors(faces)
        cursor.set_xdata([t, t])
        used = int(occ.used[np.searchsorted(occ.times, t, side="right") - 1])
        clock.set_text(f"cycle {t:,.0f}: {used:,} B in use, {len(held)} queue block"
                       f"{'s' if len(held) != 1 else ''} holding a tile")
        return pc, cursor, clock, *texts

    update(0)
    return BookAnimation(fig, update, frames=len(times), interval=interval, blit=False, repeat=False)


def _pale(color: str) -> tuple[float, float, float]:
    r, g, b = to_rgb(color)
    return (1 - 0.35 * (1 - r), 1 - 0.35 * (1 - g), 1 - 0.35 * (1 - b))


def animate_mask_steps(source: Any, core: int = 0, tile: int = 0, interval: int = 900) -> FuncAnimation:
    """One frame per instruction of the tile: each step's result appears under the previous ones (inputs,
    alpha*x+beta or the compared feature, each bit-mask, each Select) with the 256-byte repeats marked."""
    rows = D.mask_steps(source, core, tile)
    _frames(len(rows))
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 0.9 + 0.5 * len(rows), dpi=S.FRAME_DPI, layout=None)
        top, bottom = 1 - 0.55 / fig.get_figheight(), 0.45 / fig.get_figheight()
        h = (top - bottom) / len(rows)
        axes = [fig.add_axes((0.09, top - (i + 1) * h + 0.3 * h, 0.88, 0.58 * h)) for i in range(len(rows))]
        for ax in axes[1:]:
            ax.sharex(axes[0])
        for ax in axes[:-1]:
            ax.tick_params(labelbottom=False)
        F.draw_mask_rows(rows, axes)
        fig.suptitle(F.mask_title(source, rows, core, tile), fontsize=S.FONT, y=0.995, va="top")
    labels = [ax.texts[0] for ax in axes]
    hideable = [[a for a in (*ax.lines, *ax.images) if a.get_gid() != "repeat"] for ax in axes]

    def update(k: int) -> tuple[Any, ...]:
        for i, ax in enumerate(axes):
            shown = i <= k
            for a in hideable[i]:
                a.set_visible(shown)
            ax.yaxis.set_visible(shown)
            labels[i].set_color("black" if shown else "#BBBBBB")
            ax.set_facecolor("#FFF6D5" if i == k else "white")
        return ()

    update(0)
    return BookAnimation(fig, update, frames=len(rows), interval=interval, blit=False, repeat=False)

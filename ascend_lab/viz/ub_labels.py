"""Labels of the UB bar: each buffer named inside its block when it fits, else on rows above or below it, never
overlapping (measured with the renderer, cached per text); titles fitted to their axes."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

from . import data as D
from . import style as S


def fit_titles(fig: Figure, axes: Sequence[Axes], pad_px: float = 4.0) -> None:
    """Run the layout, then re-wrap any left-aligned title that would run past the figure's right edge (the
    character-count wrap is an estimate; this measures) and lay out again so the taller title gets its room."""
    for _ in range(3):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        right = fig.bbox.x1 - pad_px
        changed = False
        for ax in axes:
            title = _title_artist(ax)
            box = title.get_window_extent(renderer)
            if box.x1 > right:
                longest = max(len(line) for line in title.get_text().splitlines())   # the line the box measures
                text = " ".join(title.get_text().split())
                chars = max(int(longest * (right - box.x0) / max(box.width, 1.0)) - 2, 12)
                title.set_text(textwrap.fill(text, chars, break_long_words=True))
                changed = True
        if not changed:
            return


def _title_artist(ax: Axes) -> Text:
    """The axes' title artist: the centred one when it has text, else the left one -- found among the axes'
    children by its text and alignment (matplotlib offers no public accessor for the left title's artist)."""
    if ax.get_title(loc="center"):
        return ax.title
    text = ax.get_title(loc="left")
    return next((c for c in ax.get_children() if isinstance(c, Text) and c is not ax.title
                 and c.get_text() == text and c.get_horizontalalignment() == "left"), ax.title)


#: Per axes: the labels ``draw_ub_bar`` left for :func:`place_ub_labels`, and the label artists placed last (weak
#: keys: the state goes with its axes, without stashing attributes on matplotlib's object).
_JOBS: WeakKeyDictionary[Axes, tuple[Any, ...]] = WeakKeyDictionary()
_ARTISTS: WeakKeyDictionary[Axes, list[Any]] = WeakKeyDictionary()


def set_label_job(ax: Axes, job: tuple[Any, ...]) -> None:
    """Leave a drawn UB bar's labels (segments, names, reserved?, block labels, x range) for
    :func:`place_ub_labels`; a redraw (``clear``) already removed the previous label artists."""
    _JOBS[ax] = job
    _ARTISTS[ax] = []


_INDEXED = re.compile(r"^(?P<base>.*)\[(?P<i>\d+)\]$")
#: Pixels kept free around a label (inside a block, and between two labels).
_LABEL_PAD = 3.0


def _remove_ub_labels(ax: Axes) -> None:
    for artist in _ARTISTS.get(ax, []):
        if artist.axes is not None:
            artist.remove()
    _ARTISTS[ax] = []


def place_ub_labels(ax: Axes) -> None:
    """Label the segments ``draw_ub_bar`` left for it (:func:`set_label_job`), measured in the axes' final pixels:

    * a queue block gets "[i]" (and its size) inside, a TBuf / the free gap / the reserved top its name and size
      inside -- horizontally if the text fits the block's width, else rotated if it fits the bar's height;
    * a queue's name goes once above its blocks (on a bracket line) when its blocks are wide enough;
    * every other name becomes a callout above the bar with a leader line to its block: callouts are spread
      sideways so that no two overlap, in as many rows as they need, above the queue names; the y range grows
      so that the rows fit inside the axes, under the title.

    The placement is decided first (text sizes are measured once and cached), the y range settled, and only then
    are the artists made -- an explorer redraws this on every update.
    """
    job = _JOBS.get(ax)
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


class _Geometry:
    """The axes' current pixel geometry over the byte range ``[lo, hi]``, and the labels placed inside blocks."""

    def __init__(self, ax: Axes, renderer: Any, lo: float, hi: float):
        self.ax, self.renderer, self.lo, self.hi = ax, renderer, lo, hi
        self.to_px = ax.transData.transform
        self.box = ax.get_window_extent(renderer)
        self.bar_h_px = self.y_px(0.65) - self.y_px(-0.65)
        self.inside_labels: list[tuple[float, str, str, float]] = []      # (x, text, colour, rotation)

    def y_px(self, y: float) -> float:
        return float(self.to_px((self.lo, y))[1])

    def width_px(self, a: float, b: float) -> float:
        a, b = max(a, self.lo), min(b, self.hi)
        return float(self.to_px((b, 0))[0] - self.to_px((a, 0))[0]) if b > a else 0.0

    def inside(self, seg: D.UBSegment, lines: list[str], color: str) -> bool:
        """Label ``seg`` inside its block with as many of ``lines`` as fit, level or turned 90 degrees."""
        w_px = self.width_px(seg.start, seg.end)
        mid = (max(seg.start, self.lo) + min(seg.end, self.hi)) / 2
        for k in range(len(lines), 0, -1):
            text = "\n".join(lines[:k])
            tw, th = _measure(self.ax, self.renderer, text)
            if w_px >= tw + 2 * _LABEL_PAD and self.bar_h_px >= th + 2 * _LABEL_PAD:
                self.inside_labels.append((mid, text, color, 0.0))
                return True
            if w_px >= th + 2 * _LABEL_PAD and self.bar_h_px >= tw + 2 * _LABEL_PAD:
                self.inside_labels.append((mid, text, color, 90.0))
                return True
        return False


def _plan_ub_labels(ax: Axes, renderer: Any, segs: list[D.UBSegment], labels: dict[str, str],
                    skip_reserved: bool, block_labels: bool, lo: float, hi: float) -> dict[str, Any]:
    """Where each label goes in the axes' current geometry; ``ylim`` is the y range the callout rows need when it
    differs from the current one (then plan again), else None."""
    geo = _Geometry(ax, renderer, lo, hi)
    callouts, groups = _label_blocks(geo, segs, labels, skip_reserved, block_labels)
    group_labels: list[tuple[float, float, str]] = []            # (start, end, queue name) over their blocks
    for base, members in groups.items():
        g_lo, g_hi = max(min(m.start for m in members), lo), min(max(m.end for m in members), hi)
        if geo.width_px(g_lo, g_hi) >= _measure(ax, renderer, base)[0] + 2 * _LABEL_PAD:
            group_labels.append((g_lo, g_hi, base))
        else:
            callouts.append(((g_lo + g_hi) / 2, base))
    plan: dict[str, Any] = {"inside": geo.inside_labels, "groups": group_labels, "callouts": [], "ylim": None}
    if callouts:
        _place_callouts(geo, plan, sorted(callouts))
    return plan


def _label_blocks(geo: _Geometry, segs: list[D.UBSegment], labels: dict[str, str], skip_reserved: bool,
                  block_labels: bool) -> tuple[list[tuple[float, str]], dict[str, list[D.UBSegment]]]:
    """Label each block inside where it fits; returns the labels that need a callout row (x, text) and the queue
    blocks by queue name (``inQueueX[0]`` ... under ``inQueueX``)."""
    lo, hi = geo.lo, geo.hi
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
                geo.inside(seg, [f"[{m['i']}]", f"over by {seg.size:,} B"], color)
            elif not geo.inside(seg, [name, f"over by {seg.size:,} B"], color):
                callouts.append((mid, name))
            continue
        if m:
            groups.setdefault(m["base"], []).append(seg)
            if block_labels:
                geo.inside(seg, [f"[{m['i']}]", f"{seg.size:,} B"], color)
        elif not geo.inside(seg, [name, f"{seg.size:,} B"], color) and seg.kind != "free":
            callouts.append((mid, name))
    return callouts, groups


def _place_callouts(geo: _Geometry, plan: dict[str, Any], callouts: list[tuple[float, str]]) -> None:
    """Pack the callouts into rows above the bar (``plan["callouts"]``), or ask for a taller y range first
    (``plan["ylim"]``) when the rows do not fit above it."""
    ax, box = geo.ax, geo.box
    sizes = [_measure(ax, geo.renderer, text) for _, text in callouts]
    pitch = max(h for _, h in sizes) + 2 * _LABEL_PAD
    rows = _pack_rows([float(geo.to_px((x, 0))[0]) for x, _ in callouts], [w for w, _ in sizes],
                      box.x0 + _LABEL_PAD, box.x1 - _LABEL_PAD)
    n_rows = max(r for r, _ in rows) + 1
    need_px = (n_rows + 1) * pitch + _LABEL_PAD         # the queue-name row, the callout rows, a margin
    y0, y1 = ax.get_ylim()
    if box.y1 - geo.y_px(0.65) + 0.5 < need_px:
        frac = min(need_px / box.height, 0.75)         # the part of the axes above the bar top the rows need
        top = (0.65 - frac * y0) / (1 - frac)
        if abs(top - y1) > 1e-6:
            plan["ylim"] = (y0, top)
            return
    base_px = geo.y_px(0.65) + pitch + _LABEL_PAD
    inv = ax.transData.inverted().transform
    for (x_data, text), (row, cx) in zip(callouts, rows, strict=True):
        tx, ty = inv((cx, base_px + row * pitch))
        plan["callouts"].append((x_data, float(tx), float(ty), text))


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
    _ARTISTS[ax] = artists


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

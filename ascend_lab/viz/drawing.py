"""What every figure module draws with: rectangles in bulk, cleared axes, byte and count axes, wrapped titles,
the legend's place, and text and data widths in inches."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

from . import style as S


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


def bytes_fmt(x: float, _pos: Any = None) -> str:
    """Tick label for byte offsets: 0, 512, 48K, 192K (K = 1024 B)."""
    if x == 0:
        return "0"
    if abs(x) >= 1024:
        return f"{x / 1024:g}K" if x % 1024 == 0 else f"{x / 1024:.1f}K"
    return f"{x:g}"


def count_fmt(x: float, _pos: Any = None) -> str:
    """Tick label for element counts and cycles: 12,288 / 15M."""
    if abs(x) >= 10_000_000:
        return f"{x / 1e6:g}M"
    return f"{x:,.0f}"


def count_ticks(ax: Axes) -> None:
    """At most ~6 round x ticks (each tick is several artists: fewer ticks, faster redraws)."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(count_fmt))


def veiled(color: str) -> tuple[float, float, float]:
    r, g, b = to_rgb(color)
    return (r + (1 - r) * 0.45, g + (1 - g) * 0.45, b + (1 - b) * 0.45)


def byte_ticks(ax: Axes, right: float) -> None:
    """Byte ticks on round binary multiples (1K, 2K, ... 64K): the sizes buffers are made of."""
    step = 256
    while right / step > 7:
        step *= 2
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.xaxis.set_major_formatter(FuncFormatter(bytes_fmt))


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


def text_width_in(text: str, fontsize: float = S.SMALL) -> float:
    return len(text) * fontsize * 0.6 / 72


def data_width_in(ax: Axes, width: float) -> float:
    """How many inches ``width`` x-units of ``ax`` take on the page."""
    x0, x1 = ax.get_xlim()
    return abs(width) / max(abs(x1 - x0), 1e-12) * ax.get_position().width * ax.figure.get_figwidth()


def ax_width_in(ax: Axes) -> float:
    """Width of ``ax`` in inches (what a left-aligned title or a label can use)."""
    return ax.get_position().width * ax.figure.get_figwidth()


def data_height_in(ax: Axes, height: float) -> float:
    y0, y1 = ax.get_ylim()
    return abs(height) / max(abs(y1 - y0), 1e-12) * ax.get_position().height * ax.figure.get_figheight()

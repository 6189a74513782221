"""One palette and one set of sizes for every figure in the book.

A reader learns "blue is MTE2 / VECIN, orange is the vector unit / VECCALC, green is MTE3 / VECOUT, red is
wrong" once, in the first figure, and can rely on it in every later one; so no figure picks its own
colours. Buffers take the colour of the pipe that fills them (VECIN is written by MTE2, VECOUT drained by
MTE3, VECCALC belongs to the vector unit). Tiles get a cyclic qualitative map without red, so red always
means "over capacity" or "past the logical end".

Figures are plain :class:`matplotlib.figure.Figure` objects with an Agg canvas, not pyplot figures:
nothing is registered with pyplot, so a notebook cell never shows a figure twice and a page that draws
hundreds of frames never hits pyplot's "too many open figures" warning (which would print to stderr).
"""

from __future__ import annotations

import io
from contextlib import AbstractContextManager
from typing import Any

import matplotlib as mpl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Pipes (ascendc_facts §1.7): copy-in, vector, copy-out, scalar/queue operations.
PIPE_COLORS: dict[str, str] = {"MTE2": "#4C72B0", "V": "#DD8452", "MTE3": "#55A868", "S": "#8C8C8C"}
PIPE_NAMES: dict[str, str] = {"MTE2": "MTE2 (copy in)", "V": "V (vector)", "MTE3": "MTE3 (copy out)",
                              "S": "S (scalar, queue ops)"}

#: UB regions, by the TPosition of the buffer (ascendc_facts §1.2, §1.8).
KIND_COLORS: dict[str, str] = {
    "VECIN": "#9DB9DE",      # light MTE2 blue: filled by MTE2
    "VECOUT": "#9CCFA8",     # light MTE3 green: drained by MTE3
    "VECCALC": "#F2BC94",    # light V orange: the vector unit's scratch (TBuf)
    "reserved": "#C8C8C8",   # the library's reserved top of UB
    "free": "#FFFFFF",
    "overflow": "#D62728",   # red: over capacity / past the logical end
}
KIND_NAMES: dict[str, str] = {
    "VECIN": "VECIN queue block (MTE2 -> V)", "VECOUT": "VECOUT queue block (V -> MTE3)",
    "VECCALC": "VECCALC TBuf (scratch, mask)", "reserved": "reserved by the library", "free": "free",
    "overflow": "over capacity",
}

#: Big / small cores of a tiling (tile maps).
CORE_COLORS: dict[str, str] = {"big": "#5E5E9E", "small": "#A3A3CC"}

#: Mask bits: 0 / 1.
MASK_COLORS: tuple[str, str] = ("#FFFFFF", "#3B3B3B")

EDGE = "#333333"
GRID = "#DDDDDD"
OVERFLOW = KIND_COLORS["overflow"]

# tab10 without its red (index 3), so red keeps its single meaning.
_TILE_CYCLE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
               "#17becf")


def tile_color(tile: int | None) -> str:
    """Colour of tile ``tile`` (cyclic); ``None`` (not tied to a tile) is grey."""
    if tile is None:
        return "#BBBBBB"
    return _TILE_CYCLE[int(tile) % len(_TILE_CYCLE)]


#: Sizes: the book's page is ~8 in wide; fonts never below 8 pt.
PAGE_WIDTH = 7.5
FONT = 9.0
SMALL = 8.0
TITLE = 10.0
DPI = 90                  # figures shown on a page
FRAME_DPI = 72            # animation frames and static-explorer states

RC: dict[str, Any] = {
    "font.size": FONT, "axes.titlesize": TITLE, "axes.labelsize": FONT, "xtick.labelsize": SMALL,
    "ytick.labelsize": SMALL, "legend.fontsize": SMALL, "figure.titlesize": TITLE,
    "axes.spines.top": False, "axes.spines.right": False, "hatch.linewidth": 0.6,
}


#: Glyphs rendered without hinting: at 72-90 dpi they look the same and draw ~20% faster, which is
#: what keeps a live explorer update under 150 ms.
DRAW_RC: dict[str, Any] = {"text.hinting": "no_hinting"}


class BookFigure(Figure):
    """A Figure that shows itself as a PNG in Jupyter even when no pyplot backend was ever loaded, and
    always draws with :data:`DRAW_RC` (whoever asks: savefig, an animation writer, the inline backend)."""

    def draw(self, renderer: Any) -> None:
        with mpl.rc_context(DRAW_RC):
            super().draw(renderer)

    def _repr_png_(self) -> tuple[bytes, dict[str, str]]:
        """The PNG and, as its display metadata, the alt text the page's ``<img>`` gets (:func:`figure_alt`)."""
        alt = figure_alt(self)
        return png_bytes(self, alt=alt), {"alt": alt}


def figure_alt(fig: Figure) -> str:
    """What a figure shows, in words, from its own data: ``fig.alt_text`` when a plotting function set one, otherwise
    its title, each panel's title and axis labels, and its legend entries (the book's figures draw those from the
    simulator's numbers, e.g. "tile map of 123,457 float16 elements on 39 cores")."""
    given = getattr(fig, "alt_text", None)
    if given:
        return str(given)
    parts: list[str] = []
    if fig.get_suptitle().strip():
        parts.append(fig.get_suptitle().strip())
    for ax in fig.get_axes()[:6]:
        title = " ".join(text.strip() for text in (ax.get_title(loc) for loc in ("center", "left", "right"))
                         if text.strip())
        axes = [f"{name}: {label}" for name, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if label]
        legend = ax.get_legend()
        keys = [t.get_text() for t in legend.get_texts()][:6] if legend is not None else []
        text = title + (f" ({'; '.join(axes)})" if axes else "") + (f"; key: {', '.join(keys)}" if keys else "")
        if text.strip():
            parts.append(text.strip())
    words = " ".join(" ".join(parts).split())
    return ("Figure: " + words) if words else "Figure drawn by ascend_lab.viz"


def _register_alt_printer() -> None:
    """In IPython, show BookFigures through :meth:`BookFigure._repr_png_` (with the alt text) even when the inline
    backend has registered its own printer for every matplotlib Figure."""
    try:
        from IPython import get_ipython  # deferred: IPython only in a notebook
    except ImportError:
        return
    ip = get_ipython()
    if ip is not None:
        ip.display_formatter.formatters["image/png"].for_type(BookFigure, BookFigure._repr_png_)


def new_figure(width: float = PAGE_WIDTH, height: float = 3.0, dpi: float = DPI, layout: str | None = "constrained"
               ) -> BookFigure:
    """A figure at most a page wide, with the book's rc settings, drawn by Agg, unknown to pyplot."""
    with mpl.rc_context(RC):
        fig = BookFigure(figsize=(min(width, PAGE_WIDTH), height), dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def png_bytes(fig: Figure, dpi: float | None = None, fast: bool = False, compact: bool = False,
              alt: str | None = None) -> bytes:
    """The figure as PNG bytes (for Image widgets and tests).

    ``fast`` trades size for speed (zlib level 1) for live updates that are shown once and never stored;
    ``compact`` stores a 128-colour palette image, about 4x smaller for these flat-colour charts, for
    states and frames that are stored in a page. ``alt`` goes into the PNG as its ``Description`` text (the book's
    Sphinx extension, ``ascend_lab.book.sphinx_site``, makes it the page's alt text: myst-nb keeps only an output's
    width and height)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi, pil_kwargs={"compress_level": 1 if fast else 6},
                metadata={"Description": alt} if alt else None)
    return compact_png(buf.getvalue()) if compact else buf.getvalue()


def compact_png(png: bytes, colors: int = 128) -> bytes:
    """Re-encode a PNG with a ``colors``-entry palette (flat charts lose nothing visible)."""
    from PIL import Image  # deferred: only a compact PNG needs Pillow
    img = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=colors, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()


def rc() -> AbstractContextManager[None]:
    """Context manager applying the book's rc settings (fonts, spines) while artists are created."""
    return mpl.rc_context(RC)


_register_alt_printer()

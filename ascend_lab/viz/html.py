"""Page helpers for a site with no kernel: animation HTML and sliders over precomputed images.

``anim_html`` turns an animation into self-contained HTML (frames inlined as base64 PNG), drops the one
external request matplotlib adds (font-awesome 4 from a CDN; the book theme renders the icons anyway,
docs/jupyterbook_notes.md §2.3) and replaces matplotlib's random element ids by a hash of the content, so the same
frames give byte-identical HTML (nbval and caches stay quiet). It refuses animations over the page budget.

``static_slider`` is the kernel-free explorer (docs/jupyterbook_notes.md §2.4): one widget per precomputed state in
an ``ipywidgets.Stack`` whose ``selected_index`` is ``jslink``-ed to a slider -- the link lives in the
browser, so moving the slider on the static site really changes the picture. Two sliders are done with
nested Stacks (outer index = first slider, every inner index = second slider).
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import re
import sys
from collections.abc import Sequence
from typing import Any

from matplotlib.animation import Animation

from .style import compact_png, figure_alt

MAX_BYTES = 2_000_000
MAX_FRAMES = 60
MAX_STATES = 25

_FA_CDN = re.compile(r'<link rel="stylesheet"\s+href="https?://[^"]*font-awesome[^"]*">\s*')
_UUID = re.compile(r'_anim_img([0-9a-f]{32})')
_FRAME = re.compile(r'^\s*frames\[\d+\] = "data:image/', re.M)
_FRAME_DATA = re.compile(r'"data:image/png;base64,([^"]+)"')


def _compact_frame(m: re.Match[str]) -> str:
    """One embedded frame re-encoded with a palette (b64decode skips the JS line continuations)."""
    png = base64.b64decode(m.group(1))
    return '"data:image/png;base64,' + base64.b64encode(compact_png(png)).decode("ascii") + '"'


__all__ = ["MAX_BYTES", "MAX_STATES", "anim_html", "frame_count", "static_slider"]


def frame_count(html: str) -> int:
    """How many frames a ``to_jshtml`` page embeds."""
    return len(_FRAME.findall(html))


def anim_html(anim: Animation, *, max_bytes: int = MAX_BYTES, max_frames: int = MAX_FRAMES,
              default_mode: str | None = None, compact: bool = True, fig: Any = None) -> Any:
    """``IPython.display.HTML`` of the animation: frames inlined, no external link, stable ids; the figure is
    closed first (if pyplot knows it) so the notebook does not also show a static copy (P12). ``compact``
    re-encodes every frame with a 128-colour palette (about 3-4x smaller pages). ``fig``: the figure the animation
    draws (viz's animations say it themselves, ``BookAnimation.figure``), closed and read for the alt text."""
    fig = fig if fig is not None else getattr(anim, "figure", None)
    if fig is not None and "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close(fig)
    html = _FA_CDN.sub("", anim.to_jshtml(default_mode=default_mode))
    if compact:
        html = _FRAME_DATA.sub(_compact_frame, html)
    m = _UUID.search(html)
    if m:
        uid = m.group(1)
        html = html.replace(uid, hashlib.sha1(html.replace(uid, "").encode()).hexdigest()[:32])
    frames = frame_count(html)
    if fig is not None:                        # the frame's alt text: the figure's own (style.figure_alt)
        alt = _html_attr(f"{figure_alt(fig)} (animation, {frames} frames)")
        html = re.sub(r'<img id="(_anim_img[0-9a-f]{32})"', lambda m: f'<img id="{m.group(1)}" alt="{alt}"', html,
                      count=1)
    if frames > max_frames:
        raise ValueError(f"animation has {frames} frames, more than {max_frames}: use fewer frames")
    if len(html.encode()) > max_bytes:
        raise ValueError(f"animation HTML is {len(html.encode()) / 1e6:.2f} MB, over the {max_bytes / 1e6:.1f} MB "
                         f"page budget: use fewer frames, a smaller figure or a lower dpi")
    from IPython.display import HTML  # deferred: IPython only in a notebook; viz imports without it
    return HTML(html)


def _html_attr(text: str) -> str:
    return _html.escape(text, quote=True)


def _leaf(state: bytes | str | Any, width: int | None) -> Any:
    import ipywidgets as W  # deferred: optional dependency, only a widget needs it
    if isinstance(state, (bytes, bytearray)):
        layout = W.Layout(width=f"{width}px" if width else "auto", max_width="100%")
        return W.Image(value=bytes(state), format="png", layout=layout)
    if isinstance(state, str):
        return W.HTML(state)
    return state


def static_slider(states: Sequence[Any], labels: Sequence[Sequence[str]] | Sequence[str],
                  descriptions: Sequence[str] | str = "state", *, width: int | None = None,
                  max_states: int = MAX_STATES) -> Any:
    """A slider over precomputed states that works in a page with no kernel.

    One slider: ``states`` is a list of PNG bytes (or HTML strings, or widgets) and ``labels`` their
    names. Two sliders: ``states[i][j]`` with ``labels = (names_i, names_j)`` and two ``descriptions``.
    At most ``max_states`` states in all (each PNG is stored in the page).
    """
    import ipywidgets as W  # deferred: optional dependency, only a widget needs it
    two = bool(states) and isinstance(states[0], (list, tuple))
    grid = [list(row) for row in states] if two else [list(states)]
    total = sum(len(row) for row in grid)
    if total == 0:
        raise ValueError("no states to show")
    if total > max_states:
        raise ValueError(f"{total} precomputed states, more than {max_states}: each is stored in the page")
    descs = [descriptions] if isinstance(descriptions, str) else list(descriptions)
    names = [list(labels[0]), list(labels[1])] if two else [list(labels)]
    if two and (len(names[0]) != len(grid) or any(len(row) != len(names[1]) for row in grid)):
        raise ValueError("states[i][j] must have len(labels[0]) rows of len(labels[1]) states")
    if not two and len(names[0]) != len(grid[0]):
        raise ValueError("need one label per state")
    style = {"description_width": "initial"}
    layout = W.Layout(width="95%")
    sliders = [W.SelectionSlider(options=[(str(t), i) for i, t in enumerate(nm)], value=0,
                                 description=descs[min(k, len(descs) - 1)], continuous_update=True, style=style,
                                 layout=layout, readout=True) for k, nm in enumerate(names)]
    # (the site's book.js names each frame's image from the sliders' labels and readouts: html-manager 1.0 cannot
    # draw an Image that carries a tooltip)
    inner = [W.Stack([_leaf(s, width) for s in row], selected_index=0) for row in grid]
    if two:
        outer = W.Stack(inner, selected_index=0)
        W.jslink((sliders[0], "index"), (outer, "selected_index"))
        for st in inner:
            W.jslink((sliders[1], "index"), (st, "selected_index"))
        body = outer
    else:
        body = inner[0]
        W.jslink((sliders[0], "index"), (body, "selected_index"))
    return W.VBox([*sliders, body])

"""Static figures: each draws what a :mod:`.data` function returns, with the book's palette.

Every ``plot_*`` function returns a :class:`~.style.BookFigure` (shown once in a notebook, unknown to
pyplot). The ``draw_*`` functions draw the same content into axes they are given: the explorers and the
animations reuse one figure and redraw into it. Titles, labels and legend entries come from the data
(tiling numbers, buffer and instruction names), never typed here.

One module per figure family; this module re-exports them (``viz.figures.X`` as before):

=====================  ========================================================================================
:mod:`.drawing`        what they all draw with: rects, clear, byte/count axes, wrap, add_legend, widths in inches
:mod:`.fig_tiles`      the tile map (cores, then each core's tiles)
:mod:`.fig_ub`         the UB layout bar and UB occupancy; :mod:`.ub_labels` places the bar's labels
:mod:`.fig_pipeline`   pipeline lanes, the BUFFER_NUM study, mask / Select steps
:mod:`.fig_tables`     dtype tables, an API's dtype support, the L0 graph
=====================  ========================================================================================
"""

from __future__ import annotations

from .drawing import add_legend, clear, rects, wrap
from .fig_pipeline import (
    draw_lanes,
    draw_mask_rows,
    lane_y,
    mask_title,
    plot_buffer_num,
    plot_mask_steps,
    plot_pipeline,
)
from .fig_tables import abbr, draw_l0_graph, plot_dtype_tables, plot_l0_graph, support_figure
from .fig_tiles import MAX_DRAWN_TILES, draw_tile_map, tile_map_figure
from .fig_ub import ZOOM_BELOW_IN, draw_occupancy, draw_ub_bar, needs_zoom, plot_ub_layout, plot_ub_occupancy, zoom_span

__all__ = [
    "plot_buffer_num", "plot_dtype_tables", "plot_l0_graph", "plot_mask_steps", "plot_pipeline", "plot_ub_layout",
    "plot_ub_occupancy", "support_figure", "tile_map_figure",
    # the drawing functions the explorers, the animations and the stepper reuse
    "MAX_DRAWN_TILES", "ZOOM_BELOW_IN", "abbr", "add_legend", "clear", "draw_l0_graph", "draw_lanes", "draw_mask_rows",
    "draw_occupancy", "draw_tile_map", "draw_ub_bar", "lane_y", "mask_title", "needs_zoom", "rects", "wrap",
    "zoom_span",
]

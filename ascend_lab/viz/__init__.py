"""``ascend_lab.viz`` -- figures, animations and explorers drawn from the simulator's own data.

Everything is computed by :mod:`.data` (plain numbers, unit-tested against the tiling and the trace) and
drawn with one palette (:mod:`.style`): MTE2 blue, V orange, MTE3 green, S grey; VECIN / VECOUT / VECCALC
buffers in the colour of the pipe that owns them; red only for "over capacity" or "past the logical end".

* figures: ``plot_tile_map``, ``plot_ub_layout``, ``plot_ub_occupancy``, ``plot_pipeline``, ``plot_buffer_num``,
  ``plot_mask_steps``, ``plot_dtype_tables``, ``plot_support``, ``plot_l0_graph``, ``plot_cann_stack``
* animations: ``animate_pipeline``, ``animate_ub``, ``animate_mask_steps``; page HTML with ``anim_html``
* explorers (live in Jupyter, or ``static=True`` for the kernel-free site): ``tiling_explorer``,
  ``validation_playground``, ``kernel_stepper``; ``static_slider`` for your own precomputed states
* your own kernel: ``step_kernel(entry, tiling_data, inputs, soc=..., ...)`` runs one core of any kernel entry
  or class and returns its instructions tile by tile (``KernelSteps``: ``.table()``, ``.records()``,
  ``.widget()``, ``.plot_ub_layout()``)

viz is a client of data: it draws traces, TilingData, core ranges, UB plans and runs handed to it, and its
modules import nothing from ``ops`` (design §8). What asks the operator registry or launches a kernel -- the
explorers, a tile map or dtype-support table of a registered op, the CANN-stack figure -- lives one layer up,
in :mod:`ascend_lab.explore`; this package's namespace re-exports those names (loaded on first use, since
explore itself imports viz's modules), so ``viz.tiling_explorer(...)`` and ``viz.plot_tile_map(td)`` work as
before. ``ascend_lab.standalone`` runs kernels for figures (``pipeline_run``, ``buffer_num_study``,
``stepper_run``). matplotlib is imported here, never by ``import ascend_lab``; ipywidgets only when an explorer
is built.
"""

from typing import Any as _Any

from .animations import animate_mask_steps, animate_pipeline, animate_ub
from .dag import dag_graph, plot_dag, plot_template_pipeline, template_lanes
from .data import (
    cancast_matrix,
    l0_graph,
    lanes,
    mask_steps,
    occupancy,
    promote_matrix,
    ub_bar,
)
from .figures import (
    plot_buffer_num,
    plot_dtype_tables,
    plot_l0_graph,
    plot_mask_steps,
    plot_pipeline,
    plot_ub_layout,
    plot_ub_occupancy,
)
from .html import anim_html, frame_count, static_slider
from .stepper import KernelSteps, StepRecord
from .style import png_bytes

#: Names of :mod:`ascend_lab.explore` this namespace offers (the layer above viz: they ask the registry).
_EXPLORE = ("kernel_stepper", "plot_cann_stack", "plot_support", "plot_template_tile_map", "plot_tile_map",
            "step_kernel", "support_table", "template_tile_map", "tile_map", "tiling_explorer",
            "validation_playground")


__all__ = [
    "dag_graph", "plot_dag", "plot_template_pipeline", "plot_template_tile_map", "template_lanes", "template_tile_map",
    "animate_mask_steps", "animate_pipeline", "animate_ub", "anim_html",
    "KernelSteps", "StepRecord", "step_kernel",
    "cancast_matrix", "frame_count", "kernel_stepper", "l0_graph", "lanes", "mask_steps", "occupancy",
    "plot_buffer_num", "plot_cann_stack", "plot_dtype_tables", "plot_l0_graph", "plot_mask_steps", "plot_pipeline",
    "plot_support",
    "plot_tile_map", "plot_ub_layout", "plot_ub_occupancy", "png_bytes", "promote_matrix", "static_slider",
    "support_table", "tile_map", "tiling_explorer", "ub_bar", "validation_playground",
]


def __getattr__(name: str) -> _Any:
    """``viz.tiling_explorer`` and the other explore names, imported on first use."""
    if name in _EXPLORE:
        # deferred: ascend_lab.explore imports viz's modules, so viz cannot import it while it loads
        from .. import explore
        return getattr(explore, name)
    raise AttributeError(f"module 'ascend_lab.viz' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPLORE))

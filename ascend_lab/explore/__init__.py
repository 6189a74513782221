"""``ascend_lab.explore`` -- the explorers, and every picture that asks the operator registry or launches a kernel.

viz draws what it is handed (runs, traces, TilingData, UB plans) and imports nothing from ``ops``; this layer,
above it, does the asking: which op a TilingData belongs to and how its cores walk it (:mod:`.tile_maps`), the
dtype support lists of the registered APIs, the kernel runs behind the tiling explorer, the validation
playground's aclnn calls and the kernel stepper (:mod:`.explorers`), the CANN-stack figure of a run
(:mod:`.stack`). ``ascend_lab.viz`` re-exports these names, so ``viz.tiling_explorer(...)``,
``viz.plot_tile_map(td)`` and the rest keep working.

* tile maps and support lists: ``tile_map``, ``plot_tile_map``, ``template_tile_map``, ``plot_template_tile_map``,
  ``support_table``, ``plot_support``
* explorers: ``tiling_explorer``, ``validation_playground``, ``kernel_stepper``, ``step_kernel`` (your own kernel,
  one core, instruction by instruction: a :class:`ascend_lab.viz.KernelSteps`)
* the stack figure: ``plot_cann_stack``
"""

from .explorers import (
    PRESET_CASES,
    TilingView,
    kernel_buffer_num,
    kernel_stepper,
    op_dtypes,
    op_names,
    step_kernel,
    tiling_explorer,
    validation_card,
    validation_playground,
)
from .stack import plot_cann_stack
from .tile_maps import plot_support, plot_template_tile_map, plot_tile_map, support_table, template_tile_map, tile_map

__all__ = [
    "PRESET_CASES", "TilingView", "kernel_buffer_num", "kernel_stepper", "op_dtypes", "op_names", "plot_cann_stack",
    "plot_support", "plot_template_tile_map", "plot_tile_map", "step_kernel", "support_table", "template_tile_map",
    "tile_map", "tiling_explorer", "validation_card", "validation_playground",
]

"""The CANN stack of one aclnn call: the four layers with their ops-nn files, and what each did.

Drawn from a ``Run`` (status, workspace, L0 nodes, TilingData, the kernel's trace) and the SoC's data, so
chapter 1's picture is this call's picture: change the input and the boxes say something else. The host
layer's box reads the tiling through the spec of the kernel that ran (the registry), which is why this figure
lives in ``explore``, above viz (``viz.plot_cann_stack`` is this function).
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ..ops import registry
from ..viz.style import EDGE, KIND_COLORS, PIPE_COLORS, new_figure, rc

#: The ops-nn files of aclnnHardsigmoidBackward's four layers (experimental/activation/hard_sigmoid_grad/).
HARDSIGMOID_FILES: tuple[str, str, str, str] = (
    "op_api/aclnn_hardsigmoid_backward.cpp", "op_api/hardsigmoid_grad.cpp + opbase",
    "op_host/arch35/hard_sigmoid_grad_tiling.cpp", "op_kernel/arch35/hard_sigmoid_grad.h")


def _kernel_node(run: Any) -> Any:
    """The L0 node that launched the operator's kernel (the one the dispatch gave a kernel flavour)."""
    node = run.kernel_node
    if node is None:
        raise ValueError("no L0 node of the run launched an operator kernel")
    return node


#: How each kernel flavour is written (the kernel layer's title): the legacy kernels are TBE DSL descriptions,
#: the ops-nn main-tree and experimental ones AscendC.
KERNEL_LANGUAGE = {"tbe": "TBE", "main": "AscendC", "experimental": "AscendC"}


def tiling_summary(run: Any) -> dict[str, Any]:
    """What the figure says about the tiling, read through the KernelSpec of the kernel that ran, so every op and
    flavour works without knowing its TilingData's field names: the output's element count, the largest share
    of a core and the longest tile (from the kernel's ``core_ranges``, padding included where the kernel moves
    padding), blockDim and tilingKey; ``field`` is ("name", value) of the tile-size field the spec names, or None
    when this TilingData has no such field (a template kernel's struct depends on its schedule)."""
    node = _kernel_node(run)
    kernel = registry.get(node.op).kernel(node.attrs["kernel"])
    td = run.tiling
    ranges = kernel.core_ranges(td, node.inputs[0].dtype, node.inputs[0].Size(), tiles=True)
    field = (kernel.tile_field, getattr(td, kernel.tile_field)) if hasattr(td, kernel.tile_field) else None
    return {"flavour": kernel.flavour, "elements": node.outputs[0].Size(),
            "per_core": max((r["data_num"] for r in ranges), default=0),
            "tile": max((length for r in ranges for _, _, length in r["tiles"]), default=0), "field": field,
            "blockDim": td.blockDim, "tilingKey": td.tilingKey, "dtype": node.inputs[0].dtype.short}


def stack_layers(run: Any, vector_cores: int) -> list[tuple[str, str]]:
    """(layer, what it did in this call) for the four layers, as the figure prints them.

    ``run`` is a successful ``Run`` with one kernel launch; ``vector_cores`` is the SoC's AIV count."""
    if not run.kernel_runs or run.tiling is None:
        raise ValueError(f"the run launched no kernel (status {run.status}): the stack figure needs a "
                         "successful call")
    kr, t = run.kernel_runs[0], tiling_summary(run)
    launched = [n.op for n in run.nodes if n.launches_kernel]
    passed = sorted({n.op for n in run.nodes if not n.launches_kernel})
    n_passed = sum(not n.launches_kernel for n in run.nodes)
    tiles = sorted({c.tiles for c in kr.trace.cores})
    return [
        ("aclnn L2 API", f"phase 1: checks pass, status {run.status}, workspace {run.workspace_size} B\n"
                         "phase 2: runs the executor's nodes on the stream"),
        ("L0 graph (executor)", " -> ".join(run.graph)
         + f"\ndevice work: {', '.join(launched)}; no-op: {n_passed} x {'/'.join(passed)}"),
        ("op_host: def, infer-shape, tiling",
         f"{t['elements']} elements, up to {t['per_core']} per core, blockDim {t['blockDim']}\n"
         f"tiles of up to {t['tile']} elements"
         + (f" ({t['field'][0]} {t['field'][1]})" if t["field"] else "")
         + f", tilingKey {t['tilingKey']} ({t['dtype']})"),
        (f"op_kernel: {KERNEL_LANGUAGE[t['flavour']]} on the AIV",
         f"{t['flavour']} kernel on {t['blockDim']} of {vector_cores} vector cores, "
         f"{'/'.join(map(str, tiles))} tile(s) each\n"
         f"~{kr.cycles:.0f} cycles = {kr.microseconds:.2f} µs (cost-model estimate)"),
    ]


def plot_cann_stack(run: Any, soc: Any, files: tuple[str, str, str, str] = HARDSIGMOID_FILES) -> Figure:
    """One aclnn call layer by layer: each layer's ops-nn file on the left, what it did on the right, and a
    row of the SoC's vector cores, filled where the tiling gave a core elements.

    ``run``: a successful Run of any registered aclnn API and kernel flavour; ``soc``: its SoC's data (``name``,
    ``vector_core_num``), e.g. ``al.platform.get_soc(run.soc)``; ``files``: the four layers' source files (the
    default names those of the experimental HardSigmoidGrad, chapter 1's call: pass another run's own)."""
    layers = stack_layers(run, soc.vector_core_num)
    t = tiling_summary(run)
    colors = (KIND_COLORS["VECIN"], KIND_COLORS["VECCALC"], KIND_COLORS["VECOUT"], "#E8E8E8")
    with rc():
        fig = new_figure(7.5, 4.9)
        ax = fig.add_subplot()
        ax.set_xlim(0, 10)
        ax.set_ylim(-0.9, 4.1)
        ax.axis("off")
        for i, ((name, did), path, color) in enumerate(zip(layers, files, colors, strict=True)):
            y = 3 - i
            ax.add_patch(FancyBboxPatch((0.05, y + 0.12), 4.0, 0.76, boxstyle="round,pad=0.02",
                                        fc=color, ec=EDGE, lw=0.8))
            ax.text(0.2, y + 0.62, name, fontsize=9, fontweight="bold", va="center")
            ax.text(0.2, y + 0.32, path, fontsize=8, family="monospace", va="center")
            ax.add_patch(FancyBboxPatch((4.3, y + 0.12), 5.65, 0.76, boxstyle="round,pad=0.02",
                                        fc="white", ec=EDGE, lw=0.6))
            ax.text(4.45, y + 0.5, did, fontsize=8, va="center", linespacing=1.5)
            ax.add_patch(FancyArrowPatch((4.08, y + 0.5), (4.28, y + 0.5), arrowstyle="-|>",
                                         mutation_scale=8, color=EDGE, lw=0.8))
            if i < 3:
                ax.add_patch(FancyArrowPatch((1.85, y + 0.1), (1.85, y - 0.1), arrowstyle="-|>",
                                             mutation_scale=9, color=EDGE, lw=0.9))
        # the cores: one square per vector core, filled when the tiling gives it work
        n = soc.vector_core_num
        w = 9.8 / n
        for c in range(n):
            used = c < t["blockDim"]
            ax.add_patch(Rectangle((0.1 + c * w, -0.62), w * 0.85, 0.38,
                                   fc=PIPE_COLORS["V"] if used else "white", ec=EDGE, lw=0.5))
        ax.text(0.1, -0.82, f"{soc.name}: the {n} vector cores (filled = given elements by the tiling)",
                fontsize=8, va="center")
        ax.set_title(f"One {run.op} call: {t['elements']} {t['dtype']} elements "
                     f"on {soc.name}, layer by layer")
    return fig

"""The CANN stack of one aclnn call: the four layers with their ops-nn files, and what each did.

Drawn from a ``Run`` (status, workspace, L0 nodes, TilingData, the kernel's trace) and the SoC's data, so
chapter 1's picture is this call's picture: change the input and the boxes say something else.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from .style import EDGE, KIND_COLORS, PIPE_COLORS, new_figure, rc

#: The ops-nn files of aclnnHardsigmoidBackward's four layers (experimental/activation/hard_sigmoid_grad/).
HARDSIGMOID_FILES: tuple[str, str, str, str] = (
    "op_api/aclnn_hardsigmoid_backward.cpp", "op_api/hardsigmoid_grad.cpp + opbase",
    "op_host/arch35/hard_sigmoid_grad_tiling.cpp", "op_kernel/arch35/hard_sigmoid_grad.h")


def _kernel_dtype(run: Any) -> str:
    """The dtype the kernel computed in: its L0 node's first input (what the tiling key encodes)."""
    kernel = run.kernel_runs[0].kernel
    node = next((n for n in run.nodes if n.op == kernel), None)
    if node is None:
        raise ValueError(f"no L0 node of the run is the launched kernel {kernel}")
    return node.inputs[0].dtype.short


def stack_layers(run: Any, vector_cores: int) -> list[tuple[str, str]]:
    """(layer, what it did in this call) for the four layers, as the figure prints them.

    ``run`` is a successful ``Run`` with one kernel launch; ``vector_cores`` is the SoC's AIV count."""
    if not run.kernel_runs or run.tiling is None:
        raise ValueError(f"the run launched no kernel (status {run.status}): the stack figure needs a "
                         "successful call")
    td, kr = run.tiling, run.kernel_runs[0]
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
         f"totalLength {td.totalLength}, blockFactor {td.blockFactor}, blockDim {td.blockDim}\n"
         f"ubFactor {td.ubFactor} elements per tile, tilingKey {td.tilingKey} "
         f"({_kernel_dtype(run)})"),
        ("op_kernel: AscendC on the AIV",
         f"{td.blockDim} of {vector_cores} vector cores, {'/'.join(map(str, tiles))} tile(s) each\n"
         f"~{kr.cycles:.0f} cycles = {kr.microseconds:.2f} µs (cost-model estimate)"),
    ]


def plot_cann_stack(run: Any, soc: Any, files: tuple[str, str, str, str] = HARDSIGMOID_FILES) -> Figure:
    """One aclnn call layer by layer: each layer's ops-nn file on the left, what it did on the right, and a
    row of the SoC's vector cores, filled where the tiling gave a core elements.

    ``run``: a successful ``al.hardsigmoid_backward`` Run; ``soc``: its SoC's data (``name``,
    ``vector_core_num``), e.g. ``al.platform.get_soc(run.soc)``; ``files``: the four layers' source files."""
    layers = stack_layers(run, soc.vector_core_num)
    td = run.tiling
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
            used = c < td.blockDim
            ax.add_patch(Rectangle((0.1 + c * w, -0.62), w * 0.85, 0.38,
                                   fc=PIPE_COLORS["V"] if used else "white", ec=EDGE, lw=0.5))
        ax.text(0.1, -0.82, f"{soc.name}: the {n} vector cores (filled = given elements by the tiling)",
                fontsize=8, va="center")
        ax.set_title(f"One {run.op} call: {td.totalLength} {_kernel_dtype(run)} elements "
                     f"on {soc.name}, layer by layer")
    return fig

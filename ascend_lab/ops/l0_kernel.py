"""The L0 node that launches an operator's kernel, shared by every ``op_api``.

``l0op::HardSigmoidGrad(...)`` and its siblings all do the same four things in phase 1: pick the kernel for
the SoC in force (``dispatch``), run its host tiling now (``GetWorkspaceSize`` is where CANN tiles), record a
node in the executor's graph, and leave a ``run`` that launches the kernel on the simulated cores in phase 2.
The node's attributes say which kernel flavour was chosen and whether the op definition registers it for
the SoC, so the graph, the CLI and the book can name what runs where.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..acl.tensor import aclTensor
from ..base.platform import SocInfo, current_soc
from ..opdev.executor import L0Node, aclOpExecutor
from .spec import KernelSpec, OpSpec

__all__ = ["dispatch", "kernel_node"]


def dispatch(spec: OpSpec, soc: SocInfo) -> KernelSpec:
    """The kernel of ``spec`` that runs on ``soc``.

    Today every operator holds one kernel (the ops-nn experimental AscendC one) and the simulator runs it on
    every SoC, saying in the node when CANN would run another kernel there."""
    return spec.kernel(None)


def kernel_node(spec: OpSpec, inputs: Sequence[aclTensor], out: aclTensor, attrs: dict[str, Any],
                executor: aclOpExecutor, why: str) -> L0Node:
    """Tile now, record the kernel node, launch in phase 2. ``attrs`` are the op's tiling attributes."""
    soc = current_soc()
    kernel = dispatch(spec, soc)
    td = kernel.tiling(inputs[0].Size(), inputs[0].dtype, soc.vector_core_num, soc.ub_size, **attrs)
    registered = kernel.registered_for(soc)
    if not registered:
        stock = "main-tree AscendC" if soc.is_regbase() else "built-in TBE"
        why += (f" (this AscendC kernel is registered for {', '.join(kernel.socs)}; on {soc.name} CANN runs its "
                f"{stock} kernel instead -- the simulator runs the AscendC one)")
    node = L0Node(spec.op_type, list(inputs), [out],
                  {**attrs, "tiling": td, "soc": soc.name, "kernel": kernel.flavour, "registered_for_soc": registered},
                  why=why)

    def run() -> None:
        executor.kernel_runs.append(kernel.launch(td, *inputs, out, soc))

    node.run = run
    executor.add(node)
    return node

"""The L0 node that launches an operator's kernel, shared by every ``op_api``, and the dispatch that picks it.

``l0op::HardSigmoidGrad(...)`` and its siblings all do the same four things in phase 1: pick the kernel for
the SoC in force (:func:`dispatch`), run its host tiling now (``GetWorkspaceSize`` is where CANN tiles), record
a node in the executor's graph, and leave a ``run`` that launches the kernel on the simulated cores in phase 2.
The node's attributes say which kernel flavour was chosen and why, so the graph, the CLI and the book can
name what runs where.

Which kernel runs where (kernel_flavours §1): the L0 wrappers launch by op type only; the binary comes from
the installed operator packages. A stock CANN install runs the built-in TBE kernels on 910A, 910B, 910_93
and 310P and the ops-nn main-tree AscendC kernels on 950 (:func:`stock_flavour`). The ops-nn experimental
kernels run only when their custom package is installed (``acl.install_custom_package()``), and then only on
the SoCs their op definitions register. A caller may also ask for one flavour (``al.hardsigmoid_backward(...,
kernel="main")``); a flavour with no kernel registered for the SoC fails phase 1 with 561103
(ACLNN_ERR_INNER_NULLPTR), CANN's status when no kernel binary can be found.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ...acl.tensor import aclTensor
from ...base.platform import SocInfo, current_soc, custom_packages
from ...opdev.aclnn_common import ParamError
from ...opdev.errno import ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_PARAM_INVALID
from ...opdev.executor import L0Node, aclOpExecutor
from ..spec import FLAVOURS, KernelSpec, OpSpec

__all__ = ["dispatch", "find_kernel_node", "kernel_node", "requested_kernel", "stock_flavour"]

#: The largest element count CANN's shapes can describe (``GetShapeSize`` is an int64).
INT64_MAX = 2**63 - 1

_requested: contextvars.ContextVar[str | None] = contextvars.ContextVar("requested_kernel", default=None)


@contextlib.contextmanager
def requested_kernel(flavour: str | None) -> Iterator[None]:
    """Kernel nodes created inside the block use ``flavour`` (None: the SoC's own choice)."""
    if flavour is not None and flavour not in FLAVOURS:
        raise ValueError(f"kernel must be one of {', '.join(FLAVOURS)} (or None), got {flavour!r}")
    token = _requested.set(flavour)
    try:
        yield
    finally:
        _requested.reset(token)


def stock_flavour(soc: SocInfo) -> str:
    """What a stock CANN install runs on ``soc``: main-tree AscendC on 950 (regbase), built-in TBE elsewhere."""
    return "main" if soc.is_regbase() else "tbe"


def dispatch(spec: OpSpec, soc: SocInfo) -> tuple[KernelSpec, str]:
    """The kernel of ``spec`` that runs on ``soc``, and a sentence saying why. Raises ParamError(561103) for a
    requested flavour with no kernel registered for the SoC."""
    want = _requested.get()
    if want is not None:
        kernel = spec.kernels.get(want)
        if kernel is None:
            raise ParamError(ACLNN_ERR_INNER_NULLPTR,
                             f"{spec.op_type}: no {want} kernel found for {soc.name} (the simulator has "
                             f"{', '.join(spec.kernels)} kernels of this op)")
        if not kernel.registered_for(soc):
            raise ParamError(ACLNN_ERR_INNER_NULLPTR,
                             f"{spec.op_type}: no {want} kernel found for {soc.name}: its op definition registers "
                             f"it for {', '.join(kernel.socs)}, not {soc.family}")
        return kernel, f"the {want} kernel, as asked"
    custom = spec.kernels.get("experimental")
    if "experimental" in custom_packages() and custom is not None and custom.registered_for(soc):
        return custom, f"the experimental custom package is installed and registers {spec.op_type} for {soc.family}"
    stock = stock_flavour(soc)
    kernel = spec.kernels.get(stock)
    if kernel is not None and kernel.registered_for(soc):
        return kernel, f"a stock CANN install runs the {stock} kernel on {soc.name}"
    fallback = spec.kernel(None)
    return fallback, (f"a stock CANN install runs the {stock} kernel on {soc.name}, which the simulator does not "
                      f"have yet, so it runs the {fallback.flavour} kernel")


def kernel_node(spec: OpSpec, inputs: Sequence[aclTensor], out: aclTensor, attrs: dict[str, Any],
                executor: aclOpExecutor, why: str) -> L0Node:
    """Pick the kernel, tile now, record the kernel node, launch in phase 2. ``attrs``: the op's tiling attributes;
    ``why``: why the graph has this node (the kernel's formula and the dispatch reason are added).

    A tensor of more elements than an int64 holds (``GetShapeSize``, CANN's element count) is a parameter error
    (161002) for every kernel, before any tiling sees the count."""
    for t in (*inputs, out):
        size = t.Size()
        if size > INT64_MAX:
            raise ParamError(ACLNN_ERR_PARAM_INVALID,
                             f"{spec.op_type}: a tensor of shape {list(t.view_dims)} holds {size} elements, more "
                             f"than CANN's int64 element count can hold (max {INT64_MAX})")
    soc = current_soc()
    kernel, reason = dispatch(spec, soc)
    if kernel.tiling_shapes is not None:
        td = kernel.tiling_shapes([tuple(t.view_dims) for t in inputs], tuple(out.view_dims), inputs[0].dtype,
                                  soc.vector_core_num, soc.core_mem_size_ub, **attrs)
    else:
        td = kernel.tiling(inputs[0].Size(), inputs[0].dtype, soc.vector_core_num, soc.core_mem_size_ub, **attrs)
    registered = kernel.registered_for(soc)
    workspace = int(kernel.workspace(soc))
    node = L0Node(spec.op_type, list(inputs), [out],
                  {**attrs, "tiling": td, "soc": soc.name, "kernel": kernel.flavour, "registered_for_soc": registered,
                   "workspace": workspace},
                  why=f"{why}: {kernel.formula or spec.summary} [{kernel.flavour} kernel: {reason}]")

    def run() -> None:
        kr = kernel.launch(td, *inputs, out, soc)
        kr.trace.meta["kernel_flavour"] = kernel.flavour
        executor.kernel_runs.append(kr)

    node.run = run
    executor.add(node)
    executor.alloc_kernel_workspace(workspace, node)
    return node


def find_kernel_node(nodes: Iterable[L0Node]) -> L0Node | None:
    """The node of a graph that launches an operator's kernel (the one :func:`kernel_node` records: its attrs name
    the kernel flavour), or None when the graph has none (an empty tensor, a failed phase 1)."""
    return next((n for n in nodes if "kernel" in n.attrs), None)

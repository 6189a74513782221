"""``aclOpExecutor``: the plan that phase 1 builds and phase 2 runs.

``<Op>GetWorkspaceSize`` does not compute anything: it checks the arguments and calls L0 ops, each of
which appends a node to the executor (the *L0 graph*) and, if it produces a new tensor, reserves room for
it in the workspace. Phase 2 (``<Op>(workspace, size, executor, stream)``) binds those tensors to the
workspace the caller allocated and runs the nodes in order.

Workspace, as CANN's executor sums it (kernel_flavours §6, opbase ``op_executor.cpp`` and the ``MaxAllocator``
of ``memory_allocator.cpp``): every intermediate tensor, and every workspace a kernel's tiling requests (a
UINT8 tensor that lives for that kernel node only), takes ``roundUp(bytes + 32, 512)`` B. Taken in the order
the graph creates them, each goes into a *bucket* whose last tensor's lifetime (producing node to last
consuming node) does not overlap its own -- the last such bucket when several qualify, a new bucket when none
does. A bucket is as large as its largest tensor, its tensors share its offset, and the workspace is the sum of
the buckets. Intermediates that are never written because a node was a no-op take no room.

Before phase 2 runs a single node it checks the memory of every tensor the graph touches (the caller's
inputs and ``out``, and the intermediates just bound to the workspace): ``memory_problem()`` names the
first tensor that was destroyed, whose allocation was freed (aclrtFree, aclFinalize) or that no longer fits
in it. A graph is never half-run over freed memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..acl.runtime import DevicePtr, aclrtStream
from ..acl.tensor import aclTensor, contiguous_strides
from ..acl.types import aclDataType, aclFormat
from ..dtypes import to_numpy

WORKSPACE_ALIGN = 512
#: Bytes the allocator adds to every tensor before rounding up to WORKSPACE_ALIGN.
WORKSPACE_PAD = 32


class UnsupportedDtypeError(ValueError):
    """An L0 op was asked for a tensor of a dtype with no storage type: CANN's L0 op would return
    nullptr there (no kernel supports the dtype), which the L2 API reports as ACLNN_ERR_INNER_NULLPTR."""


class KernelLaunchError(RuntimeError):
    """A kernel node failed on the device. The simulated AI Core (``ascendc``, a layer above) raises its
    ``KernelError``, a subclass, so phase 2 can map it to ACLNN_ERR_RUNTIME_ERROR without importing it."""


@dataclass
class L0Node:
    """One L0 call recorded in the graph."""
    op: str                              # "Contiguous", "Cast", "HardSigmoidGrad", "ViewCopy", ...
    inputs: list[aclTensor]
    outputs: list[aclTensor]
    attrs: dict[str, Any] = field(default_factory=dict)
    why: str = ""                        # a sentence for the book: why this node is here
    launches_kernel: bool = True         # False for no-op nodes (e.g. Contiguous of a contiguous tensor)
    run: Callable[[], None] | None = None

    def describe(self) -> str:
        ins = ", ".join(_tdesc(t) for t in self.inputs)
        outs = ", ".join(_tdesc(t) for t in self.outputs)
        attrs = "".join(f", {k}={v}" for k, v in self.attrs.items())
        return f"{self.op}({ins}{attrs}) -> {outs}"


def _tdesc(t: aclTensor) -> str:
    return f"{t.dtype.short}{list(t.view_dims)}"


class aclOpExecutor:
    """Holds the L0 graph, the workspace plan and (after phase 2) the kernel runs."""

    def __init__(self, api: str):
        self.api = api
        self.nodes: list[L0Node] = []
        self._intermediates: list[tuple[aclTensor, int]] = []    # (tensor, bytes) in creation order
        self._kernel_workspaces: dict[int, L0Node] = {}          # id(workspace tensor) -> the node it serves
        self._plan: tuple[dict[int, int], int] | None = None
        self.executed = False
        self.kernel_runs: list[Any] = []      # filled by kernel nodes (tiling, trace...) when they run
        #: id(tensor) -> the L2 argument name it was passed as ("gradOutput", "out"...), for messages
        self.arg_names: dict[int, str] = {}

    # --- phase 1 -----------------------------------------------------------------------------------
    def alloc_tensor(self, shape: tuple[int, ...], dtype: aclDataType, name: str = "") -> aclTensor:
        """A new contiguous tensor that will live in the workspace (bound in phase 2)."""
        try:
            itemsize = to_numpy(dtype).itemsize
        except ValueError:
            raise UnsupportedDtypeError(f"no L0 kernel produces {dtype.name}: it has no storage type "
                                        f"(wanted for {name or 'an intermediate tensor'})") from None
        nbytes = math.prod(shape) * itemsize
        t = aclTensor(tuple(shape), dtype, contiguous_strides(shape), 0, aclFormat.ACL_FORMAT_ND,
                      tuple(shape), None, name=name)
        if nbytes > 0:
            self._intermediates.append((t, nbytes))
            self._plan = None
        return t

    def alloc_kernel_workspace(self, nbytes: int, node: L0Node) -> aclTensor | None:
        """The workspace ``node``'s kernel asks for (``GetWorkspaceSizes`` in its tiling): a UINT8 tensor in the
        executor's workspace that lives while that node runs. None for 0 bytes."""
        if nbytes <= 0:
            return None
        t = self.alloc_tensor((int(nbytes),), aclDataType.ACL_UINT8, name=f"{node.op}_workspace")
        self._kernel_workspaces[id(t)] = node
        return t

    def add(self, node: L0Node) -> L0Node:
        self.nodes.append(node)
        self._plan = None
        return node

    @staticmethod
    def tensor_room(nbytes: int) -> int:
        """Workspace bytes one tensor takes: ``roundUp(bytes + 32, 512)``."""
        return -(-(nbytes + WORKSPACE_PAD) // WORKSPACE_ALIGN) * WORKSPACE_ALIGN

    def _lifetime(self, t: aclTensor) -> tuple[int, int]:
        """(first, last) node index that touches ``t``; a kernel workspace lives at its node only."""
        node = self._kernel_workspaces.get(id(t))
        if node is not None:
            i = next(k for k, n in enumerate(self.nodes) if n is node)
            return i, i
        touched = [k for k, n in enumerate(self.nodes) if any(x is t for x in (*n.inputs, *n.outputs))]
        return (touched[0], touched[-1]) if touched else (len(self.nodes), len(self.nodes))

    def _planned(self) -> tuple[dict[int, int], int]:
        """Offsets of the intermediates and the workspace size, by the bucket rule of the module docstring."""
        if self._plan is None:
            buckets: list[dict[str, Any]] = []       # {"last": (first, last) of its newest tensor, "size", "ids"}
            for t, nbytes in self._intermediates:
                first, last = self._lifetime(t)
                fits = [b for b in buckets if b["last"][1] < first or b["last"][0] > last]
                bucket = fits[-1] if fits else None
                if bucket is None:
                    bucket = {"size": 0, "ids": []}
                    buckets.append(bucket)
                bucket["last"] = (first, last)
                bucket["size"] = max(bucket["size"], self.tensor_room(nbytes))
                bucket["ids"].append(id(t))
            offsets, total = {}, 0
            for b in buckets:
                for i in b["ids"]:
                    offsets[i] = total
                total += b["size"]
            self._plan = (offsets, total)
        return self._plan

    @property
    def workspace_size(self) -> int:
        return self._planned()[1]

    def GetWorkspaceSize(self) -> int:
        return self.workspace_size

    @property
    def workspace_tensors(self) -> list[tuple[aclTensor, int]]:
        """The intermediate tensors that live in the workspace, with their byte offsets in it."""
        offsets = self._planned()[0]
        return [(t, offsets[id(t)]) for t, _ in self._intermediates]

    @property
    def graph(self) -> list[str]:
        return [n.op for n in self.nodes]

    # --- phase 2 -----------------------------------------------------------------------------------
    def bind(self, workspace: DevicePtr | None) -> None:
        for t, off in self.workspace_tensors:
            t.data = None if workspace is None else workspace + off

    def describe_tensor(self, t: aclTensor) -> str:
        """``out (float32[1000])`` for an argument, ``workspace tensor grad_input (...)`` otherwise."""
        name = self.arg_names.get(id(t))
        if name is None:
            name = f"workspace tensor {t.name}" if t.name else "an intermediate tensor"
        return f"{name} ({_tdesc(t)})"

    def graph_tensors(self, *, arguments_only: bool = False) -> list[aclTensor]:
        """Every tensor the nodes read or write, once each, in graph order (the caller's arguments only
        when ``arguments_only``: the intermediates have no memory before ``bind``)."""
        seen: dict[int, aclTensor] = {}
        intermediate = {id(t) for t, _ in self._intermediates}
        for node in self.nodes:
            for t in (*node.inputs, *node.outputs):
                if arguments_only and id(t) in intermediate:
                    continue
                seen.setdefault(id(t), t)
        return list(seen.values())

    def memory_problem(self, *, arguments_only: bool = False) -> str | None:
        """The first graph tensor whose memory cannot be used now, described in one sentence; None if all
        are fine. Empty tensors need no memory."""
        for t in self.graph_tensors(arguments_only=arguments_only):
            if t.destroyed:
                return f"{self.describe_tensor(t)} was destroyed by aclDestroyTensor"
            if t.IsEmpty() and t.storable:
                continue
            problem = t.memory_error()
            if problem is not None:
                return f"{self.describe_tensor(t)} {problem}"
        return None

    def run(self, workspace: DevicePtr | None, stream: aclrtStream | None) -> None:
        self.bind(workspace)
        for node in self.nodes:
            if node.run is not None:
                node.run()
            if stream is not None and node.launches_kernel:
                stream.tasks.append(node.op)
        self.executed = True

    def __repr__(self) -> str:
        return f"aclOpExecutor({self.api}, graph={self.graph}, workspace={self.workspace_size} B)"

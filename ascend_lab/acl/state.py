"""The runtimes: the process's (what ``aclInit`` ... ``aclFinalize`` drive) and a call's own (:func:`own_runtime`),
which one is in force (the simulation context's, ``base.context``), and the checks every call starts with."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..base import context as _context
from ..base.log import OP_LOGE
from .codes import ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_UNINITIALIZE, ACL_SUCCESS, DEVICE_MEMORY_BYTES
from .pool import LOCK

if TYPE_CHECKING:        # annotations only
    from .handles import DeviceAllocation


@dataclass(eq=False)
class RuntimeState:
    """One runtime: the process's (``PROCESS``, what ``aclInit`` ... ``aclFinalize`` drive) or a call's own
    (:func:`own_runtime`). The runtime in force is the simulation context's (``base.context``)."""
    initialized: bool = False
    device: int | None = None
    allocated: int = 0                       # bytes requested by live aclrtMalloc allocations
    device_memory: int = DEVICE_MEMORY_BYTES
    streams: set[int] = field(default_factory=set)
    #: Live aclrtMalloc allocations (weakly held: a leaked one the program drops is reclaimed by Python),
    #: released by aclFinalize like the device memory of a real process.
    live: weakref.WeakSet[DeviceAllocation] = field(default_factory=weakref.WeakSet)


#: The process's runtime.
PROCESS = RuntimeState()
#: Every live aclrtMalloc allocation of every runtime: what the host backs (``memory._host_can_back``).
ALL_LIVE: weakref.WeakSet[DeviceAllocation] = weakref.WeakSet()


def current() -> RuntimeState:
    """The runtime the calls act on: the simulation context's own (a convenience call), else the process's."""
    own = _context.current().runtime
    return PROCESS if own is None else own


@contextlib.contextmanager
def own_runtime() -> Iterator[RuntimeState]:
    """Run the block on a runtime of its own, initialised with device 0 set (the device memory size of the runtime
    in force): the ``acl`` calls inside act on it, in this thread only, and leave the process's runtime alone --
    neither ``aclInit`` nor ``aclFinalize`` is called on it. Allocations still live at the end are released, as
    ``aclFinalize`` would. What the convenience layer (``ascend_lab.run``) runs each call in."""
    own = RuntimeState(initialized=True, device=0, device_memory=current().device_memory)
    try:
        with _context.scoped(runtime=own):
            yield own
    finally:
        release_all(own, "aclFinalize")


def log(api: str, message: str) -> None:
    """Log a refused call's reason, as the runtime does (``OP_LOGE``)."""
    OP_LOGE(api, message)


def release_all(st: RuntimeState, by: str) -> None:
    """Release every live allocation of ``st``, as a process's device memory goes away with its ACL context."""
    with LOCK:
        allocs = list(st.live)
        st.live.clear()
        st.allocated = 0
        for alloc in allocs:
            ALL_LIVE.discard(alloc)
        for alloc in allocs:
            if not alloc.freed:
                alloc.release(by)


def context_error(st: RuntimeState | None = None) -> int:
    """ACL_ERROR_UNINITIALIZE before aclInit, ACL_ERROR_RT_CONTEXT_NULL before aclrtSetDevice, else ACL_SUCCESS."""
    st = current() if st is None else st
    if not st.initialized:
        return ACL_ERROR_UNINITIALIZE
    if st.device is None:
        return ACL_ERROR_RT_CONTEXT_NULL
    return ACL_SUCCESS


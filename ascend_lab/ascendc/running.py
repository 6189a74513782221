"""Which simulated core is running in this thread: the one piece of state every AscendC call starts from.

It lives apart from :mod:`.core` (which builds a core and imports the sanitizer) so that the sanitizer and the
tensors, which need to know the running core when they make a finding, can ask without importing ``core``:
the three modules then import downwards only. ``core`` re-exports these names (``core.current`` ...).
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .core import CoreContext

#: The core running in this thread (each thread launches its own kernels: two launches in two threads never see
#: each other's core). Read when a kernel builds its pipe and queues, not per instruction.
_current: contextvars.ContextVar[CoreContext | None] = contextvars.ContextVar("ascendc.core", default=None)


def set_current(ctx: CoreContext | None) -> None:
    """The launcher's: ``ctx`` runs from now on in this thread (None when its kernel has returned)."""
    _current.set(ctx)


def current() -> CoreContext:
    """The running core; outside a launch a RuntimeError saying so (an AscendC call needs a core)."""
    ctx = _current.get()
    if ctx is None:
        raise RuntimeError("no kernel is running: AscendC calls only work inside ascendc.launch(...)")
    return ctx


def running_core() -> CoreContext | None:
    """The running core, or None outside a launch: for code that reports on it if there is one (a finding)."""
    return _current.get()

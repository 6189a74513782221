"""The simulation context: every switch the simulator used to keep process-wide, in one object.

One :class:`SimContext` holds the SoC in force, the installed custom operator packages, the launch options
(trace, snapshot, buffer_num), whether the cost model charges UB bank conflicts, whether uploads lend their host
bytes, the op log's open captures and the ACL runtime state the runtime calls act on. It is immutable; the one in
force lives in a :class:`contextvars.ContextVar`, so each thread (and each asyncio task) sees its own:

* ``with scoped(soc="Ascend950PR", trace=True): ...`` runs a block with some switches changed, in this thread
  only, and puts back exactly those switches at the end (a switch changed inside the block with :func:`update`,
  e.g. ``acl.set_soc``, stays changed after it, as before). The context managers of the package
  (``acl.soc``, ``acl.custom_package``, ``ascendc.options``, ``cost_model.without_bank_conflicts``,
  ``runtime.lending_uploads``, ``base.log.capture``) are thin wrappers around it.
* :func:`update` (``acl.set_soc``, ``acl.install_custom_package``) changes a switch for good: outside any
  ``scoped`` block it changes the *process-wide* defaults that every thread starts from; inside one, that
  block's context (the change then outlives the block, see above).
* :func:`current` is the context in force; read it once per call or launch, not per instruction.

A new thread starts from the process-wide defaults, not from the blocks its parent is in (that is how
``contextvars`` works before Python 3.14); to carry them over, run the thread's work in
``contextvars.copy_context().run(...)`` or pass the settings (``soc=...``) explicitly.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = ["SimContext", "current", "process", "scoped", "update"]


@dataclass(frozen=True)
class SimContext:
    """The switches a simulated call runs under (see the module docstring)."""
    #: The SoC in force (a catalogue name), read by the checks and the tiling (``acl.set_soc``).
    soc: str = "Ascend910B4"
    #: Installed custom operator packages (``acl.install_custom_package``).
    custom_packages: tuple[str, ...] = ()
    #: Kernels record every instruction as a trace event (``ascendc.options(trace=True)``).
    trace: bool = False
    #: With ``trace``: also keep each instruction's result values.
    snapshot: bool = False
    #: Override of the kernels' BUFFER_NUM (None: as written).
    buffer_num: int | None = None
    #: The cost model charges UB bank conflicts (``cost_model.without_bank_conflicts`` turns it off).
    bank_conflicts: bool = True
    #: Whole-allocation uploads lend the host bytes (``acl.runtime.lending_uploads``).
    lending: bool = False
    #: The op log's open captures, outermost first (``base.log.capture``); each gets every record logged here.
    log_sinks: tuple[list[Any], ...] = ()
    #: The ACL runtime state the ``acl`` calls act on; None: the process's one (``aclInit`` ... ``aclFinalize``).
    runtime: Any = None


_FIELDS = tuple(f.name for f in fields(SimContext))
_var: contextvars.ContextVar[SimContext | None] = contextvars.ContextVar("ascend_lab.context", default=None)
_process = SimContext()
_lock = threading.Lock()


def current() -> SimContext:
    """The context in force in this thread / task: the innermost ``scoped`` block's, else the process's."""
    ctx = _var.get()
    return _process if ctx is None else ctx


def process() -> SimContext:
    """The process-wide defaults every thread starts from."""
    return _process


def update(**changes: Any) -> SimContext:
    """Change switches for good (module docstring): the process-wide defaults outside any ``scoped`` block, the
    block's context inside one. Unknown names raise TypeError. Returns the context now in force."""
    global _process
    ctx = _var.get()
    if ctx is None:
        with _lock:
            _process = replace(_process, **changes)
            return _process
    ctx = replace(ctx, **changes)
    _var.set(ctx)
    return ctx


@contextlib.contextmanager
def scoped(**changes: Any) -> Iterator[SimContext]:
    """Run the block with ``changes`` in force in this thread only; at its end exactly those switches come back.
    Unknown names raise TypeError."""
    entered = replace(current(), **changes)
    token = _var.set(entered)
    try:
        yield entered
    finally:
        now = _var.get()
        kept = {} if now is entered or now is None else \
            {f: getattr(now, f) for f in _FIELDS if f not in changes and getattr(now, f) is not getattr(entered, f)}
        _var.reset(token)
        if kept:                          # switches changed for good inside the block (set_soc ...) stay changed
            update(**kept)

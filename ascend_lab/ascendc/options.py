"""Simulation options in force (e.g. whether kernels record a trace), set with ``options(...)``.

The options are fields of the simulation context (``base.context``): ``with options(trace=True): ...`` holds in
this thread only, and a launch reads them once (``current()``), never per instruction.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from ..base import context as _context


@dataclass(frozen=True)
class SimOptions:
    trace: bool = False          # record every instruction as an event (for figures and Chrome traces)
    snapshot: bool = False       # with trace: also keep each instruction's result values (small tiles only)
    buffer_num: int | None = None  # override the kernels' BUFFER_NUM (the sources hard-code 2); None = as written


_NAMES = frozenset(SimOptions.__dataclass_fields__)


def current() -> SimOptions:
    """The options in force in this thread (the simulation context's trace, snapshot and buffer_num)."""
    ctx = _context.current()
    return SimOptions(ctx.trace, ctx.snapshot, ctx.buffer_num)


@contextlib.contextmanager
def options(**changes: object) -> Iterator[SimOptions]:
    """``with options(trace=True): ...`` — unknown names raise TypeError. Thread-safe (this thread only)."""
    unknown = sorted(set(changes) - _NAMES)
    if unknown:
        raise TypeError(f"options() got unexpected option(s) {unknown}; it takes {', '.join(sorted(_NAMES))}")
    with _context.scoped(**changes) as ctx:
        yield SimOptions(ctx.trace, ctx.snapshot, ctx.buffer_num)

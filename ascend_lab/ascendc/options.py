"""Simulation options in force (e.g. whether kernels record a trace), set with ``options(...)``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SimOptions:
    trace: bool = False          # record every instruction as an event (for figures and Chrome traces)
    snapshot: bool = False       # with trace: also keep each instruction's result values (small tiles only)
    buffer_num: int | None = None  # override the kernels' BUFFER_NUM (the sources hard-code 2); None = as written


_current = SimOptions()


def current() -> SimOptions:
    return _current


@contextlib.contextmanager
def options(**changes: object) -> Iterator[SimOptions]:
    """``with options(trace=True): ...`` — unknown names raise TypeError."""
    global _current
    previous = _current
    _current = replace(_current, **changes)
    try:
        yield _current
    finally:
        _current = previous

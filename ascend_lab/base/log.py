"""CANN-style operator log (``OP_LOGE`` / ``OP_LOGI``), kept in memory so the book can show it.

CANN writes these lines to the plog; the simulator keeps them in a list (and forwards them to Python's
``logging`` under ``ascend_lab.aclnn``). ``capture()`` collects the lines of one call, which is how the
convenience layer fills ``run.messages``.

Thread-safe: the kept records are appended under a lock; a capture is part of the simulation context
(``base.context``), so it collects the records logged in its own thread (or task) only, and captures nest --
each gets every record logged inside it, and leaving one removes that capture (by identity), never another.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from . import context as _context

_logger = logging.getLogger("ascend_lab.aclnn")
# A library does not print: the records are kept here; applications may attach handlers.
logging.getLogger("ascend_lab").addHandler(logging.NullHandler())


@dataclass(frozen=True)
class LogRecord:
    level: str      # "ERROR", "WARNING", "INFO", "DEBUG"
    api: str        # the function that logged, e.g. "aclnnHardsigmoidBackwardGetWorkspaceSize"
    message: str

    def __str__(self) -> str:
        return f"[{self.level}] {self.api}: {self.message}"


_records: list[LogRecord] = []
_MAX_KEPT = 10_000
_lock = threading.Lock()


def _emit(level: str, api: str, message: str) -> None:
    rec = LogRecord(level, api, message)
    with _lock:
        _records.append(rec)
        if len(_records) > _MAX_KEPT:
            del _records[: len(_records) - _MAX_KEPT]
    for sink in _context.current().log_sinks:
        sink.append(rec)
    _logger.log(getattr(logging, level), "%s", rec)


def OP_LOGE(api: str, message: str) -> None:  # CANN macro name
    _emit("ERROR", api, message)


def OP_LOGW(api: str, message: str) -> None:
    _emit("WARNING", api, message)


def OP_LOGI(api: str, message: str) -> None:
    _emit("INFO", api, message)


def OP_LOGD(api: str, message: str) -> None:
    _emit("DEBUG", api, message)


def records() -> list[LogRecord]:
    """All kept records (of every thread), oldest first."""
    with _lock:
        return list(_records)


def clear() -> None:
    with _lock:
        _records.clear()


@contextlib.contextmanager
def capture() -> Iterator[list[LogRecord]]:
    """Collect the records logged inside the ``with`` block, in this thread (or task). Captures nest: an outer one
    also gets what an inner one collects."""
    sink: list[LogRecord] = []
    with _context.scoped(log_sinks=(*_context.current().log_sinks, sink)):
        yield sink

"""CANN-style operator log (``OP_LOGE`` / ``OP_LOGI``), kept in memory so the book can show it.

CANN writes these lines to the plog; the simulator keeps them in a list (and forwards them to Python's
``logging`` under ``ascend_lab.aclnn``). ``capture()`` collects the lines of one call, which is how the
convenience layer fills ``run.messages``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass

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
_sinks: list[list[LogRecord]] = []
_MAX_KEPT = 10_000


def _emit(level: str, api: str, message: str) -> None:
    rec = LogRecord(level, api, message)
    _records.append(rec)
    if len(_records) > _MAX_KEPT:
        del _records[: len(_records) - _MAX_KEPT]
    for sink in _sinks:
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
    """All kept records, oldest first."""
    return list(_records)


def clear() -> None:
    _records.clear()


@contextlib.contextmanager
def capture() -> Iterator[list[LogRecord]]:
    """Collect the records logged inside the ``with`` block."""
    sink: list[LogRecord] = []
    _sinks.append(sink)
    try:
        yield sink
    finally:
        _sinks.remove(sink)

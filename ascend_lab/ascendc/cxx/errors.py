"""What the C++ front end says when it cannot translate a kernel: file:line:column, the line, a caret, and a hint.

A compiler's message is the first thing a trainee reads about a construct, so every refusal names the place in
the C++ (never a place in the translator) and says what to write instead. :class:`KernelCompileError` is what
:func:`ascend_lab.ascendc.cxx.compile` raises for a kernel outside the supported subset, an unknown AscendC API,
a wrong argument count or a syntax error.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

from ..errors import display_path

__all__ = ["KernelCompileError", "Where"]


@dataclass(frozen=True)
class Where:
    """A place in a C++ source: the file's name as the user gave it, 1-based line and column, and the length of
    the construct on that line (for the ``^~~~`` underline)."""
    file: str
    line: int
    column: int = 1
    length: int = 1

    def __str__(self) -> str:
        return f"{display_path(self.file)}:{self.line}:{self.column}"


class KernelCompileError(Exception):
    """A kernel the front end refuses, said as a compiler says it::

        kernel.h:41:5: error: unknown AscendC API 'Sigmoidz'
            Sigmoidz(y, x, n);
            ^~~~~~~~
          hint: the simulator models these vector APIs: Abs, Add, Adds, ...

    ``where`` is the :class:`Where`, ``reason`` the one-line message, ``hint`` what to write instead."""

    def __init__(self, reason: str, where: Where | None = None, hint: str = "", source_line: str | None = None):
        self.reason = reason
        self.where = where
        self.hint = hint
        if where is not None and source_line is None:
            source_line = linecache.getline(where.file, where.line).rstrip("\n")
        self.source_line = source_line or ""
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"{self.where}: error: {self.reason}" if self.where else f"error: {self.reason}"
        lines = [head]
        if self.where is not None and self.source_line:
            text = self.source_line.expandtabs(4)
            col = max(1, min(self.where.column, len(text) + 1))
            width = max(1, min(self.where.length, len(text) - col + 1))
            lines.append("    " + text)
            lines.append("    " + " " * (col - 1) + "^" + "~" * (width - 1))
        if self.hint:
            lines.append("  hint: " + self.hint)
        return "\n".join(lines)

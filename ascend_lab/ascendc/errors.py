"""Errors the simulated AI Core raises when a kernel does what the hardware would break on, and the learner's line.

A finding (a :class:`KernelError`, or a warning in the trace) names the line of the kernel *you* wrote that made
it: the innermost stack frame outside the library, found only when a finding happens (a walk up the stack, no
cost per instruction). "The library" is this package plus any folder registered with :func:`add_library_dir`
(the labs' kit registers itself, so a finding in a lab's own kernel names no file at all), the Python standard
library and installed packages. A notebook cell is named as a cell ("your notebook cell, line 12"), never by the
temporary file IPython compiles it to; a file of yours by its path.
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ..opdev.executor import KernelLaunchError

__all__ = ["KernelError", "SourceLine", "add_library_dir", "display_path", "in_library", "learner_frame",
           "learner_line"]

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])            # .../ascend_lab
_REPO_DIR = str(Path(_PACKAGE_DIR).parent)                           # the folder holding the package
#: The launcher's file: frames from there outward are the caller of the launch, not the kernel.
_LAUNCHER = str(Path(__file__).resolve().with_name("launcher.py"))


def _system_dirs() -> list[str]:
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(str(Path(path).resolve()))
    return sorted(dirs)


_library_dirs: list[str] = [_PACKAGE_DIR, *_system_dirs()]
#: A kernel's C++ source is never library code: a finding names its line even in a kernel the package ships.
_CXX_SUFFIXES = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx")
_verdicts: dict[str, bool] = {}          # filename -> in the library (a frame walk asks about a few files, often)


def add_library_dir(path: str | os.PathLike[str]) -> None:
    """Count ``path`` (a folder) as library code: a finding never names a line there. The labs' kit calls this
    for its own folder, so its reference kernels and launch helpers are skipped like the package's."""
    resolved = str(Path(path).resolve())
    if resolved not in _library_dirs:
        _library_dirs.append(resolved)
        _verdicts.clear()


def in_library(filename: str) -> bool:
    """Is ``filename`` (a code object's ``co_filename``) library code rather than the learner's?"""
    verdict = _verdicts.get(filename)
    if verdict is None:
        if filename.endswith(_CXX_SUFFIXES) or filename.startswith("<ascendc"):
            verdict = False                       # kernel C++ (ascendc.cxx): always the line a finding names
        elif filename.startswith("<frozen") or filename.startswith("<string"):
            verdict = True
        elif filename.startswith("<"):            # <ipython-input-...>, <lab cell 3>: code typed by the learner
            verdict = False
        else:
            try:
                path = str(Path(filename).resolve())
            except (OSError, ValueError):
                path = filename
            if "ipykernel_" in path:              # a notebook cell compiled to /tmp/ipykernel_<pid>/<hash>.py
                verdict = False
            else:
                verdict = any(path == d or path.startswith(d + os.sep) for d in _library_dirs)
        _verdicts[filename] = verdict
    return verdict


@dataclass(frozen=True)
class SourceLine:
    """One line of the learner's code: file, line number, function and the line's text.

    ``str()`` is ``"your notebook cell, line 12, in Compute: Muls(y, x, 2.0, n + 8)"``; :attr:`place` the part
    before ", in"."""
    filename: str
    lineno: int
    function: str
    code: str

    @property
    def place(self) -> str:
        """Where, for a reader: a notebook cell as a cell, code compiled under a name of its own
        (``<lab5.md cell 7>``) by that name, as a traceback shows it, a file by :func:`display_path`."""
        name = self.filename
        if "ipykernel_" in name or name.startswith("<ipython-input"):
            where = "your notebook cell"
        else:
            where = display_path(name)
        return f"{where}, line {self.lineno}"

    def __str__(self) -> str:
        return f"{self.place}, in {self.function}" + (f": {self.code}" if self.code else "")


def display_path(filename: str) -> str:
    """How a message names a file: a file of the package by its path in the repository
    (``ascend_lab/ops/relu_grad/op_kernel/experimental/relu_grad.h``: the same on every machine, and no machine's
    folders in a published page), another file relative to the working directory when under it, else as given;
    a name in angle brackets (``<ascendc cell 3>``) as it is."""
    if filename.startswith("<"):
        return filename
    try:
        path = str(Path(filename).resolve())
        if path.startswith(_PACKAGE_DIR + os.sep):
            return os.path.relpath(path, _REPO_DIR)
        rel = os.path.relpath(path)
    except (OSError, ValueError):
        return filename
    return filename if rel.startswith("..") else rel


def _source_line(filename: str, lineno: int, function: str) -> SourceLine:
    linecache.checkcache(filename)          # a kernel file edited since its last finding: quote the line as it is now
    return SourceLine(filename, lineno, function, linecache.getline(filename, lineno).strip())


def learner_frame(start: FrameType | None = None) -> FrameType | None:
    """The innermost frame of the learner's kernel on the current call stack (from ``start``, default the caller
    outward), or None when the kernel running is library code: the walk stops at the launcher, whose callers
    launched the kernel rather than wrote it."""
    frame = start if start is not None else sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == _LAUNCHER:
            return None
        if not in_library(filename):
            return frame
        frame = frame.f_back
    return None


def learner_line(where: BaseException | TracebackType | FrameType | None = None) -> SourceLine | None:
    """The learner's line behind a finding or an error, or None when only library code is involved.

    ``where``: None (the current call stack: what a sanitizer check calls while the kernel runs), a frame, or
    an exception / traceback that has unwound (its innermost frame outside the library -- for any error a
    learner's kernel or function raised, a KernelError or not)::

        try:
            lab.run(MyKernel)
        except Exception as exc:
            print(learner_line(exc))      # your notebook cell, line 14, in Compute: Muls(y, x, 2.0, n + 8)
    """
    if isinstance(where, BaseException):
        found = getattr(where, "line", None)
        if isinstance(where, KernelError) and found is not None:
            return found
        where = where.__traceback__
    if isinstance(where, TracebackType):
        best = None
        tb: TracebackType | None = where
        while tb is not None:
            code = tb.tb_frame.f_code
            if not in_library(code.co_filename):
                best = (code.co_filename, tb.tb_lineno, code.co_name)
            tb = tb.tb_next
        return _source_line(*best) if best else None
    frame = learner_frame(where if where is not None else sys._getframe(1))
    if frame is None:
        return None
    return _source_line(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


#: ``KernelError(line=...)`` default: look the learner's line up on the call stack.
FROM_STACK: Any = object()


class KernelError(KernelLaunchError):
    """A sanitizer finding that stops the kernel: names the kind, instruction, core and tile, and the learner's line.

    Built by :mod:`.sanitizer`, which also fills ``hint`` (what to do about it) from its catalogue of
    kinds; ``str()`` is ``[kind] message (instruction ..., core ..., tile ...)``, then ``at <your line>`` when the
    kernel is yours. ``detail`` is the message alone; ``line`` the :class:`SourceLine` (None for a library
    kernel), looked up on the call stack when the error is made unless given."""

    def __init__(self, message: str, *, instruction: str = "", core: int | None = None,
                 tile: int | None = None, kind: str = "", hint: str = "", line: SourceLine | None = FROM_STACK):
        if line is FROM_STACK:
            line = learner_line(sys._getframe(1))
        where = []
        if instruction:
            where.append(f"instruction {instruction}")
        if core is not None:
            where.append(f"core {core}")
        if tile is not None:
            where.append(f"tile {tile}")
        prefix = f"[{kind}] " if kind else ""
        suffix = f" ({', '.join(where)})" if where else ""
        at = f"\n  at {line}" if line is not None else ""
        super().__init__(f"{prefix}{message}{suffix}{at}")
        self.kind = kind
        self.instruction = instruction
        self.core = core
        self.tile = tile
        self.detail = message
        self.hint = hint
        self.line = line

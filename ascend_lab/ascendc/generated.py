"""Kernel code written out at run time: the template's instantiations (``atvoss.schedule``) and the TBE tile bodies
(``tbe.lowering``) are Python source generated once and then run for every tile.

:func:`load` compiles such source as *library* code -- its file name starts ``<string``, so a sanitizer finding
names no line of it (:func:`.errors.in_library`), as with any kernel the package ships -- and keeps its lines in
``linecache`` so that a traceback through it shows them; only the newest :data:`LINECACHE_KEEP` sources stay there
(a long session builds one per DAG, dtype and attribute value). :func:`targets` writes an unpacking target list.
"""

from __future__ import annotations

import collections
import itertools
import linecache
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["AST_LOCK", "LINECACHE_KEEP", "load", "targets"]

#: Held around every conversion between source, Python ``ast`` objects and code (``ast.parse``, ``compile`` of a
#: tree): CPython 3.11/3.12 keep that conversion's recursion depth in per-interpreter state, so two threads doing it
#: at once fail with "SystemError: AST constructor recursion depth mismatch" (CPython gh-106905). Kernels are
#: translated and compiled once and cached, so the lock costs nothing per launch.
AST_LOCK = threading.RLock()

#: How many generated sources keep their lines in ``linecache`` (the oldest are dropped first).
LINECACHE_KEEP = 256
_in_linecache: collections.deque[str] = collections.deque()
_serial = itertools.count()                 # every source gets a file name of its own, even two of one title


def load(source: str, title: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Compile and run ``source`` in ``namespace`` (the names its code reads, ``__name__`` included) under the file
    name ``<string: {title} #n>``; returns the namespace, now holding what the source defines."""
    filename = f"<string: {title} #{next(_serial)}>"
    with AST_LOCK:
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        _in_linecache.append(filename)
        while len(_in_linecache) > LINECACHE_KEEP:
            linecache.cache.pop(_in_linecache.popleft(), None)
        code = compile(source, filename, "exec")
    exec(code, namespace)
    return namespace


def targets(names: Sequence[str]) -> str:
    """Assignment targets that unpack ``len(names)`` items: ``a, b`` or ``a,``."""
    return ", ".join(names) + ("," if len(names) == 1 else "")

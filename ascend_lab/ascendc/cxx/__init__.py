"""``ascend_lab.ascendc.cxx`` -- AscendC kernels written in C++, run on the simulated AI Core.

The pipeline (design §9)::

    kernel.cpp + its headers -> preprocess (includes, guards, #define/#if, AscendC qualifiers)
                             -> tree-sitter-cpp syntax tree
                             -> translate: C++ scalar semantics, templates instantiated per launch,
                                AscendC calls bound to ascend_lab.ascendc
                             -> Python, compiled once per instantiation under the C++ file's name and lines
                             -> launch on blockDim simulated cores: the same sanitizer, trace, cost model

:func:`compile` takes a path (a kernel file beside its headers) or C++ source text and returns a
:class:`CxxKernel` that :func:`ascend_lab.ascendc.launch` runs. What the front end cannot translate is a
:class:`KernelCompileError` at file:line:column with a caret and a hint.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import KernelCompileError, Where
from .kernel import CxxKernel, load_kernel
from .preprocess import BUILTIN_HEADERS, SourceFile

__all__ = ["BUILTIN_HEADERS", "CxxKernel", "KernelCompileError", "KernelFile", "Where", "compile"]

_serial = 0


def compile(source: str | os.PathLike[str], *, headers: Mapping[str, str] | None = None,
            defines: Mapping[str, Any] | None = None, entry: str | None = None,
            knobs: Mapping[str, str] | None = None, dtype_macros: Mapping[str, str] | None = None,
            name: str | None = None, include_dirs: list[str | os.PathLike[str]] | None = None) -> CxxKernel:
    """Compile an AscendC kernel written in C++.

    ``source``: a path to the kernel's ``.cpp`` (its ``#include "..."`` found beside it), or the C++ text itself
    (a string containing a newline or a ``{``); ``headers`` are headers given as text by name (for a kernel given
    as text); ``defines`` are ``-D`` macros (``{"DTYPE_X": "half"}``: what the build defines per input dtype);
    ``entry`` picks the ``__global__`` function when the file has several; ``knobs`` name launch keywords that
    override a ``static constexpr`` (``{"bufferNum": "BUFFER_NUM"}``); ``dtype_macros`` name launch keywords
    that define a macro as an element type (``{"dtype": "DTYPE_INPUT_GRADIENT"}``: the build's ``DTYPE_<INPUT>``
    for the launch's input dtype); ``include_dirs`` are more folders for ``#include "..."``; ``name`` is the file
    name messages use for source text (default ``<ascendc kernel N>``).
    """
    global _serial
    text = os.fspath(source) if isinstance(source, os.PathLike) else source
    if not isinstance(text, str):
        raise TypeError(f"compile takes a path or C++ source text, not {type(source).__name__}")
    if "\n" in text or "{" in text:
        if name is None:
            _serial += 1
            name = f"<ascendc kernel {_serial}>"
        main = SourceFile(name, text, None)
    else:
        path = Path(text)
        if not path.is_file():
            raise FileNotFoundError(f"no kernel file {text!r} (compile takes a path to a .cpp or C++ source text)")
        path = path.resolve()
        main = SourceFile(str(path), path.read_text(encoding="utf-8"), path.parent)
    return load_kernel(main, headers=headers, defines=defines, entry=entry, knobs=knobs, dtype_macros=dtype_macros,
                       include_dirs=[Path(d) for d in include_dirs] if include_dirs else None)


class KernelFile:
    """A kernel file of the package, compiled on first use: what an operator's ``op_kernel`` module exports as its
    ``__global__`` entry (importing the package compiles nothing; the first launch compiles, later ones reuse it).

    It calls and reads like the :class:`CxxKernel` it compiles to (``kernel(*gm, workspace, tiling, **template)``,
    ``.python_source(...)``, ``.source_files`` ...); ``path`` is the entry's ``.cpp``, ``entry`` its name;
    ``defines`` the build's ``-D`` macros (``{"__NPU_ARCH__": 1001}``: one file built for one architecture)."""

    kernel_api = "ascendc"

    def __init__(self, path: str | os.PathLike[str], *, entry: str, knobs: Mapping[str, str] | None = None,
                 dtype_macros: Mapping[str, str] | None = None, defines: Mapping[str, Any] | None = None):
        self.path = Path(path)
        self.__name__ = entry
        self._options = {"entry": entry, "knobs": knobs, "dtype_macros": dtype_macros, "defines": defines}
        self._kernel: CxxKernel | None = None
        self._lock = threading.Lock()

    @property
    def kernel(self) -> CxxKernel:
        if self._kernel is None:
            with self._lock:
                if self._kernel is None:
                    self._kernel = compile(self.path, **self._options)
        return self._kernel

    def __call__(self, *args: Any, **template: Any) -> None:
        return self.kernel(*args, **template)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"KernelFile({self.__name__} from {self.path.name})"

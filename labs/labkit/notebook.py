"""The lab notebooks' conventions, and the helpers that read and run them outside Jupyter.

Every lab notebook (``labs/NN_*.md``, MyST Markdown) tags its code cells by role:

``lab-setup``
    imports and helpers the rest of the lab needs (executed everywhere).
``lab-skeleton`` (+ ``skip-execution``, ``nbval-skip``)
    the learner's starting point: shown in the book but executed neither by myst-nb (``skip-execution``
    is nbclient's skip tag) nor by nbval (``nbval-skip``). The untouched skeleton must *fail* the lab's
    checker; ``tests/test_labs.py`` proves it by running the ``lab-setup`` cells and then the skeleton
    cells in a fresh namespace (:func:`exec_cells`) and calling ``check`` on the function they define.
    A skeleton cell that does not define the checked function may run everywhere instead (lab 6's broken
    kernels): the visible cell below it reports on the learner's own class, in the book as in Jupyter.
``hide-cell`` (the solution)
    shows the reference solution from :mod:`labkit.solutions` (:func:`show_source`), asserts
    that it passes, and -- in the built book, where the skeleton did not run -- binds the learner's
    function name to it, so the following "run the checker" cell checks the solution there and the
    learner's own function in Jupyter.
"""

from __future__ import annotations

import inspect
import linecache
from pathlib import Path
from typing import Any

__all__ = ["SETUP", "SKELETON", "cells", "exec_cells", "show_source"]

SETUP = "lab-setup"
SKELETON = "lab-skeleton"


def _read(path: str | Path) -> Any:
    import jupytext  # a test/book dependency, not needed to *use* the labs
    return jupytext.read(path, fmt="md:myst")


def cells(path: str | Path, tag: str) -> list[tuple[int, str]]:
    """``(cell index, source)`` of the code cells carrying ``tag``, in notebook order."""
    nb = _read(path)
    return [(i, c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and tag in c.metadata.get("tags", [])]


def exec_cells(path: str | Path, tags: tuple[str, ...] = (SETUP, SKELETON),
               namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Execute the code cells carrying any of ``tags``, in notebook order, in ``namespace`` (a fresh one
    by default) and return it. Each cell is compiled under a name like ``<01_checks.md cell 7>`` that is
    registered with ``linecache``, so a traceback from skeleton code shows the offending line."""
    path = Path(path)
    ns: dict[str, Any] = {"__name__": f"lab_{path.stem}"} if namespace is None else namespace
    nb = _read(path)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not set(tags) & set(cell.metadata.get("tags", [])):
            continue
        filename = f"<{path.name} cell {i}>"
        source = cell.source if cell.source.endswith("\n") else cell.source + "\n"
        if source.startswith("%%ascendc"):
            ns.update(compile_ascendc_cell(source, filename, path.parent))
            continue
        # IPython line magics (%load_ext ...) are Jupyter's business: a blank line keeps the line numbers
        source = "".join("\n" if line.lstrip().startswith("%") else line for line in source.splitlines(True))
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        # dont_inherit: compile like Jupyter does, without this module's ``from __future__ import annotations``
        exec(compile(source, filename, "exec", dont_inherit=True), ns)  # the book's own cells
    return ns


def compile_ascendc_cell(source: str, filename: str, folder: Path) -> dict[str, Any]:
    """A ``%%ascendc NAME`` cell compiled as the magic compiles it (line 1 is the ``%%ascendc`` line, includes from
    the notebook's ``folder``): ``{NAME: kernel}``. Only the NAME argument of the magic line is read."""
    from ascend_lab.ascendc.cxx.kernel import load_kernel
    from ascend_lab.ascendc.cxx.preprocess import SourceFile

    first, _, body = source.partition("\n")
    words = [w for w in first.split()[1:] if not w.startswith("-")]
    kernel = load_kernel(SourceFile(filename, "\n" + body, folder))
    return {words[0] if words else kernel.entry_name: kernel}


class _Source:
    """Source code that renders as a highlighted block in Jupyter / the book and as text elsewhere."""

    def __init__(self, code: str, title: str, language: str = "python"):
        self.code, self.title, self.language = code, title, language

    def _repr_markdown_(self) -> str:
        return f"**{self.title}**\n\n```{self.language}\n{self.code.rstrip()}\n```\n"

    def __repr__(self) -> str:
        return f"# {self.title}\n{self.code}"


def show_source(obj: Any, title: str | None = None) -> _Source:
    """The source of ``obj`` (a function from :mod:`labkit.solutions`, or a compiled C++ kernel: its main file)
    as a displayable block."""
    sources = getattr(obj, "sources", None)
    if isinstance(sources, list) and sources and not isinstance(obj, type):
        name = getattr(obj, "reference_name", None) or Path(str(sources[-1].name)).name
        return _Source(sources[-1].text, title or f"labkit.solutions.{name}", language="cpp")
    code = getattr(obj, "reference_source", "") or inspect.getsource(obj)     # a guarded reference keeps its text
    module = getattr(obj, "__module__", "")
    return _Source(code, title or f"{module}.{getattr(obj, '__qualname__', '')}")

"""Let nbval collect the book's MyST Markdown notebooks (chapters/*.md) by reading them with jupytext,
and let the tests import the lab kit (``labs/labkit``).

nbval 0.11 reads notebooks with ``nbformat.read``; it is handed a shim module whose ``read`` understands
MyST ``.md`` files. ``tests/test_book_collect.py`` checks that the shim still collects, since it patches
a module global of nbval (pinned to 0.11.* for that reason).

The lab kit is course material, not part of the installed ``ascend_lab`` package: the lab notebooks
import it from their own folder (Jupyter's working directory), and the tests find it through
``labs/`` on ``sys.path``.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import jupytext
import nbformat
import nbval.plugin as _nbval

LABS_DIR = str(Path(__file__).resolve().parent / "labs")
if LABS_DIR not in sys.path:
    sys.path.insert(0, LABS_DIR)


def _read(path, as_version=4, **kw):
    if str(path).endswith(".md"):
        return jupytext.read(path, fmt="md:myst")
    return nbformat.read(path, as_version=as_version, **kw)


_nbval.nbformat = types.SimpleNamespace(**{k: getattr(nbformat, k) for k in dir(nbformat) if not k.startswith("__")})
_nbval.nbformat.read = _read


def _is_myst_notebook(path) -> bool:
    if path.suffix != ".md":
        return False
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "kernelspec:" in head


def pytest_collect_file(file_path, parent):
    opt = parent.config.option
    if (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)) and _is_myst_notebook(file_path):
        return _nbval.IPyNbFile.from_parent(parent, path=file_path)
    return None

"""No module reads another module's private attributes (issue 21 item 7), checked with ``ast`` on ``ascend_lab``.

The rule, precisely. A name is private when it starts with one underscore (not a dunder). A module *owns* a
private name when it defines it: at its top level, in a class body (a method, a field ``_x: int``), or by
assigning ``self._x`` / ``cls._x`` in one of its methods. A *private read* is then

* ``from other_module import _name`` -- importing another module's private name;
* ``something._name`` (read, not assigned) or ``getattr(something, "_name", ...)``, ``something`` not
  ``self``/``cls``, where ``_name`` is not owned by the reading module -- on an imported
  module (``core._current``), on an object of another module's class (``gm._alloc`` in the instructions), or
  on a third-party object (``ax._left_title``, matplotlib's private field).

Not counted: the namedtuple API (``_replace``, ``_asdict``, ``_fields``, ``_make``), ``sys._getframe``
(CPython's documented frame access, listed in ``STDLIB``), and a third-party library's private name read by a
fast path whose comment says what it measured (``# fast path: ... 0.9 us of 1.6 us``; numpy's undispatched
``packbits``). A fast path that needs another ascend_lab module's state asks for it through a public name of
that module, and says there what it measured.

``KNOWN`` lists the reads still in modules their owners are editing, by module (the list only shrinks: a
module with none left fails until it is removed).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ascend_lab"
PUBLIC_UNDERSCORE = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}
STDLIB = {("sys", "_getframe")}
#: A third-party fast path may read its private name when it says what that measured (``# fast path: ... 0.9 us``).
FAST_PATH = re.compile(r"#\s*fast path:.*\d\s*(ns|us|µs|ms|s|%|x)\b")

#: module (path under ascend_lab/) -> owner and what is left, for reads in files other engineers are editing.
KNOWN: dict[str, str] = {
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORE


def _owned(tree: ast.Module) -> set[str]:
    """The private names this module defines (top level, class bodies, ``self._x =`` / ``cls._x =``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return {n for n in out if _private(n)}


def _third_party(tree: ast.Module) -> set[str]:
    """Names bound by importing another package (``import numpy as np``): the roots of third-party objects."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names if not a.name.startswith("ascend_lab")}
        elif isinstance(node, ast.ImportFrom) and not node.level and not (node.module or "").startswith("ascend_lab"):
            out |= {a.asname or a.name for a in node.names}
    return out


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _measured(lines: list[str], line: int) -> bool:
    """A ``# fast path: ...`` comment with a measured number in the read's paragraph (its line and the non-blank
    lines right above it)."""
    i = line - 1
    block = [lines[i]]
    while i > 0 and lines[i - 1].strip():
        i -= 1
        block.append(lines[i])
    return bool(FAST_PATH.search(" ".join(reversed(block))))


def private_reads(source: str, module: str = "") -> list[str]:
    """Every private read of one module's source, as ``line: text``."""
    tree = ast.parse(source)
    owned = _owned(tree)
    lines = source.splitlines()
    foreign = _third_party(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("ascend_lab")):
            found += [f"{node.lineno}: from {'.' * node.level}{node.module or ''} import {a.name}"
                      for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _private(node.attr) \
                and node.attr not in owned:
            base = node.value.id if isinstance(node.value, ast.Name) else None
            if base not in ("self", "cls") and (base, node.attr) not in STDLIB \
                    and not (_root(node.value) in foreign and _measured(lines, node.lineno)):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and _private(node.args[1].value) \
                and node.args[1].value not in owned \
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls")):
            if not (_root(node.args[0]) in foreign and _measured(lines, node.lineno)):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found), key=lambda s: (int(s.split(":")[0]), s))


FILES = sorted(PACKAGE.rglob("*.py"))


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_no_private_reads(path):
    reads = private_reads(path.read_text(encoding="utf-8"))
    if _rel(path) in KNOWN:
        assert reads, f"{_rel(path)} reads no private attribute any more: remove it from KNOWN"
        return
    assert not reads, f"{_rel(path)} reads private attributes of other modules:\n" + "\n".join(reads)


def test_known_modules_exist():
    assert all((PACKAGE / rel).is_file() for rel in KNOWN), [rel for rel in KNOWN if not (PACKAGE / rel).is_file()]


def test_the_rule_on_synthetic_source():
    """The checker can fail: each kind of read is reported, the module's own private names are not."""
    src = '''
import sys
from . import core
from .core import _current, public
from .other import _helper

class Tensor:
    _slots: int
    def __init__(self):
        self._start = 0
    def view(self, g):
        g._start = self._start          # own field, another instance: fine
        return g._start, self._slots
    def frame(self):
        return sys._getframe(1)

def fast(gm, ax, t):
    return core._current, gm._alloc, ax._left_title, t._replace(x=1), _current, getattr(ax, "_fig", None)

import numpy as np
# fast path: no dispatcher, 0.9 us of 1.6 us per call
_pack = getattr(np.packbits, "_implementation", np.packbits)

_unpack = getattr(np.unpackbits, "_implementation", np.unpackbits)
'''
    reads = private_reads(src)
    assert reads == ["4: from .core import _current", "5: from .other import _helper", "18: ax._left_title",
                     "18: core._current", "18: getattr(ax, '_fig', None)", "18: gm._alloc",
                     "24: getattr(np.unpackbits, '_implementation', np.unpackbits)"], reads

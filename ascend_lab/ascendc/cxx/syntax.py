"""The C++ syntax the front end reads: tree-sitter-cpp's parser, the first syntax error of a tree, and the
small tree walks every stage shares (a declarator peeled, an error said at a node).
"""

from __future__ import annotations

from typing import Any

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser

from .ctypes import (
    CType,
)
from .errors import KernelCompileError, Where
from .preprocess import Unit

__all__ = ['LANGUAGE', 'check_syntax', 'error_at', 'parse', 'unwrap']


LANGUAGE = Language(tree_sitter_cpp.language())


def parse(text: str) -> Any:
    """The tree-sitter tree of a preprocessed C++ text."""
    return Parser(LANGUAGE).parse(text.encode("utf-8"))


def check_syntax(unit: Unit, root: Node) -> None:
    """The first syntax error of a tree, said at its place (a missing token by its name)."""
    if not root.has_error:
        return
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing:
            raise error_at(unit, n, f"expected '{n.type}'", "C++ needs it here (a missing ';' or bracket?)")
        if n.type == "ERROR":
            prev = n.prev_sibling
            if n.text.strip() in (b"", b";") and prev is not None:
                n = prev
            raise error_at(unit, n, f"syntax error near '{n.text.decode(errors='replace').split(chr(10))[0]}'",
                             "the front end parses standard C++: check for a missing ';', a stray token or "
                             "an unbalanced bracket")
        stack.extend(reversed(n.children))


_POINTERS = ("pointer_declarator", "abstract_pointer_declarator")
_WRAPPERS = _POINTERS + ("reference_declarator", "abstract_reference_declarator")


def unwrap(d: Node | None, base: CType) -> tuple[Node | None, CType, Node | None]:
    """A declarator peeled: (the declared name's node, its type with the ``*`` applied, its initialiser) --
    ``T* p = e``, ``T& r``, ``const T& x`` (a reference is the value itself here)."""
    value = None
    if d is not None and d.type == "init_declarator":
        d, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
    while d is not None and d.type in _WRAPPERS:
        if d.type in _POINTERS:
            base = CType("ptr", target=base)
        inner = d.child_by_field_name("declarator")
        if inner is None and d.named_children and d.named_children[-1].type in ("identifier", "field_identifier"):
            inner = d.named_children[-1]               # a reference declarator names its child without a field
        d = inner
    return d, base, value


def error_at(unit: Unit, node: Node, reason: str, hint: str = "") -> KernelCompileError:
    row, col = node.start_point
    erow, ecol = node.end_point
    line = unit.source.text.split("\n")[row]
    length = (ecol - col) if erow == row else len(line) - col
    return KernelCompileError(reason, Where(unit.source.name, row + 1, col + 1, max(1, length)), hint, line)

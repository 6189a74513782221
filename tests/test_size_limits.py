"""Small modules with one job (issue 21 item 5): no function in ``ascend_lab/`` over 60 lines, no module over 600.

A function's length runs from its ``def`` line to its last line (docstring included, decorators not); a method or a
nested function is named by its qualified name (``Trace.to_chrome_trace``, ``outer.inner``) and counted on its own.
A module's length is its number of lines.

:data:`ALLOWED_MODULES` and :data:`ALLOWED_FUNCTIONS` name what is over a limit today -- files that other engineers
own this session (their splits are under way) or that wait for theirs -- each with the size it has now. The sizes are
ceilings: an entry may shrink, never grow, and an entry whose file is back within the limit must go (the last test
says which). New code meets the limits; nothing is added to these lists.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ascend_lab"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 600

#: module (relative to ascend_lab/) -> its lines today, a ceiling
ALLOWED_MODULES: dict[str, int] = {
}
#: "module:qualified.name" -> the function's lines today, a ceiling
ALLOWED_FUNCTIONS: dict[str, int] = {
}


def function_lengths(source: str) -> dict[str, int]:
    """Qualified name -> lines of every function and method in ``source`` (nested ones included)."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out[name] = max(out.get(name, 0), child.end_lineno - child.lineno + 1)
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _modules() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()
#: module -> {function: lines}, measured once for the two tests that read it
LENGTHS = {rel: function_lengths(text) for rel, text in MODULES.items()}


def test_the_measure_sees_long_functions_and_methods():
    body = "".join(f"    x{i} = {i}\n" for i in range(61))
    src = f"def f():\n{body}\nclass C:\n    def m(self):\n        def inner():\n{body.replace('    ', '            ')}"
    lengths = function_lengths(src)
    assert lengths["f"] == 62 and lengths["C.m.inner"] == 62 and lengths["C.m"] == 63
    assert function_lengths("def g():\n    return 1\n") == {"g": 2}


def test_no_module_over_600_lines():
    too_long = []
    for rel, text in MODULES.items():
        lines = len(text.splitlines())
        if lines > ALLOWED_MODULES.get(rel, MAX_MODULE_LINES):
            allowed = ALLOWED_MODULES.get(rel)
            too_long.append(f"{rel}: {lines} lines" + (f" (its ceiling is {allowed})" if allowed else "")
                            + " -- split it along its seams, one job per module")
    assert not too_long, "\n".join(too_long)


def test_no_function_over_60_lines():
    too_long = []
    for rel, lengths in LENGTHS.items():
        for name, lines in lengths.items():
            key = f"{rel}:{name}"
            if lines > ALLOWED_FUNCTIONS.get(key, MAX_FUNCTION_LINES):
                allowed = ALLOWED_FUNCTIONS.get(key)
                too_long.append(f"{key}: {lines} lines" + (f" (its ceiling is {allowed})" if allowed else "")
                                + " -- split it into named steps")
    assert not too_long, "\n".join(too_long)


def test_the_allow_lists_name_only_what_is_still_over_a_limit():
    """An entry whose module or function is gone or back within the limit is removed, so the lists only shrink."""
    lengths = {f"{rel}:{name}": n for rel, functions in LENGTHS.items() for name, n in functions.items()}
    stale = [f"ALLOWED_MODULES[{rel!r}]" for rel in ALLOWED_MODULES
             if rel not in MODULES or len(MODULES[rel].splitlines()) <= MAX_MODULE_LINES]
    stale += [f"ALLOWED_FUNCTIONS[{key!r}]" for key in ALLOWED_FUNCTIONS
              if lengths.get(key, 0) <= MAX_FUNCTION_LINES]
    assert not stale, "within the limits now, remove: " + ", ".join(stale)

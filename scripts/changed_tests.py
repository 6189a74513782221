"""The unit tests `make check` runs: those touching a changed module, by their direct imports.

    python scripts/changed_tests.py [BASE]      (BASE: a git revision, default HEAD)

Prints the test files (tests/test_*.py, one per line) that import a Python module changed since BASE (committed
after BASE, staged, unstaged or untracked): a module of the package (ascend_lab/...), of the lab kit (labs/labkit/)
or the tests' helpers (tests/helpers.py), and every changed test file itself. A test imports a module M when one of
its import statements names M (a name a package re-exports from one of its modules names that module), a module
inside M (a package), or the package M is the ``__init__`` of, at any depth of the test file. The package root
``ascend_lab`` counts only for a change to ``ascend_lab/__init__.py``: nearly every test imports it, which says
nothing about which modules it exercises. A changed conftest.py selects
every test. The browser tests (tests/test_site*.py) need the built site and are never selected.

A fast, approximate inner loop: it follows direct imports only (a test reaching a changed module through another
module is not selected); `make test` runs everything.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# top-level import name -> the folder it is imported from
ROOTS = {"ascend_lab": ROOT, "labkit": ROOT / "labs", "helpers": ROOT / "tests", "fixture_ops": ROOT / "tests"}


def changed_files(base: str) -> set[Path]:
    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if line]

    names = git("diff", "--name-only", base, "--") + git("ls-files", "--others", "--exclude-standard")
    return {ROOT / n for n in names if n.endswith(".py") and (ROOT / n).exists()}


def module_name(path: Path) -> str | None:
    """Dotted name of a module file under one of ROOTS (a package's __init__.py -> the package), else None."""
    for top, folder in ROOTS.items():
        try:
            rel = path.relative_to(folder)
        except ValueError:
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[0] != top:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)
    return None


def module_file(name: str) -> Path | None:
    parts = name.split(".")
    path = ROOTS[parts[0]].joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def reexports(package: str) -> dict[str, str]:
    """name -> module for the names a package's __init__ imports from its own modules (`from .core import X`)."""
    init = module_file(package)
    if init is None or init.name != "__init__.py":
        return {}
    out = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            out.update({a.asname or a.name: f"{package}.{node.module}" for a in node.names})
    return out


def resolve(name: str) -> str:
    """The module a dotted import name stands for: itself if it is a module, a name a package re-exports from one
    of its modules -> that module (`ascend_lab.ascendc.TPipe` -> `ascend_lab.ascendc.core`), else its package."""
    if module_file(name) is not None or "." not in name:
        return name
    package, attr = name.rsplit(".", 1)
    source = reexports(package).get(attr) if module_file(package) is not None else None
    return resolve(source) if source else resolve(package)


@functools.cache
def imported_modules(test: Path) -> set[str]:
    """The modules a test file's import statements name (`from a.b import c`: a.b.c if it is a module, else a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(test.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return {resolve(n) for n in names if n.split(".")[0] in ROOTS}


def touches(imported: str, changed: str) -> bool:
    if imported == changed:
        return True
    if "." in imported and changed.startswith(imported + "."):  # a package the test imports (not the root)
        return True
    return "." in changed and imported.startswith(changed + ".")  # the __init__ of a package above the import


def selected(base: str) -> list[Path]:
    tests = sorted(p for p in (ROOT / "tests").glob("test_*.py") if not p.name.startswith("test_site"))
    changed = changed_files(base)
    if any(p.name == "conftest.py" for p in changed):
        return tests
    modules = {m for p in changed if (m := module_name(p))}
    return [t for t in tests if t in changed or any(touches(i, m) for i in imported_modules(t) for m in modules)]


if __name__ == "__main__":
    for test in selected(sys.argv[1] if len(sys.argv) > 1 else "HEAD"):
        print(test.relative_to(ROOT).as_posix())

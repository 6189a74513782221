"""The package's layers only point down (design §8), checked on every import statement in ``ascend_lab``.

From the bottom: ``base`` (SoC catalogue, op log) -> ``acl`` and ``dtypes`` (runtime, aclTensor) -> ``opdev``
(status codes, dtype rules, executor, L0 graph) -> ``ascendc`` (the simulated AI Core, with its own numerics)
-> the kernel templates (``atvoss``, the elementwise/broadcast template) and the TBE DSL model (``tbe``)
-> ``ops`` (operators, registry) -> the convenience layer and CLI -> ``viz`` -> ``book``. A module may import
its own layer and the layers below. ``golden``, the test oracle, stands apart: it uses only the bottom
layers and no simulator module imports it. Imports inside functions count too, and each needs a comment
(on its line or the line above) saying why it is not at the top of the module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ascend_lab"

#: module prefix -> layer rank (longest prefix wins)
LAYERS: dict[str, int] = {
    "ascend_lab.base": 0, "ascend_lab.data": 0,
    "ascend_lab.acl": 1, "ascend_lab.dtypes": 1,
    "ascend_lab.opdev": 2,
    "ascend_lab.ascendc": 3,
    "ascend_lab.atvoss": 4, "ascend_lab.tbe": 4,
    "ascend_lab.ops": 5,
    "ascend_lab": 6, "ascend_lab.run": 6, "ascend_lab.cli": 6, "ascend_lab.tiling": 6, "ascend_lab.aclnn": 6,
    "ascend_lab.__main__": 6,
    "ascend_lab.viz": 7,
    "ascend_lab.book": 8,
}
ORACLE = "ascend_lab.golden"
ORACLE_MAY_IMPORT = ("ascend_lab.dtypes", "ascend_lab.acl.types", "ascend_lab.base")
SIMULATOR = ("ascend_lab.base", "ascend_lab.acl", "ascend_lab.dtypes", "ascend_lab.opdev", "ascend_lab.ascendc",
             "ascend_lab.atvoss", "ascend_lab.tbe", "ascend_lab.ops")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int | None:
    best = None
    for prefix, rank in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return None if best is None else best[1]


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function?) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith("ascend_lab"):
                    for alias in child.names:   # `from . import viz` imports the submodule ascend_lab.viz
                        sub = f"{target}.{alias.name}"
                        out.append((sub if _is_module(sub) else target, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return [(m, line, f) for m, line, f in out if m == "ascend_lab" or m.startswith("ascend_lab.")]


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    for path in FILES:
        name = _module_name(path)
        assert name == ORACLE or _layer(name) is not None, f"{name} has no layer in tests/test_layers.py"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    here = _module_name(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    for target, line, in_function in _imports(path):
        if here == ORACLE:
            if not target.startswith(ORACLE_MAY_IMPORT):
                problems.append(f"line {line}: the oracle imports {target} (it may use only {ORACLE_MAY_IMPORT})")
            continue
        if target == ORACLE:
            if here.startswith(SIMULATOR):
                problems.append(f"line {line}: the simulator module imports the oracle {ORACLE}")
            continue
        mine, theirs = _layer(here), _layer(target)
        if theirs is not None and mine is not None and theirs > mine:
            problems.append(f"line {line}: {here} (layer {mine}) imports {target} (layer {theirs}), which is above it")
        if in_function:
            context = lines[line - 1] + "\n" + (lines[line - 2] if line >= 2 else "")
            if "#" not in context:
                problems.append(f"line {line}: import of {target} inside a function without a comment saying why")
    assert not problems, f"{here}:\n" + "\n".join(problems)


def test_the_checker_sees_an_upward_edge(tmp_path):
    """The test itself can fail: a module of opdev importing ascendc is reported."""
    fake = PACKAGE / "opdev" / "executor.py"
    found = [t for t, _, _ in _imports(fake)]
    assert "ascend_lab.acl.runtime" in found
    assert _layer("ascend_lab.opdev.executor") < _layer("ascend_lab.ascendc.core")
    assert _layer("ascend_lab.viz.data") > _layer("ascend_lab.ops.registry") > _layer("ascend_lab.ascendc")

"""The package's layers only point down (design §8), checked on every edge between modules of ``ascend_lab``.

From the bottom: ``base`` (SoC catalogue, op log) -> ``acl`` and ``dtypes`` (runtime, aclTensor) -> ``opdev``
(status codes, dtype rules, executor, L0 graph) -> ``ascendc`` (the simulated AI Core, with its own numerics)
-> the kernel templates (``atvoss``, the elementwise/broadcast template) and the TBE DSL model (``tbe``)
-> ``ops`` (operators, registry) -> the convenience layer and CLI -> ``viz`` (draws runs, traces and tiling
data handed to it; imports nothing from ``ops`` or the convenience layer) -> ``explore`` (the explorers and
everything that asks the registry or launches a kernel for a picture) -> ``book``. The package
``ascend_lab.viz`` itself (its ``__init__``) is a facade like ``ascend_lab``'s: it keeps the public names of
both viz and explore under ``viz.``. A module may import its own layer and the layers below. ``golden``, the
test oracle, stands apart: it uses only the bottom layers and no simulator module imports it.

An edge is any of: an ``import`` statement (inside a function too), ``importlib.import_module("...")`` /
``__import__("...")`` / ``resources.files("...")`` with a literal name, and a module-level constant that
names a module (``OPERATOR_PACKAGES = ("ascend_lab.ops.relu_grad", ...)``). Besides pointing down:

* no cycles, not even inside one layer (a cycle makes import order matter and the layers meaningless);
* an operator package (``ops/<op>/``, one with an ``op_host``) imports no other operator package: what two
  operators share lives in ``ops/common/`` or a lower layer;
* an import inside a function says why it is not at the top: ``# deferred: <reason>`` on its line or the
  line above.

The checker runs on any package tree, so its self-test feeds it a small fake package with one violation of
each kind and asserts each is reported.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ascend_lab"

#: module prefix -> layer rank (longest prefix wins; ``=name`` is that one module, a package's ``__init__``)
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
    "ascend_lab.explore": 8, "=ascend_lab.viz": 8,
    "ascend_lab.book": 9,
}
#: (importer prefix, imported prefix, why not): edges that point down but skip what the layer is for
FORBIDDEN: tuple[tuple[str, str, str], ...] = (
    ("ascend_lab.viz.", "ascend_lab.ops", "viz draws data handed to it; asking the registry or launching a "
                                          "kernel for a picture is ascend_lab.explore's job"),
    ("ascend_lab.viz.", "ascend_lab.run", "viz draws runs handed to it; making one is ascend_lab.explore's job"),
)
ORACLE = "ascend_lab.golden"
ORACLE_MAY_IMPORT = ("ascend_lab.dtypes", "ascend_lab.acl.types", "ascend_lab.base")
SIMULATOR = ("ascend_lab.base", "ascend_lab.acl", "ascend_lab.dtypes", "ascend_lab.opdev", "ascend_lab.ascendc",
             "ascend_lab.atvoss", "ascend_lab.tbe", "ascend_lab.ops")
#: calls whose first (literal) argument is a module the caller loads
LOADERS = {"import_module", "__import__", "files"}
MODULE_NAME = re.compile(r"^ascend_lab(\.[A-Za-z_]\w*)*(:[\w.]+)?$")
DEFERRED = re.compile(r"#\s*deferred:\s*\S")


@dataclass(frozen=True)
class Edge:
    """``source`` loads ``target`` at ``line``: by an import statement (``kind`` "import"), by an importlib call
    with a literal name ("importlib") or through a module-level constant naming it ("string"). Imports of other
    packages are edges too (only whether a deferred one says why is checked on them)."""
    source: str
    target: str
    line: int
    kind: str
    deferred: bool = False      # inside a function
    reason: bool = True         # a deferred import says why (``# deferred: ...``)
    typing: bool = False        # under ``if TYPE_CHECKING:``: an annotation's name, never executed


class Package:
    """The modules of one package tree (the real ``ascend_lab``, or a fake one in a test) and their edges."""

    def __init__(self, root: Path):
        self.root = root
        self.files = sorted(root.rglob("*.py"))
        self.names = {self.module_name(p): p for p in self.files}
        self._trees: dict[Path, ast.Module] = {}     # each file is parsed and scanned once (issue 19)
        self._edges: dict[Path, list[Edge]] = {}

    def module_name(self, path: Path) -> str:
        parts = path.relative_to(self.root.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def is_module(self, name: str) -> bool:
        return name in self.names

    @functools.cached_property
    def aliases(self) -> dict[str, str]:
        """Modules kept under an old public name after a move (``sys.modules[__name__] = <the moved module>``):
        alias -> the module it hands out. Nothing but the alias statement is allowed in one."""
        out = {}
        for name, path in self.names.items():
            if any(_is_alias_assignment(stmt) for stmt in self.tree(path).body):
                targets = {e.target for e in self.edges(path) if self.is_module(e.target)}
                out[name] = ", ".join(sorted(targets))
        return out

    def as_module(self, name: str) -> str | None:
        """The module a loader string names (``pkg.mod`` or ``pkg.mod:attr``), None when it names none (a logger,
        an entry-point group such as ``ascend_lab.operators``)."""
        module = name.split(":")[0]
        return module if module in self.names else None

    def tree(self, path: Path) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = ast.parse(path.read_text(encoding="utf-8"))
        return self._trees[path]

    def edges(self, path: Path) -> list[Edge]:
        if path not in self._edges:
            self._edges[path] = _Scanner(self, path).edges
        return self._edges[path]

    def all_edges(self) -> list[Edge]:
        return [e for p in self.files for e in self.edges(p)]


def _is_alias_assignment(stmt: ast.stmt) -> bool:
    """``sys.modules[__name__] = ...``: the module replaces itself by another in the import system."""
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript)
            and ast.unparse(stmt.targets[0]) == "sys.modules[__name__]")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function): prose, not edges."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


class _Scanner(ast.NodeVisitor):
    """Every edge of one file, relative imports resolved."""

    def __init__(self, pkg: Package, path: Path):
        self.pkg, self.here = pkg, pkg.module_name(path)
        self.package = self.here if path.name == "__init__.py" else self.here.rpartition(".")[0]
        self.lines = path.read_text(encoding="utf-8").splitlines()
        self.edges: list[Edge] = []
        self.depth = 0
        self.typing = 0
        tree = pkg.tree(path)
        for stmt in tree.body:        # module-level constants naming modules: a registry's list of packages
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                self._constants(stmt.value)
        self.visit(tree)

    def _add(self, target: str | None, line: int, kind: str) -> None:
        if target is None:
            return
        deferred = self.depth > 0
        self.edges.append(Edge(self.here, target, line, kind, deferred, not deferred or self._says_why(line),
                               self.typing > 0))

    def _says_why(self, line: int) -> bool:
        """``# deferred: <reason>`` on the import's line, or on a comment line above its group of imports."""
        i = line - 1
        if DEFERRED.search(self.lines[i]):
            return True
        while i > 0 and self.lines[i - 1].strip().startswith(("from ", "import ", "#")):
            i -= 1
            if DEFERRED.search(self.lines[i]):
                return True
        return False

    def _resolve(self, module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = self.package.split(".")
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    def _constants(self, value: ast.AST) -> None:
        if isinstance(value, ast.Constant):
            items: Iterable[ast.AST] = [value]
        elif isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            items = value.elts
        elif isinstance(value, ast.Dict):
            items = [*value.keys, *value.values]
        else:
            return
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and MODULE_NAME.match(item.value):
                self._add(self.pkg.as_module(item.value), item.lineno, "string")

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else "") \
                == "TYPE_CHECKING":
            self.typing += 1
            for stmt in node.body:
                self.visit(stmt)
            self.typing -= 1
            for stmt in node.orelse:
                self.visit(stmt)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno, "import")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        target = self._resolve(node.module, node.level)
        for alias in node.names:          # `from . import viz` imports the submodule ascend_lab.viz
            sub = f"{target}.{alias.name}"
            self._add(sub if self.pkg.is_module(sub) else target, node.lineno, "import")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in LOADERS and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            text = node.args[0].value
            level = len(text) - len(text.lstrip("."))
            target = self._resolve(text.lstrip(".") or None, level) if level else text
            self._add(self.pkg.as_module(target), node.lineno, "importlib")
        self.generic_visit(node)


def _layer(module: str) -> int | None:
    if f"={module}" in LAYERS:
        return LAYERS[f"={module}"]
    best = None
    for prefix, rank in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return None if best is None else best[1]


def _in_oracle(module: str) -> bool:
    """``golden`` or one of its modules (the package ``ascend_lab/golden/``)."""
    return module == ORACLE or module.startswith(ORACLE + ".")


def _op_oracle(module: str) -> bool:
    """An operator's own test oracle, ``ops/<op>/oracle.py`` (issue 21 item 1): it stands apart like ``golden``."""
    return module.startswith("ascend_lab.ops.") and module.endswith(".oracle")


def _edge_problems(e: Edge) -> list[str]:
    """What is wrong with one edge between two modules of the package (an empty list: nothing)."""
    at = f"{e.source} line {e.line} ({e.kind})"
    if _in_oracle(e.source):
        ok = e.target.startswith(ORACLE_MAY_IMPORT) or _in_oracle(e.target)
        return [] if ok else [f"{at}: the oracle imports {e.target} (it may use only {ORACLE_MAY_IMPORT})"]
    if _op_oracle(e.source):       # ops/<op>/oracle.py: numpy and ml_dtypes only (tests/test_op_oracles.py)
        return [f"{at}: an operator's oracle imports {e.target} (it may use only numpy and ml_dtypes)"]
    if _in_oracle(e.target) or _op_oracle(e.target):
        return [f"{at}: the simulator module imports the oracle {e.target}"] if e.source.startswith(SIMULATOR) else []
    out = []
    mine, theirs = _layer(e.source), _layer(e.target)
    if theirs is not None and mine is not None and theirs > mine:
        out.append(f"{at}: {e.source} (layer {mine}) imports {e.target} (layer {theirs}), which is above it")
    for src, dst, why in FORBIDDEN:
        if e.source.startswith(src) and (e.target == dst or e.target.startswith(dst + ".")):
            out.append(f"{at}: {e.source} imports {e.target}: {why}")
    return out


def _operator_packages(pkg: Package) -> dict[str, str]:
    """module -> its operator package, for every module inside ``ops/<op>/`` (a folder with an op_host)."""
    ops = pkg.root / "ops"
    folders = [d for d in ops.iterdir() if (d / "op_host.py").is_file()] if ops.is_dir() else []
    out = {}
    for folder in folders:
        package = pkg.module_name(folder / "__init__.py")
        for name in pkg.names:
            if name == package or name.startswith(package + "."):
                out[name] = package
    return out


def _cycles(edges: Iterable[Edge]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.source != e.target:
            graph.setdefault(e.source, set()).add(e.target)
            graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def check(pkg: Package) -> dict[str, list[str]]:
    """Every problem of the package, by kind: layer, cycle, operator, deferred, alias."""
    edges = pkg.all_edges()
    inside = [e for e in edges if e.target == pkg.root.name or e.target.startswith(pkg.root.name + ".")]
    owner = _operator_packages(pkg)
    aliases = pkg.aliases
    problems: dict[str, list[str]] = {"layer": [], "cycle": [], "operator": [], "deferred": [], "alias": []}
    for e in inside:
        if e.target in aliases:          # inside the package, a moved module is imported from where it lives
            problems["alias"].append(f"{e.source} line {e.line}: imports {e.target}, the old name of "
                                     f"{aliases[e.target]}; import that")
        if e.source not in aliases:      # an alias takes the layer of the module it hands out
            problems["layer"] += _edge_problems(e)
        if owner.get(e.source) and owner.get(e.target) and owner[e.source] != owner[e.target]:
            problems["operator"].append(f"{e.source} line {e.line}: operator package {owner[e.source]} imports "
                                        f"{e.target} of {owner[e.target]}; share it through ops/common")
    # a cycle is one the interpreter runs into: imports under `if TYPE_CHECKING:` name types for annotations only
    problems["cycle"] = [" <-> ".join(c) for c in _cycles(e for e in inside if not e.typing)]
    problems["deferred"] = [f"{e.source} line {e.line}: import of {e.target} inside a function without "
                            f"'# deferred: <reason>'" for e in edges if e.deferred and not e.reason]
    return problems


REAL = Package(PACKAGE)
ALIASES = REAL.aliases

#: Cycles still open, by a module each goes through and who is removing it (issue 21). A cycle through none of
#: these fails; an entry whose module is in no cycle any more fails too, so the list only shrinks.
KNOWN_CYCLES: dict[str, str] = {
    "ascend_lab.ops.registry": "operator contract: the registry loads the op packages, whose op_api asks the "
                               "registry",
}
#: Modules whose deferred imports do not say why yet, and whose owner is editing them (same ratchet).
KNOWN_UNEXPLAINED: dict[str, str] = {
}


def test_every_module_has_a_layer():
    for name in REAL.names:
        assert _in_oracle(name) or _layer(name) is not None, f"{name} has no layer in tests/test_layers.py"


#: every module but the old names kept after a move (an alias takes the layer of the module it hands out)
LAYERED = [p for p in REAL.files if REAL.module_name(p) not in ALIASES]


@pytest.mark.parametrize("path", LAYERED, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_edges_point_down(path):
    problems = [p for e in REAL.edges(path) if e.target.startswith("ascend_lab") for p in _edge_problems(e)]
    assert not problems, "\n".join(problems)


def _ratchet(found: dict[str, set[str]], known: dict[str, str], what: str) -> None:
    """``found``: problem text -> the modules it goes through. Every problem goes through a known module, and
    every known module still has a problem (then it comes off the list)."""
    new = [text for text, modules in found.items() if not modules & set(known)]
    gone = [m for m in known if not any(m in modules for modules in found.values())]
    assert not new, f"new {what}:\n" + "\n".join(new)
    assert not gone, f"{what} fixed -- remove from the known list in tests/test_layers.py: {gone}"


def test_no_cycles():
    _ratchet({c: set(c.split(" <-> ")) for c in check(REAL)["cycle"]}, KNOWN_CYCLES, "import cycles")


def test_deferred_imports_say_why():
    _ratchet({p: {p.split(" line ")[0]} for p in check(REAL)["deferred"]}, KNOWN_UNEXPLAINED,
             "deferred imports without '# deferred: <reason>'")


def test_operator_packages_do_not_import_each_other():
    assert not check(REAL)["operator"], "\n".join(check(REAL)["operator"])


def test_moved_modules_are_imported_from_where_they_live():
    """The old names (``ascend_lab.ops.standalone`` ...) are for the public API; the package uses the new ones."""
    assert ALIASES, "no alias found: the detection broke (ops/standalone.py is one)"
    found = check(REAL)["alias"]
    assert not found, "\n".join(found)


def test_viz_imports_nothing_from_ops():
    """viz draws what it is handed; not even an in-function import reaches ops (design §8)."""
    reached = [e for e in REAL.all_edges() if e.source.startswith("ascend_lab.viz.")
               and e.target.startswith(("ascend_lab.ops", "ascend_lab.run"))]
    assert not reached, reached


# --- the checker can fail: a fake package with one violation of each kind ----------------------------------------
FAKE = {
    "__init__.py": "",
    "base/__init__.py": "",
    "acl/__init__.py": "",
    "acl/types.py": "from ..dtypes import name\n",                                  # cycle inside layer 1
    "dtypes.py": "from .acl.types import X\nfrom .base import y\n",
    "opdev/__init__.py": "import importlib\nM = importlib.import_module('ascend_lab.ascendc.core')\n",  # importlib up
    "ascendc/__init__.py": "",
    "ascendc/core.py": "PLUGINS = ('ascend_lab.ops.registry',)\n",                 # string edge up
    "ops/__init__.py": "",
    "ops/registry.py": "def load():\n    from . import spec\n    return spec\n",   # deferred, no reason
    "ops/spec.py": "def load():\n    # deferred: the registry imports this module\n    from . import registry\n",
    "ops/relu/__init__.py": "", "ops/relu/op_host.py": "from ..gelu.op_host import _tiling\n",   # op -> op
    "ops/gelu/__init__.py": "", "ops/gelu/op_host.py": "_tiling = 1\n",
    "viz/__init__.py": "", "viz/data.py": "from ..ops import registry\n",           # viz -> ops
    "golden.py": "from .ascendc import core\n",                                    # oracle -> simulator
    "ops/relu/oracle.py": "from ...ascendc import core\n",                        # an op's oracle -> simulator
    "ascendc/tensor.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .pipe import Q\n",
    "ascendc/pipe.py": "from .tensor import T\n",     # a cycle through a TYPE_CHECKING import only: not reported
    "ops/old.py": "import sys\nfrom ..viz import data as _moved\nsys.modules[__name__] = _moved\n",  # an alias...
    "ops/gelu/op_api.py": "from ..old import X\n",                                 # ... imported inside
}


def _fake(tmp_path: Path, files: dict[str, str]) -> Package:
    root = tmp_path / "ascend_lab"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return Package(root)


def test_the_checker_reports_each_kind_of_violation(tmp_path):
    found = check(_fake(tmp_path, FAKE))
    text = {kind: "\n".join(lines) for kind, lines in found.items()}
    assert "ascend_lab.acl.types <-> ascend_lab.dtypes" in text["cycle"]
    assert "ascend_lab.ops.registry <-> ascend_lab.ops.spec" in text["cycle"]          # through a deferred import
    assert "ascend_lab.ascendc.pipe" not in text["cycle"]                         # through a TYPE_CHECKING import
    assert "ascend_lab.opdev line 2 (importlib)" in text["layer"] and "ascend_lab.ascendc.core" in text["layer"]
    assert "ascend_lab.ascendc.core line 1 (string)" in text["layer"]
    assert "ascend_lab.viz.data line 1 (import): ascend_lab.viz.data imports ascend_lab.ops.registry" in text["layer"]
    assert "the oracle imports ascend_lab.ascendc.core" in text["layer"]
    assert "ascend_lab.ops.relu.oracle line 1 (import): an operator's oracle imports ascend_lab.ascendc" \
        in text["layer"]
    assert "operator package ascend_lab.ops.relu imports ascend_lab.ops.gelu.op_host" in text["operator"]
    assert found["alias"] == ["ascend_lab.ops.gelu.op_api line 1: imports ascend_lab.ops.old, the old name of "
                              "ascend_lab.viz.data; import that"]
    assert "ascend_lab.ops.old" not in text["layer"]            # an alias takes its target's layer
    assert found["deferred"] == ["ascend_lab.ops.registry line 2: import of ascend_lab.ops.spec inside a function "
                                 "without '# deferred: <reason>'"]


def test_a_clean_fake_package_passes(tmp_path):
    """The same kinds of edge, each done right, report nothing (the checks are not just noisy)."""
    clean = {"__init__.py": "", "base/__init__.py": "", "acl/__init__.py": "", "acl/types.py": "X = 1\n",
             "dtypes.py": "from .acl.types import X\n", "ops/__init__.py": "", "ops/common.py": "TILE = 1\n",
             "ops/relu/__init__.py": "", "ops/relu/op_host.py": "from ..common import TILE\n",
             "viz/__init__.py": "", "viz/data.py": "def f():\n    import numpy  # deferred: only f needs it\n",
             "explore/__init__.py": "from ..ops import relu\nfrom ..viz import data\n",
             "opdev/__init__.py": "import importlib\nM = importlib.import_module('ascend_lab.acl.types')\n",
             "ops/old.py": "import sys\nfrom ..viz import data as _moved\nsys.modules[__name__] = _moved\n"}
    assert check(_fake(tmp_path, clean)) == {"layer": [], "cycle": [], "operator": [], "deferred": [], "alias": []}


def test_layer_ranks_follow_design_section_8():
    assert _layer("ascend_lab.opdev.executor") < _layer("ascend_lab.ascendc.core")
    assert _layer("ascend_lab.ops.registry") < _layer("ascend_lab.viz.data") < _layer("ascend_lab.explore")
    assert _layer("ascend_lab.viz") == _layer("ascend_lab.explore") < _layer("ascend_lab.book")

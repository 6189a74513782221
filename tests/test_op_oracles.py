"""An operator's test oracle may live in its own folder (``ops/<op>/oracle.py``, issue 21 item 1), on the terms of
``ascend_lab.golden``: it is numpy (and ml_dtypes) only -- it imports nothing from the simulator -- and no simulator
module imports it (the registry names it as text; ``registry.oracle`` imports it when a test asks).

Checked on every import statement of the package's and the test fixtures' ``oracle.py`` files, and of every module
of ``ascend_lab``; a self-test feeds the checker a bad oracle and a module importing one.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What an oracle may import: numpy, ml_dtypes and the standard library.
ALLOWED = ("numpy", "ml_dtypes")


def _imports(path: Path, package: str) -> list[tuple[str, int]]:
    """(module, line) of every import in ``path`` (a module of ``package``), relative imports resolved."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            out += [(target, node.lineno)] + [(f"{target}.{a.name}", node.lineno) for a in node.names]
    return out


def _module(path: Path, root: Path) -> tuple[str, str]:
    """(module name, its package) of a file under ``root``."""
    parts = path.relative_to(root).with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return name, name if path.name == "__init__.py" else name.rpartition(".")[0]


def oracle_problems(root: Path) -> list[str]:
    """What breaks the rule in the tree under ``root`` (holding ``ascend_lab/`` and maybe ``tests/``)."""
    problems = []
    oracles = [*(root / "ascend_lab" / "ops").glob("*/oracle.py"), *(root / "tests").glob("fixture_ops/*/oracle.py")]
    for path in oracles:
        name, package = _module(path, root)
        for target, line in _imports(path, package):
            top = target.split(".")[0]
            if top not in ALLOWED and top not in sys.stdlib_module_names and top != "__future__":
                problems.append(f"{name} line {line}: an oracle imports {target} (numpy, ml_dtypes, stdlib only)")
    for path in (root / "ascend_lab").rglob("*.py"):
        name, package = _module(path, root)
        for target, line in _imports(path, package):
            if target.startswith("ascend_lab.ops.") and target.endswith(".oracle"):
                problems.append(f"{name} line {line}: the simulator imports the oracle {target}")
    return problems


def test_operator_oracles_import_nothing_from_the_simulator_and_the_simulator_none_of_them():
    assert oracle_problems(ROOT) == []
    assert list((ROOT / "tests").glob("fixture_ops/*/oracle.py")), "the fixture operators keep their oracles"


@pytest.mark.parametrize("files, found", [
    ({"ascend_lab/ops/my_op/oracle.py": "from ...ascendc import core\n"},
     "ascend_lab.ops.my_op.oracle line 1: an oracle imports ascend_lab.ascendc"),
    ({"ascend_lab/ops/my_op/oracle.py": "import numpy as np\nfrom ascend_lab.dtypes import to_numpy\n"},
     "ascend_lab.ops.my_op.oracle line 2: an oracle imports ascend_lab.dtypes"),
    ({"ascend_lab/ops/my_op/oracle.py": "import numpy\n", "ascend_lab/run.py": "from .ops.my_op import oracle\n"},
     "ascend_lab.run line 1: the simulator imports the oracle ascend_lab.ops.my_op.oracle"),
])
def test_the_checker_sees_a_violation(tmp_path, files, found):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert any(p.startswith(found) for p in oracle_problems(tmp_path)), oracle_problems(tmp_path)
    (tmp_path / "ascend_lab/ops/my_op/oracle.py").write_text("import math\nimport numpy as np\n", encoding="utf-8")
    (tmp_path / "ascend_lab/run.py").write_text("from .ops import registry\n", encoding="utf-8")
    assert oracle_problems(tmp_path) == []

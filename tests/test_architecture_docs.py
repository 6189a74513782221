"""Each engine folder's ARCHITECTURE.md (issue 21 item 9) names every module of that folder, so the map a new
engineer reads first cannot drift from the files: a module added, renamed or moved fails here until the map says
where it lives."""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ascend_lab"
ENGINES = ("ascendc", "ascendc/cxx", "atvoss", "tbe", "ops")


@pytest.mark.parametrize("folder", ENGINES)
def test_the_map_names_every_module(folder):
    root = PACKAGE / folder
    text = (root / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = [p.name for p in sorted(root.glob("*.py")) if p.name != "__init__.py"]
    packages = [p.name + "/" for p in sorted(root.iterdir()) if (p / "__init__.py").is_file()
                and not (p / "op_host.py").is_file() and not (p / "ARCHITECTURE.md").is_file()]
    missing = [name for name in modules + packages if name not in text]
    assert modules, f"no module found in {root}"
    assert not missing, f"{folder}/ARCHITECTURE.md does not name {missing}"
    assert len(text.splitlines()) <= 80, f"{folder}/ARCHITECTURE.md is meant to be one screen"

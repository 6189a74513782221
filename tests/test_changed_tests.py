"""`make check` runs the unit tests that import a changed module (scripts/changed_tests.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("changed_tests", ROOT / "scripts" / "changed_tests.py")
changed_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(changed_tests)


def _selected(monkeypatch, *changed: str) -> set[str]:
    monkeypatch.setattr(changed_tests, "changed_files", lambda base: {ROOT / c for c in changed})
    return {p.name for p in changed_tests.selected("HEAD")}


def test_a_changed_module_selects_the_tests_importing_it(monkeypatch):
    tbe = _selected(monkeypatch, "ascend_lab/tbe/dsl.py")
    assert "test_tbe.py" in tbe and "test_cli.py" not in tbe and "test_golden.py" not in tbe
    # `from ascend_lab.ascendc import sanitizer` names the module; `import ascend_lab` alone names none of it
    sanitizer = _selected(monkeypatch, "ascend_lab/ascendc/sanitizer/shadow.py")    # a module of the package
    assert {"test_sanitizer.py", "test_ub_reserve.py"} <= sanitizer and "test_tiling.py" not in sanitizer
    # a package's __init__ counts for every module imported from inside it
    assert "test_acl_runtime.py" in _selected(monkeypatch, "ascend_lab/acl/__init__.py")
    assert "test_golden.py" in _selected(monkeypatch, "tests/helpers.py")


def test_changed_tests_run_themselves_and_nothing_else_runs_without_a_change(monkeypatch):
    assert _selected(monkeypatch, "tests/test_golden.py", "README.md") == {"test_golden.py"}
    assert _selected(monkeypatch) == set()


def test_conftest_selects_every_test_and_the_package_root_those_importing_it(monkeypatch):
    every = {p.name for p in (ROOT / "tests").glob("test_*.py") if not p.name.startswith("test_site")}
    assert _selected(monkeypatch, "conftest.py") == every
    root = _selected(monkeypatch, "ascend_lab/__init__.py")
    assert "test_convenience.py" in root and "test_golden.py" not in root  # `import ascend_lab` / only submodules


def test_no_browser_test_is_selected(monkeypatch):
    assert not any(n.startswith("test_site") for n in _selected(monkeypatch, "conftest.py"))

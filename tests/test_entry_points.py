"""Issue 21 item 2: an operator from outside the repository, found through the entry point group
``ascend_lab.operators`` (``registry.discover``), gets the CLI, the convenience call, a tile map, the explorer, the
sanitizer and a trace -- the operator-generic checks of ``tests/test_every_op.py`` run on it.

The distribution is installed into a temporary folder the way ``pip install --no-deps --target DIR`` lays it out:
the package and a ``.dist-info`` with ``entry_points.txt``, written here by hand. (``pip install --no-deps
--no-build-isolation --no-index --target`` of the same sources, setuptools backend, took 21 s on this machine under
load, twice this test's budget; importlib.metadata reads both layouts alike.) The package is the ScaleShift fixture
renamed TinyAffine: op_host, op_api, a C++ kernel, an oracle.py, the shared tiling -- a user's operator folder.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
import test_every_op as generic

import ascend_lab as al
from ascend_lab.ops import registry

FIXTURES = Path(__file__).resolve().parent / "fixture_ops"
RENAME = (("tests.fixture_ops", "tiny_ops"), ("tests/fixture_ops", "tiny_ops"), ("scale_shift", "tiny_affine"),
          ("ScaleShift", "TinyAffine"))


def _renamed(text: str) -> str:
    for old, new in RENAME:
        text = text.replace(old, new)
    return text


def _install(site: Path, name: str, entry_point: str, files: dict[str, str]) -> None:
    """A distribution as ``pip install --target site`` leaves it: its files and ``<name>-0.1.dist-info``."""
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[ascend_lab.operators]\n{entry_point}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def _tiny_ops() -> dict[str, str]:
    files = {"tiny_ops/__init__.py": "", "tiny_ops/common.py": (FIXTURES / "common.py").read_text(),
             "tiny_ops/kernels.py": (FIXTURES / "kernels.py").read_text()}
    for path in (FIXTURES / "scale_shift").rglob("*"):
        if path.suffix in (".py", ".cpp"):
            rel = _renamed(str(path.relative_to(FIXTURES)))
            files[f"tiny_ops/{rel}"] = _renamed(path.read_text(encoding="utf-8"))
    return files


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path holding tiny_ops (one operator) and broken_ops (an entry point that fails to import)."""
    site = tmp_path / "site"
    _install(site, "tiny_ops", "tiny_affine = tiny_ops.tiny_affine", _tiny_ops())
    _install(site, "broken_ops", "broken = broken_ops", {"broken_ops/__init__.py": "import no_such_module\n"})
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield site
    for spec in [s for s in registry.ops() if s.key == "tiny_affine"]:
        registry.unregister(spec.key)
    for name in [m for m in sys.modules if m.split(".")[0] in ("tiny_ops", "broken_ops")]:
        del sys.modules[name]


def test_an_installed_operator_is_found_and_gets_every_tool(site, capsys):
    with pytest.warns(RuntimeWarning, match="'broken = broken_ops' of broken_ops skipped: No module named"):
        added = registry.discover()
    assert [s.key for s in added] == ["tiny_affine"] and registry.discover() == []     # found once
    spec = registry.get("TinyAffine")
    assert spec.inputs == ("x",) and spec.attrs == {"gain": 2.0, "bias": 0.5} and spec.flavours == ("experimental",)
    x = np.linspace(-3, 3, 4001, dtype=np.float16)
    run = al.call("tiny_affine_test", x, 1.5, 0.25, soc="Ascend910B4")
    assert run.status == 0 and run.graph == ["Contiguous", "TinyAffine", "ViewCopy"]
    assert np.array_equal(run.out, x * np.float16(1.5) + np.float16(0.25))
    assert registry.oracle(run.kernel_node).func.__module__ == "tiny_ops.tiny_affine.oracle"
    # the operator-generic checks: launch + trace, sanitizer, aclnn + convenience + tile map, CLI, explorer
    generic.test_direct_launch_equals_the_oracle_and_traces("tiny_affine", "experimental", site)
    generic.test_the_sanitizer_sees_an_output_too_small("tiny_affine", "experimental")
    generic.test_dispatch_and_the_convenience_call("tiny_affine", "experimental")
    generic.test_cli_tiling("tiny_affine", "experimental", capsys)
    generic.test_cli_run_is_bit_exact("tiny_affine", "experimental", capsys)
    generic.test_the_tiling_explorer_draws_it("tiny_affine", "experimental")
    registry.unregister("tiny_affine")                  # an entry point's op is found again by the next discover
    assert [s.key for s in registry.discover()] == ["tiny_affine"]

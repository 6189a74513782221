"""The guide to adding an operator (``ascend_lab/ops/README.md``) runs as written: its worked example's files are
extracted from the code blocks (``# file: PATH`` / ``// file: PATH`` on the first line), written to a temporary
folder, and its ``# run`` blocks executed; the new operator then passes the operator-generic checks of
``tests/test_every_op.py``, and its host tiling imports and runs with numpy blocked, as the live page needs.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import test_every_op as generic

from ascend_lab.ops import registry

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "ascend_lab" / "ops" / "README.md"
BLOCK = re.compile(r"^```(python|cpp)\n(.*?)^```", re.S | re.M)
FILE = re.compile(r"^(?:#|//) file: (\S+)\n")

NO_NUMPY = r"""
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "ml_dtypes"):
            raise ImportError(f"{name} is blocked")
root, site = sys.argv[1:]
sys.meta_path.insert(0, Block())
sys.path.insert(0, site)
boot = runpy.run_path(f"{root}/ascend_lab/live/live_boot.py")
boot["install"](root)
boot["install"](site, "my_ops")
from my_ops.scaled_square import op_host
print(op_host.tiling(100_000, "float16", 40, 196352).blockDim)
"""


def blocks() -> tuple[dict[str, str], list[str]]:
    """The README's files (path -> text) and its ``# run`` blocks, in order."""
    files, runs = {}, []
    for _, body in BLOCK.findall(README.read_text(encoding="utf-8")):
        m = FILE.match(body)
        if m:
            files[m.group(1)] = body
        elif body.startswith("# run\n"):
            runs.append(body)
    return files, runs


@pytest.fixture
def example(tmp_path, monkeypatch):
    files, runs = blocks()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / "my_ops" / "__init__.py").touch()
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path, runs
    for spec in [s for s in registry.ops() if s.key == "scaled_square"]:
        registry.unregister(spec.key)
    for name in [m for m in sys.modules if m.split(".")[0] == "my_ops"]:
        del sys.modules[name]


def test_the_readme_has_a_whole_operator():
    files, runs = blocks()
    assert set(files) == {f"my_ops/scaled_square/{f}" for f in ("__init__.py", "op_host.py", "oracle.py",
                                                               "op_kernel/__init__.py", "op_kernel/scaled_square.cpp")}
    assert len(runs) == 1


def test_the_worked_example_runs_and_gets_every_tool(example, capsys):
    site, runs = example
    for code in runs:
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    assert "bit-exact vs the oracle" in capsys.readouterr().out
    generic.test_direct_launch_equals_the_oracle_and_traces("scaled_square", "experimental", site)
    generic.test_the_sanitizer_sees_an_output_too_small("scaled_square", "experimental")
    generic.test_cli_tiling("scaled_square", "experimental", capsys)
    generic.test_the_tiling_explorer_draws_it("scaled_square", "experimental")
    proc = subprocess.run([sys.executable, "-c", NO_NUMPY, str(ROOT), str(site)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) == registry.get("scaled_square").kernel().tiling(100_000, "float16", 40, 196352).blockDim

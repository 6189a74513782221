"""Issue 21 item 1: an operator with one or three inputs, attributes other than alpha/beta/threshold and only an
experimental kernel (C++, through the front end), registered from outside the package, is first-class everywhere.

``tests/fixture_ops/plugin.py`` registers the two fixture operators (ScaleShift: one input, ``gain``/``bias``;
DiffScaleAdd: three inputs, ``scale``) before collection; the operator-generic tests, which read the registry at
collection, then run on them as on the built-in ones. This test runs those files that way in a subprocess and
checks every generic test ran -- and passed -- for each fixture operator.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from ascend_lab.base.platform import socs

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ("scale_shift", "diff_scale_add")
OP_TYPES = ("ScaleShift", "DiffScaleAdd")
#: The operator-generic tests: every test of test_every_op.py (one case per op and flavour), and the live tiling's
#: no-numpy check, which iterates the registry.
EVERY_OP = ROOT / "tests" / "test_every_op.py"
NO_NUMPY = "tests/test_tiling_no_numpy.py"
DISPATCH = "tests/test_dispatch.py"        # every (op, SoC, flavour) through the aclnn path, by op type


def _generic_tests() -> list[str]:
    tree = ast.parse(EVERY_OP.read_text(encoding="utf-8"))
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


def test_the_generic_tests_pick_up_the_fixture_operators():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0", "-rA",
         "-p", "tests.fixture_ops.plugin", str(EVERY_OP.relative_to(ROOT)), NO_NUMPY, DISPATCH,
         # the no-numpy check of every tiling on the fixture operators (its cases are per op), the module's others whole
         "-k", " or ".join((*FIXTURES, *OP_TYPES, "(no_numpy and not every_tiling_without_numpy)"))],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    passed = set(re.findall(r"^PASSED (\S+)", proc.stdout, re.M))
    for op in FIXTURES:
        for name in _generic_tests():
            # the aclnn tests run for ops with an aclnn API: both fixture operators have one
            assert f"tests/test_every_op.py::{name}[{op}-experimental]" in passed, (name, op)
    for op in FIXTURES:
        assert f"{NO_NUMPY}::test_every_tiling_without_numpy_equals_the_package[{op}]" in passed, op
    assert f"{NO_NUMPY}::test_default_kernel_is_what_a_stock_cann_runs" in passed
    for op_type in OP_TYPES:       # on every SoC: each of the 3 flavours asked for, the default, the custom package
        ran = [t for t in passed if t.startswith(DISPATCH) and re.search(rf"[-\[]{op_type}[-\]]", t)]
        assert len(ran) == 5 * len(socs()), ran

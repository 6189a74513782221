"""The host tiling runs without numpy (issue 13 item 3: the live tiling page runs it in pyodide, which has none).

A subprocess blocks numpy and ml_dtypes with a meta-path finder, registers the package's folders without their
``__init__`` files (``live/live_boot.py``, as the page does) and computes ``live.live_tiling.compute`` for every
registered op, kernel flavour, dtype of its op definition, SoC of the catalogue and a spread of element counts and
platform numbers; this process computes the same with the whole package (``ascend_lab.tiling.compute`` and the
kernel's ``core_ranges``) and the results must be equal, errors included (type and message).
"""

from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascend_lab  # noqa: F401  (the registry's ops and the convenience layer)
from ascend_lab import tiling
from ascend_lab.acl.types import DTYPE_ITEMSIZE, aclDataType
from ascend_lab.base.platform import socs
from ascend_lab.dtypes import to_numpy
from ascend_lab.explore import tile_maps
from ascend_lab.live import live_tiling
from ascend_lab.live.tile_map import tile_map_parts
from ascend_lab.opdev.tiling_data import float32_text, to_float32
from ascend_lab.ops import registry

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (0, 1, 100_003, 3_000_000_017)
PLATFORMS = ((None, None), (7, 65536))     # (core_num, ub_size); None: the SoC's own

CHILD = r"""
import importlib.abc, json, runpy, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "ml_dtypes"):
            raise ImportError(f"{name} is blocked: the host tiling must import without it")
        return None

sys.meta_path.insert(0, Block())
root, facts_path, cases_path = sys.argv[1:]
boot = runpy.run_path(f"{root}/ascend_lab/live/live_boot.py")
boot["install"](root)
boot["install"](root, "tests")         # operators registered from tests/ (tests/fixture_ops), when there are any
from ascend_lab.live import live_tiling

facts = json.load(open(facts_path))
out = []
for op, kernel, dtype, soc, n, core_num, ub_size in json.load(open(cases_path)):
    try:
        r = live_tiling.compute(facts, op, n, dtype, soc, core_num, ub_size, kernel, tiles=False)
        out.append({"struct": r["struct"], "fields": r["fields"], "rows": r["rows"], "kernel": r["kernel"]})
    except Exception as exc:
        out.append({"error": [type(exc).__name__, str(exc)]})
print(json.dumps({"results": out, "numpy": [m for m in sys.modules if m.split(".")[0] in ("numpy", "ml_dtypes")],
                  "modules": sorted(m for m in sys.modules if m.startswith("ascend_lab."))}))
"""


def _expected(op: str, kernel: str, dtype: str, soc: str, n: int, core_num: int | None,
              ub_size: int | None) -> dict:
    try:
        td = tiling.compute(op, n, dtype, core_num, ub_size, soc=soc, kernel=kernel)
        rows = registry.get(op).kernel(kernel).core_ranges(td, dtype, n, tiles=False)
    except Exception as exc:
        return {"error": [type(exc).__name__, str(exc)]}
    fields = {k: (v.hex() if isinstance(v, bytes) else v) for k, v in td.as_dict().items()}
    return {"struct": type(td).__name__, "fields": fields, "rows": rows, "kernel": kernel}


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    f = live_tiling.build_facts()
    path = tmp_path_factory.mktemp("facts") / "facts.json"
    path.write_text(json.dumps(f))
    return f, path


# One case per registered op (its own child process), so that tests/test_fixture_ops.py can run this check on the
# fixture operators alone (-k) rather than on every operator a second time (about 4 CPU s of its 12).
@pytest.mark.parametrize("op", [spec.key for spec in registry.ops()])
def test_every_tiling_without_numpy_equals_the_package(op: str, facts: tuple[dict, Path], tmp_path: Path) -> None:
    f, facts_path = facts
    spec = registry.get(op)
    cases = []
    for flavour in spec.kernels:
        for dtype in [d.short for d in spec.dtypes] + ["int16"]:       # int16: no op here takes it
            for soc in socs():
                for n in COUNTS:
                    for core_num, ub_size in PLATFORMS:
                        cases.append([spec.key, flavour, dtype, soc, n, core_num, ub_size])
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(facts_path), str(tmp_path / "cases.json")],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    child = json.loads(proc.stdout)
    assert child["numpy"] == []
    assert "ascend_lab.live.live_tiling" in child["modules"] and "ascend_lab.ascendc.core" not in child["modules"]
    ok = 0
    for case, got in zip(cases, child["results"], strict=True):
        want = json.loads(json.dumps(_expected(*case)))          # tuples -> lists, as the child's JSON has them
        assert got == want, case
        ok += "error" not in got
    assert ok > len(cases) // 3, "most cases should tile, not fail"
    kinds = {k["kind"] for op in f["ops"] for k in op["kernels"]}
    assert kinds == {"host", "tbe", "template"}


def test_default_kernel_is_what_a_stock_cann_runs(facts: tuple[dict, Path]) -> None:
    f, _ = facts
    from ascend_lab.base.platform import get_soc
    from ascend_lab.ops.common.l0_kernel import dispatch
    for spec in registry.ops():
        for soc in socs():
            kernel, _ = dispatch(spec, get_soc(soc))
            assert live_tiling.default_kernel(f, spec.key, soc) == kernel.flavour
            r = live_tiling.compute(f, spec.key, 4096, spec.dtypes[0].short, soc)
            # (an op without the stock flavour runs its first kernel, registered for this SoC or not)
            assert r["kernel"] == kernel.flavour and r["registered"] == kernel.registered_for(get_soc(soc))


def test_the_page_and_the_tile_map_share_one_assignment(facts: tuple[dict, Path]) -> None:
    """The segments the page draws are the matplotlib tile map's (explore.tile_maps.tile_map -> live.tile_map)."""
    f, _ = facts
    for op, dtype, soc in [("hard_sigmoid_grad", "float16", "Ascend910B4"),
                           ("threshold_grad_v2_d", "int8", "Ascend950PR"), ("relu_grad", "float32", "Ascend950PR")]:
        r = live_tiling.compute(f, op, 250_001, dtype, soc, 5, 16384)
        td = tiling.compute(op, 250_001, dtype, 5, 16384, soc=soc, kernel=r["kernel"])
        tm = tile_maps.tile_map(td, dtype, 250_001)
        assert [[s.core, s.tile, s.start, s.end, s.tail] for s in tm.segments] == r["segments"]
        assert tm.title == r["title"] and tm.labels == r["labels"]
        assert len({s[0] for s in r["segments"]}) == td.blockDim
    rows = [{"core": 0, "kind": "big", "tile_num": 1, "padded_end": 4, "tiles": [(0, 0, 4)]}]
    td = tiling.compute("hard_sigmoid_grad", 4, "float16", 1, 8192)
    assert tile_map_parts(td, "float16", 4, rows, "ubFactor", "HardSigmoidGrad")["segments"][0].end == 4


def test_float32_helpers_match_numpy() -> None:
    rng = random.Random(13)
    values = [0.0, -0.0, 1e-4, 1e6, 3.4028235e38, 3.5e38, -1e39, 1e-46, math.inf, -math.inf, 0.16666666, 1 / 6]
    values += [rng.uniform(-1, 1) * 10 ** rng.uniform(-46, 40) for _ in range(3000)]
    values += [struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0] for _ in range(3000)]
    with np.errstate(over="ignore"):
        for v in values:
            assert struct.pack("<d", to_float32(v)) == struct.pack("<d", float(np.float32(v))) or math.isnan(v), v
            assert float32_text(v) == str(np.float32(v)), v
    assert float32_text(np.float16(0.1)) == str(np.float32(np.float16(0.1)))


def test_dtype_sizes_match_numpy() -> None:
    for dt in aclDataType:
        try:
            want = to_numpy(dt).itemsize
        except ValueError:
            assert dt not in DTYPE_ITEMSIZE
        else:
            assert DTYPE_ITEMSIZE[dt] == want

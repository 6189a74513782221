"""``ascend_lab.sweep`` (issue 25, item 2): a grid of tiling or kernel runs on any concurrent.futures Executor.

The rows of a sweep equal ``run_case`` of each case made one after another, whatever the executor (the default
process pool, a thread pool, one worker); a tiling sweep of 1,000+ cases is quick; kernel rows carry the launch's
cycles and UB bytes, as ``standalone.run_kernel`` reports them; bad arguments are ValueError/TypeError naming them.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import standalone
from ascend_lab.ops import registry
from ascend_lab.ops.common.l0_kernel import dispatch
from ascend_lab.sweeps import grid, run_case

TILING = dict(dtypes=["float32", "float16", "int8", "bfloat16"], sizes=[1, 7, 100, 4097, 65536, 10**6, 10**9, 2**40],
              attrs={"threshold": [0.0, 1.0]})


def test_tiling_sweep_of_a_thousand_cases_on_a_process_pool():
    cases = grid("tiling", **TILING)
    assert len(cases) >= 1000
    t0 = time.perf_counter()
    rows = al.sweep("tiling", progress=False, frame=False, **TILING)
    seconds = time.perf_counter() - t0
    print(f"\n{len(cases)} tiling cases in {seconds:.2f} s")
    assert seconds < 10                              # the target is 2 s; a busy shared machine gets slack
    assert rows == [run_case(c) for c in cases]
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok and all(r["blockDim"] >= 1 and "TilingData" in r["tiling"] for r in ok)
    refused = [r for r in rows if r["status"] != "ok"]
    assert refused and all(r["status"].startswith(("ValueError: ", "TypeError: ", "TilingError: ")) for r in refused)
    # an attribute goes only to the ops that have it: HardSigmoidGrad rows carry no threshold
    assert all("threshold" not in r or r["op"] != "hard_sigmoid_grad" for r in rows)
    # kernel None = what CANN runs: the stock flavour where the op has one (main on 950, TBE on A2), else its own
    for soc_name, stock in (("Ascend950PR", "main"), ("Ascend910B4", "tbe")):
        on_soc = [r for r in rows if r["soc"] == soc_name]
        with_stock = {r["kernel"] for r in on_soc if stock in registry.get(r["op"]).kernels}
        assert with_stock == {stock}
        assert all(r["kernel"] == dispatch(registry.get(r["op"]), al.platform.get_soc(soc_name))[0].flavour
                   for r in on_soc)


def test_any_executor_gives_the_same_rows():
    kw = dict(ops=["relu_grad", "hard_sigmoid_grad"], dtypes=["float16"], sizes=[10, 10**5], socs=None)
    want = al.sweep("tiling", progress=False, frame=False, **kw)
    with ThreadPoolExecutor(3) as pool:
        assert al.sweep("tiling", executor=pool, progress=False, frame=False, chunksize=2, **kw) == want
    assert al.sweep("tiling", workers=1, progress=False, frame=False, **kw) == want


def test_kernel_sweep_rows_match_a_direct_launch():
    rows = al.sweep("kernel", ops=["threshold_grad_v2_d"], socs=["Ascend910B4", "Ascend950PR"], sizes=[2048],
                    buffer_nums=[1, 2], attrs={"threshold": [0.5]}, progress=False, frame=False)
    assert [(r["soc"], r["buffer_num"]) for r in rows] == [("Ascend910B4", 1), ("Ascend910B4", 2),
                                                           ("Ascend950PR", 1), ("Ascend950PR", 2)]
    for r in rows:
        assert r["status"] == "ok", r
        rng = np.random.default_rng(2048)
        g, x = rng.uniform(-4, 4, 2048).astype(np.float32), rng.uniform(-4, 4, 2048).astype(np.float32)
        run, _ = standalone.run_kernel("threshold_grad_v2_d", g, x, soc=r["soc"], buffer_num=r["buffer_num"],
                                       record=False, kernel=r["kernel"], threshold=0.5)
        assert r["cycles"] == run.cycles and r["ub_bytes"] > 0 and r["blockDim"] == run.tiling.blockDim


def test_progress_bar_and_table(capsys):
    rows = al.sweep("tiling", ops=["relu_grad"], socs=["Ascend910B4"], sizes=[10, 20], progress=True,
                    executor=ThreadPoolExecutor(1))
    err = capsys.readouterr().err
    assert "sweep" in err and "2/2" in err
    try:
        import pandas as pd
    except ImportError:
        assert isinstance(rows, list) and len(rows) == 2
        with pytest.raises(ValueError, match="pandas"):
            al.sweep("tiling", ops=["relu_grad"], socs=["Ascend910B4"], progress=False, frame=True)
    else:
        assert isinstance(rows, pd.DataFrame) and len(rows) == 2


@pytest.mark.parametrize("kw, error, match", [
    ({"kind": "bogus"}, ValueError, "kind"),
    ({"executor": 3}, TypeError, "executor"),
    ({"workers": 0}, ValueError, "workers"),
    ({"chunksize": -1}, ValueError, "chunksize"),
    ({"sizes": []}, ValueError, "sizes"),
    ({"kind": "kernel", "attrs": {"alpha": [0.2]}}, ValueError, "threshold attribute only"),
    ({"ops": ["softmax"]}, ValueError, "softmax"),
])
def test_bad_arguments_name_themselves(kw, error, match):
    kind = kw.pop("kind", "tiling")
    with pytest.raises(error, match=match):
        al.sweep(kind, progress=False, **kw)

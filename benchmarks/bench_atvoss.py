"""Speed of the atvoss template kernels (the ``main`` flavour on Ascend950) against numpy, tracing off.

ThresholdGradV2D and ReluGrad on 2**24 float32 elements (``--quick``: 2**20) on Ascend950PR:

* **numpy baseline**: the kernel's formula as plain float32 numpy, measured in the same process
  (``np.where(x <= thr, 0, g)``; ReluGrad ``g * np.where(x <= 0, 0, 1)``);
* **kernel launch**: the template's ``BroadcastSch`` on every simulated core (tiling and device memory set
  up outside the timer), as the L0 node runs it in phase 2;
* **standalone call**: ``ascend_lab.standalone.run_kernel(op, g, x, soc="Ascend950PR", kernel="main")``, which also
  tiles, puts the inputs in device memory (lent, not copied: ``DeviceAllocation.lend``) and allocates the output
  (a pooled buffer, zeroed before the kernel's first write).

numpy runs before each of them, in this process, ``k`` interleaved rounds after an untimed warm-up round
(:mod:`benchmarks.measure`); each row gives medians with their spread. Target: <= 2x numpy (tracing off),
reported as PASS or MISSED (never an exit status). Rows are written to ``results/atvoss.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ascend_lab.ascendc.launcher import launch
from ascend_lab.atvoss import sch_mode_of
from ascend_lab.base.platform import get_soc
from ascend_lab.ops import registry
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.standalone import run_kernel

from .measure import default_k, interleaved, load_text, ratio_row

SOC = "Ascend950PR"
THRESHOLD = np.float32(0.5)
TARGET = 2.0
RESULTS = Path(__file__).resolve().parent / "results" / "atvoss.json"


def formulas() -> dict[str, Any]:
    """The numpy baselines, float32 like the kernels."""
    zero, one = np.float32(0), np.float32(1)
    return {
        "threshold_grad_v2_d": lambda g, x: np.where(x <= THRESHOLD, zero, g),
        "relu_grad": lambda g, x: g * np.where(x <= zero, zero, one),
    }


def launcher(op: str, g: np.ndarray, x: np.ndarray) -> tuple[Any, Any]:
    """A zero-argument function running the kernel launch alone, and the output buffer it writes."""
    spec = registry.get(op)
    k = spec.kernel("main")
    soc = get_soc(SOC)
    attrs = {"threshold": float(THRESHOLD)} if "threshold" in spec.attrs else {}
    td = k.tiling(g.size, g.dtype, soc.vector_core_num, soc.ub_size, **attrs)
    args = [gm_from_array(g, k.args[0]), gm_from_array(x, k.args[1]), gm_from_array(np.zeros_like(g), k.args[2])]
    template = k.template(td, g.dtype, k.buffer_num)
    raw = td.to_bytes()

    def run() -> Any:
        return launch(k.entry, td.blockDim, args, raw, soc, outputs=(2,), record=False,
                      kernel_name=spec.op_type, tiling_data=td, **template)

    return run, args[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_atvoss", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2**20 elements instead of 2**24")
    p.add_argument("--k", type=int, default=None, help="repetitions (median reported)")
    args, _ = p.parse_known_args(argv)   # run from ``python -m benchmarks``, which has options of its own
    n = 2 ** (20 if args.quick else 24)
    k = args.k or default_k()
    rng = np.random.default_rng(0)
    g = rng.standard_normal(n, dtype=np.float32)
    x = rng.standard_normal(n, dtype=np.float32)
    print(f"atvoss template (main flavour) vs numpy: {n} x float32 on {SOC}, tracing off, k={k} interleaved "
          f"rounds; {load_text()}")
    status = 0
    rows: dict[str, Any] = {}
    for op, formula in formulas().items():
        run_launch, out_arg = launcher(op, g, x)
        m = interleaved({"launch": run_launch,
                         "standalone": lambda op=op: run_kernel(op, g, x, threshold=float(THRESHOLD), soc=SOC,
                                                                kernel="main", record=False)},
                        k, baseline=lambda formula=formula: formula(g, x))
        want, kr, (_, out) = m.last["numpy"], m.last["launch"], m.last["standalone"]
        got = out_arg.ptr.allocation.buffer[:g.nbytes].view(np.float32)
        exact = bool(np.array_equal(got.view(np.uint32), want.view(np.uint32))
                     and np.array_equal(out.view(np.uint32), want.view(np.uint32)))
        base = m.series["numpy"]
        print(f"\n{registry.get(op).op_type} (schMode {sch_mode_of(kr.tiling.tilingKey)}, "
              f"blockDim {kr.block_dim}; estimated {kr.cycles:.0f} cycles = {kr.microseconds:.1f} us)")
        print(f"  {'numpy formula (baseline: this process)':<40} {base.spread()}")
        rows[op] = {"numpy": base.as_dict(), "bit_identical_to_numpy": exact, "n": n, "soc": SOC}
        for key, label in (("launch", "atvoss kernel launch, tracing off"),
                           ("standalone", "standalone run_kernel, tracing off")):
            text, entry = ratio_row(label, m.series[key], base, TARGET, m.neighbour[key])
            rows[op][key] = entry
            print(text)
        print(f"  output bit-identical to the numpy formula: {'yes' if exact else 'no'}")
        if not exact:
            status = 1
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"benchmark": "atvoss template vs numpy", "k": k, "rows": rows}, indent=2) + "\n",
                       encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())

"""Speed of the atvoss template kernels (the ``main`` flavour on Ascend950) against numpy, tracing off.

ThresholdGradV2D and ReluGrad on 2**24 float32 elements (``--quick``: 2**20) on Ascend950PR:

* **numpy baseline**: the kernel's formula as plain float32 numpy, measured in the same process
  (``np.where(x <= thr, 0, g)``; ReluGrad ``g * np.where(x <= 0, 0, 1)``);
* **kernel launch**: the template's ``BroadcastSch`` on every simulated core (tiling and device memory set
  up outside the timer), as the L0 node runs it in phase 2;
* **standalone call**: ``ops.standalone.run_kernel(op, g, x, soc="Ascend950PR", kernel="main")``, which also
  copies the inputs into device memory and the output back.

Median of ``k`` round-robin repetitions after an untimed warm-up. Target: <= 2x numpy (tracing off).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import numpy as np

from ascend_lab.ascendc.launcher import launch
from ascend_lab.atvoss import sch_mode_of
from ascend_lab.base.platform import get_soc
from ascend_lab.ops import registry
from ascend_lab.ops.kernel_args import gm_from_array
from ascend_lab.ops.standalone import run_kernel
from benchmarks.bench_simulator import _default_k, _ratio_row, timed

SOC = "Ascend950PR"
THRESHOLD = np.float32(0.5)
TARGET = 2.0


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
    k = args.k or _default_k()
    rng = np.random.default_rng(0)
    g = rng.standard_normal(n, dtype=np.float32)
    x = rng.standard_normal(n, dtype=np.float32)
    print(f"atvoss template (main flavour) vs numpy: {n} x float32 on {SOC}, tracing off, median of k={k}")
    status = 0
    for op, formula in formulas().items():
        run_launch, out_arg = launcher(op, g, x)
        formula(g, x)
        run_launch()                                           # warm-up
        times: dict[str, list[float]] = {"numpy": [], "launch": [], "standalone": []}
        for _ in range(k):
            dt, want = timed(lambda formula=formula: formula(g, x))
            times["numpy"].append(dt)
            dt, kr = timed(run_launch)
            times["launch"].append(dt)
            dt, (_, out) = timed(lambda op=op: run_kernel(op, g, x, threshold=float(THRESHOLD), soc=SOC,
                                                          kernel="main", record=False))
            times["standalone"].append(dt)
        got = out_arg.ptr.allocation.buffer[:g.nbytes].view(np.float32)
        exact = np.array_equal(got.view(np.uint32), want.view(np.uint32)) and \
            np.array_equal(out.view(np.uint32), want.view(np.uint32))
        base = statistics.median(times["numpy"])
        print(f"\n{registry.get(op).op_type} (schMode {sch_mode_of(kr.tiling.tilingKey)}, "
              f"blockDim {kr.block_dim}; estimated {kr.cycles:.0f} cycles = {kr.microseconds:.1f} us)")
        print(f"  {'numpy formula, in this process':<40} {base:9.4f} s")
        for key, label in (("launch", "atvoss kernel launch, tracing off"),
                           ("standalone", "standalone run_kernel, tracing off")):
            text, entry = _ratio_row(label, statistics.median(times[key]), base, TARGET)
            print(text)
        print(f"  output bit-identical to the numpy formula: {'yes' if exact else 'no'}")
        if not exact:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

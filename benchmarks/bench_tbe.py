"""The TBE flavour's speed row: the legacy TBE HardSigmoidGrad on the TBE model vs numpy, same process.

HardSigmoidGrad's ``tbe`` kernel (``ascend_lab.ops.hard_sigmoid_grad.op_kernel.tbe``: the compute description
lowered by ``ascend_lab.tbe``) on 2**24 float32 elements (``--quick``: 2**20) on Ascend910B4, tracing off:

* **numpy baseline**: the TBE formula as plain float32 numpy, ``np.where(np.abs(x) < 3, g * alpha, 0)``;
* **kernel launch**: ``ascendc.launch`` of the TBE entry (tiling, device buffers and inputs prepared outside the
  timer, as the aclnn path's phase 2 would find them).

numpy and the launch alternate (numpy, launch, numpy, launch, ...) in this process, ``k`` rounds after one
untimed warm-up (:mod:`benchmarks.measure`); the row gives each median with its spread. Target: <= 2x numpy,
reported as PASS or MISSED (never an exit status). The row is written to ``results/tbe.json``; the simulator
benchmark's own rows are untouched.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ascend_lab.ascendc.launcher import launch
from ascend_lab.base.platform import get_soc
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import tbe as hsg_tbe

from .bench_simulator import FULL_LOG2, QUICK_LOG2, TARGET_TRACE_OFF, inputs
from .measure import default_k, interleaved, load_text, ratio_row

RESULTS = Path(__file__).resolve().parent / "results" / "tbe.json"
ALPHA = np.float32(0.16666666)


def numpy_formula(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The baseline: the TBE kernel's arithmetic (``vcmpsel(vabs(x), 3, 'lt', vmuls(g, alpha), 0)``) in numpy."""
    return np.where(np.abs(x) < 3, g * ALPHA, np.float32(0))


def tbe_row(n: int, soc: str = "Ascend910B4", k: int | None = None) -> tuple[str, dict[str, Any]]:
    """Measure the row; returns (printed line, JSON entry)."""
    g, x = inputs(n)
    info = get_soc(soc)
    td = hsg_tbe.tiling(n, "float32", info.vector_core_num, info.core_mem_size_ub, alpha=float(ALPHA))
    args = [gm_from_array(g, "gradOutput"), gm_from_array(x, "self"), gm_from_array(None, "gradInput", nbytes=g.nbytes)]
    template = hsg_tbe.template_args(td, "float32")

    def run() -> Any:
        return launch(hsg_tbe.hard_sigmoid_grad, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=False,
                      kernel_name="HardSigmoidGrad", tiling_data=td, **template)

    m = interleaved({"launch": run}, k or default_k(), baseline=lambda: numpy_formula(g, x))
    ref = m.last["numpy"]
    trace = m.last["launch"].trace
    out = args[2].ptr.allocation.buffer[:g.nbytes].view(np.float32)
    exact = bool(np.array_equal(out.view(np.uint32), ref.view(np.uint32)))
    base = m.series["numpy"]
    text, entry = ratio_row("TBE HardSigmoidGrad kernel, tracing off", m.series["launch"], base,
                            TARGET_TRACE_OFF, m.neighbour["launch"])
    entry.update({"numpy": base.as_dict(), "numpy_median_s": base.median, "n": n, "soc": soc,
                  "tiling": td.as_dict(), "cycles": trace.cycles, "bit_identical_to_numpy": exact})
    return text, entry


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_tbe", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=f"2**{QUICK_LOG2} elements instead of 2**{FULL_LOG2}")
    p.add_argument("--k", type=int, default=None, help="interleaved rounds (default $ASCEND_LAB_BENCH_K or 5)")
    p.add_argument("--soc", default="Ascend910B4")
    p.add_argument("--output", type=Path, default=RESULTS)
    args, _ = p.parse_known_args(argv)
    n = 2 ** (QUICK_LOG2 if args.quick else FULL_LOG2)
    k = args.k or default_k()
    print(f"TBE flavour: HardSigmoidGrad (tbe), {n} x float32 on {args.soc}, k={k} interleaved rounds; {load_text()}")
    text, entry = tbe_row(n, args.soc, k)
    print(f"  {'numpy formula (baseline: this process)':<40} "
          f"{entry['numpy_median_s']:.4f} s [min-max {entry['numpy']['min_s']:.4f}-{entry['numpy']['max_s']:.4f}]")
    print(text)
    print(f"  bit-identical to the numpy formula: {'yes' if entry['bit_identical_to_numpy'] else 'no'}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"benchmark": "TBE flavour vs numpy", "row": entry}, indent=2) + "\n",
                           encoding="utf-8")
    return 0 if entry["bit_identical_to_numpy"] else 1


if __name__ == "__main__":
    sys.exit(main())

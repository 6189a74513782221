"""How fast and how lean is the simulator, compared with numpy doing the same arithmetic?

HardsigmoidBackward on 2**24 float32 elements (``--quick``: 2**20) through the experimental AscendC kernel (the
one the book teaches) on Ascend950PR, where its op definition registers it (``kernel="experimental"``, i.e.
with the ops-nn experimental custom package installed):

* **numpy baseline**: the kernel's formula written as plain numpy in float32
  (``t = x*alpha; t += beta; r = g*alpha; out = np.where((t > 0) & (t < 1), r, 0)``), evaluated in this
  process on the same inputs (generated, hence touched, before any timing), interleaved with the simulator
  runs by :mod:`benchmarks.measure`: numpy, whole call, numpy, kernel phase, numpy, ... (each timed numpy run
  follows one untimed numpy call, so it does not pay for memory the simulator run just churned: see
  ``measure.interleaved``). A fresh-process numpy median is printed beside it for context; it is never the
  baseline.
* **whole call**: ``al.hardsigmoid_backward(g, x)`` (upload, phase 1, phase 2, copy back), tracing off and on.
* **kernel phase**: only ``aclnnHardsigmoidBackward(workspace, size, executor, stream)`` + stream sync, i.e.
  the executor running the L0 graph (phase 2); device tensors and phase 1 are set up outside the timer.
* **peak memory**: ``tracemalloc`` peak (numpy reports its buffers to it) during one whole call, tracing off,
  as a multiple of the two inputs' bytes.

Each row gives the median of ``k`` interleaved rounds (``--k``, or the ``ASCEND_LAB_BENCH_K`` environment
variable; default 5) with its spread (min-max and inter-quartile range); the ratio is median(sim) /
median(numpy), with the range of the per-round ratios beside it. Targets: tracing off <= 2x numpy, tracing on
<= 4x, peak memory <= 3x the inputs; each row says PASS or MISSED. The benchmark reports and never gates: a
missed target does not change the exit status (only output bits that differ from numpy's exit 1).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

import ascend_lab as al
from ascend_lab import aclnn
from ascend_lab.acl import runtime as rt
from ascend_lab.ascendc import options
from ascend_lab.base import platform as soc_platform
from ascend_lab.run import _session, _Tensors

from .measure import DEFAULT_K, K_ENV, SelfTimed, fresh_process_median, interleaved, load_text, ratio_row, verdict
from .measure import default_k as _default_k

RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"
FULL_LOG2, QUICK_LOG2 = 24, 20
ALPHA = np.float32(0.16666666)   # what the experimental aclnnHardsigmoidBackward passes to its kernel (cann_facts §1.3)
KERNEL = "experimental"          # the kernel flavour measured
BETA = np.float32(0.5)
TARGET_TRACE_OFF, TARGET_TRACE_ON, TARGET_MEMORY = 2.0, 4.0, 3.0


def numpy_formula(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The baseline: the kernel's arithmetic as plain float32 numpy."""
    t = x * ALPHA
    t += BETA
    r = g * ALPHA
    return np.where((t > 0) & (t < 1), r, 0)


def inputs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n, dtype=np.float32)
    x = rng.standard_normal(n, dtype=np.float32) * np.float32(4.0)   # about half inside (-3, 3)
    return g, x


_FRESH_NUMPY = """
import statistics, time
from benchmarks.bench_simulator import inputs, numpy_formula
g, x = inputs({n})
numpy_formula(g, x)
times = []
for _ in range({{k}}):
    t0 = time.perf_counter(); numpy_formula(g, x); times.append(time.perf_counter() - t0)
print(statistics.median(times))
"""


def numpy_in_fresh_process(n: int, k: int) -> float:
    """Median of the numpy formula in a fresh interpreter, printed beside the baseline for context only."""
    return fresh_process_median(_FRESH_NUMPY.format(n=n), k)


def run_whole(g: np.ndarray, x: np.ndarray, soc: str, trace: bool) -> Any:
    """One ``al.hardsigmoid_backward`` call (the measurement times it whole)."""
    run = al.hardsigmoid_backward(g, x, soc=soc, trace=trace, kernel=KERNEL)
    if run.status != 0:
        raise RuntimeError(f"aclnnHardsigmoidBackward failed: {run.explain()}")
    return run


def run_kernel_phase(g: np.ndarray, x: np.ndarray, soc: str, trace: bool) -> SelfTimed:
    """Time phase 2 alone: ``aclnnHardsigmoidBackward`` + ``aclrtSynchronizeStream`` (the executor run).

    Set up as ``ascend_lab.run._invoke`` does it (device tensors, phase 1, workspace, stream), all outside
    the timer; returns the seconds of phase 2 and the output copied back.
    """
    with soc_platform.soc(soc), _session():
        held = _Tensors()
        stream = None
        try:
            t_g = held.upload(g, "gradOutput")
            t_x = held.upload(x, "self")
            t_out = held.upload(np.zeros_like(x), "out")
            with rt.custom_package(KERNEL):     # the experimental kernel comes with its custom package
                status, ws_size, executor = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(t_g, t_x, t_out)
            if status:
                raise RuntimeError(f"phase 1 failed: {aclnn.describe(status)}")
            ws = None
            if ws_size:
                ret, ws = rt.aclrtMalloc(ws_size, rt.ACL_MEM_MALLOC_HUGE_FIRST)
                if ret:
                    raise RuntimeError(f"aclrtMalloc({ws_size}) failed with {ret}")
                held.ptrs.append(ws)
            ret, stream = rt.aclrtCreateStream()
            if ret:
                raise RuntimeError(f"aclrtCreateStream failed with {ret}")
            with options(trace=trace):
                gc.collect()
                c0 = time.process_time()
                t0 = time.perf_counter()
                status = aclnn.aclnnHardsigmoidBackward(ws, ws_size, executor, stream)
                rt.aclrtSynchronizeStream(stream)
                dt = time.perf_counter() - t0
                cpu = time.process_time() - c0
            if status:
                raise RuntimeError(f"phase 2 failed: {aclnn.describe(status)}")
            del executor
            return SelfTimed(dt, t_out.numpy().copy(), cpu)
        finally:
            if stream is not None:
                rt.aclrtDestroyStream(stream)
            held.release()


def peak_memory(g: np.ndarray, x: np.ndarray, soc: str) -> int:
    """tracemalloc peak (bytes) during one whole call, tracing off; the inputs exist before tracing starts."""
    gc.collect()
    from ascend_lab.acl.runtime import trim_pool
    trim_pool()   # pooled device buffers would otherwise be allocated before tracing starts
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        run = al.hardsigmoid_backward(g, x, soc=soc, trace=False, kernel=KERNEL)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if run.status != 0:
        raise RuntimeError(f"aclnnHardsigmoidBackward failed: {run.explain()}")
    return peak


def machine_info() -> dict[str, Any]:
    import ml_dtypes
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "ascend_lab": al.__version__,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            info["cpu_model"] = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), None)
    except OSError:
        info["cpu_model"] = platform.processor() or None
    return info


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=f"2**{QUICK_LOG2} elements instead of 2**{FULL_LOG2}")
    p.add_argument("--n", type=_positive, default=None, help="element count (overrides --quick)")
    p.add_argument("--k", type=_positive, default=None,
                   help=f"interleaved rounds per measurement, median and spread reported (default ${K_ENV} or "
                   f"{DEFAULT_K})")
    p.add_argument("--soc", default="Ascend950PR", help="SoC to simulate (default Ascend950PR, where the "
                   "experimental kernel is registered)")
    p.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results file (default {RESULTS})")
    args = p.parse_args(argv)
    if args.k is None:
        args.k = _default_k()
    try:
        args.soc = soc_platform.get_soc(args.soc).name
    except ValueError as exc:
        p.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    n = args.n if args.n is not None else 2 ** (QUICK_LOG2 if args.quick else FULL_LOG2)
    k, soc = args.k, args.soc
    input_bytes = 2 * n * 4
    machine = machine_info()
    load_before = load_text()
    print(f"ascend_lab simulator benchmark: HardsigmoidBackward, {n} x float32 on {soc}, k={k} interleaved rounds")
    print(f"machine: Python {machine['python']}, numpy {machine['numpy']}, {machine['cpu_count']} CPUs"
          + (f" ({machine['cpu_model']})" if machine.get("cpu_model") else "") + f"; {load_before}")

    g, x = inputs(n)     # generated, so every page of the inputs is touched before anything is timed
    candidates = {
        "whole_call_trace_off": lambda: run_whole(g, x, soc, False),
        "kernel_phase_trace_off": lambda: run_kernel_phase(g, x, soc, False),
        "whole_call_trace_on": lambda: run_whole(g, x, soc, True),
        "kernel_phase_trace_on": lambda: run_kernel_phase(g, x, soc, True),
    }
    # numpy, whole off, numpy, kernel off, numpy, whole on, numpy, kernel on; k rounds after one warm-up round
    m = interleaved(candidates, k, baseline=lambda: numpy_formula(g, x))
    base = m.series["numpy"]
    np_out = m.last["numpy"]
    run_off = m.last["whole_call_trace_off"]
    kernel_out = m.last["kernel_phase_trace_off"]
    run_on = m.last["whole_call_trace_on"]
    events = len(run_on.trace.events) if run_on.trace is not None else 0
    del run_on
    m.last.clear()       # the traced run's events would otherwise count in the peak-memory measurement
    assert np_out.dtype == np.float32, np_out.dtype
    base_fresh = numpy_in_fresh_process(n, k)
    peak = peak_memory(g, x, soc)

    exact = _bits_equal(run_off.out, np_out) and _bits_equal(kernel_out, np_out)
    trace = run_off.kernel_runs[0].trace   # cycles are estimated whether or not events are recorded
    labels = {
        "whole_call_trace_off": ("simulator, whole call, tracing off", TARGET_TRACE_OFF),
        "kernel_phase_trace_off": ("simulator, kernel phase, tracing off", TARGET_TRACE_OFF),
        "whole_call_trace_on": ("simulator, whole call, tracing on", TARGET_TRACE_ON),
        "kernel_phase_trace_on": ("simulator, kernel phase, tracing on", TARGET_TRACE_ON),
    }
    print()
    print(f"  {'measurement':<40} median [spread]")
    print(f"  {'numpy formula (baseline: this process)':<40} {base.spread()}")
    print(f"  {'numpy formula, fresh process (context)':<40} {base_fresh:.4f} s   (not the baseline)")
    results: dict[str, Any] = {}
    for key, (label, target) in labels.items():
        text, entry = ratio_row(label, m.series[key], base, target, m.neighbour[key])
        results[key] = entry
        print(text)
    mem_ratio = peak / input_bytes
    mem_met = mem_ratio <= TARGET_MEMORY
    print(f"  {'peak memory, whole call, tracing off':<40} {peak / 2**20:9.1f} MiB = {mem_ratio:.4f}x the inputs "
          f"({input_bytes / 2**20:.0f} MiB)   target <= {TARGET_MEMORY:g}x: {verdict(mem_met)}")
    print()
    print(f"estimated kernel time on {soc}: {trace.cycles:.0f} cycles = {trace.microseconds:.1f} us "
          f"(blockDim {trace.block_dim}); tracing on recorded {events} events")
    print(f"simulator output bit-identical to the numpy formula: {'yes' if exact else 'no'}")
    load_after = load_text()
    print(f"{load_after} after the run")

    report = {
        "benchmark": "HardsigmoidBackward simulator vs numpy",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {"n": n, "dtype": "float32", "soc": soc, "k": k, "quick": args.n is None and args.quick},
        "machine": machine,
        "load": {"before": load_before, "after": load_after},
        "numpy_baseline": {**base.as_dict(), "where": "this process, interleaved with the simulator runs",
                           "fresh_process_median_s": base_fresh},
        "method": "k interleaved rounds (numpy before every simulator run, each timed numpy run after one untimed "
                  "numpy call) after one untimed warm-up round; ratio = median(sim) / median(numpy in this process)",
        "simulator": results,
        "memory": {"peak_bytes": peak, "input_bytes": input_bytes, "ratio_vs_inputs": mem_ratio,
                   "target_ratio": TARGET_MEMORY, "met": mem_met, "verdict": verdict(mem_met)},
        "kernel_estimate": {"cycles": trace.cycles, "microseconds": trace.microseconds,
                            "block_dim": trace.block_dim, "trace_events_when_on": events},
        "bit_identical_to_numpy": exact,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"results written to {args.output}")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())

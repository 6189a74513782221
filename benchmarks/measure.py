"""The one way every benchmark here measures: numpy and the simulator interleaved in this process.

Why interleaved: this machine is shared, and its load changes from second to second. Running all numpy
repetitions first and all simulator repetitions after would let a busy minute land on one side only; running
``numpy, sim, numpy, sim, ...`` makes the noise hit both alike. Why in the same process: the simulator's own
allocations (its device-memory pool, large temporaries) shape how fast numpy's temporaries fault in; a numpy
figure from a quiet fresh interpreter measures a different program. A fresh-process figure may be printed
beside the baseline for context (:func:`fresh_process_median`), but a ratio always divides by the in-process,
interleaved numpy median.

Each series reports its median and its spread (min, max and the inter-quartile range), so a reader can see
whether two medians differ by more than the noise; the CPU-time ratio beside it (``time.process_time``) is a
cross-check on a loaded machine, not the verdict. :func:`verdict` words a target as ``PASS`` or ``MISSED``;
missing a target never changes a benchmark's exit status (benchmarks never gate CI).
"""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: the default number of interleaved repetitions (``--k`` or ``$ASCEND_LAB_BENCH_K`` override it)
DEFAULT_K = 5
K_ENV = "ASCEND_LAB_BENCH_K"
BASELINE = "numpy"


@dataclass
class Series:
    """Every timed run of one measurement (seconds), with the statistics the reports quote."""

    runs: list[float] = field(default_factory=list)
    #: the process's CPU seconds of each run (``time.process_time``): on a loaded machine wall time also counts
    #: the waits for a CPU, CPU time does not -- printed beside the wall-clock figures, never instead of them
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def lo(self) -> float:
        return min(self.runs)

    @property
    def hi(self) -> float:
        return max(self.runs)

    def quartiles(self) -> tuple[float, float]:
        """(Q1, Q3); with fewer than two runs both are the one run."""
        if len(self.runs) < 2:
            return self.runs[0], self.runs[0]
        q = statistics.quantiles(self.runs, n=4, method="inclusive")
        return q[0], q[2]

    def spread(self, scale: float = 1.0, unit: str = "s", digits: int = 4) -> str:
        """``median [min-max, IQR q1-q3] unit`` -- the figure printed in every row."""
        q1, q3 = self.quartiles()
        f = f"{{:.{digits}f}}"
        m, lo, hi, q1, q3 = (f.format(v * scale) for v in (self.median, self.lo, self.hi, q1, q3))
        return f"{m} {unit} [min-max {lo}-{hi}, IQR {q1}-{q3}]"

    def as_dict(self) -> dict[str, Any]:
        q1, q3 = self.quartiles()
        out = {"median_s": self.median, "min_s": self.lo, "max_s": self.hi, "q1_s": q1, "q3_s": q3,
               "runs_s": list(self.runs)}
        if self.cpu:
            out.update({"cpu_median_s": statistics.median(self.cpu), "cpu_runs_s": list(self.cpu)})
        return out


@dataclass
class SelfTimed:
    """What a candidate returns when only part of it is the measurement (set-up outside the timer): the
    seconds it timed itself and its result. :func:`interleaved` records ``seconds`` instead of the whole call."""

    seconds: float
    result: Any
    cpu_seconds: float | None = None


def _time_once(fn: Callable[[], Any]) -> tuple[float, float | None, Any]:
    """(wall seconds, CPU seconds, result) of one call."""
    gc.collect()                       # a collection owed by the previous run is not charged to this one
    c0 = time.process_time()
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    if isinstance(result, SelfTimed):
        return result.seconds, result.cpu_seconds, result.result
    return dt, cpu, result


@dataclass
class Interleaved:
    """What :func:`interleaved` measured: one series per call (the baseline's under ``"numpy"``), for each
    candidate the baseline runs made just before its runs (``neighbour``), and each call's last result."""

    series: dict[str, Series]
    neighbour: dict[str, list[float]]
    last: dict[str, Any]


def interleaved(candidates: Mapping[str, Callable[[], Any]], k: int,
                baseline: Callable[[], Any] | None = None, warmup: int = 1,
                baseline_settle: int = 1) -> Interleaved:
    """Run ``k`` rounds of ``baseline, candidate_1, baseline, candidate_2, ...``; time every call.

    The baseline runs immediately before each candidate, so it gets ``k * len(candidates)`` runs and each
    candidate run has a numpy neighbour measured under the same load. ``warmup`` untimed rounds come first
    (imports, first-call caches, the allocator).

    ``baseline_settle`` untimed baseline calls precede each timed one. Why: numpy's temporaries here are fresh
    64 MiB mappings backed by transparent huge pages, and the first numpy call after a simulator run often pays
    for the kernel compacting the memory the simulator just churned (measured on this machine: the first numpy
    run after a simulator run took up to 2-3x the CPU time of the next). That cost is the simulator's doing,
    not numpy's; charging it to the baseline would flatter the simulator. With the settle call the baseline is
    numpy's steady cost in this process -- the stricter baseline. 0 times the call straight after the
    candidate."""
    if k < 1:
        raise ValueError(f"k must be a positive number of repetitions, got {k}")
    names = list(candidates)
    if BASELINE in names:
        raise ValueError(f"a candidate may not be called {BASELINE!r}: that name is the baseline's")
    for _ in range(warmup):
        if baseline is not None:
            baseline()
        for name in names:
            candidates[name]()
    series: dict[str, Series] = {name: Series() for name in names}
    if baseline is not None:
        series = {BASELINE: Series(), **series}
    neighbour: dict[str, list[float]] = {name: [] for name in names}
    last: dict[str, Any] = {}
    for _ in range(k):
        for name in names:
            if baseline is not None:
                for _ in range(baseline_settle):
                    baseline()
                dt, cpu, last[BASELINE] = _time_once(baseline)
                series[BASELINE].runs.append(dt)
                series[BASELINE].cpu.append(cpu)
                neighbour[name].append(dt)
            dt, cpu, last[name] = _time_once(candidates[name])
            series[name].runs.append(dt)
            if cpu is not None:
                series[name].cpu.append(cpu)
    return Interleaved(series, neighbour, last)


def verdict(met: bool) -> str:
    """How a target reads in every report: ``PASS`` or, loud enough to notice, ``MISSED``."""
    return "PASS" if met else "MISSED"


def ratio_row(label: str, sim: Series, base: Series, target: float,
              neighbour: list[float] | None = None) -> tuple[str, dict[str, Any]]:
    """The printed row and JSON entry of one simulator measurement against the interleaved numpy baseline.

    The ratio is median(sim) / median(numpy, every interleaved run); its spread ``[lo-hi]`` is the range of
    the per-round ratios, each simulator run over the numpy run just before it (``neighbour``)."""
    ratio = sim.median / base.median if base.median > 0 else float("inf")
    pairs = neighbour if neighbour is not None and len(neighbour) == len(sim.runs) else [base.median] * len(sim.runs)
    per_round = [s / b for s, b in zip(sim.runs, pairs, strict=True)]
    met = ratio <= target
    cpu_ratio = None
    if sim.cpu and base.cpu and len(sim.cpu) == len(sim.runs):
        cpu_ratio = statistics.median(sim.cpu) / max(statistics.median(base.cpu), 1e-12)
    text = (f"  {label:<40} {sim.spread()}   ratio sim/numpy {ratio:5.2f}x "
            f"[per round {min(per_round):.2f}-{max(per_round):.2f}"
            + (f"; CPU time {cpu_ratio:.2f}x" if cpu_ratio is not None else "")
            + f"]   target <= {target:g}x: {verdict(met)}")
    entry = {**sim.as_dict(), "ratio_vs_numpy": ratio, "ratio_per_round": per_round, "cpu_ratio_vs_numpy": cpu_ratio,
             "target_ratio": target, "met": met, "verdict": verdict(met)}
    return text, entry


def load_average() -> tuple[float, float, float] | None:
    """The 1/5/15-minute load averages (``uptime``), printed with every report: the machine is shared."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None


def load_text() -> str:
    la = load_average()
    cpus = os.cpu_count()
    return "load average unknown" if la is None else \
        f"load average {la[0]:.2f}, {la[1]:.2f}, {la[2]:.2f} on {cpus} CPUs"


def default_k() -> int:
    """``$ASCEND_LAB_BENCH_K`` if set (a positive integer), else :data:`DEFAULT_K`."""
    text = os.environ.get(K_ENV, "")
    if not text:
        return DEFAULT_K
    try:
        value = int(text)
    except ValueError:
        raise SystemExit(f"benchmarks: error: {K_ENV} must be a positive integer, got {text!r}") from None
    if value < 1:
        raise SystemExit(f"benchmarks: error: {K_ENV} must be a positive integer, got {text!r}")
    return value


def fresh_process_median(code: str, k: int) -> float:
    """Median seconds printed by ``code`` run in a fresh interpreter with this repository on ``sys.path``.

    For context only (printed beside the baseline, never divided by): a fresh process holds none of the
    simulator's buffers, so its numpy may fault in pages differently."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prog = f"import sys; sys.path.insert(0, {root!r})\n" + code.format(k=max(k, 3))
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())

"""How live the tiling explorer feels: the time of one update (recompute the tiling with the op's attributes, lay
out the UB, simulate a small case on core 0, redraw the three panels and render the PNG), median and spread of
``repeats`` updates after a warm-up (:mod:`benchmarks.measure`; no numpy baseline: the target is absolute). Target:
at most 150 ms median on the project's 2-core machine, reported as PASS or MISSED."""

from __future__ import annotations

from typing import Any

from .measure import interleaved, load_text, verdict

TARGET_MS = 150.0

#: (op, dtype, N, BUFFER_NUM, tiling attributes) cycled through, so every update really recomputes something; the
#: attributes are passed as the live explorer passes its attribute boxes' values (the op's own, every one)
CASES = (("hard_sigmoid_grad", "float16", 10**6, 2, {"alpha": 1 / 6, "beta": 0.5}),
         ("threshold_grad_v2_d", "float32", 3 * 10**6, 1, {"threshold": 1.0}),
         ("hard_sigmoid_grad", "bfloat16", 10**7, 2, {"alpha": 0.2, "beta": 0.5}),
         ("threshold_grad_v2_d", "int8", 10**5, 2, {"threshold": 0.0}))


def bench_explorer_update(repeats: int = 10) -> dict[str, Any]:
    """Median, spread and every time (ms) of ``repeats`` live tiling-explorer updates."""
    from ascend_lab.explore import TilingView
    view = TilingView()
    view.update()
    view.png()
    counter = iter(range(10**9))

    def one_update() -> None:
        i = next(counter)
        op, dt, n, bn, attrs = CASES[i % len(CASES)]
        view.update(op, dt, "Ascend910B4", n + i, buffer_num=bn, attrs=attrs)
        view.png(fast=True)

    series = interleaved({"update": one_update}, repeats, warmup=0).series["update"]
    times = [t * 1e3 for t in series.runs]
    q1, q3 = series.quartiles()
    median = series.median * 1e3
    return {"median_ms": median, "min_ms": min(times), "max_ms": max(times), "q1_ms": q1 * 1e3, "q3_ms": q3 * 1e3,
            "times_ms": times, "target_ms": TARGET_MS, "met": median <= TARGET_MS,
            "verdict": verdict(median <= TARGET_MS)}


def main(repeats: int = 10) -> dict[str, Any]:
    r = bench_explorer_update(repeats)
    print(f"tiling explorer update: median {r['median_ms']:.0f} ms over {len(r['times_ms'])} updates "
          f"[min-max {r['min_ms']:.0f}-{r['max_ms']:.0f}, IQR {r['q1_ms']:.0f}-{r['q3_ms']:.0f}]   "
          f"target <= {TARGET_MS:.0f} ms: {r['verdict']}   ({load_text()})")
    return r

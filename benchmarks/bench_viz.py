"""How live the tiling explorer feels: the time of one update (recompute the tiling, lay out the UB,
simulate a small case on core 0, redraw the three panels and render the PNG), median of ``repeats``
updates after a warm-up. Target: at most 150 ms on the project's 2-core machine."""

from __future__ import annotations

import statistics
import time
from typing import Any

TARGET_MS = 150.0

#: (op, dtype, N, BUFFER_NUM) cycled through, so every update really recomputes something
CASES = (("hard_sigmoid_grad", "float16", 10**6, 2), ("threshold_grad_v2_d", "float32", 3 * 10**6, 1),
         ("hard_sigmoid_grad", "bfloat16", 10**7, 2), ("threshold_grad_v2_d", "int8", 10**5, 2))


def bench_explorer_update(repeats: int = 10) -> dict[str, Any]:
    """Median and every time (ms) of ``repeats`` live tiling-explorer updates."""
    from ascend_lab.viz.explorers import TilingView
    view = TilingView()
    view.update()
    view.png()
    times = []
    for i in range(repeats):
        op, dt, n, bn = CASES[i % len(CASES)]
        t0 = time.perf_counter()
        view.update(op, dt, "Ascend910B4", n + i, buffer_num=bn)
        view.png(fast=True)
        times.append((time.perf_counter() - t0) * 1e3)
    median = statistics.median(times)
    return {"median_ms": median, "times_ms": times, "target_ms": TARGET_MS, "met": median <= TARGET_MS}


def main(repeats: int = 10) -> dict[str, Any]:
    r = bench_explorer_update(repeats)
    print(f"tiling explorer update: median {r['median_ms']:.0f} ms over {len(r['times_ms'])} updates "
          f"(min {min(r['times_ms']):.0f}, max {max(r['times_ms']):.0f})   target <= {TARGET_MS:.0f} ms: "
          f"{'met' if r['met'] else 'NOT met'}")
    return r

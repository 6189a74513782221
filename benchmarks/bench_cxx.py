"""The C++ front end's compile rows: how long ``ascend_lab.ascendc.cxx.compile`` takes on a real kernel file.

The kernel is the experimental HardSigmoidGrad (``op_kernel/experimental/hard_sigmoid_grad_apt.cpp`` and its four
``arch35/*.h``: two class templates, the tiling struct, the tiling key). A compile here is what a first launch pays:
``compile(path)`` (read, preprocess, parse) plus ``instance(schMode=0)`` (translate one instantiation to Python and
compile that):

* **C++ kernel compile, cold**: every repetition compiles a fresh copy of the kernel folder whose every file ends in a
  comment of its own (copied outside the timer), so nothing is a cache hit. Target: < 0.5 s (issue 20 item 7).
* **C++ kernel cached compile**: ``compile`` of the same file again and the same instantiation -- the files are read
  and preprocessed, the digest finds the kernel, the instance is reused. Target: < 0.05 s.
* **baseline**: Python's own ``compile()`` of the instantiation's translated source (what byte-compiling the Python
  kernel it replaces costs), timed in the same rounds.

Rounds alternate baseline, cold, baseline, cached, ... in this process after one untimed warm-up
(:mod:`benchmarks.measure`); each row gives its median with its spread, its ratio to the baseline for context, and
PASS or MISSED against its absolute target (never an exit status). Written to ``results/cxx.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ascend_lab.ascendc import cxx

from .measure import SelfTimed, default_k, interleaved, load_text, verdict

RESULTS = Path(__file__).resolve().parent / "results" / "cxx.json"
KERNEL_DIR = (Path(cxx.__file__).resolve().parents[2] / "ops" / "hard_sigmoid_grad" / "op_kernel" / "experimental")
ENTRY = "hard_sigmoid_grad_apt.cpp"
TEMPLATE = {"schMode": 0}
TARGET_COLD_S = 0.5
TARGET_CACHED_S = 0.05


def _fresh_copy(root: Path, serial: int) -> Path:
    """A copy of the kernel folder whose every file ends in a comment of its own (no cache knows its text)."""
    dst = root / f"rep{serial}"
    shutil.copytree(KERNEL_DIR, dst)
    for f in itertools.chain(dst.rglob("*.h"), dst.rglob("*.cpp")):
        f.write_text(f.read_text(encoding="utf-8") + f"\n// bench copy {serial} {time.time_ns()}\n", encoding="utf-8")
    return dst / ENTRY


def _timed(fn: Any) -> SelfTimed:
    c0, t0 = time.process_time(), time.perf_counter()
    result = fn()
    return SelfTimed(time.perf_counter() - t0, result, time.process_time() - c0)


def compile_rows(k: int | None = None) -> dict[str, Any]:
    """Measure both rows; returns the JSON entry (each row: median, spread, ratio to the baseline, verdict)."""
    counter = itertools.count()
    with tempfile.TemporaryDirectory(prefix="bench_cxx_") as tmp:
        root = Path(tmp)
        cached_path = _fresh_copy(root, next(counter))
        cxx.compile(cached_path).instance(**TEMPLATE)
        python_source = cxx.compile(cached_path).python_source(**TEMPLATE)

        def cold() -> SelfTimed:
            path = _fresh_copy(root, next(counter))              # outside the timer
            return _timed(lambda: cxx.compile(path).instance(**TEMPLATE))

        def cached() -> Any:
            return cxx.compile(cached_path).instance(**TEMPLATE)

        def baseline() -> Any:
            return compile(python_source, "<translated hard_sigmoid_grad>", "exec")

        m = interleaved({"cold": cold, "cached": cached}, k or default_k(), baseline=baseline)
    base = m.series["numpy"]
    rows = {}
    for key, label, target in (("cold", "C++ kernel compile, cold", TARGET_COLD_S),
                               ("cached", "C++ kernel cached compile", TARGET_CACHED_S)):
        s = m.series[key]
        met = s.median <= target
        rows[key] = {"label": label, **s.as_dict(), "target_s": target, "met": met, "verdict": verdict(met),
                     "ratio_vs_python_compile": s.median / base.median if base.median > 0 else float("inf")}
    return {"benchmark": "C++ front end compile", "kernel": f"{KERNEL_DIR.name}/{ENTRY}", "template": TEMPLATE,
            "python_source_lines": python_source.count("\n"), "baseline": {"label": "Python compile() of the "
                                                                           "translated source", **base.as_dict()},
            "rows": rows, "load": load_text()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_cxx", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="accepted for symmetry (the kernel is the same)")
    p.add_argument("--k", type=int, default=None, help="interleaved rounds (default $ASCEND_LAB_BENCH_K or 5)")
    p.add_argument("--output", type=Path, default=RESULTS)
    args, _ = p.parse_known_args(argv)
    k = args.k or default_k()
    print(f"C++ front end: compile {KERNEL_DIR.name}/{ENTRY} (+ instance {TEMPLATE}), k={k} interleaved rounds; "
          f"{load_text()}")
    entry = compile_rows(k)
    b = entry["baseline"]
    print(f"  {'Python compile() of the translation':<40} {b['median_s'] * 1e3:.1f} ms "
          f"[min-max {b['min_s'] * 1e3:.1f}-{b['max_s'] * 1e3:.1f}] (baseline, {entry['python_source_lines']} lines)")
    for row in entry["rows"].values():
        print(f"  {row['label']:<40} {row['median_s'] * 1e3:.1f} ms [min-max {row['min_s'] * 1e3:.1f}-"
              f"{row['max_s'] * 1e3:.1f}, IQR {row['q1_s'] * 1e3:.1f}-{row['q3_s'] * 1e3:.1f}]   "
              f"{row['ratio_vs_python_compile']:.1f}x the baseline   target < {row['target_s'] * 1e3:g} ms: "
              f"{row['verdict']}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(entry, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

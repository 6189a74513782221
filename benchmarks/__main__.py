"""``python -m benchmarks``: the simulator benchmark (:mod:`benchmarks.bench_simulator`), the explorer-update
benchmark (:mod:`benchmarks.bench_viz`), then one row per other kernel flavour: TBE (:mod:`benchmarks.bench_tbe`)
and the atvoss template (:mod:`benchmarks.bench_atvoss`); the C++ front end's compile times
(:mod:`benchmarks.bench_cxx`); the live tiling page's start-up in Chromium
(:mod:`benchmarks.bench_live_tiling`, needs the built site); last, one summary table of every target with PASS or
MISSED (also written to ``results/summary.json``). A missed target never changes the exit status."""

import json
import sys
from pathlib import Path

from . import bench_atvoss, bench_cxx, bench_live_tiling, bench_tbe, bench_viz
from .bench_simulator import RESULTS, main
from .measure import load_text


def _shared(argv: list[str]) -> list[str]:
    """The options every benchmark understands (--quick, --k N); --output and the like belong to the first."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--quick":
            out.append(argv[i])
        elif argv[i] == "--k" and i + 1 < len(argv):
            out += argv[i:i + 2]
            i += 1
        i += 1
    return out


def _output(argv: list[str]) -> Path:
    return Path(argv[argv.index("--output") + 1]) if "--output" in argv[:-1] else RESULTS


def summary(sim_json: Path, viz: dict, live: dict) -> list[dict]:
    """One row per target from the files the benchmarks just wrote (and the explorer's result)."""
    rows = []
    sim = json.loads(sim_json.read_text(encoding="utf-8"))
    base = sim["numpy_baseline"]
    for key, entry in sim["simulator"].items():
        rows.append({"target": key.replace("_", " "), "sim_s": entry, "numpy_s": base,
                     "ratio": entry["ratio_vs_numpy"], "limit": f"<= {entry['target_ratio']:g}x",
                     "verdict": entry["verdict"]})
    mem = sim["memory"]
    rows.append({"target": "peak memory / inputs", "ratio": mem["ratio_vs_inputs"],
                 "limit": f"<= {mem['target_ratio']:g}x", "verdict": mem["verdict"]})
    rows.append({"target": "explorer update (ms)", "ratio": viz["median_ms"], "limit": f"<= {viz['target_ms']:g} ms",
                 "verdict": viz["verdict"]})
    tbe = json.loads(bench_tbe.RESULTS.read_text(encoding="utf-8"))["row"]
    rows.append({"target": "TBE HardSigmoidGrad launch", "sim_s": tbe, "numpy_s": tbe["numpy"],
                 "ratio": tbe["ratio_vs_numpy"], "limit": f"<= {tbe['target_ratio']:g}x", "verdict": tbe["verdict"]})
    atv = json.loads(bench_atvoss.RESULTS.read_text(encoding="utf-8"))["rows"]
    for op, row in atv.items():
        for key in ("launch", "standalone"):
            e = row[key]
            rows.append({"target": f"atvoss {op} {key}", "sim_s": e, "numpy_s": row["numpy"],
                         "ratio": e["ratio_vs_numpy"], "limit": f"<= {e['target_ratio']:g}x", "verdict": e["verdict"]})
    cxx_rows = json.loads(bench_cxx.RESULTS.read_text(encoding="utf-8"))["rows"]
    for row in cxx_rows.values():
        rows.append({"target": f"{row['label']} (ms)", "ratio": row["median_s"] * 1e3,
                     "limit": f"<= {row['target_s'] * 1e3:g} ms", "verdict": row["verdict"]})
    if "median_s" in live:
        rows.append({"target": "live tiling start-up (s)", "ratio": live["median_s"],
                     "limit": f"<= {live['target_s']:g} s", "verdict": live["verdict"]})
    else:
        rows.append({"target": "live tiling start-up (s)", "ratio": float("nan"), "limit": live["why"],
                     "verdict": live["verdict"]})
    return rows


def print_summary(rows: list[dict]) -> None:
    print("summary (numpy = the same formula in this process, interleaved; median [min-max]):")
    for r in rows:
        times = ""
        if "sim_s" in r:
            s, b = r["sim_s"], r["numpy_s"]
            times = (f"sim {s['median_s']:.4f} [{s['min_s']:.4f}-{s['max_s']:.4f}] s, "
                     f"numpy {b['median_s']:.4f} [{b['min_s']:.4f}-{b['max_s']:.4f}] s, ")
        value = (f"{r['ratio']:.0f} ms" if r["limit"].endswith(" ms") else
                 f"{r['ratio']:.2f} s" if r["limit"].endswith(" s") else f"{r['ratio']:.2f}x")
        if r.get("sim_s", {}).get("cpu_ratio_vs_numpy") is not None:
            value += f" (CPU time {r['sim_s']['cpu_ratio_vs_numpy']:.2f}x)"
        print(f"  {r['target']:<40} {times}{value} (target {r['limit']}): {r['verdict']}")
    missed = [r["target"] for r in rows if r["verdict"] == "MISSED"]
    unmeasured = [r["target"] for r in rows if r["verdict"] not in ("PASS", "MISSED")]
    if unmeasured:
        print(f"  not measured: {', '.join(unmeasured)}")
    print(f"  {'MISSED: ' + ', '.join(missed) if missed else 'every target met'}   ({load_text()})")


argv = sys.argv[1:]
status = main()
print()
viz = bench_viz.main(repeats=4 if "--quick" in argv else 10)
print()
status = max(status, bench_tbe.main(_shared(argv)))      # the TBE flavour's row (results/tbe.json)
print()
status = max(status, bench_atvoss.main(_shared(argv)))   # the atvoss rows (main flavour, Ascend950PR)
print()
status = max(status, bench_cxx.main(_shared(argv)))      # the C++ front end's compile rows (results/cxx.json)
print()
live = bench_live_tiling.main(repeats=2 if "--quick" in argv else 3)
print()
rows = summary(_output(argv), viz, live)
print_summary(rows)
(_output(argv).parent / "summary.json").write_text(
    json.dumps({"load": load_text(), "rows": rows}, indent=2) + "\n", encoding="utf-8")
sys.exit(status)   # non-zero only when some output's bits differ from numpy's, never for a missed target

"""``python -m benchmarks``: the simulator benchmark (:mod:`benchmarks.bench_simulator`), the explorer-update
benchmark (:mod:`benchmarks.bench_viz`), then one row per other kernel flavour: TBE (:mod:`benchmarks.bench_tbe`)
and the atvoss template (:mod:`benchmarks.bench_atvoss`)."""

import sys

from . import bench_atvoss, bench_tbe, bench_viz
from .bench_simulator import main


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


status = main()
print()
bench_viz.main(repeats=4 if "--quick" in sys.argv else 10)
print()
status = max(status, bench_tbe.main(_shared(sys.argv[1:])))      # the TBE flavour's row (results/tbe.json)
print()
status = max(status, bench_atvoss.main(_shared(sys.argv[1:])))   # the atvoss rows (main flavour, Ascend950PR)
sys.exit(status)

"""``python -m benchmarks``: the simulator benchmark (:mod:`benchmarks.bench_simulator`), the explorer-update
benchmark (:mod:`benchmarks.bench_viz`), then one row per other kernel flavour: TBE (:mod:`benchmarks.bench_tbe`)
and the atvoss template (:mod:`benchmarks.bench_atvoss`)."""

import sys

from . import bench_atvoss, bench_tbe, bench_viz
from .bench_simulator import main

status = main()
print()
bench_viz.main(repeats=4 if "--quick" in sys.argv else 10)
print()
status = max(status, bench_tbe.main(sys.argv[1:]))      # the TBE flavour's row (results/tbe.json)
print()
status = max(status, bench_atvoss.main(sys.argv[1:]))   # the atvoss template's rows (main flavour, Ascend950PR)
sys.exit(status)

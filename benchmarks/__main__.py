"""``python -m benchmarks``: the simulator benchmark (:mod:`benchmarks.bench_simulator`), then the
explorer-update benchmark (:mod:`benchmarks.bench_viz`), then the TBE flavour's row
(:mod:`benchmarks.bench_tbe`)."""

import sys

from . import bench_tbe, bench_viz
from .bench_simulator import main

status = main()
print()
bench_viz.main(repeats=4 if "--quick" in sys.argv else 10)
print()
status = max(status, bench_tbe.main(sys.argv[1:]))   # the TBE flavour's row (results/tbe.json)
sys.exit(status)

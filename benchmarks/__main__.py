"""``python -m benchmarks``: the simulator benchmark (:mod:`benchmarks.bench_simulator`), then the
explorer-update benchmark (:mod:`benchmarks.bench_viz`)."""

import sys

from . import bench_viz
from .bench_simulator import main

status = main()
print()
bench_viz.main(repeats=4 if "--quick" in sys.argv else 10)
sys.exit(status)

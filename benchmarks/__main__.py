"""``python -m benchmarks``: run the simulator benchmarks (see :mod:`benchmarks.bench_simulator`)."""

import sys

from .bench_simulator import main

sys.exit(main())

"""Speed and memory benchmarks of the simulator (``python -m benchmarks`` or ``make bench``).

Not part of the test suite: every figure is a ratio against a plain-numpy baseline measured in the same
run, so the numbers mean something on any machine. Results go to stdout and ``benchmarks/results/latest.json``.
"""

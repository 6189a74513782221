"""``python -m ascend_lab.viz``: the explorer-update benchmark (median of 10 live tiling-explorer updates)."""

from .explorers import main

main()

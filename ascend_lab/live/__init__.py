"""The live tiling page's Python: every registered op's host tiling without numpy, run in the reader's browser.

* :mod:`.live_tiling` -- the compile facts (built with the whole package) and the run-time tiling (numpy-free);
* :mod:`.tiling_inputs` -- the checks every tiling entry point applies to its inputs (also ``ascend_lab.tiling``);
* :mod:`.tile_map` -- which core and tile covers which elements, the data the tile-map figures draw;
* :mod:`.live_boot` -- run by path where there is no numpy, makes the sub-packages importable without their
  ``__init__``.

These sit above the operators (they ask the registry and call the ops' ``op_host`` tilings) and below the
explorers; this ``__init__`` imports nothing, so pyodide loads only the modules the tiling needs.
"""

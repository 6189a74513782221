"""What several operator packages share: an operator package imports ``ops/common``, never another operator.

* :mod:`.block_tiling` -- the ops-nn experimental 256-byte-block split (ThresholdGradV2D and ReluGrad).

Every module here imports without numpy (the live tiling page runs the host tilings in pyodide).
"""

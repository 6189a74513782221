"""ascend_lab — a faithful simulator of CANN's aclnnHardsigmoidBackward and aclnnThresholdBackward,
from the aclnn API down to the AscendC kernel, for learning how an Ascend operator really works.

Layers (mirroring CANN, each importing only the ones below it): ``base`` (SoC catalogue, op log) ->
``acl`` (runtime, aclTensor) -> ``opdev`` (status codes, dtype rules, executor and L0 graph) -> ``ascendc``
(the simulated AI Core) -> ``ops/<op>/`` (``op_api``, ``op_host``, ``op_kernel``, collected by
``ops.registry``) -> this convenience layer, ``aclnn``, ``tiling`` and the CLI -> ``viz`` (draws what it is
handed) -> ``explore`` (explorers: asks the registry, launches kernels) -> ``book``.
``golden`` holds the numpy oracles the tests compare against; it and the simulator never import each other.

The convenience functions (``al.hardsigmoid_backward``, ``al.threshold_backward``) are made from the
operator registry: one per registered aclnn API.
"""

import sys as _sys
from typing import Any as _Any

from . import acl, aclnn, dtypes, tiling
from .base import platform
from .run import NULLPTR, Run, acl_session, call, convenience_functions, validation_case
from .sweeps import sweep

__version__ = "0.1.0"

_CONVENIENCE = convenience_functions()
globals().update(_CONVENIENCE)

__all__ = ["acl", "aclnn", "dtypes", "tiling", "platform", "Run", "NULLPTR", "acl_session", "call",
           "validation_case", "sweep", *_CONVENIENCE]


def load_ipython_extension(ipython: _Any) -> None:
    """Register the ``%%ascendc`` cell magic (AscendC C++ in a notebook cell: :mod:`ascend_lab.magic`).
    Importing ``ascend_lab`` inside IPython does it; ``%load_ext ascend_lab`` too. The C++ front end is imported
    by the first ``%%ascendc`` cell, not here."""
    def ascendc(line: str, cell: str) -> None:
        """%%ascendc [NAME] [--entry E] [-D KEY=VALUE ...] [--knob KW=CONST ...] [--run --tiling FIELD=VALUE ...]:
        compile the cell's AscendC C++ and bind the kernel to NAME (``%%ascendc --help`` for every option)."""
        from .magic import ascendc_cell  # deferred: IPython and the front end load with the first %%ascendc cell
        ascendc_cell(ipython, line, cell)
    ipython.register_magic_function(ascendc, "cell", "ascendc")


def _in_ipython() -> _Any:
    """The running IPython shell, or None -- without importing IPython when it is not already loaded."""
    get = getattr(_sys.modules.get("IPython"), "get_ipython", None)
    try:
        return get() if get is not None else None
    except Exception:      # a half-initialised IPython is no shell
        return None


if (_shell := _in_ipython()) is not None:
    load_ipython_extension(_shell)
del _shell

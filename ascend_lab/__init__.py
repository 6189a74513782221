"""ascend_lab — a faithful simulator of CANN's aclnnHardsigmoidBackward and aclnnThresholdBackward,
from the aclnn API down to the AscendC kernel, for learning how an Ascend operator really works.

Layers (mirroring CANN, each importing only the ones below it): ``base`` (SoC catalogue, op log) ->
``acl`` (runtime, aclTensor) -> ``opdev`` (status codes, dtype rules, executor and L0 graph) -> ``ascendc``
(the simulated AI Core) -> ``ops/<op>/`` (``op_api``, ``op_host``, ``op_kernel``, collected by
``ops.registry``) -> this convenience layer, ``aclnn``, ``tiling`` and the CLI -> ``viz`` -> ``book``.
``golden`` holds the numpy oracles the tests compare against; it and the simulator never import each other.

The convenience functions (``al.hardsigmoid_backward``, ``al.threshold_backward``) are made from the
operator registry: one per registered aclnn API.
"""

from . import acl, aclnn, dtypes, tiling
from .base import platform
from .run import NULLPTR, Run, acl_session, call, convenience_functions, validation_case

__version__ = "0.1.0"

_CONVENIENCE = convenience_functions()
globals().update(_CONVENIENCE)

__all__ = ["acl", "aclnn", "dtypes", "tiling", "platform", "Run", "NULLPTR", "acl_session", "call",
           "validation_case", *_CONVENIENCE]

"""ascend_lab — a faithful simulator of CANN's aclnnHardsigmoidBackward and aclnnThresholdBackward,
from the aclnn API down to the AscendC kernel, for learning how an Ascend operator really works.

Layers (mirroring CANN): ``acl`` (runtime, aclTensor) -> ``aclnn`` (L2 APIs) -> L0 graph (``opdev``)
-> ``ops/<op>/op_host`` (definition, infer-shape, tiling) -> ``ops/<op>/op_kernel`` on the simulated
AI Core (``ascendc``). ``golden`` holds the numpy oracles the tests compare against.
"""

from . import acl, aclnn, dtypes, tiling
from .base import platform
from .run import NULLPTR, Run, hardsigmoid_backward, threshold_backward

__version__ = "0.1.0"

__all__ = ["acl", "aclnn", "dtypes", "tiling", "platform", "Run", "NULLPTR", "hardsigmoid_backward",
           "threshold_backward"]

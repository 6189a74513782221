"""``ascend_lab.aclnn`` — the aclnn L2 APIs, named as in ``aclnnop/*.h``.

Each operator has two phases: ``<Op>GetWorkspaceSize(...)`` checks the arguments and builds the L0
graph, returning ``(status, workspace_size, executor)``; ``<Op>(workspace, workspace_size, executor,
stream)`` runs it and returns a status.
"""

from .opdev.aclnn_common import OUT
from .opdev.errno import AclnnStatus, describe
from .ops.hard_sigmoid_grad.op_api import (
    aclnnHardsigmoidBackward,
    aclnnHardsigmoidBackwardGetWorkspaceSize,
)
from .ops.threshold_grad_v2_d.op_api import (
    aclnnThresholdBackward,
    aclnnThresholdBackwardGetWorkspaceSize,
)

__all__ = [
    "aclnnHardsigmoidBackwardGetWorkspaceSize", "aclnnHardsigmoidBackward",
    "aclnnThresholdBackwardGetWorkspaceSize", "aclnnThresholdBackward", "OUT", "AclnnStatus", "describe",
]

"""aclnnHardswishBackward: the two-phase aclnn API of the gallery's HardSwishGrad (gradOutput, self -> gradInput).

Phase 1 checks as the aclnn activation-backward APIs do (non-null tensors, a dtype the op definition lists, the same
dtype and shape for all three) and builds Contiguous -> HardSwishGrad -> ViewCopy; bad input is a status code, never an
exception (``guard_phase1``)."""

from __future__ import annotations

from typing import Any

from ...acl.types import as_acl_dtype
from ...opdev.aclnn_common import OUT, CommonOpExecutorRun, guard_phase1
from ...opdev.errno import ACLNN_SUCCESS
from ...opdev.executor import aclOpExecutor
from .. import registry
from ..common.gallery_api import backward_graph, check_backward_tensors
from ..spec import AclnnSpec
from . import op_host

API = "aclnnHardswishBackward"


@guard_phase1(API + "GetWorkspaceSize")
def aclnnHardswishBackwardGetWorkspaceSize(gradOutput: Any, self: Any, gradInput: Any, workspaceSize: Any = OUT,
                                      executor: Any = OUT) -> tuple[int, int, Any]:
    """Phase 1 of aclnnHardswishBackward: check the three tensors (same dtype and shape, a dtype the op definition
    registers), then build the graph Contiguous -> HardSwishGrad kernel -> ViewCopy. Returns ``(status,
    workspace_size, executor)``; a failed check is its status code, never an exception."""
    exe = aclOpExecutor(API)
    check_backward_tensors(op_host.OP_DEF, gradOutput, self, gradInput)
    if self.IsEmpty():
        return ACLNN_SUCCESS, 0, exe
    backward_graph(registry.get("hard_swish_grad"), gradOutput, self, gradInput, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnHardswishBackward(workspace: Any, workspaceSize: int, executor: Any, stream: Any) -> int:
    """Phase 2: run the executor phase 1 built on ``stream`` (CommonOpExecutorRun's checks and status codes)."""
    return CommonOpExecutorRun(API, workspace, workspaceSize, executor, stream)


ACLNN = AclnnSpec(
    api=API, get_workspace_size=aclnnHardswishBackwardGetWorkspaceSize, run=aclnnHardswishBackward,
    convenience="hardswish_backward", formula="dx = dy * (0 if x < -3, x / 3 + 1/2 if x <= 3, else 1)",
    tensors=(("grad", "gradOutput"), ("x", "self")),
    default_out=lambda arrays, dt: None if arrays["x"] is None else
    (arrays["x"].shape, as_acl_dtype(dt if dt is not None else arrays["x"].dtype)),
    dtype_support=lambda: op_host.OP_DEF.dtypes, l0_ops=("HardSwishGrad",),
)

"""aclnnSiluBackward: the two-phase aclnn API of the gallery's SiluGrad (gradOutput, self -> gradInput).

Phase 1 checks as the aclnn activation-backward APIs do (non-null tensors, a dtype the op definition lists, the same
dtype and shape for all three) and builds Contiguous -> SiluGrad -> ViewCopy; bad input is a status code, never an
exception (``guard_phase1``)."""

from __future__ import annotations

from typing import Any

from ...acl.types import as_acl_dtype
from ...opdev import l0_ops
from ...opdev.aclnn_common import OUT, CommonOpExecutorRun, ParamError, check_not_null, check_tensor_type, guard_phase1
from ...opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS
from ...opdev.executor import aclOpExecutor
from .. import registry
from ..l0_kernel import kernel_node
from ..spec import AclnnSpec
from . import op_host

API = "aclnnSiluBackward"


@guard_phase1(API + "GetWorkspaceSize")
def aclnnSiluBackwardGetWorkspaceSize(gradOutput: Any, self: Any, gradInput: Any, workspaceSize: Any = OUT,
                                      executor: Any = OUT) -> tuple[int, int, Any]:
    """Phase 1 of aclnnSiluBackward: check the three tensors (same dtype and shape, a dtype the op definition
    registers), then build the graph Contiguous -> SiluGrad kernel -> ViewCopy. Returns ``(status,
    workspace_size, executor)``; a failed check is its status code, never an exception."""
    exe = aclOpExecutor(API)
    tensors = (("gradOutput", gradOutput), ("self", self), ("gradInput", gradInput))
    for name, t in tensors:
        check_tensor_type(name, t)
        check_not_null(name, t)
    for name, t in tensors:
        if t.dtype not in op_host.OP_DEF.dtypes or t.dtype != self.dtype:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} dtype {t.dtype.short} is not supported (SiluGrad "
                             f"takes {', '.join(d.short for d in op_host.OP_DEF.dtypes)}, all three the same)")
        if tuple(t.view_dims) != tuple(self.view_dims):
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} shape {list(t.view_dims)} differs from self's "
                             f"{list(self.view_dims)}")
    if self.IsEmpty():
        return ACLNN_SUCCESS, 0, exe
    dy, x = (l0_ops.Contiguous(t, exe) for t in (gradOutput, self))
    dx = exe.alloc_tensor(tuple(x.view_dims), x.dtype, name="dx")
    kernel_node(registry.get("silu_grad"), [dy, x], dx, {}, exe, why="the AI Core kernel")
    l0_ops.ViewCopy(dx, gradInput, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnSiluBackward(workspace: Any, workspaceSize: int, executor: Any, stream: Any) -> int:
    """Phase 2: run the executor phase 1 built on ``stream`` (CommonOpExecutorRun's checks and status codes)."""
    return CommonOpExecutorRun(API, workspace, workspaceSize, executor, stream)


ACLNN = AclnnSpec(
    api=API, get_workspace_size=aclnnSiluBackwardGetWorkspaceSize, run=aclnnSiluBackward,
    convenience="silu_backward", formula="dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x)",
    tensors=(("grad", "gradOutput"), ("x", "self")),
    default_out=lambda arrays, dt: None if arrays["x"] is None else
    (arrays["x"].shape, as_acl_dtype(dt if dt is not None else arrays["x"].dtype)),
    dtype_support=lambda: op_host.OP_DEF.dtypes, l0_ops=("SiluGrad",),
)

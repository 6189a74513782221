"""aclnnDiffScaleAddTest: a two-phase aclnn API with three tensors and one scalar
(Contiguous x3 -> DiffScaleAdd -> ViewCopy)."""

from __future__ import annotations

from typing import Any

from ascend_lab.acl.types import as_acl_dtype
from ascend_lab.opdev import l0_ops
from ascend_lab.opdev.aclnn_common import (
    OUT,
    CommonOpExecutorRun,
    ParamError,
    check_not_null,
    check_scalar_type,
    check_tensor_type,
    guard_phase1,
)
from ascend_lab.opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS
from ascend_lab.opdev.executor import aclOpExecutor
from ascend_lab.ops import registry
from ascend_lab.ops.common.l0_kernel import kernel_node
from ascend_lab.ops.spec import AclnnSpec, ScalarArg

from . import op_host

API = "aclnnDiffScaleAddTest"


@guard_phase1(API + "GetWorkspaceSize")
def aclnnDiffScaleAddTestGetWorkspaceSize(self: Any, other: Any, addend: Any, scale: Any, out: Any,
                                          workspaceSize: Any = OUT, executor: Any = OUT) -> tuple[int, int, Any]:
    exe = aclOpExecutor(API)
    tensors = (("self", self), ("other", other), ("addend", addend), ("out", out))
    for name, t in tensors:
        check_tensor_type(name, t)
        check_not_null(name, t)
    check_scalar_type("scale", scale)
    check_not_null("scale", scale)
    for name, t in tensors:
        if t.dtype not in op_host.OP_DEF.dtypes or t.dtype != self.dtype:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} dtype {t.dtype.short} is not supported")
        if tuple(t.view_dims) != tuple(self.view_dims):
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} shape differs from self")
    if self.IsEmpty():
        return ACLNN_SUCCESS, 0, exe
    inputs = [l0_ops.Contiguous(t, exe) for t in (self, other, addend)]
    y = exe.alloc_tensor(tuple(inputs[0].view_dims), inputs[0].dtype, name="y")
    kernel_node(registry.get("diff_scale_add"), inputs, y, {"scale": float(scale.ToFloat())}, exe,
                why="the AI Core kernel")
    l0_ops.ViewCopy(y, out, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnDiffScaleAddTest(workspace: Any, workspaceSize: int, executor: Any, stream: Any) -> int:
    return CommonOpExecutorRun(API, workspace, workspaceSize, executor, stream)


ACLNN = AclnnSpec(
    api=API, get_workspace_size=aclnnDiffScaleAddTestGetWorkspaceSize, run=aclnnDiffScaleAddTest,
    convenience="diff_scale_add_test", formula="out = (x - y) * scale + z",
    tensors=(("x", "self"), ("y", "other"), ("z", "addend")),
    scalars=(ScalarArg("scale", "scale", op_host.SCALE, "the factor of x - y"),),
    default_out=lambda arrays, dt: None if arrays["x"] is None else
    (arrays["x"].shape, as_acl_dtype(dt if dt is not None else arrays["x"].dtype)),
    dtype_support=lambda: op_host.OP_DEF.dtypes, l0_ops=("DiffScaleAdd",),
)

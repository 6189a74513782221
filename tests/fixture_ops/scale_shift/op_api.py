"""aclnnScaleShiftTest: a two-phase aclnn API with one tensor and two scalars (Contiguous -> ScaleShift -> ViewCopy)."""

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

API = "aclnnScaleShiftTest"


@guard_phase1(API + "GetWorkspaceSize")
def aclnnScaleShiftTestGetWorkspaceSize(self: Any, gain: Any, bias: Any, out: Any, workspaceSize: Any = OUT,
                                        executor: Any = OUT) -> tuple[int, int, Any]:
    exe = aclOpExecutor(API)
    for name, t in (("self", self), ("out", out)):
        check_tensor_type(name, t)
        check_not_null(name, t)
    for name, s in (("gain", gain), ("bias", bias)):
        check_scalar_type(name, s)
        check_not_null(name, s)
    for name, t in (("self", self), ("out", out)):
        if t.dtype not in op_host.OP_DEF.dtypes or t.dtype != self.dtype:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} dtype {t.dtype.short} is not supported")
    if tuple(out.view_dims) != tuple(self.view_dims):
        raise ParamError(ACLNN_ERR_PARAM_INVALID, "out shape differs from self")
    if self.IsEmpty():
        return ACLNN_SUCCESS, 0, exe
    x = l0_ops.Contiguous(self, exe)
    y = exe.alloc_tensor(tuple(x.view_dims), x.dtype, name="y")
    attrs = {"gain": float(gain.ToFloat()), "bias": float(bias.ToFloat())}
    kernel_node(registry.get("scale_shift"), [x], y, attrs, exe, why="the AI Core kernel")
    l0_ops.ViewCopy(y, out, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnScaleShiftTest(workspace: Any, workspaceSize: int, executor: Any, stream: Any) -> int:
    return CommonOpExecutorRun(API, workspace, workspaceSize, executor, stream)


ACLNN = AclnnSpec(
    api=API, get_workspace_size=aclnnScaleShiftTestGetWorkspaceSize, run=aclnnScaleShiftTest,
    convenience="scale_shift_test", formula="out = x * gain + bias", tensors=(("x", "self"),),
    scalars=(ScalarArg("gain", "gain", op_host.GAIN, "the factor"),
             ScalarArg("bias", "bias", op_host.BIAS, "the shift")),
    default_out=lambda arrays, dt: None if arrays["x"] is None else
    (arrays["x"].shape, as_acl_dtype(dt if dt is not None else arrays["x"].dtype)),
    dtype_support=lambda: op_host.OP_DEF.dtypes, l0_ops=("ScaleShift",),
)

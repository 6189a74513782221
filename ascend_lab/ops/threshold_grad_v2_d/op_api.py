"""aclnnThresholdBackward: the L2 API (checks + L0 graph) and the L0 op ``ThresholdGradV2D``.

Mirrors ``ops-nn:activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp`` and
``threshold_grad.cpp``; the order of checks is cann_facts §3.2, step by step:

1. create the executor
2. ``threshold`` null -> 161001
3. ``thresholdVal_ = threshold->ToFloat()`` -- kept in a *module-level global*, as CANN keeps it in a
   file-scope global (so two threads calling this API at once could pick each other's dtype list)
4. ``out`` null, ``workspaceSize`` null -> 161001 (the ``executor`` out-pointer is not checked)
5. gradOutput null, self null -> 161001; dtypes in the list chosen by NpuArch and thresholdVal_,
   gradOutput == self, out == self -> 161002; rank <= 8 for gradOutput and self -> 161002
6. broadcast(self, gradOutput) fails -> 161002
7. broadcast shape != out's view shape -> 161002
8. self or gradOutput empty -> workspace 0, nothing launched
9. Contiguous(gradOutput), Contiguous(self) -- no Cast nodes: dtypes must already match
10. ``|thresholdVal_| <= FLT_EPSILON`` -> ReluGrad, else ThresholdGradV2D(threshold)
11. ViewCopy into out

As in CANN's graph there is no broadcast node: the kernel receives both inputs with their own shapes. The
experimental kernel's tiling counts only input 0's elements (cann_facts §4.1), so with broadcasting inputs it
reads past the smaller one -- the real kernel's defect, which the sanitizer reports and the book explains.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...acl.runtime import DevicePtr, aclrtStream
from ...acl.tensor import aclScalar, aclTensor
from ...acl.types import aclDataType
from ...base.platform import NpuArch, current_soc
from ...dtypes import as_acl_dtype
from ...opdev import l0_ops
from ...opdev.aclnn_common import (
    OUT,
    CommonOpExecutorRun,
    ParamError,
    check_not_null,
    check_scalar_type,
    check_tensor_type,
    guard_phase1,
)
from ...opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS
from ...opdev.executor import aclOpExecutor
from .. import registry
from ..common.l0_kernel import kernel_node
from ..spec import AclnnSpec, ScalarArg

DT = aclDataType
API = "aclnnThresholdBackwardGetWorkspaceSize"
API2 = "aclnnThresholdBackward"
MAX_SUPPORT_DIMS_NUMS = 8
FLT_EPSILON = np.float32(1.1920929e-07)

ASCEND910_DTYPE_DTYPE_SUPPORT_LIST = (DT.ACL_FLOAT, DT.ACL_INT32, DT.ACL_FLOAT16, DT.ACL_INT8, DT.ACL_UINT8)
ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST = ASCEND910_DTYPE_DTYPE_SUPPORT_LIST + (DT.ACL_BF16,)
REGBASE_DTYPE_DTYPE_SUPPORT_LIST = ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST + (DT.ACL_INT64,)

#: CANN's file-scope ``static float thresholdVal_`` (§3.2 step 3).
thresholdVal_ = np.float32(0.0)


def IsFloatEqual(a: float, b: float) -> bool:
    """``|a - b| <= FLT_EPSILON`` (opbase), so any |threshold| <= 1.19e-7 counts as 0."""
    return bool(abs(np.float32(a) - np.float32(b)) <= FLT_EPSILON)


def GetDtypeSupportList(threshold: float | None = None) -> tuple[aclDataType, ...]:
    """By NpuArch: DAV_2201 (910B, 910_93) / DAV_3510 (950) -> 910B list, plus INT64 on 950 when the
    threshold is 0 (ReluGrad); anything else (910, 310P) -> 910 list.

    CANN reads the threshold from the file-scope ``thresholdVal_`` set earlier in the same call; figures
    may pass ``threshold`` instead of touching that global."""
    thr = thresholdVal_ if threshold is None else np.float32(threshold)
    arch = current_soc().npu_arch
    if arch in (NpuArch.DAV_2201, NpuArch.DAV_3510):
        if arch == NpuArch.DAV_3510 and IsFloatEqual(thr, 0.0):
            return REGBASE_DTYPE_DTYPE_SUPPORT_LIST
        return ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST
    return ASCEND910_DTYPE_DTYPE_SUPPORT_LIST


def _names(dtypes: tuple[aclDataType, ...]) -> str:
    return ", ".join(d.name.removeprefix("ACL_") for d in dtypes)


def _short(d: aclDataType) -> str:
    return d.name.removeprefix("ACL_")


def _check_params(grad_output: aclTensor | None, self: aclTensor | None, out: aclTensor) -> None:
    check_not_null("gradOutput", grad_output)
    check_not_null("self", self)
    support = GetDtypeSupportList()
    for name, t in (("gradOutput", grad_output), ("self", self)):
        if t.dtype not in support:
            raise ParamError(ACLNN_ERR_PARAM_INVALID,
                             f"{name} dtype {_short(t.dtype)} should be in dtype support list "
                             f"[{_names(support)}] on {current_soc().name}.")
    if grad_output.dtype != self.dtype:
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"gradOutput dtype {_short(grad_output.dtype)} and self dtype {_short(self.dtype)} "
                         "should be the same.")
    if out.dtype != self.dtype:
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"out dtype {_short(out.dtype)} and self dtype {_short(self.dtype)} should be the same.")
    for name, t in (("gradOutput", grad_output), ("self", self)):
        if t.ndim > MAX_SUPPORT_DIMS_NUMS:
            raise ParamError(ACLNN_ERR_PARAM_INVALID,
                             f"{name}'s dim num should not be greater than {MAX_SUPPORT_DIMS_NUMS}, "
                             f"but got {t.ndim}.")


def _kernel_node(key: str, grad: aclTensor, feat: aclTensor, attrs: dict[str, float],
                 executor: aclOpExecutor, why: str) -> aclTensor:
    """``l0op::ThresholdGradV2D`` / ``l0op::ReluGrad``: infer the broadcast output, tile (phase 1), launch (phase 2).

    The inputs reach the kernel with their own shapes, as in CANN's graph: the main-tree and TBE kernels broadcast
    them natively; the experimental kernels tile by input 0's element count and read both inputs at the same
    offsets, so a broadcast call makes them read past the smaller input (the sanitizer reports it)."""
    spec = registry.get(key)
    out = executor.alloc_tensor(spec.infer_shape(grad.view_dims, feat.view_dims), feat.dtype,
                                name="output_backprops")
    kernel_node(spec, [grad, feat], out, attrs, executor, why)
    return out


def ThresholdGradV2D(grad: aclTensor, feat: aclTensor, threshold: np.float32,
                     executor: aclOpExecutor) -> aclTensor:
    return _kernel_node("threshold_grad_v2_d", grad, feat, {"threshold": float(np.float32(threshold))}, executor,
                        "the AI Core kernel")


def ReluGrad(grad: aclTensor, feat: aclTensor, executor: aclOpExecutor) -> aclTensor:
    return _kernel_node("relu_grad", grad, feat, {}, executor,
                        "|threshold| <= FLT_EPSILON, so ReluGrad runs")


@guard_phase1(API)
def aclnnThresholdBackwardGetWorkspaceSize(gradOutput: aclTensor | None, self: aclTensor | None,
                                           threshold: aclScalar | None, out: aclTensor | None,
                                           workspaceSize=OUT, executor=OUT
                                           ) -> tuple[int, int, aclOpExecutor | None]:
    """Phase 1. Returns ``(status, workspace_size, executor)``; ``workspaceSize=None`` re-enacts a nullptr.

    CANN does not check the ``executor`` out-pointer; passing ``executor=None`` would make the C code
    write through a nullptr at the very end. The simulator reports that as 161001 instead of crashing.
    """
    global thresholdVal_
    exe = aclOpExecutor(API2)
    for name, t in (("gradOutput", gradOutput), ("self", self), ("out", out)):
        check_tensor_type(name, t)
    check_scalar_type("threshold", threshold)
    check_not_null("threshold", threshold)
    thresholdVal_ = threshold.ToFloat()
    check_not_null("out", out)
    if workspaceSize is None:
        raise ParamError(ACLNN_ERR_PARAM_NULLPTR, "workspaceSize should not be nullptr.")
    _check_params(gradOutput, self, out)
    shape = l0_ops.broadcast_shape(self.view_dims, gradOutput.view_dims)
    if shape is None:
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"self shape {list(self.view_dims)} and gradOutput shape "
                         f"{list(gradOutput.view_dims)} can not broadcast.")
    if tuple(shape) != tuple(out.view_dims):
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"Shape of out should be {list(shape)}, but current is {list(out.view_dims)}.")
    if executor is None:
        raise ParamError(ACLNN_ERR_PARAM_NULLPTR,
                         "executor should not be nullptr (CANN does not check it and would write through it).")
    if self.IsEmpty() or gradOutput.IsEmpty():
        return ACLNN_SUCCESS, 0, exe

    g = l0_ops.Contiguous(gradOutput, exe)
    s = l0_ops.Contiguous(self, exe)
    if IsFloatEqual(thresholdVal_, 0.0):
        y = ReluGrad(g, s, exe)
    else:
        y = ThresholdGradV2D(g, s, thresholdVal_, exe)
    l0_ops.ViewCopy(y, out, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnThresholdBackward(workspace: DevicePtr | None, workspaceSize: int,
                           executor: aclOpExecutor | None, stream: aclrtStream | None) -> int:
    """Phase 2: run the executor on ``stream`` with the caller's workspace."""
    return CommonOpExecutorRun(API2, workspace, workspaceSize, executor, stream)


def default_out(arrays: Mapping[str, np.ndarray | None], out_dtype: Any) -> tuple[tuple[int, ...], Any] | None:
    """``out`` in the broadcast shape of the inputs and ``x``'s dtype (or ``out_dtype``). With ``x`` missing the
    gradient's shape is used, so that the null check on ``self`` is the one that fires."""
    g, s = arrays.get("grad_output"), arrays.get("x")
    ref = s if s is not None else g
    if ref is None:
        return None
    shape = ref.shape if (g is None or s is None) else (l0_ops.broadcast_shape(s.shape, g.shape) or s.shape)
    return shape, as_acl_dtype(out_dtype if out_dtype is not None else ref.dtype)


ACLNN = AclnnSpec(
    api=API2, get_workspace_size=aclnnThresholdBackwardGetWorkspaceSize, run=aclnnThresholdBackward,
    convenience="threshold_backward", formula="out = grad if x > threshold else 0",
    tensors=(("grad_output", "gradOutput"), ("x", "self")), default_out=default_out,
    dtype_support=GetDtypeSupportList,
    scalars=(ScalarArg("threshold", "threshold", 1.0, "the threshold scalar (0 selects ReluGrad)"),),
    support_cases=({"threshold": 1.0}, {"threshold": 0.0}), l0_ops=("ThresholdGradV2D", "ReluGrad"),
    partial_support=("thr=0", "only if |threshold| <= FLT_EPSILON (ReluGrad)"),
)

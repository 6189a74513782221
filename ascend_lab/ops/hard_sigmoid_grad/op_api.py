"""aclnnHardsigmoidBackward: the L2 API (checks + L0 graph) and the L0 op ``HardSigmoidGrad``.

Mirrors ``ops-nn:experimental/activation/hard_sigmoid_grad/op_api/aclnn_hardsigmoid_backward.cpp`` and
``hardsigmoid_grad.cpp``; the order of checks is cann_facts §1.2, step by step:

1. ``OP_CHECK_COMM_INPUT(workspaceSize, executor)`` -> 161001
2. create the executor
3. nulls: gradOutput, self, out -> 161001
4. dtypes: gradOutput in list, self in list, ``CanCast(PromoteType(g, s), out)`` -> 161002. out's dtype is not
   checked against the list: CanCast refuses only complex -> real, floating -> integral and non-bool -> bool
   (opbase ``data_type_utils.h``), so an out of DOUBLE or COMPLEX64 passes and the final Cast writes into it
   (COMPLEX64: the value with a +0 imaginary part, on the AI CPU -- ops-math ``cast_aicpu.cpp``)
5. shapes: rank <= 8 for gradOutput, self, out; self == gradOutput; self == out (no broadcast) -> 161002
6. any tensor empty -> workspace 0, nothing launched
7. graph: Contiguous -> Cast(promote) -> HardSigmoidGrad(alpha=0.16666666f, beta=0.5) -> Cast(out) -> ViewCopy
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...acl.runtime import DevicePtr, aclrtStream
from ...acl.tensor import aclTensor
from ...acl.types import aclDataType
from ...base.platform import SocVersion, current_soc
from ...dtypes import as_acl_dtype
from ...opdev import l0_ops
from ...opdev.aclnn_common import (
    OUT,
    CommonOpExecutorRun,
    ParamError,
    check_not_null,
    check_tensor_type,
    guard_phase1,
)
from ...opdev.data_type_utils import CanCast, PromoteType
from ...opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS
from ...opdev.executor import aclOpExecutor
from .. import registry
from ..common.l0_kernel import dispatch, kernel_node
from ..spec import AclnnSpec
from . import op_host

DT = aclDataType
API = "aclnnHardsigmoidBackwardGetWorkspaceSize"
API2 = "aclnnHardsigmoidBackward"
MAX_SUPPORT_DIMS_NUMS = 8

#: alpha as the experimental aclnn passes it to L0 (``0.16666666`` as a C float), and beta (§1.3).
ALPHA = np.float32(0.16666666)
#: alpha as the shipping (ops-nn main-tree) aclnn passes it, on every SoC: ``1.0f / 6.0f`` (kernel_flavours §1).
ALPHA_MAIN = np.float32(np.float32(1.0) / np.float32(6.0))
BETA = np.float32(0.5)


def aclnn_alpha(flavour: str) -> np.float32:
    """The alpha the aclnn layer hands to L0. The shipping aclnn is the main-tree one on every SoC (1/6f); the
    experimental package ships its own aclnn (0.16666666f) with its kernel, and the simulator assumes the two come
    together when that package's kernel runs (that the package's aclnn replaces the built-in one is UNCONFIRMED)."""
    return ALPHA if flavour == "experimental" else ALPHA_MAIN

ASCEND910_DTYPE_SUPPORT_LIST = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
ASCEND910B_DTYPE_SUPPORT_LIST = (DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_FLOAT16)


def GetDtypeSupportList() -> tuple[aclDataType, ...]:
    """910B list if SocVersion is in the enum range [ASCEND910B, ASCEND910E] or the SoC is regbase."""
    soc = current_soc()
    if SocVersion.ASCEND910B <= soc.soc_version <= SocVersion.ASCEND910E:
        return ASCEND910B_DTYPE_SUPPORT_LIST
    if soc.is_regbase():
        return ASCEND910B_DTYPE_SUPPORT_LIST
    return ASCEND910_DTYPE_SUPPORT_LIST


def _names(dtypes: tuple[aclDataType, ...]) -> str:
    return ", ".join(d.name.removeprefix("ACL_") for d in dtypes)


def _check_dtype(grad_output: aclTensor, self: aclTensor, out: aclTensor) -> None:
    support = GetDtypeSupportList()
    for name, t in (("gradOutput", grad_output), ("self", self)):
        if t.dtype not in support:
            raise ParamError(ACLNN_ERR_PARAM_INVALID,
                             f"{name} dtype {t.dtype.name.removeprefix('ACL_')} should be in dtype support "
                             f"list [{_names(support)}] on {current_soc().name}.")
    promote = PromoteType(grad_output.dtype, self.dtype)
    if not CanCast(promote, out.dtype):
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"promote dtype {promote.name.removeprefix('ACL_')} of gradOutput and self can't "
                         f"cast to the dtype of out {out.dtype.name.removeprefix('ACL_')}.")


def _check_shape(grad_output: aclTensor, self: aclTensor, out: aclTensor) -> None:
    for name, t in (("gradOutput", grad_output), ("self", self), ("out", out)):
        if t.ndim > MAX_SUPPORT_DIMS_NUMS:
            raise ParamError(ACLNN_ERR_PARAM_INVALID,
                             f"{name}'s dim num should not be greater than {MAX_SUPPORT_DIMS_NUMS}, "
                             f"but got {t.ndim}.")
    for name, t in (("gradOutput", grad_output), ("out", out)):
        if tuple(self.view_dims) != tuple(t.view_dims):
            raise ParamError(ACLNN_ERR_PARAM_INVALID,
                             f"Shape of self and {name} should be equal, self {list(self.view_dims)}, "
                             f"{name} {list(t.view_dims)}.")


def HardSigmoidGrad(grad: aclTensor, x: aclTensor, alpha: np.float32, beta: np.float32,
                    executor: aclOpExecutor) -> aclTensor:
    """``l0op::HardSigmoidGrad``: infer the output, run tiling now (phase 1), launch in phase 2."""
    out = executor.alloc_tensor(op_host.infer_shape(x.view_dims), x.dtype, name="grad_input")
    kernel_node(registry.get("hard_sigmoid_grad"), [grad, x], out, {"alpha": float(alpha), "beta": float(beta)},
                executor, why="the AI Core kernel")
    return out


@guard_phase1(API)
def aclnnHardsigmoidBackwardGetWorkspaceSize(gradOutput: aclTensor | None, self: aclTensor | None,
                                             out: aclTensor | None, workspaceSize=OUT,
                                             executor=OUT) -> tuple[int, int, aclOpExecutor | None]:
    """Phase 1. Returns ``(status, workspace_size, executor)``; pass ``workspaceSize=None`` or
    ``executor=None`` to re-enact a nullptr out-pointer."""
    if workspaceSize is None or executor is None:
        raise ParamError(ACLNN_ERR_PARAM_NULLPTR,
                         f"{'workspaceSize' if workspaceSize is None else 'executor'} should not be nullptr.")
    exe = aclOpExecutor(API2)
    for name, t in (("gradOutput", gradOutput), ("self", self), ("out", out)):
        check_tensor_type(name, t)
    check_not_null("gradOutput", gradOutput)
    check_not_null("self", self)
    check_not_null("out", out)
    _check_dtype(gradOutput, self, out)
    _check_shape(gradOutput, self, out)

    if gradOutput.IsEmpty() or self.IsEmpty() or out.IsEmpty():
        return ACLNN_SUCCESS, 0, exe

    promote = PromoteType(gradOutput.dtype, self.dtype)
    g = l0_ops.Cast(l0_ops.Contiguous(gradOutput, exe), promote, exe)
    s = l0_ops.Cast(l0_ops.Contiguous(self, exe), promote, exe)
    kernel, _ = dispatch(registry.get("hard_sigmoid_grad"), current_soc())
    y = HardSigmoidGrad(g, s, aclnn_alpha(kernel.flavour), BETA, exe)
    y = l0_ops.Cast(y, out.dtype, exe)
    l0_ops.ViewCopy(y, out, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnHardsigmoidBackward(workspace: DevicePtr | None, workspaceSize: int,
                             executor: aclOpExecutor | None, stream: aclrtStream | None) -> int:
    """Phase 2: run the executor on ``stream`` with the caller's workspace."""
    return CommonOpExecutorRun(API2, workspace, workspaceSize, executor, stream)


def default_out(arrays: Mapping[str, np.ndarray | None], out_dtype: Any) -> tuple[tuple[int, ...], Any] | None:
    """``out`` as torch_npu allocates it: ``x``'s shape in ``out_dtype`` or PromoteType(grad, x)."""
    g, s = arrays.get("grad_output"), arrays.get("x")
    if s is None:
        return None
    if out_dtype is not None:
        return s.shape, as_acl_dtype(out_dtype)
    if g is None:
        return s.shape, as_acl_dtype(s.dtype)
    dt = PromoteType(g.dtype, s.dtype)
    return s.shape, (as_acl_dtype(s.dtype) if dt == DT.ACL_DT_UNDEFINED else dt)


ACLNN = AclnnSpec(
    api=API2, get_workspace_size=aclnnHardsigmoidBackwardGetWorkspaceSize, run=aclnnHardsigmoidBackward,
    convenience="hardsigmoid_backward",
    formula="grad_input = grad*alpha if 0 < alpha*x+beta < 1 else 0",
    tensors=(("grad_output", "gradOutput"), ("x", "self")), default_out=default_out,
    dtype_support=GetDtypeSupportList, l0_ops=("HardSigmoidGrad",),
)

"""Phase 1 of the gallery's activation-backward APIs (aclnnSiluBackward, aclnnGeluBackward,
aclnnHardswishBackward): the same checks and the same three-node graph, written once.

Each operator keeps its own ``op_api.py`` with its own aclnn functions, as CANN keeps one file per API; what they
share -- non-null aclTensors of a dtype the op definition lists, one dtype and one shape for all three, then
Contiguous -> kernel -> ViewCopy -- lives here so no operator package imports another.
"""

from __future__ import annotations

from typing import Any

from ...opdev import l0_ops
from ...opdev.aclnn_common import ParamError, check_not_null, check_tensor_type
from ...opdev.errno import ACLNN_ERR_PARAM_INVALID
from ...opdev.executor import aclOpExecutor
from ...opdev.op_def import OpDef
from ..spec import OpSpec
from .l0_kernel import kernel_node

__all__ = ["backward_graph", "check_backward_tensors"]


def check_backward_tensors(op_def: OpDef, grad_output: Any, self: Any, grad_input: Any) -> None:
    """ParamError (a status code through ``guard_phase1``) unless all three are non-null aclTensors of one dtype
    that ``op_def`` lists, with one shape."""
    tensors = (("gradOutput", grad_output), ("self", self), ("gradInput", grad_input))
    for name, t in tensors:
        check_tensor_type(name, t)
        check_not_null(name, t)
    for name, t in tensors:
        if t.dtype not in op_def.dtypes or t.dtype != self.dtype:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} dtype {t.dtype.short} is not supported ({op_def.name} "
                             f"takes {', '.join(d.short for d in op_def.dtypes)}, all three the same)")
        if tuple(t.view_dims) != tuple(self.view_dims):
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} shape {list(t.view_dims)} differs from self's "
                             f"{list(self.view_dims)}")


def backward_graph(spec: OpSpec, grad_output: Any, self: Any, grad_input: Any, exe: aclOpExecutor) -> None:
    """Contiguous copies of the inputs -> the operator's kernel node -> ViewCopy into ``grad_input``."""
    dy, x = (l0_ops.Contiguous(t, exe) for t in (grad_output, self))
    dx = exe.alloc_tensor(tuple(x.view_dims), x.dtype, name="dx")
    kernel_node(spec, [dy, x], dx, {}, exe, why="the AI Core kernel")
    l0_ops.ViewCopy(dx, grad_input, exe)

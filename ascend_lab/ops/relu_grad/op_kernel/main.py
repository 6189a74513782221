"""ReluGrad on Ascend950: the ops-nn main-tree kernel (``relu_grad_apt``), a DAG on the atvoss template.

Mirrors ``ops-nn:activation/relu_grad/op_kernel/arch35/relu_grad_dag.h`` and
``op_host/arch35/relu_grad_tiling_arch35.cpp`` (kernel_flavours.md §3.1-§3.2, §3.7):

* ``m = Select(Compare LE(features, 0), 0, 1)`` and ``out = gradients * m``, all in T ("follow
  tensorflow"); int8/uint8 multiply in half ("mul not supported for int8 on microapi") and cast back RINT;
* so a NaN feature keeps its gradient (LE is false, m = 1), while an inf or NaN gradient where
  features <= 0 gives NaN (inf * 0) and a negative gradient there gives -0; int32/int64 are exact;
* no scalar, two inputs and one output: a one-dimensional problem takes schMode 202 ("advance");
* the host encodes int64 with the **int32** id 6 (``relu_grad_tiling_arch35.cpp:67-70``); reproduced.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ....ascendc import KernelRun
from ....atvoss import (
    CAST_NONE,
    CAST_RINT,
    CMP_LE,
    BroadcastOneDimTilingDataAdvance,
    Cast,
    Compare,
    CopyInBrc,
    CopyOut,
    Dag,
    Duplicate,
    In,
    Mul,
    Select,
    broadcast_sch,
)
from ....atvoss.kernel import TemplateOp
from ....dtypes import bfloat16
from ...common.template_launch import launch_template

__all__ = ["ARGS", "BUFFER_NUM", "DTYPE_IDS", "OP", "TilingData", "core_ranges", "dag", "launch", "relu_grad",
           "template_args", "tiling", "tiling_for_shapes", "workspace_size"]

F16 = np.dtype(np.float16)
I8, U8 = np.dtype(np.int8), np.dtype(np.uint8)
ARGS = ("gradients", "features", "backprops")
BUFFER_NUM = 2
TilingData = BroadcastOneDimTilingDataAdvance

#: ``relu_grad_struct.h`` ids, as the host uses them: int64 is encoded with int32's id 6 (§3.1).
DTYPE_IDS: dict[np.dtype, int] = {F16: 1, bfloat16: 2, np.dtype(np.float32): 3, I8: 4, U8: 5,
                                  np.dtype(np.int32): 6, np.dtype(np.int64): 6}


@cache
def dag(dtype: Any) -> Dag:
    """``ReluGradDag<T>`` (``ReluGradCastDag<T>`` for int8/uint8) of §3.2."""
    T = np.dtype(dtype)
    grad = CopyInBrc(In(0, T), name="CopyInBrc gradients")
    feat = CopyInBrc(In(1, T), name="CopyInBrc features")
    zero = Duplicate(T, 0.0, name="Duplicate 0")
    mask = Compare(feat, zero, CMP_LE)
    m = Select(mask, zero, Duplicate(T, 1.0, name="Duplicate 1"))
    if T in (I8, U8):
        out = Cast(T, Mul(Cast(F16, grad, CAST_NONE), Cast(F16, m, CAST_NONE)), CAST_RINT)
        return Dag([CopyOut(0, out)], f"ReluGradCastDag<{T.name}>")
    return Dag([CopyOut(0, Mul(grad, m))], f"ReluGradDag<{T.name}>")


OP = TemplateOp("ReluGrad", dag, DTYPE_IDS)


def tiling(input_num: int, dtype: Any, core_num: int, ub_size: int) -> Any:
    """The arch35 tiling for two inputs of ``input_num`` elements (schMode 202)."""
    return OP.tiling(input_num, dtype, core_num, ub_size)


def tiling_for_shapes(shapes: Any, out_shape: Any, dtype: Any, core_num: int, ub_size: int) -> Any:
    """The arch35 tiling on the inputs' own shapes (broadcast: the general NDDMA / UB-broadcast tiling)."""
    return OP.tiling_for_shapes(shapes, out_shape, dtype, core_num, ub_size)


core_ranges = OP.core_ranges
template_args = OP.template_args
workspace_size = OP.workspace_size


def relu_grad(*args: Any, dag: Dag, sch_mode: int, tiling_class: type) -> None:
    """The ``__global__ __aicore__`` entry (``relu_grad_apt.cpp``): ``BroadcastSch<schMode, Dag>``."""
    broadcast_sch(*args, dag=dag, sch_mode=sch_mode, tiling_class=tiling_class)


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch with the graph's aclTensors (``ops.common.template_launch``: inputs of different shapes are re-tiled on
    their own shapes); ``buffer_num`` is accepted for a uniform signature: the template has no BUFFER_NUM."""
    return launch_template(OP, relu_grad, td, (grad, feat), out, soc, ARGS, record=record, cores=cores)

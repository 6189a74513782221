"""ThresholdGradV2D on Ascend950: the ops-nn main-tree kernel, a DAG on the atvoss template.

Mirrors ``ops-nn:activation/threshold_grad_v2_d/op_kernel/arch35/threshold_grad_v2_d_dag.h`` (the DAGs),
``op_host/arch35/threshold_grad_v2_d_tiling_arch35.cpp`` (the tiling) and ``op_kernel/threshold_grad_v2_d.cpp``
(the entry), as kernel_flavours.md §3.1-§3.2 and §3.7 describe them:

* every dtype compares in **fp32 against the fp32 threshold** (``Var0``, ``SetScalar<float>(thr)``):
  ``mask = Compare LE(float(self), thr)``; ``out = Select(mask, 0, float(grad))`` cast back with CAST_RINT.
  A NaN self gives LE false, so the gradient passes; fp16/bf16 never round the threshold to half;
* int32 goes through fp32 with CAST_RINT both ways (inexact beyond 2^24); int8/uint8 through half (exact);
* the inputs broadcast natively (``CopyInBrc``); the tiling requests a 16 MiB workspace.

The threshold is a Var, so a one-dimensional problem takes schMode 201, never 202.
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
    BroadcastOneDimTilingData,
    Cast,
    Compare,
    CopyInBrc,
    CopyOut,
    Dag,
    Duplicate,
    In,
    Select,
    Var,
    broadcast_sch,
)
from ....atvoss.kernel import TemplateOp
from ....dtypes import bfloat16
from ...common.template_launch import launch_template

__all__ = ["ARGS", "BUFFER_NUM", "DTYPE_IDS", "OP", "core_ranges", "dag", "launch", "template_args", "tiling",
           "threshold_grad_v2_d", "workspace_size", "TilingData"]

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
I8, U8, I32 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32)
ARGS = ("input_gradient", "input_feature", "output_backprops")
BUFFER_NUM = 2          # the ping/pong slots of every copy-in and copy-out
TilingData = BroadcastOneDimTilingData

#: ``threshold_grad_v2_d_struct.h``: the dtype ids of the tiling key (§3.1).
DTYPE_IDS: dict[np.dtype, int] = {F16: 1, bfloat16: 2, F32: 3, I32: 4, I8: 5, U8: 6}


@cache
def dag(dtype: Any) -> Dag:
    """The DAG of §3.2 for input dtype ``U``: self first (Cast to fp32, Compare LE against the threshold),
    then a zero tile, then grad (Cast to fp32), Select(mask, 0, grad), Cast back with CAST_RINT.
    int32 casts in with RINT; int8/uint8 go through half; fp32's casts vanish (IsCastNoOp)."""
    U = np.dtype(dtype)
    in_mode = CAST_RINT if U == I32 else CAST_NONE

    def widen(node: Any) -> Any:
        if U in (I8, U8):
            return Cast(F32, Cast(F16, node, CAST_NONE), CAST_NONE)
        return Cast(F32, node, in_mode)

    self_f = widen(CopyInBrc(In(1, U), name="CopyInBrc self"))
    mask = Compare(self_f, Duplicate(F32, Var(0, F32), name="Duplicate threshold"), CMP_LE)
    zero = Duplicate(F32, 0.0, name="Duplicate 0")
    grad_f = widen(CopyInBrc(In(0, U), name="CopyInBrc grad"))
    sel = Select(mask, zero, grad_f)
    out = Cast(F16, sel, CAST_RINT) if U in (I8, U8) else sel
    return Dag([CopyOut(0, Cast(U, out, CAST_RINT))], f"ThresholdGradV2DDag<{U.name}>")


OP = TemplateOp("ThresholdGradV2D", dag, DTYPE_IDS, scalars=lambda attrs: (attrs.get("threshold", 1.0),))


def tiling(input_num: int, dtype: Any, core_num: int, ub_size: int, threshold: float = 1.0) -> Any:
    """The arch35 tiling for two inputs of ``input_num`` elements (schMode 201; threshold in scalarData)."""
    return OP.tiling(input_num, dtype, core_num, ub_size, threshold=threshold)


def tiling_for_shapes(shapes: Any, out_shape: Any, dtype: Any, core_num: int, ub_size: int,
                      threshold: float = 1.0) -> Any:
    """The arch35 tiling on the inputs' own shapes (broadcast: the general NDDMA / UB-broadcast tiling)."""
    return OP.tiling_for_shapes(shapes, out_shape, dtype, core_num, ub_size, threshold=threshold)


core_ranges = OP.core_ranges
template_args = OP.template_args
workspace_size = OP.workspace_size


def threshold_grad_v2_d(*args: Any, dag: Dag, sch_mode: int, tiling_class: type) -> None:
    """The ``__global__ __aicore__`` entry (KERNEL_TYPE_AIV_ONLY): ``BroadcastSch<schMode, Dag>``."""
    broadcast_sch(*args, dag=dag, sch_mode=sch_mode, tiling_class=tiling_class)


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch with the graph's aclTensors (``ops.common.template_launch``: inputs of different shapes are re-tiled on
    their own shapes); ``buffer_num`` is accepted for a uniform signature: the template has no BUFFER_NUM."""
    return launch_template(OP, threshold_grad_v2_d, td, (grad, feat), out, soc, ARGS, record=record, cores=cores,
                           threshold=td.scalar(0))

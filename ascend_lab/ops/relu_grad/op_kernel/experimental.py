"""ReluGrad on the simulated AI Core (ThresholdBackward with |threshold| <= FLT_EPSILON).

Modelling note. The experimental AscendC ReluGrad (ascend910b) uses ThresholdGradV2D's tiling scheme
with its own UB numbers, but its int32 number (6 blocks) leaves no room for three double-buffered queues
once the 8 KB Select reserve is taken, and its bf16 scale constants wrap to 0 (cann_facts §5): its
internals are not something the simulator can reproduce faithfully. The simulator therefore runs ReluGrad
on ThresholdGradV2D's kernel skeleton and tiling numbers, with the ReluGrad mask of the current kernels:
``out = (features <= 0) ? 0 : gradients`` (CompareScalar LE, Not, Select), through fp32 for bf16/int32 and
half for int8/uint8, natively for fp32/fp16/int64. The book says so where ReluGrad appears.
"""

from __future__ import annotations

from typing import Any

from ....ascendc import KernelRun
from ...threshold_grad_v2_d.op_kernel import experimental as _tgv2d

#: The ``__global__`` entry: ThresholdGradV2D's, run with ``relu=True``.
relu_grad = _tgv2d.threshold_grad_v2_d
BUFFER_NUM = _tgv2d.BUFFER_NUM


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """ThresholdGradV2D's template arguments with the ReluGrad switch on."""
    return _tgv2d.template_args(td, dtype, buffer_num, relu=True)


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch ReluGrad with aclTensors from the L0 graph (phase 2)."""
    return _tgv2d.launch(td, grad, feat, out, soc, record=record, buffer_num=buffer_num, cores=cores, relu=True)

"""The experimental ThresholdGradV2D AI Core kernel: C++, in ``experimental/`` as ops-nn lays it out.

``experimental/threshold_grad_v2_d.cpp`` is the entry; it instantiates ``KernelThresholdGradV2D<DTYPE_INPUT_GRADIENT>``
(``threshold_grad_v2_d.h``), where ``DTYPE_INPUT_GRADIENT`` is the macro the build defines from the op definition's
input ``input_gradient`` -- one binary per dtype, here one preprocessed variant per launch dtype (cann_facts §4.2).
The first ``tailBlockNum`` cores are "big" (one 256-byte block more); each core runs ``tileNum`` tiles of
``tileDataNum`` elements, the last one ``tailDataNum`` long. Copies are plain ``DataCopy`` of whole 256-byte blocks,
so the last core **reads and writes up to 255 bytes past the logical end** of the tensors: the simulator lets it (as
the device does) and records each such access as a ``gm-padding`` warning in the trace.

Compute per dtype: mask = CompareScalar(feature, threshold, GT); out = Select(mask ? grad : 0). fp16 compares against
``half(threshold)``; bf16 goes through fp32 and back with CAST_RINT; int32 through fp32 (CAST_NONE) and back with
CAST_TRUNC; int8/uint8 through half and fp32 and back with CAST_TRUNC. The int8 path uses its second half-sized temp
as a float tensor, overrunning it into free UB (a ``ub-overrun`` warning), exactly as the source does.

ReluGrad (threshold 0) has its own experimental kernel, ``relu_grad/op_kernel/experimental/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....ascendc import KernelRun, cxx
from ....ascendc import launch as _launch
from ....dtypes import to_numpy
from ...common.kernel_args import gm_arg, launch_options

#: The kernel's folder (ops-nn: ``experimental/activation/threshold_grad_v2_d/op_kernel/``).
SOURCE_DIR = Path(__file__).with_name("experimental")
#: ``static constexpr int32_t BUFFER_NUM = 2`` in the C++; a launch's ``bufferNum`` overrides it.
BUFFER_NUM = 2

#: The ``__global__`` entry ``threshold_grad_v2_d<schMode>``, compiled per input dtype on first launch.
threshold_grad_v2_d = cxx.KernelFile(SOURCE_DIR / "threshold_grad_v2_d.cpp", entry="threshold_grad_v2_d",
                                     knobs={"bufferNum": "BUFFER_NUM"},
                                     dtype_macros={"dtype": "DTYPE_INPUT_GRADIENT"})


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: the tiling key ``schMode``, ``DTYPE_INPUT_GRADIENT`` (as a numpy dtype) and
    BUFFER_NUM."""
    return {"schMode": td.tilingKey, "dtype": to_numpy(dtype), "bufferNum": buffer_num}


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (phase 2)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    names = ("input_gradient", "input_feature", "output_backprops")
    args = [gm_arg(t, name) for t, name in zip((grad, feat, out), names, strict=True)]
    return _launch(threshold_grad_v2_d, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=rec,
                   kernel_name="ThresholdGradV2D", tiling_data=td, cores=cores,
                   **template_args(td, grad.dtype, buffer_num))

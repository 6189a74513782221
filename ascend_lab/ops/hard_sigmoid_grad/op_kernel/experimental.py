"""The experimental HardSigmoidGrad AI Core kernel: C++, in ``experimental/`` as ops-nn lays it out.

``experimental/hard_sigmoid_grad_apt.cpp`` is the ``__global__ __aicore__`` entry, templated on the tiling key
``schMode`` (0 fp32, 1 fp16, 2 bf16; ``arch35/hard_sigmoid_grad_tiling_key.h``); ``arch35/hard_sigmoid_grad.h``
computes float and half natively in T (``half(alpha)`` for fp16), ``arch35/hard_sigmoid_grad_bf16.h`` casts bf16 to
fp32, computes there and casts back with CAST_ROUND; ``arch35/hard_sigmoid_grad_tiling_data.h`` is the struct the
host's ``op_host.HardSigmoidGradTilingData`` fills (a test checks the two field lists). cann_facts §2.3-2.4.
The C++ runs through :mod:`ascend_lab.ascendc.cxx`; this module only launches it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....ascendc import KernelRun, cxx
from ....ascendc import launch as _launch
from ...common.kernel_args import gm_arg, launch_options

#: The kernel's folder (ops-nn: ``experimental/activation/hard_sigmoid_grad/op_kernel/``).
SOURCE_DIR = Path(__file__).with_name("experimental")
#: ``static constexpr int32_t BUFFER_NUM = 2`` in the C++; a launch's ``bufferNum`` overrides it (the book's study).
BUFFER_NUM = 2

#: The ``__global__`` entry ``hard_sigmoid_grad<schMode>``, compiled on first launch.
hard_sigmoid_grad = cxx.KernelFile(SOURCE_DIR / "hard_sigmoid_grad_apt.cpp", entry="hard_sigmoid_grad",
                                   knobs={"bufferNum": "BUFFER_NUM"})


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: ``schMode`` from the tiling key (the dtype), and BUFFER_NUM."""
    return {"schMode": td.tilingKey, "bufferNum": buffer_num}


def launch(td: Any, grad: Any, x: Any, out: Any, soc: Any, op_name: str = "HardSigmoidGrad",
           record: bool | None = None, buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (called by the L0 op in phase 2)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    return _launch(hard_sigmoid_grad, td.blockDim, [gm_arg(grad, "gradOutput"), gm_arg(x, "self"),
                                                    gm_arg(out, "gradInput")],
                   td.to_bytes(), soc, outputs=(2,), record=rec, kernel_name=op_name, tiling_data=td,
                   cores=cores, **template_args(td, None, buffer_num))

"""The shipping HardSigmoidGrad on Ascend950: the ops-nn main-tree arch35 kernel, C++ in ``main/``.

``main/hard_sigmoid_grad_apt.cpp`` is the entry ``hard_sigmoid_grad<schMode>`` (0 fp32, 1 fp16, 2 bf16) and
``main/arch35/hard_sigmoid_grad.h`` the class (kernel_flavours.md §2.2). This is the kernel a stock CANN install runs
on 950 (its op definition registers ``ascend950`` only, §1); the experimental kernel next to it is the custom package
the seed articles describe. What differs from the experimental one:

* one template ``HardSigmoidGrad<T>`` for float, half and bfloat16: fp32 computes natively, fp16 *and* bf16 are cast
  to fp32 (CAST_NONE, exact), computed there, and cast back once -- half with CAST_RINT, bf16 with CAST_ROUND -- so
  fp16 no longer uses ``half(alpha)``;
* alpha arrives as ``1.0f/6.0f`` from the main tiling (``op_host.tiling_main950``);
* ``tmp`` is pre-filled with -1.0 over the whole 256-byte-aligned compare window (``Duplicate``) so the compare bits
  past the tile's last element are 0 whatever the buffer held before;
* the UB plan is grad/self/out queues, tmp, then gradF32 and selfF32 (fp16/bf16 only), then the mask, from a tiling
  that budgets 4 B per element (``ubFactor`` a multiple of 64).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....ascendc import SELMODE, KernelRun, cxx
from ....ascendc import launch as _launch
from ...common.kernel_args import gm_arg, launch_options

__all__ = ["BUFFER_NUM", "SELMODE", "SOURCE_DIR", "hard_sigmoid_grad", "launch", "template_args"]

#: The kernel's folder (ops-nn: ``activation/hard_sigmoid_grad/op_kernel/``).
SOURCE_DIR = Path(__file__).with_name("main")
#: ``static constexpr int32_t BUFFER_NUM = 2`` (double buffering); a launch's ``bufferNum`` overrides it.
BUFFER_NUM = 2

#: The ``__global__`` entry ``hard_sigmoid_grad<schMode>``, compiled on first launch.
hard_sigmoid_grad = cxx.KernelFile(SOURCE_DIR / "hard_sigmoid_grad_apt.cpp", entry="hard_sigmoid_grad",
                                   knobs={"bufferNum": "BUFFER_NUM"})


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: ``schMode`` from the tiling key (the dtype), and BUFFER_NUM."""
    return {"schMode": td.tilingKey, "bufferNum": buffer_num}


def launch(td: Any, grad: Any, x: Any, out: Any, soc: Any, op_name: str = "HardSigmoidGrad",
           record: bool | None = None, buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (called by the L0 op in phase 2).
    ``td`` must come from ``op_host.tiling_main950``; any SoC is accepted (a what-if study)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    return _launch(hard_sigmoid_grad, td.blockDim, [gm_arg(grad, "gradOutput"), gm_arg(x, "self"),
                                                    gm_arg(out, "gradInput")],
                   td.to_bytes(), soc, outputs=(2,), record=rec, kernel_name=op_name, tiling_data=td,
                   cores=cores, **template_args(td, None, buffer_num))

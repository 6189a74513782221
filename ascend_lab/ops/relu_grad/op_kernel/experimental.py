"""The experimental ReluGrad AI Core kernel (ops-nn custom package, ascend910b): C++, in ``experimental/``.

``experimental/relu_grad.cpp`` is the entry; it instantiates ``KernelReluGrad<DTYPE_GRADIENTS>`` (``relu_grad.h``),
``DTYPE_GRADIENTS`` being the macro the build defines from the op definition's input ``gradients`` (kernel_flavours.md
§4):

* ``Init``: the first ``tailBlockNum`` cores are big; offsets as in the experimental ThresholdGradV2D. The UB plan, in
  ``InitBuffer`` order: the temporaries first (fp32/fp16 a ``tileData`` x 1 B mask; bf16 two fp32 temporaries;
  int8/uint8 two half temporaries; int32 none), then the X (gradients), Y (features) and Out queues of
  ``BUFFER_NUM`` x ``tileData * sizeof(T)`` each.
* ``Process``: ``tileNum - 1`` full tiles, then the tail. Copies are plain ``DataCopy`` of ``processDataNum``
  elements, always whole 256-byte blocks, so the last core reads and writes up to 255 B past the logical end of the
  tensors (recorded as ``gm-padding`` warnings, as for ThresholdGradV2D).
* ``Compute``, per dtype, with the source's constants:

  - fp32, fp16: ``CompareScalar(mask, feat, 0, LE)``; ``Duplicate(feat, 0)`` over the features buffer;
    ``Select(out, mask, feat, grad, VSEL_TENSOR_TENSOR_MODE)``: x <= 0 -> +0, else grad (NaN x -> grad).
  - bf16, in fp32: clamp the feature to [0, 2^-126] with ``Min``/``Max``, multiply by ``float(C)``, ``float(D)``,
    ``float(D)``, multiply by the gradient, ``Cast`` back with CAST_RINT. The scale constants are ``int``
    constants initialised with 2^38 and 2^44, which do not fit an ``int`` and wrap to **0** (the front end converts
    them as C++ does), so the mask is 0 and the output is grad * 0: +-0, or NaN for inf/NaN gradients or NaN
    features. This is a defect of the source, reproduced here; what the device does is UNCONFIRMED.
  - int8, uint8, in half: the same chain with 2^-24 (a half subnormal) and 4096 twice: mask 1 for x >= 1, 0 for
    x <= 0, exact if the vector unit keeps half subnormals (the simulator does; UNCONFIRMED on device); ``Cast``
    back with CAST_RINT.
  - int32: ``Min(feat, 1)``, ``Max(., 0)``, two multiplies by 1, then grad * mask: exact.

The kernel issues Select only on the fp32/fp16 paths; those plans (174400 B and 181376 B at a 196352 B UB) stay below
the library's 184 KB Select scratch. The bf16, int8/uint8 and int32 plans fill the UB almost to the top (194560 B,
194560 B, 195072 B) and issue no Select.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....ascendc import KernelRun, cxx
from ....ascendc import launch as _launch
from ....dtypes import to_numpy
from ...common.kernel_args import gm_arg, launch_options

#: The kernel's folder (ops-nn: ``experimental/activation/relu_grad/op_kernel/``).
SOURCE_DIR = Path(__file__).with_name("experimental")
#: ``static constexpr int32_t BUFFER_NUM = 2`` in the C++; a launch's ``bufferNum`` overrides it.
BUFFER_NUM = 2

#: The ``__global__`` entry ``relu_grad<schMode>``, compiled per input dtype on first launch.
relu_grad = cxx.KernelFile(SOURCE_DIR / "relu_grad.cpp", entry="relu_grad", knobs={"bufferNum": "BUFFER_NUM"},
                           dtype_macros={"dtype": "DTYPE_GRADIENTS"})


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: the tiling key ``schMode``, ``DTYPE_GRADIENTS`` (as a numpy dtype) and
    BUFFER_NUM."""
    return {"schMode": td.tilingKey, "dtype": to_numpy(dtype), "bufferNum": buffer_num}


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (phase 2)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    args = [gm_arg(t, name) for t, name in zip((grad, feat, out), ("gradients", "features", "backprops"),
                                                strict=True)]
    return _launch(relu_grad, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=rec,
                   kernel_name="ReluGrad", tiling_data=td, cores=cores, **template_args(td, grad.dtype, buffer_num))

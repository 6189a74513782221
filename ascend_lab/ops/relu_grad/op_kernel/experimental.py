"""The experimental ReluGrad AI Core kernel (ops-nn custom package, ascend910b), written against
``ascend_lab.ascendc`` as the real one is.

Mirrors ``ops-nn:experimental/activation/relu_grad/op_kernel/relu_grad.h`` (``kernel_flavours.md`` §4):

* ``Init``: the first ``tailBlockNum`` cores are big; offsets as in the experimental ThresholdGradV2D. The
  UB plan, in ``InitBuffer`` order: the temporaries first (fp32/fp16 a ``tileData`` x 1 B mask; bf16 two
  fp32 temporaries; int8/uint8 two half temporaries; int32 none), then the X (gradients), Y (features) and
  Out queues of ``BUFFER_NUM`` x ``tileData * sizeof(T)`` each.
* ``Process``: ``tileNum - 1`` full tiles, then the tail. Copies are plain ``DataCopy`` of
  ``processDataNum`` elements, always whole 256-byte blocks, so the last core reads and writes up to 255 B
  past the logical end of the tensors (recorded as ``gm-padding`` warnings, as for ThresholdGradV2D).
* ``Compute``, per dtype, with the source's constants:

  - fp32, fp16: ``CompareScalar(mask, feat, 0, LE)``; ``Duplicate(feat, 0)`` over the features buffer;
    ``Select(out, mask, feat, grad, VSEL_TENSOR_TENSOR_MODE)``: x <= 0 -> +0, else grad (NaN x -> grad).
  - bf16, in fp32: clamp the feature to [0, 2^-126] with ``Min``/``Max``, multiply by ``float(C)``,
    ``float(D)``, ``float(D)``, multiply by the gradient, ``Cast`` back with CAST_RINT. The scale constants
    are ``constexpr int`` initialised with 2^38 and 2^44, which do not fit an ``int`` and wrap to **0**,
    so the mask is 0 and the output is grad * 0: +-0, or NaN for inf/NaN gradients or NaN features. This is
    a defect of the source, reproduced here; what the device does is UNCONFIRMED.
  - int8, uint8, in half: the same chain with 2^-24 (a half subnormal) and 4096 twice: mask 1 for x >= 1,
    0 for x <= 0, exact if the vector unit keeps half subnormals (the simulator does; UNCONFIRMED on
    device); ``Cast`` back with CAST_RINT.
  - int32: ``Min(feat, 1)``, ``Max(., 0)``, two multiplies by 1, then grad * mask: exact.

The kernel issues Select only on the fp32/fp16 paths; those plans (174400 B and 181376 B at a 196352 B UB)
stay below the library's 184 KB Select scratch. The bf16, int8/uint8 and int32 plans fill the UB almost
to the top (194560 B, 194560 B, 195072 B) and issue no Select.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Cast,
    CompareScalar,
    DataCopy,
    Duplicate,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    KernelRun,
    Max,
    Min,
    Mul,
    RoundMode,
    Select,
    TBuf,
    TPipe,
    TQue,
    bfloat16_t,
    float_,
    half,
    int8_t,
    int32_t,
    sizeof,
    uint8_t,
)
from ....ascendc import launch as _launch
from ....dtypes import to_numpy
from ....opdev.tiling_data import GET_TILING_DATA
from ...kernel_args import gm_arg, launch_options
from ..op_host import ReluGradTilingData

__all__ = ["BUFFER_NUM", "SCALAR_BF16_C", "SCALAR_BF16_D", "KernelReluGrad", "constexpr_int", "launch", "relu_grad",
           "template_args"]

BUFFER_NUM = 2


def constexpr_int(literal: int) -> int:
    """The value of ``constexpr int x = literal;``: a literal outside ``int`` is converted modulo 2^32
    (implementation-defined before C++20, defined since; GCC and Clang wrap, with a warning)."""
    return (literal + 2**31) % 2**32 - 2**31


# The source's constants (relu_grad.h :26-36), named as there.
SCALAR_FLOAT = 0.0
SCALAR_HALF = 0.0
SCALAR_BF16_A = np.float32(2.0**-126)            # written as the decimal 1.1754943508222875e-38 (FLT_MIN)
SCALAR_BF16_B = 0.0
SCALAR_BF16_C = constexpr_int(274877906944)      # 2^38 -> 0
SCALAR_BF16_D = constexpr_int(17592186044416)    # 2^44 -> 0
SCALAR_UINT8ORINT8_A = 2.0**-24                  # 0.000000059604644775390625: the smallest half subnormal
SCALAR_UINT8ORINT8_B = 0.0
SCALAR_UINT8ORINT8_C = 4096
SCALAR_INT32_A = 0
SCALAR_INT32_B = 1

_FLOAT_HALF = (np.dtype(float_), np.dtype(half))
_I8 = (np.dtype(int8_t), np.dtype(uint8_t))
_BF16 = np.dtype(bfloat16_t)
_I32 = np.dtype(int32_t)


class KernelReluGrad:
    """``NsReluGrad::KernelReluGrad<TYPE_GRADIENTS>``: X = gradients, Y = features, Out = backprops."""

    def __init__(self, T: Any, buffer_num: int = BUFFER_NUM):
        self.T = np.dtype(T)
        if self.T not in (*_FLOAT_HALF, _BF16, *_I8, _I32):
            raise TypeError(f"the experimental ReluGrad has no kernel for {self.T}: its op definition registers "
                            "float32, float16, bfloat16, int8, uint8 and int32")
        self.bufferNum = buffer_num
        self.pipe = TPipe()
        self.inQueueX = TQue(VECIN, buffer_num)
        self.inQueueY = TQue(VECIN, buffer_num)
        self.outQueueOut = TQue(VECOUT, buffer_num)
        self.tmpQueue1 = TBuf(VECCALC)
        self.tmpQueue2 = TBuf(VECCALC)
        self.tmpQueueMask1 = TBuf(VECCALC)
        self.xGm = GlobalTensor(T)
        self.yGm = GlobalTensor(T)
        self.outGm = GlobalTensor(T)

    def Init(self, gradients: GmAddr, features: GmAddr, backprops: GmAddr, td: Any) -> None:
        T = self.T
        core_id = GetBlockIdx()
        global_buffer_index = td.bigCoreDataNum * core_id
        self.tileDataNum = td.tileDataNum
        if core_id < td.tailBlockNum:                                      # a big core
            self.coreDataNum = td.bigCoreDataNum
            self.tileNum = td.finalBigTileNum
            self.tailDataNum = td.bigTailDataNum
        else:
            self.coreDataNum = td.smallCoreDataNum
            self.tileNum = td.finalSmallTileNum
            self.tailDataNum = td.smallTailDataNum
            global_buffer_index -= (td.bigCoreDataNum - td.smallCoreDataNum) * (core_id - td.tailBlockNum)
        off = global_buffer_index * sizeof(T)
        self.xGm.SetGlobalBuffer(gradients + off, self.coreDataNum)
        self.yGm.SetGlobalBuffer(features + off, self.coreDataNum)
        self.outGm.SetGlobalBuffer(backprops + off, self.coreDataNum)
        if T in _FLOAT_HALF:
            self.pipe.InitBuffer(self.tmpQueueMask1, self.tileDataNum * sizeof(uint8_t))
        elif T == _BF16:
            self.pipe.InitBuffer(self.tmpQueue1, self.tileDataNum * sizeof(float_))
            self.pipe.InitBuffer(self.tmpQueue2, self.tileDataNum * sizeof(float_))
        elif T in _I8:
            self.pipe.InitBuffer(self.tmpQueue1, self.tileDataNum * sizeof(half))
            self.pipe.InitBuffer(self.tmpQueue2, self.tileDataNum * sizeof(half))
        self.pipe.InitBuffer(self.inQueueX, self.bufferNum, self.tileDataNum * sizeof(T))
        self.pipe.InitBuffer(self.inQueueY, self.bufferNum, self.tileDataNum * sizeof(T))
        self.pipe.InitBuffer(self.outQueueOut, self.bufferNum, self.tileDataNum * sizeof(T))

    def Process(self) -> None:
        loop_count = self.tileNum
        self.processDataNum = self.tileDataNum
        for i in range(loop_count - 1):
            self.CopyIn(i)
            self.Compute(i)
            self.CopyOut(i)
        self.processDataNum = self.tailDataNum
        self.CopyIn(loop_count - 1)
        self.Compute(loop_count - 1)
        self.CopyOut(loop_count - 1)

    def CopyIn(self, progress: int) -> None:
        x = self.inQueueX.AllocTensor(self.T)
        y = self.inQueueY.AllocTensor(self.T)
        DataCopy(x, self.xGm[progress * self.tileDataNum], self.processDataNum)
        DataCopy(y, self.yGm[progress * self.tileDataNum], self.processDataNum)
        self.inQueueX.EnQue(x)
        self.inQueueY.EnQue(y)

    def CopyOut(self, progress: int) -> None:
        out = self.outQueueOut.DeQue(self.T)
        DataCopy(self.outGm[progress * self.tileDataNum], out, self.processDataNum)
        self.outQueueOut.FreeTensor(out)

    def Compute(self, progress: int) -> None:
        T, n = self.T, self.processDataNum
        x = self.inQueueX.DeQue(T)                       # gradients
        y = self.inQueueY.DeQue(T)                       # features
        out = self.outQueueOut.AllocTensor(T)
        if T in _FLOAT_HALF:
            zero = T.type(SCALAR_FLOAT if T == float_ else SCALAR_HALF)
            mask = self.tmpQueueMask1.AllocTensor(uint8_t)
            CompareScalar(mask, y, zero, CMPMODE.LE, n)
            Duplicate(y, zero, n)
            Select(out, mask, y, x, SELMODE.VSEL_TENSOR_TENSOR_MODE, n)
        elif T == _BF16:
            t1 = self.tmpQueue1.AllocTensor(float_)
            t2 = self.tmpQueue2.AllocTensor(float_)
            Cast(t1, y, RoundMode.CAST_NONE, n)
            Duplicate(t2, float_.type(SCALAR_BF16_A), n)
            Min(t1, t1, t2, n)
            Duplicate(t2, float_.type(SCALAR_BF16_B), n)
            Max(t2, t1, t2, n)
            Duplicate(t1, float_.type(SCALAR_BF16_C), n)        # static_cast<float>(0): the wrapped 2^38
            Mul(t2, t2, t1, n)
            Duplicate(t1, float_.type(SCALAR_BF16_D), n)        # static_cast<float>(0): the wrapped 2^44
            Mul(t2, t2, t1, n)
            Mul(t2, t2, t1, n)
            Cast(t1, x, RoundMode.CAST_NONE, n)
            Mul(t2, t2, t1, n)
            Cast(out, t2, RoundMode.CAST_RINT, n)
        elif T in _I8:
            t1 = self.tmpQueue1.AllocTensor(half)
            t2 = self.tmpQueue2.AllocTensor(half)
            Cast(t1, y, RoundMode.CAST_NONE, n)
            Duplicate(t2, half.type(SCALAR_UINT8ORINT8_A), n)
            Min(t1, t1, t2, n)
            Duplicate(t2, half.type(SCALAR_UINT8ORINT8_B), n)
            Max(t2, t1, t2, n)
            Duplicate(t1, half.type(SCALAR_UINT8ORINT8_C), n)
            Mul(t2, t1, t2, n)
            Mul(t2, t2, t1, n)
            Cast(t1, x, RoundMode.CAST_NONE, n)
            Mul(t2, t2, t1, n)
            Cast(out, t2, RoundMode.CAST_RINT, n)
        else:                                            # int32
            Duplicate(out, int32_t.type(SCALAR_INT32_B), n)
            Min(out, y, out, n)
            Duplicate(y, int32_t.type(SCALAR_INT32_A), n)
            Max(out, out, y, n)
            Duplicate(y, int32_t.type(SCALAR_INT32_B), n)
            Mul(out, out, y, n)
            Mul(out, out, y, n)
            Mul(out, x, out, n)
        self.outQueueOut.EnQue(out)
        self.inQueueX.FreeTensor(x)
        self.inQueueY.FreeTensor(y)


def relu_grad(gradients: GmAddr, features: GmAddr, backprops: GmAddr, workspace: Any, tiling: bytes, *,
              dtype: Any, bufferNum: int = BUFFER_NUM) -> None:
    """The ``__global__ __aicore__`` entry (``relu_grad.cpp``); ``dtype`` plays ``DTYPE_GRADIENTS``."""
    td = GET_TILING_DATA(ReluGradTilingData, tiling)
    op = KernelReluGrad(dtype, buffer_num=bufferNum)
    op.Init(gradients, features, backprops, td)
    op.Process()


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: ``DTYPE_GRADIENTS`` (as a numpy dtype) and BUFFER_NUM."""
    return {"dtype": to_numpy(dtype), "bufferNum": buffer_num}


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (phase 2)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    args = [gm_arg(t, name) for t, name in zip((grad, feat, out), ("gradients", "features", "backprops"),
                                                strict=True)]
    return _launch(relu_grad, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=rec,
                   kernel_name="ReluGrad", tiling_data=td, cores=cores, **template_args(td, grad.dtype, buffer_num))

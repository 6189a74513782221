"""The HardSigmoidGrad AI Core kernel, written against ``ascend_lab.ascendc`` as the real one is.

Mirrors ``ops-nn:experimental/activation/hard_sigmoid_grad/op_kernel/arch35/hard_sigmoid_grad.h``
(float and half: every instruction computes in T, so fp16 is native half with ``half(alpha)``) and
``hard_sigmoid_grad_bf16.h`` (bf16 is cast to fp32, computed there, and cast back with CAST_ROUND),
selected by the template tiling key ``schMode`` (0 fp32, 1 fp16, 2 bf16) as in
``hard_sigmoid_grad_apt.cpp``. cann_facts §2.3-2.4.

Each core handles ``blockFactor`` elements starting at ``blockFactor * GetBlockIdx()``, in tiles of
``ubFactor`` elements, through a double-buffered CopyIn -> Compute -> CopyOut pipeline.
"""

from __future__ import annotations

from typing import Any

from ....ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Adds,
    Cast,
    CompareScalar,
    DataCopyPad,
    DataCopyPadParams,
    DataCopyParams,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    KernelRun,
    Muls,
    RoundMode,
    Select,
    TBuf,
    TPipe,
    TQue,
    bfloat16_t,
    float_,
    half,
    sizeof,
    uint8_t,
)
from ....ascendc import (
    launch as _launch,
)
from ....opdev.tiling_data import GET_TILING_DATA
from ...kernel_args import gm_arg, launch_options
from ..op_host import HardSigmoidGradTilingData

BUFFER_NUM = 2
REPEAT_BYTES = 256


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class KernelHardSigmoidGrad:
    """``KernelHardSigmoidGrad<T>`` for T = float or half; with ``bf16=True`` the bf16 variant
    (queues in bfloat16, arithmetic in float buffers)."""

    def __init__(self, T: Any, bf16: bool = False, buffer_num: int = BUFFER_NUM):
        self.T = T
        self.bf16 = bf16
        self.bufferNum = buffer_num
        self.C = float_ if bf16 else T          # the compute dtype
        self.pipe = TPipe()
        self.inQueueGrad = TQue(VECIN, buffer_num)
        self.inQueueSelf = TQue(VECIN, buffer_num)
        self.outQueueGradInput = TQue(VECOUT, buffer_num)
        self.gradFp32Buf = TBuf(VECCALC)
        self.selfFp32Buf = TBuf(VECCALC)
        self.tmpBuf = TBuf(VECCALC)
        self.maskBuf = TBuf(VECCALC)
        self.gradGm = GlobalTensor(T)
        self.selfGm = GlobalTensor(T)
        self.gradInputGm = GlobalTensor(T)

    def Init(self, gradOutput: GmAddr, self_: GmAddr, gradInput: GmAddr,
             td: HardSigmoidGradTilingData) -> bool:
        T = self.T
        block_idx = GetBlockIdx()
        self.ubFactor = td.ubFactor
        self.blockLength = min(td.blockFactor, td.totalLength - td.blockFactor * block_idx)
        if self.blockLength <= 0:
            return False
        offset = td.blockFactor * block_idx * sizeof(T)
        self.gradGm.SetGlobalBuffer(gradOutput + offset, self.blockLength)
        self.selfGm.SetGlobalBuffer(self_ + offset, self.blockLength)
        self.gradInputGm.SetGlobalBuffer(gradInput + offset, self.blockLength)
        self.pipe.InitBuffer(self.inQueueGrad, self.bufferNum, self.ubFactor * sizeof(T))
        self.pipe.InitBuffer(self.inQueueSelf, self.bufferNum, self.ubFactor * sizeof(T))
        self.pipe.InitBuffer(self.outQueueGradInput, self.bufferNum, self.ubFactor * sizeof(T))
        if self.bf16:
            self.pipe.InitBuffer(self.gradFp32Buf, self.ubFactor * sizeof(float_))
            self.pipe.InitBuffer(self.selfFp32Buf, self.ubFactor * sizeof(float_))
        self.pipe.InitBuffer(self.tmpBuf, self.ubFactor * sizeof(self.C))
        self.pipe.InitBuffer(self.maskBuf, max(32, _ceil(_ceil(self.ubFactor, 8), 32) * 32))
        self.alpha = self.C.type(td.alpha)        # T(alpha): half(0.16666666) = 0.1666259765625 for fp16
        self.beta = self.C.type(td.beta)
        return True

    def Process(self) -> None:
        loop_count = _ceil(self.blockLength, self.ubFactor)
        for i in range(loop_count):
            n = self.ubFactor if i < loop_count - 1 else self.blockLength - self.ubFactor * i
            self.CopyIn(i, n)
            self.Compute(n)
            self.CopyOut(i, n)

    def CopyIn(self, i: int, n: int) -> None:
        grad = self.inQueueGrad.AllocTensor(self.T)
        x = self.inQueueSelf.AllocTensor(self.T)
        params = DataCopyParams(1, n * sizeof(self.T), 0, 0)
        pad = DataCopyPadParams(False, 0, 0, 0)
        DataCopyPad(grad, self.gradGm[i * self.ubFactor], params, pad)
        DataCopyPad(x, self.selfGm[i * self.ubFactor], params, pad)
        self.inQueueGrad.EnQue(grad)
        self.inQueueSelf.EnQue(x)

    def Compute(self, n: int) -> None:
        C = self.C
        grad = self.inQueueGrad.DeQue(self.T)
        x = self.inQueueSelf.DeQue(self.T)
        out = self.outQueueGradInput.AllocTensor(self.T)
        tmp = self.tmpBuf.Get(C)
        mask = self.maskBuf.Get(uint8_t)
        per_repeat = REPEAT_BYTES // sizeof(C)
        n_aligned = _ceil(n, per_repeat) * per_repeat       # CompareScalar covers whole 256-byte repeats
        if self.bf16:
            g32 = self.gradFp32Buf.Get(float_)
            x32 = self.selfFp32Buf.Get(float_)
            Cast(g32, grad, RoundMode.CAST_NONE, n)
            Cast(x32, x, RoundMode.CAST_NONE, n)
            res, src_x, src_g = x32, x32, g32              # the product reuses selfFp32Buf
        else:
            res, src_x, src_g = out, x, grad
        Muls(tmp, src_x, self.alpha, n)                    # tmp = x * alpha   (rounded to C)
        Adds(tmp, tmp, self.beta, n)                       # tmp = tmp + beta  (rounded to C)
        Muls(res, src_g, self.alpha, n)                    # res = grad * alpha
        CompareScalar(mask, tmp, C.type(0), CMPMODE.GT, n_aligned)
        Select(res, mask, res, C.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        CompareScalar(mask, tmp, C.type(1), CMPMODE.LT, n_aligned)
        Select(res, mask, res, C.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        if self.bf16:
            Cast(out, res, RoundMode.CAST_ROUND, n)         # fp32 -> bf16, half away from zero
        self.outQueueGradInput.EnQue(out)
        self.inQueueGrad.FreeTensor(grad)
        self.inQueueSelf.FreeTensor(x)

    def CopyOut(self, i: int, n: int) -> None:
        out = self.outQueueGradInput.DeQue(self.T)
        DataCopyPad(self.gradInputGm[i * self.ubFactor], out, DataCopyParams(1, n * sizeof(self.T), 0, 0))
        self.outQueueGradInput.FreeTensor(out)


def hard_sigmoid_grad(gradOutput: GmAddr, self_: GmAddr, gradInput: GmAddr, workspace: Any,
                      tiling: bytes, *, schMode: int, bufferNum: int = BUFFER_NUM) -> None:
    """The ``__global__ __aicore__`` entry: unpack the tiling, pick the template by schMode, run.
    ``bufferNum`` is a simulator knob (the source hard-codes BUFFER_NUM = 2) for the book's 1-vs-2 study."""
    tiling_data = GET_TILING_DATA(HardSigmoidGradTilingData, tiling)
    if schMode == 2:
        op = KernelHardSigmoidGrad(bfloat16_t, bf16=True, buffer_num=bufferNum)
    else:
        op = KernelHardSigmoidGrad(half if schMode == 1 else float_, buffer_num=bufferNum)
    if op.Init(gradOutput, self_, gradInput, tiling_data):
        op.Process()


def template_args(td: HardSigmoidGradTilingData, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: ``schMode`` from the tiling key (the dtype), and BUFFER_NUM."""
    return {"schMode": td.tilingKey, "bufferNum": buffer_num}


def launch(td: HardSigmoidGradTilingData, grad: Any, x: Any, out: Any, soc: Any, op_name: str = "HardSigmoidGrad",
           record: bool | None = None, buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (called by the L0 op in phase 2)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    run = _launch(hard_sigmoid_grad, td.blockDim, [gm_arg(grad, "gradOutput"), gm_arg(x, "self"),
                                                   gm_arg(out, "gradInput")],
                  td.to_bytes(), soc, outputs=(2,), record=rec, kernel_name=op_name, tiling_data=td,
                  cores=cores, **template_args(td, None, buffer_num))
    return run

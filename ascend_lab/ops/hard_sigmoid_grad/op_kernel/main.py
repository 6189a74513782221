"""The shipping HardSigmoidGrad on Ascend950: the ops-nn main-tree arch35 kernel, against ``ascend_lab.ascendc``.

Mirrors ``ops-nn:activation/hard_sigmoid_grad/op_kernel/arch35/hard_sigmoid_grad.h`` and its entry
``op_kernel/hard_sigmoid_grad_apt.cpp`` (kernel_flavours.md §2.2). This is the kernel a stock CANN install
runs on 950 (its op definition registers ``ascend950`` only, §1); the experimental kernel next to it is the
custom package the seed articles describe. What differs from the experimental one:

* one template ``HardSigmoidGrad<T>`` for float, half and bfloat16: fp32 computes natively, fp16 *and* bf16
  are cast to fp32 (CAST_NONE, exact), computed there, and cast back once -- half with CAST_RINT, bf16 with
  CAST_ROUND -- so fp16 no longer uses ``half(alpha)``;
* alpha arrives as ``1.0f/6.0f`` from the main tiling (``op_host.tiling_main950``);
* ``tmp`` is pre-filled with -1.0 over the whole 256-byte-aligned compare window (``Duplicate``) so the
  compare bits past the tile's last element are 0 whatever the buffer held before;
* the UB plan is grad/self/out queues, tmp, then gradF32 and selfF32 (fp16/bf16 only), then the mask, each
  from a tiling that budgets 4 B per element (``ubFactor`` a multiple of 64).

Each core handles ``min(blockFactor, totalLength - blockFactor * GetBlockIdx())`` elements (a core left
with none returns before touching UB), in tiles of ``ubFactor`` with a shorter last tile, through a
double-buffered CopyIn -> Compute -> CopyOut pipeline with exact-length DataCopyPad copies.
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
    Duplicate,
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

__all__ = ["BUFFER_NUM", "COMPARE_ALIGN", "CAST_DOWN_ROUND", "HardSigmoidGrad", "hard_sigmoid_grad", "launch",
           "template_args"]

#: ``static constexpr int32_t BUFFER_NUM = 2`` (double buffering).
BUFFER_NUM = 2
#: CompareScalar's count is rounded up to whole 256-byte repeats of fp32: 64 elements (``alignedCount``).
COMPARE_ALIGN = 256 // 4
#: ``CastDownRound<T>``: the one rounding back from fp32 -- half to nearest-even, bf16 ties away from zero.
CAST_DOWN_ROUND = {half: RoundMode.CAST_RINT, bfloat16_t: RoundMode.CAST_ROUND}
#: The template parameter ``schMode`` -> T (``hard_sigmoid_grad_tiling_key.h``: 0 fp32, 1 fp16, 2 bf16).
SCH_MODE_TYPES = {0: float_, 1: half, 2: bfloat16_t}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


class HardSigmoidGrad:
    """``NsHardSigmoidGrad::HardSigmoidGrad<T>`` for T = float, half or bfloat16_t.

    ``cast_needed`` is the source's ``kCastNeeded = !is_same<T, float>``: it decides whether the two fp32
    scratch buffers exist and which Compute pipeline runs."""

    def __init__(self, T: Any, buffer_num: int = BUFFER_NUM):
        if T not in (float_, half, bfloat16_t):
            raise TypeError(f"HardSigmoidGrad<T> is instantiated for float, half and bfloat16_t, not {T}")
        self.T = T
        self.cast_needed = T is not float_
        self.bufferNum = buffer_num
        self.pipe = TPipe()
        self.gradOutputQueue = TQue(VECIN, buffer_num)
        self.selfQueue = TQue(VECIN, buffer_num)
        self.gradInputQueue = TQue(VECOUT, buffer_num)
        self.tmpBuf = TBuf(VECCALC)
        self.maskBuf = TBuf(VECCALC)
        self.gradFp32Buf = TBuf(VECCALC)
        self.selfFp32Buf = TBuf(VECCALC)
        self.gmGradOutput = GlobalTensor(T)
        self.gmSelf = GlobalTensor(T)
        self.gmGradInput = GlobalTensor(T)
        self.blockLength = 0
        self.ubLength = 0

    def Init(self, gradOutput: GmAddr, self_: GmAddr, gradInput: GmAddr, td: HardSigmoidGradTilingData) -> None:
        T = self.T
        block_idx = GetBlockIdx()
        # ComputePerCoreLength: the last core may get less than blockFactor, a core past the end nothing
        self.blockLength = min(td.blockFactor, td.totalLength - td.blockFactor * block_idx)
        if self.blockLength <= 0:
            return
        self.ubLength = td.ubFactor
        self.alpha = float_.type(td.alpha)                 # float alpha_ / beta_ from the tiling data
        self.beta = float_.type(td.beta)
        offset = td.blockFactor * block_idx * sizeof(T)
        self.gmGradOutput.SetGlobalBuffer(gradOutput + offset, self.blockLength)
        self.gmSelf.SetGlobalBuffer(self_ + offset, self.blockLength)
        self.gmGradInput.SetGlobalBuffer(gradInput + offset, self.blockLength)
        self.pipe.InitBuffer(self.gradOutputQueue, self.bufferNum, self.ubLength * sizeof(T))
        self.pipe.InitBuffer(self.selfQueue, self.bufferNum, self.ubLength * sizeof(T))
        self.pipe.InitBuffer(self.gradInputQueue, self.bufferNum, self.ubLength * sizeof(T))
        if self.cast_needed:
            self.pipe.InitBuffer(self.tmpBuf, self.ubLength * sizeof(float_))
            self.pipe.InitBuffer(self.gradFp32Buf, self.ubLength * sizeof(float_))
            self.pipe.InitBuffer(self.selfFp32Buf, self.ubLength * sizeof(float_))
        else:
            self.pipe.InitBuffer(self.tmpBuf, self.ubLength * sizeof(T))
        # one bit per fp32 element, whole 32-byte blocks, at least one block
        self.pipe.InitBuffer(self.maskBuf, max(32, _ceil(_ceil(self.ubLength, 8), 32) * 32))

    def Process(self) -> None:
        """RunTileLoop: ``ceil(blockLength / ubLength)`` tiles, the last one shorter."""
        if self.blockLength <= 0:
            return
        loop_count = _ceil(self.blockLength, self.ubLength)
        for i in range(loop_count):
            n = self.blockLength - self.ubLength * i if i == loop_count - 1 else self.ubLength
            self.CopyIn(i, n)
            self.Compute(n)
            self.CopyOut(i, n)

    def CopyIn(self, progress: int, n: int) -> None:
        grad = self.gradOutputQueue.AllocTensor(self.T)
        x = self.selfQueue.AllocTensor(self.T)
        params = DataCopyParams(1, n * sizeof(self.T), 0, 0)
        pad = DataCopyPadParams(False, 0, 0, 0)
        DataCopyPad(grad, self.gmGradOutput[progress * self.ubLength], params, pad)
        DataCopyPad(x, self.gmSelf[progress * self.ubLength], params, pad)
        self.gradOutputQueue.EnQue(grad)
        self.selfQueue.EnQue(x)

    def Compute(self, n: int) -> None:
        grad = self.gradOutputQueue.DeQue(self.T)
        x = self.selfQueue.DeQue(self.T)
        out = self.gradInputQueue.AllocTensor(self.T)
        mask = self.maskBuf.Get(uint8_t)
        aligned = _ceil(n, COMPARE_ALIGN) * COMPARE_ALIGN    # <= ubLength: the tiling aligns ubFactor to 64
        zero, one = float_.type(0.0), float_.type(1.0)
        tmp = self.tmpBuf.Get(float_)
        # the -1.0 fill makes the compare bits in [n, aligned) 0 (outside (0, 1)) whatever tmp held
        Duplicate(tmp, float_.type(-1.0), aligned)
        if self.cast_needed:
            g32 = self.gradFp32Buf.Get(float_)
            x32 = self.selfFp32Buf.Get(float_)
            Cast(g32, grad, RoundMode.CAST_NONE, n)            # half/bf16 -> fp32: exact
            Cast(x32, x, RoundMode.CAST_NONE, n)
            Muls(tmp, x32, self.alpha, n)                      # tmp = x * alpha   (fp32)
            Adds(tmp, tmp, self.beta, n)                       # tmp = tmp + beta  (fp32)
            Muls(x32, g32, self.alpha, n)                      # result in selfFp32 = grad * alpha
            res = x32
        else:
            Muls(tmp, x, self.alpha, n)
            Adds(tmp, tmp, self.beta, n)
            Muls(out, grad, self.alpha, n)
            res = out
        CompareScalar(mask, tmp, zero, CMPMODE.GT, aligned)
        Select(res, mask, res, zero, SELMODE.VSEL_TENSOR_SCALAR_MODE, n)      # mode 1: keep where tmp > 0
        CompareScalar(mask, tmp, one, CMPMODE.LT, aligned)
        Select(res, mask, res, zero, SELMODE.VSEL_TENSOR_SCALAR_MODE, n)      # ... and where tmp < 1
        if self.cast_needed:
            Cast(out, res, CAST_DOWN_ROUND[self.T], n)         # the only rounding of the result
        self.gradInputQueue.EnQue(out)
        self.gradOutputQueue.FreeTensor(grad)
        self.selfQueue.FreeTensor(x)

    def CopyOut(self, progress: int, n: int) -> None:
        out = self.gradInputQueue.DeQue(self.T)
        DataCopyPad(self.gmGradInput[progress * self.ubLength], out, DataCopyParams(1, n * sizeof(self.T), 0, 0))
        self.gradInputQueue.FreeTensor(out)


def hard_sigmoid_grad(gradOutput: GmAddr, self_: GmAddr, gradInput: GmAddr, workspace: Any,
                      tiling: bytes, *, schMode: int, bufferNum: int = BUFFER_NUM) -> None:
    """The ``__global__ __aicore__`` entry ``hard_sigmoid_grad<schMode>``: unpack the tiling, instantiate
    ``HardSigmoidGrad<T>`` for the dtype the key names, run. ``bufferNum`` is a simulator knob (the source
    hard-codes BUFFER_NUM = 2) for the book's 1-vs-2 study."""
    tiling_data = GET_TILING_DATA(HardSigmoidGradTilingData, tiling)
    try:
        T = SCH_MODE_TYPES[schMode]
    except KeyError:
        raise ValueError(f"schMode must be 0 (fp32), 1 (fp16) or 2 (bf16), got {schMode!r}") from None
    op = HardSigmoidGrad(T, buffer_num=bufferNum)
    op.Init(gradOutput, self_, gradInput, tiling_data)
    op.Process()


def template_args(td: HardSigmoidGradTilingData, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: ``schMode`` from the tiling key (the dtype), and BUFFER_NUM."""
    return {"schMode": td.tilingKey, "bufferNum": buffer_num}


def launch(td: HardSigmoidGradTilingData, grad: Any, x: Any, out: Any, soc: Any, op_name: str = "HardSigmoidGrad",
           record: bool | None = None, buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (called by the L0 op in phase 2).
    ``td`` must come from ``op_host.tiling_main950``; any SoC is accepted (a what-if study)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    return _launch(hard_sigmoid_grad, td.blockDim, [gm_arg(grad, "gradOutput"), gm_arg(x, "self"),
                                                    gm_arg(out, "gradInput")],
                   td.to_bytes(), soc, outputs=(2,), record=rec, kernel_name=op_name, tiling_data=td,
                   cores=cores, **template_args(td, None, buffer_num))

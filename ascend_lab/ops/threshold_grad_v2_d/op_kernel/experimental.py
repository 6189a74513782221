"""The ThresholdGradV2D AI Core kernel, written against ``ascend_lab.ascendc`` as the real one is.

Mirrors ``ops-nn:experimental/activation/threshold_grad_v2_d/op_kernel/threshold_grad_v2_d.{cpp,h}``
(cann_facts §4.2). The first ``tailBlockNum`` cores are "big" (one 256-byte block more); each core runs
``tileNum`` tiles of ``tileDataNum`` elements, the last one ``tailDataNum`` long. Copies are plain
``DataCopy`` of whole 256-byte blocks, so the last core **reads and writes up to 255 bytes past the logical
end** of the tensors: the simulator lets it (as the device does) and records each such access as a
``gm-padding`` warning in the trace.

Compute per dtype: mask = CompareScalar(feature, threshold, GT); out = Select(mask ? grad : 0). fp16
compares against ``half(threshold)``; bf16 goes through fp32 and back with CAST_RINT; int32 through fp32
(CAST_NONE) and back with CAST_TRUNC; int8/uint8 through half and fp32 and back with CAST_TRUNC. The int8
path uses its second half-sized temp as a float tensor, overrunning it into free UB (a ``ub-overrun``
warning), exactly as the source does.

ReluGrad (threshold 0) has its own experimental kernel, ``relu_grad/op_kernel/experimental.py``.
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
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    KernelRun,
    RoundMode,
    Select,
    TBuf,
    TPipe,
    TQue,
    float_,
    half,
    sizeof,
    uint8_t,
)
from ....ascendc import launch as _launch
from ....dtypes import bfloat16, to_numpy
from ....opdev.tiling_data import GET_TILING_DATA
from ...kernel_args import gm_arg, launch_options
from ..op_host import ThresholdGradV2DTilingData

BUFFER_NUM = 2
I8 = (np.dtype(np.int8), np.dtype(np.uint8))
VIA_FP32 = (np.dtype(np.int32), bfloat16)
BACK_MODE = {np.dtype(np.int32): RoundMode.CAST_TRUNC, bfloat16: RoundMode.CAST_RINT}


class KernelThresholdGradV2D:
    """``KernelThresholdGradV2D<T>``."""

    def __init__(self, T: Any, buffer_num: int = BUFFER_NUM):
        self.T = np.dtype(T)
        self.bufferNum = buffer_num
        self.pipe = TPipe()
        self.inQueueG = TQue(VECIN, buffer_num)
        self.inQueueF = TQue(VECIN, buffer_num)
        self.outQueue = TQue(VECOUT, buffer_num)
        self.maskBuf = TBuf(VECCALC)
        self.tmpQueue1 = TBuf(VECCALC)
        self.tmpQueue2 = TBuf(VECCALC)
        self.gGm = GlobalTensor(T)
        self.fGm = GlobalTensor(T)
        self.outGm = GlobalTensor(T)

    def Init(self, input_gradient: GmAddr, input_feature: GmAddr, output_backprops: GmAddr,
             td: Any) -> None:
        T = self.T
        core_id = GetBlockIdx()
        if core_id < td.tailBlockNum:                     # a big core
            self.coreDataNum = td.bigCoreDataNum
            self.tileNum = td.finalBigTileNum
            self.tailDataNum = td.bigTailDataNum
            global_offset = td.bigCoreDataNum * core_id
        else:
            self.coreDataNum = td.smallCoreDataNum
            self.tileNum = td.finalSmallTileNum
            self.tailDataNum = td.smallTailDataNum
            global_offset = td.bigCoreDataNum * core_id - (td.bigCoreDataNum - td.smallCoreDataNum) * (
                core_id - td.tailBlockNum)
        self.tileDataNum = td.tileDataNum
        self.threshold = td.threshold
        off = global_offset * sizeof(T)
        self.gGm.SetGlobalBuffer(input_gradient + off, self.coreDataNum)
        self.fGm.SetGlobalBuffer(input_feature + off, self.coreDataNum)
        self.outGm.SetGlobalBuffer(output_backprops + off, self.coreDataNum)
        self.pipe.InitBuffer(self.inQueueG, self.bufferNum, self.tileDataNum * sizeof(T))
        self.pipe.InitBuffer(self.inQueueF, self.bufferNum, self.tileDataNum * sizeof(T))
        self.pipe.InitBuffer(self.outQueue, self.bufferNum, self.tileDataNum * sizeof(T))
        self.pipe.InitBuffer(self.maskBuf, self.tileDataNum * sizeof(uint8_t))
        if T in VIA_FP32:
            self.pipe.InitBuffer(self.tmpQueue1, self.tileDataNum * sizeof(float_))
        elif T in I8:
            self.pipe.InitBuffer(self.tmpQueue1, self.tileDataNum * sizeof(half))
            self.pipe.InitBuffer(self.tmpQueue2, self.tileDataNum * sizeof(half))

    def Process(self) -> None:
        self.processDataNum = self.tileDataNum
        for i in range(self.tileNum):
            if i == self.tileNum - 1:
                self.processDataNum = self.tailDataNum
            self.CopyIn(i)
            self.Compute(i)
            self.CopyOut(i)

    def CopyIn(self, i: int) -> None:
        g = self.inQueueG.AllocTensor(self.T)
        f = self.inQueueF.AllocTensor(self.T)
        DataCopy(g, self.gGm[i * self.tileDataNum], self.processDataNum)
        DataCopy(f, self.fGm[i * self.tileDataNum], self.processDataNum)
        self.inQueueG.EnQue(g)
        self.inQueueF.EnQue(f)

    def Compute(self, i: int) -> None:
        T, n = self.T, self.processDataNum
        g = self.inQueueG.DeQue(T)
        f = self.inQueueF.DeQue(T)
        out = self.outQueue.AllocTensor(T)
        mask = self.maskBuf.Get(uint8_t)
        scalar_mode = SELMODE.VSEL_TENSOR_SCALAR_MODE
        thr = float_.type(self.threshold)
        if T == float_ or T == half:
            CompareScalar(mask, f, T.type(thr), CMPMODE.GT, n)   # fp16: against half(threshold)
            Select(out, mask, g, T.type(0), scalar_mode, n)
        elif T in VIA_FP32:
            tmp = self.tmpQueue1.AllocTensor(float_)
            Cast(tmp, f, RoundMode.CAST_NONE, n)
            CompareScalar(mask, tmp, thr, CMPMODE.GT, n)
            Cast(tmp, g, RoundMode.CAST_NONE, n)
            Select(tmp, mask, tmp, float_.type(0), scalar_mode, n)
            Cast(out, tmp, BACK_MODE[T], n)
        elif T in I8:
            tmp_h = self.tmpQueue1.AllocTensor(half)
            tmp_f = self.tmpQueue2.AllocTensor(float_)              # a half-sized buffer used as float
            Cast(tmp_h, f, RoundMode.CAST_NONE, n)
            Cast(tmp_f, tmp_h, RoundMode.CAST_NONE, n)
            CompareScalar(mask, tmp_f, thr, CMPMODE.GT, n)
            Cast(tmp_h, g, RoundMode.CAST_NONE, n)
            Cast(tmp_f, tmp_h, RoundMode.CAST_NONE, n)
            Select(tmp_f, mask, tmp_f, float_.type(0), scalar_mode, n)
            Cast(tmp_h, tmp_f, RoundMode.CAST_NONE, n)
            Cast(out, tmp_h, RoundMode.CAST_TRUNC, n)
        else:
            raise TypeError(f"ThresholdGradV2D has no kernel for {T}")
        self.outQueue.EnQue(out)
        self.inQueueG.FreeTensor(g)
        self.inQueueF.FreeTensor(f)

    def CopyOut(self, i: int) -> None:
        out = self.outQueue.DeQue(self.T)
        DataCopy(self.outGm[i * self.tileDataNum], out, self.processDataNum)
        self.outQueue.FreeTensor(out)


def threshold_grad_v2_d(input_gradient: GmAddr, input_feature: GmAddr, output_backprops: GmAddr,
                        workspace: Any, tiling: bytes, *, dtype: Any, bufferNum: int = BUFFER_NUM) -> None:
    """The ``__global__ __aicore__`` entry; ``dtype`` plays the role of ``DTYPE_INPUT_GRADIENT``."""
    td = GET_TILING_DATA(ThresholdGradV2DTilingData, tiling)
    op = KernelThresholdGradV2D(dtype, buffer_num=bufferNum)
    op.Init(input_gradient, input_feature, output_backprops, td)
    op.Process()


def template_args(td: Any, dtype: Any, buffer_num: int = BUFFER_NUM) -> dict[str, Any]:
    """The entry's template arguments: ``DTYPE_INPUT_GRADIENT`` (as a numpy dtype) and BUFFER_NUM."""
    return {"dtype": to_numpy(dtype), "bufferNum": buffer_num}


def launch(td: Any, grad: Any, feat: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> KernelRun:
    """Launch on ``td.blockDim`` cores with aclTensors from the L0 graph (phase 2)."""
    rec, buffer_num = launch_options(record, buffer_num, BUFFER_NUM)
    names = ("input_gradient", "input_feature", "output_backprops")
    args = [gm_arg(t, name) for t, name in zip((grad, feat, out), names, strict=True)]
    return _launch(threshold_grad_v2_d, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=rec,
                   kernel_name="ThresholdGradV2D", tiling_data=td, cores=cores,
                   **template_args(td, grad.dtype, buffer_num))

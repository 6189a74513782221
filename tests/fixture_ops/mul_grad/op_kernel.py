"""MulGrad kernel: CopyIn (DataCopyPad) -> Mul -> CopyOut, double-buffered."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascend_lab.ascendc import (
    VECIN,
    VECOUT,
    DataCopyPad,
    DataCopyPadParams,
    DataCopyParams,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    Mul,
    TPipe,
    TQue,
    sizeof,
)
from ascend_lab.ascendc import launch as _launch
from ascend_lab.opdev.tiling_data import GET_TILING_DATA
from ascend_lab.ops.common.kernel_args import gm_arg, launch_options

from .op_host import MulGradTilingData


class KernelMulGrad:
    def __init__(self, T: Any, buffer_num: int):
        self.T, self.bn = T, buffer_num
        self.pipe = TPipe()
        self.qg, self.qx, self.qo = TQue(VECIN, buffer_num), TQue(VECIN, buffer_num), TQue(VECOUT, buffer_num)
        self.g, self.x, self.o = GlobalTensor(T), GlobalTensor(T), GlobalTensor(T)

    def Init(self, g: GmAddr, x: GmAddr, o: GmAddr, td: MulGradTilingData) -> bool:
        idx = GetBlockIdx()
        self.ub = td.ubFactor
        self.length = min(td.blockFactor, td.totalLength - td.blockFactor * idx)
        if self.length <= 0:
            return False
        off = td.blockFactor * idx * sizeof(self.T)
        for gm, addr in ((self.g, g), (self.x, x), (self.o, o)):
            gm.SetGlobalBuffer(addr + off, self.length)
        for q in (self.qg, self.qx, self.qo):
            self.pipe.InitBuffer(q, self.bn, self.ub * sizeof(self.T))
        return True

    def Process(self) -> None:
        loops = -(-self.length // self.ub)
        for i in range(loops):
            n = self.ub if i < loops - 1 else self.length - self.ub * i
            params = DataCopyParams(1, n * sizeof(self.T), 0, 0)
            a, b = self.qg.AllocTensor(self.T), self.qx.AllocTensor(self.T)
            DataCopyPad(a, self.g[i * self.ub], params, DataCopyPadParams(False, 0, 0, 0))
            DataCopyPad(b, self.x[i * self.ub], params, DataCopyPadParams(False, 0, 0, 0))
            self.qg.EnQue(a)
            self.qx.EnQue(b)
            a, b, out = self.qg.DeQue(self.T), self.qx.DeQue(self.T), self.qo.AllocTensor(self.T)
            Mul(out, a, b, n)
            self.qo.EnQue(out)
            self.qg.FreeTensor(a)
            self.qx.FreeTensor(b)
            out = self.qo.DeQue(self.T)
            DataCopyPad(self.o[i * self.ub], out, params)
            self.qo.FreeTensor(out)


def mul_grad(g: GmAddr, x: GmAddr, o: GmAddr, workspace: Any, tiling: bytes, *, key: int, bufferNum: int = 2) -> None:
    td = GET_TILING_DATA(MulGradTilingData, tiling)
    op = KernelMulGrad(np.dtype(np.float32) if key == 0 else np.dtype(np.float16), bufferNum)
    if op.Init(g, x, o, td):
        op.Process()


def template_args(td: MulGradTilingData, dtype: Any, buffer_num: int = 2) -> dict[str, Any]:
    return {"key": td.tilingKey, "bufferNum": buffer_num}


def launch(td: MulGradTilingData, g: Any, x: Any, out: Any, soc: Any, record: bool | None = None,
           buffer_num: int | None = None, cores: Any = None) -> Any:
    rec, bn = launch_options(record, buffer_num, 2)
    args = [gm_arg(g, "gradOutput"), gm_arg(x, "self"), gm_arg(out, "gradInput")]
    return _launch(mul_grad, td.blockDim, args, td.to_bytes(), soc, outputs=(2,), record=rec, kernel_name="MulGrad",
                   tiling_data=td, cores=cores, **template_args(td, None, bn))

"""Lab 6 -- fix three broken kernels, guided only by the sanitizer's messages.

Three versions of one HardtanhGrad kernel (``out = min_val < x < max_val ? grad : 0``, float32 and
float16, double-buffered, HardSigmoidGrad's tiling) each carry one bug a new AscendC engineer makes.
Finding it is the lab: the sanitizer's report (kind, message, core, tile, instruction) of each kernel is
the only guide, and the notebook (``labs/06_sanitizer.md``) shows it. What the bugs are is written only
in the reference solutions (``labkit.solutions``, spoilers).

The learner fixes the three classes (the skeleton cells are :data:`BROKEN`'s code) and hands them over
with a function ``fixed_kernels() -> {"A": ..., "B": ..., "C": ...}``. :func:`check` runs each fixed
kernel over the same battery (sizes with tails, one core with many tiles, several cores, both dtypes,
every SoC) and compares with :func:`oracle` bit for bit; it finally checks that each fix kept the
tiling's UB plan (two blocks of ``ubFactor * sizeof(T)`` bytes per queue), so that a fix cannot trade
the bug for a slower kernel. :func:`check_kernel` runs one kernel's part, which is how the notebook shows
the sanitizer stopping each broken kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ascend_lab.acl.runtime import DeviceAllocation, DevicePtr
from ascend_lab.ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    CompareScalar,
    DataCopy,
    DataCopyPad,
    DataCopyPadParams,
    DataCopyParams,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    Select,
    TBuf,
    TPipe,
    TQue,
    launch,
    sizeof,
    uint8_t,
)
from ascend_lab.base import platform
from ascend_lab.dtypes import as_acl_dtype, to_numpy
from ascend_lab.opdev.tiling_data import GET_TILING_DATA, TilingData, TilingError, ceil_div, float32, floor_align, int64
from ascend_lab.ops import standalone

from .checker import Case, Report, answer_key, run_battery
from .lab5_copy_compute import SocLimits, kernel_case, sample, usable_ub

__all__ = ["BROKEN", "FUNCTION", "HardtanhGradA", "HardtanhGradB", "HardtanhGradC", "HardtanhGradTilingData",
           "cases", "check", "check_kernel", "hardtanh_grad", "oracle", "tiling"]

FUNCTION = "fixed_kernels"
TITLE = "Lab 6 \u00b7 three kernels the sanitizer stops"
DTYPES = ("float32", "float16")
SCH_MODE = {"float32": 0, "float16": 1}
KEYS = ("A", "B", "C")
UB_SLOTS = 7                   # 3 queues x 2 blocks + the mask budgeted as a slot
BUFFER_NUM = 2
REPEAT_BYTES = 256


# --------------------------------------------------------------------------------------------------
# host side (given)
# --------------------------------------------------------------------------------------------------
class HardtanhGradTilingData(TilingData):
    """``HardtanhGradTilingData`` (3 x int64 + 2 x float = 32 bytes)."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    minVal: float32
    maxVal: float32


def tiling(total_length: int, dtype: Any, core_num: int, ub_size: int, min_val: float = -1.0,
           max_val: float = 1.0) -> HardtanhGradTilingData:
    """HardSigmoidGrad's scheme with 7 slots of T per element and ``ubFactor`` in whole 256-byte repeats;
    ``ub_size`` is the usable UB."""
    dt = as_acl_dtype(dtype).short
    if dt not in DTYPES or core_num <= 0 or total_length <= 0:
        raise TilingError(f"cannot tile {total_length} {dt} elements on {core_num} cores")
    size = to_numpy(as_acl_dtype(dt)).itemsize
    block_factor = ceil_div(total_length, core_num)
    ub_factor = floor_align((ub_size // size) // UB_SLOTS, REPEAT_BYTES // size)
    if ub_factor <= 0:
        raise TilingError(f"ub_size {ub_size} B is too small")
    return HardtanhGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                  minVal=min_val, maxVal=max_val, blockDim=ceil_div(total_length, block_factor),
                                  tilingKey=SCH_MODE[dt])


def hardtanh_grad(gradOutput: GmAddr, self_: GmAddr, gradInput: GmAddr, workspace: Any,
                  tiling: bytes, *, kernel: Any, dtype: Any) -> None:
    """The ``__global__ __aicore__`` entry: unpack the tiling, build the kernel class for T, run it."""
    td = GET_TILING_DATA(HardtanhGradTilingData, tiling)
    op = kernel(np.dtype(dtype))
    if op.Init(gradOutput, self_, gradInput, td):
        op.Process()


@answer_key
def oracle(grad: np.ndarray, x: np.ndarray, min_val: float = -1.0, max_val: float = 1.0) -> np.ndarray:
    """``min_val < x < max_val ? grad : 0`` with both bounds converted to T (NaN and the bounds give 0)."""
    t = grad.dtype.type
    lo, hi = t(np.float32(min_val)), t(np.float32(max_val))
    return np.where((x > lo) & (x < hi), grad, t(0))


# --------------------------------------------------------------------------------------------------
# the three broken kernels (the notebook's skeleton cells hold the same code)
# --------------------------------------------------------------------------------------------------
class HardtanhGradA:
    """HardtanhGrad: out = min_val < x < max_val ? grad : 0, for T = float or half."""

    def __init__(self, T):
        self.T = T
        self.pipe = TPipe()
        self.inQueueGrad = TQue(VECIN, BUFFER_NUM)
        self.inQueueSelf = TQue(VECIN, BUFFER_NUM)
        self.outQueue = TQue(VECOUT, BUFFER_NUM)
        self.maskBuf = TBuf(VECCALC)
        self.gradGm, self.selfGm, self.outGm = GlobalTensor(T), GlobalTensor(T), GlobalTensor(T)

    def Init(self, gradOutput, self_, gradInput, td):
        T = self.T
        self.ubFactor = td.ubFactor
        self.tileBytes = td.ubFactor * sizeof(T)            # bytes of one tile
        self.blockLength = min(td.blockFactor, td.totalLength - td.blockFactor * GetBlockIdx())
        if self.blockLength <= 0:
            return False
        offset = td.blockFactor * GetBlockIdx() * sizeof(T)
        self.gradGm.SetGlobalBuffer(gradOutput + offset, self.blockLength)
        self.selfGm.SetGlobalBuffer(self_ + offset, self.blockLength)
        self.outGm.SetGlobalBuffer(gradInput + offset, self.blockLength)
        self.pipe.InitBuffer(self.inQueueGrad, BUFFER_NUM, self.tileBytes * sizeof(T))
        self.pipe.InitBuffer(self.inQueueSelf, BUFFER_NUM, self.tileBytes * sizeof(T))
        self.pipe.InitBuffer(self.outQueue, BUFFER_NUM, self.tileBytes * sizeof(T))
        self.pipe.InitBuffer(self.maskBuf, max(32, ceil_div(ceil_div(self.ubFactor, 8), 32) * 32))
        self.minVal, self.maxVal = T.type(td.minVal), T.type(td.maxVal)
        return True

    def Process(self):
        loops = ceil_div(self.blockLength, self.ubFactor)
        for i in range(loops):
            n = self.ubFactor if i < loops - 1 else self.blockLength - self.ubFactor * i
            self.CopyIn(i, n)
            self.Compute(n)
            self.CopyOut(i, n)

    def CopyIn(self, i, n):
        grad, x = self.inQueueGrad.AllocTensor(self.T), self.inQueueSelf.AllocTensor(self.T)
        params = DataCopyParams(1, n * sizeof(self.T), 0, 0)
        DataCopyPad(grad, self.gradGm[i * self.ubFactor], params, DataCopyPadParams(False, 0, 0, 0))
        DataCopyPad(x, self.selfGm[i * self.ubFactor], params, DataCopyPadParams(False, 0, 0, 0))
        self.inQueueGrad.EnQue(grad)
        self.inQueueSelf.EnQue(x)

    def Compute(self, n):
        T = self.T
        grad, x = self.inQueueGrad.DeQue(T), self.inQueueSelf.DeQue(T)
        out = self.outQueue.AllocTensor(T)
        mask = self.maskBuf.Get(uint8_t)
        n_aligned = ceil_div(n, REPEAT_BYTES // sizeof(T)) * (REPEAT_BYTES // sizeof(T))
        CompareScalar(mask, x, self.minVal, CMPMODE.GT, n_aligned)
        Select(out, mask, grad, T.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        CompareScalar(mask, x, self.maxVal, CMPMODE.LT, n_aligned)
        Select(out, mask, out, T.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        self.outQueue.EnQue(out)
        self.inQueueGrad.FreeTensor(grad)
        self.inQueueSelf.FreeTensor(x)

    def CopyOut(self, i, n):
        out = self.outQueue.DeQue(self.T)
        DataCopyPad(self.outGm[i * self.ubFactor], out, DataCopyParams(1, n * sizeof(self.T), 0, 0))
        self.outQueue.FreeTensor(out)


class HardtanhGradB(HardtanhGradA):
    """HardtanhGrad: out = min_val < x < max_val ? grad : 0, for T = float or half."""

    def Init(self, gradOutput, self_, gradInput, td):
        T = self.T
        self.ubFactor = td.ubFactor
        self.blockLength = min(td.blockFactor, td.totalLength - td.blockFactor * GetBlockIdx())
        if self.blockLength <= 0:
            return False
        offset = td.blockFactor * GetBlockIdx() * sizeof(T)
        self.gradGm.SetGlobalBuffer(gradOutput + offset, self.blockLength)
        self.selfGm.SetGlobalBuffer(self_ + offset, self.blockLength)
        self.outGm.SetGlobalBuffer(gradInput + offset, self.blockLength)
        self.pipe.InitBuffer(self.inQueueGrad, BUFFER_NUM, self.ubFactor * sizeof(T))
        self.pipe.InitBuffer(self.inQueueSelf, BUFFER_NUM, self.ubFactor * sizeof(T))
        self.pipe.InitBuffer(self.outQueue, BUFFER_NUM, self.ubFactor * sizeof(T))
        self.pipe.InitBuffer(self.maskBuf, max(32, ceil_div(ceil_div(self.ubFactor, 8), 32) * 32))
        self.minVal, self.maxVal = T.type(td.minVal), T.type(td.maxVal)
        return True

    def CopyIn(self, i, n):
        grad, x = self.inQueueGrad.AllocTensor(self.T), self.inQueueSelf.AllocTensor(self.T)
        DataCopy(grad, self.gradGm[i * self.ubFactor], n)
        DataCopy(x, self.selfGm[i * self.ubFactor], n)
        self.inQueueGrad.EnQue(grad)
        self.inQueueSelf.EnQue(x)

    def CopyOut(self, i, n):
        out = self.outQueue.DeQue(self.T)
        DataCopy(self.outGm[i * self.ubFactor], out, n)
        self.outQueue.FreeTensor(out)


class HardtanhGradC(HardtanhGradB):
    """HardtanhGrad: out = min_val < x < max_val ? grad : 0, for T = float or half."""

    def CopyIn(self, i, n):
        HardtanhGradA.CopyIn(self, i, n)

    def Compute(self, n):
        T = self.T
        grad, x = self.inQueueGrad.DeQue(T), self.inQueueSelf.DeQue(T)
        out = self.outQueue.AllocTensor(T)
        mask = self.maskBuf.Get(uint8_t)
        n_aligned = ceil_div(n, REPEAT_BYTES // sizeof(T)) * (REPEAT_BYTES // sizeof(T))
        CompareScalar(mask, x, self.minVal, CMPMODE.GT, n_aligned)
        Select(out, mask, grad, T.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        CompareScalar(mask, x, self.maxVal, CMPMODE.LT, n_aligned)
        Select(out, mask, out, T.type(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        self.outQueue.EnQue(out)
        self.inQueueGrad.FreeTensor(grad)

    def CopyOut(self, i, n):
        HardtanhGradA.CopyOut(self, i, n)


#: The kernels as the lab hands them out (the notebook shows the sanitizer stopping each one).
BROKEN: dict[str, type] = {"A": HardtanhGradA, "B": HardtanhGradB, "C": HardtanhGradC}

_WHAT = {
    "A": "kernel A",
    "B": "kernel B",
    "C": "kernel C",
}
_HINTS = {
    "A": "read the numbers in the sanitizer's message: how many bytes does one block ask for, and how many "
         "bytes is a tile of ubFactor elements of T?",
    "B": "DataCopy moves whole 32-byte blocks only; a tile whose n * sizeof(T) is not a multiple of 32 needs "
         "DataCopyPad with DataCopyParams(1, n * sizeof(T), 0, 0), in both directions",
    "C": "every AllocTensor needs a FreeTensor once the block's data is used; with two blocks per queue a leak "
         "only shows on the third tile of a core",
}


# --------------------------------------------------------------------------------------------------
# the battery
# --------------------------------------------------------------------------------------------------
def _pick(key: str) -> Callable[[Any], Any]:
    def pick(fn: Any) -> Any:
        kernels = fn() if not isinstance(fn, type) else {key: fn}
        if not isinstance(kernels, dict) or key not in kernels:
            raise TypeError("fixed_kernels() must return {'A': ..., 'B': ..., 'C': ...}, your three kernel "
                            f"classes; got {type(kernels).__name__}")
        return kernels[key]
    return pick


def _case(key: str, name: str, covers: list[str], n: int, dtype: str, soc: str, *, core_num: int | None = None,
          tiling_ub: int | None = None, seed: int = 0, min_val: float = -1.0, max_val: float = 1.0,
          limits: SocLimits | None = None) -> Case:
    info = standalone.make_soc(soc, core_num)
    td = tiling(n, dtype, info.vector_core_num, tiling_ub or usable_ub(info), min_val, max_val)
    g = sample(n, dtype, seed, -2.0, 2.0)
    x = sample(n, dtype, seed + 1, -2.0, 2.0, edges=(min_val, max_val, 0.0))
    shown = {"kernel": key, "N": n, "dtype": dtype, "soc": info.name, "cores": info.vector_core_num,
             "tiling": f"blockFactor {td.blockFactor}, ubFactor {td.ubFactor}, blockDim {td.blockDim}",
             "min_val": min_val, "max_val": max_val}
    return kernel_case(f"{_WHAT[key]}: {name}", [f"kernel:{key}"] + covers, entry=hardtanh_grad, td=td,
                       arrays={"grad": g, "self": x}, expected=oracle(g, x, min_val, max_val), soc=info, show=shown,
                       hint=_HINTS[key], template={"dtype": g.dtype, "kernel_name": f"HardtanhGrad{key}"},
                       pick=_pick(key), limits=limits)


def _plan(kernel: Any, dtype: str) -> dict[str, tuple[int, int]]:
    """{queue: (blocks, bytes per block)} of core 0's UB plan on Ascend910B4 for 100000 elements."""
    info = platform.get_soc("Ascend910B4")
    td = tiling(100_000, dtype, info.vector_core_num, usable_ub(info))
    item = to_numpy(as_acl_dtype(dtype)).itemsize
    args = [GmAddr(DevicePtr(DeviceAllocation(1)), name, arg_nbytes=100_000 * item)
            for name in ("gradOutput", "self", "gradInput")]
    run = launch(hardtanh_grad, td.blockDim, args, td.to_bytes(), info, outputs=(2,), cores=[0], plan_only=True,
                 kernel=kernel, dtype=np.dtype(to_numpy(as_acl_dtype(dtype))))
    plan: dict[str, tuple[int, int]] = {}
    for b in run.trace.ub_layout.get(0, []):
        if b.kind in ("VECIN", "VECOUT"):
            q = b.name.rsplit("[", 1)[0]
            blocks, size = plan.get(q, (0, 0))
            plan[q] = (blocks + 1, max(size, b.size))
    return plan


def _plan_case(key: str, dtype: str) -> Case:
    info = platform.get_soc("Ascend910B4")
    td = tiling(100_000, dtype, info.vector_core_num, usable_ub(info))
    block = -(-td.ubFactor * to_numpy(as_acl_dtype(dtype)).itemsize // 32) * 32
    expected = {q: (BUFFER_NUM, block) for q in ("inQueueGrad", "inQueueSelf", "outQueue")}

    def call(fn: Any, _inputs: dict[str, Any]) -> dict[str, tuple[int, int]]:
        return _plan(_pick(key)(fn), dtype)

    def compare(exp: Any, got: Any) -> str | None:
        if got == exp:
            return None
        for q, (blocks, size) in exp.items():
            g = got.get(q) if isinstance(got, dict) else None
            if g is None:
                return f"no queue named {q} in your UB plan (keep the kernel's queues: {', '.join(exp)})"
            if g != (blocks, size):
                return (f"{q}: {g[0]} block(s) of {g[1]} B; the tiling plans {blocks} blocks of {size} B "
                        f"(ubFactor {td.ubFactor} x sizeof(T) rounded to 32 B) -- fix the bug, keep the plan")
        return f"your plan has other queues too: {sorted(got)}"

    def show(plan: Any) -> str:
        if not isinstance(plan, dict):
            return repr(plan)
        return ", ".join(f"{q} {b} x {s} B" for q, (b, s) in plan.items())

    return Case(f"{_WHAT[key]}: the fix keeps the tiling's UB plan ({dtype}, Ascend910B4)",
                {"kernel": key, "dtype": dtype, "soc": "Ascend910B4", "N": 100_000}, expected,
                covers=(f"kernel:{key}", "topic:UB plan kept"), call=call, compare=compare, show=show,
                hint="two blocks of ubFactor * sizeof(T) bytes per queue, as the tiling budgets")


def kernel_cases(key: str, socs: Iterable[str] | None = None, limits: SocLimits | None = None) -> list[Case]:
    """The battery of one kernel (``"A"``, ``"B"`` or ``"C"``); ``limits`` collects what happened on SoCs whose
    AscendC API lacks the kernel's instructions (``lab5_copy_compute.LIMITED_ARCHS``)."""
    socs = list(platform.socs() if socs is None else socs)
    first = "Ascend910B4" if "Ascend910B4" in socs else socs[0]
    out = [
        _case(key, f"N = 1000 float32 on {first}", ["topic:worked example"], 1000, "float32", first),
        _case(key, f"N = 1000 float16 on {first}", ["topic:worked example"], 1000, "float16", first, seed=1),
        _case(key, "N = 4097 float32 on one core, 4 KB tiling UB (33 tiles)", ["topic:one core, many tiles"], 4097,
              "float32", first, core_num=1, tiling_ub=4096, seed=2),
        _case(key, "N = 3001 float16 on one core, 4 KB tiling UB (12 tiles)", ["topic:one core, many tiles"], 3001,
              "float16", first, core_num=1, tiling_ub=4096, seed=3),
        _case(key, "N = 3000 float32 on 3 cores, 4 KB tiling UB", ["topic:several cores and tiles"], 3000, "float32",
              first, core_num=3, tiling_ub=4096, seed=4),
        _case(key, "N = 1 float16 on one core", ["topic:one element"], 1, "float16", first, core_num=1, seed=5),
        _case(key, "min_val = -0.25, max_val = 3.5, N = 999 float16 on 4 cores", ["topic:bounds"], 999, "float16",
              first, core_num=4, tiling_ub=4096, seed=6, min_val=-0.25, max_val=3.5),
    ]
    for soc in socs:
        for dtype in DTYPES:
            out.append(_case(key, f"N = 5003 {dtype} on {soc}", [f"soc:{soc}", f"dtype:{dtype}"], 5003, dtype, soc,
                             seed=len(soc), limits=limits))
    out += [_plan_case(key, dtype) for dtype in DTYPES]
    return out


def cases(socs: Iterable[str] | None = None, limits: SocLimits | None = None) -> list[Case]:
    return [c for key in KEYS for c in kernel_cases(key, socs, limits)]


def _summary(fn: Any) -> list[str]:
    from .lab5_copy_compute import describe_run, launch_kernel

    lines = ["the same run of each fixed kernel (N = 100000 float32 on Ascend910B4):"]
    info = platform.get_soc("Ascend910B4")
    td = tiling(100_000, "float32", info.vector_core_num, usable_ub(info))
    g, x = sample(100_000, "float32", 0, specials=False), sample(100_000, "float32", 1, specials=False)
    for key in KEYS:
        run, _ = launch_kernel(hardtanh_grad, td, [g, x], g.dtype, info, record=True, reverse=False,
                               kernel=_pick(key)(fn), dtype=g.dtype, kernel_name=f"HardtanhGrad{key}")
        lines.append(f"  kernel {key}: " + describe_run(run, td, 100_000, "float32")[1].removeprefix("your kernel: "))
    lines.append("  " + describe_run(run, td, 100_000, "float32")[2])
    if len({line.split(":", 1)[1] for line in lines[1:4]}) == 1:
        lines.append("  the three fixed kernels cost exactly the same: each fix changed the bug and nothing else")
    return lines


def check(fixed_kernels: Any, socs: Iterable[str] | None = None) -> Report:
    """Run your three fixed kernels (``fixed_kernels() -> {"A": ..., "B": ..., "C": ...}``) over the
    battery, kernel A first; returns the Report."""
    limits = SocLimits()
    return run_battery(fixed_kernels, cases(socs, limits), title=TITLE,
                       summary=lambda: _summary(fixed_kernels) + limits.lines(), refuse_reference=True)


def check_kernel(key: str, kernel: type, socs: Iterable[str] | None = None) -> Report:
    """Run one kernel class over its part of the battery (``key`` "A", "B" or "C")."""
    return run_battery(kernel, kernel_cases(key, socs), title=f"Lab 6 \u00b7 kernel {key}",
                       refuse_reference=True)

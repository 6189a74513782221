"""Run one kernel directly on numpy data, outside the aclnn graph -- for figures, explorers and labs.

The aclnn API is how an application reaches a kernel; a learner exploring tiling wants the kernel alone,
on a SoC whose core count or UB size they may override, with double buffering on or off. These helpers
do the host's part (tiling, device memory, launch) and hand back the :class:`KernelRun` (trace included)
and the output. ``ub_plan`` lays out the UB without running anything, and reports an over-capacity plan
instead of refusing it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..ascendc import KernelRun, reserved_ub_bytes
from ..ascendc.launcher import launch as _launch
from ..base.platform import SocInfo, get_soc
from ..dtypes import as_acl_dtype, to_numpy
from .hard_sigmoid_grad import op_host as hs_host
from .hard_sigmoid_grad import op_kernel as hs_kernel
from .kernel_args import gm_from_array
from .relu_grad import op_host as relu_host
from .threshold_grad_v2_d import op_host as tg_host
from .threshold_grad_v2_d import op_kernel as tg_kernel

#: op name -> (CANN op type, op_host module)
OPS: dict[str, tuple[str, Any]] = {
    "hard_sigmoid_grad": ("HardSigmoidGrad", hs_host),
    "threshold_grad_v2_d": ("ThresholdGradV2D", tg_host),
    "relu_grad": ("ReluGrad", relu_host),
}
_ALIASES = {v[0].lower(): k for k, v in OPS.items()} | {k: k for k in OPS}


def op_key(op: str) -> str:
    """``"HardSigmoidGrad"`` / ``"hard_sigmoid_grad"`` -> ``"hard_sigmoid_grad"``; unknown -> ValueError."""
    key = _ALIASES.get(str(op).lower().replace("-", "_"))
    if key is None:
        raise ValueError(f"unknown op {op!r}; choose one of {', '.join(OPS)}")
    return key


def make_soc(soc: str | SocInfo | None = None, core_num: int | None = None, ub_size: int | None = None) -> SocInfo:
    """A SoC entry with the core count and/or UB size overridden (for "what if" exploration)."""
    info = get_soc(soc)
    changes: dict[str, Any] = {}
    if core_num is not None:
        if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) or core_num < 1:
            raise ValueError(f"core_num must be a positive int, got {core_num!r}")
        changes["vector_core_num"] = int(core_num)
    if ub_size is not None:
        if isinstance(ub_size, bool) or not isinstance(ub_size, (int, np.integer)) or ub_size < 1024:
            raise ValueError(f"ub_size must be an int number of bytes >= 1024, got {ub_size!r}")
        changes["ub_size"] = int(ub_size)
    return dataclasses.replace(info, **changes) if changes else info


def tiling_for(op: str, n: int, dtype: Any, soc: SocInfo, threshold: float = 1.0) -> Any:
    """The TilingData the op's host tiling computes for ``n`` elements on ``soc``."""
    key = op_key(op)
    host = OPS[key][1]
    if key == "hard_sigmoid_grad":
        return host.tiling(n, dtype, soc.vector_core_num, soc.ub_size)
    if key == "threshold_grad_v2_d":
        return host.tiling(n, dtype, soc.vector_core_num, soc.ub_size, threshold=threshold)
    return host.tiling(n, dtype, soc.vector_core_num, soc.ub_size)


def kernel_entry(op: str, td: Any, dtype: Any, buffer_num: int = 2) -> tuple[Any, dict[str, Any]]:
    """The op's ``__global__`` entry and its template arguments (``schMode`` from the tiling key for
    HardSigmoidGrad; ``DTYPE_INPUT_GRADIENT`` for ThresholdGradV2D / ReluGrad), ready for ``launch``."""
    key = op_key(op)
    if key == "hard_sigmoid_grad":
        return hs_kernel.hard_sigmoid_grad, {"schMode": td.tilingKey, "bufferNum": buffer_num}
    return tg_kernel.threshold_grad_v2_d, {"dtype": to_numpy(dtype), "relu": key == "relu_grad",
                                           "bufferNum": buffer_num}


def run_kernel(op: str, grad: np.ndarray, feat: np.ndarray, *, threshold: float = 1.0,
               soc: str | SocInfo | None = "Ascend910B4", core_num: int | None = None, ub_size: int | None = None,
               buffer_num: int = 2, record: bool = True, snapshot: bool = False,
               cores: list[int] | None = None) -> tuple[KernelRun, np.ndarray]:
    """Tile and launch ``op`` on flat copies of ``grad`` / ``feat``; returns (run, output)."""
    key = op_key(op)
    grad = np.asarray(grad)
    feat = np.asarray(feat)
    if grad.shape != feat.shape or grad.dtype != feat.dtype:
        raise ValueError(f"grad and feat must have one shape and dtype, got {grad.shape} {grad.dtype} and "
                         f"{feat.shape} {feat.dtype}")
    if buffer_num not in (1, 2, 3, 4):
        raise ValueError(f"buffer_num must be 1, 2, 3 or 4 (BUFFER_NUM blocks per queue), got {buffer_num!r}")
    info = make_soc(soc, core_num, ub_size)
    dtype = as_acl_dtype(grad.dtype)
    n = grad.size
    td = tiling_for(key, n, dtype, info, threshold)
    out = np.zeros(n, dtype=grad.dtype)
    args = [gm_from_array(grad, "grad"), gm_from_array(feat, "feat"), gm_from_array(out, "out")]
    entry, template = kernel_entry(key, td, dtype, buffer_num)
    run = _launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=record,
                  kernel_name=OPS[key][0], tiling_data=td, cores=cores, snapshot=snapshot, **template)
    result = args[2].ptr.allocation.buffer[:out.nbytes].view(grad.dtype).reshape(grad.shape).copy()
    return run, result


def ub_plan(op: str, n: int, dtype: Any, soc: str | SocInfo | None = "Ascend910B4", *, core_num: int | None = None,
            ub_size: int | None = None, buffer_num: int = 2, core: int = 0, threshold: float = 1.0,
            tiling_ub_size: int | None = None) -> dict[str, Any]:
    """The UB layout core ``core`` would build for ``n`` elements (its Init only), with the capacity,
    the library's reserved bytes and, when the plan does not fit, the overflow in bytes.

    ``tiling_ub_size`` lets the tiling believe in another UB size than the core has (a classic bug:
    the plan then overflows); ``buffer_num`` 3 or 4 shows why the kernels stop at double buffering."""
    key = op_key(op)
    info = make_soc(soc, core_num, ub_size)
    dt = as_acl_dtype(dtype)
    td = tiling_for(key, n, dt, make_soc(info, None, tiling_ub_size) if tiling_ub_size else info, threshold)
    item = to_numpy(dt).itemsize
    args = [gm_from_array(None, name, n * item) for name in ("grad", "feat", "out")]   # Init reads no data
    entry, template = kernel_entry(key, td, dt, buffer_num)
    run = _launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=False,
                  kernel_name=OPS[key][0], tiling_data=td, cores=[min(core, td.blockDim - 1)], plan_only=True,
                  **template)
    buffers = next(iter(run.trace.ub_layout.values()), [])
    used = max((b.offset + b.size for b in buffers), default=0)
    reserved = min(reserved_ub_bytes(info), info.ub_size)
    usable = info.ub_size - reserved
    return {"op": OPS[key][0], "dtype": dt.short, "soc": info.name, "tiling": td, "buffers": buffers,
            "capacity": info.ub_size, "reserved": reserved, "usable": usable, "used": used,
            "free": max(usable - used, 0), "overflow": max(used - usable, 0), "buffer_num": buffer_num,
            "elements_per_tile": getattr(td, "ubFactor", None) or getattr(td, "tileDataNum", None)}


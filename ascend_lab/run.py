"""The convenience layer: numpy in, numpy out, every step of the C sample done for you.

``hardsigmoid_backward`` and ``threshold_backward`` re-enact the seed samples exactly
(aclInit -> aclrtMalloc/aclrtMemcpy -> aclCreateTensor -> phase 1 -> workspace -> phase 2 -> sync ->
copy back -> destroy/free) and return a :class:`Run` with what happened: the status code, the output,
the workspace size, the L0 graph, the tiling the kernel used, the trace (``trace=True``) and the log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import acl
from .acl import runtime as rt
from .acl.tensor import aclScalar, aclTensor
from .base import log as oplog
from .base import platform
from .dtypes import as_acl_dtype, to_numpy
from .opdev.data_type_utils import PromoteType
from .opdev.executor import L0Node
from .opdev.l0_ops import broadcast_shape
from .ops.hard_sigmoid_grad import op_api as hs_api
from .ops.threshold_grad_v2_d import op_api as th_api


class _Null:
    def __repr__(self) -> str:
        return "NULLPTR"


#: Pass as ``out=NULLPTR`` to re-enact a nullptr ``out`` (``None`` means "allocate one for me").
NULLPTR: Any = _Null()


@dataclass
class Run:
    """What one call did. ``status`` is the aclnn code (0 on success)."""
    op: str
    soc: str
    status: int
    out: np.ndarray | None = None
    workspace_size: int = 0
    graph: list[str] = field(default_factory=list)
    nodes: list[L0Node] = field(default_factory=list)
    tiling: Any = None
    trace: Any = None
    kernel_runs: list[Any] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == 0

    def __repr__(self) -> str:
        out = "None" if self.out is None else f"<{self.out.dtype} array {list(self.out.shape)}>"
        tr = "" if self.trace is None else f", trace=<{len(self.trace.events)} events>"
        return (f"Run({self.op} on {self.soc}: status={self.status}, out={out}, graph={self.graph}, "
                f"workspace_size={self.workspace_size}, cycles={self.cycles:.0f}{tr}, messages={len(self.messages)})")

    @property
    def cycles(self) -> float:
        """Estimated cycles of the kernel launches (0 when nothing was launched), trace or not."""
        return sum(k.cycles for k in self.kernel_runs)

    def explain(self) -> str:
        """One paragraph for a reader: the status, the graph and why each node is there."""
        from .opdev.errno import describe
        lines = [f"{self.op} on {self.soc}: {describe(self.status)}"]
        lines += [f"  log: {m}" for m in self.messages]
        for n in self.nodes:
            lines.append(f"  {n.op:<16} {n.why}")
        if self.workspace_size:
            lines.append(f"  workspace: {self.workspace_size} B")
        return "\n".join(lines)


@contextlib.contextmanager
def _session() -> Iterator[None]:
    """aclInit + aclrtSetDevice(0) if the caller has not done so; undone afterwards."""
    did_init = did_dev = False
    if not rt.is_initialized():
        rt.aclInit(None)
        did_init = True
    if rt.current_device() is None:
        rt.aclrtSetDevice(0)
        did_dev = True
    try:
        yield
    finally:
        if did_dev:
            rt.aclrtResetDevice(0)
        if did_init:
            rt.aclFinalize()


def _as_array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (list, tuple, int, float, np.generic)):
        arr = np.asarray(value)
        if arr.dtype == np.float64 and not isinstance(value, np.generic):
            arr = arr.astype(np.float32)   # Python floats default to FLOAT, as in the C samples
        elif arr.dtype == np.int64 and not isinstance(value, np.generic):
            arr = arr.astype(np.int32)
    else:
        raise TypeError(f"{what} must be a numpy array (or None for nullptr), not {type(value).__name__}")
    as_acl_dtype(arr.dtype)   # raises ValueError naming the supported dtypes
    return arr


class _Tensors:
    """Device allocations and aclTensors made for one call, released together."""

    def __init__(self) -> None:
        self.ptrs: list[rt.DevicePtr] = []
        self.tensors: list[aclTensor] = []

    def upload(self, arr: np.ndarray, name: str, copy: bool = True) -> aclTensor:
        """An aclTensor viewing a device copy of ``arr``'s storage, with ``arr``'s strides kept.
        ``copy=False`` only allocates (for an output the operator overwrites completely)."""
        item = arr.itemsize
        strides_b = arr.strides
        if arr.size and (any(s < 0 or s % item for s in strides_b)):
            # negative / odd strides: no aclTensor equivalent. (np.ascontiguousarray would hand back a view
            # that numpy already calls contiguous, e.g. a size-1 axis with stride -4, strides unchanged.)
            arr = arr.copy(order="C")
            strides_b = arr.strides
        if arr.size == 0:
            storage = np.zeros(0, dtype=arr.dtype)
        else:
            span = 1 + sum((d - 1) * s for d, s in zip(arr.shape, strides_b, strict=True)) // item
            storage = np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(item,), writeable=False)
        nbytes = storage.nbytes
        ptr = None
        if nbytes:
            ret, ptr = rt.aclrtMalloc(nbytes, rt.ACL_MEM_MALLOC_HUGE_FIRST)
            if ret:
                raise MemoryError(f"aclrtMalloc({nbytes}) failed with {ret}")
            self.ptrs.append(ptr)
            if copy:
                rt.aclrtMemcpy(ptr, nbytes, np.ascontiguousarray(storage), nbytes, rt.ACL_MEMCPY_HOST_TO_DEVICE)
        strides = tuple(s // item for s in strides_b) if arr.size else acl.contiguous_strides(arr.shape)
        t = acl.aclCreateTensor(arr.shape, arr.dtype, strides, 0, acl.ACL_FORMAT_ND, (storage.size,), ptr)
        if t is None:
            raise ValueError(f"could not describe {name} as an aclTensor")
        t.name = name
        self.tensors.append(t)
        return t

    def release(self) -> None:
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for p in self.ptrs:
            rt.aclrtFree(p)


#: Public names for labs and chapters that build aclTensors from numpy arrays themselves:
#: ``with acl_session(): held = DeviceTensors(); t = held.upload(arr, "x"); ...; held.release()``.
acl_session = _session
DeviceTensors = _Tensors


def _resolve_soc(soc: str | None) -> str:
    return platform.get_soc(soc).name


def _invoke(op: str, soc: str, phase1, phase2, inputs: dict[str, Any], out: Any,
            default_out: tuple[tuple[int, ...], Any] | None, scalar: aclScalar | None | bool = False,
            trace: bool = False) -> Run:
    """Shared body: upload, phase 1, workspace, phase 2, copy back, release."""
    soc = _resolve_soc(soc)
    arrays = {k: (None if v is None else _as_array(v, k)) for k, v in inputs.items()}
    user_out = None
    if out is NULLPTR:
        out_arr = None
    elif out is not None:
        user_out = _as_array(out, "out")
        out_arr = user_out
    elif default_out is not None:
        shape, dtype = default_out
        out_arr = np.zeros(shape, dtype=to_numpy(dtype))
    else:
        out_arr = None
    run = Run(op=op, soc=soc, status=-1)
    with platform.soc(soc), _session(), oplog.capture() as records:
        held = _Tensors()
        try:
            tensors = {k: (None if a is None else held.upload(a, k)) for k, a in arrays.items()}
            # a user's out array is copied in (a strided view keeps the elements it does not cover); an out
            # allocated here is only written, so its device memory needs no upload
            t_out = None if out_arr is None else held.upload(out_arr, "out", copy=user_out is not None)
            args = list(tensors.values())
            if scalar is not False:
                args.append(scalar)
            status, ws, exe = phase1(*args, t_out)
            run.status, run.workspace_size = status, ws
            if status == 0:
                run.graph, run.nodes = exe.graph, list(exe.nodes)
                run.tiling = next((n.attrs["tiling"] for n in exe.nodes if "tiling" in n.attrs), None)
                ws_ptr = None
                if ws:
                    _, ws_ptr = rt.aclrtMalloc(ws, rt.ACL_MEM_MALLOC_HUGE_FIRST)
                    held.ptrs.append(ws_ptr)
                ret, stream = rt.aclrtCreateStream()
                run.status = phase2(ws_ptr, ws, exe, stream)
                rt.aclrtSynchronizeStream(stream)
                rt.aclrtDestroyStream(stream)
                run.kernel_runs = [k for k in exe.kernel_runs if k is not None]
                if trace:
                    run.trace = next((getattr(k, "trace", None) for k in run.kernel_runs), None)
                if run.status == 0 and t_out is not None:
                    if user_out is not None:                 # the caller's (maybe strided) array
                        user_out[...] = t_out.numpy()
                        run.out = user_out
                    else:                                    # step 5 of the sample: copy back to the host
                        if out_arr.nbytes:
                            rt.aclrtMemcpy(out_arr, out_arr.nbytes, t_out.data + t_out.offset * t_out.itemsize,
                                           out_arr.nbytes, rt.ACL_MEMCPY_DEVICE_TO_HOST)
                        run.out = out_arr
        finally:
            held.release()
            if scalar not in (False, None):
                acl.aclDestroyScalar(scalar)
    run.messages = [str(r) for r in records]
    return run


def hardsigmoid_backward(grad_output: Any, x: Any, soc: str | None = platform.DEFAULT_SOC, out: Any = None,
                         out_dtype: Any = None, trace: bool = False) -> Run:
    """aclnnHardsigmoidBackward on numpy arrays: ``grad_input = grad*alpha if 0 < alpha*x+beta < 1``.

    ``out`` defaults to a new array shaped like ``x`` in ``out_dtype`` (default: PromoteType of the
    inputs, as torch_npu allocates it); pass an array to write into it, or ``NULLPTR``.
    """
    from .ascendc import options
    g = None if grad_output is None else _as_array(grad_output, "grad_output")
    s = None if x is None else _as_array(x, "x")
    default_out = None
    if s is not None:
        if out_dtype is not None:
            dt = as_acl_dtype(out_dtype)
        elif g is not None:
            dt = PromoteType(g.dtype, s.dtype)
            dt = s.dtype if dt == acl.ACL_DT_UNDEFINED else dt
        else:
            dt = s.dtype
        default_out = (s.shape, dt)
    with options(trace=trace):
        return _invoke("aclnnHardsigmoidBackward", soc, hs_api.aclnnHardsigmoidBackwardGetWorkspaceSize,
                       hs_api.aclnnHardsigmoidBackward, {"gradOutput": g, "self": s}, out, default_out,
                       trace=trace)


def threshold_backward(grad_output: Any, x: Any, threshold: Any, soc: str | None = platform.DEFAULT_SOC,
                       out: Any = None, out_dtype: Any = None, trace: bool = False,
                       threshold_dtype: Any = "float32") -> Run:
    """aclnnThresholdBackward on numpy arrays: ``out = grad if x > threshold else 0``.

    ``threshold=None`` re-enacts a nullptr scalar. ``out`` defaults to the broadcast shape in ``x``'s
    dtype (or ``out_dtype``).
    """
    from .ascendc import options
    g = None if grad_output is None else _as_array(grad_output, "grad_output")
    s = None if x is None else _as_array(x, "x")
    if threshold is not None and not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise TypeError(f"threshold must be a number (or None for nullptr), not {type(threshold).__name__}")
    default_out = None
    ref = s if s is not None else g      # with self missing, still allocate out so the null check on self fires
    if ref is not None:
        shape = ref.shape if (g is None or s is None) else (broadcast_shape(s.shape, g.shape) or s.shape)
        default_out = (shape, as_acl_dtype(out_dtype) if out_dtype is not None else ref.dtype)
    scalar = None if threshold is None else acl.aclCreateScalar(threshold, threshold_dtype)
    with options(trace=trace):
        return _invoke("aclnnThresholdBackward", soc, th_api.aclnnThresholdBackwardGetWorkspaceSize,
                       th_api.aclnnThresholdBackward, {"gradOutput": g, "self": s}, out, default_out,
                       scalar=scalar, trace=trace)


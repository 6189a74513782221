"""The convenience layer: numpy in, numpy out, every step of the C sample done for you.

``hardsigmoid_backward`` and ``threshold_backward`` re-enact the seed samples exactly
(aclInit -> aclrtMalloc/aclrtMemcpy -> aclCreateTensor -> phase 1 -> workspace -> phase 2 -> sync ->
copy back -> destroy/free) and return a :class:`Run` with what happened: the status code, the output,
the workspace size, the L0 graph, the tiling the kernel used, the trace (``trace=True``) and the log.

Thread-safe: each call runs in a simulation context of its own (``base.context``): its SoC, kernel options and
log capture hold for that call only, and its ``aclInit`` ... ``aclFinalize`` act on a runtime of its own
(``acl.runtime.own_runtime``), never on the process's -- so calls from many threads at once give what the same
calls give one after another, and leave the SoC in force, the installed packages and the process's runtime as
they found them. Phase 1 of the aclnn APIs, which CANN does not make re-entrant for every operator
(``aclnnThresholdBackward`` keeps its threshold in a file-scope global), is taken one call at a time.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import acl
from .acl import runtime as rt
from .acl.tensor import aclScalar, aclTensor
from .ascendc import options
from .base import log as oplog
from .base import platform
from .base.log import OP_LOGE
from .dtypes import as_acl_dtype, to_numpy
from .opdev.errno import describe
from .opdev.executor import L0Node
from .ops import registry
from .ops.common.l0_kernel import find_kernel_node, requested_kernel


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
    #: The kernel flavour that ran ("tbe", "main" or "experimental"); None when no kernel node was built.
    kernel: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 0

    def __repr__(self) -> str:
        out = "None" if self.out is None else f"<{self.out.dtype} array {list(self.out.shape)}>"
        tr = "" if self.trace is None else f", trace=<{len(self.trace.events)} events>"
        flavour = "" if self.kernel is None else f", kernel={self.kernel}"
        return (f"Run({self.op} on {self.soc}{flavour}: status={self.status}, out={out}, graph={self.graph}, "
                f"workspace_size={self.workspace_size}, cycles={self.cycles:.0f}{tr}, messages={len(self.messages)})")

    @property
    def kernel_node(self) -> L0Node | None:
        """The graph's node that launched the operator's kernel (its attrs: the tiling, the SoC, the kernel flavour
        and the op's tiling attributes); None when no kernel node was built (an error, an empty tensor)."""
        return find_kernel_node(self.nodes)

    @property
    def cycles(self) -> float:
        """Estimated cycles of the kernel launches (0 when nothing was launched), trace or not."""
        return sum(k.cycles for k in self.kernel_runs)

    def explain(self) -> str:
        """One paragraph for a reader: the status, the graph and why each node is there."""
        lines = [f"{self.op} on {self.soc}: {describe(self.status)}"]
        lines += [f"  log: {m}" for m in self.messages]
        for n in self.nodes:
            lines.append(f"  {n.op:<16} {n.why}")
        if self.workspace_size:
            lines.append(f"  workspace: {self.workspace_size} B")
        return "\n".join(lines)


@contextlib.contextmanager
def _session() -> Iterator[None]:
    """The block runs on an ACL runtime of its own (``aclInit`` + ``aclrtSetDevice(0)`` done, ``acl.runtime.
    own_runtime``), in this thread only: the process's runtime -- initialised by the caller or not -- is neither
    used nor changed, and whatever the block leaves allocated is released at its end."""
    with rt.own_runtime():
        yield


#: Phase 1 of the C API, one call at a time (module docstring).
_PHASE1 = threading.Lock()


def _as_array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (list, tuple, int, float, np.generic)):
        try:
            arr = np.asarray(value)
        except ValueError:
            arr = None
        if arr is None or arr.dtype == object:
            raise ValueError(f"{what} is ragged (its nested lists have different lengths) or mixes types: "
                             "pass a rectangular list or a numpy array") from None
        if arr.dtype == np.float64 and not isinstance(value, np.generic):
            arr = arr.astype(np.float32)   # Python floats default to FLOAT, as in the C samples
        elif arr.dtype == np.int64 and not isinstance(value, np.generic):
            arr = arr.astype(np.int32)
    else:
        raise TypeError(f"{what} must be a numpy array (or None for nullptr), not {type(value).__name__}")
    as_acl_dtype(arr.dtype)   # raises ValueError naming the supported dtypes
    return arr


class DeviceMemoryError(MemoryError):
    """An ``aclrtMalloc`` of the convenience layer failed: ``status`` is its ACL code (207001 when the simulated
    device or the host cannot hold the bytes); the runtime logged why. ``_invoke`` turns it into a Run."""

    def __init__(self, status: int, nbytes: int):
        super().__init__(f"aclrtMalloc({nbytes}) failed with {status}")
        self.status = status


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
                raise DeviceMemoryError(ret, nbytes)
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

    def allocate(self, shape: tuple[int, ...], dtype: Any, name: str) -> aclTensor:
        """A contiguous aclTensor on freshly allocated device memory (an output nothing reads before it is written:
        no host array is needed until the result is copied back)."""
        npdt = np.dtype(to_numpy(dtype))
        count = 1
        for d in shape:
            count *= int(d)
        nbytes = count * npdt.itemsize
        ptr = None
        if nbytes:
            ret, ptr = rt.aclrtMalloc(nbytes, rt.ACL_MEM_MALLOC_HUGE_FIRST)
            if ret:
                raise DeviceMemoryError(ret, nbytes)
            self.ptrs.append(ptr)
        t = acl.aclCreateTensor(shape, npdt, acl.contiguous_strides(shape), 0, acl.ACL_FORMAT_ND, (count,), ptr)
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


def _host_out(out: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``out`` checked: (the caller's array or None, the array to upload or None). NULLPTR and None upload nothing
    (a default out is allocated on the device only; its host array is made at the copy back)."""
    if out is NULLPTR or out is None:
        return None, None
    user_out = _as_array(out, "out")
    if not user_out.flags.writeable:
        raise ValueError("out is read-only: pass a writeable array (or None to get a new one)")
    if user_out.size > 1 and any(s == 0 and d > 1 for s, d in zip(user_out.strides, user_out.shape, strict=True)):
        raise ValueError("out is a broadcast view (a stride of 0 repeats elements, so the results would "
                         "overwrite each other): pass a real array, e.g. np.empty(shape, dtype)")
    return user_out, user_out


def _device_out(held: _Tensors, out_arr: np.ndarray | None, out: Any,
                default_out: tuple[tuple[int, ...], Any] | None) -> aclTensor | None:
    """The out aclTensor: a user's out array is copied in (a strided view keeps the elements it does not cover);
    an out allocated here is only written, so its device memory needs no upload (nor a host array yet)."""
    if out_arr is not None:
        return held.upload(out_arr, "out", copy=True)
    if default_out is not None and out is not NULLPTR:
        return held.allocate(tuple(int(d) for d in default_out[0]), default_out[1], "out")
    return None


def _execute(run: Run, phase2, exe: Any, ws: int, held: _Tensors, trace: bool) -> None:
    """Phase 2 after a successful phase 1: the workspace, a stream, the launch; the run records what ran."""
    run.graph, run.nodes = exe.graph, list(exe.nodes)
    node = run.kernel_node
    run.kernel, run.tiling = (None, None) if node is None else (node.attrs["kernel"], node.attrs["tiling"])
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


def _copy_back(run: Run, t_out: aclTensor, user_out: np.ndarray | None) -> None:
    """The result to the host: into the caller's (maybe strided) array, else a new one (step 5 of the sample)."""
    if user_out is not None:
        user_out[...] = t_out.numpy()
        run.out = user_out
        return
    out_arr = np.empty(tuple(t_out.view_dims), dtype=to_numpy(t_out.dtype))
    if out_arr.nbytes:
        rt.aclrtMemcpy(out_arr, out_arr.nbytes, t_out.data + t_out.offset * t_out.itemsize,
                       out_arr.nbytes, rt.ACL_MEMCPY_DEVICE_TO_HOST)
    run.out = out_arr


def _invoke(op: str, soc: str, phase1, phase2, inputs: dict[str, Any], out: Any,
            default_out: tuple[tuple[int, ...], Any] | None, scalars: list[aclScalar | None] = (),
            trace: bool = False, kernel: str | None = None) -> Run:
    """Shared body: upload, phase 1, workspace, phase 2, copy back, release."""
    soc = _resolve_soc(soc)
    arrays = {k: (None if v is None else _as_array(v, k)) for k, v in inputs.items()}
    user_out, out_arr = _host_out(out)
    run = Run(op=op, soc=soc, status=-1)
    with platform.soc(soc), _session(), oplog.capture() as records:
        held = _Tensors()
        try:
            # the inputs are only read and the device memory is freed before this returns: their uploads lend
            # the arrays' bytes instead of copying them (copied in only if something writes them)
            with rt.lending_uploads():
                tensors = {k: (None if a is None else held.upload(a, k)) for k, a in arrays.items()}
            t_out = _device_out(held, out_arr, out, default_out)
            args = list(tensors.values())
            args.extend(scalars)
            with requested_kernel(kernel), _PHASE1:
                status, ws, exe = phase1(*args, t_out)
            run.status, run.workspace_size = status, ws
            if status == 0:
                _execute(run, phase2, exe, ws, held, trace)
                if run.status == 0 and t_out is not None:
                    _copy_back(run, t_out, user_out)
        except DeviceMemoryError as exc:             # the code and the log line a C caller gets from aclrtMalloc
            run.status, run.out = exc.status, None
        except MemoryError as exc:                   # the host ran out (numpy): a code and a reason, never a raise
            OP_LOGE(op, f"the host ran out of memory ({exc}); try a smaller shape")
            run.status, run.out = rt.ACL_ERROR_BAD_ALLOC, None
        finally:
            held.release()
            for sc in scalars:
                if sc is not None:
                    acl.aclDestroyScalar(sc)
    run.messages = [str(r) for r in records]
    return run


def _check_scalar(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or
                              not isinstance(value, (int, float, np.integer, np.floating))):
        raise TypeError(f"{name} must be a number (or None for nullptr), not {type(value).__name__}")


def call(api_name: str, *args: Any, soc: str | None = None, out: Any = None, out_dtype: Any = None,
         trace: bool = False, kernel: str | None = None, **kwargs: Any) -> Run:
    """Call any registered aclnn API on numpy arrays: its tensors, then its scalars, in the API's order.

    ``al.hardsigmoid_backward(g, x)`` is ``call("hardsigmoid_backward", g, x)``. A tensor or scalar given as
    ``None`` is a nullptr; ``out`` defaults to the array torch_npu would allocate (``None``), or pass an
    array to write into, or ``NULLPTR``. Each scalar ``s`` takes its dtype from ``s_dtype`` (default float32).
    ``kernel`` asks for one kernel flavour ("tbe", "main", "experimental"; "experimental" also models its custom
    package being installed); None runs what CANN runs on the SoC. A flavour not registered for the SoC makes
    phase 1 return 561103. ``run.kernel`` names the flavour that ran.
    """
    _, api = registry.aclnn_api(api_name)
    names = [py for py, _ in api.tensors] + [sc.name for sc in api.scalars]
    if len(args) > len(names):
        raise TypeError(f"{api.convenience}() takes {len(names)} positional arguments ({', '.join(names)}), "
                        f"got {len(args)}")
    values = dict(zip(names, args, strict=False))
    scalar_dtypes = {f"{sc.name}_dtype": kwargs.pop(f"{sc.name}_dtype", "float32") for sc in api.scalars}
    for name in names:
        if name in kwargs:
            if name in values:
                raise TypeError(f"{api.convenience}() got multiple values for {name!r}")
            values[name] = kwargs.pop(name)
    if kwargs:
        raise TypeError(f"{api.convenience}() got unexpected arguments {sorted(kwargs)}; it takes "
                        f"{', '.join(names)}, soc, out, out_dtype, trace"
                        + "".join(f", {k}" for k in scalar_dtypes))
    missing = [n for n in names if n not in values]
    if missing:
        raise TypeError(f"{api.convenience}() missing arguments {missing} (pass None for a nullptr)")
    arrays = {py: (None if values[py] is None else _as_array(values[py], py)) for py, _ in api.tensors}
    for sc in api.scalars:
        _check_scalar(sc.name, values[sc.name])
    default_out = api.default_out(arrays, out_dtype)
    scalars = []
    for sc in api.scalars:
        value, sdtype = values[sc.name], scalar_dtypes[f"{sc.name}_dtype"]
        scalar = None if value is None else acl.aclCreateScalar(value, sdtype)
        if value is not None and scalar is None:
            for made in scalars:
                if made is not None:
                    acl.aclDestroyScalar(made)
            raise ValueError(f"{sc.name} {value!r} cannot be held by a {as_acl_dtype(sdtype).short} scalar: pass a "
                             f"value in its range or another {sc.name}_dtype")
        scalars.append(scalar)
    with options(trace=trace):
        return _invoke(api.api, soc, api.get_workspace_size, api.run,
                       {c_name: arrays[py] for py, c_name in api.tensors}, out, default_out, scalars=scalars,
                       trace=trace, kernel=kernel)


def _convenience(api_name: str) -> Any:
    """A named function for one aclnn API, with a real signature and docstring (``help(al.threshold_backward)``)."""
    _, api = registry.aclnn_api(api_name)

    P = inspect.Parameter
    params = [P(py, P.POSITIONAL_OR_KEYWORD) for py, _ in api.tensors]
    params += [P(sc.name, P.POSITIONAL_OR_KEYWORD) for sc in api.scalars]
    params += [P("soc", P.POSITIONAL_OR_KEYWORD, default=None),
               P("out", P.POSITIONAL_OR_KEYWORD, default=None), P("out_dtype", P.POSITIONAL_OR_KEYWORD, default=None),
               P("trace", P.POSITIONAL_OR_KEYWORD, default=False)]
    params += [P(f"{sc.name}_dtype", P.POSITIONAL_OR_KEYWORD, default="float32") for sc in api.scalars]
    params += [P("kernel", P.KEYWORD_ONLY, default=None)]
    sig = inspect.Signature(params, return_annotation=Run)

    def bound(*args: Any, **kwargs: Any) -> Run:
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        kw = dict(ba.arguments)
        return call(api.api, **kw)

    bound.__name__ = bound.__qualname__ = api.convenience
    bound.__signature__ = sig  # type: ignore[attr-defined]
    tensors = ", ".join(f"``{py}`` ({c})" for py, c in api.tensors)
    bound.__doc__ = (f"{api.api} on numpy arrays: ``{api.formula}``.\n\n"
                     f"Tensors: {tensors}; scalars: {', '.join(sc.name for sc in api.scalars) or 'none'} "
                     "(``None`` re-enacts a nullptr). ``out`` defaults to the array torch_npu would allocate; pass "
                     "an array to write into it, or ``NULLPTR``. ``soc`` is the SoC in force for the call (default: "
                     "the one set with ``acl.set_soc``). Returns a :class:`Run`.")
    return bound


def convenience_functions() -> dict[str, Any]:
    """``{"hardsigmoid_backward": fn, ...}``: one function per registered aclnn API."""
    return {api.convenience: _convenience(api.api) for _, api in registry.aclnn_apis()}


_LOG_LINE = re.compile(r"^\[(?P<level>\w+)\] (?P<api>[^:]+): (?P<message>.*)$", re.S)


def validation_case(op: str = "hardsigmoid_backward", *, grad_dtype: Any = "float32", self_dtype: Any = "float32",
                    out_dtype: Any = None, grad_shape: Sequence[int] = (2, 3), self_shape: Sequence[int] = (2, 3),
                    out_shape: Sequence[int] | None = None, null: Sequence[str] = (), threshold: float = 1.0,
                    soc: str = "Ascend910B4", **scalars: float) -> dict[str, Any]:
    """Call an aclnn API on zero tensors of the given dtypes and shapes: its first tensor (the gradient) takes
    ``grad_dtype``/``grad_shape``, every other one ``self_dtype``/``self_shape``; ``null`` names arguments passed as
    nullptr ("grad" the first tensor, "self" the others, a tensor's own name, "out", or a scalar such as
    "threshold"); scalars not given take the API's defaults (``threshold`` is ThresholdBackward's).
    Returns the status, its meaning, the logged message (the check that fired) and the graph -- the data of
    the validation playground (``viz.validation_playground``)."""
    _, api = registry.aclnn_api(op)
    scalar_values = {sc.name: scalars.get(sc.name, threshold if sc.name == "threshold" else sc.default)
                     for sc in api.scalars}
    names = [py for py, _ in api.tensors]
    null = set(null)
    unknown = null - {"grad", "self", "out", *names, *scalar_values}
    if unknown:
        raise ValueError(f"null can name grad, self, out, {', '.join([*names, *scalar_values])}; got {sorted(unknown)}")
    arrays = {}
    for i, name in enumerate(names):
        dtype, shape, role = (grad_dtype, grad_shape, "grad") if i == 0 else (self_dtype, self_shape, "self")
        arrays[name] = None if {role, name} & null else np.zeros(tuple(shape), dtype=to_numpy(dtype))
    if "out" in null:
        out: Any = NULLPTR
    elif out_shape is not None or out_dtype is not None:
        default = api.default_out(arrays, out_dtype)
        dt = default[1] if default is not None else as_acl_dtype(self_dtype)
        out = np.zeros(tuple(out_shape) if out_shape is not None else tuple(self_shape), dtype=to_numpy(dt))
    else:
        out = None
    args = [*arrays.values()] + [None if name in null else value for name, value in scalar_values.items()]
    run = call(api.api, *args, soc=soc, out=out)
    message = run.messages[-1] if run.messages else ""
    m = _LOG_LINE.match(message)
    return {"op": run.op, "soc": run.soc, "status": run.status, "meaning": describe(run.status),
            "check": m["message"] if m else message, "api": m["api"] if m else "", "messages": list(run.messages),
            "graph": list(run.graph), "run": run}

"""The shared L0 ops every aclnn graph here uses: Contiguous, Cast, ViewCopy, BroadcastTo.

Each call records a node in the executor (phase 1) whose ``run`` does the data movement (phase 2).
They mirror ``l0op::Contiguous`` / ``l0op::Cast`` / ``l0op::ViewCopy`` from CANN's opbase and ops-math:
Contiguous of an already-contiguous tensor is a no-op node; Cast to the same dtype returns its input
and records nothing (``ops-math:math/cast/op_api/cast.cpp``).
"""

from __future__ import annotations

import numpy as np

from ..acl.tensor import aclTensor
from ..acl.types import aclDataType
from ..base.platform import current_soc
from ..dtypes import to_numpy
from .aclnn_common import ParamError
from .cast_engine import cast_engine
from .errno import ACLNN_ERR_INNER_NULLPTR
from .executor import L0Node, aclOpExecutor


def Contiguous(x: aclTensor, executor: aclOpExecutor) -> aclTensor:
    """Make ``x`` contiguous: a strided view is gathered into a fresh workspace tensor."""
    if x.IsContiguous():
        executor.add(L0Node("Contiguous", [x], [x], why="already contiguous: no copy, the node passes x on",
                            launches_kernel=False))
        return x
    out = executor.alloc_tensor(x.view_dims, x.dtype, name=f"{x.name or 'x'}_contiguous")

    def run() -> None:
        out.numpy()[...] = x.numpy()

    executor.add(L0Node("Contiguous", [x], [out], {"strides": list(x.strides), "offset": x.offset},
                        why="the view is strided; kernels read dense memory, so it is gathered first",
                        run=run))
    return out


def Cast(x: aclTensor, dtype: aclDataType, executor: aclOpExecutor) -> aclTensor:
    """Convert to ``dtype`` (round to nearest even for narrowing floats); same dtype -> ``x`` itself.

    The node carries the engine CANN picks for the pair on the SoC's architecture (``cast_engine``); a pair no
    engine supports is an L0 op returning null, which the aclnn API reports as 561103."""
    if x.dtype == dtype:
        return x
    arch = current_soc().npu_arch
    engine = cast_engine(x.dtype, dtype, arch)
    if engine is None:
        raise ParamError(ACLNN_ERR_INNER_NULLPTR,
                         f"Cast {x.dtype.short} -> {dtype.short}: no AI Core or AI CPU kernel on {arch.name}; "
                         "l0op::Cast returned nullptr")
    out = executor.alloc_tensor(x.view_dims, dtype, name=f"{x.name or 'x'}_{dtype.short}")
    np_dtype = to_numpy(dtype)

    def run() -> None:
        with np.errstate(all="ignore"):
            out.numpy()[...] = x.numpy().astype(np_dtype)

    executor.add(L0Node("Cast", [x], [out], {"dst_type": dtype.name, "engine": engine},
                        why=f"{x.dtype.short} -> {dtype.short}: the dtypes differ ({engine} kernel on {arch.name})",
                        run=run))
    return out


def BroadcastTo(x: aclTensor, shape: tuple[int, ...], executor: aclOpExecutor) -> aclTensor:
    """Materialise numpy-style broadcasting into a dense tensor of ``shape``."""
    if tuple(x.view_dims) == tuple(shape):
        return x
    out = executor.alloc_tensor(tuple(shape), x.dtype, name=f"{x.name or 'x'}_broadcast")

    def run() -> None:
        out.numpy()[...] = np.broadcast_to(x.numpy(), shape)

    executor.add(L0Node("BroadcastTo", [x], [out], {"shape": list(shape)},
                        why="the kernel's tiling counts only input 0's elements and reads both inputs "
                            "with the same offsets, so a broadcast input is expanded first", run=run))
    return out


def ViewCopy(y: aclTensor, out: aclTensor, executor: aclOpExecutor) -> aclTensor:
    """Write the dense result ``y`` into the caller's ``out`` view (which may be strided)."""
    def run() -> None:
        out.numpy()[...] = y.numpy()

    why = ("out is contiguous: a plain copy into the caller's memory" if out.IsContiguous()
           else "out is a strided view: the result is scattered into it")
    executor.add(L0Node("ViewCopy", [y], [out], why=why, run=run))
    return out


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of two shapes (``BroadcastInferShape``); None when they do not broadcast."""
    n = max(len(a), len(b))
    a2 = (1,) * (n - len(a)) + tuple(a)
    b2 = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a2, b2, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)

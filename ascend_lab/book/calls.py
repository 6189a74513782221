"""The C-named layers by hand, for the pages that show what the convenience layer never does.

``al.hardsigmoid_backward`` always passes valid out-pointers and owns its device memory, so a page that
wants to show the ``workspaceSize = nullptr`` check, or to build an aclTensor over storage it laid out
itself, goes through :mod:`ascend_lab.acl` and :mod:`ascend_lab.aclnn` step by step. These helpers are
those steps, written once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import acl
from ..acl.runtime import DevicePtr
from ..acl.tensor import aclTensor
from ..base import log as oplog


def to_device(host: np.ndarray) -> DevicePtr:
    """``aclrtMalloc`` + ``aclrtMemcpy`` of a host array: the seed sample's CreateAclTensor minus the tensor.

    An empty array still gets a 1-byte allocation (``aclrtMalloc`` refuses 0 bytes), with nothing copied.
    Needs an initialised runtime with a device set (``aclInit`` + ``aclrtSetDevice``)."""
    ret, ptr = acl.aclrtMalloc(max(host.nbytes, 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    if ret != acl.ACL_SUCCESS or ptr is None:
        raise RuntimeError(f"aclrtMalloc of {host.nbytes} B failed with {ret}: call aclInit and aclrtSetDevice first")
    if host.nbytes:
        ret = acl.aclrtMemcpy(ptr, host.nbytes, np.ascontiguousarray(host), host.nbytes,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE)
        if ret != acl.ACL_SUCCESS:
            raise RuntimeError(f"aclrtMemcpy of {host.nbytes} B failed with {ret}")
    return ptr


def dense_tensor(host: np.ndarray, ptr: DevicePtr | None = None) -> aclTensor:
    """A contiguous aclTensor with ``host``'s shape and dtype over ``ptr`` (default: a fresh device copy)."""
    ptr = ptr or to_device(host)
    return acl.aclCreateTensor(host.shape, host.dtype, acl.contiguous_strides(host.shape), 0,
                               acl.ACL_FORMAT_ND, host.shape, ptr)


def phase1_raw(api: Callable[..., tuple[int, Any, Any]], arrays: Sequence[np.ndarray],
               scalar: float | None = None, **out_pointers: Any) -> tuple[int, list[str]]:
    """Run phase 1 (``api``, an ``aclnn…GetWorkspaceSize``) alone and return (status, logged messages).

    ``arrays`` are the tensors in the API's order (inputs, then ``out``); ``scalar``, when given, is passed as a
    FLOAT aclScalar after the first two tensors, where both operators' signatures take it. ``out_pointers``
    (``workspaceSize=None``, ``executor=None``) re-enact a nullptr out-pointer, which the convenience layer
    never passes. The call gets its own runtime session: init, device 0, then everything is freed again."""
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    ptrs: list[DevicePtr] = []
    tensors: list[aclTensor] = []
    scalars = []
    try:
        for a in arrays:
            ptrs.append(to_device(a))
            tensors.append(dense_tensor(a, ptrs[-1]))
        if scalar is not None:
            scalars.append(acl.aclCreateScalar(scalar, acl.ACL_FLOAT))
        with oplog.capture() as recs:
            status = api(*tensors[:2], *scalars, *tensors[2:], **out_pointers)[0]
        return int(status), [r.message for r in recs]
    finally:
        for s in scalars:
            acl.aclDestroyScalar(s)
        for t in tensors:
            acl.aclDestroyTensor(t)
        for p in ptrs:
            acl.aclrtFree(p)
        acl.aclrtResetDevice(0)
        acl.aclFinalize()


def logged(run: Any, none: str = "-") -> str:
    """The first log line of a run without its ``[LEVEL] api: `` prefix (``none`` when nothing was logged)."""
    return run.messages[0].split(": ", 1)[1] if run.messages else none

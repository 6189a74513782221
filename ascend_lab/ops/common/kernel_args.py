"""Turning an L0 graph's aclTensor into the ``GM_ADDR`` a kernel receives."""

from __future__ import annotations

import numpy as np

from ...acl.runtime import DeviceAllocation, DevicePtr
from ...acl.tensor import aclTensor
from ...ascendc.options import current
from ...ascendc.tensor import GmAddr


def gm_arg(t: aclTensor, name: str) -> GmAddr:
    """The tensor's first element as a GM address, with its logical byte size for the sanitizer."""
    if t.data is None:
        raise ValueError(f"{name} has no device memory bound")
    ptr = t.data + t.offset * t.itemsize
    return GmAddr(ptr, name, arg_nbytes=t.Size() * t.itemsize)


def launch_options(record: bool | None, buffer_num: int | None, default_buffer_num: int) -> tuple[bool, int]:
    """Tracing and BUFFER_NUM for a launch: explicit arguments win, else the simulation options in force
    (``ascendc.options(trace=..., buffer_num=...)``), else the kernel's own BUFFER_NUM."""
    opts = current()
    rec = opts.trace if record is None else record
    if buffer_num is None:
        buffer_num = opts.buffer_num or default_buffer_num
    return rec, buffer_num


def gm_from_array(arr: np.ndarray | None, name: str, arg_nbytes: int | None = None, *,
                  nbytes: int | None = None, fill: int | None = None, lend: bool = False) -> GmAddr:
    """Device memory outside any aclnn graph, as a kernel argument: the bytes of ``arr`` (or ``nbytes``
    bytes of ``fill`` for an output). ``arg_nbytes`` is the logical size the sanitizer checks against
    (default: the bytes stored) -- a figure may store only core 0's share of a larger tensor.

    ``lend=True`` lends ``arr``'s bytes instead of copying them (``DeviceAllocation.lend``: copied in only if
    something writes them): for a caller that leaves ``arr`` unchanged until the argument is dropped."""
    size = arr.nbytes if arr is not None else int(nbytes or 0)
    alloc = DeviceAllocation(max(size, 1))
    if arr is not None:
        host = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        if lend and size and (arg_nbytes is None or arg_nbytes <= size):
            alloc.lend(host)
        else:
            alloc.overwrite(0, size)[...] = host                 # no zeroing first
    elif fill is not None:
        alloc.buffer[:size] = fill
    return GmAddr(DevicePtr(alloc), name, arg_nbytes=size if arg_nbytes is None else arg_nbytes)

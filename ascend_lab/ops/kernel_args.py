"""Turning an L0 graph's aclTensor into the ``GM_ADDR`` a kernel receives."""

from __future__ import annotations

from ..acl.tensor import aclTensor
from ..ascendc.tensor import GmAddr


def gm_arg(t: aclTensor, name: str) -> GmAddr:
    """The tensor's first element as a GM address, with its logical byte size for the sanitizer."""
    if t.data is None:
        raise ValueError(f"{name} has no device memory bound")
    ptr = t.data + t.offset * t.itemsize
    return GmAddr(ptr, name, arg_nbytes=t.Size() * t.itemsize)


def launch_options(record: bool | None, buffer_num: int | None, default_buffer_num: int) -> tuple[bool, int]:
    """Tracing and BUFFER_NUM for a launch: explicit arguments win, else the simulation options in force
    (``ascendc.options(trace=..., buffer_num=...)``), else the kernel's own BUFFER_NUM."""
    from ..ascendc.options import current
    opts = current()
    rec = opts.trace if record is None else record
    if buffer_num is None:
        buffer_num = opts.buffer_num or default_buffer_num
    return rec, buffer_num

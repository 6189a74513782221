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

"""Kernel arguments for a direct launch: the ``GM_ADDR`` a kernel receives, and reading it back.

A page that launches a kernel of its own (a deliberately broken copy, a kernel with one line changed)
skips the aclnn graph, so it needs device memory outside any graph. ``gm`` holds a numpy array there;
``gm_read`` reads an output back after the launch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ascendc.tensor import GmAddr
from ..ops.common.kernel_args import gm_from_array


def gm(arr: np.ndarray, name: str) -> GmAddr:
    """Device memory holding the bytes of ``arr``, as the GM address a kernel receives.

    The sanitizer's logical size is ``arr.nbytes``: a kernel reading past it gets a finding."""
    return gm_from_array(np.asarray(arr), name)


def gm_read(addr: GmAddr, dtype: Any, count: int) -> np.ndarray:
    """The first ``count`` elements of ``dtype`` at ``addr`` (a copy, so later launches do not change it)."""
    dt = np.dtype(dtype)
    nbytes = count * dt.itemsize
    if count < 0 or nbytes > addr.ptr.available:
        raise ValueError(f"{count} x {dt} = {nbytes} B does not fit the {addr.ptr.available} B left in the "
                         f"allocation behind {addr.name}")
    start = addr.ptr.offset
    return addr.ptr.allocation.buffer[start:start + nbytes].view(dt).copy()

"""The runtime's memory pool: freed device buffers kept for reuse, by length, up to ``pool_limit()`` bytes.

The real runtime serves aclrtMalloc from a pool too; here it also spares the host the page faults of touching
fresh memory. ``LOCK`` guards the pool and the runtimes' bookkeeping (allocated bytes, live sets) against
threads; it is reentrant because a garbage collection can run ``DeviceAllocation.__del__`` -> :func:`recycle`
inside a locked section.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

import numpy as np

#: Guards the runtimes' bookkeeping (allocated bytes, live sets, the pool) against threads (reentrant: a garbage
#: collection can run ``DeviceAllocation.__del__`` -> ``recycle`` inside a locked section).
LOCK = threading.RLock()
#: Freed device buffers kept for reuse, by length (the runtime's memory pool; see ``take``).
_POOL: dict[int, list[np.ndarray]] = {}
#: Default bound on the bytes the pool retains (``set_pool_limit`` changes it).
POOL_LIMIT_BYTES = 256 * 2**20
_pool_limit = POOL_LIMIT_BYTES
_pool_bytes = 0


def take(nbytes: int) -> tuple[np.ndarray, bool]:
    """Backing bytes, reusing a freed buffer of the same length when there is one; returns (buffer, stale).

    The real runtime serves aclrtMalloc from a memory pool too; here the pool also spares the host the
    page faults of touching fresh memory. A reused buffer still holds its last owner's bytes (``stale``):
    :class:`DeviceAllocation` zeroes them before anyone can see them, so every run is deterministic -- all at
    the first look, or all but the span a memcpy is about to overwrite (``DeviceAllocation.overwrite``), which
    spares an upload one pass over its bytes."""
    global _pool_bytes
    with LOCK:
        bucket = _POOL.get(nbytes)
        if bucket:
            buf = bucket.pop()
            if not bucket:
                del _POOL[nbytes]
            _pool_bytes -= nbytes
            return buf, True
    return np.zeros(nbytes, dtype=np.uint8), False


#: References to a buffer inside ``recycle``: the caller's variable, the parameter, getrefcount's argument.
_OWN_REFS = 3


def recycle(buf: np.ndarray) -> None:
    """Keep a freed buffer for reuse -- unless a numpy view made before the free still reaches it (then
    reusing it would let that view read and write another allocation's bytes) or the pool is full."""
    global _pool_bytes
    if sys.getrefcount(buf) > _OWN_REFS:
        return
    with LOCK:
        if buf.size and _pool_bytes + buf.size <= _pool_limit:
            _POOL.setdefault(buf.size, []).append(buf)
            _pool_bytes += buf.size


def _malloc_trim() -> None:
    """Ask glibc to return free heap pages to the OS (numpy's buffers below the mmap threshold live in
    the heap, and freeing them alone only makes them reusable by this process)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):      # not glibc: freed memory is the allocator's business
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)


def trim_pool() -> int:
    """Release every pooled buffer and return the freed pages to the OS; returns the bytes released.

    Call it before measuring peak memory, or when a long session no longer needs its device buffers."""
    global _pool_bytes
    with LOCK:
        released = _pool_bytes
        _POOL.clear()
        _pool_bytes = 0
    _malloc_trim()
    return released


def pool_bytes() -> int:
    """Bytes the pool currently retains (always <= ``pool_limit()``)."""
    return _pool_bytes


def pool_limit() -> int:
    """The most bytes the pool retains; a freed buffer that would exceed it is released at once."""
    return _pool_limit


def set_pool_limit(nbytes: int | None) -> int:
    """Bound the pool to ``nbytes`` (``None``: the default ``POOL_LIMIT_BYTES``; 0 disables pooling);
    trims the pool if it holds more. Returns the previous limit."""
    global _pool_limit
    if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer))
                               or nbytes < 0):
        raise ValueError(f"the pool limit must be an int >= 0 (bytes) or None, not {nbytes!r}")
    with LOCK:
        previous = _pool_limit
        _pool_limit = POOL_LIMIT_BYTES if nbytes is None else int(nbytes)
    if _pool_bytes > _pool_limit:
        trim_pool()
    return previous


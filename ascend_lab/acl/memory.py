"""Device memory: aclrtMalloc, aclrtFree, aclrtMemcpy, aclrtMemset, aclrtGetMemInfo, the simulated HBM size and
copy-on-write uploads (:func:`lending_uploads`). Both memory bounds are checked before any host memory is touched
(the :mod:`.runtime` docstring)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np

from ..base import context as _context
from .codes import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_HBM_MEM,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_SUCCESS,
    DEVICE_MEMORY_BYTES,
    GUARD_BYTES,
    HOST_CHECK_FROM_BYTES,
    HOST_RESERVE_BYTES,
    aclrtMemcpyKind,
    round_up,
)
from .handles import DeviceAllocation, DevicePtr
from .pool import LOCK, pool_bytes, trim_pool
from .state import ALL_LIVE, context_error, current, log


def device_memory_size() -> int:
    """The simulated HBM size per device that aclrtMalloc allocates from."""
    return current().device_memory


def set_device_memory_size(nbytes: int | None) -> int:
    """Set the simulated HBM size per device (``None``: the default ``DEVICE_MEMORY_BYTES``), e.g. to
    watch an allocation fail with 207001 without needing that much host memory. Memory already allocated
    stays; later allocations must fit in what is left. Returns the previous size."""
    if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer))
                               or nbytes <= 0):
        raise ValueError(f"the device memory size must be an int > 0 (bytes) or None, not {nbytes!r}")
    st = current()
    previous = st.device_memory
    st.device_memory = DEVICE_MEMORY_BYTES if nbytes is None else int(nbytes)
    return previous


def _host_available() -> int | None:
    """The host's available memory in bytes (Linux ``MemAvailable``), or None when it cannot be read."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None

def aclrtMalloc(size: int, policy: int = ACL_MEM_MALLOC_HUGE_FIRST) -> tuple[int, DevicePtr | None]:
    """Allocate ``size`` bytes of simulated device memory: ``ret, ptr = aclrtMalloc(size, policy)``.

    ACL_ERROR_RT_MEMORY_ALLOCATION (207001) when the request does not fit in what is left of the
    simulated device memory or in what the host can back; both are checked before any host memory is
    allocated (module docstring)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be an int number of bytes, not {type(size).__name__}")
    st = current()
    err = context_error(st)
    if err:
        return err, None
    if size <= 0:
        log("aclrtMalloc", f"size must be > 0, got {size}")
        return ACL_ERROR_INVALID_PARAM, None
    if policy not in (ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY):
        log("aclrtMalloc", f"unknown memory policy {policy}")
        return ACL_ERROR_INVALID_PARAM, None
    size = int(size)
    with LOCK:                 # reserve the bytes first, so two threads cannot both take the last of them
        if st.allocated + size > st.device_memory:
            log("aclrtMalloc", f"out of device memory: {size} B requested, {st.allocated} B of "
                                f"{st.device_memory} B in use")
            return ACL_ERROR_RT_MEMORY_ALLOCATION, None
        st.allocated += size
    backing = round_up(size, 32) + 32 + GUARD_BYTES
    alloc = None
    try:
        if backing < HOST_CHECK_FROM_BYTES or _host_can_back(backing):
            alloc = DeviceAllocation(size)
        # else: _host_can_back logged why
    except MemoryError:
        log("aclrtMalloc", f"the host could not back {backing} B of simulated device memory")
    if alloc is None:
        with LOCK:
            st.allocated -= size
        return ACL_ERROR_RT_MEMORY_ALLOCATION, None
    alloc.runtime = st
    with LOCK:
        st.live.add(alloc)
        ALL_LIVE.add(alloc)
    return ACL_SUCCESS, DevicePtr(alloc)


def _host_can_back(backing: int) -> bool:
    """Whether the host can hold ``backing`` more bytes on top of every live allocation (each counted as
    resident, whether or not its pages were touched yet) and still keep HOST_RESERVE_BYTES free."""
    avail = _host_available()
    if avail is None:
        return True
    with LOCK:
        held = sum(a.backing_bytes for a in list(ALL_LIVE))
    if held + backing > avail - HOST_RESERVE_BYTES and pool_bytes():
        trim_pool()                              # pooled buffers are memory the host can have back
        avail = _host_available() or avail
    if held + backing > avail - HOST_RESERVE_BYTES:
        log("aclrtMalloc", f"the host cannot back {backing} B of simulated device memory: {avail} B "
                            f"available, {held} B already allocated, {HOST_RESERVE_BYTES} B kept "
                            "for everything else")
        return False
    return True


def aclrtFree(ptr: DevicePtr | None) -> int:
    """Free an allocation from aclrtMalloc (the pointer must be its start); its bytes go back to the pool."""
    if not isinstance(ptr, DevicePtr) or ptr.offset != 0 or ptr.allocation.freed:
        log("aclrtFree", f"{ptr!r} is not the start of a live allocation")
        return ACL_ERROR_INVALID_PARAM
    alloc = ptr.allocation
    st = alloc.runtime
    with LOCK:
        if alloc.freed:                       # another thread freed it meanwhile
            return ACL_ERROR_INVALID_PARAM
        if st is not None and alloc in st.live:
            st.live.discard(alloc)
            st.allocated -= alloc.size
        ALL_LIVE.discard(alloc)
        alloc.release("aclrtFree")
    return ACL_SUCCESS


def _host_bytes(arr: object, writable: bool, api: str, what: str) -> np.ndarray | None:
    if isinstance(arr, (bytes, bytearray, memoryview)) and not writable:
        return np.frombuffer(arr, dtype=np.uint8)
    if arr is None or isinstance(arr, DevicePtr):    # a C caller can pass these as void*: a code, not a raise
        log(api, f"{what} must be host memory for this memcpy kind, got {arr!r}")
        return None
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{what} must be a numpy array (host memory), not {type(arr).__name__}")
    if not arr.flags.c_contiguous:
        log(api, f"{what} is not C-contiguous host memory; pass np.ascontiguousarray(...)")
        return None
    if writable and not arr.flags.writeable:
        log(api, f"{what} is read-only")
        return None
    return arr.reshape(-1).view(np.uint8)


def _device_ok(ptr: object, nbytes: int, api: str, what: str) -> bool:
    if ptr is None or isinstance(ptr, np.ndarray):   # nullptr or a host pointer: C can pass both
        log(api, f"{what} must be device memory from aclrtMalloc for this memcpy kind, got "
                  f"{'nullptr' if ptr is None else 'host memory'}")
        return False
    if not isinstance(ptr, DevicePtr):
        raise TypeError(f"{what} must be a DevicePtr from aclrtMalloc, not {type(ptr).__name__}")
    if ptr.allocation.freed:
        log(api, f"{what} {ptr!r} points into memory released by {ptr.allocation.freed_by}")
        return False
    if ptr.offset < 0 or nbytes > ptr.available:
        log(api, f"{what} {ptr!r}: {nbytes} B reaches past its allocation ({ptr.available} B left)")
        return False
    return True


def aclrtMemcpy(dst, dest_max: int, src, count: int, kind: int) -> int:
    """``aclrtMemcpy(dst, destMax, src, count, kind)``: copy ``count`` bytes; ``destMax`` is the room
    at ``dst``. ``count > destMax`` or a buffer too small is ``ACL_ERROR_INVALID_PARAM``."""
    api = "aclrtMemcpy"
    for v, n in ((dest_max, "destMax"), (count, "count")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{n} must be an int number of bytes, not {type(v).__name__}")
    try:
        kind = aclrtMemcpyKind(kind)
    except ValueError:
        log(api, f"unknown memcpy kind {kind}")
        return ACL_ERROR_INVALID_PARAM
    if count < 0 or dest_max < 0:
        log(api, f"count ({count}) and destMax ({dest_max}) must be >= 0")
        return ACL_ERROR_INVALID_PARAM
    if count > dest_max:
        log(api, f"count ({count} B) is larger than destMax ({dest_max} B)")
        return ACL_ERROR_INVALID_PARAM
    if kind != ACL_MEMCPY_HOST_TO_HOST:
        err = context_error()
        if err:
            return err
    dst_dev = kind in (ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE)
    src_dev = kind in (ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE)
    if dst_dev:
        if not _device_ok(dst, dest_max, api, "dst"):
            return ACL_ERROR_INVALID_PARAM
        d = None            # taken below, once the source is known good: every byte of it is then written
    else:
        d = _host_bytes(dst, True, api, "dst")
        if d is None:
            return ACL_ERROR_INVALID_PARAM
        if dest_max > d.size:
            log(api, f"destMax ({dest_max} B) is larger than the host buffer ({d.size} B)")
            return ACL_ERROR_INVALID_PARAM
        d = d[:count]
    if src_dev:
        if not _device_ok(src, count, api, "src"):
            return ACL_ERROR_INVALID_PARAM
        s = src.bytes(count)
    else:
        s = _host_bytes(src, False, api, "src")
        if s is None:
            return ACL_ERROR_INVALID_PARAM
        if count > s.size:
            log(api, f"count ({count} B) is larger than the host source ({s.size} B)")
            return ACL_ERROR_INVALID_PARAM
        s = s[:count]
    if d is None:
        alloc = dst.allocation
        if kind == ACL_MEMCPY_HOST_TO_DEVICE and dst.offset == 0 and count == alloc.size and s.flags.c_contiguous \
                and _context.current().lending:
            alloc.lend(s)                   # the whole allocation stands on the caller's bytes (lending_uploads)
            return ACL_SUCCESS
        d = alloc.overwrite(dst.offset, count)
    d[...] = s
    return ACL_SUCCESS


@contextlib.contextmanager
def lending_uploads() -> Iterator[None]:
    """Inside this block an ``aclrtMemcpy`` host -> device that fills a whole allocation lends it the host bytes
    (``DeviceAllocation.lend``: copied in only when something other than a kernel's read needs them) instead of
    copying them. What any reader or writer of the device memory sees is what the copy would have left; only
    the host array must stay unchanged while the allocation lives, which is why only a caller that frees its
    device memory before it returns uses it (the convenience calls of ``ascend_lab.run``, for their inputs).
    Thread-safe: a switch of the simulation context (``base.context``), in this thread only."""
    with _context.scoped(lending=True):
        yield


def aclrtMemset(dst: DevicePtr, dest_max: int, value: int, count: int) -> int:
    """``aclrtMemset(devPtr, maxCount, value, count)``: set ``count`` bytes at ``dst`` to the low byte of
    ``value``. Every bad argument is ACL_ERROR_INVALID_PARAM with a log line: ``dst`` not live device
    memory, ``count``/``maxCount`` negative or not ints, ``count > maxCount``, ``value`` not an int."""
    api = "aclrtMemset"
    for v, n in ((dest_max, "maxCount"), (count, "count"), (value, "value")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            log(api, f"{n} must be an int, not {type(v).__name__} {v!r}")
            return ACL_ERROR_INVALID_PARAM
    if count < 0 or dest_max < 0:
        log(api, f"count ({count}) and maxCount ({dest_max}) must be >= 0")
        return ACL_ERROR_INVALID_PARAM
    if count > dest_max:
        log(api, f"count ({count} B) is larger than maxCount ({dest_max} B)")
        return ACL_ERROR_INVALID_PARAM
    err = context_error()
    if err:
        return err
    if not isinstance(dst, DevicePtr):
        log(api, f"devPtr must be a DevicePtr from aclrtMalloc, not {type(dst).__name__}")
        return ACL_ERROR_INVALID_PARAM
    if not _device_ok(dst, dest_max, api, "devPtr"):
        return ACL_ERROR_INVALID_PARAM
    dst.bytes(int(count))[...] = int(value) & 0xFF
    return ACL_SUCCESS


def aclrtGetMemInfo(attr: int) -> tuple[int, int, int]:
    """``ret, free, total = aclrtGetMemInfo(ACL_HBM_MEM)``: the current device's simulated HBM.
    ``total`` is ``device_memory_size()``; the simulator models HBM only (other attributes are
    ACL_ERROR_INVALID_PARAM)."""
    err = context_error()
    if err:
        return err, 0, 0
    if isinstance(attr, bool) or not isinstance(attr, (int, np.integer)) or attr != ACL_HBM_MEM:
        log("aclrtGetMemInfo", f"attr {attr!r}: the simulator models HBM only (ACL_HBM_MEM = {ACL_HBM_MEM})")
        return ACL_ERROR_INVALID_PARAM, 0, 0
    st = current()
    total = st.device_memory
    return ACL_SUCCESS, max(total - st.allocated, 0), total

"""The ACL runtime calls of the seed samples: init, device, stream, device memory and memcpy.

Device memory is simulated: each ``aclrtMalloc`` owns a numpy byte buffer. As CANN documents for
``aclrtMalloc``, the usable capacity is the size rounded up to 32 bytes plus 32 bytes; behind that the
simulator keeps a hidden guard region so that a kernel that reads or writes a little past an allocation
(ThresholdGradV2D does, by design) is *seen* doing it instead of corrupting Python memory.

Memory safety (the simulator must never read or write Python memory it does not own):

* ``aclrtFree`` (and ``aclFinalize``, which releases every allocation still live) takes the backing bytes
  away from the allocation: ``DeviceAllocation.buffer`` becomes ``None``, so nothing can build a view of
  freed memory, and ``DevicePtr.bytes`` refuses freed, negative or out-of-range spans. A freed buffer goes
  back to the pool only when no numpy view made earlier still references it, so an old view can never
  alias a later allocation.
* Device memory is bounded twice, and both limits are checked *before* any host memory is touched:
  the simulated device size (``set_device_memory_size``, default ``DEVICE_MEMORY_BYTES`` = 64 GiB per
  device, reported by ``aclrtGetMemInfo(ACL_HBM_MEM)``) and what the host can back (its available memory
  minus ``HOST_RESERVE_BYTES``, counting every live allocation as resident). Either limit gives
  ``ACL_ERROR_RT_MEMORY_ALLOCATION`` (207001), as the real runtime answers when HBM is exhausted.
* The pool of freed buffers retains at most ``pool_limit()`` bytes (default ``POOL_LIMIT_BYTES`` =
  256 MiB; ``set_pool_limit`` changes it). ``trim_pool()`` drops every pooled buffer and asks the C
  allocator to hand the freed pages back to the operating system (glibc ``malloc_trim``).

Every function returns ACL error codes as ints, never raises for anything a C caller could pass: any int
(negative, huge), ``None`` for a pointer, a dangling or offset ``DevicePtr``, a destroyed stream. Python-level
misuse that C's type system would reject (a list where an array is expected, a float for a size) raises
``TypeError``; the exceptions are a stream argument (an opaque handle: anything that is not a live stream is
``ACL_ERROR_INVALID_PARAM``) and ``aclrtMemset``'s value (C converts it to an int: a non-int is refused
with a code).

Threads. As in ACL there is one runtime per process: ``aclInit`` once, then ``aclrtSetDevice``; the calls act
on that runtime's state (initialised, current device, streams, the allocations ``aclFinalize`` releases).
What is thread-safe: every call here can be made from any thread without corrupting the simulator --
allocation, free and the memory pool take a lock where they share state, and a kernel launch runs on its own
thread's simulated cores. What is not: like the real ``aclInit``/``aclFinalize``/``aclrtSetDevice``, they
change the process's runtime for every thread (one thread's ``aclFinalize`` releases the memory another thread
still uses); freeing or writing a buffer another thread is reading is a data race, as on a device; and CANN's
aclnn phase 1 is not re-entrant for every operator (``aclnnThresholdBackward`` keeps the threshold in a
file-scope global). The convenience layer (``ascend_lab.run``) does not touch this runtime: each of its
calls runs in a runtime of its own (:func:`own_runtime`, selected through the simulation context,
``base.context``), so it is thread-safe and never inits or finalizes the process's runtime.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import itertools
import os
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from ..base import context as _context
from ..base import platform as _platform
from ..base.log import OP_LOGE

__all__ = [
    "ACL_SUCCESS", "ACL_ERROR_INVALID_PARAM", "ACL_ERROR_UNINITIALIZE", "ACL_ERROR_REPEAT_INITIALIZE",
    "ACL_ERROR_RT_PARAM_INVALID", "ACL_ERROR_RT_INVALID_DEVICEID", "ACL_ERROR_RT_CONTEXT_NULL",
    "ACL_ERROR_RT_STREAM_CONTEXT", "ACL_ERROR_BAD_ALLOC", "ACL_ERROR_RT_MEMORY_ALLOCATION",
    "ACL_MEM_MALLOC_HUGE_FIRST", "ACL_MEM_MALLOC_HUGE_ONLY", "ACL_MEM_MALLOC_NORMAL_ONLY", "aclrtMemcpyKind",
    "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST", "ACL_MEMCPY_DEVICE_TO_DEVICE",
    "DevicePtr", "DeviceAllocation", "aclrtStream", "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice",
    "aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream", "aclrtMalloc", "aclrtFree", "aclrtMemcpy",
    "aclrtMemset", "aclrtGetMemInfo", "ACL_DDR_MEM", "ACL_HBM_MEM", "set_soc", "soc", "current_soc",
    "is_initialized", "current_device", "trim_pool", "pool_bytes", "pool_limit", "set_pool_limit",
    "device_memory_size", "set_device_memory_size", "install_custom_package", "remove_custom_package",
    "custom_packages", "custom_package", "own_runtime", "lending_uploads",
]

# --- error codes (acl/acl_base.h, runtime rt error codes) -------------------------------------------
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_STREAM_CONTEXT = 107003
ACL_ERROR_BAD_ALLOC = 200000
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001

# --- memory enums -----------------------------------------------------------------------------------
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_HUGE_ONLY = 1
ACL_MEM_MALLOC_NORMAL_ONLY = 2


class aclrtMemcpyKind(IntEnum):
    """Direction of an aclrtMemcpy."""
    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3


ACL_MEMCPY_HOST_TO_HOST = aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_HOST
ACL_MEMCPY_HOST_TO_DEVICE = aclrtMemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE
ACL_MEMCPY_DEVICE_TO_HOST = aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST
ACL_MEMCPY_DEVICE_TO_DEVICE = aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_DEVICE

#: Hidden bytes after every allocation's documented capacity (see module docstring).
GUARD_BYTES = 512
#: Simulated device count (deviceId must be in range).
DEVICE_COUNT = 8
#: Default simulated HBM size per device (``set_device_memory_size`` changes it); allocations beyond it
#: return ACL_ERROR_RT_MEMORY_ALLOCATION.
DEVICE_MEMORY_BYTES = 64 * 2**30
#: Host memory the simulator leaves to everything else: an allocation that would eat into it is refused.
HOST_RESERVE_BYTES = 512 * 2**20
#: Requests from this size up are compared with the host's available memory (smaller ones cannot exhaust
#: it between two checks; numpy's MemoryError is still turned into 207001 for them).
HOST_CHECK_FROM_BYTES = 1 << 20

# aclrtMemAttr values for aclrtGetMemInfo (acl/acl_rt.h)
ACL_DDR_MEM = 0
ACL_HBM_MEM = 1


def _round_up(n: int, a: int) -> int:
    return -(-n // a) * a


# --- state --------------------------------------------------------------------------------------------
@dataclass(eq=False)
class _State:
    """One runtime: the process's (``_state``, what ``aclInit`` ... ``aclFinalize`` drive) or a call's own
    (:func:`own_runtime`). The runtime in force is the simulation context's (``base.context``)."""
    initialized: bool = False
    device: int | None = None
    allocated: int = 0                       # bytes requested by live aclrtMalloc allocations
    device_memory: int = DEVICE_MEMORY_BYTES
    streams: set[int] = field(default_factory=set)
    #: Live aclrtMalloc allocations (weakly held: a leaked one the program drops is reclaimed by Python),
    #: released by aclFinalize like the device memory of a real process.
    live: weakref.WeakSet[DeviceAllocation] = field(default_factory=weakref.WeakSet)


_state = _State()
_ids = itertools.count(1)
_address = itertools.count(0)
_live = _state.live
#: Guards the runtimes' bookkeeping (allocated bytes, live sets, the pool) against threads (reentrant: a garbage
#: collection can run ``DeviceAllocation.__del__`` -> ``_recycle`` inside a locked section).
_lock = threading.RLock()
#: Every live aclrtMalloc allocation of every runtime: what the host backs (``_host_can_back``).
_all_live: weakref.WeakSet[DeviceAllocation] = weakref.WeakSet()


def _rt() -> _State:
    """The runtime the calls act on: the simulation context's own (a convenience call), else the process's."""
    own = _context.current().runtime
    return _state if own is None else own


@contextlib.contextmanager
def own_runtime() -> Iterator[_State]:
    """Run the block on a runtime of its own, initialised with device 0 set (the device memory size of the runtime
    in force): the ``acl`` calls inside act on it, in this thread only, and leave the process's runtime alone --
    neither ``aclInit`` nor ``aclFinalize`` is called on it. Allocations still live at the end are released, as
    ``aclFinalize`` would. What the convenience layer (``ascend_lab.run``) runs each call in."""
    own = _State(initialized=True, device=0, device_memory=_rt().device_memory)
    try:
        with _context.scoped(runtime=own):
            yield own
    finally:
        _release_all(own, "aclFinalize")


def _log(api: str, message: str) -> None:
    OP_LOGE(api, message)


#: Freed device buffers kept for reuse, by length (the runtime's memory pool; see ``_pooled_buffer``).
_POOL: dict[int, list[np.ndarray]] = {}
#: Default bound on the bytes the pool retains (``set_pool_limit`` changes it).
POOL_LIMIT_BYTES = 256 * 2**20
_pool_limit = POOL_LIMIT_BYTES
_pool_bytes = 0


def _pooled_buffer(nbytes: int) -> tuple[np.ndarray, bool]:
    """Backing bytes, reusing a freed buffer of the same length when there is one; returns (buffer, stale).

    The real runtime serves aclrtMalloc from a memory pool too; here the pool also spares the host the
    page faults of touching fresh memory. A reused buffer still holds its last owner's bytes (``stale``):
    :class:`DeviceAllocation` zeroes them before anyone can see them, so every run is deterministic -- all at
    the first look, or all but the span a memcpy is about to overwrite (``DeviceAllocation.overwrite``), which
    spares an upload one pass over its bytes."""
    global _pool_bytes
    with _lock:
        bucket = _POOL.get(nbytes)
        if bucket:
            buf = bucket.pop()
            if not bucket:
                del _POOL[nbytes]
            _pool_bytes -= nbytes
            return buf, True
    return np.zeros(nbytes, dtype=np.uint8), False


#: References to a buffer inside ``_recycle``: the caller's variable, the parameter, getrefcount's argument.
_OWN_REFS = 3


def _recycle(buf: np.ndarray) -> None:
    """Keep a freed buffer for reuse -- unless a numpy view made before the free still reaches it (then
    reusing it would let that view read and write another allocation's bytes) or the pool is full."""
    global _pool_bytes
    if sys.getrefcount(buf) > _OWN_REFS:
        return
    with _lock:
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
    with _lock:
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
    with _lock:
        previous = _pool_limit
        _pool_limit = POOL_LIMIT_BYTES if nbytes is None else int(nbytes)
    if _pool_bytes > _pool_limit:
        trim_pool()
    return previous


def device_memory_size() -> int:
    """The simulated HBM size per device that aclrtMalloc allocates from."""
    return _rt().device_memory


def set_device_memory_size(nbytes: int | None) -> int:
    """Set the simulated HBM size per device (``None``: the default ``DEVICE_MEMORY_BYTES``), e.g. to
    watch an allocation fail with 207001 without needing that much host memory. Memory already allocated
    stays; later allocations must fit in what is left. Returns the previous size."""
    if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer))
                               or nbytes <= 0):
        raise ValueError(f"the device memory size must be an int > 0 (bytes) or None, not {nbytes!r}")
    st = _rt()
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


class DeviceAllocation:
    """One ``aclrtMalloc`` block: requested size, documented capacity and the backing bytes."""

    def __init__(self, size: int):
        self.id = next(_ids)
        self.size = size
        self.capacity = _round_up(size, 32) + 32
        self._buffer, self._stale = _pooled_buffer(self.capacity + GUARD_BYTES)
        self.base_address = 0x12C0_0000_0000 + next(_address) * 0x20_0000   # 2 MB huge-page spacing
        self.freed = False
        self.freed_by = ""                    # "aclrtFree" or "aclFinalize" once released
        # copy on write (``lend``): the caller's bytes standing for the first ``size`` bytes until anything but a
        # kernel's read needs the buffer, and the GlobalTensor view caches made over them (dropped at that point)
        self._lent: np.ndarray | None = None
        self._lent_views: list[list[Any]] = []
        self.runtime: _State | None = None    # the runtime whose aclrtMalloc made it (None: made directly)

    @property
    def buffer(self) -> np.ndarray | None:
        """The backing bytes (None once freed); a reused buffer's old bytes are zeroed before the first look,
        lent bytes (``lend``) are copied in first."""
        if self._lent is not None:
            self.take_back()
        if self._stale:
            self._stale = False
            self._buffer.fill(0)
        return self._buffer

    def lend(self, host: np.ndarray) -> None:
        """Let ``host`` (``size`` bytes, uint8, C-contiguous) stand for this allocation's contents without a copy:
        an upload that a kernel only reads then costs nothing. The bytes are copied in (copy on write) the moment
        anything else needs the buffer -- a write, a memcpy, a look through ``buffer`` -- so every reader and
        writer sees exactly what an upload would have left. Only for a caller that keeps ``host`` unchanged while
        the allocation lives (``ops.standalone.run_kernel``, the convenience calls of ``ascend_lab.run``, which
        free their device memory before they return)."""
        if host.dtype != np.uint8 or host.ndim != 1 or host.size != self.size or not host.flags.c_contiguous:
            raise ValueError(f"lend needs {self.size} C-contiguous uint8 bytes, got {host.dtype} {host.shape}")
        if self._buffer is None:
            raise ValueError(f"{self!r} is released")
        view = host.view()
        view.flags.writeable = False          # a write path that forgot to take the bytes back fails loudly
        self._lent_views.clear()
        self._lent = view

    def read_bytes(self) -> np.ndarray | None:
        """The bytes for a kernel's reads of ``[0, size)``: the lent bytes while they stand (no copy), else
        ``buffer``. A view made from them must be registered with ``lent_view`` so that it is dropped when the
        bytes are copied in."""
        return self._lent if self._lent is not None else self.buffer

    @property
    def lent(self) -> bool:
        """Whether lent bytes stand for the contents (a write must go through ``buffer`` first)."""
        return self._lent is not None

    def lent_view(self, cache: list[Any]) -> None:
        """Register a one-element view cache (``GlobalTensor._typed``) holding a view of the lent bytes."""
        self._lent_views.append(cache)

    def take_back(self) -> None:
        """Copy lent bytes in (the rest of a reused buffer zeroed) and drop every view made of them: from now on
        the allocation is an ordinary one. Nothing to do when no bytes are lent."""
        host, self._lent = self._lent, None
        if host is None:
            return
        for cache in self._lent_views:
            cache[0] = None
        self._lent_views.clear()
        buf = self._buffer
        if buf is None:
            return
        buf[:host.size] = host
        if self._stale:
            self._stale = False
            buf[host.size:] = 0

    def overwrite(self, offset: int, nbytes: int) -> np.ndarray:
        """The uint8 view of ``[offset, offset + nbytes)`` for a caller that writes every byte of it at once
        (an upload): a reused buffer's old bytes are zeroed everywhere else, not there. The span must lie inside
        the buffer (the caller has checked it, as ``DevicePtr.bytes`` does)."""
        if self._lent is not None:
            self.take_back()
        buf = self._buffer
        if buf is None or offset < 0 or nbytes < 0 or offset + nbytes > buf.size:
            raise ValueError(f"{nbytes} B at offset {offset} are outside {self!r}")
        if self._stale:
            self._stale = False
            buf[:offset] = 0
            buf[offset + nbytes:] = 0
        return buf[offset:offset + nbytes]

    @property
    def released(self) -> bool:
        """Whether the backing bytes are gone (freed, or the allocation is being reclaimed)."""
        return self._buffer is None

    @property
    def backing_bytes(self) -> int:
        """Host bytes behind this allocation (capacity plus the hidden guard)."""
        return self.capacity + GUARD_BYTES

    def release(self, by: str) -> None:
        """Give the bytes back: from now on nothing can reach them through this allocation."""
        buf, self._buffer, self._stale = self._buffer, None, False
        self._lent = None                     # the caller's bytes are theirs again (never pooled)
        for cache in self._lent_views:
            cache[0] = None
        self._lent_views.clear()
        self.freed, self.freed_by = True, by
        if buf is not None:
            _recycle(buf)

    def __del__(self) -> None:
        # Dropped without aclrtFree (a kernel argument made by ops.kernel_args, or a leaked allocation Python
        # reclaims): its bytes go back to the pool like a freed buffer's -- unless a numpy view still reaches them
        # (``_recycle`` checks) -- so the next run of the same size is spared the page faults of fresh memory.
        buf = getattr(self, "_buffer", None)
        if buf is not None:
            self._buffer = None
            try:
                _recycle(buf)
            except (TypeError, AttributeError):   # interpreter shutdown: the module's globals may be gone
                pass

    def __repr__(self) -> str:
        return f"<DeviceAllocation #{self.id} {self.size} B at {self.base_address:#x}>"


class DevicePtr:
    """A ``void*`` into device memory. Supports ``ptr + nbytes`` like C pointer arithmetic."""

    __slots__ = ("allocation", "offset")

    def __init__(self, allocation: DeviceAllocation, offset: int = 0):
        self.allocation = allocation
        self.offset = offset

    def __add__(self, nbytes: int) -> DevicePtr:
        return DevicePtr(self.allocation, self.offset + int(nbytes))

    @property
    def address(self) -> int:
        return self.allocation.base_address + self.offset

    @property
    def available(self) -> int:
        """Bytes from this pointer to the end of the requested allocation size."""
        return self.allocation.size - self.offset

    def bytes(self, nbytes: int) -> np.ndarray:
        """The uint8 view of ``nbytes`` at this address. Refuses (``ValueError``) freed memory and any span
        outside the allocation's physical buffer, so no view can reach bytes the allocation does not own."""
        buf = self.allocation.buffer
        if buf is None or self.allocation.freed:
            raise ValueError(f"{self!r} points into device memory released by {self.allocation.freed_by}")
        if self.offset < 0 or nbytes < 0 or self.offset + nbytes > buf.size:
            raise ValueError(f"{nbytes} B at {self!r} (offset {self.offset}) are outside its allocation")
        return buf[self.offset:self.offset + nbytes]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DevicePtr) and other.allocation is self.allocation
                and other.offset == self.offset)

    def __hash__(self) -> int:
        return hash((id(self.allocation), self.offset))

    def __repr__(self) -> str:
        return f"DevicePtr({self.address:#x})"


class aclrtStream:
    """A stream. The simulator executes each task when it is submitted, so synchronising is a no-op
    that still checks the stream is alive (real streams are asynchronous: always synchronise before
    reading results, as the seed samples do)."""

    def __init__(self) -> None:
        self.id = next(_ids)
        self.destroyed = False
        self.tasks: list[str] = []

    def __repr__(self) -> str:
        return f"aclrtStream(#{self.id})"


# --- init / device -------------------------------------------------------------------------------------
def aclInit(config_path: str | None = None) -> int:
    """Initialise ACL once per process (a second call returns ACL_ERROR_REPEAT_INITIALIZE). Process-wide, as in
    ACL: not for one thread of several to call while others use the runtime (module docstring)."""
    st = _rt()
    with _lock:
        if st.initialized:
            return ACL_ERROR_REPEAT_INITIALIZE
        st.initialized = True
    return ACL_SUCCESS


def aclFinalize() -> int:
    """Release ACL; the device in use is reset and every allocation still live is released -- for every thread
    (process-wide, as in ACL; module docstring)."""
    st = _rt()
    with _lock:
        if not st.initialized:
            return ACL_ERROR_UNINITIALIZE
        st.initialized = False
        st.device = None
    _release_all(st, "aclFinalize")
    return ACL_SUCCESS


def _release_all(st: _State, by: str) -> None:
    """Release every live allocation of ``st``, as a process's device memory goes away with its ACL context."""
    with _lock:
        allocs = list(st.live)
        st.live.clear()
        st.allocated = 0
        for alloc in allocs:
            _all_live.discard(alloc)
        for alloc in allocs:
            if not alloc.freed:
                alloc.release(by)


def aclrtSetDevice(device_id: int) -> int:
    """Choose the device (0..7) that later calls run on; needs aclInit first."""
    st = _rt()
    if not st.initialized:
        return ACL_ERROR_UNINITIALIZE
    if not isinstance(device_id, (int, np.integer)) or isinstance(device_id, bool):
        raise TypeError(f"deviceId must be an int, not {type(device_id).__name__}")
    if not 0 <= device_id < DEVICE_COUNT:
        _log("aclrtSetDevice", f"deviceId {device_id} is out of range [0, {DEVICE_COUNT})")
        return ACL_ERROR_RT_INVALID_DEVICEID
    st.device = int(device_id)
    return ACL_SUCCESS


def aclrtResetDevice(device_id: int) -> int:
    """Release the device set by aclrtSetDevice."""
    st = _rt()
    if st.device != device_id:
        return ACL_ERROR_RT_INVALID_DEVICEID
    st.device = None
    return ACL_SUCCESS


def _context_error(st: _State | None = None) -> int:
    st = _rt() if st is None else st
    if not st.initialized:
        return ACL_ERROR_UNINITIALIZE
    if st.device is None:
        return ACL_ERROR_RT_CONTEXT_NULL
    return ACL_SUCCESS


def aclrtCreateStream() -> tuple[int, aclrtStream | None]:
    """``ret, stream = aclrtCreateStream()``: a task queue on the current device."""
    err = _context_error()
    if err:
        return err, None
    s = aclrtStream()
    _rt().streams.add(s.id)
    return ACL_SUCCESS, s


def aclrtDestroyStream(stream: aclrtStream | None) -> int:
    """Destroy a stream; using it afterwards is an error. Anything but a live stream (``None``, a
    destroyed stream, an object that is no stream) is ACL_ERROR_INVALID_PARAM."""
    if not isinstance(stream, aclrtStream) or stream.destroyed:
        _log("aclrtDestroyStream", f"{stream!r} is not a live stream from aclrtCreateStream")
        return ACL_ERROR_INVALID_PARAM
    stream.destroyed = True
    _rt().streams.discard(stream.id)
    return ACL_SUCCESS


def aclrtSynchronizeStream(stream: aclrtStream | None) -> int:
    """Wait for the stream's tasks (immediate here: the simulator runs each task when it is submitted).
    ``None`` is the default stream; a destroyed stream is ACL_ERROR_RT_STREAM_CONTEXT, an object that is
    no stream ACL_ERROR_INVALID_PARAM."""
    if stream is not None and not isinstance(stream, aclrtStream):
        _log("aclrtSynchronizeStream", f"{type(stream).__name__} is not a stream from aclrtCreateStream")
        return ACL_ERROR_INVALID_PARAM
    if stream is not None and stream.destroyed:
        return ACL_ERROR_RT_STREAM_CONTEXT
    return _context_error()


# --- memory ---------------------------------------------------------------------------------------------
def aclrtMalloc(size: int, policy: int = ACL_MEM_MALLOC_HUGE_FIRST) -> tuple[int, DevicePtr | None]:
    """Allocate ``size`` bytes of simulated device memory: ``ret, ptr = aclrtMalloc(size, policy)``.

    ACL_ERROR_RT_MEMORY_ALLOCATION (207001) when the request does not fit in what is left of the
    simulated device memory or in what the host can back; both are checked before any host memory is
    allocated (module docstring)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be an int number of bytes, not {type(size).__name__}")
    st = _rt()
    err = _context_error(st)
    if err:
        return err, None
    if size <= 0:
        _log("aclrtMalloc", f"size must be > 0, got {size}")
        return ACL_ERROR_INVALID_PARAM, None
    if policy not in (ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY):
        _log("aclrtMalloc", f"unknown memory policy {policy}")
        return ACL_ERROR_INVALID_PARAM, None
    size = int(size)
    with _lock:                 # reserve the bytes first, so two threads cannot both take the last of them
        if st.allocated + size > st.device_memory:
            _log("aclrtMalloc", f"out of device memory: {size} B requested, {st.allocated} B of "
                                f"{st.device_memory} B in use")
            return ACL_ERROR_RT_MEMORY_ALLOCATION, None
        st.allocated += size
    backing = _round_up(size, 32) + 32 + GUARD_BYTES
    alloc = None
    try:
        if backing < HOST_CHECK_FROM_BYTES or _host_can_back(backing):
            alloc = DeviceAllocation(size)
        # else: _host_can_back logged why
    except MemoryError:
        _log("aclrtMalloc", f"the host could not back {backing} B of simulated device memory")
    if alloc is None:
        with _lock:
            st.allocated -= size
        return ACL_ERROR_RT_MEMORY_ALLOCATION, None
    alloc.runtime = st
    with _lock:
        st.live.add(alloc)
        _all_live.add(alloc)
    return ACL_SUCCESS, DevicePtr(alloc)


def _host_can_back(backing: int) -> bool:
    """Whether the host can hold ``backing`` more bytes on top of every live allocation (each counted as
    resident, whether or not its pages were touched yet) and still keep HOST_RESERVE_BYTES free."""
    avail = _host_available()
    if avail is None:
        return True
    with _lock:
        held = sum(a.backing_bytes for a in list(_all_live))
    if held + backing > avail - HOST_RESERVE_BYTES and _pool_bytes:
        trim_pool()                              # pooled buffers are memory the host can have back
        avail = _host_available() or avail
    if held + backing > avail - HOST_RESERVE_BYTES:
        _log("aclrtMalloc", f"the host cannot back {backing} B of simulated device memory: {avail} B "
                            f"available, {held} B already allocated, {HOST_RESERVE_BYTES} B kept "
                            "for everything else")
        return False
    return True


def aclrtFree(ptr: DevicePtr | None) -> int:
    """Free an allocation from aclrtMalloc (the pointer must be its start); its bytes go back to the pool."""
    if not isinstance(ptr, DevicePtr) or ptr.offset != 0 or ptr.allocation.freed:
        _log("aclrtFree", f"{ptr!r} is not the start of a live allocation")
        return ACL_ERROR_INVALID_PARAM
    alloc = ptr.allocation
    st = alloc.runtime
    with _lock:
        if alloc.freed:                       # another thread freed it meanwhile
            return ACL_ERROR_INVALID_PARAM
        if st is not None and alloc in st.live:
            st.live.discard(alloc)
            st.allocated -= alloc.size
        _all_live.discard(alloc)
        alloc.release("aclrtFree")
    return ACL_SUCCESS


def _host_bytes(arr: object, writable: bool, api: str, what: str) -> np.ndarray | None:
    if isinstance(arr, (bytes, bytearray, memoryview)) and not writable:
        return np.frombuffer(arr, dtype=np.uint8)
    if arr is None or isinstance(arr, DevicePtr):    # a C caller can pass these as void*: a code, not a raise
        _log(api, f"{what} must be host memory for this memcpy kind, got {arr!r}")
        return None
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{what} must be a numpy array (host memory), not {type(arr).__name__}")
    if not arr.flags.c_contiguous:
        _log(api, f"{what} is not C-contiguous host memory; pass np.ascontiguousarray(...)")
        return None
    if writable and not arr.flags.writeable:
        _log(api, f"{what} is read-only")
        return None
    return arr.reshape(-1).view(np.uint8)


def _device_ok(ptr: object, nbytes: int, api: str, what: str) -> bool:
    if ptr is None or isinstance(ptr, np.ndarray):   # nullptr or a host pointer: C can pass both
        _log(api, f"{what} must be device memory from aclrtMalloc for this memcpy kind, got "
                  f"{'nullptr' if ptr is None else 'host memory'}")
        return False
    if not isinstance(ptr, DevicePtr):
        raise TypeError(f"{what} must be a DevicePtr from aclrtMalloc, not {type(ptr).__name__}")
    if ptr.allocation.freed:
        _log(api, f"{what} {ptr!r} points into memory released by {ptr.allocation.freed_by}")
        return False
    if ptr.offset < 0 or nbytes > ptr.available:
        _log(api, f"{what} {ptr!r}: {nbytes} B reaches past its allocation ({ptr.available} B left)")
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
        _log(api, f"unknown memcpy kind {kind}")
        return ACL_ERROR_INVALID_PARAM
    if count < 0 or dest_max < 0:
        _log(api, f"count ({count}) and destMax ({dest_max}) must be >= 0")
        return ACL_ERROR_INVALID_PARAM
    if count > dest_max:
        _log(api, f"count ({count} B) is larger than destMax ({dest_max} B)")
        return ACL_ERROR_INVALID_PARAM
    if kind != ACL_MEMCPY_HOST_TO_HOST:
        err = _context_error()
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
            _log(api, f"destMax ({dest_max} B) is larger than the host buffer ({d.size} B)")
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
            _log(api, f"count ({count} B) is larger than the host source ({s.size} B)")
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
            _log(api, f"{n} must be an int, not {type(v).__name__} {v!r}")
            return ACL_ERROR_INVALID_PARAM
    if count < 0 or dest_max < 0:
        _log(api, f"count ({count}) and maxCount ({dest_max}) must be >= 0")
        return ACL_ERROR_INVALID_PARAM
    if count > dest_max:
        _log(api, f"count ({count} B) is larger than maxCount ({dest_max} B)")
        return ACL_ERROR_INVALID_PARAM
    err = _context_error()
    if err:
        return err
    if not isinstance(dst, DevicePtr):
        _log(api, f"devPtr must be a DevicePtr from aclrtMalloc, not {type(dst).__name__}")
        return ACL_ERROR_INVALID_PARAM
    if not _device_ok(dst, dest_max, api, "devPtr"):
        return ACL_ERROR_INVALID_PARAM
    dst.bytes(int(count))[...] = int(value) & 0xFF
    return ACL_SUCCESS


def aclrtGetMemInfo(attr: int) -> tuple[int, int, int]:
    """``ret, free, total = aclrtGetMemInfo(ACL_HBM_MEM)``: the current device's simulated HBM.
    ``total`` is ``device_memory_size()``; the simulator models HBM only (other attributes are
    ACL_ERROR_INVALID_PARAM)."""
    err = _context_error()
    if err:
        return err, 0, 0
    if isinstance(attr, bool) or not isinstance(attr, (int, np.integer)) or attr != ACL_HBM_MEM:
        _log("aclrtGetMemInfo", f"attr {attr!r}: the simulator models HBM only (ACL_HBM_MEM = {ACL_HBM_MEM})")
        return ACL_ERROR_INVALID_PARAM, 0, 0
    st = _rt()
    total = st.device_memory
    return ACL_SUCCESS, max(total - st.allocated, 0), total


# --- the SoC in force -------------------------------------------------------------------------------------
set_soc = _platform.set_soc
soc = _platform.soc
current_soc = _platform.current_soc
#: The ops-nn experimental kernels ship only as a custom operator package: ``acl.install_custom_package()``
#: before phase 1 makes the aclnn APIs dispatch to them on the SoCs they register (see ``base.platform``).
install_custom_package = _platform.install_custom_package
remove_custom_package = _platform.remove_custom_package
custom_packages = _platform.custom_packages
custom_package = _platform.custom_package


def is_initialized() -> bool:
    """Whether aclInit has been called (and not finalized) -- on the runtime in force (module docstring)."""
    return _rt().initialized


def current_device() -> int | None:
    """The device set by aclrtSetDevice, or None."""
    return _rt().device

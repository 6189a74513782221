"""The ACL runtime calls of the seed samples: init, device, stream, device memory and memcpy.

Device memory is simulated: each ``aclrtMalloc`` owns a numpy byte buffer. As CANN documents for
``aclrtMalloc``, the usable capacity is the size rounded up to 32 bytes plus 32 bytes; behind that the
simulator keeps a hidden guard region so that a kernel that reads or writes a little past an allocation
(ThresholdGradV2D does, by design) is *seen* doing it instead of corrupting Python memory.

Every function returns ACL error codes as ints, never raises for anything a C caller could pass;
Python-level misuse (a list where an array is expected) raises ``TypeError``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..base import platform as _platform

__all__ = [
    "ACL_SUCCESS", "ACL_ERROR_INVALID_PARAM", "ACL_ERROR_UNINITIALIZE", "ACL_ERROR_REPEAT_INITIALIZE",
    "ACL_ERROR_RT_PARAM_INVALID", "ACL_ERROR_RT_INVALID_DEVICEID", "ACL_ERROR_RT_CONTEXT_NULL",
    "ACL_ERROR_RT_STREAM_CONTEXT", "ACL_ERROR_BAD_ALLOC", "ACL_ERROR_RT_MEMORY_ALLOCATION",
    "ACL_MEM_MALLOC_HUGE_FIRST", "ACL_MEM_MALLOC_HUGE_ONLY", "ACL_MEM_MALLOC_NORMAL_ONLY", "aclrtMemcpyKind",
    "ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST", "ACL_MEMCPY_DEVICE_TO_DEVICE",
    "DevicePtr", "DeviceAllocation", "aclrtStream", "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice",
    "aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream", "aclrtMalloc", "aclrtFree", "aclrtMemcpy",
    "aclrtMemset", "set_soc", "soc", "current_soc", "is_initialized", "current_device", "trim_pool",
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
#: Simulated HBM size per device, used to refuse absurd allocations with ACL_ERROR_RT_MEMORY_ALLOCATION.
DEVICE_MEMORY_BYTES = 64 * 2**30


def _round_up(n: int, a: int) -> int:
    return -(-n // a) * a


# --- state --------------------------------------------------------------------------------------------
@dataclass
class _State:
    initialized: bool = False
    device: int | None = None
    allocated: int = 0
    streams: set[int] = field(default_factory=set)


_state = _State()
_ids = itertools.count(1)
_address = itertools.count(0)


def _log(api: str, message: str) -> None:
    from ..base.log import OP_LOGE
    OP_LOGE(api, message)


#: Freed device buffers kept for reuse, by length (the runtime's memory pool; see ``_pooled_buffer``).
_POOL: dict[int, list[np.ndarray]] = {}
POOL_LIMIT_BYTES = 1 << 30
_pool_bytes = 0


def _pooled_buffer(nbytes: int) -> np.ndarray:
    """Zeroed backing bytes, reusing a freed buffer of the same length when there is one.

    The real runtime serves aclrtMalloc from a memory pool too; here the pool also spares the host the
    page faults of touching fresh memory. Reused buffers are zeroed so every run is deterministic."""
    global _pool_bytes
    bucket = _POOL.get(nbytes)
    if bucket:
        buf = bucket.pop()
        _pool_bytes -= nbytes
        buf.fill(0)
        return buf
    return np.zeros(nbytes, dtype=np.uint8)


def _recycle(buf: np.ndarray) -> None:
    global _pool_bytes
    if buf.size and _pool_bytes + buf.size <= POOL_LIMIT_BYTES:
        _POOL.setdefault(buf.size, []).append(buf)
        _pool_bytes += buf.size


def trim_pool() -> int:
    """Release every pooled buffer (returns the bytes released); e.g. before measuring peak memory."""
    global _pool_bytes
    released = _pool_bytes
    _POOL.clear()
    _pool_bytes = 0
    return released


class DeviceAllocation:
    """One ``aclrtMalloc`` block: requested size, documented capacity and the backing bytes."""

    def __init__(self, size: int):
        self.id = next(_ids)
        self.size = size
        self.capacity = _round_up(size, 32) + 32
        self.buffer = _pooled_buffer(self.capacity + GUARD_BYTES)
        self.base_address = 0x12C0_0000_0000 + next(_address) * 0x20_0000   # 2 MB huge-page spacing
        self.freed = False

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
        """The uint8 view of ``nbytes`` at this address (within the allocation's physical buffer)."""
        return self.allocation.buffer[self.offset:self.offset + nbytes]

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
    """Initialise ACL once per process (a second call returns ACL_ERROR_REPEAT_INITIALIZE)."""
    if _state.initialized:
        return ACL_ERROR_REPEAT_INITIALIZE
    _state.initialized = True
    return ACL_SUCCESS


def aclFinalize() -> int:
    """Release ACL; the device in use is reset."""
    if not _state.initialized:
        return ACL_ERROR_UNINITIALIZE
    _state.initialized = False
    _state.device = None
    return ACL_SUCCESS


def aclrtSetDevice(device_id: int) -> int:
    """Choose the device (0..7) that later calls run on; needs aclInit first."""
    if not _state.initialized:
        return ACL_ERROR_UNINITIALIZE
    if not isinstance(device_id, (int, np.integer)) or isinstance(device_id, bool):
        raise TypeError(f"deviceId must be an int, not {type(device_id).__name__}")
    if not 0 <= device_id < DEVICE_COUNT:
        _log("aclrtSetDevice", f"deviceId {device_id} is out of range [0, {DEVICE_COUNT})")
        return ACL_ERROR_RT_INVALID_DEVICEID
    _state.device = int(device_id)
    return ACL_SUCCESS


def aclrtResetDevice(device_id: int) -> int:
    """Release the device set by aclrtSetDevice."""
    if _state.device != device_id:
        return ACL_ERROR_RT_INVALID_DEVICEID
    _state.device = None
    return ACL_SUCCESS


def _context_error() -> int:
    if not _state.initialized:
        return ACL_ERROR_UNINITIALIZE
    if _state.device is None:
        return ACL_ERROR_RT_CONTEXT_NULL
    return ACL_SUCCESS


def aclrtCreateStream() -> tuple[int, aclrtStream | None]:
    """``ret, stream = aclrtCreateStream()``: a task queue on the current device."""
    err = _context_error()
    if err:
        return err, None
    s = aclrtStream()
    _state.streams.add(s.id)
    return ACL_SUCCESS, s


def aclrtDestroyStream(stream: aclrtStream | None) -> int:
    """Destroy a stream; using it afterwards is an error."""
    if stream is None or stream.destroyed:
        return ACL_ERROR_INVALID_PARAM
    stream.destroyed = True
    _state.streams.discard(stream.id)
    return ACL_SUCCESS


def aclrtSynchronizeStream(stream: aclrtStream | None) -> int:
    """Wait for the stream's tasks (immediate here: the simulator runs each task when it is submitted)."""
    if stream is not None and stream.destroyed:
        return ACL_ERROR_RT_STREAM_CONTEXT
    return _context_error()


# --- memory ---------------------------------------------------------------------------------------------
def aclrtMalloc(size: int, policy: int = ACL_MEM_MALLOC_HUGE_FIRST) -> tuple[int, DevicePtr | None]:
    """Allocate ``size`` bytes of simulated device memory: ``ret, ptr = aclrtMalloc(size, policy)``."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be an int number of bytes, not {type(size).__name__}")
    err = _context_error()
    if err:
        return err, None
    if size <= 0:
        _log("aclrtMalloc", f"size must be > 0, got {size}")
        return ACL_ERROR_INVALID_PARAM, None
    if policy not in (ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY):
        _log("aclrtMalloc", f"unknown memory policy {policy}")
        return ACL_ERROR_INVALID_PARAM, None
    if _state.allocated + size > DEVICE_MEMORY_BYTES:
        _log("aclrtMalloc", f"out of device memory: {size} B requested, {_state.allocated} B in use")
        return ACL_ERROR_RT_MEMORY_ALLOCATION, None
    alloc = DeviceAllocation(int(size))
    _state.allocated += alloc.size
    return ACL_SUCCESS, DevicePtr(alloc)


def aclrtFree(ptr: DevicePtr | None) -> int:
    """Free an allocation from aclrtMalloc (the pointer must be its start); its bytes go back to the pool."""
    if not isinstance(ptr, DevicePtr) or ptr.offset != 0 or ptr.allocation.freed:
        _log("aclrtFree", f"{ptr!r} is not the start of a live allocation")
        return ACL_ERROR_INVALID_PARAM
    ptr.allocation.freed = True
    _state.allocated -= ptr.allocation.size
    buf, ptr.allocation.buffer = ptr.allocation.buffer, np.zeros(0, dtype=np.uint8)
    _recycle(buf)
    return ACL_SUCCESS


def _host_bytes(arr: object, writable: bool, api: str, what: str) -> np.ndarray | None:
    if isinstance(arr, (bytes, bytearray, memoryview)) and not writable:
        return np.frombuffer(arr, dtype=np.uint8)
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
    if not isinstance(ptr, DevicePtr):
        raise TypeError(f"{what} must be a DevicePtr from aclrtMalloc, not {type(ptr).__name__}")
    if ptr.allocation.freed:
        _log(api, f"{what} {ptr!r} points into freed memory")
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
        d = dst.bytes(count)
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
    d[...] = s
    return ACL_SUCCESS


def aclrtMemset(dst: DevicePtr, dest_max: int, value: int, count: int) -> int:
    """Set ``count`` bytes at ``dst`` to ``value``; ``count > destMax`` is ACL_ERROR_INVALID_PARAM."""
    if count > dest_max:
        return ACL_ERROR_INVALID_PARAM
    if not _device_ok(dst, dest_max, "aclrtMemset", "dst"):
        return ACL_ERROR_INVALID_PARAM
    dst.bytes(count)[...] = value & 0xFF
    return ACL_SUCCESS


# --- the SoC in force -------------------------------------------------------------------------------------
set_soc = _platform.set_soc
soc = _platform.soc
current_soc = _platform.current_soc


def is_initialized() -> bool:
    """Whether aclInit has been called (and not finalized)."""
    return _state.initialized


def current_device() -> int | None:
    """The device set by aclrtSetDevice, or None."""
    return _state.device

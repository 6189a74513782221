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

The runtime is split by what it manages; this module re-exports all of it (``acl.runtime.X`` as before):

=====================  ==========================================================================================
:mod:`.codes`          error codes, memory policies, memcpy kinds, the memory bounds
:mod:`.state`          the runtimes (the process's, a call's own) and which one is in force
:mod:`.device`         aclInit/aclFinalize, devices, streams
:mod:`.memory`         aclrtMalloc/Free/Memcpy/Memset/GetMemInfo, the simulated HBM size, lending uploads
:mod:`.handles`        DeviceAllocation, DevicePtr, aclrtStream
:mod:`.pool`           freed buffers kept for reuse, and the lock the bookkeeping shares
=====================  ==========================================================================================
"""

from __future__ import annotations

from ..base import platform as _platform
from .codes import (
    ACL_DDR_MEM,
    ACL_ERROR_BAD_ALLOC,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_UNINITIALIZE,
    ACL_HBM_MEM,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_SUCCESS,
    aclrtMemcpyKind,
)
from .codes import DEVICE_COUNT as DEVICE_COUNT
from .codes import DEVICE_MEMORY_BYTES as DEVICE_MEMORY_BYTES
from .codes import GUARD_BYTES as GUARD_BYTES
from .codes import HOST_CHECK_FROM_BYTES as HOST_CHECK_FROM_BYTES
from .codes import HOST_RESERVE_BYTES as HOST_RESERVE_BYTES
from .device import (
    aclFinalize,
    aclInit,
    aclrtCreateStream,
    aclrtDestroyStream,
    aclrtResetDevice,
    aclrtSetDevice,
    aclrtSynchronizeStream,
    current_device,
    is_initialized,
)
from .handles import DeviceAllocation, DevicePtr, aclrtStream
from .memory import (
    aclrtFree,
    aclrtGetMemInfo,
    aclrtMalloc,
    aclrtMemcpy,
    aclrtMemset,
    device_memory_size,
    lending_uploads,
    set_device_memory_size,
)
from .pool import POOL_LIMIT_BYTES as POOL_LIMIT_BYTES
from .pool import pool_bytes, pool_limit, set_pool_limit, trim_pool
from .state import PROCESS, RuntimeState, own_runtime

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

# The names tests of this repository read: the process's runtime and its type (``rt._state.allocated``)
_state, _State = PROCESS, RuntimeState

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

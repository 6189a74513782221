"""The ACL runtime's codes and limits: error codes (acl/acl_base.h, the runtime's rt codes), memory policies,
memcpy kinds, memory attributes, and the simulator's bounds on device and host memory."""

from __future__ import annotations

from enum import IntEnum

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


def round_up(n: int, a: int) -> int:
    """``n`` rounded up to a multiple of ``a``."""
    return -(-n // a) * a

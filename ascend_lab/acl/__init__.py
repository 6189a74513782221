"""``ascend_lab.acl`` — the ACL runtime layer with C names, so each line of the seed samples maps 1:1.

    from ascend_lab import acl
    acl.aclInit(None); acl.aclrtSetDevice(0)
    ret, stream = acl.aclrtCreateStream()
    ret, dev = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
"""

from .runtime import *  # noqa: F403
from .runtime import (
    ACL_ERROR_INVALID_PARAM,
    ACL_SUCCESS,
    DevicePtr,
    aclrtStream,
    current_soc,
    set_soc,
    soc,
)
from .tensor import (
    aclCreateScalar,
    aclCreateTensor,
    aclDestroyScalar,
    aclDestroyTensor,
    aclScalar,
    aclTensor,
    contiguous_strides,
)
from .types import *  # noqa: F403
from .types import aclDataType, aclFormat

__all__ = [
    "ACL_SUCCESS", "ACL_ERROR_INVALID_PARAM", "DevicePtr", "aclrtStream", "aclTensor", "aclScalar",
    "aclCreateTensor", "aclDestroyTensor", "aclCreateScalar", "aclDestroyScalar", "aclDataType",
    "aclFormat", "contiguous_strides", "set_soc", "soc", "current_soc",
]

"""``ascend_lab.acl`` — the ACL runtime layer with C names, so each line of the seed samples maps 1:1.

    from ascend_lab import acl
    acl.aclInit(None); acl.aclrtSetDevice(0)
    ret, stream = acl.aclrtCreateStream()
    ret, dev = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
"""

from . import runtime as _runtime
from . import tensor as _tensor
from . import types as _types
from .runtime import *  # noqa: F403
from .tensor import *  # noqa: F403
from .types import *  # noqa: F403

__all__ = [*_runtime.__all__, *_tensor.__all__, *_types.__all__]

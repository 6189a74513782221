"""One place that turns anything a user may call a dtype into an ``aclDataType`` and back to numpy.

Accepted spellings: an ``aclDataType`` (or its int value), a numpy dtype or scalar type,
``ml_dtypes.bfloat16``, or a name such as ``"float16"``, ``"fp16"``, ``"half"``, ``"bf16"``,
``"ACL_FLOAT"``, ``"DT_BF16"``. Anything else raises ``TypeError``/``ValueError`` saying what is accepted.
The reading itself is :func:`ascend_lab.acl.types.as_acl_dtype` (numpy-free, so the host tiling shares it);
this module adds what needs numpy: the storage type of each ``aclDataType``.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .acl.types import DTYPE_ALIASES, aclDataType, as_acl_dtype

DT = aclDataType
bfloat16 = np.dtype(ml_dtypes.bfloat16)

_TO_NUMPY: dict[aclDataType, np.dtype] = {
    DT.ACL_FLOAT: np.dtype(np.float32),
    DT.ACL_FLOAT16: np.dtype(np.float16),
    DT.ACL_BF16: bfloat16,
    DT.ACL_DOUBLE: np.dtype(np.float64),
    DT.ACL_INT8: np.dtype(np.int8),
    DT.ACL_UINT8: np.dtype(np.uint8),
    DT.ACL_INT16: np.dtype(np.int16),
    DT.ACL_UINT16: np.dtype(np.uint16),
    DT.ACL_INT32: np.dtype(np.int32),
    DT.ACL_UINT32: np.dtype(np.uint32),
    DT.ACL_INT64: np.dtype(np.int64),
    DT.ACL_UINT64: np.dtype(np.uint64),
    DT.ACL_BOOL: np.dtype(np.bool_),
    DT.ACL_COMPLEX64: np.dtype(np.complex64),
    DT.ACL_COMPLEX128: np.dtype(np.complex128),
}
_ALIASES = DTYPE_ALIASES

#: The dtypes the book's operators can meet (order used by tables and figures).
BOOK_DTYPES: tuple[aclDataType, ...] = (
    DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT16,
    DT.ACL_INT32, DT.ACL_INT64, DT.ACL_BOOL, DT.ACL_DOUBLE,
)


def to_numpy(dtype: Any) -> np.dtype:
    """The numpy dtype that stores an ``aclDataType`` (bf16 uses ``ml_dtypes.bfloat16``)."""
    dt = as_acl_dtype(dtype)
    try:
        return _TO_NUMPY[dt]
    except KeyError:
        raise ValueError(f"{dt.name} has no numpy storage type in this simulator") from None


def itemsize(dtype: Any) -> int:
    """Bytes per element (``sizeof(T)`` in a kernel)."""
    return to_numpy(dtype).itemsize


def name(dtype: Any) -> str:
    """The short name used throughout the book: ``float32``, ``float16``, ``bfloat16``, ``int8``..."""
    return as_acl_dtype(dtype).short


def is_floating(dtype: Any) -> bool:
    return as_acl_dtype(dtype) in (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE)

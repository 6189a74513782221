"""aclDataType and aclFormat with CANN's own numeric values (``acl/acl_base.h``).

The numbers matter: they are what a C++ sample passes to ``aclCreateTensor`` and what
``op::DataType`` (``ge::DataType``) uses inside opbase, so PromoteType tables are indexed by them.
"""

from __future__ import annotations

import numbers
import sys
from enum import IntEnum
from typing import Any


class aclDataType(IntEnum):  # C name on purpose
    """Element types with CANN's numeric values (``ACL_FLOAT = 0``, ``ACL_FLOAT16 = 1``, ``ACL_BF16 = 27``...)."""
    ACL_DT_UNDEFINED = -1
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_STRING = 13
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27
    ACL_INT4 = 29
    ACL_UINT1 = 30
    ACL_COMPLEX32 = 33

    @property
    def short(self) -> str:
        """The lower-case name used in the book and by the convenience API (``float16``, ``bfloat16``...)."""
        return _SHORT_NAMES.get(self, self.name.removeprefix("ACL_").lower())


class aclFormat(IntEnum):
    """Tensor formats with CANN's numeric values; these operators use ``ACL_FORMAT_ND`` (2)."""
    ACL_FORMAT_UNDEFINED = -1
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_NC1HWC0_C04 = 12
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30
    ACL_FORMAT_NDC1HWC0 = 32
    ACL_FRACTAL_Z_3D = 33
    ACL_FORMAT_NC = 35
    ACL_FORMAT_NCL = 47


_SHORT_NAMES = {
    aclDataType.ACL_FLOAT: "float32",
    aclDataType.ACL_FLOAT16: "float16",
    aclDataType.ACL_BF16: "bfloat16",
    aclDataType.ACL_DOUBLE: "float64",
    aclDataType.ACL_DT_UNDEFINED: "undefined",
}

DT = aclDataType
#: Spellings of a dtype name (after ``ACL_``/``DT_`` prefixes are dropped, lower-cased).
DTYPE_ALIASES: dict[str, aclDataType] = {
    "float": DT.ACL_FLOAT, "float32": DT.ACL_FLOAT, "fp32": DT.ACL_FLOAT, "f32": DT.ACL_FLOAT,
    "float16": DT.ACL_FLOAT16, "fp16": DT.ACL_FLOAT16, "half": DT.ACL_FLOAT16, "f16": DT.ACL_FLOAT16,
    "bfloat16": DT.ACL_BF16, "bf16": DT.ACL_BF16,
    "double": DT.ACL_DOUBLE, "float64": DT.ACL_DOUBLE, "fp64": DT.ACL_DOUBLE, "f64": DT.ACL_DOUBLE,
    "int8": DT.ACL_INT8, "i8": DT.ACL_INT8, "uint8": DT.ACL_UINT8, "u8": DT.ACL_UINT8,
    "int16": DT.ACL_INT16, "i16": DT.ACL_INT16, "uint16": DT.ACL_UINT16, "u16": DT.ACL_UINT16,
    "int32": DT.ACL_INT32, "i32": DT.ACL_INT32, "uint32": DT.ACL_UINT32, "u32": DT.ACL_UINT32,
    "int64": DT.ACL_INT64, "i64": DT.ACL_INT64, "uint64": DT.ACL_UINT64, "u64": DT.ACL_UINT64,
    "bool": DT.ACL_BOOL, "complex64": DT.ACL_COMPLEX64, "complex128": DT.ACL_COMPLEX128,
}
#: Bytes per element of every type with a storage type in this simulator (``ascend_lab.dtypes.to_numpy``'s
#: itemsize, known here without numpy: the host tiling runs where numpy is not, the live tiling page).
DTYPE_ITEMSIZE: dict[aclDataType, int] = {
    DT.ACL_FLOAT: 4, DT.ACL_FLOAT16: 2, DT.ACL_BF16: 2, DT.ACL_DOUBLE: 8, DT.ACL_INT8: 1, DT.ACL_UINT8: 1,
    DT.ACL_INT16: 2, DT.ACL_UINT16: 2, DT.ACL_INT32: 4, DT.ACL_UINT32: 4, DT.ACL_INT64: 8, DT.ACL_UINT64: 8,
    DT.ACL_BOOL: 1, DT.ACL_COMPLEX64: 8, DT.ACL_COMPLEX128: 16,
}


def parse_dtype(value: Any) -> aclDataType | None:
    """An ``aclDataType`` from one, an int value or a name (``"fp16"``, ``"ACL_BF16"``); None for any other
    object (a numpy dtype: :func:`ascend_lab.dtypes.as_acl_dtype` reads those). Bad values raise saying why."""
    if isinstance(value, aclDataType):
        return value
    if value is None or isinstance(value, bool):
        # np.dtype(None) is float64: a missing dtype must not silently become ACL_DOUBLE
        raise TypeError(f"dtype must be a name, numpy dtype or aclDataType, not {value!r}")
    if isinstance(value, numbers.Integral):
        try:
            return aclDataType(int(value))
        except ValueError:
            raise ValueError(f"{value} is not an aclDataType value; known: "
                             f"{sorted(int(m) for m in aclDataType)}") from None
    if isinstance(value, str):
        key = value.strip()
        for prefix in ("ACL_", "DT_", "acl_", "dt_"):
            key = key.removeprefix(prefix)
        key = key.lower()
        if key in DTYPE_ALIASES:
            return DTYPE_ALIASES[key]
        try:
            return aclDataType["ACL_" + key.upper()]
        except KeyError:
            raise ValueError(f"unknown dtype name {value!r}; use one of "
                             f"{', '.join(sorted(DTYPE_ALIASES))}") from None
    return None


def as_acl_dtype(value: Any) -> aclDataType:
    """Normalise a dtype in any accepted spelling to an ``aclDataType`` -- the one door every dtype goes through.

    Names, ints and aclDataTypes are read by :func:`parse_dtype`; a numpy dtype or scalar type (``np.float16``,
    ``ml_dtypes.bfloat16``) by its numpy name. This module imports without numpy (the host tiling runs where
    there is none): a numpy dtype exists only once numpy is loaded, so numpy is taken from ``sys.modules``."""
    dt = parse_dtype(value)
    if dt is not None:
        return dt
    try:
        return _NUMPY_SEEN[value]          # np.dtype(...).name costs ~8 us; a dict hit ~0.1 us
    except (KeyError, TypeError):          # not seen yet, or not hashable
        pass
    np = sys.modules.get("numpy")
    try:
        if np is None:
            raise TypeError
        npdt = np.dtype(value)
    except TypeError:
        raise TypeError(f"cannot interpret {value!r} as a dtype; pass a name like 'float16', "
                        "a numpy dtype, ml_dtypes.bfloat16 or an acl.aclDataType") from None
    found = DTYPE_ALIASES.get(npdt.name) if npdt.isnative else None
    if found is None:
        raise ValueError(f"numpy dtype {npdt} has no aclDataType in this simulator; supported: "
                         f"{', '.join(sorted({d.short for d in DTYPE_ITEMSIZE}))}")
    _NUMPY_SEEN[value] = found
    return found


#: numpy dtypes and scalar types already read by :func:`as_acl_dtype` (a handful: one per storage type)
_NUMPY_SEEN: dict[Any, aclDataType] = {}


def dtype_itemsize(value: Any) -> int:
    """Bytes per element (``sizeof(T)``) of a dtype in any spelling, as ``ascend_lab.dtypes.itemsize``."""
    dt = as_acl_dtype(value)
    try:
        return DTYPE_ITEMSIZE[dt]
    except KeyError:
        raise ValueError(f"{dt.name} has no numpy storage type in this simulator") from None


# Module-level C-style constants (acl.ACL_FLOAT, acl.ACL_FORMAT_ND, ...), as in the C headers.
globals().update({m.name: m for m in aclDataType})
globals().update({m.name: m for m in aclFormat})

__all__ = ["aclDataType", "aclFormat", *(m.name for m in aclDataType), *(m.name for m in aclFormat)]

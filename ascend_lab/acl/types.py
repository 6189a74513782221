"""aclDataType and aclFormat with CANN's own numeric values (``acl/acl_base.h``).

The numbers matter: they are what a C++ sample passes to ``aclCreateTensor`` and what
``op::DataType`` (``ge::DataType``) uses inside opbase, so PromoteType tables are indexed by them.
"""

from __future__ import annotations

from enum import IntEnum


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

# Module-level C-style constants (acl.ACL_FLOAT, acl.ACL_FORMAT_ND, ...), as in the C headers.
globals().update({m.name: m for m in aclDataType})
globals().update({m.name: m for m in aclFormat})

__all__ = ["aclDataType", "aclFormat", *(m.name for m in aclDataType), *(m.name for m in aclFormat)]

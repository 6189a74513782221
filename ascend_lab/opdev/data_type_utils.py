"""``op::PromoteType`` and ``op::CanCast`` (``opbase:include/nnopbase/opdev/data_type_utils.h``).

PromoteType answers "in which dtype do two inputs meet?" (it is what HardsigmoidBackward computes in);
CanCast answers "may a result of this dtype be written into that one?" (the check on ``out``).
The table below is opbase's ``kPromoteTypesLookup`` restricted to the dtypes this simulator stores;
rows for f32/f16/bf16/i8/u8/i32/i64 are the ones read from opbase (cann_facts §7), the remaining rows
(i16, bool, f64, complex) follow the same PyTorch-like rules the ops-nn docs describe. The unsigned
types uint16/uint32/uint64 promote with nothing but themselves (``ACL_DT_UNDEFINED``).
"""

from __future__ import annotations

from typing import Any

from ..acl.types import aclDataType
from ..dtypes import as_acl_dtype

DT = aclDataType
U = DT.ACL_DT_UNDEFINED

_ORDER = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT16,
          DT.ACL_INT32, DT.ACL_INT64, DT.ACL_BOOL, DT.ACL_DOUBLE, DT.ACL_COMPLEX64, DT.ACL_COMPLEX128)
_ABBR = {"f32": DT.ACL_FLOAT, "f16": DT.ACL_FLOAT16, "bf16": DT.ACL_BF16, "i8": DT.ACL_INT8,
         "u8": DT.ACL_UINT8, "i16": DT.ACL_INT16, "i32": DT.ACL_INT32, "i64": DT.ACL_INT64,
         "b": DT.ACL_BOOL, "f64": DT.ACL_DOUBLE, "c64": DT.ACL_COMPLEX64, "c128": DT.ACL_COMPLEX128}

# Columns in the order of _ORDER: f32 f16 bf16 i8 u8 i16 i32 i64 bool f64 c64 c128
_TABLE_TEXT = """
f32  : f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64  c128
f16  : f32  f16  f32  f16  f16  f16  f16  f16  f16  f64  c64  c128
bf16 : f32  f32  bf16 bf16 bf16 bf16 bf16 bf16 bf16 f64  c64  c128
i8   : f32  f16  bf16 i8   i16  i16  i32  i64  i8   f64  c64  c128
u8   : f32  f16  bf16 i16  u8   i16  i32  i64  u8   f64  c64  c128
i16  : f32  f16  bf16 i16  i16  i16  i32  i64  i16  f64  c64  c128
i32  : f32  f16  bf16 i32  i32  i32  i32  i64  i32  f64  c64  c128
i64  : f32  f16  bf16 i64  i64  i64  i64  i64  i64  f64  c64  c128
b    : f32  f16  bf16 i8   u8   i16  i32  i64  b    f64  c64  c128
f64  : f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c128 c128
c64  : c64  c64  c64  c64  c64  c64  c64  c64  c64  c128 c64  c128
c128 : c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""


def _parse() -> dict[tuple[aclDataType, aclDataType], aclDataType]:
    table = {}
    for line in _TABLE_TEXT.strip().splitlines():
        row, cells = line.split(":")
        for col, cell in zip(_ORDER, cells.split(), strict=True):
            table[(_ABBR[row.strip()], col)] = _ABBR[cell]
    return table


_PROMOTE = _parse()

#: The dtypes the PromoteType table covers (rows/columns of the book's matrix figure).
PROMOTE_DTYPES: tuple[aclDataType, ...] = _ORDER + (DT.ACL_UINT16, DT.ACL_UINT32, DT.ACL_UINT64)

_FLOATING = {DT.ACL_DOUBLE, DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_FLOAT16}
_INTEGRAL = {DT.ACL_INT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64,
             DT.ACL_UINT8, DT.ACL_UINT16, DT.ACL_UINT32, DT.ACL_UINT64}
_COMPLEX = {DT.ACL_COMPLEX32, DT.ACL_COMPLEX64, DT.ACL_COMPLEX128}


def PromoteType(a: Any, b: Any) -> aclDataType:  # CANN name
    """The dtype two operands are promoted to; ``ACL_DT_UNDEFINED`` when there is none."""
    a, b = as_acl_dtype(a), as_acl_dtype(b)
    if a == b:
        return a
    return _PROMOTE.get((a, b), U)


def CanCast(src: Any, dst: Any) -> bool:  # CANN name
    """Whether a value of dtype ``src`` may be stored as ``dst`` (PyTorch's category order
    bool < integral < floating < complex: never downwards across a category)."""
    src, dst = as_acl_dtype(src), as_acl_dtype(dst)
    if src in _COMPLEX and dst not in _COMPLEX:
        return False
    if src in _FLOATING and dst in _INTEGRAL:
        return False
    if dst == DT.ACL_BOOL and src != DT.ACL_BOOL:
        return False
    return True

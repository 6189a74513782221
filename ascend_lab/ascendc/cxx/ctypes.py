"""C++ types as the front end sees them, and the rules that decide bits: integer promotion, the usual arithmetic
conversions, what a conversion does to a value.

A :class:`CType` is a scalar (``int32_t``, ``uint64_t``, ``float``, ``half``, ``bfloat16_t``, ``double``,
``bool``), a pointer, an AscendC class (``LocalTensor<half>``, ``TQue<VECIN, 2>``), a struct or class of the
kernel's own, an AscendC enum, or ``void``. The translator types every expression at compile time, so the
generated Python converts only where C++ converts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dtypes import bfloat16

__all__ = ["CType", "INT_TYPES", "FLOAT_TYPES", "arith", "promote", "scalar_type", "DTYPE_OF"]


@dataclass(frozen=True)
class CType:
    kind: str                      # int | float | bool | void | ptr | api | struct | enum | auto | null
    name: str = ""
    bits: int = 0
    signed: bool = True
    args: tuple[Any, ...] = ()     # template arguments (CTypes or ints)
    target: CType | None = None    # what a pointer points to

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "bool", "enum")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_arith(self) -> bool:
        return self.kind in ("int", "bool", "float", "enum")

    def spelled(self) -> str:
        if self.kind == "ptr":
            return f"{self.target.spelled() if self.target else 'void'}*"
        if self.args:
            return f"{self.name}<{', '.join(a.spelled() if isinstance(a, CType) else str(a) for a in self.args)}>"
        return self.name or self.kind

    def __str__(self) -> str:
        return self.spelled()


def _int(name: str, bits: int, signed: bool) -> CType:
    return CType("int", name, bits, signed)


INT_TYPES: dict[str, CType] = {
    "int8_t": _int("int8_t", 8, True), "uint8_t": _int("uint8_t", 8, False),
    "int16_t": _int("int16_t", 16, True), "uint16_t": _int("uint16_t", 16, False),
    "int32_t": _int("int32_t", 32, True), "uint32_t": _int("uint32_t", 32, False),
    "int64_t": _int("int64_t", 64, True), "uint64_t": _int("uint64_t", 64, False),
    "char": _int("char", 8, True), "signed char": _int("int8_t", 8, True), "unsigned char": _int("uint8_t", 8, False),
    "short": _int("int16_t", 16, True), "unsigned short": _int("uint16_t", 16, False),
    "int": _int("int32_t", 32, True), "signed": _int("int32_t", 32, True), "unsigned": _int("uint32_t", 32, False),
    "unsigned int": _int("uint32_t", 32, False), "signed int": _int("int32_t", 32, True),
    "long": _int("int64_t", 64, True), "unsigned long": _int("uint64_t", 64, False),
    "long long": _int("int64_t", 64, True), "unsigned long long": _int("uint64_t", 64, False),
    "long int": _int("int64_t", 64, True), "unsigned long int": _int("uint64_t", 64, False),
    "size_t": _int("uint64_t", 64, False), "ssize_t": _int("int64_t", 64, True),
    "uintptr_t": _int("uint64_t", 64, False), "intptr_t": _int("int64_t", 64, True),
    "event_t": _int("int32_t", 32, True), "TEventID": _int("int32_t", 32, True),      # AscendC's event IDs
}
BOOL = CType("bool", "bool", 1, False)
FLOAT_TYPES: dict[str, CType] = {
    "half": CType("float", "half", 16), "float16_t": CType("float", "half", 16),
    "bfloat16_t": CType("float", "bfloat16_t", 16), "__bf16": CType("float", "bfloat16_t", 16),
    "float": CType("float", "float", 32), "float32_t": CType("float", "float", 32),
    "double": CType("float", "double", 64),
}
VOID = CType("void", "void")
AUTO = CType("auto", "auto")
INT32 = INT_TYPES["int32_t"]
INT64 = INT_TYPES["int64_t"]
UINT64 = INT_TYPES["uint64_t"]
FLOAT = FLOAT_TYPES["float"]
DOUBLE = FLOAT_TYPES["double"]

#: numpy dtype of each scalar type a tensor can hold (``LocalTensor<T>``'s T).
DTYPE_OF: dict[str, np.dtype] = {
    "half": np.dtype(np.float16), "float": np.dtype(np.float32), "double": np.dtype(np.float64),
    "bfloat16_t": bfloat16, "int8_t": np.dtype(np.int8), "uint8_t": np.dtype(np.uint8),
    "int16_t": np.dtype(np.int16), "uint16_t": np.dtype(np.uint16), "int32_t": np.dtype(np.int32),
    "uint32_t": np.dtype(np.uint32), "int64_t": np.dtype(np.int64), "uint64_t": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}
#: the Python name of each dtype in generated code (names of ``ascend_lab.ascendc``)
DTYPE_NAME: dict[str, str] = {
    "half": "half", "float": "float_", "double": "float64", "bfloat16_t": "bfloat16_t", "int8_t": "int8_t",
    "uint8_t": "uint8_t", "int16_t": "int16_t", "uint16_t": "uint16_t", "int32_t": "int32_t", "uint32_t": "uint32_t",
    "int64_t": "int64_t", "uint64_t": "uint64_t", "bool": "bool_",
}


def scalar_type(name: str) -> CType | None:
    """The CType of a scalar type name (``int64_t``, ``unsigned int``, ``half``), or None."""
    name = " ".join(name.split())
    if name in INT_TYPES:
        return INT_TYPES[name]
    if name in FLOAT_TYPES:
        return FLOAT_TYPES[name]
    if name == "bool":
        return BOOL
    if name == "void":
        return VOID
    return None


def promote(t: CType) -> CType:
    """Integer promotion: bool, enums and integers narrower than int become int."""
    if t.kind in ("bool", "enum") or (t.kind == "int" and t.bits < 32):
        return INT32
    return t


_FLOAT_RANK = {"half": 1, "bfloat16_t": 1, "float": 2, "double": 3}


def arith(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions: the type both operands of ``a op b`` are converted to."""
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.name == b.name:
                return a
            ra, rb = _FLOAT_RANK[a.name], _FLOAT_RANK[b.name]
            if ra == rb:                   # half with bfloat16_t: both go through float
                return FLOAT
            return a if ra > rb else b
        return a if a.is_float else b
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.signed else (b, a)
    if u.bits >= s.bits:
        return u
    return s                            # the signed type is wider: it holds every value of the unsigned one

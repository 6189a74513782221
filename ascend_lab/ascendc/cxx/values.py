"""What translation works with and produces: a typed expression (:class:`E`, with its compile-time value when
known), the Python lines of one function (:class:`Chunk`), and the rules that turn C++ constants into Python:
literals rounded once to their type, conversions as C++ converts, names that do not clash with Python's.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ...dtypes import bfloat16
from . import api
from .ctypes import (
    INT32,
    INT64,
    INT_TYPES,
    UINT64,
    CType,
)

if TYPE_CHECKING:
    from .decls import Inst

__all__ = [
    "E",
    "NC",
    "Chunk",
    "PY_RESERVED",
    "TRAITS",
    "METHOD_INTS",
    "const_code",
    "convert_const",
    "cxx_spelling",
    "fits",
    "int_range",
    "lit_float",
    "mangle",
    "py_float",
    "safe_name",
    "spell",
]


NC = object()          # "not a compile-time constant"


@dataclass
class E:
    """A translated expression: Python code, its C++ type, its value when known at compile time."""
    code: str
    t: CType
    const: Any = NC
    is_type: bool = False            # an identifier that names a type (``sizeof(T)`` parses as an expression)
    ref: Any = None                  # what a name refers to (a method, a function, a struct spec)
    #: for an unsigned result: code whose value is congruent to it modulo 2**bits (no mask yet), so a chain of
    #: unsigned arithmetic masks once, at the end (C++'s wrap-around is modular arithmetic)
    raw: str | None = None


@dataclass
class Chunk:
    """Python lines made from one C++ function (or class), compiled under ``file``: (text, C++ line) each."""
    file: str
    name: str
    kind: str                        # "class" | "method" | "function" | "struct"
    lines: list[tuple[str, int]]
    owner: str = ""                  # a method's class (Python name)
    method: str = ""                 # a method's Python name on that class
    cxx_name: str = ""               # what a traceback calls the function: K<float>::Init, hard_sigmoid_grad<0>


PY_RESERVED = set(keyword.kwlist) | set(getattr(keyword, "softkwlist", [])) | {
    "this", "np", "print", "len", "range", "int", "float", "bool", "object", "type", "id", "min", "max", "abs"}


def lit_float(text: str, ctype: CType) -> Any:
    """A float literal as the compiler rounds it: to the nearest value of its type (not through a double)."""
    exact = Fraction(text)
    if ctype.name == "double":
        return float(exact)
    dt = {"float": np.float32, "half": np.float16}.get(ctype.name, np.float32)
    cand = dt(float(exact))
    if not np.isfinite(cand):
        return cand
    best, err = cand, abs(Fraction(float(cand)) - exact)
    for other in (np.nextafter(cand, dt(np.inf)), np.nextafter(cand, dt(-np.inf))):
        if np.isfinite(other):
            d = abs(Fraction(float(other)) - exact)
            bits = int(np.array(other).view(np.uint32 if dt is np.float32 else np.uint16))
            if d < err or (d == err and bits % 2 == 0):
                best, err = other, d
    return best


def py_float(v: Any, ctype: CType) -> str:
    """Python code for a float constant of ``ctype``, exact (the double holding the value, then the type)."""
    x = float(v)
    text = repr(x) if math.isfinite(x) else ("float('nan')" if math.isnan(x) else f"float('{'-' if x < 0 else ''}inf')")
    if ctype.name == "double":
        return text
    return {"float": "_f32", "half": "_f16", "bfloat16_t": "_bf16"}[ctype.name] + f"({text})"


def convert_const(v: Any, to: CType) -> Any:
    if to.kind == "bool":
        return bool(v)
    if to.kind == "int":
        if isinstance(v, (float, np.floating)):
            v = int(float(v))
        v = int(v)
        mask = (1 << to.bits) - 1
        v &= mask
        if to.signed and v >= 1 << (to.bits - 1):
            v -= 1 << to.bits
        return v
    if to.kind == "float":
        if to.name == "double":
            return float(v)
        return {"float": np.float32, "half": np.float16}.get(to.name, lambda x: api_bf16(x))(v)
    return v


def api_bf16(x: Any) -> Any:
    return bfloat16.type(x)


def int_range(t: CType) -> tuple[int, int]:
    if t.kind == "bool":
        return 0, 1
    if t.signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def fits(src: CType, dst: CType) -> bool:
    """Every value of ``src`` is a value of ``dst`` (the conversion is a no-op on the Python int)."""
    if src.kind not in ("int", "bool", "enum") or dst.kind not in ("int",):
        return False
    if src.kind == "enum":
        return True
    lo, hi = int_range(src)
    dlo, dhi = int_range(dst)
    return dlo <= lo and hi <= dhi


def const_code(v: Any, t: CType) -> str:
    if t.kind == "enum":
        if isinstance(v, tuple):                        # a queue position or a pipe: ("enum", "VECIN")
            return repr(v[1]) if t.name == "pipe_t" else v[1]
        prefix, members = api.ENUMS.get(t.name, ("", ()))
        return prefix + members[int(v)] if members and 0 <= int(v) < len(members) else str(int(v))
    if t.kind == "bool":
        return "True" if v else "False"
    if t.kind == "int":
        return str(int(v))
    if t.kind == "float":
        return py_float(v, t)
    return repr(v)


#: The type traits a kernel may ask (std::is_same_v, AscendC's IsSameType<A, B>::value ...).
TRAITS = frozenset({"is_same_v", "is_same", "IsSameType", "is_floating_point_v", "is_floating_point",
                     "is_integral_v", "is_integral", "is_signed_v", "is_signed", "is_unsigned_v", "is_unsigned"})


#: integer parameter kinds of API methods: their C++ types (TPipe::InitBuffer(que, uint8_t num, uint32_t len) ...)
METHOD_INTS = {"I": INT32, "U8": INT_TYPES["uint8_t"], "U32": INT_TYPES["uint32_t"], "U64": UINT64, "I64": INT64}


def mangle(a: Any) -> str:
    if isinstance(a, tuple):                       # an enum value given as a template argument: ("enum", "VECIN")
        return str(a[1])
    if isinstance(a, CType):
        return re.sub(r"\W", "", a.spelled().replace("*", "p"))
    return str(int(a)) if not isinstance(a, bool) else ("true" if a else "false")


def cxx_spelling(inst: Inst) -> str:
    return inst.decl.name + (f"<{', '.join(spell(a) for a in inst.args)}>" if inst.args else "")


def spell(a: Any) -> str:
    return a.spelled() if isinstance(a, CType) else str(a)


def safe_name(name: str) -> str:
    return name + "_" if name in PY_RESERVED or name.startswith("_cx") else name

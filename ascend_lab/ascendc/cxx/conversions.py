"""C++ conversions: an expression converted to a type as C++ converts it (the usual conversions of scalars,
a derived class seen as its base, an enum from its integer), and the explicit casts (a mixin of
:class:`~.function.FunctionTranslator`).
"""

from __future__ import annotations

import math

from tree_sitter import Node

from .ctypes import (
    VOID,
    CType,
)
from .values import (
    NC,
    E,
    const_code,
    convert_const,
    fits,
    int_range,
)

__all__ = ['Conversions']


class Conversions:
    """Implicit and explicit conversions of typed expressions."""

    def convert(self, e: E, to: CType, node: Node | None = None, explicit: bool = False) -> str:
        f = e.t
        if to.kind in ("auto",) or f == to:
            return e.code
        if e.const is not NC and to.kind in ("int", "float", "bool") and f.kind in ("int", "float", "bool", "enum"):
            if to.kind == "int" and f.kind == "float" and not (
                    math.isfinite(float(e.const)) and int_range(to)[0] - 1 < float(e.const) < int_range(to)[1] + 1):
                raise self.err(node, f"converting {e.const} to {to} is undefined behaviour (NaN, inf or out of "
                               "its range)")
            return const_code(convert_const(e.const, to), to)
        if to.kind == "int":
            if f.kind in ("int", "bool", "enum"):
                if fits(f, to):
                    return e.code if f.kind == "int" else f"int({e.code})"
                if not to.signed:
                    return f"({self.modular(e)} & {(1 << to.bits) - 1:#x})"
                return f"_wrap_s({e.code}, {to.bits})"
            if f.kind == "float":
                return f"_ftoi({e.code}, {to.bits}, {to.signed})"
        if to.kind == "bool":
            if f.kind in ("int", "float", "bool", "ptr", "enum"):
                return f"bool({e.code})"
        if to.kind == "float":
            if f.kind in ("int", "float", "bool", "enum"):
                return {"float": "_f32", "half": "_f16", "bfloat16_t": "_bf16", "double": "_f64"}[to.name] + \
                    f"({e.code})"
        if to.kind == "ptr" and f.kind == "ptr":
            return e.code
        if to.kind == "ptr" and f.kind == "null":
            return "None"
        if to.kind == "enum" and f.kind in ("int", "enum") and (explicit or f == to):
            return e.code
        if to.kind == f.kind == "api" and to.name == f.name:
            if to.args and f.args and to.args[0] != f.args[0] and to.name in ("LocalTensor", "GlobalTensor"):
                raise self.err(node, f"cannot use a {f} as a {to}",
                               "ReinterpretCast<U>() gives the same UB bytes as another element type")
            return e.code
        if to.kind == f.kind and to.kind in ("struct", "pstruct") and to.name == f.name:
            return e.code
        if to.kind == f.kind == "struct" and self._related(to, f, explicit):    # a derived class as its base
            return e.code
        raise self.err(node, f"cannot convert {f} to {to}")

    def _related(self, to: CType, f: CType, explicit: bool) -> bool:
        """``f`` derives from ``to`` (one object, seen as its base), or -- ``static_cast``, the CRTP's
        ``static_cast<Derived&>(*this)`` -- ``to`` derives from ``f``."""
        ti, fi = self._inst_of(to), self._inst_of(f)
        return ti in fi.chain()[1:] or (explicit and fi in ti.chain()[1:])

    def x_cast_expression(self, node: Node) -> E:
        to = self.tr.type_of(self.unit, node.child_by_field_name("type"), self.bind, self.inst)
        e = self.expr(node.child_by_field_name("value"))
        return self.cast(e, to, node)

    def cast(self, e: E, to: CType, node: Node) -> E:
        if to.kind == "ptr":
            if e.t.kind != "ptr":
                raise self.err(node, f"casting a {e.t} to a pointer is not supported",
                               "only GM pointers (GM_ADDR) may be cast, as in (__gm__ T*)gm")
            return E(e.code, to)
        if to.kind == "void":
            return E(e.code, VOID)
        code = self.convert(e, to, node, explicit=True)
        const = convert_const(e.const, to) if e.const is not NC and to.kind in ("int", "float", "bool") else NC
        return E(code, to, const)

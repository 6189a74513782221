"""C++ expressions to Python expressions, each typed (:class:`~.values.E`): integer results wrapped or checked as C++
defines them, float arithmetic in its own type, constants folded, names resolved through locals, template
arguments, the class and its bases, namespace constants and the AscendC enums.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from tree_sitter import Node

from . import api
from .ctypes import (
    BOOL,
    DOUBLE,
    FLOAT,
    INT64,
    INT_TYPES,
    UINT64,
    VOID,
    CType,
    arith,
    promote,
    scalar_type,
)
from .values import (
    NC,
    TRAITS,
    E,
    const_code,
    convert_const,
    int_range,
    lit_float,
)

if TYPE_CHECKING:
    from .decls import Inst

__all__ = ['Expressions']


class Expressions:
    """Expressions typed at compile time: literals, names, members, operators with the usual arithmetic
    conversions, casts, ``sizeof``, ``?:`` (a mixin of :class:`~.function.FunctionTranslator`)."""

    def expr(self, node: Node) -> E:
        t = node.type
        method = getattr(self, "x_" + t, None)
        if method is None:
            raise self.err(node, f"this expression ({t.replace('_', ' ')}) is not supported")
        return method(node)

    def x_parenthesized_expression(self, node: Node) -> E:
        inner = node.named_children[0]
        e = self.expr(inner)
        return e

    def x_number_literal(self, node: Node) -> E:
        text = node.text.decode().replace("'", "")
        if text[:1] in "+-":                            # the parser folds a sign in: it is a unary operator
            e = self._number(text[1:].lstrip(), node)
            return self._unary(text[0], e, node)
        return self._number(text, node)

    def _number(self, text: str, node: Node) -> E:
        low = text.lower()
        is_hex = low.startswith("0x")
        if not is_hex and any(c in low for c in ".e") or (is_hex and "p" in low):
            if low.endswith("f"):
                t = FLOAT
                v = lit_float(text[:-1], t)
            else:
                t = DOUBLE
                v = float(Fraction(text.rstrip("lL"))) if not is_hex else float.fromhex(text)
            return E(const_code(v, t), t, v)
        m = re.match(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)([uUlL]*)$", text)
        if not m:
            raise self.err(node, f"cannot read the number '{text}'")
        digits, suffix = m.groups()
        v = int(digits, 0) if not (digits.startswith("0") and len(digits) > 1 and digits[1] in "01234567") \
            else int(digits, 8)
        unsigned = "u" in suffix.lower()
        longs = suffix.lower().count("l")
        decimal = not digits.startswith("0") or digits == "0"
        candidates = []
        if longs == 0:
            candidates += ["int32_t"] if not unsigned else ["uint32_t"]
            if not decimal and not unsigned:
                candidates += ["uint32_t"]
        candidates += ["int64_t"] if not unsigned else ["uint64_t"]
        if not decimal and not unsigned:
            candidates += ["uint64_t"]
        for c in candidates:
            ct = INT_TYPES[c]
            lo, hi = int_range(ct)
            if lo <= v <= hi:
                return E(str(v), ct, v)
        raise self.err(node, f"the integer literal {text} is too large for any integer type")

    def x_true(self, node: Node) -> E:
        return E("True", BOOL, True)

    def x_false(self, node: Node) -> E:
        return E("False", BOOL, False)

    def x_null(self, node: Node) -> E:
        return E("None", CType("null", "nullptr"), None)

    x_nullptr = x_null

    def x_char_literal(self, node: Node) -> E:
        text = node.text.decode()[1:-1]
        v = ord(text.encode().decode("unicode_escape")) if text else 0
        return E(str(v), INT_TYPES["char"], v)

    def x_string_literal(self, node: Node) -> E:
        raise self.err(node, "string literals have no use in an AI Core kernel here",
                       "AscendC::printf is not modelled; look at values with the trace (snapshot) instead")

    x_concatenated_string = x_string_literal

    def x_this(self, node: Node) -> E:
        if self.inst is None:
            raise self.err(node, "'this' outside a member function")
        return E("this", CType("ptr", target=self.inst.ctype))

    def x_identifier(self, node: Node) -> E:
        return self.name(node.text.decode(), node)

    x_type_identifier = x_identifier

    x_field_identifier = x_identifier

    x_namespace_identifier = x_identifier

    x_primitive_type = x_identifier

    def name(self, name: str, node: Node) -> E:
        e = self.lookup(name)
        if e is not None:
            return E(e.code, e.t, e.const, ref=e.ref) if e.const is NC or e.t.kind not in (
                "int", "float", "bool") else E(e.code, e.t, e.const)
        if name in self.bind:
            b = self.bind[name]
            if isinstance(b, CType):
                return E("", b, is_type=True)
            ptype = next((pt for k, n, pt in (self.inst.decl.tparams if self.inst else [])
                          if n == name and pt is not None), None)
            ctype = ptype or (BOOL if isinstance(b, bool) else INT64)
            return E(const_code(b, ctype), ctype, b)
        inst = self.inst
        if inst is not None:
            member = self.member(inst, "this", name)
            if member is not None:
                return member
            if name in inst.aliases:
                return E("", inst.aliases[name], is_type=True)
        if name in self.tr.globals:
            g = self.tr.globals[name]
            return E(g.code, g.t, g.const)
        for ename, (prefix, members) in api.ENUMS.items():
            if name in members:
                if ename in ("QuePosition", "TPosition"):
                    return E(name, CType("enum", ename), ("enum", name))
                if ename == "pipe_t":
                    return E(repr(name), CType("enum", "pipe_t"), ("enum", name))
                return E(prefix + name, CType("enum", ename), members.index(name))
        if name in api.UNMODELLED_POSITIONS:
            return E(name, CType("enum", "TPosition"), ("enum", name))
        if name in api.CONSTANTS:
            return E(str(api.CONSTANTS[name]), UINT64, api.CONSTANTS[name])
        st = scalar_type(name)
        if st is not None:
            return E("", st, is_type=True)
        if name in self.tr.classes or name in api.STRUCTS or name in ("LocalTensor", "GlobalTensor", "TPipe", "TQue",
                                                                      "TBuf", "TQueBind") or name in self.tr.aliases:
            if name in self.tr.aliases:
                return E("", self.tr.aliases[name], is_type=True)
            decl = self.tr.classes.get(name)
            if decl is not None and not decl.tparams:
                return E("", self.tr.instantiate_class(self.unit, node, decl, ()).ctype, is_type=True)
            return E("", CType("typename", name), is_type=True)
        if name in self.tr.funcs or name in api.FUNCTIONS:
            return E("", VOID, ref=("function", name))
        if name in ("ASCEND_IS_AIV",):
            return E("True", BOOL, True)
        if name in ("ASCEND_IS_AIC",):
            return E("False", BOOL, False)
        if name in api.KNOWN_UNMODELLED:
            raise self.err(node, f"the AscendC API '{name}' is not modelled by the simulator",
                           "the simulator models: " + ", ".join(sorted(api.FUNCTIONS)))
        raise self.err(node, f"unknown name '{name}'",
                       "declare it before use (a local, a parameter, a member of the class, a constexpr)")

    def member(self, inst: Inst, obj: str, name: str) -> E | None:
        """``obj.name`` on a class of the kernel, looked up through its bases: a field, a static constant (folded),
        or a method (to call); None when the class has no such member."""
        ftype = inst.field_type(name)
        if ftype is not None:
            return E(f"{obj}.{name}", ftype)
        st = inst.static(name)
        if st is not None:
            return E(st.code, st.t, st.const)
        if inst.method_owner(name) is not None:
            return E("", VOID, ref=("method", obj, inst, name))
        return None

    def x_qualified_identifier(self, node: Node) -> E:
        scope = node.child_by_field_name("scope")
        inner = node.child_by_field_name("name")
        s = scope.text.decode() if scope is not None else ""
        n = inner.text.decode()
        if s in api.ENUMS:
            prefix, members = api.ENUMS[s]
            if n not in members:
                if s in ("QuePosition", "TPosition") and n in api.UNMODELLED_POSITIONS:
                    raise self.err(node, f"the queue position {s}::{n} (cube side) is not modelled",
                                   "the simulator models the vector core: VECIN, VECOUT, VECCALC")
                raise self.err(node, f"'{n}' is not a member of {s}", f"{s} has {', '.join(members)}")
            if s in ("QuePosition", "TPosition"):
                return E(n, CType("enum", s), ("enum", n))
            if s == "pipe_t":
                return E(repr(n), CType("enum", s), ("enum", n))
            return E(prefix + n, CType("enum", s), members.index(n))
        if scope is not None and scope.type == "template_type" and n == "value":
            tname = scope.child_by_field_name("name").text.decode()
            if tname in TRAITS:
                args = self.tr.template_args(self.unit, scope.child_by_field_name("arguments"), self.bind, self.inst)
                return self.trait(tname, args, node)
        if scope is not None and scope.type in ("template_type", "namespace_identifier", "type_identifier") and \
                s not in ("std", "AscendC") and (scope.type == "template_type" or s in self.tr.classes):
            ctype = self.tr.type_of(self.unit, scope, self.bind, self.inst)   # X<T>::value, K::BUFFER_NUM
            if ctype.kind == "struct":
                cinst = self._inst_of(ctype)
                st = cinst.static(n)
                if st is not None:
                    return E(st.code, st.t, st.const)
                raise self.err(inner, f"'{n}' is not a static member of '{cinst.decl.name}'")
        if s == "std" and ((inner.type == "template_function" and inner.child_by_field_name("name").text.decode()
                            in TRAITS) or inner.type == "qualified_identifier"):
            return self.expr(inner)              # std::is_same_v<A, B>, std::is_same<A, B>::value
        if s == "std":
            raise self.err(node, f"std::{n} is not available on the AI Core")
        if inner.type in ("qualified_identifier", "template_function", "identifier", "type_identifier",
                          "template_type", "field_identifier"):
            return self.expr(inner)
        return self.name(n, inner)

    def x_template_function(self, node: Node) -> E:
        name = node.child_by_field_name("name").text.decode()
        if name in TRAITS:
            args = self.tr.template_args(self.unit, node.child_by_field_name("arguments"), self.bind, self.inst)
            return self.trait(name, args, node)
        return self.name(name, node)

    def trait(self, name: str, args: tuple[Any, ...], node: Node) -> E:
        """``std::is_same_v<A, B>`` and friends: compile-time booleans about types."""
        if not args or not all(isinstance(a, CType) for a in args):
            raise self.err(node, f"{name} takes types")
        a = args[0]
        if name in ("is_same_v", "is_same", "IsSameType"):
            if len(args) != 2:
                raise self.err(node, f"{name}<A, B> takes two types")
            v = args[0] == args[1]
        elif name in ("is_floating_point_v", "is_floating_point"):
            v = a.kind == "float"
        elif name in ("is_integral_v", "is_integral"):
            v = a.kind in ("int", "bool")
        elif name in ("is_signed_v", "is_signed"):
            v = (a.kind == "int" and a.signed) or a.kind == "float"
        else:
            v = a.kind == "int" and not a.signed
        return E(const_code(v, BOOL), BOOL, v)

    def x_field_expression(self, node: Node) -> E:
        arg = node.child_by_field_name("argument")
        fnode = node.child_by_field_name("field")
        op = node.child_by_field_name("operator").text.decode()
        base = self.expr(arg)
        fname = fnode.text.decode() if fnode.type != "template_method" else \
            fnode.child_by_field_name("name").text.decode()
        if fnode.type == "dependent_name":
            inner = fnode.named_children[0]
            fname = (inner.child_by_field_name("name") or inner).text.decode()
        t = base.t
        if op == "->":
            if t.kind != "ptr":
                raise self.err(node, f"'->' on a {t}, which is not a pointer", "use '.'")
            t = t.target
        elif t.kind == "ptr":
            raise self.err(node, f"'.' on a pointer ({t})", "use '->'")
        if t.kind == "struct":
            inst = self._inst_of(t)
            member = self.member(inst, base.code, fname)
            if member is not None:
                return member
            raise self.err(fnode, f"'{fname}' is not a member of '{inst.decl.name}'")
        if t.kind == "pstruct":
            spec = api.STRUCTS[t.name]
            for n, ft in spec.fields:
                if n == fname:
                    ft = t.args[0] if ft.kind == "tparam" and t.args else ft
                    return E(f"{base.code}.{fname}", ft)
            raise self.err(fnode, f"'{fname}' is not a field of {t.name}",
                           f"{t.name} has {', '.join(n for n, _ in spec.fields)}")
        if t.kind == "api":
            return E("", VOID, ref=("api_method", base, t, fname))
        raise self.err(node, f"a {t} has no members")

    def x_subscript_expression(self, node: Node) -> E:
        base = self.expr(node.child_by_field_name("argument"))
        idx_nodes = node.child_by_field_name("indices").named_children
        idx = self.expr(idx_nodes[0])
        if base.t.kind == "api" and base.t.name in ("GlobalTensor", "LocalTensor"):
            # GlobalTensor::operator[](uint64_t), LocalTensor::operator[](uint32_t)
            itype = UINT64 if base.t.name == "GlobalTensor" else INT_TYPES["uint32_t"]
            return E(f"{base.code}[{self.convert(idx, itype, node)}]", base.t)
        if base.t.kind == "ptr":
            raise self.err(node, "raw pointer dereference is not supported on the AI Core simulator",
                           "reach global memory through a GlobalTensor (SetGlobalBuffer, then copies)")
        raise self.err(node, f"[] on a {base.t}")

    def x_pointer_expression(self, node: Node) -> E:
        op = node.child_by_field_name("operator").text.decode()
        arg = self.expr(node.child_by_field_name("argument"))
        if op == "&":
            if arg.t.kind in ("struct", "pstruct", "api"):
                return E(arg.code, CType("ptr", target=arg.t))
            raise self.err(node, f"taking the address of a {arg.t} is not supported",
                           "pass the value, or keep it in a member")
        if arg.t.kind == "ptr" and arg.t.target is not None and arg.t.target.kind in ("struct", "pstruct"):
            return E(arg.code, arg.t.target)
        raise self.err(node, "raw pointer dereference is not supported on the AI Core simulator",
                       "reach global memory through a GlobalTensor and UB through a LocalTensor (GetValue)")

    def x_unary_expression(self, node: Node) -> E:
        op = node.child_by_field_name("operator").text.decode()
        return self._unary(op, self.expr(node.child_by_field_name("argument")), node)

    def _unary(self, op: str, a: E, node: Node) -> E:
        if op == "!":
            if a.const is not NC:
                return E(const_code(not a.const, BOOL), BOOL, not a.const)
            return E(f"(not {a.code})", BOOL)
        if not a.t.is_arith:
            raise self.err(node, f"'{op}' on a {a.t}")
        if a.t.is_float:
            if op == "~":
                raise self.err(node, "'~' on a float")
            if a.const is not NC:
                v = -a.const if op == "-" else a.const
                return E(const_code(v, a.t), a.t, v)
            return E(f"(-{a.code})" if op == "-" else a.code, a.t)
        t = promote(a.t)
        code = self.convert(a, t, node)
        if a.const is not NC:
            v = {"-": -int(a.const), "+": int(a.const), "~": ~int(a.const)}[op]
            v = self._checked_const(v, t, node)
            return E(const_code(v, t), t, v)
        raw = {"-": f"-{code}", "+": code, "~": f"~{code}"}[op]
        return E(self._wrap(raw, t) if op != "~" or not t.signed else f"({raw})", t)

    def _checked_const(self, v: int, t: CType, node: Node) -> int:
        lo, hi = int_range(t)
        if lo <= v <= hi:
            return v
        if t.signed:
            raise self.err(node, f"this constant expression overflows {t} (undefined behaviour in C++)")
        return v & ((1 << t.bits) - 1)

    @staticmethod
    def modular(e: E) -> str:
        """Code congruent to an integer ``e`` modulo any power of two up to its width (its unmasked form)."""
        if e.raw is not None:
            return e.raw
        return e.code if e.t.kind == "int" else f"int({e.code})"

    def _wrap(self, raw: str, t: CType) -> str:
        if t.kind == "bool":
            return f"bool({raw})"
        if t.signed:
            return f"_s{t.bits}({raw})"
        return f"(({raw}) & {(1 << t.bits) - 1:#x})"

    def x_binary_expression(self, node: Node) -> E:
        op = node.child_by_field_name("operator").text.decode()
        a = self.expr(node.child_by_field_name("left"))
        b = self.expr(node.child_by_field_name("right"))
        return self.binop(op, a, b, node)

    def binop(self, op: str, a: E, b: E, node: Node) -> E:
        if op in ("&&", "||"):
            ca = a.code if a.t.kind == "bool" else f"bool({a.code})"
            cb = b.code if b.t.kind == "bool" else f"bool({b.code})"
            if a.const is not NC and b.const is not NC:
                v = (bool(a.const) and bool(b.const)) if op == "&&" else (bool(a.const) or bool(b.const))
                return E(const_code(v, BOOL), BOOL, v)
            return E(f"({ca} {'and' if op == '&&' else 'or'} {cb})", BOOL)
        if a.t.kind == "ptr" and op in ("+", "-") and b.t.is_int:
            size = self.sizeof_type(a.t.target, node)
            off = self.convert(b, INT64, node)
            sign = "+" if op == "+" else "-"
            return E(f"({a.code} {sign} {off}{'' if size == 1 else f' * {size}'})", a.t)
        if op in ("==", "!=") and {a.t.kind, b.t.kind} <= {"ptr", "null"}:
            return E(f"({a.code} {'is' if op == '==' else 'is not'} {b.code})", BOOL)
        if a.t.kind == "enum" and b.t.kind == "enum" and op in ("==", "!="):
            return E(f"({a.code} {op} {b.code})", BOOL,
                     (a.const == b.const) == (op == "==") if a.const is not NC and b.const is not NC else NC)
        if not (a.t.is_arith and b.t.is_arith):
            raise self.err(node, f"'{op}' between {a.t} and {b.t} is not supported")
        if op in ("<<", ">>"):
            t = promote(a.t)
            if t.is_float or b.t.is_float:
                raise self.err(node, f"'{op}' on a float")
            ca, cb = self.convert(a, t, node), self.convert(b, promote(b.t), node)
            if a.const is not NC and b.const is not NC:
                v = int(a.const) << int(b.const) if op == "<<" else int(a.const) >> int(b.const)
                v = convert_const(v, t)
                return E(const_code(v, t), t, v)
            raw = f"{ca} {op} {cb}"
            return E(self._wrap(raw, t) if op == "<<" else f"({raw})", t)
        t = arith(a.t, b.t)
        cmp = op in ("<", ">", "<=", ">=", "==", "!=")
        if a.const is not NC and b.const is not NC:
            v = self._fold(op, convert_const(a.const, t), convert_const(b.const, t), t, node)
            rt = BOOL if cmp else t
            return E(const_code(v, rt), rt, v)
        ca, cb = self.convert(a, t, node), self.convert(b, t, node)
        if cmp:
            return E(f"({ca} {op} {cb})", BOOL)
        if t.is_float:
            if op == "%":
                raise self.err(node, "'%' on floats", "C++ has no float %: use fmod-free integer arithmetic")
            if op in ("&", "|", "^"):
                raise self.err(node, f"'{op}' on floats")
            return E(f"({ca} {op} {cb})", t)
        if op == "/":
            return E(self._wrap(f"_idiv({ca}, {cb})", t) if t.signed else f"_idiv({ca}, {cb})", t)
        if op == "%":
            return E(f"_imod({ca}, {cb})", t)
        if op in ("&", "|", "^"):
            return E(f"({ca} {op} {cb})", t)
        if not t.signed:                    # + - * on unsigned: modular; mask once, keep the unmasked form
            raw = f"{self.modular(a)} {op} {self.modular(b)}"
            return E(f"(({raw}) & {(1 << t.bits) - 1:#x})", t, raw=f"({raw})")
        return E(self._wrap(f"{ca} {op} {cb}", t), t)

    def _fold(self, op: str, x: Any, y: Any, t: CType, node: Node) -> Any:
        if op in ("<", ">", "<=", ">=", "==", "!="):
            return {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y, "==": x == y, "!=": x != y}[op]
        if t.is_float:
            with np.errstate(all="ignore"):
                r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y}[op]()
            return convert_const(r, t)
        x, y = int(x), int(y)
        if op in ("/", "%") and y == 0:
            raise self.err(node, "division by zero in a constant expression")
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) if op in ("/", "%") else 0
        r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: q, "%": lambda: x - y * q,
             "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y}[op]()
        return self._checked_const(r, t, node)

    def x_conditional_expression(self, node: Node) -> E:
        c = self.expr(node.child_by_field_name("condition"))
        a = self.expr(node.child_by_field_name("consequence"))
        b = self.expr(node.child_by_field_name("alternative"))
        if a.t.is_arith and b.t.is_arith:
            t = arith(a.t, b.t) if a.t != b.t else a.t
        elif a.t == b.t:
            t = a.t
        else:
            raise self.err(node, f"the two results of ?: have different types ({a.t}, {b.t})")
        if c.const is not NC and a.const is not NC and b.const is not NC:
            v = convert_const(a.const if c.const else b.const, t)
            return E(const_code(v, t), t, v)
        cc = c.code if c.t.kind == "bool" else f"bool({c.code})"
        return E(f"({self.convert(a, t, node)} if {cc} else {self.convert(b, t, node)})", t)

    def x_assignment_expression(self, node: Node) -> E:
        raise self.err(node, "an assignment inside an expression is not supported",
                       "write the assignment as a statement of its own")

    def x_update_expression(self, node: Node) -> E:
        raise self.err(node, "++/-- inside an expression is not supported",
                       "write i++ (or i += 1) as a statement of its own")

    def x_comma_expression(self, node: Node) -> E:
        raise self.err(node, "the comma operator is not supported", "write separate statements")

    def x_sizeof_expression(self, node: Node) -> E:
        tnode = node.child_by_field_name("type")
        if tnode is not None:
            ctype = self.tr.type_of(self.unit, tnode, self.bind, self.inst)
        else:
            inner = node.child_by_field_name("value")
            if inner.type == "parenthesized_expression":
                inner = inner.named_children[0]
            e = self.expr(inner)
            ctype = e.t
        size = self.sizeof_type(ctype, node)
        return E(str(size), UINT64, size)

    def sizeof_type(self, ctype: CType | None, node: Node) -> int:
        if ctype is None:
            raise self.err(node, "sizeof of an unknown type")
        if ctype.kind in ("int",):
            return ctype.bits // 8
        if ctype.kind == "bool":
            return 1
        if ctype.kind == "float":
            return ctype.bits // 8
        if ctype.kind == "ptr":
            return 8
        if ctype.kind == "struct":
            inst = self._inst_of(ctype)
            return self.tr.struct_layout(inst)[1]
        raise self.err(node, f"sizeof({ctype}) is not supported")

    def x_compound_literal_expression(self, node: Node) -> E:
        ctype = self.tr.type_of(self.unit, node.child_by_field_name("type"), self.bind, self.inst)
        vals = [self.expr(v) for v in node.child_by_field_name("value").named_children]
        if ctype.kind in ("int", "float", "bool") and len(vals) <= 1:
            return self.cast(vals[0], ctype, node) if vals else E(const_code(0, ctype), ctype, 0)
        return E(self.construct(ctype, vals, node), ctype)

    def x_initializer_list(self, node: Node) -> E:
        return E("", CType("braced", "{...}"), ref=("braced", node))

    def x_lambda_expression(self, node: Node) -> E:
        raise self.err(node, "lambdas are not supported", "write a method of the class")

    def x_new_expression(self, node: Node) -> E:
        raise self.err(node, "'new' is not available on the AI Core: there is no heap",
                       "keep objects as members or locals; UB memory comes from TPipe::InitBuffer")

    def x_delete_expression(self, node: Node) -> E:
        raise self.err(node, "'delete' is not available on the AI Core: there is no heap")


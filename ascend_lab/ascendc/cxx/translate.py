"""C++ syntax trees to Python source against the simulated AscendC API, one instantiation at a time.

Like a C++ compiler, the translator instantiates what a launch uses: the entry for its template arguments (the
host's tiling key), then each class template and method that entry reaches, for concrete types. Every expression
is typed at compile time, so the Python it writes converts only where C++ converts (integer wrap, truncating
``/``, float arithmetic in float), ``if constexpr`` keeps only the branch taken, ``static constexpr`` members and
``sizeof`` fold to numbers.

Each Python line remembers the C++ line it came from; :mod:`.kernel` compiles the functions of one C++ file under
that file's name with those line numbers, so a traceback, a sanitizer finding and the stepper name the C++.
What falls outside the supported subset raises :class:`~.errors.KernelCompileError` at its place in the C++.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import tree_sitter_cpp
from tree_sitter import Language, Node, Parser

from ...dtypes import bfloat16
from . import api
from .ctypes import (
    AUTO,
    BOOL,
    DOUBLE,
    DTYPE_NAME,
    FLOAT,
    INT32,
    INT64,
    INT_TYPES,
    UINT64,
    VOID,
    CType,
    arith,
    promote,
    scalar_type,
)
from .errors import KernelCompileError, Where
from .preprocess import Preprocessed, Unit

__all__ = ["Chunk", "Translator", "check_syntax", "parse"]

LANGUAGE = Language(tree_sitter_cpp.language())
NC = object()          # "not a compile-time constant"


def parse(text: str) -> Any:
    """The tree-sitter tree of a preprocessed C++ text."""
    return Parser(LANGUAGE).parse(text.encode("utf-8"))


def check_syntax(unit: Unit, root: Node) -> None:
    """The first syntax error of a tree, said at its place (a missing token by its name)."""
    if not root.has_error:
        return
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing:
            raise _error(unit, n, f"expected '{n.type}'", "C++ needs it here (a missing ';' or bracket?)")
        if n.type == "ERROR":
            prev = n.prev_sibling
            if n.text.strip() in (b"", b";") and prev is not None:
                n = prev
            raise _error(unit, n, f"syntax error near '{n.text.decode(errors='replace').split(chr(10))[0]}'",
                             "the front end parses standard C++: check for a missing ';', a stray token or "
                             "an unbalanced bracket")
        stack.extend(reversed(n.children))


_POINTERS = ("pointer_declarator", "abstract_pointer_declarator")
_WRAPPERS = _POINTERS + ("reference_declarator", "abstract_reference_declarator")


def unwrap(d: Node | None, base: CType) -> tuple[Node | None, CType, Node | None]:
    """A declarator peeled: (the declared name's node, its type with the ``*`` applied, its initialiser) --
    ``T* p = e``, ``T& r``, ``const T& x`` (a reference is the value itself here)."""
    value = None
    if d is not None and d.type == "init_declarator":
        d, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
    while d is not None and d.type in _WRAPPERS:
        if d.type in _POINTERS:
            base = CType("ptr", target=base)
        inner = d.child_by_field_name("declarator")
        if inner is None and d.named_children and d.named_children[-1].type in ("identifier", "field_identifier"):
            inner = d.named_children[-1]               # a reference declarator names its child without a field
        d = inner
    return d, base, value


def _error(unit: Unit, node: Node, reason: str, hint: str = "") -> KernelCompileError:
    row, col = node.start_point
    erow, ecol = node.end_point
    line = unit.source.text.split("\n")[row]
    length = (ecol - col) if erow == row else len(line) - col
    return KernelCompileError(reason, Where(unit.source.name, row + 1, col + 1, max(1, length)), hint, line)


# ---------------------------------------------------------------------------------------------------------------
# values of expressions
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


@dataclass
class Translation:
    chunks: list[Chunk]
    entry: str                        # the entry's Python name
    params: list[str]                 # the entry's C++ parameter names
    constants: dict[str, Any]         # names the code reads that the loader binds (struct layouts ...)


class _TParams(list):
    """A template's parameters, (kind, name, type) each, with their default arguments (``int N = 2``)."""

    def __init__(self, items: Any = ()):
        super().__init__(items)
        self.defaults: list[tuple[Any, Node | None]] = list(getattr(items, "defaults", [(None, None)] * len(self)))

    def __add__(self, other: Any) -> _TParams:
        out = _TParams(list(self) + list(other))
        out.defaults = self.defaults + list(getattr(other, "defaults", [(None, None)] * len(other)))
        return out


class _Wrap:
    """One node seen as a list of children (a nested template declaration collected like a namespace's)."""

    def __init__(self, node: Node):
        self.named_children = [node]


class _ClassDecl:
    def __init__(self, name: str, node: Node, unit: Unit, tparams: list[tuple[str, str, CType | None]],
                 is_struct: bool):
        self.name = name
        self.node = node
        self.unit = unit
        self.tparams = tparams
        self.is_struct = is_struct
        self.out_of_class: dict[str, list[tuple[Node, Unit, list[Any]]]] = {}
        self.insts: dict[tuple[Any, ...], _Inst] = {}
        #: explicit specialisations ``template <> struct X<half> {...}``: (their argument list, node, unit)
        self.specialisations: list[tuple[Node, Node, Unit]] = []
        self.base: Node | None = None        # the base class of ``class K : public Base<...>`` (one, public)


class _FuncDecl:
    def __init__(self, name: str, node: Node, unit: Unit, tparams: list[tuple[str, str, CType | None]]):
        self.name = name
        self.node = node
        self.unit = unit
        self.tparams = tparams
        self.insts: dict[tuple[Any, ...], tuple[str, CType]] = {}


@dataclass
class _Method:
    name: str
    node: Node                       # function_definition
    unit: Unit
    tparams: list[Any]
    insts: dict[tuple[Any, ...], tuple[str, CType]] = field(default_factory=dict)


@dataclass
class _Inst:
    """A class (template) instantiated for concrete arguments."""
    decl: _ClassDecl
    args: tuple[Any, ...]
    pyname: str
    bind: dict[str, Any]
    fields: dict[str, CType] = field(default_factory=dict)
    field_nodes: list[tuple[str, CType, Node | None, Node]] = field(default_factory=list)
    statics: dict[str, E] = field(default_factory=dict)
    methods: dict[str, list[_Method]] = field(default_factory=dict)
    static_lines: dict[str, int] = field(default_factory=dict)
    base: _Inst | None = None        # the instantiated base class (``class K : public Base<K<T>, T>``)

    def chain(self) -> list[_Inst]:
        """This class and its bases, most derived first: where a member name is looked up, as in C++."""
        out, inst = [], self
        while inst is not None:
            out.append(inst)
            inst = inst.base
        return out

    def field_type(self, name: str) -> CType | None:
        return next((i.fields[name] for i in self.chain() if name in i.fields), None)

    def static(self, name: str) -> E | None:
        return next((i.statics[name] for i in self.chain() if name in i.statics), None)

    def method_owner(self, name: str) -> _Inst | None:
        return next((i for i in self.chain() if name in i.methods), None)
    node: Node | None = None         # the class body instantiated: the primary template's or a specialisation's
    unit: Unit | None = None
    ctor: _Method | None = None
    aliases: dict[str, CType] = field(default_factory=dict)

    @property
    def ctype(self) -> CType:
        return CType("struct", self.pyname, args=self.args)


_PY_RESERVED = set(keyword.kwlist) | set(getattr(keyword, "softkwlist", [])) | {
    "this", "np", "print", "len", "range", "int", "float", "bool", "object", "type", "id", "min", "max", "abs"}


def _lit_float(text: str, ctype: CType) -> Any:
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


def _py_float(v: Any, ctype: CType) -> str:
    """Python code for a float constant of ``ctype``, exact (the double holding the value, then the type)."""
    x = float(v)
    text = repr(x) if math.isfinite(x) else ("float('nan')" if math.isnan(x) else f"float('{'-' if x < 0 else ''}inf')")
    if ctype.name == "double":
        return text
    return {"float": "_f32", "half": "_f16", "bfloat16_t": "_bf16"}[ctype.name] + f"({text})"


def _convert_const(v: Any, to: CType) -> Any:
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


def _int_range(t: CType) -> tuple[int, int]:
    if t.kind == "bool":
        return 0, 1
    if t.signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def _fits(src: CType, dst: CType) -> bool:
    """Every value of ``src`` is a value of ``dst`` (the conversion is a no-op on the Python int)."""
    if src.kind not in ("int", "bool", "enum") or dst.kind not in ("int",):
        return False
    if src.kind == "enum":
        return True
    lo, hi = _int_range(src)
    dlo, dhi = _int_range(dst)
    return dlo <= lo and hi <= dhi


def _const_code(v: Any, t: CType) -> str:
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
        return _py_float(v, t)
    return repr(v)


class Translator:
    """Holds the declarations of a preprocessed kernel and instantiates what the entry needs."""

    def __init__(self, pre: Preprocessed, trees: list[tuple[Unit, Any]], constants: dict[str, Any] | None = None):
        self.pre = pre
        self.overrides = dict(constants or {})
        self.classes: dict[str, _ClassDecl] = {}
        self.funcs: dict[str, list[_FuncDecl]] = {}
        #: explicit specialisations of function templates: name -> [(their template argument list, the function)]
        self.func_specs: dict[str, list[tuple[Node, _FuncDecl]]] = {}
        self.globals: dict[str, E] = {}
        self.aliases: dict[str, CType] = {}
        self.chunks: list[Chunk] = []
        self.used_struct_names: set[str] = set()
        self.tiling_default: str | None = None
        self.tiling_key: int | None = None          # the launch's tiling key, for TILING_KEY_IS
        self.last: tuple[Unit, Node] | None = None    # the statement being translated (for an internal error)
        self.trees = trees
        for unit, tree in self.trees:
            check_syntax(unit, tree.root_node)
        for unit, tree in self.trees:
            self._collect(unit, tree.root_node, None)

    # ---- errors -----------------------------------------------------------------------------------------------
    def error(self, unit: Unit, node: Node, reason: str, hint: str = "") -> KernelCompileError:
        return _error(unit, node, reason, hint)

    # ---- declarations -----------------------------------------------------------------------------------------
    def _tparams(self, unit: Unit, node: Node) -> _TParams:
        out = _TParams()
        for p in node.named_children:
            default = p.child_by_field_name("default_type") or p.child_by_field_name("default_value")
            if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                name = p.child_by_field_name("name") or next((c for c in p.named_children
                                                               if c.type == "type_identifier"), None)
                out.append(("type", name.text.decode() if name else "", None))
                out.defaults.append((unit, default))
            elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
                t = self.type_of(unit, p.child_by_field_name("type"), {})
                d = p.child_by_field_name("declarator")
                out.append(("value", d.text.decode() if d else "", t))
                out.defaults.append((unit, default))
            elif p.type == "variadic_type_parameter_declaration":
                raise self.error(unit, p, "variadic templates are not supported",
                                 "write the template with a fixed list of parameters")
            else:
                raise self.error(unit, p, f"this template parameter ({p.type}) is not supported")
        return out

    def _collect(self, unit: Unit, node: Node, tparams: list[Any] | None) -> None:
        for child in node.named_children:
            t = child.type
            if t in ("namespace_definition", "linkage_specification", "declaration_list"):
                body = child.child_by_field_name("body") or child
                if body.type in ("declaration_list", "namespace_definition") or body is child:
                    self._collect(unit, body, None)
                else:                                   # extern "C" void f(...) {...}
                    self._declare(unit, body, None)
            elif t == "template_declaration":
                tp = _TParams(tparams or []) + self._tparams(unit, child.child_by_field_name("parameters"))
                inner = [c for c in child.named_children if c.type != "template_parameter_list"]
                for c in inner:
                    if c.type == "template_declaration":        # template <T> template <U> K<T>::f<U>(...)
                        self._collect(unit, _Wrap(c), tp)
                    else:
                        self._declare(unit, c, tp)
            elif t in ("comment", "using_declaration", "preproc_call"):
                continue
            else:
                self._declare(unit, child, tparams)

    def _declare(self, unit: Unit, node: Node, tparams: list[Any] | None) -> None:
        t = node.type
        if t in ("class_specifier", "struct_specifier"):
            self._declare_class(unit, node, tparams or [])
        elif t == "function_definition":
            decl = node.child_by_field_name("declarator")
            name_node = self._declarator_name(decl)
            if name_node is not None and name_node.type == "qualified_identifier":
                scope = name_node.child_by_field_name("scope")
                cls = self._strip_ns(scope)
                if cls is not None and cls in self.classes:
                    mname = name_node.child_by_field_name("name").text.decode()
                    self.classes[cls].out_of_class.setdefault(mname, []).append((node, unit, tparams or []))
                    return
                fname = name_node.child_by_field_name("name").text.decode()
            elif name_node is not None and name_node.type == "template_function":   # template <> T f<half>()
                fname = name_node.child_by_field_name("name").text.decode()
                specs = self.func_specs.setdefault(fname, [])
                # its own Python name (f_spec0, f_spec1 ...): two specialisations are two functions
                specs.append((name_node.child_by_field_name("arguments"),
                              _FuncDecl(f"{fname}_spec{len(specs)}", node, unit, [])))
                return
            else:
                fname = name_node.text.decode() if name_node is not None else ""
            self.funcs.setdefault(fname, []).append(_FuncDecl(fname, node, unit, tparams or []))
        elif t == "declaration":
            if any(d.type == "function_declarator" for d in node.children_by_field_name("declarator")):
                return                                  # a prototype: the definition says all
            if tparams:
                raise self.error(unit, node, "variable templates are not supported",
                                 "write a static constexpr member of a class template, or std::is_same_v<A, B>")
            self._declare_global(unit, node)
        elif t in ("alias_declaration", "type_definition"):
            name, ctype = self._alias(unit, node, {})
            self.aliases[name] = ctype
        elif t == "expression_statement":
            self._top_statement(unit, node)
        elif t in ("using_declaration", "comment", "empty_declaration", ";"):
            return
        elif t == "enum_specifier":
            self._declare_enum(unit, node)
        elif t == "static_assert_declaration":
            self.static_assert(unit, node, {}, None)
        elif t in ("namespace_definition", "linkage_specification"):
            self._collect(unit, node.child_by_field_name("body") or node, None)
        elif t == "ERROR":
            raise self.error(unit, node, "syntax error")
        else:
            raise self.error(unit, node, f"this declaration ({t}) is not supported at namespace scope")

    def _top_statement(self, unit: Unit, node: Node) -> None:
        call = node.named_children[0] if node.named_children else None
        if call is not None and call.type == "call_expression":
            fn = call.child_by_field_name("function").text.decode()
            if fn == "REGISTER_TILING_DEFAULT":
                self.tiling_default = call.child_by_field_name("arguments").named_children[0].text.decode()
                return
            if fn in ("KERNEL_TASK_TYPE_DEFAULT", "REGISTER_TILING_FOR_TILINGKEY"):
                return
        raise self.error(unit, node, "a statement outside a function", "put it inside the kernel entry")

    def _declare_enum(self, unit: Unit, node: Node) -> None:
        body = node.child_by_field_name("body")
        value = 0
        for e in body.named_children if body else []:
            if e.type != "enumerator":
                continue
            v = e.child_by_field_name("value")
            if v is not None:
                value = self.const_eval(unit, v, {})
            self.globals[e.child_by_field_name("name").text.decode()] = E(str(value), INT32, value)
            value += 1

    def _declare_class(self, unit: Unit, node: Node, tparams: list[Any]) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        base = next((c for c in node.named_children if c.type == "base_class_clause"), None)
        if base is not None:
            bases = [c for c in base.named_children if c.type != "access_specifier"]
            if len(bases) != 1 or any(c.type == "virtual" for c in base.children) or \
                    any(c.text.decode() in ("private", "protected") for c in base.named_children
                        if c.type == "access_specifier"):
                raise self.error(unit, base, "only single public non-virtual inheritance is supported",
                                 "derive from one base class: class K : public Base<K<T>, T> { ... }")
        is_struct = node.type == "struct_specifier"
        body = node.child_by_field_name("body")
        for member in body.named_children if body is not None else []:
            if any(c.type == "virtual" for c in member.children) or (
                    member.type in ("field_declaration", "declaration", "function_definition")
                    and member.text.decode().lstrip().startswith("virtual")):
                raise self.error(unit, member, "virtual methods are not supported",
                                 "AscendC kernels do not use virtual dispatch: make it a plain method")
        if name_node.type == "template_type":           # template <> struct X<half> {...}
            name = name_node.child_by_field_name("name").text.decode()
            if tparams:
                raise self.error(unit, name_node, f"the partial specialisation '{name_node.text.decode()}' is not "
                                 "supported", "test types with std::is_same_v<A, B> and if constexpr instead")
            decl = self.classes.get(name)
            if decl is None:
                raise self.error(unit, name_node, f"a specialisation of '{name}' before its primary template")
            decl.specialisations.append((name_node.child_by_field_name("arguments"), node, unit))
            return
        name = name_node.text.decode()
        if node.child_by_field_name("body") is None:    # a forward declaration: a specialisation may follow
            self.classes.setdefault(name, _ClassDecl(name, None, unit, tparams, is_struct))
            return
        old = self.classes.get(name)
        decl = _ClassDecl(name, node, unit, tparams, is_struct)
        decl.base = next((c for c in base.named_children if c.type != "access_specifier"), None) if base else None
        if old is not None:
            decl.specialisations = old.specialisations
        self.classes[name] = decl

    def _declare_global(self, unit: Unit, node: Node) -> None:
        ctype = self.type_of(unit, node.child_by_field_name("type"), {})
        specs = node.text.decode().split("=")[0]
        for d in node.children_by_field_name("declarator"):
            if d.type == "function_declarator":
                continue                                # a prototype
            if d.type != "init_declarator":
                raise self.error(unit, d, "a namespace-scope variable without an initialiser",
                                 "kernels may only declare constants at namespace scope: constexpr T X = ...;")
            name = d.child_by_field_name("declarator").text.decode()
            if "const" not in specs:
                raise self.error(unit, node, f"a mutable global variable '{name}'",
                                 "an AI Core kernel has no mutable globals: make it constexpr, or a member")
            if name in self.overrides:
                value = _convert_const(self.overrides[name], ctype)
            else:
                value = _convert_const(self.const_eval(unit, d.child_by_field_name("value"), {}), ctype)
            self.globals[name] = E(_const_code(value, ctype), ctype, value)

    def _alias(self, unit: Unit, node: Node, bind: dict[str, Any], inst: _Inst | None = None) -> tuple[str, CType]:
        if node.type == "alias_declaration":
            return (node.child_by_field_name("name").text.decode(),
                    self.type_of(unit, node.child_by_field_name("type"), bind, inst))
        decl = node.child_by_field_name("declarator")
        return decl.text.decode(), self.type_of(unit, node.child_by_field_name("type"), bind, inst)

    @staticmethod
    def _declarator_name(decl: Node | None) -> Node | None:
        while decl is not None and decl.type in ("function_declarator", "pointer_declarator", "reference_declarator",
                                                 "init_declarator", "parenthesized_declarator"):
            decl = decl.child_by_field_name("declarator")
        return decl

    def _strip_ns(self, node: Node | None) -> str | None:
        """``NsX::K<T>`` / ``K<T>`` / ``K`` -> ``K``."""
        while node is not None and node.type == "qualified_identifier":
            node = node.child_by_field_name("name")
        if node is None:
            return None
        if node.type == "template_type":
            return node.child_by_field_name("name").text.decode()
        return node.text.decode()

    # ---- types ------------------------------------------------------------------------------------------------
    def type_of(self, unit: Unit, node: Node | None, bind: dict[str, Any], inst: _Inst | None = None) -> CType:
        if node is None:
            return AUTO
        t = node.type
        if t == "type_descriptor":
            base = self.type_of(unit, node.child_by_field_name("type"), bind, inst)
            decl = node.child_by_field_name("declarator")
            while decl is not None:
                if decl.type == "abstract_pointer_declarator":
                    base = CType("ptr", target=base)
                elif decl.type == "abstract_reference_declarator":
                    pass
                else:
                    raise self.error(unit, decl, f"this type ({decl.type}) is not supported")
                decl = decl.child_by_field_name("declarator")
            return base
        if t in ("primitive_type", "sized_type_specifier"):
            st = scalar_type(node.text.decode())
            if st is None:
                raise self.error(unit, node, f"unknown type '{node.text.decode()}'")
            return st
        if t == "placeholder_type_specifier":
            return AUTO
        if t == "qualified_identifier":
            scope = node.child_by_field_name("scope")
            inner = node.child_by_field_name("name")
            member = self._member_type(unit, scope, inner, bind, inst)
            if member is not None:
                return member
            if scope is not None and scope.type == "namespace_identifier" and scope.text.decode() in (
                    "std",) and inner.text.decode() not in ("size_t", "int64_t", "uint64_t", "int32_t", "uint32_t"):
                raise self.error(unit, node, f"the standard library type '{node.text.decode()}' is not available "
                                 "on the AI Core", "use AscendC types and fixed-width integers")
            return self.type_of(unit, inner, bind, inst)
        if t == "template_type":
            name = node.child_by_field_name("name").text.decode()
            args = self.template_args(unit, node.child_by_field_name("arguments"), bind, inst)
            return self.named_type(unit, node, name, args, bind, inst)
        if t in ("type_identifier", "identifier", "namespace_identifier"):
            return self.named_type(unit, node, node.text.decode(), None, bind, inst)
        if t == "dependent_type":
            return self.type_of(unit, node.named_children[0], bind, inst)
        if t in ("struct_specifier", "class_specifier"):
            return self.named_type(unit, node, node.child_by_field_name("name").text.decode(), None, bind, inst)
        if t == "enum_specifier":
            return INT32
        if t == "decltype":
            raise self.error(unit, node, "decltype is not supported", "name the type")
        raise self.error(unit, node, f"this type ({t}) is not supported")

    def _member_type(self, unit: Unit, scope: Node | None, inner: Node, bind: dict[str, Any],
                     inst: _Inst | None) -> CType | None:
        """A type named through a class: ``std::conditional<c, A, B>::type``, ``std::conditional_t<c, A, B>``,
        ``typename ComputeType<T>::type`` (a member alias of a class of the kernel)."""
        if scope is not None and scope.type == "namespace_identifier" and scope.text.decode() == "std" and \
                inner.type == "template_type" and inner.child_by_field_name("name").text.decode() == "conditional_t":
            args = self.template_args(unit, inner.child_by_field_name("arguments"), bind, inst)
            return self._conditional(unit, inner, args)
        if scope is not None and scope.type == "namespace_identifier" and scope.text.decode() == "std" and \
                inner.type == "qualified_identifier":
            return self._member_type(unit, inner.child_by_field_name("scope"), inner.child_by_field_name("name"),
                                     bind, inst)
        if scope is not None and scope.type == "template_type" and inner.type == "type_identifier":
            name = scope.child_by_field_name("name").text.decode()
            args = self.template_args(unit, scope.child_by_field_name("arguments"), bind, inst)
            if name == "conditional" and inner.text.decode() == "type":
                return self._conditional(unit, scope, args)
            if name in self.classes:
                cinst = self.instantiate_class(unit, scope, self.classes[name], args)
                alias = inner.text.decode()
                for i in cinst.chain():
                    if alias in i.aliases:
                        return i.aliases[alias]
                raise self.error(unit, inner, f"'{alias}' is not a type member of '{name}'")
        return None

    def _conditional(self, unit: Unit, node: Node, args: tuple[Any, ...]) -> CType:
        if len(args) != 3 or not isinstance(args[1], CType) or not isinstance(args[2], CType):
            raise self.error(unit, node, "std::conditional<condition, A, B> takes a constant and two types")
        return args[1] if args[0] else args[2]

    def named_type(self, unit: Unit, node: Node, name: str, args: tuple[Any, ...] | None, bind: dict[str, Any],
                   inst: _Inst | None) -> CType:
        if args is None:
            if name in bind:
                b = bind[name]
                if isinstance(b, CType):
                    return b
                raise self.error(unit, node, f"'{name}' is a value, not a type")
            if inst is not None and name in inst.aliases:
                return inst.aliases[name]
            st = scalar_type(name)
            if st is not None:
                return st
            if name in self.aliases:
                return self.aliases[name]
        if name in ("LocalTensor", "GlobalTensor"):
            if not args or not isinstance(args[0], CType) or args[0].kind not in ("int", "float", "bool"):
                raise self.error(unit, node, f"{name} needs an element type: {name}<float>, {name}<half>, ...")
            return CType("api", name, args=args[:1])
        if name in ("TQue", "TBuf", "TPipe"):
            if name == "TQue" and args and (len(args) > 2 or (len(args) == 2 and not isinstance(args[1], int))):
                raise self.error(unit, node, f"TQue<{', '.join(_spell(a) for a in args)}>: a queue takes a "
                                 "position and a depth", "TQue<QuePosition::VECIN, BUFFER_NUM>")
            return CType("api", name, args=args or ())
        if name in api.STRUCTS:
            return CType("pstruct", name, args=args or ())
        if name in api.ENUMS:
            return CType("enum", name)
        if name in self.classes:
            decl = self.classes[name]
            if decl.tparams and args is None:
                if inst is not None and inst.decl is decl:
                    return inst.ctype                   # the injected class name inside its own template
                raise self.error(unit, node, f"the class template '{name}' needs its template arguments: "
                                 f"{name}<...>")
            return self.instantiate_class(unit, node, decl, args or ()).ctype
        if name in api.UNMODELLED_TYPES:
            raise self.error(unit, node, f"the AscendC type '{name}' is not modelled by the simulator",
                             api.UNMODELLED_TYPES[name])
        if name in ("std", "string", "vector") or name.startswith("std"):
            raise self.error(unit, node, f"'{name}' is not available on the AI Core",
                             "kernels use AscendC types and fixed-width integers")
        raise self.error(unit, node, f"unknown type '{name}'",
                         "the front end knows the fixed-width integers, half, float, bfloat16_t, the AscendC "
                         "classes (LocalTensor, GlobalTensor, TPipe, TQue, TBuf), their parameter structs, and "
                         "the kernel's own classes and structs")

    def template_args(self, unit: Unit, node: Node | None, bind: dict[str, Any],
                      inst: _Inst | None = None) -> tuple[Any, ...]:
        out: list[Any] = []
        for a in node.named_children if node is not None else []:
            if a.type == "type_descriptor":
                inner = a.child_by_field_name("type")
                name = inner.text.decode() if inner is not None else ""
                if a.child_by_field_name("declarator") is None and inner is not None and inner.type in (
                        "type_identifier", "qualified_identifier") and self._value_name(name, bind, inst):
                    out.append(self.const_eval(unit, inner, bind, inst))   # ``BUFFER_NUM`` parsed as a type
                    continue
                out.append(self.type_of(unit, a, bind, inst))
            else:
                out.append(self.const_eval(unit, a, bind, inst))
        return tuple(out)

    def _value_name(self, name: str, bind: dict[str, Any], inst: _Inst | None) -> bool:
        last = name.split("::")[-1]
        if last in bind:
            return not isinstance(bind[last], CType)
        if inst is not None and last in inst.statics:
            return True
        if last in self.globals:
            return True
        return any(last in members for _, members in api.ENUMS.values()) or last in api.UNMODELLED_POSITIONS

    # ---- class instantiation ----------------------------------------------------------------------------------
    def with_defaults(self, tparams: list[Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` completed with the template's default arguments (evaluated with the ones before them)."""
        defaults = getattr(tparams, "defaults", None)
        if len(args) >= len(tparams) or not defaults:
            return args
        out = list(args)
        for (kind, _pname, _ptype), (dunit, dnode) in list(zip(tparams, defaults, strict=True))[len(args):]:
            if dnode is None:
                break
            bind = {n: a for (_k, n, _t), a in zip(tparams, out, strict=False)}
            out.append(self.type_of(dunit, dnode, bind) if kind == "type" else self.const_eval(dunit, dnode, bind))
        return tuple(out)

    def instantiate_class(self, unit: Unit, node: Node, decl: _ClassDecl, args: tuple[Any, ...]) -> _Inst:
        args = self.with_defaults(decl.tparams, args)
        key = args
        if key in decl.insts:
            return decl.insts[key]
        if len(args) != len(decl.tparams):
            raise self.error(unit, node, f"'{decl.name}' takes {len(decl.tparams)} template arguments, "
                             f"got {len(args)}")
        bind = {}
        for (kind, pname, ptype), a in zip(decl.tparams, args, strict=True):
            if kind == "type" and not isinstance(a, CType):
                raise self.error(unit, node, f"template parameter '{pname}' of '{decl.name}' is a type, got {a}")
            bind[pname] = a if kind == "type" else _convert_const(a, ptype)
        pyname = decl.name + "".join("_" + _mangle(a) for a in args)
        inst = _Inst(decl, args, pyname, bind, node=decl.node, unit=decl.unit)
        for args_node, snode, sunit in decl.specialisations:
            if self.template_args(sunit, args_node, {}) == args:
                inst.node, inst.unit, inst.bind = snode, sunit, {}
                break
        if inst.node is None:
            raise self.error(unit, node, f"'{decl.name}<{', '.join(_spell(a) for a in args)}>' is declared but "
                             "never defined", "define the template, or a specialisation for these arguments")
        decl.insts[key] = inst
        self._members(inst)
        self._emit_class(inst)
        return inst

    def _members(self, inst: _Inst) -> None:
        decl, unit = inst.decl, inst.unit
        if decl.base is not None and inst.node is decl.node:
            btype = self.type_of(unit, decl.base, inst.bind, inst)
            if btype.kind != "struct":
                raise self.error(unit, decl.base, f"the base class must be a class of the kernel, not {btype}")
            inst.base = self._inst_by_name(btype.name)
        body = inst.node.child_by_field_name("body")
        for m in body.named_children:
            t = m.type
            if t in ("access_specifier", "comment"):
                continue
            if t == "template_declaration":
                tp = self._tparams(unit, m.child_by_field_name("parameters"))
                for c in m.named_children:
                    if c.type == "function_definition":
                        self._add_method(inst, c, unit, tp)
                    elif c.type in ("declaration", "field_declaration"):
                        continue                        # a member template's prototype
                continue
            if t == "function_definition":
                self._add_method(inst, m, unit, [])
                continue
            if t in ("field_declaration", "declaration"):
                if any(d.type == "function_declarator" for d in m.children_by_field_name("declarator")):
                    continue                            # a prototype; the definition comes out of class
                self._field(inst, m)
                continue
            if t in ("alias_declaration", "type_definition"):
                name, ctype = self._alias(unit, m, inst.bind, inst)
                inst.aliases[name] = ctype
                continue
            if t == "static_assert_declaration":
                self.static_assert(unit, m, inst.bind, inst)
                continue
            if t == "friend_declaration":
                continue
            if t in ("declaration", "function_declarator"):
                continue
            raise self.error(unit, m, f"this class member ({t}) is not supported")
        for defs in (decl.out_of_class.values() if inst.node is decl.node else ()):
            for node, munit, tparams in defs:
                extra = tparams[len(decl.tparams):] if len(tparams) > len(decl.tparams) else []
                # an out-of-class definition may name the class's parameters its own way (K<U>::f)
                self._add_method(inst, node, munit, extra, outer=tparams[:len(decl.tparams)])

    def _add_method(self, inst: _Inst, node: Node, unit: Unit, tparams: list[Any],
                    outer: list[Any] | None = None) -> None:
        name_node = self._declarator_name(node.child_by_field_name("declarator"))
        name = self._strip_ns(name_node) if name_node is not None else ""
        if name_node is not None and name_node.type == "qualified_identifier":
            name = name_node.child_by_field_name("name").text.decode()
        text = node.text.decode()
        if re.match(r"\s*virtual\b", text) or "virtual " in text.split("(")[0]:
            raise self.error(unit, node, "virtual methods are not supported",
                             "AscendC kernels do not use virtual dispatch: make it a plain method")
        method = _Method(name, node, unit, tparams)
        if outer:
            method.tparams = [("rename", outer, None), *tparams]
        if name == inst.decl.name:
            inst.ctor = method
        elif name.startswith("~"):
            return
        else:
            inst.methods.setdefault(name, []).append(method)

    def _field(self, inst: _Inst, node: Node) -> None:
        unit = inst.unit
        specs = " ".join(c.text.decode() for c in node.children if c.type in ("storage_class_specifier",
                                                                               "type_qualifier"))
        ctype = self.type_of(unit, node.child_by_field_name("type"), inst.bind, inst)
        decls = node.children_by_field_name("declarator")
        for d in decls:
            target, ftype, value_node = unwrap(d, ctype)
            value_node = value_node or node.child_by_field_name("default_value")
            if target.type == "array_declarator":
                raise self.error(unit, target, "array members are not supported",
                                 "use a TBuf (UB) or separate members")
            name = target.text.decode()
            if "static" in specs or "constexpr" in specs:
                if name in self.overrides:
                    value = _convert_const(self.overrides[name], ftype)
                elif value_node is None:
                    raise self.error(unit, d, f"static member '{name}' needs an initialiser")
                else:
                    value = _convert_const(self.const_eval(unit, value_node, inst.bind, inst), ftype)
                inst.statics[name] = E(_const_code(value, ftype), ftype, value)
                inst.static_lines[name] = d.start_point[0] + 1
                continue
            inst.fields[name] = ftype
            inst.field_nodes.append((name, ftype, value_node, d))

    # ---- compile-time evaluation ------------------------------------------------------------------------------
    def static_assert(self, unit: Unit, node: Node, bind: dict[str, Any], inst: _Inst | None) -> None:
        """``static_assert(cond, "message")``: a compile error where it fails, as in C++."""
        cond = node.child_by_field_name("condition")
        message = node.child_by_field_name("message")
        if not self.const_eval(unit, cond, bind, inst):
            text = message.text.decode()[1:-1] if message is not None else cond.text.decode()
            raise self.error(unit, node, f"static assertion failed: {text}")

    def const_eval(self, unit: Unit, node: Node, bind: dict[str, Any], inst: _Inst | None = None) -> Any:
        fx = _Func(self, unit, bind, inst, None)
        e = fx.expr(node)
        if e.const is NC:
            raise self.error(unit, node, f"'{node.text.decode()}' is not a compile-time constant",
                             "template arguments, constexpr values and array sizes must be known at compile time")
        return e.const

    # ---- emission ---------------------------------------------------------------------------------------------
    def _emit_class(self, inst: _Inst) -> None:
        unit = inst.unit
        lines: list[tuple[str, int]] = []
        line0 = inst.node.start_point[0] + 1
        lines.append((f"class {inst.pyname}({inst.base.pyname}):" if inst.base else f"class {inst.pyname}:", line0))
        doc = f"{'struct' if inst.decl.is_struct else 'class'} {inst.decl.name}" + (
            f"<{', '.join(_spell(a) for a in inst.args)}>" if inst.args else "")
        lines.append((f"    {doc!r}", line0))
        for name, e in inst.statics.items():
            lines.append((f"    {name} = {e.code}", inst.static_lines.get(name, line0)))
        fx = _Func(self, unit, inst.bind, inst, VOID)
        params = []
        if inst.ctor is not None:
            params = fx.params(inst.ctor.node)
        fx.out = []
        fx.indent = 2
        if inst.base is not None:                       # the base's members first, as C++ constructs them
            fx.emit(f"{inst.base.pyname}.__init__(this)", line0)
        for name, ftype, value_node, dnode in inst.field_nodes:
            line = dnode.start_point[0] + 1
            fx.line = line
            fx.emit(f"this.{name} = {fx.init_value(ftype, value_node, dnode)}", line)
        if inst.ctor is not None:
            node = inst.ctor.node
            for init in (c for c in node.named_children if c.type == "field_initializer_list"):
                for fi in init.named_children:
                    fname = fi.named_children[0].text.decode()
                    if fname not in inst.fields:
                        raise self.error(unit, fi, f"'{fname}' is not a member of '{inst.decl.name}'")
                    args = fi.named_children[1]
                    vals = [fx.expr(a) for a in args.named_children]
                    value = fx.convert(vals[0], inst.fields[fname]) if len(vals) == 1 else fx.construct(
                        inst.fields[fname], vals, fi)
                    fx.emit(f"this.{fname} = {value}", fi.start_point[0] + 1)
            body_node = node.child_by_field_name("body")
            if body_node is not None and body_node.named_children:
                fx.block(body_node)
        body = fx.out or [("        pass", line0)]
        plist = ", ".join(["this", *params])
        lines.append((f"    def __init__({plist}):", (inst.ctor.node.start_point[0] + 1) if inst.ctor else line0))
        lines.extend(body)
        self.chunks.append(Chunk(unit.source.name, inst.pyname, "class", lines,
                                 cxx_name=f"{_cxx_spelling(inst)}::{inst.decl.name}"))

    def method(self, inst: _Inst, m: _Method, targs: tuple[Any, ...], call_node: Node, unit: Unit) -> tuple[str, CType]:
        key = targs
        if key in m.insts:
            return m.insts[key]
        bind = dict(inst.bind)
        own = m.tparams
        if own and own[0][0] == "rename":
            for (_, pname, _t), a in zip(own[0][1], inst.args, strict=False):
                bind[pname] = a
            own = own[1:]
        if len(targs) != len(own):
            raise self.error(unit, call_node, f"'{m.name}' takes {len(own)} template arguments, got {len(targs)}")
        for (kind, pname, ptype), a in zip(own, targs, strict=True):
            bind[pname] = a if kind == "type" else _convert_const(a, ptype)
        pyname = m.name + "".join("_" + _mangle(a) for a in targs)
        ret = self._return_type(m.unit, m.node, bind, inst)
        m.insts[key] = (pyname, ret)
        fx = _Func(self, m.unit, bind, inst, ret)
        params = fx.params(m.node)
        fx.indent = 1
        fx.block(m.node.child_by_field_name("body"))
        line = m.node.start_point[0] + 1
        lines = [(f"def {inst.pyname}__{pyname}({', '.join(['this', *params])}):", line)]
        lines.extend(fx.out or [("    pass", line)])
        targ_text = f"<{', '.join(_spell(a) for a in targs)}>" if targs else ""
        self.chunks.append(Chunk(m.unit.source.name, f"{inst.pyname}__{pyname}", "method", lines, inst.pyname,
                                 pyname, f"{_cxx_spelling(inst)}::{m.name}{targ_text}"))
        return pyname, ret

    def _return_type(self, unit: Unit, node: Node, bind: dict[str, Any], inst: _Inst | None) -> CType:
        t = self.type_of(unit, node.child_by_field_name("type"), bind, inst)
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
            if decl.type == "pointer_declarator":
                t = CType("ptr", target=t)
            decl = decl.child_by_field_name("declarator")
        return t

    def function(self, fdecl: _FuncDecl, targs: tuple[Any, ...], call_node: Node | None, unit: Unit | None,
                 entry: bool = False) -> tuple[str, CType]:
        targs = self.with_defaults(fdecl.tparams, targs)
        key = targs
        if key in fdecl.insts:
            return fdecl.insts[key]
        for args_node, spec in self.func_specs.get(fdecl.name, []):
            if targs and self.template_args(spec.unit, args_node, {}) == targs:     # template <> f<half>() {...}
                fdecl.insts[key] = self.function(spec, (), call_node, unit)
                return fdecl.insts[key]
        if len(targs) != len(fdecl.tparams):
            where_unit = unit or fdecl.unit
            raise self.error(where_unit, call_node or fdecl.node, f"'{fdecl.name}' takes {len(fdecl.tparams)} "
                             f"template arguments, got {len(targs)}")
        bind = {}
        for (kind, pname, ptype), a in zip(fdecl.tparams, targs, strict=True):
            bind[pname] = a if kind == "type" else _convert_const(a, ptype)
        pyname = _safe(fdecl.name) + "".join("_" + _mangle(a) for a in targs)
        ret = self._return_type(fdecl.unit, fdecl.node, bind, None)
        fdecl.insts[key] = (pyname, ret)
        fx = _Func(self, fdecl.unit, bind, None, ret, entry=entry)
        params = fx.params(fdecl.node)
        fx.indent = 1
        fx.block(fdecl.node.child_by_field_name("body"))
        line = fdecl.node.start_point[0] + 1
        lines = [(f"def {pyname}({', '.join(params)}):", line)]
        lines.extend(fx.out or [("    pass", line)])
        targ_text = f"<{', '.join(_spell(a) for a in targs)}>" if targs else ""
        self.chunks.append(Chunk(fdecl.unit.source.name, pyname, "function", lines, cxx_name=fdecl.name + targ_text))
        return pyname, ret

    def _inst_by_name(self, pyname: str) -> _Inst:
        for decl in self.classes.values():
            for inst in decl.insts.values():
                if inst.pyname == pyname:
                    return inst
        raise KeyError(pyname)

    def struct_layout(self, inst: _Inst) -> tuple[str, int, list[tuple[str, CType]]]:
        """``struct`` format, size and fields of a plain struct read from tiling bytes (natural C alignment)."""
        fmt, offset, max_align, fields = "<", 0, 1, []
        codes = {(8, True): "b", (8, False): "B", (16, True): "h", (16, False): "H", (32, True): "i",
                 (32, False): "I", (64, True): "q", (64, False): "Q"}
        for name, ftype, _v, dnode in inst.field_nodes:
            if ftype.kind == "int":
                code, size = codes[(ftype.bits, ftype.signed)], ftype.bits // 8
            elif ftype.kind == "bool":
                code, size = "?", 1
            elif ftype.kind == "float" and ftype.name in ("float", "double", "half"):
                code, size = {"float": ("f", 4), "double": ("d", 8), "half": ("e", 2)}[ftype.name]
            else:
                raise self.error(inst.unit, dnode, f"the tiling struct field '{name}' has the type {ftype}, "
                                 "which a tiling struct cannot hold here",
                                 "tiling structs hold integers, bool, float, double and half")
            pad = -offset % size
            if pad:
                fmt += f"{pad}x"
            offset += pad + size
            fmt += code
            max_align = max(max_align, size)
            fields.append((name, ftype))
        tail = -offset % max_align
        if tail:
            fmt += f"{tail}x"
        return fmt, offset + tail, fields


#: The type traits a kernel may ask (std::is_same_v, AscendC's IsSameType<A, B>::value ...).
_TRAITS = frozenset({"is_same_v", "is_same", "IsSameType", "is_floating_point_v", "is_floating_point",
                     "is_integral_v", "is_integral", "is_signed_v", "is_signed", "is_unsigned_v", "is_unsigned"})

#: integer parameter kinds of API methods: their C++ types (TPipe::InitBuffer(que, uint8_t num, uint32_t len) ...)
_METHOD_INTS = {"I": INT32, "U8": INT_TYPES["uint8_t"], "U32": INT_TYPES["uint32_t"], "U64": UINT64, "I64": INT64}


def _mangle(a: Any) -> str:
    if isinstance(a, tuple):                       # an enum value given as a template argument: ("enum", "VECIN")
        return str(a[1])
    if isinstance(a, CType):
        return re.sub(r"\W", "", a.spelled().replace("*", "p"))
    return str(int(a)) if not isinstance(a, bool) else ("true" if a else "false")


def _cxx_spelling(inst: _Inst) -> str:
    return inst.decl.name + (f"<{', '.join(_spell(a) for a in inst.args)}>" if inst.args else "")


def _spell(a: Any) -> str:
    return a.spelled() if isinstance(a, CType) else str(a)


def _safe(name: str) -> str:
    return name + "_" if name in _PY_RESERVED or name.startswith("_cx") else name


# ---------------------------------------------------------------------------------------------------------------
class _Func:
    """Translates one function body (or a constant expression) with its scopes."""

    def __init__(self, tr: Translator, unit: Unit, bind: dict[str, Any], inst: _Inst | None, ret: CType | None,
                 entry: bool = False):
        self.tr = tr
        self.unit = unit
        self.bind = bind
        self.inst = inst
        self.ret = ret
        self.entry = entry
        self.scopes: list[dict[str, E]] = [{}]
        self.used_names: set[str] = set()
        self.out: list[tuple[str, int]] = []
        self.indent = 1
        self.line = 0
        self.loop_updates: list[list[str] | None] = []
        self.tmp = 0

    # ---- helpers ----------------------------------------------------------------------------------------------
    def err(self, node: Node, reason: str, hint: str = "") -> KernelCompileError:
        return self.tr.error(self.unit, node, reason, hint)

    def emit(self, text: str, line: int | None = None) -> None:
        self.out.append(("    " * self.indent + text, line if line is not None else self.line))

    def declare(self, name: str, e: E) -> str:
        """A new local: its Python name (a fresh one when it shadows a visible local of the same name)."""
        py = _safe(name)
        if self.lookup(name) is not None or (py in self.used_names and any(
                v.code == py for s in self.scopes for v in s.values())):
            k = 1
            while f"{py}_{k}" in self.used_names:
                k += 1
            py = f"{py}_{k}"
        self.used_names.add(py)
        self.scopes[-1][name] = E(py, e.t, e.const, ref=e.ref)
        return py

    def lookup(self, name: str) -> E | None:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def params(self, fnode: Node) -> list[str]:
        decl = fnode.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        out = []
        for p in decl.child_by_field_name("parameters").named_children:
            if p.type == "variadic_parameter_declaration" or p.type == "...":
                raise self.err(p, "variadic functions are not supported")
            ptype = self.tr.type_of(self.unit, p.child_by_field_name("type"), self.bind, self.inst)
            d, ptype, _ = unwrap(p.child_by_field_name("declarator"), ptype)
            if ptype.kind == "void" and d is None:
                continue
            if d is None:
                name = f"_cx_unnamed{len(out)}"
                self.used_names.add(name)
                out.append(name)
                continue
            out.append(self.declare(d.text.decode(), E("", ptype)))
        return out

    # ---- types of declarations --------------------------------------------------------------------------------
    def init_value(self, ctype: CType, value: Node | None, node: Node) -> str:
        """Python code for a variable of ``ctype`` initialised by ``value`` (None: default-initialised)."""
        if value is None:
            return self.default(ctype, node)
        if value.type == "initializer_list":
            vals = [self.expr(v) for v in value.named_children]
            if ctype.kind in ("int", "float", "bool") and len(vals) <= 1:
                return self.convert(vals[0], ctype) if vals else _const_code(0, ctype)
            return self.construct(ctype, vals, value)
        if value.type == "argument_list":                       # T x(a, b)
            vals = [self.expr(v) for v in value.named_children]
            if ctype.kind in ("int", "float", "bool") and len(vals) == 1:
                return self.convert(vals[0], ctype)
            return self.construct(ctype, vals, value)
        e = self.expr(value)
        if ctype.kind == "auto":
            return e.code
        if ctype.kind in ("struct", "pstruct") and e.t.kind == ctype.kind:
            return f"_struct_copy({e.code})"
        return self.convert(e, ctype, value)

    def default(self, ctype: CType, node: Node) -> str:
        k = ctype.kind
        if k == "int":
            return "0"
        if k == "bool":
            return "False"
        if k == "float":
            return _const_code(0, ctype)
        if k == "ptr":
            return "None"
        if k in ("struct", "pstruct"):
            return self.construct(ctype, [], node)
        if k == "api":
            if ctype.name == "TPipe":
                return "TPipe()"
            if ctype.name == "TQue":
                if len(ctype.args) < 1:
                    raise self.err(node, "TQue needs its position: TQue<QuePosition::VECIN, BUFFER_NUM>")
                pos = ctype.args[0]
                depth = ctype.args[1] if len(ctype.args) > 1 else 1
                return f"TQue({self.position(pos, node)}, {int(depth)})"
            if ctype.name == "TBuf":
                pos = ctype.args[0] if ctype.args else "VECCALC"
                return f"TBuf({self.position(pos, node)})"
            if ctype.name == "GlobalTensor":
                return f"GlobalTensor({self.dtype(ctype.args[0], node)})"
            if ctype.name == "LocalTensor":
                return "None"
        if k == "auto":
            raise self.err(node, "'auto' needs an initialiser")
        raise self.err(node, f"cannot default-initialise a {ctype}")

    def position(self, pos: Any, node: Node) -> str:
        if isinstance(pos, tuple) and pos[0] == "enum":
            if pos[1] in api.UNMODELLED_POSITIONS:
                raise self.err(node, f"the queue position {pos[1]} (cube side) is not modelled",
                               "the simulator models the vector core: VECIN, VECOUT, VECCALC")
            return pos[1]
        raise self.err(node, f"not a queue position: {pos}")

    def dtype(self, t: Any, node: Node) -> str:
        if isinstance(t, CType) and t.kind in ("int", "float", "bool"):
            return DTYPE_NAME[t.name]
        raise self.err(node, f"not an element type: {_spell(t)}")

    def construct(self, ctype: CType, vals: list[E], node: Node) -> str:
        if ctype.kind == "pstruct":
            spec = api.STRUCTS[ctype.name]
            if len(vals) > len(spec.fields):
                raise self.err(node, f"{spec.name} has {len(spec.fields)} fields "
                               f"({', '.join(n for n, _ in spec.fields)}), got {len(vals)} values")
            tparam = ctype.args[0] if ctype.args else None
            parts = []
            for (fname, ftype), v in zip(spec.fields, vals, strict=False):
                ftype = tparam if ftype.kind == "tparam" else ftype
                if ftype is None:
                    raise self.err(node, f"{spec.name} needs its element type: {spec.name}<T>")
                parts.append(f"{fname}={self.convert(v, ftype, node)}")
            return f"{spec.python}({', '.join(parts)})"
        if ctype.kind == "struct":
            inst = self._inst_of(ctype)
            if inst.ctor is not None:
                return f"{inst.pyname}({', '.join(v.code for v in vals)})"
            if len(vals) > len(inst.field_nodes):
                raise self.err(node, f"{inst.decl.name} has {len(inst.field_nodes)} fields, got {len(vals)} values")
            code = f"{inst.pyname}()"
            if not vals:
                return code
            parts = [f"{n}={self.convert(v, t, node)}" for (n, t, _x, _d), v in zip(inst.field_nodes, vals,
                                                                                   strict=False)]
            return f"_cx_with({code}, {', '.join(parts)})"
        if ctype.kind == "api" and ctype.name in ("GlobalTensor", "LocalTensor", "TPipe", "TQue", "TBuf") \
                and not vals:
            return self.default(ctype, node)
        raise self.err(node, f"cannot brace-initialise a {ctype} here")

    def _inst_of(self, ctype: CType) -> _Inst:
        for decl in self.tr.classes.values():
            for inst in decl.insts.values():
                if inst.pyname == ctype.name:
                    return inst
        raise KeyError(ctype.name)

    # ---- conversions ------------------------------------------------------------------------------------------
    def convert(self, e: E, to: CType, node: Node | None = None, explicit: bool = False) -> str:
        f = e.t
        if to.kind in ("auto",) or f == to:
            return e.code
        if e.const is not NC and to.kind in ("int", "float", "bool") and f.kind in ("int", "float", "bool", "enum"):
            if to.kind == "int" and f.kind == "float" and not (
                    math.isfinite(float(e.const)) and _int_range(to)[0] - 1 < float(e.const) < _int_range(to)[1] + 1):
                raise self.err(node, f"converting {e.const} to {to} is undefined behaviour (NaN, inf or out of "
                               "its range)")
            return _const_code(_convert_const(e.const, to), to)
        if to.kind == "int":
            if f.kind in ("int", "bool", "enum"):
                if _fits(f, to):
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
        raise self.err(node, f"cannot convert {f} to {to}")

    # ---- statements -------------------------------------------------------------------------------------------
    def block(self, node: Node | None) -> None:
        if node is None:
            return
        self.scopes.append({})
        start = len(self.out)
        for s in node.named_children if node.type == "compound_statement" else [node]:
            self.statement(s)
        if len(self.out) == start:
            self.emit("pass", node.start_point[0] + 1)
        self.scopes.pop()

    def statement(self, node: Node) -> None:
        self.tr.last = (self.unit, node)
        t = node.type
        self.line = node.start_point[0] + 1
        if t == "compound_statement":
            self.block(node)
        elif t == "declaration":
            self.declaration(node)
        elif t == "expression_statement":
            if node.named_children:
                self.expr_statement(node.named_children[0])
        elif t == "if_statement":
            self.if_statement(node)
        elif t == "for_statement":
            self.for_statement(node)
        elif t == "while_statement":
            cond = self.cond(node.child_by_field_name("condition"))
            self.emit(f"while {cond}:")
            self.loop_updates.append(None)
            self.indented(node.child_by_field_name("body"))
            self.loop_updates.pop()
        elif t == "do_statement":
            cond_node = node.child_by_field_name("condition")
            self.emit("while True:")
            cond = self.cond(cond_node)
            self.loop_updates.append([f"if not {cond}: break"])
            self.indented(node.child_by_field_name("body"))
            self.loop_updates.pop()
            self.indent += 1
            self.emit(f"if not {cond}:", cond_node.start_point[0] + 1)
            self.emit("    break", cond_node.start_point[0] + 1)
            self.indent -= 1
        elif t == "return_statement":
            vals = node.named_children
            if not vals:
                self.emit("return")
            else:
                e = self.expr(vals[0])
                self.emit(f"return {self.convert(e, self.ret, vals[0]) if self.ret else e.code}")
        elif t == "break_statement":
            self.emit("break")
        elif t == "continue_statement":
            updates = self.loop_updates[-1] if self.loop_updates else None
            for u in updates or []:
                self.emit(u)
            self.emit("continue")
        elif t in ("comment",):
            return
        elif t == ";" or (t == "expression_statement" and not node.named_children):
            return
        elif t == "switch_statement":
            raise self.err(node, "switch is not supported", "write it as if / else if")
        elif t in ("goto_statement", "labeled_statement"):
            raise self.err(node, "goto and labels are not supported", "use loops with break/continue")
        elif t in ("try_statement", "throw_statement"):
            raise self.err(node, "exceptions do not exist on the AI Core", "check and return instead")
        elif t == "static_assert_declaration":
            self.tr.static_assert(self.unit, node, self.bind, self.inst)
        elif t in ("type_definition", "alias_declaration"):
            name, ctype = self.tr._alias(self.unit, node, self.bind)
            self.bind = {**self.bind, name: ctype}
        else:
            raise self.err(node, f"this statement ({t}) is not supported")

    def indented(self, body: Node | None) -> None:
        self.indent += 1
        self.block(body)
        self.indent -= 1

    def cond(self, node: Node) -> str:
        if node.type == "condition_clause":
            if node.child_by_field_name("initializer") is not None:
                raise self.err(node, "an if/while with an initialiser is not supported",
                               "declare the variable before the statement")
            node = node.child_by_field_name("value")
        if node.type == "parenthesized_expression":
            node = node.named_children[0]
        e = self.expr(node)
        return e.code if e.t.kind == "bool" else f"bool({e.code})"

    def if_statement(self, node: Node) -> None:
        constexpr = any(c.type == "constexpr" for c in node.children)
        cond_node = node.child_by_field_name("condition")
        alt = node.child_by_field_name("alternative")
        if alt is not None and alt.type == "else_clause":
            alt = alt.named_children[0] if alt.named_children else None
        if constexpr:
            inner = cond_node.child_by_field_name("value") if cond_node.type == "condition_clause" else cond_node
            e = self.expr(inner)
            if e.const is NC:
                raise self.err(inner, "the condition of 'if constexpr' is not a compile-time constant")
            if e.const:
                self.block(node.child_by_field_name("consequence"))
            elif alt is not None:
                self.statement(alt)
            return
        inner = cond_node.child_by_field_name("value") if cond_node.type == "condition_clause" else cond_node
        if inner is not None and cond_node.child_by_field_name("initializer") is None:
            folded = self.expr(inner)
            if folded.const is not NC:          # known at compile time (a type trait of T): the branch taken only
                if folded.const:
                    self.block(node.child_by_field_name("consequence"))
                elif alt is not None:
                    self.statement(alt)
                return
        cond = self.cond(cond_node)
        self.emit(f"if {cond}:")
        self.indented(node.child_by_field_name("consequence"))
        while alt is not None:
            self.line = alt.start_point[0] + 1
            if alt.type == "if_statement" and not any(c.type == "constexpr" for c in alt.children):
                c2 = self.cond(alt.child_by_field_name("condition"))
                self.emit(f"elif {c2}:")
                self.indented(alt.child_by_field_name("consequence"))
                alt2 = alt.child_by_field_name("alternative")
                alt = alt2.named_children[0] if alt2 is not None and alt2.named_children else None
            else:
                self.emit("else:")
                self.indented(alt)
                alt = None

    def for_statement(self, node: Node) -> None:
        if any(c.type == ":" for c in node.children) or node.type == "for_range_loop":
            raise self.err(node, "range-based for is not supported", "write for (int64_t i = 0; i < n; i++)")
        self.scopes.append({})
        init = node.child_by_field_name("initializer")
        if init is not None:
            self.statement(init) if init.type == "declaration" else self.expr_statement(init)
        cond_node = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        cond = self.cond(cond_node) if cond_node is not None else "True"
        saved, self.out = self.out, []
        if update is not None:
            self.indent += 1
            self.line = update.start_point[0] + 1
            for u in (update.named_children if update.type == "comma_expression" else [update]):
                self.expr_statement(u)
            self.indent -= 1
        upd, self.out = self.out, saved
        self.line = node.start_point[0] + 1
        self.emit(f"while {cond}:")
        self.loop_updates.append([text.strip() for text, _ in upd])
        self.indented(node.child_by_field_name("body"))
        self.loop_updates.pop()
        self.out.extend(upd)
        self.scopes.pop()

    def declaration(self, node: Node) -> None:
        specs = " ".join(c.text.decode() for c in node.children if c.type in ("storage_class_specifier",
                                                                               "type_qualifier"))
        if "static" in specs and "constexpr" not in specs:
            raise self.err(node, "static local variables are not supported", "make it a member of the class")
        base = self.tr.type_of(self.unit, node.child_by_field_name("type"), self.bind, self.inst)
        for d in node.children_by_field_name("declarator"):
            target, ctype, value = unwrap(d, base)
            if target.type == "array_declarator":
                raise self.err(target, "local arrays are not supported",
                               "keep data in UB: a TBuf and LocalTensor, or separate variables")
            if target.type == "function_declarator":
                raise self.err(target, "a function declaration inside a function (did you mean T x{...}?)")
            name = target.text.decode()
            if ctype.kind == "auto":
                if value is None:
                    raise self.err(d, "'auto' needs an initialiser")
                e = self.expr(value)
                ctype = e.t
                code = e.code
                const = e.const if "const" in specs else NC
            else:
                code = self.init_value(ctype, value, d)
                const = NC
                if ("constexpr" in specs or "const" in specs) and value is not None and ctype.kind in (
                        "int", "float", "bool"):
                    e = self.expr(value)
                    if e.const is not NC:
                        const = _convert_const(e.const, ctype)
                    elif "constexpr" in specs:
                        raise self.err(value, f"the constexpr '{name}' is not a compile-time constant")
            if name in self.tr.overrides and "constexpr" in specs and ctype.kind in ("int", "float", "bool"):
                const = _convert_const(self.tr.overrides[name], ctype)
                code = _const_code(const, ctype)
            py = self.declare(name, E("", ctype, const))
            self.emit(f"{py} = {code}", d.start_point[0] + 1)

    # ---- expression statements --------------------------------------------------------------------------------
    def expr_statement(self, node: Node) -> None:
        t = node.type
        self.line = node.start_point[0] + 1
        if t == "assignment_expression":
            self.assignment(node)
        elif t == "update_expression":
            target = node.named_children[0]
            op = "+" if b"++" in node.text else "-"
            lv = self.expr(target)
            self._store(target, lv, self.binop(op, lv, E("1", INT32, 1), node))
        elif t == "call_expression":
            e = self.call(node, statement=True)
            if e is not None and e.code:
                self.emit(e.code)
        elif t == "comma_expression":
            for c in node.named_children:
                self.expr_statement(c)
        elif t == "parenthesized_expression":
            self.expr_statement(node.named_children[0])
        else:
            e = self.expr(node)
            self.emit(e.code)

    def assignment(self, node: Node) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator").text.decode()
        lv = self.expr(left)
        if right.type == "initializer_list":
            vals = [self.expr(v) for v in right.named_children]
            self._store(left, lv, E(self.construct(lv.t, vals, right), lv.t))
            return
        rv = self.expr(right)
        if op != "=":
            rv = self.binop(op[:-1], lv, rv, node)
        elif lv.t.kind in ("struct", "pstruct") and rv.t.kind == lv.t.kind:
            rv = E(f"_struct_copy({rv.code})", rv.t)
        self._store(left, lv, rv)

    def _store(self, target: Node, lv: E, value: E) -> None:
        if lv.const is not NC and target.type == "identifier":
            raise self.err(target, f"cannot assign to the constant '{target.text.decode()}'")
        if target.type not in ("identifier", "field_expression", "qualified_identifier", "this"):
            if target.type == "subscript_expression":
                raise self.err(target, "assigning through [] is not supported",
                               "write UB elements with LocalTensor::SetValue(i, v), GM through a copy")
            if target.type == "pointer_expression":
                raise self.err(target, "raw pointer dereference is not supported on the AI Core simulator",
                               "reach global memory through a GlobalTensor and UB through a LocalTensor")
            raise self.err(target, "this assignment target is not supported")
        if lv.t.kind == "api" and lv.t.name != "LocalTensor":
            raise self.err(target, f"cannot assign a {lv.t}")
        self.emit(f"{lv.code} = {self.convert(value, lv.t, target)}")

    # ---- expressions ------------------------------------------------------------------------------------------
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
                v = _lit_float(text[:-1], t)
            else:
                t = DOUBLE
                v = float(Fraction(text.rstrip("lL"))) if not is_hex else float.fromhex(text)
            return E(_const_code(v, t), t, v)
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
            lo, hi = _int_range(ct)
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
            return E(_const_code(b, ctype), ctype, b)
        inst = self.inst
        if inst is not None:
            ftype = inst.field_type(name)
            if ftype is not None:
                return E(f"this.{name}", ftype)
            st = inst.static(name)
            if st is not None:
                return E(st.code, st.t, st.const)
            if inst.method_owner(name) is not None:
                return E("", VOID, ref=("method", "this", inst, name))
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
        st = scalar_type(name)
        if st is not None:
            return E("", st, is_type=True)
        if name in self.tr.classes or name in api.STRUCTS or name in ("LocalTensor", "GlobalTensor", "TPipe", "TQue",
                                                                      "TBuf") or name in self.tr.aliases:
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
            if tname in _TRAITS:
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
                            in _TRAITS) or inner.type == "qualified_identifier"):
            return self.expr(inner)              # std::is_same_v<A, B>, std::is_same<A, B>::value
        if s == "std":
            raise self.err(node, f"std::{n} is not available on the AI Core")
        if inner.type in ("qualified_identifier", "template_function", "identifier", "type_identifier",
                          "template_type", "field_identifier"):
            return self.expr(inner)
        return self.name(n, inner)

    def x_template_function(self, node: Node) -> E:
        name = node.child_by_field_name("name").text.decode()
        if name in _TRAITS:
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
        return E(_const_code(v, BOOL), BOOL, v)

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
            ftype = inst.field_type(fname)
            if ftype is not None:
                return E(f"{base.code}.{fname}", ftype)
            st = inst.static(fname)
            if st is not None:
                return E(st.code, st.t, st.const)
            if inst.method_owner(fname) is not None:
                return E("", VOID, ref=("method", base.code, inst, fname))
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
                return E(_const_code(not a.const, BOOL), BOOL, not a.const)
            return E(f"(not {a.code})", BOOL)
        if not a.t.is_arith:
            raise self.err(node, f"'{op}' on a {a.t}")
        if a.t.is_float:
            if op == "~":
                raise self.err(node, "'~' on a float")
            if a.const is not NC:
                v = -a.const if op == "-" else a.const
                return E(_const_code(v, a.t), a.t, v)
            return E(f"(-{a.code})" if op == "-" else a.code, a.t)
        t = promote(a.t)
        code = self.convert(a, t, node)
        if a.const is not NC:
            v = {"-": -int(a.const), "+": int(a.const), "~": ~int(a.const)}[op]
            v = self._checked_const(v, t, node)
            return E(_const_code(v, t), t, v)
        raw = {"-": f"-{code}", "+": code, "~": f"~{code}"}[op]
        return E(self._wrap(raw, t) if op != "~" or not t.signed else f"({raw})", t)

    def _checked_const(self, v: int, t: CType, node: Node) -> int:
        lo, hi = _int_range(t)
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
                return E(_const_code(v, BOOL), BOOL, v)
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
                v = _convert_const(v, t)
                return E(_const_code(v, t), t, v)
            raw = f"{ca} {op} {cb}"
            return E(self._wrap(raw, t) if op == "<<" else f"({raw})", t)
        t = arith(a.t, b.t)
        cmp = op in ("<", ">", "<=", ">=", "==", "!=")
        if a.const is not NC and b.const is not NC:
            v = self._fold(op, _convert_const(a.const, t), _convert_const(b.const, t), t, node)
            rt = BOOL if cmp else t
            return E(_const_code(v, rt), rt, v)
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
            return _convert_const(r, t)
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
            v = _convert_const(a.const if c.const else b.const, t)
            return E(_const_code(v, t), t, v)
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
        const = _convert_const(e.const, to) if e.const is not NC and to.kind in ("int", "float", "bool") else NC
        return E(code, to, const)

    def x_compound_literal_expression(self, node: Node) -> E:
        ctype = self.tr.type_of(self.unit, node.child_by_field_name("type"), self.bind, self.inst)
        vals = [self.expr(v) for v in node.child_by_field_name("value").named_children]
        if ctype.kind in ("int", "float", "bool") and len(vals) <= 1:
            return self.cast(vals[0], ctype, node) if vals else E(_const_code(0, ctype), ctype, 0)
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

    # ---- calls ------------------------------------------------------------------------------------------------
    def x_call_expression(self, node: Node) -> E:
        e = self.call(node, statement=False)
        if e is None:
            raise self.err(node, "this call gives no value")
        return e

    def call(self, node: Node, statement: bool) -> E | None:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        arg_nodes = args_node.named_children if args_node is not None else []
        targs: tuple[Any, ...] = ()
        fname_node = fn
        if fn.type == "template_function":
            targs = self.tr.template_args(self.unit, fn.child_by_field_name("arguments"), self.bind, self.inst)
            fname_node = fn.child_by_field_name("name")
        while fname_node.type == "qualified_identifier":
            scope = fname_node.child_by_field_name("scope")
            if scope is not None and scope.text.decode() == "std":
                raise self.err(fn, f"the standard library function '{fn.text.decode()}' is not available on the "
                               "AI Core")
            fname_node = fname_node.child_by_field_name("name")
            if fname_node.type == "template_function":
                targs = self.tr.template_args(self.unit, fname_node.child_by_field_name("arguments"), self.bind,
                                              self.inst)
                fname_node = fname_node.child_by_field_name("name")
        if fn.type == "field_expression":
            return self.method_call(node, fn, arg_nodes)
        if fn.type == "parenthesized_expression" and len(arg_nodes) == 1:     # (T)(x): a C cast, parsed as a call
            inner = self.expr(fn.named_children[0])
            if inner.is_type:
                return self.cast(self.expr(arg_nodes[0]), inner.t, node)
        name = fname_node.text.decode()
        if name in ("static_cast", "reinterpret_cast", "const_cast"):
            if name == "reinterpret_cast":
                to = targs[0]
                e = self.expr(arg_nodes[0])
                if to.kind == "ptr" and e.t.kind == "ptr":
                    return E(e.code, to)
                raise self.err(node, "reinterpret_cast is only supported between GM pointers",
                               "for UB data use LocalTensor::ReinterpretCast<U>()")
            if len(targs) != 1 or not isinstance(targs[0], CType) or len(arg_nodes) != 1:
                raise self.err(node, f"{name}<T>(value) takes one type and one value")
            return self.cast(self.expr(arg_nodes[0]), targs[0], node)
        if name == "dynamic_cast":
            raise self.err(node, "dynamic_cast is not supported (no RTTI on the AI Core)")
        builtin = getattr(self, "b_" + name, None)
        if builtin is not None:
            return builtin(node, arg_nodes, statement)
        if name in ("malloc", "calloc", "free", "realloc"):
            raise self.err(fname_node, f"'{name}' is not available on the AI Core: there is no heap",
                           "UB memory comes from TPipe::InitBuffer, GM from the kernel's arguments")
        if name in ("printf", "PRINTF", "DumpTensor", "ascendc_assert", "trap"):
            raise self.err(fname_node, f"'{name}' is not modelled by the simulator",
                           "look at values with the trace in snapshot mode (record=True, snapshot=True) instead")
        # a type used as a function: T(x), K<float>()
        callee = None
        if fn.type != "template_function" or name not in self.tr.funcs:
            callee = self.lookup(name)
        if callee is None:
            if (name in self.tr.funcs or name in self.tr.func_specs) and not (
                    self.inst and self.inst.method_owner(name)):
                return self.user_call(node, name, targs, arg_nodes)
            if self.inst is not None and self.inst.method_owner(name) is not None:
                return self.call_method(node, "this", self.inst, name, targs, arg_nodes)
            if name in api.FUNCTIONS:
                return self.api_call(node, name, targs, arg_nodes)
            if name in api.KNOWN_UNMODELLED:
                raise self.err(fname_node, f"the AscendC API '{name}' is not modelled by the simulator",
                               "the simulator models: " + ", ".join(sorted(api.FUNCTIONS)))
            try:
                if fn.type == "template_function":
                    ctype = self.tr.named_type(self.unit, fn, name, targs, self.bind, self.inst)
                else:
                    te = self.name(name, fname_node)
                    if not te.is_type:
                        raise self.err(fname_node, f"'{name}' is not a function")
                    ctype = te.t
            except KernelCompileError as exc:
                if "unknown" in exc.reason:
                    raise self.err(fname_node, f"unknown function '{name}'",
                                   "neither a function of the kernel nor an AscendC API the simulator models "
                                   f"({', '.join(sorted(api.FUNCTIONS))})") from None
                raise
            vals = [self.expr(a) for a in arg_nodes]
            if ctype.kind in ("int", "float", "bool"):
                if len(vals) != 1:
                    raise self.err(node, f"{ctype}(...) takes one value")
                return self.cast(vals[0], ctype, node)
            return E(self.construct(ctype, vals, node), ctype)
        raise self.err(fname_node, f"'{name}' is not a function")

    def args_for(self, arg_nodes: list[Node], param_types: list[CType], node: Node, what: str) -> list[str]:
        if len(arg_nodes) != len(param_types):
            raise self.err(node, f"{what} takes {len(param_types)} arguments, got {len(arg_nodes)}")
        out = []
        for a, pt in zip(arg_nodes, param_types, strict=True):
            if a.type == "initializer_list":
                out.append(self.construct(pt, [self.expr(v) for v in a.named_children], a))
                continue
            e = self.expr(a)
            if pt.kind == "ptr" and e.t.kind in ("struct", "pstruct") and pt.target == e.t:
                raise self.err(a, f"{what} takes a pointer here: pass &{a.text.decode()}")
            out.append(self.convert(e, pt, a))
        return out

    def _param_types(self, fnode: Node, bind: dict[str, Any], inst: _Inst | None, unit: Unit) -> list[CType]:
        decl = fnode.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        out = []
        for p in decl.child_by_field_name("parameters").named_children:
            ptype = self.tr.type_of(unit, p.child_by_field_name("type"), bind, inst)
            d, ptype, _ = unwrap(p.child_by_field_name("declarator"), ptype)
            if ptype.kind == "void" and d is None:
                continue
            out.append(ptype)
        return out

    def _deduce(self, tparams: list[Any], fnode: Node, unit: Unit, inst: _Inst | None, targs: tuple[Any, ...],
                arg_nodes: list[Node], node: Node, base_bind: dict[str, Any]) -> tuple[Any, ...]:
        """Template argument deduction, the simple cases: a parameter of type T, LocalTensor<T>, T& from the
        argument's type."""
        if len(targs) >= len(tparams):
            return targs
        names = [n for _k, n, _t in tparams]
        got: dict[str, Any] = dict(zip(names, targs, strict=False))
        decl = fnode.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters").named_children
        for p, a in zip(params, arg_nodes, strict=False):
            ptext = p.child_by_field_name("type").text.decode()
            ae = self.expr(a)
            for n in names:
                if n in got:
                    continue
                if re.fullmatch(rf"(const\s+)?{n}", ptext.strip()):
                    got[n] = ae.t
                elif re.search(rf"<\s*{n}\s*>", ptext) and ae.t.args:
                    got[n] = ae.t.args[0]
        missing = [n for n in names if n not in got]
        if missing:
            raise self.err(node, f"cannot deduce the template argument {', '.join(missing)}",
                           "give it explicitly: f<float>(...)")
        return tuple(got[n] for n in names)

    def user_call(self, node: Node, name: str, targs: tuple[Any, ...], arg_nodes: list[Node]) -> E:
        if name not in self.tr.funcs:                    # only specialisations are defined: pick by the arguments
            spec = next((f for args_node, f in self.tr.func_specs[name]
                         if self.tr.template_args(f.unit, args_node, {}) == targs), None)
            if spec is None:
                raise self.err(node, f"no specialisation of '{name}' for <{', '.join(_spell(a) for a in targs)}>",
                               "define the template, or a specialisation for these arguments")
            pyname, ret = self.tr.function(spec, (), node, self.unit)
            args = self.args_for(arg_nodes, self._param_types(spec.node, {}, None, spec.unit), node, f"'{name}'")
            return E(f"{pyname}({', '.join(args)})", ret)
        cands = [f for f in self.tr.funcs[name] if self._arity(f.node) == len(arg_nodes)]
        if not cands:
            raise self.err(node, f"'{name}' takes {self._arity(self.tr.funcs[name][0].node)} arguments, "
                           f"got {len(arg_nodes)}")
        f = cands[0]
        targs = self._deduce(f.tparams, f.node, f.unit, None, targs, arg_nodes, node, {})
        pyname, ret = self.tr.function(f, targs, node, self.unit)
        bind = {n: a for (_k, n, _t), a in zip(f.tparams, targs, strict=True)}
        ptypes = self._param_types(f.node, bind, None, f.unit)
        args = self.args_for(arg_nodes, ptypes, node, f"'{name}'")
        return E(f"{pyname}({', '.join(args)})", ret)

    def _arity(self, fnode: Node) -> int:
        decl = fnode.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        ps = [p for p in decl.child_by_field_name("parameters").named_children
              if not (p.type == "parameter_declaration" and p.text.decode().strip() == "void")]
        return len(ps)

    def call_method(self, node: Node, obj: str, inst: _Inst, name: str, targs: tuple[Any, ...],
                    arg_nodes: list[Node]) -> E:
        """``obj.name(args)`` on a class of the kernel, bound statically as C++ binds a non-virtual call: the
        method of the class (or nearest base) that declares it, called as ``Class.method(obj, ...)``."""
        inst = inst.method_owner(name) or inst
        cands = [m for m in inst.methods[name] if self._arity(m.node) == len(arg_nodes)]
        if not cands:
            raise self.err(node, f"'{inst.decl.name}::{name}' takes {self._arity(inst.methods[name][0].node)} "
                           f"arguments, got {len(arg_nodes)}")
        m = cands[0]
        own = m.tparams[1:] if m.tparams and m.tparams[0][0] == "rename" else m.tparams
        bind = dict(inst.bind)
        if m.tparams and m.tparams[0][0] == "rename":
            for (_k, pname, _t), a in zip(m.tparams[0][1], inst.args, strict=False):
                bind[pname] = a
        targs = self._deduce(own, m.node, m.unit, inst, targs, arg_nodes, node, bind)
        pyname, ret = self.tr.method(inst, m, targs, node, self.unit)
        for (_k, n, _t), a in zip(own, targs, strict=True):
            bind[n] = a
        ptypes = self._param_types(m.node, bind, inst, m.unit)
        args = self.args_for(arg_nodes, ptypes, node, f"'{inst.decl.name}::{name}'")
        return E(f"{inst.pyname}.{pyname}({', '.join([obj, *args])})", ret)

    def method_call(self, node: Node, fn: Node, arg_nodes: list[Node]) -> E:
        target = self.x_field_expression(fn)
        fnode = fn.child_by_field_name("field")
        targs: tuple[Any, ...] = ()
        tm = fnode
        if fnode.type == "dependent_name":
            tm = fnode.named_children[0]
        if tm.type == "template_method":
            targs = self.tr.template_args(self.unit, tm.child_by_field_name("arguments"), self.bind, self.inst)
        ref = target.ref
        if ref is None:
            raise self.err(fn, f"'{fn.text.decode()}' is not a method")
        if ref[0] == "method":
            _, obj, inst, name = ref
            return self.call_method(node, obj, inst, name, targs, arg_nodes)
        _, base, btype, mname = ref
        return self.api_method(node, fn, base, btype, mname, targs, arg_nodes)

    def api_method(self, node: Node, fn: Node, base: E, btype: CType, mname: str, targs: tuple[Any, ...],
                   arg_nodes: list[Node]) -> E:
        methods = api.API_CLASSES.get(btype.name, {})
        if mname not in methods:
            raise self.err(fn.child_by_field_name("field"), f"{btype.name} has no method '{mname}' in the simulator",
                           f"{btype.name} offers: {', '.join(sorted(methods))}")
        cands = [m for m in methods[mname] if len(m.params) == len(arg_nodes)]
        if not cands:
            raise self.err(node, f"{btype.name}::{mname} takes "
                           f"{' or '.join(str(len(m.params)) for m in methods[mname])} arguments, got {len(arg_nodes)}")
        vals = [None if a.type == "initializer_list" else self.expr(a) for a in arg_nodes]
        m = cands[0]
        if btype.name == "TPipe" and mname == "InitBuffer":
            kinds = "Q" if vals[0] is not None and vals[0].t.kind == "api" and vals[0].t.name == "TQue" else "B"
            m = next((c for c in cands if c.params[0] == kinds), None)
            if m is None:
                form = "TBuf: InitBuffer(buf, bytes)" if len(arg_nodes) == 2 else "TQue: InitBuffer(que, num, bytes)"
                raise self.err(node, f"InitBuffer with {len(arg_nodes)} arguments takes a {form}")
        out = []
        elem = btype.args[0] if btype.args and isinstance(btype.args[0], CType) else None
        for kind, v, a in zip(m.params, vals, arg_nodes, strict=True):
            if kind in _METHOD_INTS:
                out.append(self.convert(v, _METHOD_INTS[kind], a))
            elif kind == "S":
                out.append(self.convert(v, elem, a))
            elif kind in ("Q", "B"):
                want = "TQue" if kind == "Q" else "TBuf"
                if v.t.kind != "api" or v.t.name != want:
                    raise self.err(a, f"InitBuffer expects a {want} here, got {v.t}")
                out.append(v.code)
            elif kind == "L":
                if v.t.kind != "api" or v.t.name != "LocalTensor":
                    raise self.err(a, f"{btype.name}::{mname} takes a LocalTensor, got {v.t}")
                out.append(v.code)
            elif kind == "PTR":
                if v.t.kind != "ptr":
                    raise self.err(a, f"SetGlobalBuffer takes a GM pointer ((__gm__ T*)addr), got {v.t}")
                if elem is not None and v.t.target is not None and v.t.target != elem and \
                        v.t.target.name != "uint8_t":
                    raise self.err(a, f"SetGlobalBuffer of a GlobalTensor<{elem}> takes a {elem}*, got {v.t}")
                out.append(v.code)
            else:
                out.append(v.code)
        ret = m.returns
        if ret == "LocalTensor<U>":
            u = targs[0] if targs else None
            if mname == "ReinterpretCast" and u is None:
                raise self.err(node, "ReinterpretCast needs the new element type: t.ReinterpretCast<U>()")
            if u is None:
                raise self.err(node, f"{btype.name}::{mname} needs the element type: "
                               f"{'q.template ' if btype.name == 'TQue' else ''}{mname}<T>()",
                               "write the tensor's element type as a template argument")
            if not isinstance(u, CType):
                raise self.err(node, f"{mname}<{u}>: the template argument must be a type")
            out.insert(0, self.dtype(u, node))
            rtype = CType("api", "LocalTensor", args=(u,))
        elif ret == "T":
            rtype = elem
        elif ret == "bool":
            rtype = BOOL
        elif ret == "uint64":
            rtype = UINT64
        elif ret == "uint32":
            rtype = INT_TYPES["uint32_t"]
        else:
            rtype = VOID
        py = m.python or mname
        return E(f"{base.code}.{py}({', '.join(out)})", rtype)

    def api_call(self, node: Node, name: str, targs: tuple[Any, ...], arg_nodes: list[Node]) -> E:
        if name == "PipeBarrier":
            if arg_nodes:
                raise self.err(node, "PipeBarrier takes no arguments: PipeBarrier<PIPE_V>()")
            pipe = targs[0] if targs else ("enum", "PIPE_ALL")
            if not (isinstance(pipe, tuple) and pipe[1] in api.PIPES):
                raise self.err(node, f"PipeBarrier<{_spell(pipe)}> is not modelled",
                               f"the simulator models {', '.join(api.PIPES)}")
            return E(f"PipeBarrier({pipe[1]!r})", VOID)
        overloads = api.FUNCTIONS[name]
        vals = [None if a.type == "initializer_list" else self.expr(a) for a in arg_nodes]
        chosen = None
        for ov in overloads:
            if len(ov.params) != len(vals):
                continue
            if all(self._kind_ok(k, v) for k, v in zip(ov.params, vals, strict=True)):
                chosen = ov
                break
        if chosen is None:
            got = ", ".join(("{...}" if v is None else str(v.t)) for v in vals)
            raise self.err(node, f"no overload of {name} takes ({got})",
                           "the simulator has: " + "; ".join(ov.spelled(name) for ov in overloads) +
                           ("" if name not in ("Muls", "Adds", "Maxs", "Mins", "Add", "Mul", "Max", "Min")
                            else " (the mask/repeat forms are not modelled)"))
        tensors = [v for k, v in zip(chosen.params, vals, strict=True) if k in ("L", "G") and v is not None]
        first = api.T_FROM.get(name, 0)
        tsrc = vals[first] if first < len(vals) and vals[first] is not None else (tensors[0] if tensors else None)
        elem = tsrc.t.args[0] if tsrc is not None and tsrc.t.args else None
        if name in api.SAME_T:
            for k, v, a in zip(chosen.params, vals, arg_nodes, strict=True):
                if k in ("L", "G") and v.t.args and elem is not None and v.t.args[0] != elem:
                    raise self.err(a, f"the operands of {name} hold different element types ({elem} and "
                                   f"{v.t.args[0]})", "Cast one of them first: every operand of a vector "
                                   "instruction has the same element type")
        out = []
        for k, v, a in zip(chosen.params, vals, arg_nodes, strict=True):
            if k in ("L", "G", "M"):
                out.append(v.code)
            elif k == "S" or (k == "S|L" and v.t.kind != "api"):
                out.append(v.code if v.t == elem else self.convert(v, elem, a))
            elif k == "S|L":
                out.append(v.code)
            elif k == "I":
                out.append(self.convert(v, INT32, a))
            elif k.startswith("E:"):
                out.append(v.code)
            elif k in ("P", "PAD"):
                if v is None:
                    # DataCopyParams goes with DataCopyPadParams, DataCopyExtParams with DataCopyPadExtParams<T>
                    ext = any(x is not None and x.t.name == "DataCopyExtParams" for x in vals)
                    sname = ("DataCopyExtParams" if ext else "DataCopyParams") if k == "P" else (
                        "DataCopyPadExtParams" if ext else "DataCopyPadParams")
                    ctype = CType("pstruct", sname, args=(elem,) if elem is not None else ())
                    out.append(self.construct(ctype, [self.expr(x) for x in a.named_children], a))
                else:
                    out.append(v.code)
        rtype = INT64 if chosen.returns == "int64" else VOID
        return E(f"{api.PYTHON_NAME.get(name, name)}({', '.join(out)})", rtype)

    def _kind_ok(self, kind: str, v: E | None) -> bool:
        if v is None:
            return kind in ("P", "PAD")
        t = v.t
        if kind in ("L", "M"):
            return t.kind == "api" and t.name == "LocalTensor"
        if kind == "G":
            return t.kind == "api" and t.name == "GlobalTensor"
        if kind == "S":
            return t.is_arith and t.kind != "enum"
        if kind == "S|L":
            return (t.is_arith and t.kind != "enum") or (t.kind == "api" and t.name == "LocalTensor")
        if kind == "I":
            return t.kind in ("int", "bool")
        if kind.startswith("E:"):
            return t.kind == "enum" and t.name == kind[2:]
        if kind in ("P", "PAD"):
            return t.kind == "pstruct" and t.name in api.PARAM_STRUCTS[kind]
        return False

    # ---- the macros of the entry (GET_TILING_DATA ...) ----------------------------------------------------------
    def _tiling_struct(self, node: Node, sname: str | None) -> _Inst:
        name = sname or self.tr.tiling_default
        if name is None:
            cands = [c for c in self.tr.classes if c.endswith("TilingData")]
            if len(cands) != 1:
                raise self.err(node, "GET_TILING_DATA cannot tell which struct the tiling holds",
                               "write GET_TILING_DATA_WITH_STRUCT(MyTilingData, tilingData, tiling), or "
                               "REGISTER_TILING_DEFAULT(MyTilingData) before it")
            name = cands[0]
        decl = self.tr.classes.get(name)
        if decl is None:
            raise self.err(node, f"unknown tiling struct '{name}'", "declare it in the kernel's *_tiling_data.h")
        inst = self.tr.instantiate_class(self.unit, node, decl, ())
        self.tr.used_struct_names.add(inst.pyname)
        return inst

    def _get_tiling(self, node: Node, var: Node, tiling: Node, sname: str | None) -> E:
        inst = self._tiling_struct(node, sname)
        src = self.expr(tiling)
        py = self.declare(var.text.decode(), E("", inst.ctype))
        self.emit(f"{py} = _cx_tiling({inst.pyname}, {src.code})")
        return E("", VOID)

    def b_GET_TILING_DATA(self, node: Node, args: list[Node], statement: bool) -> E:
        if len(args) != 2:
            raise self.err(node, "GET_TILING_DATA(tilingData, tiling) takes 2 arguments")
        return self._get_tiling(node, args[0], args[1], None)

    def b_GET_TILING_DATA_WITH_STRUCT(self, node: Node, args: list[Node], statement: bool) -> E:
        if len(args) != 3:
            raise self.err(node, "GET_TILING_DATA_WITH_STRUCT(Struct, tilingData, tiling) takes 3 arguments")
        return self._get_tiling(node, args[1], args[2], args[0].text.decode())

    def b_REGISTER_TILING_DEFAULT(self, node: Node, args: list[Node], statement: bool) -> E:
        self.tr.tiling_default = args[0].text.decode() if args else None
        return E("", VOID)

    def b_KERNEL_TASK_TYPE_DEFAULT(self, node: Node, args: list[Node], statement: bool) -> E:
        return E("", VOID)

    b_REGISTER_TILING_FOR_TILINGKEY = b_KERNEL_TASK_TYPE_DEFAULT
    b_ENABLE_PRINTF = b_KERNEL_TASK_TYPE_DEFAULT           # AscendC's printf switch: nothing to switch here
    b_SetKernelMode = b_KERNEL_TASK_TYPE_DEFAULT           # AIV_MODE: the simulated core is a vector core
    b_SetSysWorkspaceForce = b_KERNEL_TASK_TYPE_DEFAULT

    def b_TILING_KEY_IS(self, node: Node, args: list[Node], statement: bool) -> E:
        key = self.tr.tiling_key
        if key is None:
            raise self.err(node, "TILING_KEY_IS needs the launch's tiling key",
                           "launch the kernel with tilingKey=<the host's tiling key>")
        want = self.tr.const_eval(self.unit, args[0], self.bind, self.inst)
        v = int(want) == int(key)
        return E(_const_code(v, BOOL), BOOL, v)

    def b_ASSERT(self, node: Node, args: list[Node], statement: bool) -> E:
        """``ASSERT(cond && "message")``: AscendC's debug check, a finding when it fails (the CPU-debug build's
        abort; the NPU build compiles it out)."""
        if len(args) != 1:
            raise self.err(node, "ASSERT(condition) takes one argument")
        cond, message = args[0], ""
        while cond.type == "parenthesized_expression":
            cond = cond.named_children[0]
        if cond.type == "binary_expression" and cond.child_by_field_name("right").type == "string_literal":
            message = cond.child_by_field_name("right").text.decode()[1:-1]
            cond = cond.child_by_field_name("left")
        test = self.cond(cond)
        text = message or cond.text.decode()
        return E(f"_cx_assert({test}, {text!r})", VOID)

    b_assert = b_ASSERT

    def _ceil_div(self, node: Node, args: list[Node], name: str) -> tuple[E, E, E]:
        if len(args) != 2:
            raise self.err(node, f"{name}(value, alignment) takes 2 arguments")
        a, b = self.expr(args[0]), self.expr(args[1])
        one = E("1", INT32, 1)
        q = self.binop("/", self.binop("-", self.binop("+", a, b, node), one, node), b, node)
        return a, b, q

    def b_CeilDiv(self, node: Node, args: list[Node], statement: bool) -> E:
        """``CeilDiv(a, b)``: (a + b - 1) / b in the arguments' integer type."""
        return self._ceil_div(node, args, "CeilDiv")[2]

    b_DivCeil = b_CeilDiv

    def b_AlignUp(self, node: Node, args: list[Node], statement: bool) -> E:
        """``AlignUp(a, b)``: a rounded up to a multiple of b, ``(a + b - 1) / b * b``."""
        _a, b, q = self._ceil_div(node, args, "AlignUp")
        return self.binop("*", q, b, node)

    b_CeilAlign = b_AlignUp

    def b_GetBlockIdx(self, node: Node, args: list[Node], statement: bool) -> E:
        if args:
            raise self.err(node, "GetBlockIdx() takes no arguments")
        return E("GetBlockIdx()", INT64)

    def b_GetBlockNum(self, node: Node, args: list[Node], statement: bool) -> E:
        if args:
            raise self.err(node, "GetBlockNum() takes no arguments")
        return E("GetBlockNum()", INT64)


"""One function's translation: its scopes, the Python lines it emits, and how a variable of each type is
initialised; statements, expressions and calls are the three mixins it is made of.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from . import api
from .builtins import Builtins
from .calls import Calls
from .conversions import Conversions
from .ctypes import (
    DTYPE_NAME,
    CType,
)
from .errors import KernelCompileError
from .expressions import Expressions
from .preprocess import Unit
from .statements import Statements
from .syntax import unwrap
from .values import E, const_code, safe_name, spell

if TYPE_CHECKING:
    from .decls import Inst
    from .translate import Translator

__all__ = ['FunctionTranslator']


class FunctionTranslator(Statements, Expressions, Conversions, Calls, Builtins):
    """Translates one function body (or a constant expression) with its scopes."""

    def __init__(self, tr: Translator, unit: Unit, bind: dict[str, Any], inst: Inst | None, ret: CType | None,
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
        #: scalar reference parameters the body writes (``int64_t& n``): (parameter index, Python name)
        self.out_refs: list[tuple[int, str]] = []
        self.tmp = 0

    def err(self, node: Node, reason: str, hint: str = "") -> KernelCompileError:
        return self.tr.error(self.unit, node, reason, hint)

    def emit(self, text: str, line: int | None = None) -> None:
        self.out.append(("    " * self.indent + text, line if line is not None else self.line))

    def declare(self, name: str, e: E) -> str:
        """A new local: its Python name (a fresh one when it shadows a visible local of the same name)."""
        py = safe_name(name)
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
            if ptype.kind in ("int", "float", "bool") and _writes_through(p, fnode.child_by_field_name("body"), d):
                self.out_refs.append((len(out) - 1, out[-1]))    # returned with the result, stored by the caller
        return out

    def init_value(self, ctype: CType, value: Node | None, node: Node) -> str:
        """Python code for a variable of ``ctype`` initialised by ``value`` (None: default-initialised)."""
        if value is None:
            return self.default(ctype, node)
        if value.type == "initializer_list":
            vals = [self.expr(v) for v in value.named_children]
            if ctype.kind in ("int", "float", "bool") and len(vals) <= 1:
                return self.convert(vals[0], ctype) if vals else const_code(0, ctype)
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
            return const_code(0, ctype)
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
            if ctype.name == "TQueBind":                 # TQueBind<src, dst, depth>: positions by name
                if len(ctype.args) < 2:
                    raise self.err(node, "TQueBind needs two positions: TQueBind<TPosition::VECIN, "
                                   "TPosition::VECOUT, depth>")
                src, dst = (a[1] if isinstance(a, tuple) else str(a) for a in ctype.args[:2])
                depth = ctype.args[2] if len(ctype.args) > 2 else 1
                return f"TQueBind({src!r}, {dst!r}, {int(depth)})"
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
        raise self.err(node, f"not an element type: {spell(t)}")

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
        if ctype.kind == "api" and ctype.name in ("GlobalTensor", "LocalTensor", "TPipe", "TQue", "TBuf", "TQueBind") \
                and not vals:
            return self.default(ctype, node)
        raise self.err(node, f"cannot brace-initialise a {ctype} here")

    def _inst_of(self, ctype: CType) -> Inst:
        return self.tr.inst_by_name(ctype.name)


def _writes_through(param: Node, body: Node | None, name: Node) -> bool:
    """``T& x`` (not const) whose body assigns ``x`` (``x = ...``, ``x += ...``, ``++x``): the function returns its
    final value beside its result and the call stores it into the argument (:meth:`Statements.expr_statement`)."""
    decl = param.child_by_field_name("declarator")
    if decl is None or decl.type != "reference_declarator" or body is None or \
            any(c.type == "type_qualifier" and c.text == b"const" for c in param.children):
        return False
    target = name.text
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type in ("assignment_expression", "update_expression"):
            lhs = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if lhs is not None and lhs.type == "identifier" and lhs.text == target:
                return True
        stack.extend(n.children)
    return False

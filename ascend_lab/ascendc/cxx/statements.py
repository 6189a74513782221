"""C++ statements to Python statements: declarations with their initialisers, ``if constexpr`` folded, loops as
``while`` with their update before every ``continue``, assignments converted to the target's type.
"""

from __future__ import annotations

from tree_sitter import Node

from .ctypes import (
    INT32,
)
from .syntax import unwrap
from .values import (
    NC,
    E,
    const_code,
    convert_const,
)

__all__ = ['Statements']


#: Statements outside the subset: (what is refused, what to write instead).
_REFUSED = {
    "switch_statement": ("switch is not supported", "write it as if / else if"),
    "goto_statement": ("goto and labels are not supported", "use loops with break/continue"),
    "labeled_statement": ("goto and labels are not supported", "use loops with break/continue"),
    "try_statement": ("exceptions do not exist on the AI Core", "check and return instead"),
    "throw_statement": ("exceptions do not exist on the AI Core", "check and return instead"),
}


class Statements:
    """Statements of a function body: blocks, declarations, if/for/while/do, assignments (a mixin of
    :class:`~.function.FunctionTranslator`, which holds the scopes and the output lines)."""

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
        """One statement, by its kind (``s_<kind>``); a kind outside the subset is refused with what to write."""
        self.tr.last = (self.unit, node)
        self.line = node.start_point[0] + 1
        handler = getattr(self, "s_" + node.type, None)
        if handler is not None:
            handler(node)
        elif node.type in _REFUSED:
            raise self.err(node, *_REFUSED[node.type])
        elif node.type not in ("comment", ";"):
            raise self.err(node, f"this statement ({node.type}) is not supported")

    def s_compound_statement(self, node: Node) -> None:
        self.block(node)

    def s_declaration(self, node: Node) -> None:
        self.declaration(node)

    def s_expression_statement(self, node: Node) -> None:
        if node.named_children:
            self.expr_statement(node.named_children[0])

    def s_if_statement(self, node: Node) -> None:
        self.if_statement(node)

    def s_for_statement(self, node: Node) -> None:
        self.for_statement(node)

    def s_while_statement(self, node: Node) -> None:
        self.emit(f"while {self.cond(node.child_by_field_name('condition'))}:")
        self.loop_updates.append(None)
        self.indented(node.child_by_field_name("body"))
        self.loop_updates.pop()

    def s_do_statement(self, node: Node) -> None:
        """``do { body } while (cond);``: ``while True`` with the test at the end (and before every continue)."""
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

    def s_return_statement(self, node: Node) -> None:
        refs = "".join(f", {py}" for _i, py in self.out_refs)     # reference outputs travel with the result
        if not node.named_children:
            self.emit(f"return (None{refs})" if refs else "return")
            return
        value = node.named_children[0]
        e = self.expr(value)
        code = self.convert(e, self.ret, value) if self.ret else e.code
        self.emit(f"return ({code}{refs})" if refs else f"return {code}")

    def s_break_statement(self, node: Node) -> None:
        self.emit("break")

    def s_continue_statement(self, node: Node) -> None:
        for update in (self.loop_updates[-1] if self.loop_updates else None) or []:
            self.emit(update)                            # a for loop's update runs before its next test
        self.emit("continue")

    def s_static_assert_declaration(self, node: Node) -> None:
        self.tr.static_assert(self.unit, node, self.bind, self.inst)

    def s_alias_declaration(self, node: Node) -> None:
        name, ctype = self.tr.alias(self.unit, node, self.bind)
        self.bind = {**self.bind, name: ctype}

    s_type_definition = s_alias_declaration

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
                        const = convert_const(e.const, ctype)
                    elif "constexpr" in specs:
                        raise self.err(value, f"the constexpr '{name}' is not a compile-time constant")
            if name in self.tr.overrides and "constexpr" in specs and ctype.kind in ("int", "float", "bool"):
                const = convert_const(self.tr.overrides[name], ctype)
                code = const_code(const, ctype)
            py = self.declare(name, E("", ctype, const))
            self.emit(f"{py} = {code}", d.start_point[0] + 1)

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
            if e is not None and e.ref is not None and e.ref[0] == "outref":
                self._store_outrefs(e)
            elif e is not None and e.code:
                self.emit(e.code)
        elif t == "comma_expression":
            for c in node.named_children:
                self.expr_statement(c)
        elif t == "parenthesized_expression":
            self.expr_statement(node.named_children[0])
        else:
            e = self.expr(node)
            self.emit(e.code)

    def _store_outrefs(self, e: E) -> None:
        """A call that writes through scalar reference parameters: its result tuple, each value stored back into
        the argument it was bound to, as C++'s reference would have written it."""
        tmp = f"_cx_out{self.tmp}"
        self.tmp += 1
        self.emit(f"{tmp} = {e.code}")
        for k, arg in enumerate(e.ref[1], 1):
            lv = self.expr(arg)
            self._store(arg, lv, E(f"{tmp}[{k}]", lv.t))

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


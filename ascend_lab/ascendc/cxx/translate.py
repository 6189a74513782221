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

import re
from typing import Any

from tree_sitter import Node

from .ctypes import (
    INT32,
    VOID,
    CType,
)
from .decls import ClassDecl, FuncDecl, Inst, Method, TParams, Wrap
from .errors import KernelCompileError
from .function import FunctionTranslator
from .preprocess import Preprocessed, Unit
from .resolve import TypeResolution
from .syntax import check_syntax, error_at, parse, unwrap
from .values import NC, Chunk, E, const_code, convert_const, cxx_spelling, mangle, safe_name, spell

__all__ = ["Chunk", "Translator", "check_syntax", "parse"]


class Translator(TypeResolution):
    """Holds the declarations of a preprocessed kernel and instantiates what the entry needs."""

    def __init__(self, pre: Preprocessed, trees: list[tuple[Unit, Any]], constants: dict[str, Any] | None = None):
        self.pre = pre
        self.overrides = dict(constants or {})
        self.classes: dict[str, ClassDecl] = {}
        self.funcs: dict[str, list[FuncDecl]] = {}
        #: explicit specialisations of function templates: name -> [(their template argument list, the function)]
        self.func_specs: dict[str, list[tuple[Node, FuncDecl]]] = {}
        self.globals: dict[str, E] = {}
        #: functions (by their Python name) that write scalar reference parameters: those parameters' indices
        self.out_refs: dict[str, list[int]] = {}
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
        return error_at(unit, node, reason, hint)

    # ---- declarations -----------------------------------------------------------------------------------------
    def _tparams(self, unit: Unit, node: Node) -> TParams:
        out = TParams()
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
                tp = TParams(tparams or []) + self._tparams(unit, child.child_by_field_name("parameters"))
                inner = [c for c in child.named_children if c.type != "template_parameter_list"]
                for c in inner:
                    if c.type == "template_declaration":        # template <T> template <U> K<T>::f<U>(...)
                        self._collect(unit, Wrap(c), tp)
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
                              FuncDecl(f"{fname}_spec{len(specs)}", node, unit, [])))
                return
            else:
                fname = name_node.text.decode() if name_node is not None else ""
            self.funcs.setdefault(fname, []).append(FuncDecl(fname, node, unit, tparams or []))
        elif t == "declaration":
            if any(d.type == "function_declarator" for d in node.children_by_field_name("declarator")):
                return                                  # a prototype: the definition says all
            if tparams:
                raise self.error(unit, node, "variable templates are not supported",
                                 "write a static constexpr member of a class template, or std::is_same_v<A, B>")
            self._declare_global(unit, node)
        elif t in ("alias_declaration", "type_definition"):
            name, ctype = self.alias(unit, node, {})
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
            self.classes.setdefault(name, ClassDecl(name, None, unit, tparams, is_struct))
            return
        old = self.classes.get(name)
        decl = ClassDecl(name, node, unit, tparams, is_struct)
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
                value = convert_const(self.overrides[name], ctype)
            else:
                value = convert_const(self.const_eval(unit, d.child_by_field_name("value"), {}), ctype)
            self.globals[name] = E(const_code(value, ctype), ctype, value)

    def instantiate_class(self, unit: Unit, node: Node, decl: ClassDecl, args: tuple[Any, ...]) -> Inst:
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
            bind[pname] = a if kind == "type" else convert_const(a, ptype)
        pyname = decl.name + "".join("_" + mangle(a) for a in args)
        inst = Inst(decl, args, pyname, bind, node=decl.node, unit=decl.unit)
        for args_node, snode, sunit in decl.specialisations:
            if self.template_args(sunit, args_node, {}) == args:
                inst.node, inst.unit, inst.bind = snode, sunit, {}
                break
        if inst.node is None:
            raise self.error(unit, node, f"'{decl.name}<{', '.join(spell(a) for a in args)}>' is declared but "
                             "never defined", "define the template, or a specialisation for these arguments")
        decl.insts[key] = inst
        self._members(inst)
        self._emit_class(inst)
        return inst

    def _members(self, inst: Inst) -> None:
        decl, unit = inst.decl, inst.unit
        if decl.base is not None and inst.node is decl.node:
            btype = self.type_of(unit, decl.base, inst.bind, inst)
            if btype.kind != "struct":
                raise self.error(unit, decl.base, f"the base class must be a class of the kernel, not {btype}")
            inst.base = self.inst_by_name(btype.name)
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
                name, ctype = self.alias(unit, m, inst.bind, inst)
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

    def _add_method(self, inst: Inst, node: Node, unit: Unit, tparams: list[Any],
                    outer: list[Any] | None = None) -> None:
        name_node = self._declarator_name(node.child_by_field_name("declarator"))
        name = self._strip_ns(name_node) if name_node is not None else ""
        if name_node is not None and name_node.type == "qualified_identifier":
            name = name_node.child_by_field_name("name").text.decode()
        text = node.text.decode()
        if re.match(r"\s*virtual\b", text) or "virtual " in text.split("(")[0]:
            raise self.error(unit, node, "virtual methods are not supported",
                             "AscendC kernels do not use virtual dispatch: make it a plain method")
        method = Method(name, node, unit, tparams)
        if outer:
            method.tparams = [("rename", outer, None), *tparams]
        if name == inst.decl.name:
            inst.ctor = method
        elif name.startswith("~"):
            return
        else:
            inst.methods.setdefault(name, []).append(method)

    def _field(self, inst: Inst, node: Node) -> None:
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
                    value = convert_const(self.overrides[name], ftype)
                elif value_node is None:
                    raise self.error(unit, d, f"static member '{name}' needs an initialiser")
                else:
                    value = convert_const(self.const_eval(unit, value_node, inst.bind, inst), ftype)
                inst.statics[name] = E(const_code(value, ftype), ftype, value)
                inst.static_lines[name] = d.start_point[0] + 1
                continue
            inst.fields[name] = ftype
            inst.field_nodes.append((name, ftype, value_node, d))

    # ---- compile-time evaluation ------------------------------------------------------------------------------
    def static_assert(self, unit: Unit, node: Node, bind: dict[str, Any], inst: Inst | None) -> None:
        """``static_assert(cond, "message")``: a compile error where it fails, as in C++."""
        cond = node.child_by_field_name("condition")
        message = node.child_by_field_name("message")
        if not self.const_eval(unit, cond, bind, inst):
            text = message.text.decode()[1:-1] if message is not None else cond.text.decode()
            raise self.error(unit, node, f"static assertion failed: {text}")

    def const_eval(self, unit: Unit, node: Node, bind: dict[str, Any], inst: Inst | None = None) -> Any:
        fx = FunctionTranslator(self, unit, bind, inst, None)
        e = fx.expr(node)
        if e.const is NC:
            raise self.error(unit, node, f"'{node.text.decode()}' is not a compile-time constant",
                             "template arguments, constexpr values and array sizes must be known at compile time")
        return e.const

    # ---- emission ---------------------------------------------------------------------------------------------
    def _emit_class(self, inst: Inst) -> None:
        unit = inst.unit
        lines: list[tuple[str, int]] = []
        line0 = inst.node.start_point[0] + 1
        lines.append((f"class {inst.pyname}({inst.base.pyname}):" if inst.base else f"class {inst.pyname}:", line0))
        doc = f"{'struct' if inst.decl.is_struct else 'class'} {inst.decl.name}" + (
            f"<{', '.join(spell(a) for a in inst.args)}>" if inst.args else "")
        lines.append((f"    {doc!r}", line0))
        for name, e in inst.statics.items():
            lines.append((f"    {name} = {e.code}", inst.static_lines.get(name, line0)))
        fx = FunctionTranslator(self, unit, inst.bind, inst, VOID)
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
                                 cxx_name=f"{cxx_spelling(inst)}::{inst.decl.name}"))

    def method(self, inst: Inst, m: Method, targs: tuple[Any, ...], call_node: Node, unit: Unit) -> tuple[str, CType]:
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
            bind[pname] = a if kind == "type" else convert_const(a, ptype)
        pyname = m.name + "".join("_" + mangle(a) for a in targs)
        ret = self._return_type(m.unit, m.node, bind, inst)
        m.insts[key] = (pyname, ret)
        lines = self._body(m.unit, m.node, bind, inst, ret, f"{inst.pyname}__{pyname}", ["this"])
        self.chunks.append(Chunk(m.unit.source.name, f"{inst.pyname}__{pyname}", "method", lines, inst.pyname,
                                 pyname, f"{cxx_spelling(inst)}::{m.name}{_targ_text(targs)}"))
        return pyname, ret

    def _body(self, unit: Unit, node: Node, bind: dict[str, Any], inst: Inst | None, ret: CType, pyname: str,
              first: list[str], entry: bool = False) -> list[tuple[str, int]]:
        """The Python lines of one function definition: ``def pyname(first..., params):`` and its body."""
        fx = FunctionTranslator(self, unit, bind, inst, ret, entry=entry)
        params = fx.params(node)
        fx.indent = 1
        if fx.out_refs:       # known before the body: a recursive call stores them too
            self.out_refs[pyname] = [i for i, _py in fx.out_refs]
        fx.block(node.child_by_field_name("body"))
        line = node.start_point[0] + 1
        tail = [(f"    return (None{''.join(f', {py}' for _i, py in fx.out_refs)})", node.end_point[0] + 1)] \
            if fx.out_refs else []
        return [(f"def {pyname}({', '.join([*first, *params])}):", line), *(fx.out or [("    pass", line)]), *tail]

    def _return_type(self, unit: Unit, node: Node, bind: dict[str, Any], inst: Inst | None) -> CType:
        return unwrap(node.child_by_field_name("declarator"), self.type_of(unit, node.child_by_field_name("type"),
                                                                           bind, inst))[1]

    def function(self, fdecl: FuncDecl, targs: tuple[Any, ...], call_node: Node | None, unit: Unit | None,
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
            bind[pname] = a if kind == "type" else convert_const(a, ptype)
        pyname = safe_name(fdecl.name) + "".join("_" + mangle(a) for a in targs)
        ret = self._return_type(fdecl.unit, fdecl.node, bind, None)
        fdecl.insts[key] = (pyname, ret)
        lines = self._body(fdecl.unit, fdecl.node, bind, None, ret, pyname, [], entry)
        self.chunks.append(Chunk(fdecl.unit.source.name, pyname, "function", lines,
                                 cxx_name=fdecl.name + _targ_text(targs)))
        return pyname, ret

    def inst_by_name(self, pyname: str) -> Inst:
        """The instantiated class whose Python name is ``pyname`` (a struct CType's name)."""
        for decl in self.classes.values():
            for inst in decl.insts.values():
                if inst.pyname == pyname:
                    return inst
        raise KeyError(pyname)

    def struct_layout(self, inst: Inst) -> tuple[str, int, list[tuple[str, CType]]]:
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


def _targ_text(targs: tuple[Any, ...]) -> str:
    """``<float, 2>`` -- template arguments as C++ writes them (empty for none)."""
    return f"<{', '.join(spell(a) for a in targs)}>" if targs else ""

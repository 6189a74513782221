"""C++ types as the translator resolves them: a declaration's type (aliases, member types, ``std::conditional``,
the AscendC classes, the kernel's class templates instantiated on the way), template argument lists with their
defaults -- a mixin of :class:`~.translate.Translator`.
"""

from __future__ import annotations

from typing import Any

from tree_sitter import Node

from . import api
from .ctypes import AUTO, INT32, CType, scalar_type
from .decls import Inst
from .preprocess import Unit
from .values import spell

__all__ = ["TypeResolution"]


class TypeResolution:
    """Types and template arguments of the kernel's declarations (a mixin of the Translator)."""

    def alias(self, unit: Unit, node: Node, bind: dict[str, Any], inst: Inst | None = None) -> tuple[str, CType]:
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
    def type_of(self, unit: Unit, node: Node | None, bind: dict[str, Any], inst: Inst | None = None) -> CType:
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
                     inst: Inst | None) -> CType | None:
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
                   inst: Inst | None) -> CType:
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
        if name in ("TQue", "TBuf", "TPipe", "TQueBind"):
            if name == "TQue" and args and (len(args) > 2 or (len(args) == 2 and not isinstance(args[1], int))):
                raise self.error(unit, node, f"TQue<{', '.join(spell(a) for a in args)}>: a queue takes a "
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
                      inst: Inst | None = None) -> tuple[Any, ...]:
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

    def _value_name(self, name: str, bind: dict[str, Any], inst: Inst | None) -> bool:
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

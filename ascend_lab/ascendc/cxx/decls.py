"""What the translator records of the kernel's declarations: template parameter lists, class and function templates,
methods, and a class instantiated for its template arguments (fields, statics, methods, its base) -- the records
:mod:`.translate` fills and the function translation reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

from .ctypes import CType
from .preprocess import Unit
from .values import E

__all__ = ["ClassDecl", "FuncDecl", "Inst", "Method", "TParams", "Wrap"]


class TParams(list):
    """A template's parameters, (kind, name, type) each, with their default arguments (``int N = 2``)."""

    def __init__(self, items: Any = ()):
        super().__init__(items)
        self.defaults: list[tuple[Any, Node | None]] = list(getattr(items, "defaults", [(None, None)] * len(self)))

    def __add__(self, other: Any) -> TParams:
        out = TParams(list(self) + list(other))
        out.defaults = self.defaults + list(getattr(other, "defaults", [(None, None)] * len(other)))
        return out


class Wrap:
    """One node seen as a list of children (a nested template declaration collected like a namespace's)."""

    def __init__(self, node: Node):
        self.named_children = [node]


class ClassDecl:
    def __init__(self, name: str, node: Node, unit: Unit, tparams: list[tuple[str, str, CType | None]],
                 is_struct: bool):
        self.name = name
        self.node = node
        self.unit = unit
        self.tparams = tparams
        self.is_struct = is_struct
        self.out_of_class: dict[str, list[tuple[Node, Unit, list[Any]]]] = {}
        self.insts: dict[tuple[Any, ...], Inst] = {}
        #: explicit specialisations ``template <> struct X<half> {...}``: (their argument list, node, unit)
        self.specialisations: list[tuple[Node, Node, Unit]] = []
        self.base: Node | None = None        # the base class of ``class K : public Base<...>`` (one, public)


class FuncDecl:
    def __init__(self, name: str, node: Node, unit: Unit, tparams: list[tuple[str, str, CType | None]]):
        self.name = name
        self.node = node
        self.unit = unit
        self.tparams = tparams
        self.insts: dict[tuple[Any, ...], tuple[str, CType]] = {}


@dataclass
class Method:
    name: str
    node: Node                       # function_definition
    unit: Unit
    tparams: list[Any]
    insts: dict[tuple[Any, ...], tuple[str, CType]] = field(default_factory=dict)


@dataclass
class Inst:
    """A class (template) instantiated for concrete arguments."""
    decl: ClassDecl
    args: tuple[Any, ...]
    pyname: str
    bind: dict[str, Any]
    fields: dict[str, CType] = field(default_factory=dict)
    field_nodes: list[tuple[str, CType, Node | None, Node]] = field(default_factory=list)
    statics: dict[str, E] = field(default_factory=dict)
    methods: dict[str, list[Method]] = field(default_factory=dict)
    static_lines: dict[str, int] = field(default_factory=dict)
    base: Inst | None = None        # the instantiated base class (``class K : public Base<K<T>, T>``)

    def chain(self) -> list[Inst]:
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

    def method_owner(self, name: str) -> Inst | None:
        return next((i for i in self.chain() if name in i.methods), None)
    node: Node | None = None         # the class body instantiated: the primary template's or a specialisation's
    unit: Unit | None = None
    ctor: Method | None = None
    aliases: dict[str, CType] = field(default_factory=dict)

    @property
    def ctype(self) -> CType:
        return CType("struct", self.pyname, args=self.args)

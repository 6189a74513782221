"""The macros and helpers a kernel entry and its methods call as if they were functions: the tiling macros
(``GET_TILING_DATA``, ``REGISTER_TILING_DEFAULT``, ``TILING_KEY_IS``), ``ASSERT``, ``CeilDiv``/``AlignUp``,
``AscendC::Std::min/max``, ``GetBlockIdx``/``GetBlockNum``, ``GetTPipePtr`` -- each a ``b_<NAME>`` method the call
translation looks up first (a mixin of :class:`~.function.FunctionTranslator`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from .ctypes import BOOL, INT32, INT64, VOID, CType, arith
from .values import NC, E, const_code, convert_const

if TYPE_CHECKING:
    from .decls import Inst

__all__ = ["Builtins"]


class Builtins:
    """``b_<NAME>`` translations of the entry's macros and the AscendC helpers called like functions."""

    def _tiling_struct(self, node: Node, sname: str | None) -> Inst:
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
        return E(const_code(v, BOOL), BOOL, v)

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

    def _min_max(self, node: Node, args: list[Node], name: str, op: str) -> E:
        """``AscendC::Std::min/max(a, b)`` (utils/std/algorithm): ``(a < b) ? a : b`` in the usual arithmetic
        conversion of the two; a kernel's own ``min``/``max`` is called as such."""
        if name in self.tr.funcs or name in self.tr.func_specs:
            fn = node.child_by_field_name("function")
            fname, targs = self._callee(fn)
            return self.user_call(node, name, targs, args)
        if len(args) != 2:
            raise self.err(node, f"{name}(a, b) takes 2 arguments")
        a, b = self.expr(args[0]), self.expr(args[1])
        c = self.binop(op, a, b, node)
        t = arith(a.t, b.t) if a.t != b.t else a.t
        if c.const is not NC and a.const is not NC and b.const is not NC:
            v = convert_const(a.const if c.const else b.const, t)
            return E(const_code(v, t), t, v)
        return E(f"({self.convert(a, t, node)} if {c.code} else {self.convert(b, t, node)})", t)

    def b_min(self, node: Node, args: list[Node], statement: bool) -> E:
        return self._min_max(node, args, "min", "<")

    def b_max(self, node: Node, args: list[Node], statement: bool) -> E:
        return self._min_max(node, args, "max", ">")

    def b_GetTPipePtr(self, node: Node, args: list[Node], statement: bool) -> E:
        """``GetTPipePtr()``: the kernel's TPipe, for ``->FetchEventID(event)``."""
        return E("None", CType("ptr", target=CType("api", "TPipe")))

    def b_GetBlockIdx(self, node: Node, args: list[Node], statement: bool) -> E:
        if args:
            raise self.err(node, "GetBlockIdx() takes no arguments")
        return E("GetBlockIdx()", INT64)

    def b_GetBlockNum(self, node: Node, args: list[Node], statement: bool) -> E:
        if args:
            raise self.err(node, "GetBlockNum() takes no arguments")
        return E("GetBlockNum()", INT64)

"""C++ calls to Python calls: functions and methods of the kernel (instantiated on first use), the AscendC API with
its real overloads (arguments converted as C++ converts them), and the macros a kernel entry uses.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from . import api
from .ctypes import (
    BOOL,
    INT32,
    INT64,
    INT_TYPES,
    UINT64,
    VOID,
    CType,
)
from .errors import KernelCompileError
from .preprocess import Unit
from .syntax import unwrap
from .values import (
    METHOD_INTS,
    E,
    spell,
)

if TYPE_CHECKING:
    from .decls import Inst

__all__ = ['Calls']

#: The queue classes ``TPipe::InitBuffer(que, num, len)`` takes.
_QUEUES = ("TQue", "TQueBind")


class Calls:
    """Calls: the kernel's own functions and methods (templates deduced, bound statically), the AscendC API
    by its overloads, and the entry's macros (GET_TILING_DATA, TILING_KEY_IS, ASSERT ...) (a mixin of
    :class:`~.function.FunctionTranslator`)."""

    def x_call_expression(self, node: Node) -> E:
        e = self.call(node, statement=False)
        if e is None:
            raise self.err(node, "this call gives no value")
        if e.ref is not None and e.ref[0] == "outref":
            raise self.err(node, "a call that writes through reference parameters is supported as a statement of "
                           "its own", "call it on its own line, then use what it wrote")
        return e

    def call(self, node: Node, statement: bool) -> E | None:
        """A call expression: a method, a cast, an entry macro, a function of the kernel, an AscendC API, or a type
        used as a function (``T(x)``, ``K<float>()``) -- tried in that order, as the name resolves."""
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        arg_nodes = args_node.named_children if args_node is not None else []
        if fn.type == "field_expression":
            return self.method_call(node, fn, arg_nodes)
        if fn.type == "parenthesized_expression" and len(arg_nodes) == 1:     # (T)(x): a C cast, parsed as a call
            inner = self.expr(fn.named_children[0])
            if inner.is_type:
                return self.cast(self.expr(arg_nodes[0]), inner.t, node)
        fname_node, targs = self._callee(fn)
        name = fname_node.text.decode()
        if name in ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"):
            return self._cxx_cast(node, name, targs, arg_nodes)
        builtin = getattr(self, "b_" + name, None)
        if builtin is not None:
            return builtin(node, arg_nodes, statement)
        self._refuse_unavailable(fname_node, name)
        if fn.type == "template_function" and name in self.tr.funcs or self.lookup(name) is None:
            if (name in self.tr.funcs or name in self.tr.func_specs) and not (
                    self.inst and self.inst.method_owner(name)):
                return self.user_call(node, name, targs, arg_nodes)
            if self.inst is not None and self.inst.method_owner(name) is not None:
                return self.call_method(node, "this", self.inst, name, targs, arg_nodes)
            if name in api.FUNCTIONS or name in api.SYNC_FUNCTIONS:
                return self.api_call(node, name, targs, arg_nodes)
            return self._type_call(node, fn, fname_node, name, targs, arg_nodes)
        raise self.err(fname_node, f"'{name}' is not a function")

    def _callee(self, fn: Node) -> tuple[Node, tuple[Any, ...]]:
        """The called name's node (namespaces stripped) and its explicit template arguments."""
        targs: tuple[Any, ...] = ()
        fname_node = fn
        while True:
            if fname_node.type == "template_function":
                targs = self.tr.template_args(self.unit, fname_node.child_by_field_name("arguments"), self.bind,
                                              self.inst)
                fname_node = fname_node.child_by_field_name("name")
            if fname_node.type != "qualified_identifier":
                return fname_node, targs
            scope = fname_node.child_by_field_name("scope")
            if scope is not None and scope.text.decode() == "std":
                raise self.err(fn, f"the standard library function '{fn.text.decode()}' is not available on the "
                               "AI Core")
            fname_node = fname_node.child_by_field_name("name")

    def _cxx_cast(self, node: Node, name: str, targs: tuple[Any, ...], arg_nodes: list[Node]) -> E:
        if name == "dynamic_cast":
            raise self.err(node, "dynamic_cast is not supported (no RTTI on the AI Core)")
        if len(targs) != 1 or not isinstance(targs[0], CType) or len(arg_nodes) != 1:
            raise self.err(node, f"{name}<T>(value) takes one type and one value")
        e = self.expr(arg_nodes[0])
        if name == "reinterpret_cast":
            if targs[0].kind == "ptr" and e.t.kind == "ptr":
                return E(e.code, targs[0])
            raise self.err(node, "reinterpret_cast is only supported between GM pointers",
                           "for UB data use LocalTensor::ReinterpretCast<U>()")
        return self.cast(e, targs[0], node)

    def _refuse_unavailable(self, fname_node: Node, name: str) -> None:
        """What an AI Core kernel cannot call, or the simulator does not model, said by name."""
        if name in ("malloc", "calloc", "free", "realloc"):
            raise self.err(fname_node, f"'{name}' is not available on the AI Core: there is no heap",
                           "UB memory comes from TPipe::InitBuffer, GM from the kernel's arguments")
        if name in ("printf", "PRINTF", "DumpTensor", "ascendc_assert", "trap"):
            raise self.err(fname_node, f"'{name}' is not modelled by the simulator",
                           "look at values with the trace in snapshot mode (record=True, snapshot=True) instead")
        mine = name in self.tr.funcs or name in self.tr.func_specs or self.lookup(name) is not None or (
            self.inst is not None and self.inst.method_owner(name) is not None)
        if name in api.KNOWN_UNMODELLED and not mine:
            raise self.err(fname_node, f"the AscendC API '{name}' is not modelled by the simulator",
                           "the simulator models: " + ", ".join(sorted(api.FUNCTIONS)))

    def _type_call(self, node: Node, fn: Node, fname_node: Node, name: str, targs: tuple[Any, ...],
                   arg_nodes: list[Node]) -> E:
        """A type used as a function: ``float(x)`` is a cast, ``K<float>()`` / ``DataCopyParams(1, n, 0, 0)`` builds."""
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

    def _param_types(self, fnode: Node, bind: dict[str, Any], inst: Inst | None, unit: Unit) -> list[CType]:
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

    def _deduce(self, tparams: list[Any], fnode: Node, unit: Unit, inst: Inst | None, targs: tuple[Any, ...],
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
                raise self.err(node, f"no specialisation of '{name}' for <{', '.join(spell(a) for a in targs)}>",
                               "define the template, or a specialisation for these arguments")
            pyname, ret = self.tr.function(spec, (), node, self.unit)
            args = self.args_for(arg_nodes, self._param_types(spec.node, {}, None, spec.unit), node, f"'{name}'")
            return E(f"{pyname}({', '.join(args)})", ret)
        cands = [f for f in self.tr.funcs[name] if self._arity(f.node) == len(arg_nodes)]
        if not cands:
            raise self.err(node, f"'{name}' takes {self._arity(self.tr.funcs[name][0].node)} arguments, "
                           f"got {len(arg_nodes)}")
        first: KernelCompileError | None = None
        for f in cands:                      # overloads of one arity: the first whose parameters take the arguments
            try:
                ftargs = self._deduce(f.tparams, f.node, f.unit, None, targs, arg_nodes, node, {})
                bind = {n: a for (_k, n, _t), a in zip(f.tparams, ftargs, strict=True)}
                args = self.args_for(arg_nodes, self._param_types(f.node, bind, None, f.unit), node, f"'{name}'")
            except KernelCompileError as exc:
                first = first or exc
                continue
            pyname, ret = self.tr.function(f, ftargs, node, self.unit)
            return self._with_outrefs(E(f"{pyname}({', '.join(args)})", ret), pyname, arg_nodes)
        raise first

    def _arity(self, fnode: Node) -> int:
        decl = fnode.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        ps = [p for p in decl.child_by_field_name("parameters").named_children
              if not (p.type == "parameter_declaration" and p.text.decode().strip() == "void")]
        return len(ps)

    def call_method(self, node: Node, obj: str, inst: Inst, name: str, targs: tuple[Any, ...],
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
        return self._with_outrefs(E(f"{inst.pyname}.{pyname}({', '.join([obj, *args])})", ret),
                                  f"{inst.pyname}__{pyname}", arg_nodes)

    def _with_outrefs(self, call: E, pyname: str, arg_nodes: list[Node]) -> E:
        """A call of a function that writes scalar reference parameters: marked with the arguments to store its
        outputs into (a call statement does, :meth:`Statements._store_outrefs`)."""
        idx = self.tr.out_refs.get(pyname)
        return call if not idx else E(call.code, call.t, ref=("outref", [arg_nodes[i] for i in idx]))

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
        if btype.name == "GlobalTensor" and mname == "SetL2CacheHint":
            return self._l2_cache_hint(node, arg_nodes)
        return self.api_method(node, fn, base, btype, mname, targs, arg_nodes)

    def _l2_cache_hint(self, node: Node, arg_nodes: list[Node]) -> E:
        """``gm.SetL2CacheHint(CacheMode::X)``: whether GM traffic goes through the L2 cache. The simulator has no L2
        (GM costs one model, ascendc_facts §2.3), so it changes nothing here; the argument is still checked."""
        if len(arg_nodes) != 1 or self.expr(arg_nodes[0]).t.name != "CacheMode":
            raise self.err(node, "SetL2CacheHint takes one CacheMode: gm.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE)")
        return E("", VOID)

    def api_method(self, node: Node, fn: Node, base: E, btype: CType, mname: str, targs: tuple[Any, ...],
                   arg_nodes: list[Node]) -> E:
        """``obj.Method(args)`` on an AscendC class (TPipe, TQue, GlobalTensor ...): the overload, its arguments
        converted, the result's type."""
        m, vals = self._method_overload(node, fn, btype, mname, arg_nodes)
        elem = btype.args[0] if btype.args and isinstance(btype.args[0], CType) else None
        out = [self._method_arg(kind, v, a, btype, mname, elem)
               for kind, v, a in zip(m.params, vals, arg_nodes, strict=True)]
        if btype.name == "TQueBind" and mname in ("EnQue", "DeQue"):
            out += self._bind_stage(node, mname, targs)
            targs = tuple(a for a in targs if isinstance(a, CType))       # <src, dst, T>: T is the element type
        rtype = self._method_returns(node, btype, mname, m.returns, targs, elem, out)
        py = m.python or mname
        if btype.name == "TPipe" and mname == "FetchEventID":          # the pipe's event IDs live on the core
            return E(f"FetchEventID({', '.join(out)})", INT32)
        return E(f"{base.code}.{py}({', '.join(out)})", rtype)

    def _method_overload(self, node: Node, fn: Node, btype: CType, mname: str,
                         arg_nodes: list[Node]) -> tuple[Any, list[E | None]]:
        """The method's overload by its argument count (InitBuffer also by its first argument) and the arguments'
        expressions (None for a braced list); a method the simulator lacks is an error listing those it has."""
        methods = api.API_CLASSES.get(btype.name, {})
        if mname not in methods:
            raise self.err(fn.child_by_field_name("field"), f"{btype.name} has no method '{mname}' in the simulator",
                           f"{btype.name} offers: {', '.join(sorted(methods))}")
        cands = [m for m in methods[mname] if len(m.params) == len(arg_nodes)]
        if not cands:
            raise self.err(node, f"{btype.name}::{mname} takes "
                           f"{' or '.join(str(len(m.params)) for m in methods[mname])} arguments, got {len(arg_nodes)}")
        vals = [None if a.type == "initializer_list" else self.expr(a) for a in arg_nodes]
        m = self._init_buffer_overload(node, cands, vals) if btype.name == "TPipe" and mname == "InitBuffer" \
            else cands[0]
        return m, vals

    def _method_arg(self, kind: str, v: Any, a: Node, btype: CType, mname: str, elem: CType | None) -> str:
        """One argument of an API method as Python, checked against its parameter kind (an integer kind, ``S`` the
        element type, ``Q``/``B`` a queue/TBuf, ``L`` a LocalTensor, ``PTR`` a GM pointer of the element type)."""
        if kind in METHOD_INTS:
            return self.convert(v, METHOD_INTS[kind], a)
        if kind == "S":
            return self.convert(v, elem, a)
        if kind in ("Q", "B"):
            want = "TQue" if kind == "Q" else "TBuf"
            if v.t.kind != "api" or v.t.name not in (_QUEUES if kind == "Q" else ("TBuf",)):
                raise self.err(a, f"InitBuffer expects a {want} here, got {v.t}")
        elif kind == "L":
            if v.t.kind != "api" or v.t.name != "LocalTensor":
                raise self.err(a, f"{btype.name}::{mname} takes a LocalTensor, got {v.t}")
        elif kind == "PTR":
            if v.t.kind != "ptr":
                raise self.err(a, f"SetGlobalBuffer takes a GM pointer ((__gm__ T*)addr), got {v.t}")
            if elem is not None and v.t.target is not None and v.t.target != elem and \
                    v.t.target.name != "uint8_t":
                raise self.err(a, f"SetGlobalBuffer of a GlobalTensor<{elem}> takes a {elem}*, got {v.t}")
        return v.code

    def _method_returns(self, node: Node, btype: CType, mname: str, ret: str, targs: tuple[Any, ...],
                        elem: CType | None, out: list[str]) -> CType:
        """The C++ type a method returns; a ``LocalTensor<U>`` one (AllocTensor<T>, DeQue<T>, ReinterpretCast<U>)
        needs U as its template argument, passed first to the Python method (inserted into ``out``)."""
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
            return CType("api", "LocalTensor", args=(u,))
        return {"T": elem, "bool": BOOL, "uint64": UINT64, "uint32": INT_TYPES["uint32_t"]}.get(ret, VOID)

    def _bind_stage(self, node: Node, mname: str, targs: tuple[Any, ...]) -> list[str]:
        """``EnQue<src, dst, T>`` / ``DeQue<src, dst, T>`` of a TQueBind: the hand-over, as keywords."""
        pos = [a[1] for a in targs if isinstance(a, tuple) and a and a[0] == "enum"]
        if len(pos) != 2:
            raise self.err(node, f"TQueBind::{mname} names its hand-over: {mname}<QuePosition::GM, QuePosition::VECIN,"
                           " T> or <QuePosition::VECOUT, QuePosition::GM, T>")
        return [f"src={pos[0]!r}", f"dst={pos[1]!r}"]

    def _init_buffer_overload(self, node: Node, cands: list[Any], vals: list[E | None]) -> Any:
        """``InitBuffer(que, num, len)`` for a TQue/TQueBind, ``InitBuffer(buf, len)`` for a TBuf."""
        kinds = "Q" if vals[0] is not None and vals[0].t.kind == "api" and vals[0].t.name in _QUEUES else "B"
        m = next((c for c in cands if c.params[0] == kinds), None)
        if m is None:
            form = "TBuf: InitBuffer(buf, bytes)" if len(vals) == 2 else "TQue: InitBuffer(que, num, bytes)"
            raise self.err(node, f"InitBuffer with {len(vals)} arguments takes a {form}")
        return m

    def sync_call(self, node: Node, name: str, targs: tuple[Any, ...], arg_nodes: list[Node]) -> E:
        """``SetFlag<HardEvent::V_MTE3>(id)`` / ``WaitFlag<...>(id)``: the event is the template argument."""
        members = api.ENUMS["HardEvent"][1]
        if len(targs) != 1 or not isinstance(targs[0], int) or len(arg_nodes) > 1:
            raise self.err(node, f"{name}<HardEvent::SRC_DST>(eventId) takes one HardEvent and one event ID",
                           f"{name}<HardEvent::V_MTE3>(eventId)")
        event_id = self.convert(self.expr(arg_nodes[0]), INT32, arg_nodes[0]) if arg_nodes else "0"
        return E(f"{name}(HardEvent.{members[targs[0]]}, {event_id})", VOID)

    def api_call(self, node: Node, name: str, targs: tuple[Any, ...], arg_nodes: list[Node]) -> E:
        """A free AscendC function (``Add(dst, a, b, n)``, ``DataCopy(...)``, ``PipeBarrier<PIPE_V>()`` ...): the
        overload the arguments' types pick, its arguments converted to the element type, the Python call."""
        if name == "PipeBarrier":
            return self._pipe_barrier(node, targs, arg_nodes)
        if name in api.SYNC_FUNCTIONS:
            return self.sync_call(node, name, targs, arg_nodes)
        vals = [None if a.type == "initializer_list" else self.expr(a) for a in arg_nodes]
        chosen = self._choose_overload(node, name, vals)
        elem = self._call_element_type(name, chosen, vals, arg_nodes)
        out = []
        for k, v, a in zip(chosen.params, vals, arg_nodes, strict=True):
            code = self._call_arg(k, v, a, vals, elem)
            if code is not None:
                out.append(code)
        rtype = INT64 if chosen.returns == "int64" else VOID
        pyname = api.PYTHON_NAME.get(name, name)
        out += self._mask_template_args(node, name, chosen, targs)
        if chosen.note == "mask":
            pyname = f"_mask_{name}"
        return E(f"{pyname}({', '.join(out)})", rtype)

    def _pipe_barrier(self, node: Node, targs: tuple[Any, ...], arg_nodes: list[Node]) -> E:
        """``PipeBarrier<PIPE_X>()`` (PIPE_ALL when no pipe is named)."""
        if arg_nodes:
            raise self.err(node, "PipeBarrier takes no arguments: PipeBarrier<PIPE_V>()")
        pipe = targs[0] if targs else ("enum", "PIPE_ALL")
        if not (isinstance(pipe, tuple) and pipe[1] in api.PIPES):
            raise self.err(node, f"PipeBarrier<{spell(pipe)}> is not modelled",
                           f"the simulator models {', '.join(api.PIPES)}")
        return E(f"PipeBarrier({pipe[1]!r})", VOID)

    def _choose_overload(self, node: Node, name: str, vals: list[E | None]) -> api.Overload:
        """The first overload whose parameter kinds all accept the arguments; none is an error listing them."""
        overloads = api.FUNCTIONS[name]
        for ov in overloads:
            if len(ov.params) == len(vals) and all(self._kind_ok(k, v) for k, v in zip(ov.params, vals, strict=True)):
                return ov
        got = ", ".join(("{...}" if v is None else str(v.t)) for v in vals)
        raise self.err(node, f"no overload of {name} takes ({got})",
                       "the simulator has: " + "; ".join(ov.spelled(name) for ov in overloads))

    def _call_element_type(self, name: str, chosen: api.Overload, vals: list[E | None],
                           arg_nodes: list[Node]) -> CType | None:
        """The call's element type T: that of the tensor ``api.T_FROM`` names (else the first tensor); for an
        instruction of one T (``api.SAME_T``) a tensor of another type is an error."""
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
        return elem

    def _call_arg(self, k: str, v: Any, a: Node, vals: list[E | None], elem: CType | None) -> str | None:
        """One argument of an API function as Python by its parameter kind: a scalar converted to T, integers to
        their C type, a braced list built as the parameter struct it stands for (None: a kind that passes nothing)."""
        if k in ("L", "G", "M"):
            return v.code
        if k == "S" or (k == "S|L" and v.t.kind != "api"):
            return v.code if v.t == elem else self.convert(v, elem, a)
        if k == "S|L" or k.startswith("E:"):
            return v.code
        if k == "I":
            return self.convert(v, INT32, a)
        if k in ("MASK", "U64"):
            return self.convert(v, UINT64, a)
        if k == "R":
            return self.convert(v, INT_TYPES["uint8_t"], a)
        if k in ("BRP", "URP", "CRP"):
            return v.code if v is not None else self.construct(
                CType("pstruct", api.PARAM_STRUCTS[k][0]), [self.expr(x) for x in a.named_children], a)
        if k in ("P", "PAD"):
            if v is not None:
                return v.code
            # DataCopyParams goes with DataCopyPadParams, DataCopyExtParams with DataCopyPadExtParams<T>
            ext = any(x is not None and x.t.name == "DataCopyExtParams" for x in vals)
            sname = ("DataCopyExtParams" if ext else "DataCopyParams") if k == "P" else (
                "DataCopyPadExtParams" if ext else "DataCopyPadParams")
            ctype = CType("pstruct", sname, args=(elem,) if elem is not None else ())
            return self.construct(ctype, [self.expr(x) for x in a.named_children], a)
        return None

    def _mask_template_args(self, node: Node, name: str, chosen: api.Overload, targs: tuple[Any, ...]) -> list[str]:
        """The template arguments the mask register needs, as Python keywords: ``isSetMask`` of a mask/repeat form
        or a reduction (``Add<T, false>``), ``T`` and ``mode`` of ``SetVectorMask<T, MaskMode::COUNTER>``."""
        if name == "SetVectorMask":
            if not targs or not isinstance(targs[0], CType):
                raise self.err(node, "SetVectorMask needs its element type: SetVectorMask<float>(len)")
            mode = targs[1] if len(targs) > 1 else 0
            return [f"dtype={self.dtype(targs[0], node)}", f"mode=MaskMode({int(mode)})"]
        at = 2 if name == "Cast" else 1                    # Cast<U, T, isSetMask>
        if len(targs) > at and (chosen.note == "mask" or "Reduce" in name) and isinstance(targs[at], (bool, int)):
            return [f"is_set_mask={bool(targs[at])}"]
        return []

    def _kind_ok(self, kind: str, v: E | None) -> bool:
        if v is None:
            return kind in ("P", "PAD", "BRP", "URP", "CRP")
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
        if kind in ("P", "PAD", "BRP", "URP", "CRP"):
            return t.kind == "pstruct" and t.name in api.PARAM_STRUCTS[kind]
        if kind in ("MASK", "R", "U64"):
            return t.kind in ("int", "bool")
        return False

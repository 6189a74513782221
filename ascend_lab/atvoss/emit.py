"""The tile body's source: one emitter per kind of step and per compute instruction.

:func:`generate` writes the module that defines ``BroadcastSch(ctx, In, Out, que, buf, value)`` for one plan
(:mod:`.plan`). Called once per core with that core's GM tensors and pool -- ``que[k]`` the ping/pong queues of
step ``k``, ``buf[k]`` its TBuf or ping/pong TBufs, ``value[k]`` a Duplicate's typed value -- it returns
``tile(i, length, out_offset[, in_copy[, expand]])``, the body of ``BroadcastSch::Process`` for one tile.

The module has three parts, which the emitters fill as they walk the steps in order: ``init`` (Init: bind the
core's buffers; a TBuf's tensor is got once here), ``head`` (the top of ``tile``: ping or pong, the tile index,
the DataCopyParams of this length) and ``body`` (one commented block per node of ``funlist``).

To teach the template a new compute node, add its emitter to :data:`INSTRUCTIONS` (the AscendC call, in one or a
few lines of the body) and the call to :data:`CALLS`.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ascendc import CMPMODE, SELMODE, Cast, Compare, DataCopyPad, DataCopyParams, Duplicate, Mul, RoundMode, Select
from ..ascendc.generated import targets
from ..ascendc.sanitizer import REPEAT_BYTES
from .dag import Dag, Node
from .plan import Buffer, Cache, Compute, CopyBrc, CopyIn, CopyOut, Key, Queue, ScalarIn, Step
from .primitives import gm_value, widen

__all__ = ["CALLS", "EMITTERS", "INSTRUCTIONS", "Listing", "Names", "generate"]

#: The arguments each family's tile body takes after ``(i, length, out_offset)``, and the schMode values it runs.
_ARGS = {"one-dim": "", "nddma": ", in_copy", "ub-broadcast": ", in_copy, expand"}
_MODES = {"one-dim": "201/202", "nddma": "1/2", "ub-broadcast": "101-104/109"}
_COL = 56                                               # where the comments start


def text(s: str) -> str:
    """``s`` on one line (a node or DAG name is the DAG author's text: it goes into comments only)."""
    return " ".join(str(s).split())


def line(code: str, comment: str = "") -> str:
    """A line of code with its comment at column 56."""
    return f"{code.ljust(_COL - 1)} # {text(comment)}" if comment else code


#: The calls the generated code makes, by the name it calls them (an instruction's emitter writes that name).
CALLS: dict[str, Any] = {"DataCopyPad": DataCopyPad, "DataCopyParams": DataCopyParams, "Duplicate": Duplicate,
                         "Compare": Compare, "Select": Select, "Cast": Cast, "Mul": Mul, "_widen": widen,
                         "gm_value": gm_value}


class Names(dict[str, Any]):
    """The names the generated code reads: the calls (:data:`CALLS`), then dtypes, modes and nodes as named."""

    def __init__(self) -> None:
        super().__init__(CALLS)

    def bind(self, name: str, value: Any) -> str:
        """``name`` bound to ``value`` (a dtype, an enum member, a node); another name if taken."""
        base = name if name.isidentifier() and not keyword.iskeyword(name) else "T"
        name, k = base, 0
        while name in self and not (self[name] is value or _same_dtype(self[name], value)):
            k += 1
            name = f"{base}_{k}"
        self[name] = value
        return name

    def dtype(self, node: Node) -> str:
        return self.bind(node.dtype.name, node.dtype)


def _same_dtype(a: Any, b: Any) -> bool:
    return isinstance(a, np.dtype) and isinstance(b, np.dtype) and a == b


@dataclass
class Listing:
    """The module being written, and what the head needs to know of the steps."""
    family: str
    funlist: list[Node]
    where: dict[Key, str]                               # pool key -> the buffer's name ("slot3 temp")
    caches: dict[int, str]                              # id(CopyInBrc) -> its broadcast slot's name
    names: Names = field(default_factory=Names)
    init: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    queues: list[int] = field(default_factory=list)     # steps with ping/pong queues
    scalars: list[int] = field(default_factory=list)    # scalar-input steps (ping/pong TBufs)
    sizes: set[int] = field(default_factory=set)        # element sizes the DataCopyPad params are made for

    def queue(self, k: int, node: Node) -> None:
        """Step ``k`` has ping/pong queues: Init binds them."""
        self.queues.append(k)
        nid = id(node)
        self.init.append(line(f"    q{k}_ping, q{k}_pong = que[{k}]", f"{self.where[Key(nid)]}, "
                                                                       f"{self.where[Key(nid, 1)]}"))


# --- one emitter per kind of step -----------------------------------------------------------------------------
def _copy_in(out: Listing, s: CopyIn) -> None:
    out.queue(s.step, s.node)
    k, dt = s.step, out.names.dtype(s.node)
    out.body.append(f"        x{k} = q{k}.AllocTensor({dt})")
    if out.family == "one-dim":
        out.sizes.add(s.node.dtype.itemsize)
        out.body.append(f"        DataCopyPad(x{k}, in{s.input}[out_offset], p{s.node.dtype.itemsize})")
    else:
        out.body.append(f"        in_copy({out.names.bind(f'n{k}', s.node)}, x{k}, in{s.input})")
    out.body.append(f"        q{k}.EnQue(x{k})")


def _copy_brc(out: Listing, s: CopyBrc) -> None:
    out.queue(s.step, s.node)
    k, dt = s.step, out.names.dtype(s.node)
    out.init.append(line(f"    x{k} = buf[{k}].Get({dt})", f"{out.caches[id(s.node)]}: kept across tiles"))
    n = out.names.bind(f"n{k}", s.node)
    out.body += [f"        brc = expand({n})",
                 line("        if brc is not None:", f"else x{k} still holds this tile"),
                 f"            t = q{k}.AllocTensor({dt})",
                 f"            in_copy({n}, t, in{s.input})",
                 f"            q{k}.EnQue(t)",
                 line(f"            t = q{k}.DeQue({dt})", "V waits for MTE2"),
                 f"            brc(x{k}, t)",
                 line(f"            q{k}.FreeTensor(t)", "the raw slot is free for the tile after next")]


def _scalar_in(out: Listing, s: ScalarIn) -> None:
    k, dt, nid = s.step, out.names.dtype(s.node), id(s.node)
    out.scalars.append(k)
    out.init += [line(f"    x{k}_ping = buf[{k}][0].Get({dt})", out.where[Key(nid)]),
                 line(f"    x{k}_pong = buf[{k}][1].Get({dt})", out.where[Key(nid, 1)]),
                 line(f"    s{k} = None", f"In{s.input}'s one element, read on tile 0")]
    out.body += [line("        if i < 2:", "a scalar input: its slot keeps the value for later tiles"),
                 f"            if s{k} is None:",
                 line(f"                s{k} = gm_value(in{s.input}, i)", "GlobalTensor::GetValue(0)"),
                 f"            Duplicate(x{k}, s{k}, length)"]


def _copy_out(out: Listing, s: CopyOut) -> None:
    j, source = s.source, out.funlist[s.source]
    out.sizes.add(source.dtype.itemsize)
    out.body += [f"        t = q{j}.DeQue({out.names.dtype(source)})",
                 f"        DataCopyPad(out{s.output}[out_offset], t, p{source.dtype.itemsize})",
                 f"        q{j}.FreeTensor(t)"]


def _compute(out: Listing, s: Compute) -> None:
    """The instruction between its bookkeeping: DeQue the copy-ins read first, take the destination (a queue's
    AllocTensor, or the temp TBuf's tensor from Init), EnQue it for the CopyOut, free the copy-ins read last."""
    k, node = s.step, s.node
    emit = INSTRUCTIONS.get(node.op)
    if emit is None:
        raise NotImplementedError(f"the template has no kernel code for node {node.op}")
    if s.queued:
        out.queue(k, node)
    out.body += [line(f"        x{j} = q{j}.DeQue({out.names.dtype(out.funlist[j])})", "V waits for MTE2")
                 for j in s.deques]
    if s.queued:
        out.body.append(f"        x{k} = q{k}.AllocTensor({out.names.dtype(node)})")
    else:
        out.init.append(line(f"    x{k} = buf[{k}].Get({out.names.dtype(node)})", out.where[Key(id(node))]))
    emit(out, k, node, [f"x{j}" for j in s.inputs])
    if s.queued:
        out.body.append(f"        q{k}.EnQue(x{k})")
    out.body += [line(f"        q{j}.FreeTensor(x{j})", f"step {j}'s last reader") for j in s.frees]


# --- one emitter per compute instruction: (listing, step, node, input names) ---------------------------------
def _duplicate(out: Listing, k: int, node: Node, x: list[str]) -> None:
    out.init.append(line(f"    value{k} = value[{k}]", f"{node.inputs[0]!r} as {node.dtype.name}"))
    out.body.append(f"        Duplicate(x{k}, value{k}, length)")


def _compare(out: Listing, k: int, node: Node, x: list[str]) -> None:
    """Over whole 256-byte repeats (see :mod:`.schedule`): a short tile compares a little past its end."""
    mode = CMPMODE(node.attrs["mode"])
    name = out.names.bind(f"CMPMODE_{mode.name}", mode)
    per = REPEAT_BYTES // node.inputs[0].dtype.itemsize
    out.body += [line(f"        w = -(-length // {per}) * {per}", "whole 256-byte repeats (module doc)"),
                 "        if w == length:",
                 f"            Compare(x{k}, {x[0]}, {x[1]}, {name}, length)",
                 "        else:",
                 f"            Compare(x{k}, _widen({x[0]}, w), _widen({x[1]}, w), {name}, w)"]


def _select(out: Listing, k: int, node: Node, x: list[str]) -> None:
    mode = SELMODE(node.attrs["mode"])
    out.body.append(f"        Select(x{k}, {x[0]}, {x[1]}, {x[2]}, {out.names.bind(mode.name, mode)}, length)")


def _cast(out: Listing, k: int, node: Node, x: list[str]) -> None:
    mode = RoundMode(node.attrs["mode"])
    out.body.append(f"        Cast(x{k}, {x[0]}, {out.names.bind(mode.name, mode)}, length)")


def _mul(out: Listing, k: int, node: Node, x: list[str]) -> None:
    out.body.append(f"        Mul(x{k}, {x[0]}, {x[1]}, length)")


#: The compute nodes the template runs, by ``Node.op``.
INSTRUCTIONS: dict[str, Callable[[Listing, int, Node, list[str]], None]] = {
    "Duplicate": _duplicate, "Compare": _compare, "Select": _select, "Cast": _cast, "Mul": _mul}

#: One emitter per kind of step (:mod:`.plan`).
EMITTERS: dict[type, Callable[[Listing, Any], None]] = {
    CopyIn: _copy_in, ScalarIn: _scalar_in, CopyBrc: _copy_brc, Compute: _compute, CopyOut: _copy_out}


# --- the module -------------------------------------------------------------------------------------------------
def generate(dag: Dag, family: str, layout: list[Queue | Cache | Buffer], steps: list[Step]) -> tuple[str, Names]:
    """(text, names) of the module defining ``BroadcastSch`` for ``dag`` on a schedule ``family``."""
    out = Listing(family, dag.funlist, _where(layout), {b.node: b.name for b in layout if isinstance(b, Cache)})
    out.init += [f"# BroadcastSch<schMode {_MODES[family]}, {text(dag.name)}>, instantiated "
                 "(ascend_lab.atvoss.schedule.instantiation)",
                 "def BroadcastSch(ctx, In, Out, que, buf, value):",
                 '    """Init: bind this core\'s GM tensors and buffer pool (que[k]: step k\'s ping/pong queues,',
                 "    buf[k]: its TBuf(s), value[k]: a Duplicate's value); returns Process's body for one tile.",
                 '    TBuf::Get records nothing and takes no time, so each TBuf tensor is got once, here."""',
                 line(f"    {targets([f'in{k}' for k in range(dag.input_size)])} = In", "GM inputs (GlobalTensor)"),
                 line(f"    {targets([f'out{k}' for k in range(dag.output_size)])} = Out", "GM outputs")]
    for s in steps:
        node = s.node
        out.body.append(f"        # {s.step}: {text(node.label())}" + (f" ({text(node.name)})" if node.name else ""))
        EMITTERS[type(s)](out, s)
    out.init.append(line("    params = {}", "DataCopyParams by tile length"))
    return "\n".join([*out.init, "", *_head(out), *out.body, "", "    return tile", ""]), out.names


def _where(layout: list[Queue | Cache | Buffer]) -> dict[Key, str]:
    where: dict[Key, str] = {}
    for b in layout:
        if isinstance(b, Queue):
            where[b.key] = b.name
        elif isinstance(b, Buffer):
            where.update(dict.fromkeys(b.keys, b.name))
    return where


def _head(out: Listing) -> list[str]:
    """The top of ``tile``: the ping or pong slots, the tile index every event carries, the copy parameters."""
    head = [f"    def tile(i, length, out_offset{_ARGS[out.family]}):",
            '        """Tile i of this core: ``length`` output elements at ``out_offset``."""']
    if out.scalars:
        head.append(f"        nonlocal {', '.join(f's{k}' for k in out.scalars)}")
    picks = [f"q{k}" for k in out.queues] + [f"x{k}" for k in out.scalars]
    head += [line("        if i & 1:", "odd tiles: the pong slots"),
             f"            {targets(picks)} = {', '.join(p + '_pong' for p in picks)}",
             line("        else:", "even tiles: the ping slots"),
             f"            {targets(picks)} = {', '.join(p + '_ping' for p in picks)}",
             line("        ctx.current_tile = i", "every event of this tile carries tile i: the vector unit's,")]
    head += [line(f"        q{k}.allocs = q{k}.deques = i", "the next AllocTensor's and DeQue's") for k in out.queues]
    if out.sizes:
        ps = [f"p{b}" for b in sorted(out.sizes)]
        made = ", ".join(f"DataCopyParams(1, length * {b}, 0, 0)" for b in sorted(out.sizes))
        p = ps[0] if len(ps) == 1 else "p"
        head += [line(f"        {p} = params.get(length)", "{blockCount, blockLen (bytes), srcStride, dstStride}"),
                 f"        if {p} is None:",
                 f"            {p} = params[length] = {made if len(ps) == 1 else f'({made})'}"]
        if len(ps) > 1:
            head.append(f"        {', '.join(ps)} = p")
    return head

"""The template's kernel side: ``BroadcastSch<schMode, Dag>`` walking a DAG on the simulated cores (§3.5).

Every schedule cuts the output into tiles, and for each tile walks ``dag.funlist`` in order:

* **CopyInBrc** -- ``DataCopyPad`` of the tile's ``len * sizeof(T)`` bytes GM -> UB into the node's ping
  (even tiles) or pong (odd tiles) slot; an input of one element (``scalarFlag``) is instead read once
  and ``Duplicate``-d into both slots on the first two tiles; a broadcast input of the general schedule
  is one multi-dimensional "NDDMA" copy whose broadcast axes have stride 0;
* **compute nodes** (Cast, Duplicate, Compare, Select, Mul) -- one AscendC instruction each on exactly
  ``len`` elements, into the node's temp slot (shared by all tiles) or, for the node a CopyOut reads, its
  ping/pong MTE3 slot;
* **CopyOut** -- ``DataCopyPad`` UB -> GM.

The buffer pool is laid out as the real one, one tile-sized slot per live buffer in ``dag.slots`` order
(slot k at ``k * tile * MaxDtypeBytes``). The real schedules keep that pool in one TBuf and order the
pipes with hardware buffer mutexes (``Mutex::Lock/Unlock<pipe>(slot)``, OB ``util/sync.h``); here each
ping and each pong slot is a one-block ``TQue`` -- its AllocTensor/EnQue/DeQue/FreeTensor flags are the
same per-slot waits -- and each temp slot a ``TBuf``. Double buffering therefore comes only from the
ping/pong copy slots, as on the device; compute is serial on PIPE_V.

Schedules: 201 (``broadcast_sch_one_dim.h``), 202 (``broadcast_sch_one_dim_advance.h``: the split is
recomputed from the 16-byte struct), NDDMA 1/2 (``broadcast_sch_nddma.h``) and UB-broadcast 101-104/109
(``broadcast_sch_ub_broadcast.h``, :func:`_ub_broadcast`): each CopyInBrc copies the input's *un-broadcast*
window (the split-axis slice of its own contiguous data) into its ping/pong MTE2 slot and expands it with
AscendC's ``Broadcast<T, R>`` (R = the running rank, -1 for 109) into a persistent slot of its own, which the
rest of the DAG reads like any tile; an input broadcast along the split axis is copied and expanded only when
the outer index moves (``CopyInAndVecBrc`` skips it otherwise, the persistent slot still holds it). The pool is
``GetBufferNum<false, true>`` slots (``Dag.ub_broadcast_slots``).

``BroadcastSch<schMode, Dag>`` is a C++ template, which the compiler turns into straight-line code for each DAG.
Here too the walk of ``funlist`` is written out once per DAG and schedule family -- :func:`instantiation` returns
that source, the template's *instantiation*: one AscendC call per line, compiled once and bound to each core's
pool -- and it is what runs for every tile. :class:`_Walker` interprets the same plan step by step; it is kept as
the reference the tests hold the instantiation to (same output bits, trace events, cycles and findings).

Two places where the simulated AscendC differs from what this template needs on Ascend950, worked
around here only:

* ``Compare`` simulates whole 256-byte repeats (the documented A2/A3 rule, ascendc_facts §1.5); the
  DAV_3510 count form masks the tail with a predicate instead (kernel_flavours.md §6, open question 7).
  A Compare node therefore runs over ``len`` rounded up to a whole repeat -- inside the pool, whose
  slots are contiguous -- and the extra mask bits are never read (Select and the copy-out use ``len``).
* There is no multi-dimensional (NDDMA) ``DataCopy`` and no ``GlobalTensor::GetValue``: the broadcast
  copy and the scalar read are modelled here (:func:`nddma_copy`, :func:`gm_value`) with the simulator's
  own GM checks, MTE2 timing and trace events.
"""

from __future__ import annotations

import contextlib
import keyword
import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Broadcast,
    Cast,
    Compare,
    DataCopyPad,
    DataCopyParams,
    Duplicate,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    LocalTensor,
    Mul,
    RoundMode,
    Select,
    TBuf,
    TPipe,
    TQue,
    generated,
    sanitizer,
)
from ..ascendc.core import current
from ..ascendc.generated import targets
from ..ascendc.numerics import scalar as typed_scalar
from ..ascendc.sanitizer import REPEAT_BYTES
from ..opdev.tiling_data import GET_TILING_DATA
from .dag import Const, Dag, Node, Var
from .tiling import advance_split

__all__ = ["broadcast_sch", "gm_value", "instantiation", "interpreted", "nddma_copy"]



def gm_value(gm: GlobalTensor, tile: int | None = None) -> Any:
    """``gm.GetValue(0)``: a scalar read of GM by the scalar unit (bounds-checked like a copy)."""
    return gm.gm_slice(current(), 1, "GlobalTensor::GetValue", tile, write=False)[0]


def nddma_copy(dst: LocalTensor, gm: GlobalTensor, base: int, dims: list[int], strides: list[int]) -> int:
    """One NDDMA ``DataCopy`` GM -> UB: ``dims`` elements (row-major) read at element ``base + sum(i*stride)``
    of ``gm``; a stride of 0 repeats the same elements (a broadcast axis). Lands contiguously at ``dst``.

    Timed on MTE2 as a copy of the distinct GM bytes it reads (the NDDMA cache serves the repeats) and
    recorded as a ``DataCopy`` event. Returns the element count written."""
    ctx = dst.ctx
    item = gm.dtype.itemsize
    count = math.prod(dims)
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides, strict=True))
    src = gm[base].gm_slice(ctx, span, "DataCopy(NDDMA)", dst.tile, write=False)
    view = np.lib.stride_tricks.as_strided(src, shape=tuple(dims), strides=tuple(s * item for s in strides),
                                           writeable=False)
    if count > dst.size or not dst.alive:
        raise ValueError(f"NDDMA copy of {count} elements does not fit {dst!r}")
    # through the sanitizer's UB write (MTE2): it records the bytes as written and checks the pipes' hand-off
    sanitizer.ub_span(dst, count, "DataCopy(NDDMA)", True)[...] = view.reshape(-1)
    distinct = math.prod(d for d, s in zip(dims, strides, strict=True) if s != 0) * item
    start, end = ctx.issue("MTE2", ctx.cost.copy_in(distinct))
    ctx.summary.bytes_in += distinct
    if ctx.record:
        ctx.event("MTE2", "DataCopy", dst.tile, start, end, nbytes=distinct, count=count,
                  ub=dst.ub_range(count), buffer=dst.buffer,
                  detail=f"NDDMA GM {gm.label()} dims {dims} strides {strides} -> UB {dst.buffer}",
                  values=dst.data[:count].copy() if ctx.snapshot else None)
    return count


class _Pool:
    """The DAG's buffer pool on one core: slots in ``dag.slots`` order, ``slot_bytes`` each."""

    def __init__(self, dag: Dag, slot_bytes: int, scalar_inputs: set[int], ub_brc: bool = False):
        self.pipe = TPipe()
        self.ques: dict[tuple[int, int], TQue] = {}        # (id(node), ping/pong) -> one-block queue
        self.bufs: dict[tuple[int, int], TBuf] = {}        # temps and scalar-input slots
        self.cache: dict[int, TBuf] = {}                    # UB-broadcast: id(CopyInBrc) -> its broadcast tile
        pipe = self.pipe
        for kind, name, keys in _pool_layout(dag, scalar_inputs, ub_brc):    # the same for every core
            if kind == 0:                                   # a queue of one block
                q = TQue(VECIN if keys[1] else VECOUT, 1, name=name)
                pipe.InitBuffer(q, 1, slot_bytes)
                self.ques[keys[0]] = q
            else:                                           # a TBuf: a cache, a scalar input or a shared temp
                buf = TBuf(VECCALC, name=name)
                pipe.InitBuffer(buf, slot_bytes)
                if kind == 1:
                    self.cache[keys[0]] = buf
                else:
                    for key in keys:
                        self.bufs[key] = buf


_last_layout: list[tuple[Any, ...]] = []


def _pool_layout(dag: Dag, scalar_inputs: set[int], ub_brc: bool) -> list[tuple[int, str, Any]]:
    """The pool's buffers in UB order, without the core: (0, name, ((id(node), ping/pong), is_copy_in)) for a
    one-block queue, (1, name, (id(CopyInBrc),)) for a UB-broadcast cache, (2, name, keys) for a TBuf given to
    ``keys`` (a scalar input's slot, or one temp slot shared by every node given it). It depends only on the DAG,
    which inputs are scalars and the schedule, which every core of a launch shares, so it is worked out once
    (the last one is kept)."""
    key = (frozenset(scalar_inputs), ub_brc)
    if _last_layout and _last_layout[0][0] is dag and _last_layout[0][1] == key:
        return _last_layout[0][2]
    slots = dag.ub_broadcast_slots if ub_brc else dag.slots
    owners: dict[int, list[tuple[str, Node, int]]] = {}
    for node in dag.funlist:
        s = slots.get(id(node))
        if s is None:
            continue
        for slot, pp in ((s.ping, 0), (s.pong, 1)) if s.pong is not None else ((s.ping, 0),):
            owners.setdefault(slot, []).append((s.kind, node, pp))
        if ub_brc and id(node) in dag.cache_slots:
            owners.setdefault(dag.cache_slots[id(node)].ping, []).append(("cache", node, 0))
    layout: list[tuple[int, str, Any]] = []
    for slot in sorted(owners):
        kind, node, pp = owners[slot][0]
        label = f"slot{slot}"
        if kind == "cache":                             # persistent: kept across tiles (never released)
            layout.append((1, f"{label} In{node.inputs[0].index} broadcast", (id(node),)))
        elif kind == "MTE2" and node.inputs[0].index in scalar_inputs:
            layout.append((2, f"{label} In{node.inputs[0].index} scalar", ((id(node), pp),)))
        elif kind in ("MTE2", "MTE3"):
            name = (f"{label} In{node.inputs[0].index}" if kind == "MTE2" else f"{label} out") + \
                   (" pong" if pp else " ping")
            layout.append((0, name, ((id(node), pp), kind == "MTE2")))
        else:                                           # one temp slot, shared by every node given it
            layout.append((2, f"{label} temp", tuple((id(user), 0) for _, user, _ in owners[slot])))
    _last_layout[:] = [(dag, key, layout)]
    return layout


_last_blueprint: list[tuple[Any, ...]] = []


def _blueprint(dag: Dag, pool: _Pool, scalar_inputs: set[int]) -> list[tuple[Any, ...]]:
    """The walk of ``dag.funlist`` without the core's buffers: each node's kind, the positions of its inputs, the
    copy-in slots to release after it (their last reader) and the copy-ins it DeQues first (V waits for MTE2 at the
    first reader). It depends only on the DAG, which slots are queues or caches and which inputs are scalars,
    which every core of a launch shares, so it is worked out once (the last one is kept)."""
    key = (frozenset(pool.ques), frozenset(pool.cache), frozenset(scalar_inputs))
    if _last_blueprint and _last_blueprint[0][0] is dag and _last_blueprint[0][1] == key:
        return _last_blueprint[0][2]
    pos = {id(n): k for k, n in enumerate(dag.funlist)}
    last = dag.last_use
    specs: list[tuple[Any, ...]] = []
    copy_ins: set[int] = set()
    first_read: set[int] = set()
    for k, node in enumerate(dag.funlist):
        nid = id(node)
        if node.op == "CopyInBrc":
            idx = node.inputs[0].index
            if nid in pool.cache:
                specs.append((_Walker.COPY_BRC, node, idx))
            elif idx in scalar_inputs:
                specs.append((_Walker.SCALAR_IN, node, idx))
            else:
                copy_ins.add(k)
                specs.append((_Walker.COPY_IN, node, idx))
        elif node.op == "CopyOut":
            src = node.inputs[0]
            specs.append((_Walker.COPY_OUT, node, pos[id(src)], node.attrs["index"], src))
        else:
            inputs = tuple(pos[id(i)] for i in node.node_inputs)
            frees = tuple(pos[id(i)] for i in dict.fromkeys(node.node_inputs)
                          if last[id(i)] == k and i.op == "CopyInBrc" and (id(i), 0) in pool.ques
                          and id(i) not in pool.cache)           # a broadcast tile persists
            deques = tuple((j, dag.funlist[j].dtype) for j in dict.fromkeys(inputs)
                           if j in copy_ins and j not in first_read)
            first_read.update(j for j, _ in deques)
            specs.append((_Walker.COMPUTE, node, inputs, frees, deques))
    _last_blueprint[:] = [(dag, key, specs)]
    return specs


_last_kernels: list[tuple[Any, ...]] = []


def _kernels(dag: Dag, td: Any, specs: list[tuple[Any, ...]]) -> dict[int, tuple[Any, Any]]:
    """Each compute node's AscendC call and extra argument (:meth:`_Walker._kernel`), by ``id(node)``. They depend
    only on the DAG and the tiling's scalars, which every core of a launch shares (``GET_TILING_DATA`` gives them
    all one struct), so they are worked out once (the last one is kept)."""
    if _last_kernels and _last_kernels[0][0] is dag and _last_kernels[0][1] is td and _last_kernels[0][2] is specs:
        return _last_kernels[0][3]
    scalars = {v.index: td.scalar(v.index, v.dtype) for v in dag.vars}
    kernels = {id(spec[1]): _Walker._kernel(spec[1], scalars) for spec in specs if spec[0] == _Walker.COMPUTE}
    _last_kernels[:] = [(dag, td, specs, kernels)]
    return kernels


class _Walker:
    """Walks ``dag.funlist`` for one tile (the body of ``BroadcastSch::Process``). The walk is planned once
    per core: each node's kind, the positions of its inputs, its ping/pong buffers and the copy-in slots
    to release after it (their last reader). The generic interpreter of that plan: what the generated
    instantiation (:func:`instantiation`) must reproduce call for call; it runs when ``_INTERPRET`` is set."""

    COPY_IN, SCALAR_IN, COPY_OUT, COMPUTE, COPY_BRC = range(5)

    def __init__(self, dag: Dag, pool: _Pool, ins: list[GlobalTensor], outs: list[GlobalTensor], td: Any,
                 scalar_inputs: set[int]):
        self.ins, self.outs = ins, outs
        self.scalar_values: dict[int, Any] = {}
        ques, bufs = pool.ques, pool.bufs
        self.ctx = current()
        # the ping (even tiles) and pong (odd tiles) queues: each is one block, so its own AllocTensor count
        # would number tiles 0, 0, 1, 1, ...; tile() gives each the walker's tile index instead
        self.slot_queues: tuple[tuple[TQue, ...], tuple[TQue, ...]] = (
            tuple(q for (_, pp), q in ques.items() if pp == 0), tuple(q for (_, pp), q in ques.items() if pp == 1))
        self.plan: list[tuple[Any, ...]] = []
        self.in_queues: dict[int, tuple[TQue, TQue]] = {}
        specs = _blueprint(dag, pool, scalar_inputs)                  # the same for every core of a launch
        kernels = _kernels(dag, td, specs)
        for spec in specs:
            kind, node, nid = spec[0], spec[1], id(spec[1])
            if kind == self.COPY_BRC:                   # UB-broadcast: copy, then Broadcast into the cache
                self.plan.append((kind, node, spec[2], (ques[(nid, 0)], ques[(nid, 1)]), pool.cache[nid]))
            elif kind == self.SCALAR_IN:
                self.plan.append((kind, node, spec[2], (bufs[(nid, 0)], bufs[(nid, 1)])))
            elif kind == self.COPY_IN:
                self.in_queues[len(self.plan)] = qs = (ques[(nid, 0)], ques[(nid, 1)])
                self.plan.append((kind, node, spec[2], qs))
            elif kind == self.COPY_OUT:
                _, _, src_pos, index, src = spec
                self.plan.append((kind, node, src_pos, index, (ques[(id(src), 0)], ques[(id(src), 1)]), src.dtype))
            else:
                _, _, inputs, frees, deques = spec
                out_q = (ques[(nid, 0)], ques[(nid, 1)]) if (nid, 0) in ques else None
                fn, arg = kernels[nid]
                self.plan.append((kind, node, inputs, tuple((j, self.in_queues[j]) for j in frees), out_q,
                                  bufs.get((nid, 0)), fn, node.dtype,
                                  tuple((j, self.in_queues[j], dt) for j, dt in deques), arg))
        self.vals: list[Any] = [None] * len(self.plan)     # each step's tensor in the current tile
        self.temps: list[Any] = [None] * len(self.plan)    # a temp slot's tensor, from its first TBuf::Get
        # DataCopyParams by tile length (a core has at most two: the tile and the last tile)
        self._params: dict[int, dict[int, DataCopyParams]] = {}
        self._out_params: dict[tuple[int, int], DataCopyParams] = {}

    @staticmethod
    def _kernel(node: Node, scalars: dict[int, Any]) -> tuple[Any, Any]:
        """The AscendC call of a compute node and its extra argument, worked out once per core, called directly
        by ``tile``: ``Duplicate(dst, value, n)`` (the one node with no node inputs), ``Select(dst, mask, src0,
        src1, mode, n)`` (the one with three), ``Compare(dst, src0, src1, mode, whole)`` (the other with an
        argument: (mode, elements per repeat)), ``Cast(dst, src, mode, n)`` (the one with one input) and
        ``Mul(dst, src0, src1, n)``."""
        op, a = node.op, node.attrs
        if op == "Cast":
            return Cast, RoundMode(a["mode"])
        if op == "Duplicate":
            v = node.inputs[0]
            value = scalars[v.index] if isinstance(v, Var) else v.value if isinstance(v, Const) else v
            # converted once as Duplicate converts it (T(value)); Duplicate takes a value of its type as is
            return Duplicate, typed_scalar(node.dtype, value)
        if op == "Compare":
            return Compare, (CMPMODE(a["mode"]), REPEAT_BYTES // node.inputs[0].dtype.itemsize)
        if op == "Select":
            return Select, SELMODE(a["mode"])
        if op == "Mul":
            return Mul, None
        raise NotImplementedError(f"the template has no kernel code for node {node.op}")

    def tile(self, i: int, length: int, out_offset: int, in_copy: Any = None, expand: Any = None) -> None:
        """Tile ``i`` of this core, ``length`` output elements; ``in_copy(node, dst, gm)`` fills a copy-in slot
        (None: one contiguous ``DataCopyPad`` of ``length`` elements at ``out_offset``, the one-dim schedules).
        UB-broadcast: ``expand(node)`` gives ``fn(dst, raw)``, the Broadcast of a copied tile into the node's
        persistent slot, or None when that slot still holds this tile (then nothing is copied)."""
        pp = i & 1
        # every event of this tile carries tile i, as a hand-written kernel's loop index: the slot queues' next
        # AllocTensor/DeQue number (the sanitizer's too) and the vector unit's tile (a Duplicate or a TBuf temp
        # before the tile's first DeQue would otherwise take the previous tile's)
        self.ctx.current_tile = i
        for q in self.slot_queues[pp]:
            q.allocs = q.deques = i
        vals = self.vals                                # a step's entry is set before any later step reads it
        temps = self.temps
        ins = self.ins
        params = self._params.get(length) if in_copy is None else None
        if in_copy is None and params is None:
            params = self._params[length] = {}
        for k, step in enumerate(self.plan):
            kind, node = step[0], step[1]
            if kind == 3:                                   # COMPUTE
                _, node, inputs, frees, out_q, buf, fn, dtype, deques, arg = step
                for j, qs, dt in deques:                    # V waits for MTE2 at the first reader
                    vals[j] = qs[pp].DeQue(dt)
                if out_q is not None:
                    dst = out_q[pp].AllocTensor(dtype)
                else:                                       # a TBuf hands out the same tensor every time
                    dst = temps[k]
                    if dst is None:
                        dst = temps[k] = buf.Get(dtype)
                n_in = len(inputs)
                if n_in == 0:                               # Duplicate(dst, value, n)
                    fn(dst, arg, length)
                elif n_in == 2:
                    if arg is None:                         # Mul(dst, src0, src1, n)
                        fn(dst, vals[inputs[0]], vals[inputs[1]], length)
                    else:                                   # Compare over whole repeats (see the module doc)
                        src0, src1 = vals[inputs[0]], vals[inputs[1]]
                        per = arg[1]
                        whole = -(-length // per) * per         # DAV_3510 masks the tail
                        if whole != length:
                            src0, src1 = _widen(src0, whole), _widen(src1, whole)
                        fn(dst, src0, src1, arg[0], whole)
                elif n_in == 3:                             # Select(dst, mask, src0, src1, mode, n)
                    fn(dst, vals[inputs[0]], vals[inputs[1]], vals[inputs[2]], arg, length)
                else:                                       # Cast(dst, src, mode, n)
                    fn(dst, vals[inputs[0]], arg, length)
                if out_q is not None:
                    out_q[pp].EnQue(dst)
                for j, qs in frees:                         # release copy-in slots after their last reader
                    qs[pp].FreeTensor(vals[j])
                vals[k] = dst
            elif kind == 0:                                 # COPY_IN
                q = step[3][pp]
                t = q.AllocTensor(node.dtype)
                if in_copy is None:
                    item = node.dtype.itemsize
                    p = params.get(item)
                    if p is None:                           # DataCopyPad reads the params, never changes them
                        p = params[item] = DataCopyParams(1, length * item, 0, 0)
                    DataCopyPad(t, ins[step[2]][out_offset], p)
                else:
                    in_copy(node, t, ins[step[2]])
                q.EnQue(t)
            elif kind == 2:                                 # COPY_OUT
                q = step[4][pp]
                dt = step[5]
                t = q.DeQue(dt)
                p = self._out_params.get((length, dt.itemsize))
                if p is None:
                    p = self._out_params[(length, dt.itemsize)] = DataCopyParams(1, length * dt.itemsize, 0, 0)
                DataCopyPad(self.outs[step[3]][out_offset], t, p)
                q.FreeTensor(t)
            elif kind == 4:                                 # COPY_BRC
                out = step[4].Get(node.dtype)
                fn = expand(node)
                if fn is not None:
                    q = step[3][pp]
                    t = q.AllocTensor(node.dtype)
                    in_copy(node, t, ins[step[2]])
                    q.EnQue(t)
                    t = q.DeQue(node.dtype)                     # V waits for MTE2
                    fn(out, t)
                    q.FreeTensor(t)                             # the raw slot is free for the tile after next
                vals[k] = out
            else:                                           # SCALAR_IN
                t = step[3][pp].Get(node.dtype)
                if i < 2:                                       # the slot keeps the value for later tiles
                    idx = step[2]
                    if idx not in self.scalar_values:
                        self.scalar_values[idx] = gm_value(ins[idx], i)
                    Duplicate(t, self.scalar_values[idx], length)
                vals[k] = t


def _widen(t: LocalTensor, count: int) -> LocalTensor:
    """``t`` seen over ``count`` elements when its slot is shorter (the pool continues past it)."""
    if count <= t.size:
        return t
    w = LocalTensor(t.ctx, t.dtype, t.offset, count, t.buffer, t.tile, t.block, t.queue)
    w.life = t.life
    return w


# --- the template's instantiation: the tile body as straight-line code ----------------------------------------
#: Run :class:`_Walker`, the generic interpreter of the plan, instead of the generated tile body (the tests run
#: both and compare every output bit, trace event, cycle count and warning). Set it with :func:`interpreted`.
_INTERPRET = False


@contextlib.contextmanager
def interpreted() -> Iterator[None]:
    """Inside this block the template runs its step-by-step interpreter of the plan instead of the generated tile
    body (:func:`instantiation`): the reference the instantiation is held to, for a reader who wants to see the
    two agree (same output bits, trace events, cycles and findings)."""
    global _INTERPRET
    previous, _INTERPRET = _INTERPRET, True
    try:
        yield
    finally:
        _INTERPRET = previous

#: The schedule families and the arguments their tile body takes after ``(i, length, out_offset)``.
_FAMILIES = {"one-dim": "", "nddma": ", in_copy", "ub-broadcast": ", in_copy, expand"}
_MODES = {"one-dim": "201/202", "nddma": "1/2", "ub-broadcast": "101-104/109"}


def _family(sch_mode: int) -> str:
    if sch_mode in (201, 202):
        return "one-dim"
    if sch_mode in (1, 2):
        return "nddma"
    if sch_mode in (101, 102, 103, 104, 109):
        return "ub-broadcast"
    raise NotImplementedError(f"schMode {sch_mode} (the non-contiguous templates 301-305) is not modelled")


class _Keys:
    """The pool's queue and cache keys without a core (all that :func:`_blueprint` reads of a :class:`_Pool`)."""

    def __init__(self, layout: list[tuple[int, str, Any]]):
        self.ques = {keys[0]: None for kind, _, keys in layout if kind == 0}
        self.cache = {keys[0]: None for kind, _, keys in layout if kind == 1}


def _text(s: str) -> str:
    """``s`` on one line (a node or DAG name is the DAG author's text: it goes into comments only)."""
    return " ".join(str(s).split())


class _Module:
    """The generated module: its lines and the names its code reads (the AscendC calls, dtypes, modes, nodes)."""

    COL = 56                                             # where the comments start

    def __init__(self) -> None:
        self.names: dict[str, Any] = {"DataCopyPad": DataCopyPad, "DataCopyParams": DataCopyParams,
                                      "Duplicate": Duplicate, "Compare": Compare, "Select": Select, "Cast": Cast,
                                      "Mul": Mul, "_widen": _widen, "gm_value": gm_value}

    def name(self, name: str, value: Any) -> str:
        """``name`` bound to ``value`` in the module (a dtype, an enum member, a node); another name if taken."""
        base, k = name if name.isidentifier() and not keyword.iskeyword(name) else "T", 0
        name = base
        while name in self.names and not (self.names[name] is value or _same_dtype(self.names[name], value)):
            k += 1
            name = f"{base}_{k}"
        self.names[name] = value
        return name

    @classmethod
    def line(cls, code: str, comment: str = "") -> str:
        return f"{code.ljust(cls.COL - 1)} # {_text(comment)}" if comment else code


def _same_dtype(a: Any, b: Any) -> bool:
    return isinstance(a, np.dtype) and isinstance(b, np.dtype) and a == b


def _generate(dag: Dag, family: str, layout: list[tuple[int, str, Any]], keys: _Keys,
              specs: list[tuple[Any, ...]]) -> tuple[str, dict[str, Any]]:
    """(text, names) of the module defining ``BroadcastSch(ctx, In, Out, que, buf, value)`` for ``dag`` on a schedule
    ``family``. Called once per core with that core's GM tensors and pool (``que[k]`` the ping/pong queues of step
    ``k``, ``buf[k]`` its TBuf or ping/pong TBufs, ``value[k]`` a Duplicate's typed value), it returns ``tile``, the
    body of ``BroadcastSch::Process`` for one tile: the AscendC calls :meth:`_Walker.tile` makes when it interprets
    ``specs``, with the same arguments, in the same order."""
    m = _Module()
    line = m.line
    f = dag.funlist
    where: dict[Any, str] = {}                           # pool key -> the buffer's name ("slot3 temp")
    for kind, name, k in layout:
        if kind == 0:
            where[k[0]] = name
        elif kind == 1:
            where[("cache", k[0])] = name
        else:
            for key in k:
                where[key] = name

    def dt(node: Node) -> str:
        return m.name(node.dtype.name, node.dtype)

    init = [f"# BroadcastSch<schMode {_MODES[family]}, {_text(dag.name)}>, instantiated "
            "(ascend_lab.atvoss.schedule.instantiation)",
            "def BroadcastSch(ctx, In, Out, que, buf, value):",
            '    """Init: bind this core\'s GM tensors and buffer pool (que[k]: step k\'s ping/pong queues,',
            "    buf[k]: its TBuf(s), value[k]: a Duplicate's value); returns Process's body for one tile.",
            '    TBuf::Get records nothing and takes no time, so each TBuf tensor is got once, here."""',
            line(f"    {targets([f'in{k}' for k in range(dag.input_size)])} = In", "GM inputs (GlobalTensor)"),
            line(f"    {targets([f'out{k}' for k in range(dag.output_size)])} = Out", "GM outputs")]
    queues: list[int] = []                              # steps with ping/pong queues
    scalars: list[int] = []                             # scalar-input steps (ping/pong TBufs)
    body: list[str] = []
    sizes: set[int] = set()                             # element sizes the DataCopyPad params are made for
    for k, spec in enumerate(specs):
        kind, node = spec[0], spec[1]
        nid = id(node)
        body.append(f"        # {k}: {_text(node.label())}" + (f" ({_text(node.name)})" if node.name else ""))
        if (nid, 0) in keys.ques:
            queues.append(k)
            init.append(line(f"    q{k}_ping, q{k}_pong = que[{k}]", f"{where[(nid, 0)]}, {where[(nid, 1)]}"))
        if kind == _Walker.COPY_IN:
            body.append(f"        x{k} = q{k}.AllocTensor({dt(node)})")
            if family == "one-dim":
                sizes.add(node.dtype.itemsize)
                body.append(f"        DataCopyPad(x{k}, in{spec[2]}[out_offset], p{node.dtype.itemsize})")
            else:
                body.append(f"        in_copy({m.name(f'n{k}', node)}, x{k}, in{spec[2]})")
            body.append(f"        q{k}.EnQue(x{k})")
        elif kind == _Walker.COPY_BRC:
            init.append(line(f"    x{k} = buf[{k}].Get({dt(node)})", f"{where[('cache', nid)]}: kept across tiles"))
            n = m.name(f"n{k}", node)
            body += [f"        brc = expand({n})",
                     line("        if brc is not None:", f"else x{k} still holds this tile"),
                     f"            t = q{k}.AllocTensor({dt(node)})",
                     f"            in_copy({n}, t, in{spec[2]})",
                     f"            q{k}.EnQue(t)",
                     line(f"            t = q{k}.DeQue({dt(node)})", "V waits for MTE2"),
                     f"            brc(x{k}, t)",
                     line(f"            q{k}.FreeTensor(t)", "the raw slot is free for the tile after next")]
        elif kind == _Walker.SCALAR_IN:
            scalars.append(k)
            init += [line(f"    x{k}_ping = buf[{k}][0].Get({dt(node)})", where[(nid, 0)]),
                     line(f"    x{k}_pong = buf[{k}][1].Get({dt(node)})", where[(nid, 1)]),
                     line(f"    s{k} = None", f"In{spec[2]}'s one element, read on tile 0")]
            body += [line("        if i < 2:", "a scalar input: its slot keeps the value for later tiles"),
                     f"            if s{k} is None:",
                     line(f"                s{k} = gm_value(in{spec[2]}, i)", "GlobalTensor::GetValue(0)"),
                     f"            Duplicate(x{k}, s{k}, length)"]
        elif kind == _Walker.COPY_OUT:
            _, _, j, index, source = spec
            sizes.add(source.dtype.itemsize)
            body += [f"        t = q{j}.DeQue({dt(source)})",
                     f"        DataCopyPad(out{index}[out_offset], t, p{source.dtype.itemsize})",
                     f"        q{j}.FreeTensor(t)"]
        else:                                           # a compute node: one AscendC instruction
            _, _, inputs, frees, deques = spec
            for j, _ in deques:
                body.append(line(f"        x{j} = q{j}.DeQue({dt(f[j])})", "V waits for MTE2"))
            if (nid, 0) in keys.ques:
                body.append(f"        x{k} = q{k}.AllocTensor({dt(node)})")
            else:
                init.append(line(f"    x{k} = buf[{k}].Get({dt(node)})", where[(nid, 0)]))
            x = [f"x{j}" for j in inputs]
            op, a = node.op, node.attrs
            if op == "Duplicate":
                init.append(line(f"    value{k} = value[{k}]", f"{node.inputs[0]!r} as {node.dtype.name}"))
                body.append(f"        Duplicate(x{k}, value{k}, length)")
            elif op == "Compare":
                mode = m.name(f"CMPMODE_{CMPMODE(a['mode']).name}", CMPMODE(a["mode"]))
                per = REPEAT_BYTES // node.inputs[0].dtype.itemsize
                body += [line(f"        w = -(-length // {per}) * {per}", "whole 256-byte repeats (module doc)"),
                         "        if w == length:",
                         f"            Compare(x{k}, {x[0]}, {x[1]}, {mode}, length)",
                         "        else:",
                         f"            Compare(x{k}, _widen({x[0]}, w), _widen({x[1]}, w), {mode}, w)"]
            elif op == "Select":
                mode = m.name(SELMODE(a["mode"]).name, SELMODE(a["mode"]))
                body.append(f"        Select(x{k}, {x[0]}, {x[1]}, {x[2]}, {mode}, length)")
            elif op == "Cast":
                mode = m.name(RoundMode(a["mode"]).name, RoundMode(a["mode"]))
                body.append(f"        Cast(x{k}, {x[0]}, {mode}, length)")
            elif op == "Mul":
                body.append(f"        Mul(x{k}, {x[0]}, {x[1]}, length)")
            else:
                raise NotImplementedError(f"the template has no kernel code for node {node.op}")
            if (nid, 0) in keys.ques:
                body.append(f"        q{k}.EnQue(x{k})")
            for j in frees:
                body.append(line(f"        q{j}.FreeTensor(x{j})", f"step {j}'s last reader"))
    init.append(line("    params = {}", "DataCopyParams by tile length"))
    head = [f"    def tile(i, length, out_offset{_FAMILIES[family]}):",
            '        """Tile i of this core: ``length`` output elements at ``out_offset``."""']
    if scalars:
        head.append(f"        nonlocal {', '.join(f's{k}' for k in scalars)}")
    picks = [f"q{k}" for k in queues] + [f"x{k}" for k in scalars]
    head += [line("        if i & 1:", "odd tiles: the pong slots"),
             f"            {targets(picks)} = {', '.join(p + '_pong' for p in picks)}",
             line("        else:", "even tiles: the ping slots"),
             f"            {targets(picks)} = {', '.join(p + '_ping' for p in picks)}",
             line("        ctx.current_tile = i", "every event of this tile carries tile i: the vector unit's,")]
    head += [line(f"        q{k}.allocs = q{k}.deques = i", "the next AllocTensor's and DeQue's") for k in queues]
    if sizes:
        ps = [f"p{b}" for b in sorted(sizes)]
        made = ", ".join(f"DataCopyParams(1, length * {b}, 0, 0)" for b in sorted(sizes))
        p = ps[0] if len(ps) == 1 else "p"
        head += [line(f"        {p} = params.get(length)", "{blockCount, blockLen (bytes), srcStride, dstStride}"),
                 f"        if {p} is None:",
                 f"            {p} = params[length] = {made if len(ps) == 1 else f'({made})'}"]
        if len(ps) > 1:
            head.append(f"        {', '.join(ps)} = p")
    return "\n".join([*init, "", *head, *body, "", "    return tile", ""]), m.names


class _Instance:
    """One instantiation: its source, its compiled ``BroadcastSch`` factory, the plan it was generated from and
    what a core binds (the pool keys of each step's queues and TBufs, the Duplicate steps' values)."""

    def __init__(self, dag: Dag, family: str, scalar_inputs: set[int]):
        self.dag = dag
        layout = _pool_layout(dag, scalar_inputs, family == "ub-broadcast")
        keys = _Keys(layout)
        self.specs = specs = _blueprint(dag, keys, scalar_inputs)
        self.source, names = _generate(dag, family, layout, keys, specs)
        # library code: a finding names no line of it, as none of the interpreter's; a traceback shows its lines
        namespace = generated.load(self.source, f"BroadcastSch {family} {_text(dag.name)} scalars "
                                   f"{sorted(scalar_inputs)}", {"__name__": f"{__name__}.instance", **names})
        self.factory = namespace["BroadcastSch"]
        self.ques: list[tuple[int, Any, Any]] = []          # (step, ping key, pong key)
        self.bufs: list[tuple[int, str, Any]] = []          # (step, "cache" | "pair" | "temp", key)
        self.duplicates: list[tuple[int, int]] = []         # (step, id(node)): its value from _kernels
        for k, spec in enumerate(specs):
            kind, node = spec[0], spec[1]
            nid = id(node)
            if (nid, 0) in keys.ques:
                self.ques.append((k, (nid, 0), (nid, 1)))
            if kind == _Walker.COPY_BRC:
                self.bufs.append((k, "cache", nid))
            elif kind == _Walker.SCALAR_IN:
                self.bufs.append((k, "pair", nid))
            elif kind == _Walker.COMPUTE:
                if (nid, 0) not in keys.ques:
                    self.bufs.append((k, "temp", (nid, 0)))
                if node.op == "Duplicate":
                    self.duplicates.append((k, nid))

    def bind(self, pool: _Pool, ins: list[GlobalTensor], outs: list[GlobalTensor], td: Any) -> Any:
        """This core's tile body: the factory called with the core's pool and GM tensors."""
        ques, bufs = pool.ques, pool.bufs
        que = {k: (ques[a], ques[b]) for k, a, b in self.ques}
        buf: dict[int, Any] = {}
        for k, how, key in self.bufs:
            buf[k] = pool.cache[key] if how == "cache" else (bufs[(key, 0)], bufs[(key, 1)]) if how == "pair" \
                else bufs[key]
        kernels = _kernels(self.dag, td, self.specs)
        value = {k: kernels[nid][1] for k, nid in self.duplicates}
        return self.factory(current(), ins, outs, que, buf, value)


_instances: dict[tuple[Any, ...], _Instance] = {}


def _instance(dag: Dag, family: str, scalar_inputs: set[int]) -> _Instance:
    """``dag`` instantiated on a schedule family with these scalar inputs: generated and compiled once, as the
    compiler instantiates ``BroadcastSch<schMode, Dag>`` once per DAG (a few are kept)."""
    key = (dag, family, frozenset(scalar_inputs))
    hit = _instances.get(key)
    if hit is None:
        if len(_instances) >= 64:
            _instances.clear()
        hit = _instances[key] = _Instance(dag, family, scalar_inputs)
    return hit


def instantiation(dag: Dag, sch_mode: int, scalar_inputs: Iterable[int] = ()) -> str:
    """The Python source the simulator runs for every tile of ``dag`` on schedule ``sch_mode`` (``scalar_inputs``:
    the GM inputs of one element, ``scalarFlag``, which only the one-dim schedules 201/202 have).

    ``BroadcastSch<schMode, Dag>`` is a C++ template: the compiler turns each instantiation into straight-line
    code for its DAG. This is that step's analogue: the walk of ``dag.funlist`` written out once, one AscendC
    call per line, compiled once and bound to each core's buffers."""
    family = _family(sch_mode)
    scalars = {int(i) for i in scalar_inputs}
    if scalars and family != "one-dim":
        raise ValueError(f"scalar inputs (scalarFlag) exist only on the one-dim schedules 201/202, not {sch_mode}")
    if not scalars <= set(range(dag.input_size)):
        raise ValueError(f"scalar_inputs must be GM input indexes 0..{dag.input_size - 1}, got {sorted(scalars)}")
    return _instance(dag, family, scalars).source


def _tile_body(dag: Dag, family: str, pool: _Pool, ins: list[GlobalTensor], outs: list[GlobalTensor], td: Any,
               scalar_inputs: set[int]) -> Any:
    """This core's tile body, ``body(i, length, out_offset[, in_copy[, expand]])``: the instantiation bound to the
    core's pool and GM tensors (or, with ``_INTERPRET``, the interpreter's :meth:`_Walker.tile`)."""
    if _INTERPRET:
        return _Walker(dag, pool, ins, outs, td, scalar_inputs).tile
    return _instance(dag, family, scalar_inputs).bind(pool, ins, outs, td)


def _globals(dag: Dag, gm_args: tuple[GmAddr, ...]) -> tuple[list[GlobalTensor], list[GlobalTensor]]:
    n_in = dag.input_size
    by_index = {n.inputs[0].index: n.dtype for n in dag.copy_ins}
    ins, outs = [], []
    for k, addr in enumerate(gm_args[:n_in]):
        g = GlobalTensor(by_index[k])
        g.SetGlobalBuffer(addr, addr.arg_nbytes // by_index[k].itemsize)
        ins.append(g)
    for k, node in enumerate(dag.copy_outs):
        addr = gm_args[n_in + k]
        g = GlobalTensor(node.dtype)
        g.SetGlobalBuffer(addr, addr.arg_nbytes // node.dtype.itemsize)
        outs.append(g)
    return ins, outs


def _contiguous(node: Node, dst: LocalTensor, gm: GlobalTensor, offset: int, length: int) -> None:
    DataCopyPad(dst, gm[offset], DataCopyParams(1, length * node.dtype.itemsize, 0, 0))


_last_tiling: list[tuple[type, bytes, Any]] = []


def _tiling_data(tiling_class: type, tiling: Any) -> Any:
    """``GET_TILING_DATA``, parsed once for all the cores of a launch (they read the same bytes; the kernel
    only reads the struct)."""
    raw = bytes(tiling)
    if _last_tiling and _last_tiling[0][0] is tiling_class and _last_tiling[0][1] == raw:
        return _last_tiling[0][2]
    td = GET_TILING_DATA(tiling_class, raw)
    _last_tiling[:] = [(tiling_class, raw, td)]
    return td


def broadcast_sch(*args: Any, dag: Dag, sch_mode: int, tiling_class: type) -> None:
    """The ``__global__`` entry: ``args`` are the GM inputs, the GM outputs, the workspace and the tiling
    (``launch`` passes them so). ``dag`` and ``sch_mode`` are the template arguments (``BroadcastSch<schMode,
    Dag>``); ``tiling_class`` is the struct ``GET_TILING_DATA`` reads."""
    n_gm = dag.input_size + dag.output_size
    gm_args, tiling = args[:n_gm], args[n_gm + 1]
    td = _tiling_data(tiling_class, tiling)
    ins, outs = _globals(dag, gm_args)
    core = GetBlockIdx()
    d = dag.max_dtype_bytes
    if sch_mode in (201, 202):
        if sch_mode == 201:
            tile, block_num = td.ubFormer, td.blockNum
            bf, bt, ub_tail = td.blockFormer, td.blockTail, td.ubTail
        else:
            split = advance_split(td)
            tile, block_num = td.tileNum, td.blockNum
            bf, bt, ub_tail = split["blockFormer"], split["blockTail"], split["ubTail"]
        scalars = {i for i in range(dag.input_size) if td.scalarFlag >> i & 1}
        pool = _Pool(dag, tile * d, scalars)
        body = _tile_body(dag, "one-dim", pool, ins, outs, td, scalars)
        last_core = core == block_num - 1
        n_tiles = bt if last_core else bf
        start = bf * tile * core
        for i in range(n_tiles):
            length = ub_tail if (last_core and i == n_tiles - 1) else tile
            body(i, length, start + i * tile)               # contiguous copies of ``length`` at the offset
        return
    if sch_mode in (1, 2):
        _nddma(dag, td, ins, outs, core)
        return
    if sch_mode in (101, 102, 103, 104, 109):
        _ub_broadcast(dag, td, ins, outs, core, sch_mode)
        return
    raise NotImplementedError(f"schMode {sch_mode} (the non-contiguous templates 301-305) is not modelled")


def _ub_loops(td: Any, core: int) -> Iterator[tuple[int, list[int], int, int, int]]:
    """One core's UB loops in the NDDMA and UB-broadcast schedules (``BroadcastGetAxesIndices``): loop ``i`` of
    ``blockFormer`` (last core ``blockTail``) is fused index ``core * blockFormer + i``, which splits into the
    split-axis index (``ubOuter`` of them, the last ``ubTail`` long, the others ``ubFormer``) and the outer dims'
    indices. Yields ``(i, outer, split_idx, split_len, out_off)``, ``out_off`` the output's GM offset."""
    rank, axis = td.shapeLen, td.ubSplitAxis
    dims = td.array("outputDims")[:rank]
    out_strides = td.array("outputStrides")[:rank]
    n_loops = td.blockTail if core == td.blockNum - 1 else td.blockFormer
    first = core * td.blockFormer
    outer_dims = dims[:axis]
    for i in range(n_loops):
        split_idx, rest = (first + i) % td.ubOuter, (first + i) // td.ubOuter
        outer = [int(o) for o in np.unravel_index(rest, outer_dims)] if outer_dims else []
        split_len = td.ubTail if split_idx == td.ubOuter - 1 else td.ubFormer
        out_off = sum(o * s for o, s in zip(outer, out_strides, strict=False)) + \
            split_idx * td.ubFormer * out_strides[axis]
        yield i, outer, split_idx, split_len, out_off


def _nddma(dag: Dag, td: Any, ins: list[GlobalTensor], outs: list[GlobalTensor], core: int) -> None:
    """schMode 1/2 (``broadcast_sch_nddma.h``): ``blockFormer`` (last core ``blockTail``) UB loops of the
    fused outer index; the split axis is ``ubTail`` long on the last ub-outer index, ``ubFormer`` otherwise."""
    rank, axis = td.shapeLen, td.ubSplitAxis
    in_strides = {node.inputs[0].index: td.array("inputBrcStrides", pos)[:rank]
                  for pos, node in enumerate(dag.copy_ins)}
    inner = td.array("outputDims")[:rank][axis + 1:]
    pool = _Pool(dag, td.elemNum * dag.max_dtype_bytes, set())
    body = _tile_body(dag, "nddma", pool, ins, outs, td, set())
    for i, outer, split_idx, split_len, out_off in _ub_loops(td, core):
        split_start = split_idx * td.ubFormer
        length = split_len * math.prod(inner)

        def copy_in(node: Node, dst: LocalTensor, gm: GlobalTensor, outer: list = outer,
                    split_start: int = split_start, split_len: int = split_len, length: int = length) -> None:
            st = in_strides[node.inputs[0].index]
            base = sum(o * s for o, s in zip(outer, st, strict=False)) + split_start * st[axis]
            wdims, wst = [split_len, *inner], st[axis:]
            if all(s != 0 for s in wst) and wst == _dense(wdims):
                _contiguous(node, dst, gm, base, length)       # nothing broadcast in this window
            else:
                nddma_copy(dst, gm, base, wdims, list(wst))

        body(i, length, out_off, copy_in)


def _ub_broadcast(dag: Dag, td: Any, ins: list[GlobalTensor], outs: list[GlobalTensor], core: int,
                  sch_mode: int) -> None:
    """schMode 101-104 / 109 (``BroadcastUbSch<Dag, R>``, OB ``broadcast_sch_ub_broadcast.h``), R = running rank
    ``shapeLen - ubSplitAxis`` (1-4), -1 for 109. The UB loops walk the fused outer index as the NDDMA schedule
    does (``BroadcastGetAxesIndices``); in each, every CopyInBrc:

    1. skips (its persistent slot still holds the tile) when the input is broadcast along the split axis
       (``inputBrcStrides[split] == 0``), this is not the core's first loop and the split index is not 0;
    2. else copies its window with one ``DataCopyPad`` from ``gmOffset = sum(outer_i * stride_i) + split_idx *
       ubFormer * stride[split]``: ``ubSplitSize * stride[split]`` elements when it is not broadcast on the split
       axis, else the product of its inner dims (its split dim is 1);
    3. ``Broadcast<T, R>`` from ``[ubFormer | ubTail | 1, input inner dims]`` to ``[ubFormer | ubTail, output
       inner dims]`` (tail on the last split index) into its persistent slot.

    The compute nodes then run on ``ubSplitSize * outputStrides[split]`` elements and CopyOut writes them."""
    rank, axis = td.shapeLen, td.ubSplitAxis
    out_strides = td.array("outputStrides")[:rank]
    brc = {id(node): (td.array("inputBrcDims", pos)[:rank], td.array("inputBrcStrides", pos)[:rank])
           for pos, node in enumerate(dag.copy_ins)}
    inner = td.array("outputDims")[:rank][axis + 1:]
    const_rank = -1 if sch_mode == 109 else rank - axis
    pool = _Pool(dag, td.elemNum * dag.max_dtype_bytes, set(), ub_brc=True)
    body = _tile_body(dag, "ub-broadcast", pool, ins, outs, td, set())
    for i, outer, split_idx, split_len, out_off in _ub_loops(td, core):

        def window(node: Node, outer: list[int] = outer, split_idx: int = split_idx,
                   split_len: int = split_len) -> tuple[int, int, tuple[int, ...]]:
            """(GM offset, elements, UB shape) of the input's un-broadcast window in this loop."""
            in_dims, st = brc[id(node)]
            base = sum(o * s for o, s in zip(outer, st, strict=False)) + split_idx * td.ubFormer * st[axis]
            if st[axis] != 0:
                return base, split_len * st[axis], (split_len, *in_dims[axis + 1:])
            return base, math.prod(in_dims[axis + 1:]), (1, *in_dims[axis + 1:])

        def copy_in(node: Node, dst: LocalTensor, gm: GlobalTensor, window: Any = window) -> None:
            base, count, _ = window(node)
            _contiguous(node, dst, gm, base, count)

        def expand(node: Node, i: int = i, split_idx: int = split_idx, window: Any = window,
                   dst_shape: tuple[int, ...] = (split_len, *inner)) -> Any:
            if brc[id(node)][1][axis] == 0 and i > 0 and split_idx > 0:
                return None                                  # cached: same outer index as the previous loop
            src_shape = window(node)[2]
            return lambda out, raw: Broadcast(out, raw, dst_shape, src_shape, const_rank=const_rank)

        body(i, split_len * out_strides[axis], out_off, copy_in, expand)


def _dense(dims: list[int]) -> list[int]:
    out, base = [], 1
    for d in reversed(dims):
        out.append(base)
        base *= d
    return out[::-1]

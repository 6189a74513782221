"""The plan of one instantiation: the pool's buffers and the walk of ``dag.funlist`` as named records.

``BroadcastSch<schMode, Dag>`` works out at compile time, from the DAG alone, which UB slot each node writes and
when a copy-in slot may be released; the launch only supplies the tiling's numbers. The simulator does the same
once per (DAG, schedule family, scalar inputs): :func:`pool_layout` lists the pool's buffers in UB order and
:func:`walk` turns ``funlist`` into one step per node. Both depend on no core, so every core of a launch (and
every launch of the same DAG) shares them; :mod:`.emit` writes the tile body from the steps.

A pool buffer is keyed by :class:`Key` -- the node it belongs to and ping (0) or pong (1) -- which is how a core's
:class:`~.schedule.Pool` finds the queue or TBuf a step binds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .dag import Dag, Node

__all__ = ["FAMILIES", "Buffer", "Cache", "Compute", "CopyBrc", "CopyIn", "CopyOut", "Key", "Queue", "ScalarIn",
           "Step", "family_of", "pool_layout", "walk"]

#: The schedule families (one instantiation each) and the schMode values they run.
FAMILIES = {"one-dim": (201, 202), "nddma": (1, 2), "ub-broadcast": (101, 102, 103, 104, 109)}


def family_of(sch_mode: int) -> str:
    """The schedule family of ``sch_mode``: one-dim (201/202), nddma (1/2) or ub-broadcast (101-104/109)."""
    for family, modes in FAMILIES.items():
        if sch_mode in modes:
            return family
    raise NotImplementedError(f"schMode {sch_mode} (the non-contiguous templates 301-305) is not modelled")


class Key(NamedTuple):
    """A pool buffer's owner: ``id(node)`` and ping (0, even tiles) or pong (1, odd tiles)."""
    node: int
    pong: int = 0


# --- the pool: buffers in UB order ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Queue:
    """A one-block ``TQue`` for one ping or pong copy slot (VECIN for a copy-in, VECOUT for a copy-out)."""
    name: str
    key: Key
    copy_in: bool


@dataclass(frozen=True)
class Cache:
    """UB-broadcast: the persistent ``TBuf`` a CopyInBrc expands its tile into (kept across tiles)."""
    name: str
    node: int


@dataclass(frozen=True)
class Buffer:
    """A ``TBuf`` given to ``keys``: a scalar input's ping or pong slot, or one temp slot shared by its nodes."""
    name: str
    keys: tuple[Key, ...]


def pool_layout(dag: Dag, scalar_inputs: frozenset[int], ub_brc: bool) -> list[Queue | Cache | Buffer]:
    """The pool's buffers in ``dag.slots`` order (``dag.ub_broadcast_slots`` and the caches for UB-broadcast);
    the name says what the slot holds, as the trace's UB layout shows it."""
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
    return [_buffer(f"slot{slot}", owners[slot], scalar_inputs) for slot in sorted(owners)]


def _buffer(label: str, owners: list[tuple[str, Node, int]], scalar_inputs: frozenset[int]) -> Queue | Cache | Buffer:
    kind, node, pp = owners[0]
    if kind == "cache":                                 # persistent: kept across tiles (never released)
        return Cache(f"{label} In{node.inputs[0].index} broadcast", id(node))
    if kind == "MTE2" and node.inputs[0].index in scalar_inputs:
        return Buffer(f"{label} In{node.inputs[0].index} scalar", (Key(id(node), pp),))
    if kind in ("MTE2", "MTE3"):
        what = f"In{node.inputs[0].index}" if kind == "MTE2" else "out"
        return Queue(f"{label} {what} {'pong' if pp else 'ping'}", Key(id(node), pp), kind == "MTE2")
    return Buffer(f"{label} temp", tuple(Key(id(user)) for _, user, _ in owners))   # shared by every node given it


# --- the walk: one step per node of funlist -------------------------------------------------------------------
@dataclass(frozen=True)
class CopyIn:
    """GM input ``input`` copied into this step's ping/pong MTE2 queue every tile."""
    step: int
    node: Node
    input: int


@dataclass(frozen=True)
class ScalarIn:
    """A GM input of one element (``scalarFlag``): read once, ``Duplicate``-d into its ping and pong TBufs on the
    first two tiles, which keep it."""
    step: int
    node: Node
    input: int


@dataclass(frozen=True)
class CopyBrc:
    """UB-broadcast: the input's window copied into the MTE2 queue and ``Broadcast`` into its persistent slot."""
    step: int
    node: Node
    input: int


@dataclass(frozen=True)
class Compute:
    """One AscendC instruction on the tile. ``inputs``: the steps it reads; ``deques``: the copy-ins it DeQues
    first (V waits for MTE2 at a copy-in's first reader); ``frees``: the copy-ins it releases (their last reader);
    ``queued``: its result goes to a ping/pong MTE3 queue (a CopyOut reads it), else to its temp TBuf."""
    step: int
    node: Node
    inputs: tuple[int, ...]
    deques: tuple[int, ...]
    frees: tuple[int, ...]
    queued: bool


@dataclass(frozen=True)
class CopyOut:
    """The result of step ``source`` (in its MTE3 queue) copied to GM output ``output``."""
    step: int
    node: Node
    source: int
    output: int


Step = CopyIn | ScalarIn | CopyBrc | Compute | CopyOut


def walk(dag: Dag, layout: list[Queue | Cache | Buffer], scalar_inputs: frozenset[int]) -> list[Step]:
    """``dag.funlist`` as steps, step k for node k."""
    queued = {b.key for b in layout if isinstance(b, Queue)}
    cached = {b.node for b in layout if isinstance(b, Cache)}
    pos = {id(n): k for k, n in enumerate(dag.funlist)}
    steps: list[Step] = []
    copy_ins: set[int] = set()                          # steps whose tile a compute step must DeQue
    first_read: set[int] = set()
    for k, node in enumerate(dag.funlist):
        if node.op == "CopyInBrc":
            idx = node.inputs[0].index
            kind = CopyBrc if id(node) in cached else ScalarIn if idx in scalar_inputs else CopyIn
            if kind is CopyIn:
                copy_ins.add(k)
            steps.append(kind(k, node, idx))
        elif node.op == "CopyOut":
            steps.append(CopyOut(k, node, pos[id(node.inputs[0])], node.attrs["index"]))
        else:
            inputs = tuple(pos[id(i)] for i in node.node_inputs)
            once = tuple(dict.fromkeys(inputs))
            frees = tuple(j for j in once if j in copy_ins and dag.last_use[id(dag.funlist[j])] == k)
            deques = tuple(j for j in once if j in copy_ins and j not in first_read)
            first_read.update(deques)
            steps.append(Compute(k, node, inputs, deques, frees, Key(id(node)) in queued))
    return steps

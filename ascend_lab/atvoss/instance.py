"""The template's instantiation: the tile body compiled once per DAG, family and scalar inputs, bound per core.

``BroadcastSch<schMode, Dag>`` is a C++ template that the compiler turns into straight-line code for each DAG.
:class:`Instance` is that step's analogue: the plan (:mod:`.plan`), the source written from it (:mod:`.emit`) and
the compiled ``BroadcastSch`` factory. :meth:`Instance.bind` lays out one core's pool and calls the factory with
it, which returns the tile body the schedule's loops call -- the simulator's only way of running a DAG.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..ascendc import VECCALC, VECIN, VECOUT, GlobalTensor, TBuf, TPipe, TQue, generated
from ..ascendc.core import current
from ..ascendc.numerics import scalar as typed_scalar
from .dag import Const, Dag, Node, Var
from .emit import generate, text
from .plan import Buffer, Cache, Compute, CopyBrc, CopyIn, Key, Queue, ScalarIn, family_of, pool_layout, walk

__all__ = ["Instance", "Pool", "instance", "instantiation"]


class Pool:
    """The DAG's buffer pool on one core: one ``slot_bytes`` buffer per entry of the layout, in UB order."""

    def __init__(self, layout: list[Queue | Cache | Buffer], slot_bytes: int):
        self.pipe = TPipe()
        self.ques: dict[Key, TQue] = {}                 # a ping or pong copy slot: a one-block queue
        self.bufs: dict[Key, TBuf] = {}                 # temps and scalar-input slots
        self.cache: dict[int, TBuf] = {}                # UB-broadcast: id(CopyInBrc) -> its broadcast tile
        for b in layout:
            if isinstance(b, Queue):
                q = self.ques[b.key] = TQue(VECIN if b.copy_in else VECOUT, 1, name=b.name)
                self.pipe.InitBuffer(q, 1, slot_bytes)
                continue
            buf = TBuf(VECCALC, name=b.name)
            self.pipe.InitBuffer(buf, slot_bytes)
            if isinstance(b, Cache):
                self.cache[b.node] = buf
            else:
                self.bufs.update(dict.fromkeys(b.keys, buf))


class Instance:
    """One instantiation: its layout, steps, source and compiled ``BroadcastSch`` factory."""

    def __init__(self, dag: Dag, family: str, scalar_inputs: frozenset[int]):
        self.dag = dag
        self.layout = pool_layout(dag, scalar_inputs, family == "ub-broadcast")
        self.steps = walk(dag, self.layout, scalar_inputs)
        self.source, names = generate(dag, family, self.layout, self.steps)
        # library code: a finding names no line of it; a traceback shows its lines
        namespace = generated.load(self.source, f"BroadcastSch {family} {text(dag.name)} scalars "
                                   f"{sorted(scalar_inputs)}", {"__name__": f"{__name__}.instance", **names})
        self.factory = namespace["BroadcastSch"]
        self.duplicates = [s for s in self.steps if isinstance(s, Compute) and s.node.op == "Duplicate"]
        self._values_of: Any = None                     # the last tiling and its Duplicate values
        self._values: dict[int, Any] = {}
        # what each step binds, worked out once (a launch binds every core): its ping/pong queues; its cache, its
        # ping/pong scalar TBufs or its temp TBuf
        self._queues = [(s.step, Key(id(s.node)), Key(id(s.node), 1)) for s in self.steps
                        if isinstance(s, (CopyIn, CopyBrc)) or (isinstance(s, Compute) and s.queued)]
        self._caches = [(s.step, id(s.node)) for s in self.steps if isinstance(s, CopyBrc)]
        self._pairs = [(s.step, Key(id(s.node)), Key(id(s.node), 1)) for s in self.steps if isinstance(s, ScalarIn)]
        self._temps = [(s.step, Key(id(s.node))) for s in self.steps if isinstance(s, Compute) and not s.queued]

    def bind(self, slot_bytes: int, ins: list[GlobalTensor], outs: list[GlobalTensor], td: Any) -> Any:
        """This core's tile body: its pool laid out, the factory called with the pool and GM tensors."""
        pool = Pool(self.layout, slot_bytes)
        ques, bufs = pool.ques, pool.bufs
        que = {k: (ques[ping], ques[pong]) for k, ping, pong in self._queues}
        buf: dict[int, Any] = {k: pool.cache[node] for k, node in self._caches}
        buf.update((k, (bufs[ping], bufs[pong])) for k, ping, pong in self._pairs)
        buf.update((k, bufs[key]) for k, key in self._temps)
        return self.factory(current(), ins, outs, que, buf, self.values(td))

    def values(self, td: Any) -> dict[int, Any]:
        """Each Duplicate step's value as ``Duplicate`` converts it (``T(value)``), a ``Var`` read from the
        tiling's scalarData. Every core of a launch reads the same struct, so the last one is kept."""
        if self._values_of is not td:
            self._values = {s.step: typed_scalar(s.node.dtype, _value(s.node, td)) for s in self.duplicates}
            self._values_of = td
        return self._values


def _value(node: Node, td: Any) -> Any:
    v = node.inputs[0]
    return td.scalar(v.index, v.dtype) if isinstance(v, Var) else v.value if isinstance(v, Const) else v


_instances: dict[tuple[Dag, str, frozenset[int]], Instance] = {}


def instance(dag: Dag, family: str, scalar_inputs: frozenset[int]) -> Instance:
    """``dag`` instantiated on a schedule family with these scalar inputs: generated and compiled once, as the
    compiler instantiates ``BroadcastSch<schMode, Dag>`` once per DAG (a few are kept)."""
    key = (dag, family, scalar_inputs)
    hit = _instances.get(key)
    if hit is None:
        if len(_instances) >= 64:
            _instances.clear()
        hit = _instances[key] = Instance(dag, family, scalar_inputs)
    return hit


def instantiation(dag: Dag, sch_mode: int, scalar_inputs: Iterable[int] = ()) -> str:
    """The Python source the simulator runs for every tile of ``dag`` on schedule ``sch_mode`` (``scalar_inputs``:
    the GM inputs of one element, ``scalarFlag``, which only the one-dim schedules 201/202 have).

    ``BroadcastSch<schMode, Dag>`` is a C++ template: the compiler turns each instantiation into straight-line
    code for its DAG. This is that step's analogue: the walk of ``dag.funlist`` written out once, one AscendC
    call per line, compiled once and bound to each core's buffers."""
    family = family_of(sch_mode)
    scalars = frozenset(int(i) for i in scalar_inputs)
    if scalars and family != "one-dim":
        raise ValueError(f"scalar inputs (scalarFlag) exist only on the one-dim schedules 201/202, not {sch_mode}")
    if not scalars <= set(range(dag.input_size)):
        raise ValueError(f"scalar_inputs must be GM input indexes 0..{dag.input_size - 1}, got {sorted(scalars)}")
    return instance(dag, family, scalars).source

"""A kernel as a DAG of nodes, as CANN's atvoss template declares it (``atvoss/util/dag.h``, ``vec.h``).

An ops-nn DAG header binds nodes to their inputs and names the outputs::

    using OpCopyInSelf = Bind<Vec::CopyInBrc<U>, Placeholder::In1<U>>;
    using SelfF        = Bind<Vec::Cast<float, U, 0>, OpCopyInSelf>;
    using Compare      = Bind<Vec::Compare<uint8_t, float, LE>, SelfF, data_threshold>;
    ...
    using OpCopyOut    = Bind<Vec::CopyOut<U>, Placeholder::Out0<U>, SelectCast>;
    using OpDag        = DAGSch<Elems<OpCopyOut>, void, MemOptCfg<MemLevel::LEVEL_2>>;

Here the same DAG is a few Python calls (:func:`CopyInBrc`, :func:`Cast`, :func:`Compare`, ...), and
:class:`Dag` derives what the C++ templates compute at compile time (kernel_flavours.md §3.2, §3.3):

* ``funlist`` -- the nodes in execution order, a post-order walk from the outputs (each input before the
  node that reads it, inputs in argument order, every node once); a Cast whose source and destination
  types are equal is removed (``IsCastNoOp``), so one declaration serves every dtype;
* ``buffer_num(nddma)`` -- the live-buffer count ("aliveNum", MemOptCfg LEVEL_2):
  ``tempCalc + 2 * #GM inputs + 2 * #outputs not fed directly by a CopyIn``, where ``tempCalc`` is the
  peak number of live intermediates while walking ``funlist`` (a node's output is live from the node to
  its last reader; nodes that feed a CopyOut and CopyIn nodes have slots of their own) plus each node's
  TempSize (CopyInBrc's 1, ignored in the NDDMA/one-dim modes);
* ``slots`` -- the buffer slot of every node: MTE2 pings (one per CopyIn), MTE3 pings (one per output),
  the temps, MTE2 pongs, MTE3 pongs (``dag.h:387-430``); temps are handed out first-in first-out (a
  freed slot goes to the back of the queue), which reproduces every slot table of §3.2;
* ``max_dtype_bytes`` / ``min_dtype_bytes`` -- the widest and narrowest element over all nodes (the
  Compare's uint8 mask makes the minimum 1).

Nothing here runs anything: :mod:`.schedule` walks ``funlist`` on the simulated cores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..dtypes import to_numpy

__all__ = [
    "CMP_LE", "CAST_NONE", "CAST_RINT", "SEL_TENSOR", "Const", "Dag", "In", "Node", "Var",
    "Cast", "Compare", "CopyInBrc", "CopyOut", "Duplicate", "Mul", "Select",
]

#: AscendC enum values the DAG headers use (AD ``kernel_utils_mode.h:94-118``; OB ``util/vec.h``).
CMP_LE = 3
SEL_TENSOR = 2
CAST_NONE = 0
CAST_RINT = 1
_CMP_NAMES = {0: "LT", 1: "GT", 2: "EQ", 3: "LE", 4: "GE", 5: "NE"}
_CAST_NAMES = {0: "CAST_NONE", 1: "CAST_RINT"}
MASK = np.dtype(np.uint8)


def _dt(dtype: Any) -> np.dtype:
    """A numpy dtype from a numpy/ml_dtypes type, a name or an aclDataType."""
    if isinstance(dtype, np.dtype):
        return dtype
    try:
        return np.dtype(dtype)
    except TypeError:
        return to_numpy(dtype)


def _short(dt: np.dtype) -> str:
    return {"float16": "half", "float32": "float"}.get(dt.name, dt.name)


@dataclass(frozen=True)
class In:
    """``Placeholder::In<i><T>``: GM input ``index`` of the kernel (In0 = the first tensor argument)."""
    index: int
    dtype: np.dtype

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _dt(self.dtype))

    def __repr__(self) -> str:
        return f"In{self.index}<{_short(self.dtype)}>"


@dataclass(frozen=True)
class Var:
    """``Placeholder::Var<T, i>``: a scalar the host tiling stores in ``scalarData`` (``SetScalar``)."""
    index: int
    dtype: np.dtype

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _dt(self.dtype))

    def __repr__(self) -> str:
        return f"Var{self.index}<{_short(self.dtype)}>"


@dataclass(frozen=True)
class Const:
    """``MAKE_CONST(T, v)``: a compile-time constant."""
    value: float
    dtype: np.dtype

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _dt(self.dtype))

    def __repr__(self) -> str:
        return f"{self.value!r}"


@dataclass(eq=False)
class Node:
    """One ``Bind<Vec::Op<...>, inputs...>``: ``op`` with its output dtype, inputs and template values."""
    op: str
    dtype: np.dtype
    inputs: tuple[Any, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    @property
    def node_inputs(self) -> tuple[Node, ...]:
        """The inputs that are nodes (not placeholders or constants)."""
        return tuple(i for i in self.inputs if isinstance(i, Node))

    def label(self) -> str:
        """How the node reads in a table or figure: ``Compare LE<float> -> uint8``."""
        a = self.attrs
        if self.op == "CopyInBrc":
            return f"CopyInBrc {self.inputs[0]!r}"
        if self.op == "CopyOut":
            return f"CopyOut Out{a['index']}<{_short(self.dtype)}>"
        if self.op == "Cast":
            src = self.inputs[0].dtype
            return f"Cast {_short(src)}->{_short(self.dtype)} {_CAST_NAMES.get(a['mode'], a['mode'])}"
        if self.op == "Compare":
            return f"Compare {_CMP_NAMES[a['mode']]}<{_short(self.inputs[0].dtype)}> -> uint8 mask"
        if self.op == "Duplicate":
            return f"Duplicate<{_short(self.dtype)}> {self.inputs[0]!r}"
        if self.op == "Select":
            return f"Select mode {a['mode']}<{_short(self.dtype)}>"
        return f"{self.op}<{_short(self.dtype)}>"

    def __repr__(self) -> str:
        return self.name or self.label()


def CopyInBrc(src: In, name: str = "") -> Node:
    """``Vec::CopyInBrc<T>``: GM -> UB, broadcasting the input to the output's shape when it is smaller."""
    if not isinstance(src, In):
        raise TypeError(f"CopyInBrc reads a GM input placeholder In(i, dtype), got {src!r}")
    return Node("CopyInBrc", src.dtype, (src,), name=name)


def CopyOut(index: int, src: Node, name: str = "") -> Node:
    """``Vec::CopyOut<T>`` with ``Placeholder::Out<index>``: UB -> GM output ``index``."""
    _need_node("CopyOut", src)
    return Node("CopyOut", src.dtype, (src,), {"index": int(index)}, name=name)


def Cast(dtype: Any, src: Node, mode: int = CAST_NONE, name: str = "") -> Node:
    """``Vec::Cast<Dst, Src, mode>`` (0 = CAST_NONE, 1 = CAST_RINT). A no-op Cast vanishes from the DAG."""
    _need_node("Cast", src)
    return Node("Cast", _dt(dtype), (src,), {"mode": int(mode)}, name=name)


def Duplicate(dtype: Any, value: Var | Const | float, name: str = "") -> Node:
    """``Vec::Duplicate<T>``: a tile filled with a Var (from the tiling) or a constant."""
    dt = _dt(dtype)
    if not isinstance(value, (Var, Const)):
        value = Const(float(value), dt)
    return Node("Duplicate", dt, (value,), name=name)


def Compare(src0: Node, src1: Node, mode: int = CMP_LE, name: str = "") -> Node:
    """``Vec::Compare<uint8_t, T, mode>``: tensor-tensor compare into a uint8 bit-mask (bit i for element i)."""
    _need_node("Compare", src0, src1)
    if src0.dtype != src1.dtype:
        raise TypeError(f"Compare operands must share a dtype, got {src0.dtype} and {src1.dtype}")
    if int(mode) not in _CMP_NAMES:
        raise ValueError(f"Compare mode must be one of {sorted(_CMP_NAMES)} (LT GT EQ LE GE NE), got {mode!r}")
    return Node("Compare", MASK, (src0, src1), {"mode": int(mode)}, name=name)


def Select(mask: Node, src0: Node, src1: Node, mode: int = SEL_TENSOR, name: str = "") -> Node:
    """``Vec::Select<uint8_t, T, 2>``: mask bit 1 takes src0, bit 0 takes src1 (tensor-tensor mode)."""
    _need_node("Select", mask, src0, src1)
    if mask.dtype != MASK:
        raise TypeError(f"Select's first input must be a Compare mask (uint8), got {mask.dtype}")
    if src0.dtype != src1.dtype:
        raise TypeError(f"Select operands must share a dtype, got {src0.dtype} and {src1.dtype}")
    if int(mode) != SEL_TENSOR:
        raise ValueError(f"the template's Select nodes use mode {SEL_TENSOR} (tensor-tensor), got {mode!r}")
    return Node("Select", src0.dtype, (mask, src0, src1), {"mode": int(mode)}, name=name)


def Mul(src0: Node, src1: Node, name: str = "") -> Node:
    """``Vec::Mul<T>``: elementwise product, rounded to T."""
    _need_node("Mul", src0, src1)
    if src0.dtype != src1.dtype:
        raise TypeError(f"Mul operands must share a dtype, got {src0.dtype} and {src1.dtype}")
    return Node("Mul", src0.dtype, (src0, src1), name=name)


def _need_node(op: str, *xs: Any) -> None:
    for x in xs:
        if not isinstance(x, Node):
            raise TypeError(f"{op} takes DAG nodes as inputs (CopyInBrc(...), Cast(...), ...), got {x!r}")


@dataclass(frozen=True)
class Slot:
    """Where a node's output lives: a ping/pong pair (copy-in, copy-out) or one shared temp slot."""
    kind: str                      # "MTE2", "MTE3" or "temp"
    ping: int
    pong: int | None = None

    def __str__(self) -> str:
        return f"{self.ping}/{self.pong}" if self.pong is not None else str(self.ping)


class Dag:
    """``DAGSch<Outputs, void, MemOptCfg<LEVEL_2>>``: the nodes, their order, live buffers and slots."""

    def __init__(self, outputs: Sequence[Node] | Node, name: str = "Dag"):
        outs = (outputs,) if isinstance(outputs, Node) else tuple(outputs)
        if not outs or any(not isinstance(o, Node) or o.op != "CopyOut" for o in outs):
            raise TypeError("a Dag is declared by its CopyOut nodes: Dag([CopyOut(0, node)])")
        self.name = name
        self.outputs = outs
        self.funlist: tuple[Node, ...] = self._walk(outs)
        ins = sorted({n.inputs[0].index for n in self.funlist if n.op == "CopyInBrc"})
        if ins != list(range(len(ins))):
            raise ValueError(f"{name}: the GM inputs must be In0..In{len(ins) - 1}, got {ins}")
        for o in outs:
            if o.inputs[0].op == "CopyInBrc":
                raise ValueError(f"{name}: a CopyOut fed directly by a CopyIn is not modelled (no compute node)")

    # --- structure -------------------------------------------------------------------------------------
    @staticmethod
    def _walk(outs: Iterable[Node]) -> tuple[Node, ...]:
        order: list[Node] = []
        seen: dict[int, Node] = {}

        def resolve(n: Node) -> Node:
            # IsCastNoOp: a Cast to its own source type is the source itself
            while n.op == "Cast" and n.inputs[0].dtype == n.dtype:
                n = n.inputs[0]
            return n

        def visit(n: Node) -> Node:
            n = resolve(n)
            key = id(n)                  # the declared node: a node rebuilt below must not be visited twice
            if key in seen:
                return seen[key]
            ins = tuple(visit(i) if isinstance(i, Node) else i for i in n.inputs)
            if ins != n.inputs:
                n = Node(n.op, n.dtype, ins, dict(n.attrs), n.name)
            seen[key] = n
            order.append(n)
            return n

        for o in outs:
            visit(o)
        return tuple(order)

    @cached_property
    def copy_ins(self) -> tuple[Node, ...]:
        """CopyInBrc nodes in execution order (MTE2 slots)."""
        return tuple(n for n in self.funlist if n.op == "CopyInBrc")

    @cached_property
    def copy_outs(self) -> tuple[Node, ...]:
        return tuple(n for n in self.funlist if n.op == "CopyOut")

    @cached_property
    def out_feeders(self) -> tuple[Node, ...]:
        """The nodes whose result a CopyOut writes (MTE3 slots)."""
        return tuple(o.inputs[0] for o in self.copy_outs)

    @property
    def input_size(self) -> int:
        """``InputSize``: GM inputs."""
        return len(self.copy_ins)

    @property
    def output_size(self) -> int:
        """``OutputSize``: GM outputs."""
        return len(self.copy_outs)

    @cached_property
    def var_size(self) -> int:
        """``VarSize``: scalars read from the tiling (a DAG with one cannot take the 202 schedule)."""
        return len({i.index for n in self.funlist for i in n.inputs if isinstance(i, Var)})

    @property
    def copy_brc_size(self) -> int:
        """``CopyBrcSize``: CopyInBrc nodes."""
        return len(self.copy_ins)

    @cached_property
    def vars(self) -> tuple[Var, ...]:
        found: dict[int, Var] = {}
        for n in self.funlist:
            for i in n.inputs:
                if isinstance(i, Var):
                    found.setdefault(i.index, i)
        return tuple(found[k] for k in sorted(found))

    @cached_property
    def max_dtype_bytes(self) -> int:
        """``MaxDtypeBytes``: the widest element any node produces."""
        return max(n.dtype.itemsize for n in self.funlist)

    @cached_property
    def min_dtype_bytes(self) -> int:
        """``MinDtypeBytes``: the narrowest (1 whenever a Compare mask is in the DAG)."""
        return min(n.dtype.itemsize for n in self.funlist)

    @cached_property
    def last_use(self) -> dict[int, int]:
        """id(node) -> index in ``funlist`` of its last reader."""
        last: dict[int, int] = {}
        for k, n in enumerate(self.funlist):
            for i in n.node_inputs:
                last[id(i)] = k
        return last

    def _is_temp(self, n: Node) -> bool:
        return n.op not in ("CopyInBrc", "CopyOut") and not any(n is f for f in self.out_feeders)

    # --- live buffers and slots ----------------------------------------------------------------------
    @cached_property
    def _temps(self) -> tuple[int, dict[int, int]]:
        """(peak live intermediates, id(node) -> temp index) by the first-in first-out slot walk."""
        live: set[int] = set()
        peak = 0
        for n in self.funlist:
            if self._is_temp(n):
                live.add(id(n))
                peak = max(peak, len(live))
            self._free_inputs(n, live)
        free = list(range(peak))
        slot: dict[int, int] = {}
        held: set[int] = set()
        for n in self.funlist:
            if self._is_temp(n):
                slot[id(n)] = free.pop(0)
                held.add(id(n))
            for dead in self._free_inputs(n, held):
                free.append(slot[dead])
        return peak, slot

    def _free_inputs(self, n: Node, live: set[int]) -> list[int]:
        k = self.funlist.index(n)
        dead = []
        for i in n.node_inputs:
            if id(i) in live and self.last_use[id(i)] == k and id(i) not in dead:
                live.discard(id(i))
                dead.append(id(i))
        return dead

    @property
    def temp_calc(self) -> int:
        """Peak number of live intermediates (no CopyIn, no node feeding a CopyOut)."""
        return self._temps[0]

    def buffer_num(self, nddma: bool = True) -> int:
        """``GetBufferNum<nddma, true>()``: the aliveNum the tiling divides UB by.

        ``nddma=True`` for the one-dim and NDDMA schedules (and the kernel's pool), ``False`` for the
        UB-broadcast schedules, where each CopyInBrc keeps one more temp (its TempSize)."""
        extra = 0 if nddma else self.copy_brc_size
        return self.temp_calc + extra + 2 * self.input_size + 2 * len(self.out_feeders)

    @cached_property
    def slots(self) -> dict[int, Slot]:
        """id(node) -> :class:`Slot`, numbered as ``dag.h`` orders the pool."""
        n_in, n_out, peak = self.input_size, len(self.out_feeders), self.temp_calc
        base_pong = n_in + n_out + peak
        out: dict[int, Slot] = {}
        for k, n in enumerate(self.copy_ins):
            out[id(n)] = Slot("MTE2", k, base_pong + k)
        for k, n in enumerate(self.out_feeders):
            out[id(n)] = Slot("MTE3", n_in + k, base_pong + n_in + k)
        for nid, t in self._temps[1].items():
            out[nid] = Slot("temp", n_in + n_out + t)
        return out

    @cached_property
    def ub_broadcast_slots(self) -> dict[int, Slot]:
        """The slots of the UB-broadcast schedules (``GetBufferIds<false, true>``, the pool of
        ``GetBufferNum<false, true>`` = :meth:`buffer_num` ``(nddma=False)``): each CopyInBrc keeps its ping/pong
        MTE2 pair for the raw copy and gets a *persistent* temp for its broadcast result (:attr:`cache_slots`),
        laid out after the MTE3 pings and before the other temps (``dag.h:390-429``, ``buffer.h`` AllocMte2 /
        AllocTempBuffer with cache_brc: persistent lists first, never released)."""
        n_in, n_out, peak, n_brc = self.input_size, len(self.out_feeders), self.temp_calc, self.copy_brc_size
        base_pong = n_in + n_out + n_brc + peak
        out: dict[int, Slot] = {}
        for k, n in enumerate(self.copy_ins):
            out[id(n)] = Slot("MTE2", k, base_pong + k)
        for k, n in enumerate(self.out_feeders):
            out[id(n)] = Slot("MTE3", n_in + k, base_pong + n_in + k)
        for nid, t in self._temps[1].items():
            out[nid] = Slot("temp", n_in + n_out + n_brc + t)
        return out

    @cached_property
    def cache_slots(self) -> dict[int, Slot]:
        """UB-broadcast: id(CopyInBrc) -> the persistent temp holding its broadcast tile (kept across tiles, so an
        input broadcast along the split axis is copied and expanded only when the outer index moves)."""
        n_in, n_out = self.input_size, len(self.out_feeders)
        return {id(n): Slot("cache", n_in + n_out + k) for k, n in enumerate(self.copy_ins)}

    def slot_of(self, node: Node) -> Slot | None:
        return self.slots.get(id(node))

    def table(self, nddma: bool = True) -> list[dict[str, Any]]:
        """One row per node in execution order: index, node, slot (as the §3.2 tables print them). With
        ``nddma=False`` the UB-broadcast layout: a CopyInBrc reads "0/9 -> 3" (MTE2 ping/pong, then the
        persistent slot its broadcast result lives in)."""
        slots = self.slots if nddma else self.ub_broadcast_slots
        rows = []
        for k, n in enumerate(self.funlist):
            s = slots.get(id(n))
            text = "—" if s is None else str(s)
            if not nddma and id(n) in self.cache_slots:
                text += f" -> {self.cache_slots[id(n)]}"
            rows.append({"#": k, "node": n.label(), "slot": text,
                         "inputs": [self.funlist.index(i) for i in n.node_inputs]})
        return rows

    def __repr__(self) -> str:
        return (f"Dag({self.name}: {len(self.funlist)} nodes, BufferNum {self.buffer_num()}, "
                f"MaxDtypeBytes {self.max_dtype_bytes}, MinDtypeBytes {self.min_dtype_bytes})")

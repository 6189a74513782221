"""The compile-time half of the TBE schedules: how many tile-sized tensors coexist in UB, and the extra UB.

CANN 8.1.RC1 ships the schedules as Python (``python/site-packages/tbe/dsl/unify_schedule/vector/``, cited below as
``elewise_schedule.py`` and ``broadcast_schedule.py``). Both walk the compute graph once, depth first from the
output, keeping a *dependent map* (every computed tensor whose consumers have not all run yet), and take the largest
number of tensors alive at any node: that is ``coexist``, the number of equal slices UB is cut into. On the way they
count bytes the instructions need besides those slices (``extra_ub``). This module reproduces that walk for the
nodes of :mod:`.dsl` (``storage_bound``); :mod:`.schedule` turns the result into ``maxUb``/``maxUbDb``.

The walk sees the graph as TVM holds it, which differs from :class:`~.dsl.Compute` in two places (``tbe/dsl/compute/
math.py``): an fp16 ``vcmpsel`` is built as a ``vcmpv`` node and a ``vsel`` node (fp32 keeps one ``cmpsel`` node,
``_vcmpsel_*_compute``), and a ``vsel`` on a 'bool' condition first casts it to fp16 and compares it with 0
(``vsel``, :1905-1934). :func:`tvm_nodes` makes those nodes; each gets the instruction tag TVM gives it.

Not modelled (none arises for the descriptions here, dynamic shapes): the one-shape optimisation (tensors whose dims
are all 1), the int64 and complex instruction tables, integer-to-integer casts (``CAST_EXTRA_NODE_AND_UB``), n-buffer
(only Add/Mul bf16), 5HD padding. For the broadcast schedule the terms that depend on the tiling case (store align,
last-axis alignment, vnchwconv, compute root) are taken for the general case: every tensor broadcast node is an
unaligned ``unified_broadcast`` that needs one more slice. The 'bool' ``vcmp`` is walked as its ``vcmpv`` node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..base.platform import SocInfo


class Tensor(Protocol):
    """What the walk reads of a :class:`.dsl.Tensor` (named here: :mod:`.dsl` imports this module)."""
    op: str
    dtype: str
    args: tuple[Any, ...]
    attrs: dict[str, Any]
    name: str

    @property
    def inputs(self) -> tuple[Tensor, ...]: ...


class Compute(Protocol):
    """What the walk reads of a :class:`.dsl.Compute`."""
    nodes: tuple[Tensor, ...]
    output: Tensor
    inputs: tuple[Tensor, ...]

__all__ = ["BLOCK_BYTES", "Node", "Step", "StorageBound", "generation", "storage_bound", "tvm_nodes"]

#: ``ubblock_size`` of every TBE SoC's ini: the unit of the extra UB and of the slices.
BLOCK_BYTES = 32
#: ``constants.py`` DST_SRC_NO_REUSE_SET (compare, select and cast instructions), by tag prefix.
_NO_REUSE_PREFIXES = ("elewise_binary_vcmpv_", "elewise_binary_cmpsel_")
_NO_REUSE = {"elewise_multiple_sel", "elewise_single_cast", "elewise_single_ceil", "elewise_single_floor",
             "elewise_single_trunc", "elewise_single_round", "elewise_single_round_d"}
#: ``constants.py`` SUPPORT_SCALAR_INSNS: instructions that take a scalar operand in place of a broadcast tensor.
_SUPPORT_SCALAR = {"elewise_binary_add", "elewise_binary_sub", "elewise_binary_mul", "elewise_binary_div",
                   "elewise_binary_and", "elewise_binary_or", "elewise_binary_min", "elewise_binary_max",
                   "elewise_single_log", "elewise_single_exp", "elewise_single_rec", "elewise_single_abs",
                   "elewise_single_relu", "elewise_single_not", "elewise_single_sqrt", "elewise_single_rsqrt",
                   "elewise_single_cast", "elewise_single_ceil", "elewise_single_floor", "elewise_single_trunc",
                   "elewise_single_round", "elewise_single_round_d",
                   *(f"elewise_binary_vcmpv_{op}" for op in ("gt", "ge", "lt", "le", "eq", "ne"))}
_VECTOR_SCALAR = {"elewise_binary_add", "elewise_binary_mul"}
#: ``NEED_TEMP_SPACE_INSNS``: a block to hold the scalar.
_NEED_TEMP_SPACE = {"elewise_single_VS_max", "elewise_single_VS_min"}
#: ``NEED_SPACE_WITH_DIFF_TYPE``: the same on v100 for int32.
_NEED_SPACE_S32 = {"elewise_single_VS_add", "elewise_single_VS_mul"}
#: ``ELEWISE_BROADCAST_INSNS``.
_ELEWISE_BROADCAST = {"one_shape_broadcast", "one_rank_broadcast", "broadcast"}
#: Tensor operands vcmp, vsel and vcmpsel read from UB; each missing one is a scalar that takes a block
#: (``VCMP_INPUT_NUMBER``, ``VSEL_INPUT_NUMBER``, ``VCMPSEL_INPUT_NUMBER``).
_CMP_SEL_OPERANDS = {"vcmpv": 2, "sel": 3, "cmpsel": 4}
#: The tags of :mod:`.dsl`'s one-to-one nodes (``tbe/dsl/compute/math.py``, ``cast.py``, ``nn.py``).
_TAGS = {"vabs": "elewise_single_abs", "vmuls": "elewise_single_VS_mul", "vadds": "elewise_single_VS_add",
         "vmins": "elewise_single_VS_min", "vmaxs": "elewise_single_VS_max", "vmul": "elewise_binary_mul",
         "vmin": "elewise_binary_min", "vmax": "elewise_binary_max", "cast": "elewise_single_cast",
         "round": "elewise_single_round", "vsel": "elewise_multiple_sel"}
_BYTES = {"float16": 2, "float32": 4, "bfloat16": 2, "int8": 1, "uint8": 1, "int32": 4, "int64": 8, "bool": 1,
          "uint1": 0.125}


@dataclass(eq=False)
class Node:
    """One tensor of the graph the schedule walks: its instruction tag, dtype and tensor operands."""
    tag: str
    dtype: str
    inputs: tuple[Node, ...] = ()
    consumers: list[Node] = field(default_factory=list)
    name: str = ""

    @property
    def kind(self) -> str:
        """"vcmpv", "sel", "cmpsel" or the tag (what ``_correct_ub_size_by_cmp_sel`` asks)."""
        if self.tag.startswith("elewise_binary_vcmpv_"):
            return "vcmpv"
        if self.tag.startswith("elewise_binary_cmpsel_"):
            return "cmpsel"
        return "sel" if self.tag == "elewise_multiple_sel" else self.tag


@dataclass(frozen=True)
class Step:
    """One node of the walk, for the book: the tensors alive (dependent map) when it is computed, its count and
    the extra bytes it adds."""
    name: str
    tag: str
    alive: tuple[str, ...]
    count: int
    extra: int


@dataclass(frozen=True)
class StorageBound:
    """What ``_calc_storage_bound`` leaves: ``coexist`` (``_coexisting_quantity``, with the +1 for two or more inputs)
    and ``extra_ub`` bytes (``_extra_ub_size``; ``_tmp_ub_size`` in the broadcast schedule), per schedule; ``steps``
    the walk node by node."""
    schedule: str
    coexist: int
    extra_ub: int
    max_dtype_bytes: int
    steps: tuple[Step, ...] = ()


def generation(soc: SocInfo) -> str:
    """``util.is_v100/is_v200/is_v220``: 'v100' (910A), 'v200' (310P), 'v220' (910B, 910_93)."""
    return {"ascend910": "v100", "ascend310p": "v200"}.get(soc.family, "v220")


def tvm_nodes(compute: Compute) -> tuple[list[Node], Node]:
    """The graph as TVM builds it for ``compute``: placeholders first, then the computed tensors; and the output."""
    made: dict[int, Node] = {}
    for i, t in enumerate(compute.nodes):
        made[id(t)] = _node(t, [made[id(a)] for a in _unique(t.inputs)])
        made[id(t)].name = t.name if t.op == "placeholder" else f"t{i}"      # Compute.describe's names
        for k, n in enumerate(made[id(t)].inputs):
            if not n.name:                                                   # a node _node added (vcmpsel fp16)
                n.name = f"t{i}.{k}"
    nodes = _reachable(made[id(compute.output)])
    for n in nodes:
        for i in n.inputs:
            i.consumers.append(n)
    return nodes, made[id(compute.output)]


def _unique(tensors: Iterable[Tensor]) -> list[Tensor]:
    """``op.input_tensors``: each operand once, in first-use order."""
    out: list[Tensor] = []
    for t in tensors:
        if all(t is not o for o in out):
            out.append(t)
    return out


def _node(t: Tensor, inputs: list[Node]) -> Node:
    """The TVM node(s) of one :mod:`.dsl` node (the last one is returned)."""
    if t.op == "placeholder":
        return Node("", t.dtype)
    if t.op == "broadcast":
        return Node("broadcast" if not inputs else "unified_broadcast", t.dtype, tuple(inputs))
    if t.op == "vcmp":
        return Node(f"elewise_binary_vcmpv_{t.attrs['operation']}", t.dtype, tuple(inputs))
    if t.op == "vcmpsel":
        op = t.attrs["operation"]
        if t.dtype == "float16":                       # math.py _vcmpsel_*_compute: vcmpv, then vsel
            cond = Node(f"elewise_binary_vcmpv_{op}", "uint1", tuple(_unique_nodes(t, inputs, (0, 1))))
            return Node("elewise_multiple_sel", t.dtype, (cond, *_unique_nodes(t, inputs, (2, 3))))
        return Node(f"elewise_binary_cmpsel_{op}", t.dtype, tuple(inputs))
    if t.op == "vsel" and inputs[0].dtype == "bool":   # math.py vsel: bool -> fp16 -> vcmpv_gt 0
        as_half = Node("elewise_single_cast", "float16", (inputs[0],))
        cond = Node("elewise_binary_vcmpv_gt", "uint1", (as_half,))
        return Node("elewise_multiple_sel", t.dtype, (cond, *inputs[1:]))
    return Node(_TAGS[t.op], t.dtype, tuple(inputs))


def _unique_nodes(t: Tensor, inputs: list[Node], positions: tuple[int, ...]) -> list[Node]:
    """The nodes of ``t``'s operands at ``positions`` that are tensors, each once."""
    by_tensor = dict(zip((id(a) for a in _unique(t.inputs)), inputs, strict=True))
    picked = [by_tensor[id(t.args[p])] for p in positions if id(t.args[p]) in by_tensor]
    return [n for k, n in enumerate(picked) if n not in picked[:k]]


def _reachable(out: Node) -> list[Node]:
    order: list[Node] = []

    def visit(n: Node) -> None:
        if n in order:
            return
        for i in n.inputs:
            visit(i)
        order.append(n)

    visit(out)
    return order


def storage_bound(compute: Compute, soc: SocInfo, schedule: str = "elewise") -> StorageBound:
    """``_calc_storage_bound`` of the elementwise (``elewise_schedule.py:717-904``) or broadcast
    (``broadcast_schedule.py:100-264``) schedule for ``compute`` built for ``soc``."""
    if schedule not in ("elewise", "broadcast"):
        raise ValueError(f"schedule must be 'elewise' or 'broadcast', got {schedule!r}")
    nodes, out = tvm_nodes(compute)
    walk = _Walk(nodes, out, generation(soc), schedule)
    coexist = walk.run()
    width = max(_BYTES[n.dtype] for n in nodes)
    return StorageBound(schedule, coexist, walk.extra, int(width), tuple(walk.steps))


class _Walk:
    """The recursive walk of both schedules (``_r_coexisting``, ``_calc_current_coexist_node``/``_space``)."""

    def __init__(self, nodes: list[Node], out: Node, gen: str, schedule: str) -> None:
        self.nodes, self.out, self.gen, self.schedule = nodes, out, gen, schedule
        self.absorbable = {n for n in nodes if n.tag == "broadcast" and n is not out
                           and all(c.tag in _SUPPORT_SCALAR for c in n.consumers)}   # _match_scalar_scene
        self.dependent: dict[Node, list[Node]] = {}
        self.extra = 0
        self.steps: list[Step] = []

    def run(self) -> int:
        """The walk from the output's operands, the output itself, then the corrections after the maximum."""
        quantities = [self.coexisting(i) for i in self.out.inputs]
        quantities.append(self.current(self.out))
        coexist = max(quantities)
        if coexist == 1:
            self.extra += BLOCK_BYTES
        if self.schedule == "elewise":
            inputs = sum(1 for n in self.nodes if n.tag == "")
            return coexist + (1 if inputs >= 2 else 0)     # "in order to improve performance, add one node"
        unaligned = any(n.tag == "unified_broadcast" for n in self.nodes)
        if coexist % 2 == 0 and self.extra < BLOCK_BYTES and unaligned:
            self.extra += BLOCK_BYTES                      # brc_need_one_block (broadcast_schedule.py:253-261)
        return coexist

    def coexisting(self, t: Node) -> int:
        """``_r_coexisting``: the most tensors alive while ``t`` and everything it needs are computed."""
        if t in self.dependent:
            return len(self.dependent)
        need = [self.coexisting(i) for i in t.inputs]
        need.append(self.current(t))
        for i in t.inputs:                                 # _refresh_dependent
            if i in self.dependent:
                self.dependent[i].remove(t)
                if not self.dependent[i]:
                    del self.dependent[i]
        self.dependent[t] = list(t.consumers)
        return max(need)

    def current(self, t: Node) -> int:
        """The tensors alive while ``t`` itself is computed; adds the extra bytes ``t`` asks for."""
        count = len(self.dependent) + self._own_slice(t)
        if self.schedule == "broadcast" and t.tag == "unified_broadcast":
            count += 1                                     # the vnchwconv slice of an unaligned broadcast (:127-131)
        extra = self._cmp_sel_blocks(t) + (BLOCK_BYTES if self._temp_block(t) or self._external(t) else 0)
        self.extra += extra
        self.steps.append(Step(t.name, t.tag or "placeholder", tuple(n.name for n in self.dependent), count, extra))
        return count

    def _own_slice(self, t: Node) -> int:
        """1 when ``t`` cannot write over an operand's slice. Elementwise: ``_dst_can_not_reuse_src`` (a placeholder,
        a compare/select/cast, or operands all still alive); broadcast: always (no ternary instruction here)."""
        if self.schedule == "broadcast":
            return 1
        no_reuse = t.tag in _NO_REUSE or t.tag.startswith(_NO_REUSE_PREFIXES)
        return int(t.tag == "" or no_reuse or all(i in self.dependent for i in t.inputs))

    def _temp_block(self, t: Node) -> bool:
        """``util.need_temp_space``: VS_max/VS_min keep their scalar in a block (VS_add/VS_mul of int32 on v100)."""
        return t.tag in _NEED_TEMP_SPACE or (self.gen == "v100" and t.tag in _NEED_SPACE_S32 and t.dtype == "int32")

    def _external(self, t: Node) -> bool:
        """``_need_external_space``: an instruction that takes a scalar where the graph has a broadcast needs a block.
        The elementwise schedule asks it of every node, the broadcast schedule only of consumers of an absorbed
        scalar broadcast."""
        absorbs = any(i in self.absorbable for i in t.inputs)
        if self.schedule == "broadcast" and not absorbs:
            return False
        if self.schedule == "elewise" and (absorbs or t.tag in _ELEWISE_BROADCAST):
            return True
        return t.tag in _SUPPORT_SCALAR - _VECTOR_SCALAR or (
            self.gen == "v100" and t.tag in _VECTOR_SCALAR and t.dtype == "int32")

    def _cmp_sel_blocks(self, t: Node) -> int:
        """``_correct_ub_size_by_cmp_sel``: a block per scalar operand of vcmp/vsel/vcmpsel; a vsel of three tensors
        takes one more on v200/v220 (elementwise) or v200 (broadcast)."""
        wanted = _CMP_SEL_OPERANDS.get(t.kind)
        if wanted is None:
            return 0
        blocks = wanted - len(t.inputs)
        gens = ("v200", "v220") if self.schedule == "elewise" else ("v200",)
        if t.kind == "sel" and len(t.inputs) == 3 and self.gen in gens:
            blocks += 1
        return BLOCK_BYTES * blocks

"""From a TBE compute description to instructions on the simulated AI Core.

TBE's ``auto_schedule`` emits CCE code; this model emits the simulator's AscendC-like instructions instead,
inside the same CopyIn -> Compute -> CopyOut pipeline an AscendC kernel has, so a TBE run has a trace, a UB
layout and a cost estimate like any other run. Per tile of ``n`` elements:

* **CopyIn**: one ``DataCopyPad`` per placeholder (exact bytes: 32-byte aligned in UB, nothing read past the
  tensor's end in GM) into a VECIN queue -- or, for an input that broadcasts (a broadcast tiling, see
  *broadcasting* below), one broadcast read of the tile's input elements (:func:`broadcast_copy`);
* **Compute**: the description's nodes in order, each a few vector instructions over the whole tile
  (table below), results in VECCALC buffers that are reused once their value is dead, the last node
  writing into the VECOUT queue;
* **CopyOut**: one ``DataCopyPad`` back to GM.

Queues have two blocks when the tiling key says double buffer (+10000) and one otherwise: TBE's schedule,
not the caller, decides double buffering. Each tile buffer holds ``roundUp(ubFactor, 128)`` elements.

The plan's instructions are :class:`Step` records (an instruction and its operands). The kernel does not loop over
them per tile: each program's **tile body** -- CopyIn, Compute and CopyOut with every call written out -- is
generated once and compiled, as TBE's compiler emits one binary per program, and the kernel calls it per tile
(``print(program.kernel_source())`` shows it). It is the only way a TBE kernel runs: the tests hold it to the
oracles, the trace and cost checks and a golden listing.

============================  ================================================================================
DSL node                      instructions
============================  ================================================================================
vmuls / vadds / vmins / vmaxs  Muls / Adds / Mins / Maxs
vmul / vmin / vmax             Mul; with a broadcast scalar operand Muls / Mins / Maxs (see *workarounds*)
broadcast (a scalar)           nothing when every user takes a scalar operand, else Duplicate
vcmp (bit)                     CompareScalar (Compare for a tensor rhs) over whole 256-byte repeats
vsel                           Select, TENSOR_SCALAR mode when the second value is a scalar, TENSOR_TENSOR
                               when both are tensors; a scalar first value: Not on the mask, then Select
vcmpsel                        CompareScalar into a mask buffer, then Select as for vsel
vabs                           CompareScalar(sign bit) + Muls(-1) + Select (see *workarounds*)
cast_to / round                Cast with the node's RoundMode (TRUNC float -> int, RINT otherwise)
============================  ================================================================================

**Broadcasting** (ELEWISE_WITH_BROADCAST; a MODEL, :mod:`.schedule` says what of it is public). The tiles cut
the *output*, fused to one dimension; an input whose fused dims (in the tiling struct) are not the output's
is read per tile as the output elements of that tile need it: element ``k`` of the tile is the input element
at ``sum(axis index * stride)``, with stride 0 on the input's broadcast axes -- a strided, repeating GM read.
The simulated AscendC API has no stride-0 ``DataCopy``, so :func:`broadcast_copy` models it here as
:func:`ascend_lab.atvoss.schedule.nddma_copy` models the NDDMA copy: the GM bounds are checked by the
simulator's own GM read checks over the span it touches, the MTE2 time is that of one copy of the distinct
bytes it reads, and the trace records a ``DataCopy`` event with those bytes. (Real TBE copies the
un-broadcast block and expands it in UB, or uses its broadcast-on-copy forms; which it picks is not
public.) The source's ``tbe.broadcast(t, shape_max)`` nodes therefore lower to nothing: a broadcast node is
its operand's buffer, already expanded by the copy-in. When a cast stands between a placeholder and its
broadcast (ThresholdGradV2D's int paths) the cast runs on the expanded tile: the same values, since an
elementwise operation commutes with broadcasting. One program serves both tilings (the copy-in reads the
tiling), as TBE's dynamic binary does for every shape of its class.

**Workarounds** (the simulated AscendC API lacks three instructions this lowering would use): there is no
``Abs``, so ``vabs`` is the sign-bit test on the integer view, ``-x`` and a bitwise Select (bit-exact, signed
zeros and infinities included; a NaN keeps its sign bit, which no consumer here can see); there is no
tensor-tensor ``Min``/``Max``, so ``vmin``/``vmax`` need one operand to be a broadcast scalar (the ReluGrad
constants are) and become Mins/Maxs (same values; the Duplicate the source's broadcast implies is not
issued); ``vmul`` by a broadcast scalar becomes Muls for the same reason of uniformity. TBE pairs ``vcmp``
and ``vsel`` per repeat through the CMPMASK register (910A's Select offers only that mode); the model
collapses each pair into one compare and one Select over the tile: same values, two instructions' cost.
The entry is marked ``kernel_api = "cce"``: the simulator then applies neither the AscendC API's limits
(910A's mode-0-only Select, Compare dtypes) nor the AscendC library's Select scratch at TMP_UB_OFFSET,
which TBE's own code does not use; dead values share buffers (the schedule's ``coexist`` budget is an
upper bound).
"""

from __future__ import annotations

import builtins
import enum
import keyword
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Adds,
    Cast,
    Compare,
    CompareScalar,
    DataCopyPad,
    DataCopyParams,
    Duplicate,
    GetBlockIdx,
    GlobalTensor,
    GmAddr,
    KernelRun,
    LocalTensor,
    Maxs,
    Mins,
    Mul,
    Muls,
    Not,
    RoundMode,
    Select,
    TBuf,
    TPipe,
    TQue,
    generated,
    sanitizer,
)
from ..ascendc import launch as _launch
from ..ascendc.core import current
from ..ascendc.generated import targets
from ..ascendc.numerics import scalar as _scalar
from ..ascendc.options import current as _options
from ..ascendc.sanitizer import REPEAT_BYTES
from ..base.log import OP_LOGW
from ..base.platform import SocInfo, get_soc
from ..dtypes import to_numpy
from ..opdev.tiling_data import GET_TILING_DATA, TilingData
from .dsl import Compute, Tensor, compile_for, storage
from .schedule import ALIGN, EMPTY_TILING_KEY, broadcast_dims, broadcast_tiling_class, double_buffered, is_broadcast

__all__ = ["Program", "TbeElewiseKernel", "broadcast_copy", "build", "make_entry", "template_args"]

_CMP = {"lt": CMPMODE.LT, "gt": CMPMODE.GT, "le": CMPMODE.LE, "ge": CMPMODE.GE, "eq": CMPMODE.EQ,
        "ne": CMPMODE.NE}
_SCALAR_FORM = {"vmul": Muls, "vmin": Mins, "vmax": Maxs}
_TENSOR_SCALAR = {"vmuls": Muls, "vadds": Adds, "vmins": Mins, "vmaxs": Maxs}
_INT_VIEW = {2: np.dtype(np.int16), 4: np.dtype(np.int32)}
_U16 = np.dtype(np.uint16)
_U8 = np.dtype(np.uint8)
#: Where an operand can be a scalar: (op, position in args) -- a broadcast scalar there is folded.
_SCALAR_OK = {("vmul", 0), ("vmul", 1), ("vmin", 0), ("vmin", 1), ("vmax", 0), ("vmax", 1), ("vcmp", 1),
              ("vsel", 1), ("vsel", 2), ("vcmpsel", 1), ("vcmpsel", 2), ("vcmpsel", 3)}
#: Nodes whose result may overwrite a dead tensor operand of the same width (elementwise, read before write).
_IN_PLACE = {"vmuls", "vadds", "vmins", "vmaxs", "vmul", "vmin", "vmax", "vsel", "vcmpsel"}


@dataclass(frozen=True)
class Slot:
    """One buffer of the plan: a per-tile queue block (``in``/``out``) or a VECCALC temporary."""
    name: str
    kind: str          # "in", "out", "tile" (VECCALC, elements of ``itemsize`` bytes) or "mask" (bits)
    itemsize: int      # bytes per element (1 for masks' bytes)
    dtype: np.dtype


def _round_up(a: int, b: int) -> int:
    return -(-a // b) * b


@dataclass(frozen=True, slots=True)
class Operand:
    """A step's tensor operand: position ``at`` in the kernel's operand list (a slot's tensor for ``at >= 0``,
    view ``-1 - at`` of :attr:`Program.views` otherwise)."""
    at: int


@dataclass(frozen=True, slots=True)
class Length:
    """A step's count operand, from the tile's element count ``n``: ``-(-n // per) * scale`` -- ``n`` itself
    (:data:`N`), whole 256-byte repeats of ``per`` elements (``Length(per, per)``) or the uint16 words of a
    bit-mask (``Length(256, 16)``)."""
    per: int = 1
    scale: int = 1

    def of(self, n: int) -> int:
        return n if self.per == 1 and self.scale == 1 else -(-n // self.per) * self.scale


N = Length()


@dataclass(frozen=True)
class Step:
    """One instruction of the plan: ``fn(*args)`` per tile, each arg an :class:`Operand`, a :class:`Length` or a
    constant (a scalar already converted to the instruction's dtype, a mode). :meth:`Program.kernel_source` writes
    the calls out as code."""
    fn: Callable[..., None]
    args: tuple[Any, ...]


@dataclass
class Program:
    """A lowered description: the buffers (:attr:`slots`, inputs first, then the output, then temporaries)
    and the instruction steps. ``listing`` is the plan as text (one line per instruction);
    :meth:`kernel_source` is the kernel's tile body as the Python the kernel runs."""
    compute: Compute
    soc: SocInfo
    slots: list[Slot] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    listing: list[str] = field(default_factory=list)
    #: operands seen as another element type than their slot's, as (slot, dtype): a step reads view ``k`` at
    #: ``bufs[-1 - k]`` (made once for a temporary, per tile for a queue block; see ``TbeElewiseKernel``)
    views: list[tuple[int, np.dtype]] = field(default_factory=list)
    #: the compiled tile bodies, by which inputs broadcast (see :meth:`kernel_source`)
    _bodies: dict[tuple[bool, ...], tuple[str, Callable[..., Any]]] = field(default_factory=dict, repr=False,
                                                                          compare=False)

    @property
    def n_inputs(self) -> int:
        return len(self.compute.inputs)

    def kernel_source(self, broadcast: Sequence[bool] | None = None) -> str:
        """The Python source of this program's tile body -- ``CopyIn``, ``Compute`` and ``CopyOut`` with the
        plan's instructions written out, bound to one kernel's queues and buffers by ``bind(self)`` -- for
        inputs read as is, or broadcast where ``broadcast[k]`` is true. It is generated and compiled once per
        program (as TBE's compiler emits one binary), and :class:`TbeElewiseKernel` runs it per tile."""
        return self._body(tuple(broadcast) if broadcast is not None else (False,) * self.n_inputs)[0]

    def _body(self, brc: tuple[bool, ...]) -> tuple[str, Callable[..., Any]]:
        body = self._bodies.get(brc)
        if body is None:
            body = self._bodies[brc] = _compile_body(self, brc)
        return body


def build(compute: Compute, soc: str | SocInfo) -> Program:
    """Plan buffers and instructions for ``compute`` (already built for ``soc``)."""
    return _Planner(compute, get_soc(soc)).p


class _Planner:
    def __init__(self, compute: Compute, soc: SocInfo):
        self.p = Program(compute, soc)
        nodes = compute.nodes
        index = {id(t): i for i, t in enumerate(nodes)}
        if compute.output.is_tensor_broadcast:
            raise NotImplementedError(f"{compute.name}: the result is a broadcast of a tensor; nothing computes it")
        self.last_use: dict[int, int] = {}
        users: dict[int, list[tuple[Tensor, int]]] = {}
        for t in nodes:
            if t.is_tensor_broadcast:        # no instruction: its users use its operand (the copy-in expanded it)
                continue
            for pos, a in enumerate(t.args):
                if isinstance(a, Tensor):
                    a = _source(a)
                    self.last_use[id(a)] = index[id(t)]
                    users.setdefault(id(a), []).append((t, pos))
        # a broadcast scalar whose every user takes a scalar there needs no buffer
        self.folded = {id(t) for t in nodes if t.is_scalar_broadcast and t is not compute.output
                       and all((u.op, pos) in _SCALAR_OK for u, pos in users.get(id(t), ()))}
        self.loc: dict[int, int] = {}
        self.free: dict[tuple[str, int], list[int]] = {}
        for i, t in enumerate(compute.inputs):
            dt = storage(t.dtype)
            self._slot(Slot(f"inQueue_{t.name}", "in", dt.itemsize, dt))
            self.loc[id(t)] = i
        out_dt = storage(compute.output.dtype)
        self.out = self._slot(Slot("outQueue", "out", out_dt.itemsize, out_dt))
        for i, t in enumerate(nodes):
            if t.op == "placeholder" or id(t) in self.folded:
                continue
            if t.is_tensor_broadcast:
                self.loc[id(t)] = self.loc[id(_source(t))]
                continue
            self._lower(i, t)

    # -- buffers ----------------------------------------------------------------------------------------
    def _slot(self, slot: Slot) -> int:
        self.p.slots.append(slot)
        return len(self.p.slots) - 1

    def _key(self, loc: int) -> tuple[str, int]:
        s = self.p.slots[loc]
        return ("mask", 1) if s.kind == "mask" else ("tile", s.itemsize)

    def _take(self, kind: str, dtype: np.dtype, avoid: Sequence[int] = ()) -> int:
        key = ("mask", 1) if kind == "mask" else ("tile", dtype.itemsize)
        pool = self.free.get(key, [])
        for k, loc in enumerate(pool):
            if loc not in avoid:
                return pool.pop(k)
        n = sum(1 for s in self.p.slots if s.kind == kind)
        name = f"mask{n}" if kind == "mask" else f"tmp{n}_{dtype.name}"
        return self._slot(Slot(name, kind, 1 if kind == "mask" else dtype.itemsize, _U8 if kind == "mask" else dtype))

    def _release(self, loc: int) -> None:
        if loc != self.out:
            self.free.setdefault(self._key(loc), []).append(loc)

    # -- operands ---------------------------------------------------------------------------------------
    def _operand(self, a: Any) -> tuple[str, Any]:
        """("scalar", value) for a scalar or a folded broadcast, else ("tensor", location)."""
        if not isinstance(a, Tensor):
            return "scalar", a
        if id(a) in self.folded:
            return "scalar", a.args[0]
        return "tensor", self.loc[id(a)]

    def _name(self, loc: int) -> str:
        return self.p.slots[loc].name

    def _at(self, loc: int, dt: np.dtype) -> int:
        """Where a step finds slot ``loc`` seen as ``dt``: the slot itself when that is its dtype (a step then
        passes the tensor as is), else a view (``Program.views``). Worked out here, once, so a step does no
        dtype test per tile."""
        if self.p.slots[loc].dtype == dt:
            return loc
        key = (loc, dt)
        if key not in self.p.views:
            self.p.views.append(key)
        return -1 - self.p.views.index(key)

    def _emit(self, text: str, fn: Callable[..., None], *args: Any) -> None:
        """One instruction: ``fn(*args)`` per tile, each arg an :class:`Operand` (a buffer), a :class:`Length`
        (the tile's element count, or its repeats) or a constant; ``text`` is its line in the listing."""
        self.p.listing.append(text)
        self.p.steps.append(Step(fn, args))

    # -- one node -------------------------------------------------------------------------------------
    def _lower(self, i: int, t: Tensor) -> None:
        dying = [self.loc[id(a)] for a in dict.fromkeys(_source(x) for x in t.inputs)
                 if id(a) not in self.folded and self.last_use.get(id(a)) == i]
        dt = storage(t.dtype)
        kind = "mask" if t.dtype == "uint1" else "tile"
        if t is self.p.compute.output:
            dst = self.out
        elif t.op in _IN_PLACE:
            same = [loc for loc in dying if self._key(loc) == ("tile", dt.itemsize) and kind == "tile"]
            dst = same[0] if same else self._take(kind, dt)
        else:
            dst = self._take(kind, dt, avoid=dying)
        self.loc[id(t)] = dst
        getattr(self, "_op_" + t.op)(t, dst, dt, dying)
        for loc in dying:
            if loc != dst:
                self._release(loc)

    def _unsupported(self, t: Tensor, why: str) -> None:
        raise NotImplementedError(f"TBE lowering of {t.op}: {why}")

    def _op_broadcast(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        value = t.args[0]
        d, v = self._at(dst, dt), _typed(dt, value)
        self._emit(f"Duplicate({self._name(dst)}, {value})", Duplicate, Operand(d), v, N)

    def _tensor_scalar(self, t: Tensor, dst: int, dt: np.dtype, instr: Any, src: int, value: Any) -> None:
        d, a, v = self._at(dst, dt), self._at(src, dt), _typed(dt, value)
        self._emit(f"{instr.__name__}({self._name(dst)}, {self._name(src)}, {value})",
                   instr, Operand(d), Operand(a), v, N)

    def _op_vmuls(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        self._tensor_scalar(t, dst, dt, _TENSOR_SCALAR[t.op], self.loc[id(t.args[0])], t.args[1])

    _op_vadds = _op_vmins = _op_vmaxs = _op_vmuls

    def _op_vmul(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        (ka, a), (kb, b_) = self._operand(t.args[0]), self._operand(t.args[1])
        if ka == "scalar" and kb == "scalar":
            self._unsupported(t, "both operands are broadcast scalars")
        if ka == "scalar" or kb == "scalar":
            src, value = (b_, a) if ka == "scalar" else (a, b_)
            self._tensor_scalar(t, dst, dt, _SCALAR_FORM[t.op], src, value)
            return
        if t.op != "vmul":
            self._unsupported(t, "the simulator has no tensor-tensor Min/Max instruction; one operand must be "
                                 "a broadcast scalar (use vmins/vmaxs)")
        d, x, y = self._at(dst, dt), self._at(a, dt), self._at(b_, dt)
        self._emit(f"Mul({self._name(dst)}, {self._name(a)}, {self._name(b_)})", Mul, Operand(d), Operand(x),
                   Operand(y), N)

    _op_vmin = _op_vmax = _op_vmul

    def _op_vabs(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        src = self.loc[id(t.args[0])]
        mask = self._take("mask", _U8)
        iv = _INT_VIEW[dt.itemsize]
        per = REPEAT_BYTES // dt.itemsize
        m, si, d, sf = self._at(mask, _U8), self._at(src, iv), self._at(dst, dt), self._at(src, dt)
        zero, minus_one = iv.type(0), dt.type(-1)
        self._emit(f"CompareScalar({self._name(mask)}, {self._name(src)} as {iv.name}, 0, LT)   # sign bit",
                   CompareScalar, Operand(m), Operand(si), zero, CMPMODE.LT, Length(per, per))
        self._emit(f"Muls({self._name(dst)}, {self._name(src)}, -1)", Muls, Operand(d), Operand(sf), minus_one, N)
        self._emit(f"Select({self._name(dst)}, {self._name(mask)}, {self._name(dst)}, {self._name(src)}, "
                   "TENSOR_TENSOR)",
                   Select, Operand(d), Operand(m), Operand(d), Operand(sf), SELMODE.VSEL_TENSOR_TENSOR_MODE, N)
        self._release(mask)

    def _compare(self, mask: int, lhs: int, rhs: tuple[str, Any], operation: str, src_dt: np.dtype) -> None:
        mode = _CMP[operation]
        per = REPEAT_BYTES // src_dt.itemsize
        kind, r = rhs
        m, x = self._at(mask, _U8), self._at(lhs, src_dt)
        if kind == "scalar":
            v = _typed(src_dt, r)
            self._emit(f"CompareScalar({self._name(mask)}, {self._name(lhs)}, {r}, {mode.name})",
                       CompareScalar, Operand(m), Operand(x), v, mode, Length(per, per))
        else:
            y = self._at(r, src_dt)
            self._emit(f"Compare({self._name(mask)}, {self._name(lhs)}, {self._name(r)}, {mode.name})",
                       Compare, Operand(m), Operand(x), Operand(y), mode, Length(per, per))

    def _op_vcmp(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        if t.attrs["mode"] != "bit":
            self._unsupported(t, "'bool' mode (ReluGrad's int64 path, which aclnn sends only to Ascend950) is "
                                 "not lowered")
        lhs = t.args[0]
        self._compare(dst, self.loc[id(lhs)], self._operand(t.args[1]), t.attrs["operation"], storage(lhs.dtype))

    def _select(self, dst: int, dt: np.dtype, mask: int, x: tuple[str, Any], y: tuple[str, Any],
                mask_dies: bool) -> None:
        (kx, vx), (ky, vy) = x, y
        d = self._name(dst)
        o, m = self._at(dst, dt), self._at(mask, _U8)
        if kx == "tensor" and ky == "scalar":
            a, w = self._at(vx, dt), _typed(dt, vy)
            self._emit(f"Select({d}, {self._name(mask)}, {self._name(vx)}, {vy}, TENSOR_SCALAR)",
                       Select, Operand(o), Operand(m), Operand(a), w, SELMODE.VSEL_TENSOR_SCALAR_MODE, N)
        elif kx == "tensor":
            a, c = self._at(vx, dt), self._at(vy, dt)
            self._emit(f"Select({d}, {self._name(mask)}, {self._name(vx)}, {self._name(vy)}, TENSOR_TENSOR)",
                       Select, Operand(o), Operand(m), Operand(a), Operand(c), SELMODE.VSEL_TENSOR_TENSOR_MODE, N)
        elif ky == "tensor":        # cond ? scalar : tensor  ==  ~cond ? tensor : scalar (bitwise, NaN-safe)
            inv = mask if mask_dies else self._take("mask", _U8)
            i16, m16, iu8 = self._at(inv, _U16), self._at(mask, _U16), self._at(inv, _U8)
            a, w = self._at(vy, dt), _typed(dt, vx)
            self._emit(f"Not({self._name(inv)}, {self._name(mask)})   # invert the bit-mask",
                       Not, Operand(i16), Operand(m16), Length(256, 16))
            self._emit(f"Select({d}, {self._name(inv)}, {self._name(vy)}, {vx}, TENSOR_SCALAR)",
                       Select, Operand(o), Operand(iu8), Operand(a), w, SELMODE.VSEL_TENSOR_SCALAR_MODE, N)
            if inv != mask:
                self._release(inv)
        else:
            v, w = _typed(dt, vx), _typed(dt, vy)
            self._emit(f"Duplicate({d}, {vx})", Duplicate, Operand(o), v, N)
            self._emit(f"Select({d}, {self._name(mask)}, {d}, {vy}, TENSOR_SCALAR)",
                       Select, Operand(o), Operand(m), Operand(o), w, SELMODE.VSEL_TENSOR_SCALAR_MODE, N)

    def _op_vsel(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        cond = t.args[0]
        if cond.dtype != "uint1":
            self._unsupported(t, "a 'bool' condition is not lowered (only ReluGrad's int64 path uses one)")
        mask = self.loc[id(cond)]
        self._select(dst, dt, mask, self._operand(t.args[1]), self._operand(t.args[2]), mask in dying)

    def _op_vcmpsel(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        mask = self._take("mask", _U8)
        self._compare(mask, self.loc[id(t.args[0])], self._operand(t.args[1]), t.attrs["operation"], dt)
        self._select(dst, dt, mask, self._operand(t.args[2]), self._operand(t.args[3]), True)
        self._release(mask)

    def _op_cast(self, t: Tensor, dst: int, dt: np.dtype, dying: list[int]) -> None:
        src_t = t.args[0]
        src, sdt = self.loc[id(src_t)], storage(src_t.dtype)
        mode = RoundMode[t.attrs["round"]]
        d, a = self._at(dst, dt), self._at(src, sdt)
        self._emit(f"Cast({self._name(dst)}, {self._name(src)}, {mode.name})   # {src_t.dtype} -> {t.dtype}",
                   Cast, Operand(d), Operand(a), mode, N)

    _op_round = _op_cast


def _source(t: Tensor) -> Tensor:
    """The tensor a chain of ``broadcast(tensor, shape)`` nodes stands for (itself for any other node)."""
    while t.is_tensor_broadcast:
        t = t.args[0]
    return t


def _view(t: LocalTensor, dt: np.dtype) -> LocalTensor:
    return t if t.dtype is dt or t.dtype == dt else t.ReinterpretCast(dt)


_new_tensor = object.__new__


def _retyped(t: LocalTensor, dt: np.dtype, cache: dict[int, tuple[int, np.ndarray]]) -> LocalTensor:
    """``t.ReinterpretCast(dt)`` for a queue block's tensor (new every tile), without ReinterpretCast's numpy
    slicing per call: the block's bytes seen as ``dt`` are sliced once per block (``cache``, by UB offset, one
    dict per view of the program) and every other field is set as ReinterpretCast sets it -- the same ``life``
    (FreeTensor of ``t`` kills the view too), tile, block, queue and region. ``tests/test_tbe.py`` compares every
    field with ReinterpretCast's."""
    off, nbytes = t.offset, t.nbytes
    made = cache.get(off)
    if made is None or made[0] != nbytes:
        made = cache[off] = (nbytes, t.ctx.ub[off:off + nbytes].view(dt))
    v = _new_tensor(LocalTensor)
    size = nbytes // dt.itemsize
    v.ctx, v.dtype, v.offset, v.size, v.nbytes, v.data = t.ctx, dt, off, size, size * dt.itemsize, made[1]
    v.buffer, v.tile, v.life, v.block, v.queue = t.buffer, t.tile, t.life, t.block, t.queue
    v.region = t.block if t.region is None else t.region
    return v


# --- the generated tile body ---------------------------------------------------------------------------------
#: Names the tile body's own code uses; a buffer, dtype or constant never takes one of them.
_RESERVED = frozenset({"self", "i", "n", "p", "off", "bind", "CopyIn", "Compute", "CopyOut", "ubFactor",
                       "blockOffset", "DataCopyPad", "broadcast_copy", "_retyped"}) | frozenset(dir(builtins))


class _Names:
    """Python identifiers for the tile body: readable (a slot's name), unique, never a keyword or builtin."""

    def __init__(self) -> None:
        self.used: set[str] = set(_RESERVED)

    def new(self, want: str) -> str:
        name = re.sub(r"\W", "_", want) or "v"
        if name[0].isdigit():
            name = "_" + name
        while name in self.used or keyword.iskeyword(name):
            name += "_"
        self.used.add(name)
        return name


def _body_source(prog: Program, brc: tuple[bool, ...]) -> tuple[str, dict[str, Any]]:
    """The tile body's source and the module names it needs (instructions, dtypes, constants): the calls
    ``TbeElewiseKernel``'s CopyIn / Compute / CopyOut make per tile, in the same order with the same arguments,
    written out for this program (see :meth:`Program.kernel_source`)."""
    slots, n_in = prog.slots, prog.n_inputs
    if len(brc) != n_in:
        raise ValueError(f"broadcast: one flag per input ({n_in}), got {list(brc)}")
    names = _Names()
    glob: dict[str, Any] = {"DataCopyPad": DataCopyPad, "broadcast_copy": broadcast_copy, "_retyped": _retyped}
    by_id: dict[int, str] = {}          # function, dtype or constant object -> its module name
    consts: list[str] = []

    def module_name(obj: Any, want: str) -> str:
        name = by_id.get(id(obj))
        if name is None:
            name = by_id[id(obj)] = names.new(want)
            glob[name] = obj
        return name

    def dtype_name(dt: np.dtype) -> str:
        return module_name(dt, dt.name)

    bases = [s.name.removeprefix("inQueue_") for s in slots[:n_in]]
    tensors = [names.new(b) for b in bases]
    queues = [names.new(s.name) for s in slots[:n_in]]
    gms = [names.new(b + "Gm") for b in bases]
    out_q, out_t, out_gm = names.new("outQueue"), names.new("out"), names.new("outGm")
    temps = [names.new(s.name) for s in slots[n_in + 1:]]
    var: dict[int, str] = dict(enumerate([*tensors, out_t, *temps]))
    tile_views, temp_views = [], []
    for k, (loc, dt) in enumerate(prog.views):
        base = tensors[loc] if loc < n_in else out_t if loc == n_in else temps[loc - n_in - 1]
        var[-1 - k] = names.new(f"{base}_{dt.name}")
        (tile_views if loc <= n_in else temp_views).append((-1 - k, loc, dt))
    caches = {at: names.new(f"{var[at]}_views") for at, _, _ in tile_views}
    in_dt = [dtype_name(np.dtype(s.dtype)) for s in slots[:n_in]]
    out_dt = dtype_name(np.dtype(slots[n_in].dtype))
    lengths: dict[Length, str] = {}

    def arg(a: Any) -> str:
        if type(a) is Operand:
            return var[a.at]
        if type(a) is Length:
            if a == N:
                return "n"
            if a not in lengths:
                lengths[a] = names.new(f"n{a.per}" if a.per == a.scale else f"n{a.per}_{a.scale}")
            return lengths[a]
        if isinstance(a, enum.Enum):
            return module_name(a, a.name)
        name = module_name(a, f"s{len(consts)}")
        if name not in consts:
            consts.append(name)
        return name

    calls = []
    for step, text in zip(prog.steps, prog.listing, strict=True):
        call = f"{module_name(step.fn, step.fn.__name__)}({', '.join(arg(a) for a in step.args)})"
        comment = text.partition("#")[2].strip()
        calls.append(f"{call}   # {comment}" if comment else call)

    dts = sorted({s.dtype.name for s in slots[:n_in + 1]})
    src = [f"# The tile body of TBE {prog.compute.name} ({', '.join(dts)}) for {prog.soc.name}, generated from the "
           "program's steps",
           "# by ascend_lab.tbe.lowering (Program.kernel_source) and compiled once: TbeElewiseKernel.Process runs "
           "it per tile.",
           *(f"#   {c} = {glob[c]!r}" for c in consts),
           "def bind(self):",
           '    """This kernel\'s queues, GM tensors and buffers, under the names the tile body uses."""',
           f"    {targets(queues)} = self.inQueues",
           f"    {out_q} = self.outQueue",
           f"    {', '.join(gms)}, {out_gm} = self.gms"]
    if temps:
        src.append(f"    {targets(temps)} = self.temps")
    src += [f"    {var[at]} = self.bufs[{at}]   # {temps[loc - n_in - 1]} as {dt.name}, made at Init"
            for at, loc, dt in temp_views]
    src.append("    ubFactor = self.ubFactor")
    if any(brc):
        src.append("    blockOffset = self.blockOffset")
    for k in range(n_in):
        if brc[k]:
            src.append(f"    {tensors[k]}_dims, {tensors[k]}_strides = self.brc[{k}]   # output dims, input strides")
    src += [f"    {caches[at]} = {{}}   # {var[loc]}'s blocks as {dt.name}, by UB offset" for at, loc, dt in tile_views]
    src += ["", "    def CopyIn(self, i, n, p):", "        off = i * ubFactor"]
    for k in range(n_in):
        t, q = tensors[k], queues[k]
        src.append(f"        {t} = {q}.AllocTensor({in_dt[k]})")
        if brc[k]:
            src.append(f"        broadcast_copy({t}, {gms[k]}, {t}_dims, {t}_strides, blockOffset + off, n)")
        else:
            src.append(f"        DataCopyPad({t}, {gms[k]}[off], p[{k}])")
        src.append(f"        {q}.EnQue({t})")
    src += ["", "    def Compute(self, n):"]
    src += [f"        {tensors[k]} = {queues[k]}.DeQue({in_dt[k]})" for k in range(n_in)]
    src.append(f"        {out_t} = {out_q}.AllocTensor({out_dt})")
    src += [f"        {var[at]} = _retyped({var[loc]}, {dtype_name(dt)}, {caches[at]})" for at, loc, dt in tile_views]
    src += [f"        {name} = -(-n // {ln.per}) * {ln.scale}" for ln, name in lengths.items()]
    src += [f"        {c}" for c in calls]
    src.append(f"        {out_q}.EnQue({out_t})")
    src += [f"        {queues[k]}.FreeTensor({tensors[k]})" for k in range(n_in)]
    src += ["", "    def CopyOut(self, i, n, p):",
            f"        {out_t} = {out_q}.DeQue({out_dt})",
            f"        DataCopyPad({out_gm}[i * ubFactor], {out_t}, p[{n_in}])",
            f"        {out_q}.FreeTensor({out_t})",
            "", "    return CopyIn, Compute, CopyOut", ""]
    return "\n".join(src), glob


def _compile_body(prog: Program, brc: tuple[bool, ...]) -> tuple[str, Callable[..., Any]]:
    """Generate, compile and load the tile body (``ascendc.generated.load``: library code, as the kernel's own, whose
    lines a traceback shows)."""
    source, glob = _body_source(prog, brc)
    glob["__name__"] = __name__ + ".generated"
    return source, generated.load(source, f"TBE {prog.compute.name} tile body", glob)["bind"]


def _typed(dt: np.dtype, value: Any) -> Any:
    """A scalar operand converted to ``dt`` as the instruction converts it (``numerics.scalar``: ``T(value)``),
    once at planning: the instruction then takes it as is. Overflow is silent, as in the launcher; a value the
    conversion refuses is kept, so the instruction raises as it always did."""
    try:
        with np.errstate(all="ignore"):
            return _scalar(dt, value)
    except (OverflowError, ValueError, TypeError):
        return value


def _broadcast_strides(dims: Sequence[int]) -> list[int]:
    """Row-major element strides of an input's fused dims, 0 on its broadcast axes (dim 1)."""
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(0 if d == 1 else step)
        step *= d
    return strides[::-1]


def _broadcast_index(out_dims: Sequence[int], strides: Sequence[int], start: int, count: int) -> np.ndarray:
    """The input element of each output element ``start .. start + count - 1``: ``sum(coordinate * stride)`` over
    the output's axes (row-major). Axes outside the last one with a stride cost nothing, and the last one costs
    one ``%`` (no quotient is needed past it)."""
    axes = list(zip(reversed(out_dims), reversed(strides), strict=True))      # innermost axis first
    last = max((k for k, (_, stride) in enumerate(axes) if stride), default=-1)
    if last < 0:
        return np.zeros(count, dtype=np.int64)
    flat = np.arange(start, start + count, dtype=np.int64)
    idx = None
    for d, stride in axes[:last]:
        if stride:
            flat, coord = np.divmod(flat, d)
            coord *= stride
            idx = coord if idx is None else np.add(idx, coord, out=idx)
        else:
            flat //= d
    d, stride = axes[last]
    coord = flat % d
    if stride != 1:
        coord *= stride
    return coord if idx is None else np.add(idx, coord, out=idx)


def broadcast_copy(dst: LocalTensor, gm: GlobalTensor, out_dims: Sequence[int], strides: Sequence[int],
                   start: int, count: int) -> int:
    """GM -> UB: the input elements that output elements ``start .. start + count - 1`` (row-major over
    ``out_dims``) need, for an input laid out with ``strides`` (elements, 0 on its broadcast axes); they land
    contiguously at ``dst``, padded to 32 bytes in UB as ``DataCopyPad`` pads.

    A MODEL of a strided, repeating copy (see the module docstring): the GM span it touches goes through the
    simulator's GM read checks; MTE2 is busy for one copy of the *distinct* bytes read (a repeated element
    is read once) and the trace records a ``DataCopy`` event with those bytes. Returns ``count``."""
    instr = "DataCopy(broadcast)"
    ctx = dst.ctx
    item = gm.dtype.itemsize
    sanitizer.check_copy(ctx, instr, dst, count, count * item, True)
    idx = _broadcast_index(out_dims, strides, start, count)
    lo, hi = int(idx.min()), int(idx.max())
    src = gm[lo].gm_slice(ctx, hi - lo + 1, instr, dst.tile, write=False)
    ub_count = -(-count * item // 32) * 32 // item
    ub = sanitizer.ub_span(dst, ub_count, instr, True)
    rel = idx - lo
    ub[:count] = src[rel]
    ub[count:] = ub[0]
    distinct = _distinct(rel, hi - lo + 1) * item
    t0, t1 = ctx.issue("MTE2", ctx.cost.copy_in(distinct))
    ctx.summary.bytes_in += distinct
    if ctx.record:
        ctx.event("MTE2", "DataCopy", dst.tile, t0, t1, nbytes=distinct, count=count, ub=dst.ub_range(ub_count),
                  buffer=dst.buffer,
                  detail=f"broadcast GM {gm.label()} dims {list(out_dims)} strides {list(strides)}, output "
                         f"elements {start}..{start + count - 1} -> UB {dst.buffer}",
                  values=ub[:count].copy() if ctx.snapshot else None)
    return count


def _distinct(rel: np.ndarray, span: int) -> int:
    """How many distinct values ``rel`` (non-negative, below ``span``) holds: ``np.unique(rel).size``, which in
    numpy 2.4 hashes and costs ten times a sort here. A mark per value when the span is short, else a sort."""
    if span <= 4 * rel.size:
        seen = np.zeros(span, dtype=np.bool_)
        seen[rel] = True
        return int(np.count_nonzero(seen))
    ordered = np.sort(rel)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1


# --- the kernel ------------------------------------------------------------------------------------------
class TbeElewiseKernel:
    """The kernel TBE's elementwise schedule produces, as CopyIn/Compute/CopyOut over queues: ``Process`` runs the
    program's *tile body* (:meth:`Program.kernel_source`) per tile -- the plan's calls written out as straight-line
    Python, generated and compiled once per program, as TBE's compiler emits one binary."""

    def __init__(self, program: Program, buffer_num: int):
        self.program = program
        self.bufferNum = buffer_num
        self.pipe = TPipe()
        slots = program.slots
        self.inQueues = [TQue(VECIN, buffer_num, name=s.name) for s in slots[:program.n_inputs]]
        self.outQueue = TQue(VECOUT, buffer_num, name="outQueue")
        self.tmpBufs = [TBuf(VECCALC, name=s.name) for s in slots[program.n_inputs + 1:]]
        self.gms = [GlobalTensor(s.dtype) for s in slots[:program.n_inputs + 1]]

    def Init(self, gm_addrs: Sequence[GmAddr], td: TilingData) -> bool:
        block_idx = GetBlockIdx()
        self.ubFactor = td.ubFactor
        self.blockLength = min(td.blockFactor, td.dim0 - td.blockFactor * block_idx)
        if self.blockLength <= 0:
            return False
        slots = self.program.slots
        offset = td.blockFactor * block_idx
        self.blockOffset = offset
        # per input: None (read this core's slice as is) or (output dims, input strides) for a broadcast read
        self.brc: list[tuple[list[int], list[int]] | None] = [None] * self.program.n_inputs
        sizes: list[int] = []
        if is_broadcast(td):
            out_dims, in_dims = broadcast_dims(td)
            for k, dims in enumerate(in_dims):
                sizes.append(math.prod(dims))
                if sizes[k] != td.dim0:
                    self.brc[k] = (out_dims, _broadcast_strides(dims))
        self.broadcasts = tuple(b is not None for b in self.brc)
        for k, (gm, addr, s) in enumerate(zip(self.gms, gm_addrs, slots, strict=False)):
            if k < len(self.brc) and self.brc[k] is not None:
                gm.SetGlobalBuffer(addr, sizes[k])          # the whole (smaller) input: tiles index into it
            else:
                gm.SetGlobalBuffer(addr + offset * s.itemsize, self.blockLength)
        capacity = _round_up(max(self.ubFactor, 1), ALIGN)
        for q, s in zip(self.inQueues, slots, strict=False):
            self.pipe.InitBuffer(q, self.bufferNum, capacity * s.itemsize)
        self.pipe.InitBuffer(self.outQueue, self.bufferNum, capacity * slots[self.program.n_inputs].itemsize)
        self.temps: list[LocalTensor] = []
        for buf, s in zip(self.tmpBufs, slots[self.program.n_inputs + 1:], strict=True):
            self.pipe.InitBuffer(buf, _round_up(capacity // 8, 32) if s.kind == "mask" else capacity * s.itemsize)
            self.temps.append(buf.Get(s.dtype))
        # the temporaries' views (Program.views, last first: view k is at -1 - k), made here once; the tile body
        # makes a queue block's views every tile (its tensor is new every tile)
        n_fixed = self.program.n_inputs + 1
        self.bufs: list[Any] = [None] * n_fixed + self.temps + [None] * len(self.program.views)
        for k, (loc, dt) in enumerate(self.program.views):
            if loc >= n_fixed:
                self.bufs[-1 - k] = _view(self.bufs[loc], dt)
        self.params: dict[int, list[DataCopyParams]] = {}     # by tile length: one per input, then the output's
        return True

    def Process(self) -> None:
        ub = self.ubFactor
        loops = -(-self.blockLength // ub)
        copy_in, compute, copy_out = self.program._body(self.broadcasts)[1](self)
        tail = self.blockLength - ub * (loops - 1)
        p, p_tail = self._params(ub), self._params(tail)
        for i in range(loops - 1):
            copy_in(self, i, ub, p)
            compute(self, ub)
            copy_out(self, i, ub, p)
        copy_in(self, loops - 1, tail, p_tail)
        compute(self, tail)
        copy_out(self, loops - 1, tail, p_tail)

    def _params(self, n: int) -> list[DataCopyParams]:
        """DataCopyParams of a tile of ``n`` elements (a core has two lengths at most; DataCopyPad only reads them)."""
        p = self.params.get(n)
        if p is None:
            p = self.params[n] = [DataCopyParams(1, n * gm.dtype.itemsize, 0, 0) for gm in self.gms]
        return p


def template_args(td: TilingData, dtype: Any, buffer_num: int | None = None) -> dict[str, Any]:
    """The entry's template arguments: the input dtype, the queue depth the *schedule* chose (2 when the
    tiling key carries +10000, else 1) and whether the tiling is a broadcast one (its struct carries the
    inputs' dims; the key selects that kernel). A requested ``buffer_num`` is ignored: a TBE binary's double
    buffering is decided by its schedule, not by its caller."""
    return {"dtype": to_numpy(dtype), "bufferNum": 2 if double_buffered(td) else 1, "broadcast": is_broadcast(td)}


def make_entry(name: str, describe: Callable[..., Compute], tiling_cls: type[TilingData],
               attrs: Sequence[str] = ()) -> Callable[..., None]:
    """The ``__global__`` entry of a TBE kernel: ``entry(*gm_args, workspace, tiling, dtype=, bufferNum=,
    broadcast=)`` (``broadcast``: the struct is ``tiling_cls`` with the broadcast variables).

    ``describe(dtype_name, **attrs)`` builds the compute description; it runs (once per SoC family, dtype and
    attribute values, then cached) inside :func:`~.dsl.compile_for` for the SoC of the core running the
    kernel, as a TBE binary is compiled for one SoC. Attribute values come from the tiling struct."""

    @lru_cache(maxsize=64)
    def program(dtype_name: str, soc_name: str, values: tuple[Any, ...]) -> Program:
        with compile_for(soc_name) as soc:
            return build(describe(dtype_name, **dict(zip(attrs, values, strict=True))), soc)

    def program_for(td: Any, dtype: Any, soc: Any) -> Program:
        """The program a launch of this entry with tiling ``td`` runs for ``dtype`` on ``soc`` (a name or a SocInfo):
        the attribute values are read from ``td`` -- what the entry itself runs, so ``run.tiling`` of an aclnn call
        gives that run's program (the cached object itself)."""
        soc_name = soc if isinstance(soc, str) else soc.name
        return program(np.dtype(dtype).name, soc_name, tuple(getattr(td, a) for a in attrs))

    def entry(*args: Any, dtype: Any, bufferNum: int, broadcast: bool = False) -> None:
        *gm, _workspace, tiling = args
        cls = broadcast_tiling_class(tiling_cls, len(gm) - 1) if broadcast else tiling_cls
        td = GET_TILING_DATA(cls, tiling)
        prog = program_for(td, dtype, current().soc)
        if len(gm) != prog.n_inputs + 1:
            raise TypeError(f"{name}: expected {prog.n_inputs} inputs and one output, got {len(gm)} GM arguments")
        kernel = TbeElewiseKernel(prog, bufferNum)
        if kernel.Init(gm, td):
            kernel.Process()

    entry.__name__ = name
    entry.__qualname__ = name
    entry.program = program          # type: ignore[attr-defined]
    entry.program_for = program_for  # type: ignore[attr-defined]
    entry.kernel_api = "cce"         # type: ignore[attr-defined]  # TBE emits CCE: no AscendC API limits or scratch
    return entry


def launch(entry: Callable[..., None], td: TilingData, tensors: Sequence[Any], names: Sequence[str], soc: Any,
           kernel_name: str, record: bool | None = None, cores: Any = None) -> KernelRun:
    """Launch a TBE kernel with aclTensors from the L0 graph (inputs, then the output). ``td`` must describe
    these tensors: a tiling of the output's element count, a broadcast one when the inputs' sizes differ
    (ValueError otherwise, naming the tiling to use)."""
    sizes = [t.Size() for t in tensors]
    if td.tilingKey != EMPTY_TILING_KEY and not is_broadcast(td) and any(n != td.dim0 for n in sizes):
        raise ValueError(f"{kernel_name}: the tiling covers {td.dim0} elements but the tensors hold {sizes}; "
                         "tile broadcasting inputs with the kernel's tiling_shapes (tiling_for_shapes)")
    rec = _options().trace if record is None else record
    args = [_gm(t, name) for t, name in zip(tensors, names, strict=True)]
    warn_non_ieee(tensors[:-1], names[:-1], soc, kernel_name)
    return _launch(entry, td.blockDim, args, td.to_bytes(), soc, outputs=(len(args) - 1,), record=rec,
                   kernel_name=kernel_name, tiling_data=td, cores=cores, **template_args(td, tensors[0].dtype))


#: What the docs say about a vector unit without the INF/NaN mode: the saturation mode "converts the calculation
#: result of Inf to a maximum value and the calculation result of NaN to 0" (CANN ``aclrtFloatOverflowMode``;
#: Atlas training and Atlas inference products support only that mode; ``util_soc_common.support_inf_nan()`` is
#: False for Ascend910 and Ascend310P). That is about results that overflow; what vcmp/vsel/vcmpsel/vmin/vmax and the
#: multiplies produce for inf or NaN *operands* is not documented, so the simulator computes them as IEEE 754 does
#: and says so on every such run.
NON_IEEE_WARNING = ("{soc} computes in saturation mode (no INF/NaN mode: util_soc_common.support_inf_nan() is False "
                    "for {short}), and {what} hold{s} inf or NaN: the simulated result follows IEEE 754; what the "
                    "device's vector unit produces for inf/NaN operands in saturation mode is not documented")


def warn_non_ieee(tensors: Sequence[Any], names: Sequence[str], soc: Any, kernel_name: str) -> bool:
    """On a SoC without the INF/NaN mode (``SocInfo.inf_nan_mode``), log a warning (``OP_LOGW``, so it reaches
    ``run.messages``) when a floating-point input of the kernel holds inf or NaN (:data:`NON_IEEE_WARNING`).
    Returns whether it warned."""
    info = get_soc(soc)
    if info.inf_nan_mode:
        return False
    found = []
    for t, name in zip(tensors, names, strict=True):
        if t is None or t.IsEmpty():
            continue
        a = t.numpy()
        if a.dtype.kind not in "fV" and a.dtype != to_numpy("bfloat16"):
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            if not np.isfinite(a.astype(np.float32)).all():
                found.append(name)
    if not found:
        return False
    what = " and ".join(found)
    OP_LOGW(kernel_name, NON_IEEE_WARNING.format(soc=info.name, short=info.short_soc_version, what=what,
                                                 s="" if len(found) > 1 else "s"))
    return True


def _gm(t: Any, name: str) -> GmAddr:
    if t.data is None:
        raise ValueError(f"{name} has no device memory bound")
    return GmAddr(t.data + t.offset * t.itemsize, name, arg_nbytes=t.Size() * t.itemsize)

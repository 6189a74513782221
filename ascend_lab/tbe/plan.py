"""The plan of a TBE description: its buffers and the vector instructions each node becomes (:mod:`.lowering`'s
table), made once per program by :func:`build`. Dead values give their buffer to later nodes; a node that may
overwrite a dead operand of its width does so in place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ascendc import (
    CMPMODE,
    SELMODE,
    Adds,
    Cast,
    Compare,
    CompareScalar,
    Duplicate,
    Maxs,
    Mins,
    Mul,
    Muls,
    Not,
    RoundMode,
    Select,
)
from ..ascendc.numerics import scalar as _scalar
from ..ascendc.sanitizer import REPEAT_BYTES
from ..base.platform import SocInfo, get_soc
from .dsl import Compute, Tensor, storage
from .program import Program
from .steps import Length, N, Operand, Slot, Step

__all__ = ["build"]

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


def _typed(dt: np.dtype, value: Any) -> Any:
    """A scalar operand converted to ``dt`` as the instruction converts it (``numerics.scalar``: ``T(value)``),
    once at planning: the instruction then takes it as is. Overflow is silent, as in the launcher; a value the
    conversion refuses is kept, so the instruction raises as it always did."""
    try:
        with np.errstate(all="ignore"):
            return _scalar(dt, value)
    except (OverflowError, ValueError, TypeError):
        return value

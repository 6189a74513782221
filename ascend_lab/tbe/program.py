"""A lowered TBE description (:class:`Program`) and its tile body: the plan's calls written out as Python.

Each program's tile body -- ``CopyIn``, ``Compute`` and ``CopyOut`` with every instruction of the plan written out,
bound to one kernel's queues and buffers by ``bind(self)`` -- is generated once and compiled, as TBE's compiler emits
one binary per program; :class:`~.kernel.TbeElewiseKernel` calls it per tile. ``print(program.kernel_source())``
shows it (chapter 12.6 does).
"""

from __future__ import annotations

import builtins
import enum
import keyword
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ascendc import DataCopyPad, LocalTensor, generated
from ..ascendc.generated import targets
from .copy_in import broadcast_copy
from .steps import Length, N, Operand, Slot, Step

if TYPE_CHECKING:
    from ..base.platform import SocInfo
    from .dsl import Compute

__all__ = ["Program", "retyped"]


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
        """The Python source of this program's tile body for inputs read as is, or broadcast where
        ``broadcast[k]`` is true (module docstring)."""
        return self.body(tuple(broadcast) if broadcast is not None else (False,) * self.n_inputs)[0]

    def body(self, broadcast: tuple[bool, ...]) -> tuple[str, Callable[..., Any]]:
        """The tile body's source and its compiled ``bind`` (``bind(kernel)`` returns CopyIn, Compute, CopyOut),
        generated once per broadcast pattern."""
        made = self._bodies.get(broadcast)
        if made is None:
            made = self._bodies[broadcast] = _compile_body(self, broadcast)
        return made


_new_tensor = object.__new__


def retyped(t: LocalTensor, dt: np.dtype, cache: dict[int, tuple[int, np.ndarray]]) -> LocalTensor:
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


class _TileBody:
    """Writes one program's tile body: the names of its queues, tensors, views and constants, then the source of
    ``bind`` and its three stages -- the calls ``TbeElewiseKernel`` makes per tile, in order."""

    def __init__(self, prog: Program, brc: tuple[bool, ...]) -> None:
        slots, n_in = prog.slots, prog.n_inputs
        if len(brc) != n_in:
            raise ValueError(f"broadcast: one flag per input ({n_in}), got {list(brc)}")
        self.prog, self.brc, self.n_in, self.names = prog, brc, n_in, _Names()
        self.glob: dict[str, Any] = {"DataCopyPad": DataCopyPad, "broadcast_copy": broadcast_copy,
                                     "_retyped": retyped}
        self.by_id: dict[int, str] = {}          # function, dtype or constant object -> its module name
        self.consts: list[str] = []
        self.lengths: dict[Length, str] = {}
        new = self.names.new
        bases = [s.name.removeprefix("inQueue_") for s in slots[:n_in]]
        self.tensors = [new(b) for b in bases]
        self.queues = [new(s.name) for s in slots[:n_in]]
        self.gms = [new(b + "Gm") for b in bases]
        self.out_q, self.out_t, self.out_gm = new("outQueue"), new("out"), new("outGm")
        self.temps = [new(s.name) for s in slots[n_in + 1:]]
        self.var: dict[int, str] = dict(enumerate([*self.tensors, self.out_t, *self.temps]))
        self.tile_views: list[tuple[int, int, np.dtype]] = []
        self.temp_views: list[tuple[int, int, np.dtype]] = []
        for k, (loc, dt) in enumerate(prog.views):
            base = self.tensors[loc] if loc < n_in else self.out_t if loc == n_in else self.temps[loc - n_in - 1]
            self.var[-1 - k] = new(f"{base}_{dt.name}")
            (self.tile_views if loc <= n_in else self.temp_views).append((-1 - k, loc, dt))
        self.caches = {at: new(f"{self.var[at]}_views") for at, _, _ in self.tile_views}
        self.in_dt = [self.dtype_name(np.dtype(s.dtype)) for s in slots[:n_in]]
        self.out_dt = self.dtype_name(np.dtype(slots[n_in].dtype))

    def module_name(self, obj: Any, want: str) -> str:
        name = self.by_id.get(id(obj))
        if name is None:
            name = self.by_id[id(obj)] = self.names.new(want)
            self.glob[name] = obj
        return name

    def dtype_name(self, dt: np.dtype) -> str:
        return self.module_name(dt, dt.name)

    def arg(self, a: Any) -> str:
        """A step's argument as the tile body writes it: a buffer's name, ``n`` or a length, a mode, a constant."""
        if type(a) is Operand:
            return self.var[a.at]
        if type(a) is Length:
            if a == N:
                return "n"
            if a not in self.lengths:
                self.lengths[a] = self.names.new(f"n{a.per}" if a.per == a.scale else f"n{a.per}_{a.scale}")
            return self.lengths[a]
        if isinstance(a, enum.Enum):
            return self.module_name(a, a.name)
        name = self.module_name(a, f"s{len(self.consts)}")
        if name not in self.consts:
            self.consts.append(name)
        return name

    def calls(self) -> list[str]:
        """The plan's steps as calls, each with its listing line's comment."""
        out = []
        for step, text in zip(self.prog.steps, self.prog.listing, strict=True):
            call = f"{self.module_name(step.fn, step.fn.__name__)}({', '.join(self.arg(a) for a in step.args)})"
            comment = text.partition("#")[2].strip()
            out.append(f"{call}   # {comment}" if comment else call)
        return out

    def header(self) -> list[str]:
        prog, dts = self.prog, sorted({s.dtype.name for s in self.prog.slots[:self.n_in + 1]})
        return [f"# The tile body of TBE {prog.compute.name} ({', '.join(dts)}) for {prog.soc.name}, generated from "
                "the program's steps",
                "# by ascend_lab.tbe.lowering (Program.kernel_source) and compiled once: TbeElewiseKernel.Process "
                "runs it per tile.",
                *(f"#   {c} = {self.glob[c]!r}" for c in self.consts)]

    def bind(self) -> list[str]:
        """``bind(self)``'s own lines: the kernel's objects under the body's names."""
        src = ["def bind(self):",
               '    """This kernel\'s queues, GM tensors and buffers, under the names the tile body uses."""',
               f"    {targets(self.queues)} = self.inQueues",
               f"    {self.out_q} = self.outQueue",
               f"    {', '.join(self.gms)}, {self.out_gm} = self.gms"]
        if self.temps:
            src.append(f"    {targets(self.temps)} = self.temps")
        src += [f"    {self.var[at]} = self.bufs[{at}]   # {self.temps[loc - self.n_in - 1]} as {dt.name}, made at Init"
                for at, loc, dt in self.temp_views]
        src.append("    ubFactor = self.ubFactor")
        if any(self.brc):
            src.append("    blockOffset = self.blockOffset")
        src += [f"    {self.tensors[k]}_dims, {self.tensors[k]}_strides = self.brc[{k}]   # output dims, input strides"
                for k in range(self.n_in) if self.brc[k]]
        src += [f"    {self.caches[at]} = {{}}   # {self.var[loc]}'s blocks as {dt.name}, by UB offset"
                for at, loc, dt in self.tile_views]
        return src

    def copy_in(self) -> list[str]:
        src = ["", "    def CopyIn(self, i, n, p):", "        off = i * ubFactor"]
        for k in range(self.n_in):
            t, q, gm = self.tensors[k], self.queues[k], self.gms[k]
            src.append(f"        {t} = {q}.AllocTensor({self.in_dt[k]})")
            if self.brc[k]:
                src.append(f"        broadcast_copy({t}, {gm}, {t}_dims, {t}_strides, blockOffset + off, n)")
            else:
                src.append(f"        DataCopyPad({t}, {gm}[off], p[{k}])")
            src.append(f"        {q}.EnQue({t})")
        return src

    def compute(self, calls: list[str]) -> list[str]:
        src = ["", "    def Compute(self, n):"]
        src += [f"        {self.tensors[k]} = {self.queues[k]}.DeQue({self.in_dt[k]})" for k in range(self.n_in)]
        src.append(f"        {self.out_t} = {self.out_q}.AllocTensor({self.out_dt})")
        src += [f"        {self.var[at]} = _retyped({self.var[loc]}, {self.dtype_name(dt)}, {self.caches[at]})"
                for at, loc, dt in self.tile_views]
        src += [f"        {name} = -(-n // {ln.per}) * {ln.scale}" for ln, name in self.lengths.items()]
        src += [f"        {c}" for c in calls]
        src.append(f"        {self.out_q}.EnQue({self.out_t})")
        src += [f"        {self.queues[k]}.FreeTensor({self.tensors[k]})" for k in range(self.n_in)]
        return src

    def copy_out(self) -> list[str]:
        return ["", "    def CopyOut(self, i, n, p):",
                f"        {self.out_t} = {self.out_q}.DeQue({self.out_dt})",
                f"        DataCopyPad({self.out_gm}[i * ubFactor], {self.out_t}, p[{self.n_in}])",
                f"        {self.out_q}.FreeTensor({self.out_t})",
                "", "    return CopyIn, Compute, CopyOut", ""]

    def source(self) -> str:
        calls = self.calls()              # first: it names the constants the header lists
        lines = [*self.header(), *self.bind(), *self.copy_in(), *self.compute(calls), *self.copy_out()]
        return "\n".join(lines)


def _compile_body(prog: Program, brc: tuple[bool, ...]) -> tuple[str, Callable[..., Any]]:
    """Generate, compile and load the tile body (``ascendc.generated.load``: library code, as the kernel's own, whose
    lines a traceback shows)."""
    body = _TileBody(prog, brc)
    source = body.source()
    body.glob["__name__"] = __name__ + ".generated"
    return source, generated.load(source, f"TBE {prog.compute.name} tile body", body.glob)["bind"]

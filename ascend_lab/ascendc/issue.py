"""Issuing one instruction: its operands' checks, its cycles and its trace event -- what every instruction module
(:mod:`.instructions`, :mod:`.datacopy`, :mod:`.broadcast`, :mod:`.compare`, :mod:`.instructions_math` ...) shares.

* :func:`ub_operand` -- the elements an instruction reads or writes, with the sanitizer's common case (a live,
  clean tensor its pipe holds) answered inline, else through ``sanitizer.ub_span``;
* :func:`vector_done` -- occupy PIPE_V for the cost model's cycles (UB bank conflicts included, memoised per
  layout) and, when tracing, record the event;
* :func:`check_local`, :func:`show`, :func:`type_name`, :func:`tile_of` -- operand types, scalars and types as
  AscendC spells them, the tile an instruction works on.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ..base.platform import NpuArch
from . import sanitizer
from .core import CoreContext
from .cost_model import ge_att_table, vector_cycles
from .sanitizer import REPEAT_BYTES
from .tensor import GlobalTensor, LocalTensor
from .ub_banks import count_form

#: The unsigned integer type of each element size: instructions that move raw element bits view them as these.
UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def tile_of(*tensors: Any) -> int | None:
    """The loop tile the first tensor that knows one belongs to (None: the core's current tile applies)."""
    for t in tensors:
        tile = getattr(t, "tile", None)
        if tile is not None:
            return tile
    return None


#: Count-form instructions whose library sequence ends ``set_mask_norm(); set_vector_mask(-1, -1)`` (A2/A3) or
#: ``SetMaskNorm(); ResetMask()`` / ``ResetMask(); SetMaskNorm()`` (310P): Normal mode, all ones, whatever the kernel
#: had set (asc-devkit impl/basic_api/dav_c220|dav_m200 kernel_operator_vec_{binary,binary_scalar,unary,duplicate,
#: vconv,cmpsel,ternary_scalar}_impl.h @ 82b89a15; :mod:`.mask`). Not Compare/CompareScalar: their count form is
#: vcmpv over whole repeats, no mask write (dav_c220 kernel_operator_vec_cmp_impl.h:153-174).
MASK_RESETTING = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Adds", "Muls", "Maxs", "Mins",
                            "LeakyRelu", "Abs", "Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Not",
                            "Duplicate", "Cast", "Select", "Axpy"})
#: The architectures whose count forms do that (the 950's run a register loop that never writes the mask register;
#: 910A's leave the last chunk's continuous mask, not modelled -- :mod:`.mask`).
_RESETTING_ARCHS = frozenset({NpuArch.DAV_2201, NpuArch.DAV_2002})
_FULL = (1 << 64) - 1


#: Entries a SoC's vector-cost memo may hold before it starts afresh (a kernel uses a few dozen layouts).
_MEMO_LIMIT = 1 << 16


def _banked_cost(arch: NpuArch, api: str, dst: LocalTensor, count: int, width: int, reads: tuple[Any, ...],
                 mask: LocalTensor | None, dst_mask: bool, integer: bool = False,
                 cast_dir: tuple[str, str] | None = None) -> tuple[float, int]:
    """(cycles, beats added by bank conflicts) of a count-form instruction under the UB bank rules
    (:mod:`.ub_banks`): ``dst`` written (a bit-mask when ``dst_mask``), each of ``reads`` read at its own element
    width, ``mask`` read one bit per element; 256 / ``width`` elements per repeat; ``integer``: the operands are of
    an integer type (its own cost row where there is one, :func:`.cost_model.vector_cycles`); ``cast_dir``: the
    direction whose fit a Cast uses (:func:`.cost_model.cast_fit`)."""
    ops = [(dst.offset, 1 if dst_mask else dst.dtype.itemsize << 3, True)]
    for s in reads:
        ops.append((s.offset, s.dtype.itemsize << 3, False))
    if mask is not None:
        ops.append((mask.offset, 1, False))
    beats = count_form(arch, REPEAT_BYTES // width, count, tuple(ops))
    table = ge_att_table(arch)                        # GE-ATT V2 on the Ascend950, V1 elsewhere
    if beats.conflicts:
        return vector_cycles(api, width, count, beats.per_repeat, integer, cast_dir, table), beats.conflicts
    return vector_cycles(api, width, count, 1.0, integer, cast_dir, table), 0


def vector_done(ctx: CoreContext, api: str, dst: LocalTensor, count: int, width: int, detail: Any,
                 *srcs: Any, out_bytes: int | None = None, reads: tuple[Any, ...] | None = None,
                 mask: LocalTensor | None = None, integer: bool = False,
                 cast_dir: tuple[str, str] | None = None, row: str | None = None, mask_form: bool = False) -> None:
    """Occupy PIPE_V for the instruction's cycles; ``detail`` is a callable, only evaluated when tracing.

    Every count-form instruction passes here (``mask_form``: the mask/repeat form of :mod:`.mask`, which does
    not): on A2/A3 and 310P one of :data:`MASK_RESETTING` leaves the core's mask register as its library sequence
    does -- Normal mode, all ones -- so a later ``isSetMask = false`` instruction no longer sees what the kernel set.

    ``width`` and ``integer`` (the operands are of an integer type) choose the cost row: int32 and float32 have the
    same width but not always the same cost (GE-ATT V1 fits int32 ``Muls`` apart, :data:`.cost_model.INTEGER_ROWS`);
    ``cast_dir`` is the direction whose fit a Cast uses -- f16->f32 and f32->f16 cost differently at one layout;
    ``row`` the cost row when it is not ``api``'s own (a compare's mode/alignment row, :func:`.cost_model.compare_row`:
    GT and LT cost differently at one layout). The event keeps ``api`` as its name.

    The cycles include the beats UB bank conflicts add (:mod:`.ub_banks`), from the UB addresses of ``dst`` (a
    bit-mask when ``out_bytes`` is given), of the tensors read (``reads``, default ``srcs``) and of a bit-mask read
    per repeat (``mask``); ``srcs`` also name the tile. The event records the added beats (``bank_conflicts``)."""
    memo = ctx.cost.vector_memo
    cost = api if row is None else row
    if memo is None:                                   # no bank model on this SoC
        conflicts = 0
        start, end = ctx.issue("V", vector_cycles(cost, width, count, 1.0, integer, cast_dir, ctx.cost.table))
    else:
        # the answer depends only on these (flat key: this runs for every vector instruction of every tile)
        rd = srcs if reads is None else reads
        m = -1 if mask is None else mask.offset
        n = len(rd)
        if n == 0:                                     # Duplicate
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m)
        elif n == 1:
            s = rd[0]
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m, s.offset,
                   s.dtype.itemsize)
        elif n == 2:
            s, t = rd
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m, s.offset,
                   s.dtype.itemsize, t.offset, t.dtype.itemsize)
        else:
            key = (cost, width, integer, cast_dir, count, out_bytes, dst.offset, dst.dtype.itemsize, m,
                   *[x for s in rd for x in (s.offset, s.dtype.itemsize)])
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            hit = memo[key] = _banked_cost(ctx.soc.npu_arch, cost, dst, count, width, rd, mask, out_bytes is not None,
                                           integer, cast_dir)
        cycles, conflicts = hit
        start, end = ctx.issue("V", cycles)
    if not mask_form and api in MASK_RESETTING:
        _library_resets_mask(ctx)
    if ctx.record:
        _record_vector(ctx, api, dst, count, out_bytes, srcs, detail, start, end, conflicts)


def _library_resets_mask(ctx: CoreContext) -> None:
    """A count-form instruction on A2/A3 or 310P ends with the library's SetMaskNorm + all-ones mask."""
    reg = ctx.__dict__.get("vector_mask")              # None: never written, already Normal with all ones
    if reg is not None and ctx.soc.npu_arch in _RESETTING_ARCHS:
        reg.counter, reg.high, reg.low = False, _FULL, _FULL


def _record_vector(ctx: CoreContext, api: str, dst: LocalTensor, count: int, out_bytes: int | None,
                   srcs: tuple[Any, ...], detail: Any, start: float, end: float, conflicts: int) -> None:
    """The trace event of one vector instruction (and, in snapshot mode, the values it wrote)."""
    values = None
    if ctx.snapshot:
        if api in ("CompareScalar", "Compare"):
            values = np.unpackbits(ctx.ub[dst.offset:dst.offset + count // 8], bitorder="little").astype(bool)
        else:
            values = dst.data[:count].copy() if count <= dst.size else None
    nbytes = count * dst.dtype.itemsize if out_bytes is None else out_bytes
    tile = tile_of(dst, *srcs)
    ctx.event("V", api, ctx.current_tile if tile is None else tile, start, end, nbytes=nbytes, count=count,
              ub=(dst.offset, dst.offset + nbytes), buffer=dst.buffer, detail=detail(), values=values,
              bank_conflicts=conflicts)


def check_local(instr: str, *ts: Any) -> None:
    for t in ts:
        if t.__class__ is not LocalTensor and not isinstance(t, LocalTensor):
            raise TypeError(f"{instr} needs LocalTensor operands, got {type(t).__name__}")


def show(value: Any) -> str:
    """The exact value of a scalar operand with its type, e.g. ``half 0.10003662109375`` (numpy's own
    repr would print the shortest string that round-trips, ``0.1``, hiding the rounding)."""
    dt = getattr(value, "dtype", None) or np.asarray(value).dtype
    exact = repr(float(value)) if dt.kind in "fV" else str(int(value))
    return f"{type_name(dt)} {exact}"


@cache
def type_name(dt: np.dtype) -> str:
    """AscendC's name for an element type (``half``, ``float``, ``bfloat16``, ``int8``...)."""
    return {"float16": "half", "float32": "float"}.get(dt.name, dt.name)



def ub_operand(t: LocalTensor, count: int, instr: str, write: bool, pipe: str = "V",
          result: GlobalTensor | None = None) -> np.ndarray:
    """``sanitizer.ub_span`` with its common case answered without a call: a live tensor, in bounds, on a buffer
    that is fully written with no poison (``clean``) and held by this pipe; a write also needs no poisoned
    elements pending from the instruction's reads (``ctx.taint``). An instruction's reads must come before its
    write: the write takes over what the reads found (see ``sanitizer.ub_access``). ``result``: for a copy to GM,
    where it lands (the sanitizer works out which elements land in this core's part of the tensor)."""
    r = t.region
    if r is not None and r.clean and count <= t.size and t.life.alive:
        owner = r.owner
        if owner is pipe or owner is None:              # held by this pipe, or free to it (just allocated)
            if not write:
                if owner is None:
                    r.owner, r.wrote = pipe, False
                # the whole tensor is the common case (a tile fills its block): its view as is, no new slice
                return t.data if count == t.size else t.data[:count]
            if t.ctx.taint is None:
                r.owner, r.wrote = pipe, True
                return t.data if count == t.size else t.data[:count]
    return sanitizer.ub_span(t, count, instr, write, pipe, result)

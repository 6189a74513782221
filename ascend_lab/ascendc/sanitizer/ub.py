"""Findings of Unified Buffer operands: a freed tensor, a span past the UB or past its buffer (``ub-overrun``,
with what lies beyond byte by byte), and GetValue/SetValue; then the shadow bookkeeping (:mod:`.shadow`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .report import stop, warn
from .shadow import QUEUED, race, ub_access

if TYPE_CHECKING:        # annotations only: core and tensor import this package
    from ..core import CoreContext
    from ..tensor import LocalTensor


def _pipe_of(instr: str, write: bool) -> str:
    """The pipe of an access when the caller does not say: copies GM -> UB on MTE2, UB -> GM on MTE3, else V."""
    if instr.startswith("DataCopy"):
        return "MTE2" if write else "MTE3"
    return "V"


def ub_span(t: LocalTensor, count: int, instr: str, write: bool, pipe: str | None = None,
            result: Any = None) -> np.ndarray:
    """The first ``count`` elements of ``t`` after the UB checks: the tensor is alive, the span stays in the
    UB, and a span longer than the buffer is an overrun (an error when a write lands in another buffer,
    else a warning); then the race and uninitialised-read bookkeeping (:func:`ub_access`) for ``pipe`` (by
    default MTE2 for a ``DataCopy...`` write, MTE3 for its read, else V). Instructions answer the common case
    (alive, in bounds, a clean buffer their pipe holds) without calling this. ``result`` (a copy to GM): the
    GlobalTensor it lands in; only the elements that land in this core's part of the result count as reaching it:
    inside the tensor (not its padding) and inside the GlobalTensor's SetGlobalBuffer size when it has one (past
    it lies another core's part; see the notes above :func:`ub_access`)."""
    ctx = t.ctx
    if result is not None:
        inside = result.bytes_to_end // t.dtype.itemsize
        result = min(inside, result.size) if result.size else inside
    if not t.life.alive:
        raise stop("use-after-free", f"{t.buffer} is used after FreeTensor", instruction=instr, core=ctx.core,
                   tile=t.tile)
    item = t.dtype.itemsize
    if count <= t.size:
        a = t.offset * 8
        ub_access(t, a, a + count * item * 8, item * 8, instr, write, pipe or _pipe_of(instr, write),
                  None if result is None else a + max(result, 0) * item * 8)
        return t.data[:count]
    end = t.offset + count * t.dtype.itemsize
    if end > ctx.ub_capacity:
        raise stop("ub-out-of-bounds", f"{count} elements from {t.buffer} run past the end of the Unified Buffer "
                   f"({end} > {ctx.ub_capacity} B)", instruction=instr, core=ctx.core, tile=t.tile)
    other = ctx.region_at(t.offset + t.nbytes, end, exclude=-1)
    what = _overrun_text(ctx, t, count, write)
    if write and other is not None and other.name != t.buffer:
        raise stop("ub-overrun", what, instruction=instr, core=ctx.core, tile=t.tile)
    warn(ctx, instr, ctx.current_tile if t.tile is None else t.tile, "ub-overrun", what)
    ub_access(t, t.offset * 8, end * 8, item * 8, instr, write, pipe or _pipe_of(instr, write),
              None if result is None else t.offset * 8 + max(result, 0) * item * 8)
    return ctx.ub[t.offset:end].view(t.dtype)


def beyond(ctx: CoreContext, start: int, end: int, own: str = "") -> list[str]:
    """What lies in UB ``[start, end)``, every byte accounted for: each buffer's part and the free bytes between
    and after them, in address order (``own``: the buffer whose rest this is, so named)."""
    parts: list[str] = []
    at = start
    for r in sorted(ctx.regions, key=lambda r: r.start):
        lo, hi = max(r.start, start), min(r.end, end)
        if lo >= hi:
            continue
        if lo > at:
            parts.append(f"[{at}, {lo}) = {lo - at} B of free UB")
        name = f"the rest of {r.name} itself" if r.name == own else r.name
        parts.append(f"[{lo}, {hi}) = {hi - lo} B of {name}")
        at = hi
    if at < end:
        parts.append(f"[{at}, {end}) = {end - at} B of free UB")
    return parts


def _overrun_text(ctx: CoreContext, t: LocalTensor, count: int, write: bool) -> str:
    """An overrun, byte by byte: the access, the tensor's range, the bytes inside it, the bytes past it and what
    lies there (the parts add up to the access)."""
    item = t.dtype.itemsize
    start, t_end, end = t.offset, t.offset + t.nbytes, t.offset + count * item
    verb = "writes" if write else "reads"
    return (f"{verb} {count} elements ({count * item} B) at UB [{start}, {end}) of {t.buffer}, which holds {t.size} "
            f"elements at [{start}, {t_end}): {t_end - start} B inside it, {end - t_end} B past its end -- "
            + "; ".join(beyond(ctx, t_end, end, own=t.buffer)))


def scalar_access(t: LocalTensor, i: int, write: bool) -> None:
    """GetValue/SetValue (the scalar unit): the tensor is alive, element ``i`` lies inside it, and the UB
    bookkeeping sees the read or write (a SetValue of a queued tensor is a ``write-after-enque``)."""
    instr = "SetValue" if write else "GetValue"
    ctx = t.ctx
    tile = ctx.current_tile if t.tile is None else t.tile
    if not t.life.alive:
        raise stop("scalar-after-free", f"{instr}({i}) on {t.buffer} after FreeTensor released it", instruction=instr,
                   core=ctx.core, tile=tile)
    if not 0 <= i < t.size:
        item = t.dtype.itemsize
        a, b = t.offset + i * item, t.offset + (i + 1) * item
        if i < 0 or b > ctx.ub_capacity:
            there = "outside the Unified Buffer"
        else:
            there = "; ".join(beyond(ctx, a, b, own=t.buffer))
        raise stop("ub-overrun", f"{instr}({i}) on {t.buffer}, which holds {t.size} elements at UB [{t.offset}, "
                   f"{t.offset + t.nbytes}): element {i} is the {item} B at [{a}, {b}), "
                   f"{'before its start' if i < 0 else f'{b - t.offset - t.nbytes} B past its end'} -- {there}",
                   instruction=instr, core=ctx.core, tile=tile)
    item = t.dtype.itemsize * 8
    a = t.offset * 8 + i * item
    r = t.region
    if write and r is not None and r.owner is QUEUED:
        race(ctx, t, instr, True, "S")
    ctx.taint = None
    ub_access(t, a, a + item, item, instr, write, "S")


"""The shadow model of the Unified Buffer: who wrote which UB bits (``ub-uninit``) and which pipe holds each
buffer (``ub-race``, ``write-after-enque``), the PipeBarrier and SetFlag/WaitFlag hand-overs.

Both checks keep per-instruction bookkeeping only -- intervals, never a per-element shadow:

* **ub-uninit.** Each core keeps the UB bit ranges some instruction has written since the launch (``written``;
  bits, because a compare writes one mask bit per element) and the ranges that hold values computed from
  unwritten bytes (``poison``). A read of unwritten bits by a vector instruction is a ``ub-uninit`` warning, and
  the elements of the instruction that read them (element i of every operand is element i of the result; bit i
  of a mask is element i) are *poisoned* in its destination; a read of poisoned bits poisons the destination
  again without a new warning; a clean write un-poisons. A copy UB -> GM (MTE3) of unwritten or poisoned bytes
  is the error: uninitialised data reached a result -- counting only the bytes that land in the copying core's
  own part of the tensor (inside the tensor's logical bytes and inside the GlobalTensor's SetGlobalBuffer size):
  bytes written into the padding are ``gm-padding``'s finding, and bytes written past the GlobalTensor's size
  land in a neighbouring core's part, which that core writes too (on the device the two writes race; the
  simulator runs the cores one after another, so the owner's data is what remains -- not reported here).
  When it *warns*, precisely: a vector instruction or a
  GetValue reads bytes no instruction of the core has written, once per byte range and core -- except a
  Compare/CompareScalar (or the Not that inverts its mask, as TBE's lowering does) whose unwritten bytes all lie
  in the operand's last 256-byte repeat: compares work on whole repeats (§1.5), kernels round their count up to
  one (HardSigmoidGrad's CompareScalar over roundUp(n, 256 / sizeof(T)), the atvoss Compare node, TBE's vcmp
  and its Not over whole 32-byte blocks of the mask), and the Select after it reads only the data's bits, so
  those padding lanes are tracked (poisoned) but not reported unless they reach GM. The simulator cannot follow
  a GetValue's scalar through Python code, so that stays a warning. "Written" is monotone: bytes a previous
  tile wrote count as written (stale, not uninitialised).
* **ub-race** (ascendc_facts §1.2: pipes run concurrently, only SetFlag/WaitFlag -- issued by the queue calls --
  or PipeBarrier<PIPE_ALL> order them). Each UB buffer (a queue block or a TBuf) has an *owner*: the pipe that
  last touched it since the last hand-off. AllocTensor and PipeBarrier<PIPE_ALL> leave it free (the next pipe
  takes it), EnQue marks it *queued* (only the pipe that filled it may still read it; any write is a
  ``write-after-enque``), DeQue gives it to the queue's consumer. A pipe touching a buffer another pipe owns is a
  race when either access writes (two reads do not conflict). The scalar unit (GetValue/SetValue) is left out:
  the compiler's auto-sync inserts its V_S/S_V flags (ascendc_facts §1.2). Accesses are checked per buffer (an
  overrun into a neighbour is ``ub-overrun``'s business), and a read by a second pipe does not become the owner.

The instructions answer the common case -- the buffer is fully written, holds no poison and is owned by the
pipe that touches it -- without calling here (``UBState.clean`` and ``UBState.owner``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from ..errors import KernelError
from .catalogue import REPEAT_BYTES
from .report import stop, warn

if TYPE_CHECKING:        # annotations only: core and tensor import this package
    from ..core import CoreContext
    from ..tensor import LocalTensor

#: ``UBState.owner`` of a block between EnQue and DeQue.
QUEUED = "queued"
#: Instructions that work on whole 256-byte repeats (ascendc_facts §1.5): kernels round their count up to a whole
#: repeat, so unwritten bytes in an operand's last repeat are its padding lanes, not a finding by themselves.
_WHOLE_REPEAT_READS = frozenset({"Compare", "CompareScalar", "Not"})
_REPEAT_BITS = REPEAT_BYTES * 8
#: Instructions whose result bit k comes from bit k of their source (poison is followed bit by bit through them,
#: so a NOT of a compare mask keeps the mask's poisoned bits exact; others poison whole elements).
_BITWISE = frozenset({"Not", "DataCopy"})


class Intervals:
    """A set of integers as sorted, disjoint, non-touching half-open ranges ``[lo[k], hi[k])``."""

    __slots__ = ("lo", "hi")

    def __init__(self) -> None:
        self.lo: list[int] = []
        self.hi: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.lo)

    def add(self, a: int, b: int) -> None:
        if a >= b:
            return
        lo, hi = self.lo, self.hi
        i = bisect_left(hi, a)                 # first range ending at or after a (touching ranges merge)
        j = bisect_right(lo, b)                # ranges starting at or before b
        if i < j:
            a, b = min(a, lo[i]), max(b, hi[j - 1])
        lo[i:j] = [a]
        hi[i:j] = [b]

    def remove(self, a: int, b: int) -> None:
        lo, hi = self.lo, self.hi
        i = bisect_right(hi, a)
        j = bisect_left(lo, b)
        if i >= j:
            return
        keep_lo, keep_hi = [], []
        if lo[i] < a:
            keep_lo.append(lo[i])
            keep_hi.append(a)
        if hi[j - 1] > b:
            keep_lo.append(b)
            keep_hi.append(hi[j - 1])
        lo[i:j] = keep_lo
        hi[i:j] = keep_hi

    def overlaps(self, a: int, b: int) -> list[tuple[int, int]]:
        """The parts of ``[a, b)`` in the set."""
        lo, hi = self.lo, self.hi
        return [(max(lo[k], a), min(hi[k], b)) for k in range(bisect_right(hi, a), bisect_left(lo, b))]

    def gaps(self, a: int, b: int) -> list[tuple[int, int]]:
        """The parts of ``[a, b)`` not in the set."""
        out, at = [], a
        for x, y in self.overlaps(a, b):
            if x > at:
                out.append((at, x))
            at = y
        if at < b:
            out.append((at, b))
        return out

    def covers(self, a: int, b: int) -> bool:
        i = bisect_right(self.hi, a)
        return a >= b or (i < len(self.lo) and self.lo[i] <= a and self.hi[i] >= b)


def _bytes(ranges: list[tuple[int, int]]) -> str:
    """Bit ranges as the UB byte ranges they touch: ``[1024, 1152)``."""
    parts = [f"[{x // 8}, {-(-y // 8)})" for x, y in ranges[:3]]
    return ", ".join(parts) + (" ..." if len(ranges) > 3 else "")


def _nbytes(ranges: list[tuple[int, int]]) -> int:
    return sum(-(-y // 8) - x // 8 for x, y in ranges)


def race(ctx: CoreContext, t: LocalTensor, instr: str, write: bool, pipe: str) -> None:
    """``pipe`` touches ``t``'s buffer, which it does not own: take it over if it is free or a WaitFlag granted it,
    else stop with ``write-after-enque`` or ``ub-race`` (the rules above)."""
    r = t.region
    owner = r.owner
    if owner is None:
        r.owner, r.wrote = pipe, write
        return
    grants = ctx.__dict__.get("flag_grants")
    if grants:                                  # a WaitFlag ordered this pipe after the owner (flag_handover)
        g = grants.get(id(r))
        if g is not None and g[0] == owner and pipe in g[1]:
            del grants[id(r)]
            r.owner, r.wrote = pipe, write
            return
    tile = ctx.current_tile if t.tile is None else t.tile
    if owner == QUEUED:
        if write:
            raise stop("write-after-enque", f"{pipe} writes {t.buffer} (tile {t.tile}) after its EnQue on "
                       f"{t.queue.name if t.queue is not None else 'its queue'} and before the consumer's DeQue",
                       instruction=instr, core=ctx.core, tile=tile)
        if pipe != r.queued_by:
            raise stop("ub-race", f"{pipe} reads {t.buffer} (tile {t.tile}) after {r.queued_by} EnQue'd it but "
                       f"before its DeQue: nothing makes {pipe} wait for {r.queued_by}'s writes",
                       instruction=instr, core=ctx.core, tile=tile)
        return
    if write or r.wrote:
        what = "writes" if write else "reads"
        before = "wrote" if r.wrote else "read"
        raise stop("ub-race", f"{pipe} {what} {t.buffer}, which {owner} {before} with no queue hand-off (EnQue/DeQue, "
                   f"FreeTensor/AllocTensor) or PipeBarrier<PIPE_ALL> in between: the two pipes run concurrently",
                   instruction=instr, core=ctx.core, tile=tile)


def ub_access(t: LocalTensor, a: int, b: int, unit: int, instr: str, write: bool, pipe: str,
              result_end: int | None = None) -> None:
    """Bookkeeping of one UB operand: bits ``[a, b)`` of the UB, whose element i is bits ``[a + i*unit, ...)``,
    read or written by ``pipe``. Runs the race checks and the uninitialised-read tracking described above.
    ``result_end`` (a copy to GM): bits from there on land in the GM tensor's padding, not in the result.
    The common cases (a span written cleanly before, a span read clean before) return here, before any call."""
    ctx = t.ctx
    r = t.region
    if r is not None and r.owner != pipe and pipe != "S":
        race(ctx, t, instr, write, pipe)
    if write:
        if r is not None and r.owner == pipe:
            r.wrote = True
        taint, ctx.taint = ctx.taint, None
        if pipe != "V":                 # only a vector instruction computes its result from what it read
            taint = None
        if taint is None and not ctx.poison and (a, b) in ctx.written_spans:
            return
        _record_write(ctx, r, a, b, unit, taint)
        return
    if (a, b) in ctx.clean_spans:
        return
    unwritten = ctx.written.gaps(a, b)
    poisoned = ctx.poison.overlaps(a, b)
    if not unwritten and not poisoned:
        ctx.clean_spans.add((a, b))
        return
    _unclean_read(t, a, b, unit, instr, pipe, result_end, unwritten, poisoned)


def _record_write(ctx: CoreContext, r: Any, a: int, b: int, unit: int,
                  taint: list[tuple[int, int, int]] | None) -> None:
    """A write of bits ``[a, b)``: they count as written; they are poisoned where the vector instruction's ``taint``
    (the spans of its sources it read unwritten or poisoned) maps onto its result, else un-poisoned."""
    written, poison = ctx.written, ctx.poison
    written.add(a, b)
    if poison:
        poison.remove(a, b)
    if taint is None:
        ctx.written_spans.add((a, b))
    else:
        for lo, hi, src_unit in taint:
            if src_unit == 0:                      # a bitwise instruction: the poisoned bits map one to one
                x, y = a + lo, min(a + hi, b)
            else:                                  # element i of the sources is element i of the result
                x, y = a + lo // src_unit * unit, min(a + -(-hi // src_unit) * unit, b)
            if x < y:
                poison.add(x, y)
                for st in ctx.states:
                    if st.start * 8 < y and x < st.end * 8:
                        st.clean = False
        ctx.clean_spans.clear()
    if r is not None and not r.clean:
        lo, hi = r.start * 8, r.end * 8
        r.clean = written.covers(lo, hi) and not poison.overlaps(lo, hi)


def _unclean_read(t: LocalTensor, a: int, b: int, unit: int, instr: str, pipe: str, result_end: int | None,
                  unwritten: list[tuple[int, int]], poisoned: list[tuple[int, int]]) -> None:
    """A read of bits ``[a, b)`` of which ``unwritten`` were never written and ``poisoned`` were computed from such
    bits: a copy to GM stops, a vector read or GetValue warns (once per range and core) and a vector read taints its
    result (:func:`_record_write` poisons it)."""
    ctx = t.ctx
    tile = ctx.current_tile if t.tile is None else t.tile
    if pipe == "MTE3":
        _uninit_copy_out(t, instr, tile, result_end, unwritten, poisoned)
        return
    unwritten_warn = unwritten
    if unwritten and instr in _WHOLE_REPEAT_READS:
        last = a + (-(-(b - a) // _REPEAT_BITS) - 1) * _REPEAT_BITS     # first bit of the operand's last repeat
        if unwritten[0][0] >= last:
            unwritten_warn = []                                          # the repeat padding: tracked, not warned
    fresh = [g for x, y in unwritten_warn for g in ctx.uninit_warned.gaps(x, y)]   # one warning per range and core
    if fresh:
        for x, y in fresh:
            ctx.uninit_warned.add(x, y)
        warn(ctx, instr, tile, "ub-uninit", f"reads {_nbytes(fresh)} B of {t.buffer} that no instruction has "
             f"written (UB bytes {_bytes(fresh)}); harmless unless what is computed from them reaches GM")
    if pipe == "V":
        spans = ctx.taint if ctx.taint is not None else []
        src_unit = 0 if instr in _BITWISE else unit
        for x, y in unwritten + poisoned:
            spans.append((x - a, y - a, src_unit))
        ctx.taint = spans


def _uninit_copy_out(t: LocalTensor, instr: str, tile: int | None, result_end: int | None,
                     unwritten: list[tuple[int, int]], poisoned: list[tuple[int, int]]) -> None:
    """A copy to GM (MTE3) of unwritten or poisoned bits stops the kernel, counting only the bits before
    ``result_end`` (what lands in the padding is gm-padding's business, not a result)."""
    if result_end is not None:
        unwritten = [(x, min(y, result_end)) for x, y in unwritten if x < result_end]
        poisoned = [(x, min(y, result_end)) for x, y in poisoned if x < result_end]
        if not unwritten and not poisoned:
            return
    if unwritten:
        what = f"{_nbytes(unwritten)} B no instruction has written (UB bytes {_bytes(unwritten)})"
    else:
        what = (f"{_nbytes(poisoned)} B computed from UB bytes no instruction had written (UB bytes "
                f"{_bytes(poisoned)})")
    raise stop("ub-uninit", f"copies {t.buffer} to GM with {what}: uninitialised data reaches the result",
               instruction=instr, core=t.ctx.core, tile=tile)


def pipe_barrier_all(ctx: CoreContext) -> None:
    """PipeBarrier<PIPE_ALL>: every pipe has drained, so every buffer not in a queue is free to the next pipe."""
    for st in ctx.states:
        if st.owner is not QUEUED:
            st.owner, st.wrote = None, False



def flag_unset(ctx: CoreContext, event: str, event_id: int) -> KernelError:
    """WaitFlag with no SetFlag of its event and ID pending (the device would hang)."""
    return stop("flag-unset", f"WaitFlag<HardEvent::{event}>({event_id}) with no SetFlag<HardEvent::{event}>"
                f"({event_id}) before it: the {event.split('_', 1)[1]} pipe would wait forever",
                instruction="WaitFlag", core=ctx.core, tile=ctx.current_tile)


def flag_states(ctx: CoreContext, src: str) -> list[Any]:
    """SetFlag: the buffers the source pipe holds now (not in a queue) -- what the matching WaitFlag hands over."""
    return [st for st in ctx.states if st.owner == src]


def flag_handover(ctx: CoreContext, states: list[Any], src: str, dst: str) -> None:
    """WaitFlag<SRC_DST>: ``dst`` is ordered after what ``src`` did to the buffers it held at the SetFlag. Each such
    buffer ``src`` still holds is granted to ``dst``: ``dst``'s next access takes it over without a ``ub-race``
    (:func:`race`), while a third pipe's access is still one, and so is ``src`` writing it again after ``dst`` took
    it (until a flag the other way). A grant ends when another pipe takes the buffer. (An access ``src`` issued after
    the SetFlag is covered too: the simulator keeps one owner per buffer, not the time of each access.)"""
    grants = ctx.__dict__.setdefault("flag_grants", {})
    for st in states:
        if st.owner == src:
            g = grants.get(id(st))
            if g is None or g[0] != src:
                g = grants[id(st)] = (src, set())
            g[1].add(dst)

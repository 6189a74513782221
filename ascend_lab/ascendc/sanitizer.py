"""The simulator's sanitizer: every check the simulated AI Core makes on a kernel, in one place.

A real AI Core does not check much. A copy that is not a multiple of 32 bytes silently loses its tail, an
``AllocTensor`` with no free block spins forever, a write past a buffer lands in its neighbour. The
simulator checks these where the instruction runs and reports a *finding* of one of the kinds in
:data:`FINDINGS`, each with what it means and what to do about it:

* a finding that would break the kernel on the device (or that the CPU-debug build of AscendC asserts on)
  stops the kernel with a :class:`~.errors.KernelError` naming the kind, instruction, core and tile;
* a finding the hardware tolerates (reading the documented 256-byte GM padding, a compare over a partial
  256-byte repeat, a read past a buffer into free UB) is recorded as a :class:`~.trace.Warning_` in the
  trace, and the kernel carries on. ``launch(strict=...)`` can turn chosen warnings into errors.

Instructions (:mod:`.instructions`), queues (:mod:`.pipe`), tensors (:mod:`.tensor`), the UB allocator
(:mod:`.core`) and the launcher call the functions below; none of them builds a finding itself. Sources:
``shared/reference/ascendc_facts.md`` §1.2 (queues), §1.4 (DataCopy/DataCopyPad), §1.5 (256-byte
repeats), §1.8 (UB reserve), and ``cann_facts.md`` §4.1/§4.2 (ThresholdGradV2D's 256-byte GM padding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import KernelError
from .trace import Warning_

if TYPE_CHECKING:        # annotations only: core, tensor and pipe import this module
    from .core import CoreContext
    from .tensor import LocalTensor

#: Bytes one vector repeat covers (ascendc_facts §1.5); compares work on whole repeats only.
REPEAT_BYTES = 256
#: The padding ThresholdGradV2D's inputs and output get in GM (cann_facts §4.1): tensors are allocated
#: in whole 256-byte units, and the kernel relies on it.
GM_PADDING = 256
#: Most buffers one TPipe may hold (ascendc_facts §1.2).
MAX_BUFFERS = 64


@dataclass(frozen=True)
class Finding:
    """One kind of sanitizer finding: its name, whether it stops the kernel, what it means, what to do.

    ``outcome`` is ``"error"`` (the kernel stops), ``"warning"`` (recorded, the kernel carries on) or
    ``"error or warning"`` (``ub-overrun``: a write into another buffer stops, anything else warns)."""
    kind: str
    outcome: str
    meaning: str
    hint: str

    @property
    def stops(self) -> bool:
        """Can this kind stop a kernel?"""
        return "error" in self.outcome

    @property
    def warns(self) -> bool:
        """Can this kind be recorded as a warning?"""
        return "warning" in self.outcome


_E, _W, _EW = "error", "warning", "error or warning"

#: Every kind of finding, in the order a kernel meets them (launch, Init, queues, copies, compute).
FINDINGS: dict[str, Finding] = {f.kind: f for f in (
    Finding("bad-launch", _E, "the launch asks for fewer than one core (blockDim < 1)",
            "launch with blockDim >= 1: the tiling's core count, usually min(cores needed, cores of the SoC)"),
    Finding("ub-overflow", _E,
            "TPipe::InitBuffer places a block past the usable Unified Buffer: the SoC's UB minus the bytes "
            "the AscendC library reserves at its top (8 KB + 256 B on A2/A3/310P, none on Ascend950)",
            "shrink the tile (fewer elements per block), use fewer blocks (BUFFER_NUM) or temporaries, and "
            "check that InitBuffer lengths are bytes (elements * sizeof(T), not multiplied twice)"),
    Finding("too-many-buffers", _E, f"one TPipe holds more than {MAX_BUFFERS} buffers",
            "merge temporaries into one TBuf and index into it"),
    Finding("bad-initbuffer", _E, "TPipe::InitBuffer is asked for a queue with no blocks (num < 1)",
            "pass num = 1 (single buffer) or 2 (double buffer)"),
    Finding("queue-uninitialised", _E, "a TQue is used before TPipe::InitBuffer gave it blocks",
            "call pipe.InitBuffer(queue, num, bytes) in Init, before the Process loop"),
    Finding("buffer-uninitialised", _E, "a TBuf is used before TPipe::InitBuffer gave it memory",
            "call pipe.InitBuffer(tbuf, bytes) in Init, before Get()"),
    Finding("tbuf-too-small", _E, "TBuf::Get asks for more elements than the buffer holds",
            "size the TBuf in InitBuffer for the largest dtype it is read as (elements * sizeof(T))"),
    Finding("alloc-exhausted", _E,
            "AllocTensor finds every block of the queue still in use; on the device the core spins forever",
            "free each tensor once it is consumed: every AllocTensor needs a matching FreeTensor (after "
            "DeQue) in the same loop iteration"),
    Finding("use-after-free", _E, "a LocalTensor is used (or enqueued) after FreeTensor released its block",
            "move FreeTensor after the tensor's last use, or AllocTensor a fresh block"),
    Finding("wrong-queue", _E,
            "EnQue or FreeTensor of a tensor on a queue it was not allocated from (or of a TBuf tensor)",
            "EnQue/FreeTensor a tensor on the queue whose AllocTensor/DeQue returned it"),
    Finding("enque-overflow", _E, "EnQue on a queue that already holds its depth of tensors",
            "DeQue before enqueuing more, or give the TQue a larger depth"),
    Finding("deque-empty", _E, "DeQue of a queue nothing was enqueued on",
            "EnQue the tensor on this queue (after its copy or computation) before the DeQue that reads it"),
    Finding("double-free", _E, "FreeTensor of a tensor that is already free",
            "free each allocated tensor exactly once"),
    Finding("gm-unset", _E, "a GlobalTensor is copied before SetGlobalBuffer gave it an address",
            "call xGm.SetGlobalBuffer(x + offset * sizeof(T), length) in Init"),
    Finding("gm-freed", _E, "a copy touches device memory that was already freed (aclrtFree)",
            "keep the tensors alive until the kernel and its stream have finished"),
    Finding("gm-out-of-bounds", _E,
            f"a copy reads or writes GM outside its tensor and the tensor's {GM_PADDING}-byte padding",
            "check the core's offset (GetBlockIdx() * elements per core) and the tail tile's length"),
    Finding("gm-padding", _W,
            f"a copy reads or writes past the logical end of a GM tensor, inside its {GM_PADDING}-byte padding: "
            "reads see stale bytes, writes clobber whatever lies there",
            "copy only the tensor's bytes on the last tile (DataCopyPad with the exact blockLen)"),
    Finding("misaligned-copy", _E,
            "a DataCopy whose length is not a multiple of 32 bytes (the hardware silently drops the tail), a "
            "UB address that is not 32-byte aligned, or a DataCopyPad blockLen that is not a multiple of "
            "sizeof(T)",
            "use DataCopyPad for lengths that are not 32-byte multiples, and keep UB offsets 32-byte aligned"),
    Finding("ub-out-of-bounds", _E, "an instruction's operand runs past the end of the Unified Buffer",
            "count at most the tensor's GetSize() elements"),
    Finding("ub-overrun", _EW,
            "an instruction touches more elements than its UB buffer holds: a write that lands in another "
            "buffer stops the kernel, a read (or a write into free UB) is a warning",
            "size the buffer for count * sizeof(T) of the dtype it is used as (ReinterpretCast included)"),
    Finding("partial-repeat", _W,
            f"a compare over a count that is not a whole number of {REPEAT_BYTES}-byte repeats: the trailing "
            "elements are not compared and their mask bits keep stale values",
            f"round the count up to a multiple of {REPEAT_BYTES} / sizeof(T) elements (pad the tile)"),
)}


def explain(kind: str) -> Finding:
    """The :class:`Finding` of a kind (``explain("gm-padding").hint``); ValueError for an unknown kind."""
    try:
        return FINDINGS[kind]
    except KeyError:
        raise ValueError(f"unknown sanitizer finding {kind!r}; the kinds are {', '.join(FINDINGS)}") from None


# --- reporting ----------------------------------------------------------------------------------------
def stop(kind: str, message: str, *, instruction: str, core: int | None = None,
         tile: int | None = None) -> KernelError:
    """The error that stops a kernel on a ``kind`` finding (the caller raises it, so the traceback ends at
    the instruction). Its text is ``[kind] message (instruction ..., core ..., tile ...)``; ``hint``
    carries the catalogue's advice."""
    finding = explain(kind)
    if not finding.stops:
        raise ValueError(f"{kind} is a warning, not an error: report it with sanitizer.warn")
    return KernelError(message, instruction=instruction, core=core, tile=tile, kind=kind, hint=finding.hint)


def warn(ctx: CoreContext, instr: str, tile: int | None, kind: str, message: str) -> None:
    """Record a finding the hardware tolerates as a warning (always, trace or not). Under a ``strict``
    policy (see ``launch``) a finding the policy names stops the kernel right here."""
    finding = explain(kind)
    if not finding.warns:
        raise ValueError(f"{kind} stops the kernel: raise sanitizer.stop(...) instead of warning")
    w = Warning_(ctx.core, tile, instr, kind, message)
    ctx.trace.warnings.append(w)
    if ctx.strict is not None:
        why = ctx.strict(w)
        if why:
            raise KernelError(f"{message} -- {why}", instruction=instr, core=ctx.core, tile=tile, kind=kind,
                              hint=finding.hint)


# --- launch and UB plan -------------------------------------------------------------------------------
def check_launch(block_dim: int) -> None:
    if block_dim < 1:
        raise stop("bad-launch", f"blockDim must be >= 1, got {block_dim}", instruction="launch")


def check_ub_plan(ctx: CoreContext, name: str, start: int, nbytes: int) -> None:
    """TPipe::InitBuffer: the block ``[start, start + nbytes)`` must end inside the usable UB (a plan-only
    launch records an over-capacity plan instead, for the UB layout figure)."""
    end = start + nbytes
    if end > ctx.ub_limit and not ctx.plan_only:
        reserved = ctx.ub_capacity - ctx.ub_limit
        raise stop("ub-overflow",
                   f"UB over capacity: {name} needs {nbytes} B at offset {start}, ending at {end} B, but only "
                   f"{ctx.ub_limit} B are usable ({ctx.ub_capacity} B UB"
                   + (f" minus {reserved} B reserved" if reserved else "") + f"); overflow {end - ctx.ub_limit} B",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_buffer_count(ctx: CoreContext) -> None:
    if ctx.buffer_count > MAX_BUFFERS:
        raise stop("too-many-buffers", f"more than {MAX_BUFFERS} buffers in one TPipe",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_initbuffer_num(ctx: CoreContext, name: str, num: int) -> None:
    if num < 1:
        raise stop("bad-initbuffer", f"InitBuffer({name}, {num}, ...) needs at least one block",
                   instruction="TPipe::InitBuffer", core=ctx.core)


# --- queues and buffers -------------------------------------------------------------------------------
def uninitialised_queue(name: str | None, instr: str, core: int) -> KernelError:
    return stop("queue-uninitialised", f"{name or 'queue'} used before TPipe::InitBuffer", instruction=instr,
                core=core)


def uninitialised_tbuf(name: str | None, core: int) -> KernelError:
    return stop("buffer-uninitialised", f"{name or 'TBuf'} used before TPipe::InitBuffer",
                instruction="TBuf::Get", core=core)


def check_tbuf_get(ctx: CoreContext, name: str | None, dtype: np.dtype, n: int, nbytes: int) -> None:
    if n * dtype.itemsize > nbytes:
        raise stop("tbuf-too-small", f"TBuf::Get<{dtype}>({n}) asks for {n * dtype.itemsize} B from {name}, "
                   f"which has {nbytes} B", instruction="TBuf::Get", core=ctx.core)


def alloc_exhausted(ctx: CoreContext, name: str | None, blocks: int, tile: int) -> KernelError:
    return stop("alloc-exhausted", f"AllocTensor on {name}: all {blocks} buffers are still in use (a missing "
                f"FreeTensor?) -- on the device this spins forever", instruction="AllocTensor", core=ctx.core,
                tile=tile)


def check_enque(ctx: CoreContext, queue: Any, t: LocalTensor) -> None:
    """EnQue: the tensor is alive, belongs to this queue, and the queue has room."""
    if not t.life.alive:
        raise stop("use-after-free", f"EnQue of {t.buffer} after FreeTensor", instruction="EnQue", core=ctx.core,
                   tile=t.tile)
    if t.queue is not queue:
        where = f"queue {t.queue.name}" if t.queue is not None else "a TBuf (TBuf tensors cannot be queued)"
        raise stop("wrong-queue", f"EnQue of {t.buffer} on {queue.name}, but it was allocated from {where}",
                   instruction="EnQue", core=ctx.core, tile=t.tile)
    if len(queue.fifo) >= queue.depth:
        raise stop("enque-overflow", f"EnQue on {queue.name} beyond its depth {queue.depth} (usedCount exceeds "
                   "depth): DeQue before enqueuing more", instruction="EnQue", core=ctx.core, tile=t.tile)


def check_deque(ctx: CoreContext, queue: Any) -> None:
    if not queue.fifo:
        raise stop("deque-empty", f"DeQue of an empty queue {queue.name} (a missing EnQue?)", instruction="DeQue",
                   core=ctx.core, tile=None)


def check_free(ctx: CoreContext, queue: Any, t: LocalTensor) -> None:
    """FreeTensor: the tensor is still alive and was allocated from this queue."""
    if not t.life.alive:
        raise stop("double-free", f"FreeTensor of {t.buffer} twice", instruction="FreeTensor", core=ctx.core,
                   tile=t.tile)
    if t.queue is not queue or t.block is None:
        raise stop("wrong-queue", f"FreeTensor of {t.buffer} on the wrong queue {queue.name}",
                   instruction="FreeTensor", core=ctx.core, tile=t.tile)


# --- copies and global memory -------------------------------------------------------------------------
def check_pad_block(t: LocalTensor, block_len: int, item: int) -> None:
    """DataCopyPad moves whole elements: blockLen must be a multiple of sizeof(T)."""
    if block_len % item:
        raise stop("misaligned-copy", f"DataCopyPad blockLen {block_len} B is not a multiple of sizeof(T) = {item}",
                   instruction="DataCopyPad", core=t.ctx.core, tile=t.tile)


def check_copy(ctx: CoreContext, instr: str, local: LocalTensor, count: int, nbytes: int, pad: bool) -> None:
    """A GM<->UB copy starts at a 32-byte aligned UB address, and a plain DataCopy moves whole 32-byte blocks."""
    if local.offset % 32:
        raise stop("misaligned-copy", f"UB address {local.offset} of {local.buffer} is not 32-byte aligned",
                   instruction=instr, core=ctx.core, tile=local.tile)
    if not pad and nbytes % 32:
        raise stop("misaligned-copy", f"{instr} of {count} elements = {nbytes} B is not a multiple of 32 B (the "
                   f"hardware would silently drop the last {nbytes % 32} B); copy a 32-byte multiple or use "
                   "DataCopyPad", instruction=instr, core=ctx.core, tile=local.tile)


def gm_unset(ctx: CoreContext, instr: str, tile: int | None) -> KernelError:
    return stop("gm-unset", "GlobalTensor used before SetGlobalBuffer", instruction=instr, core=ctx.core, tile=tile)


def check_gm(ctx: CoreContext, instr: str, tile: int | None, name: str, alloc: Any, start: int, nbytes: int,
             arg_start: int, arg_nbytes: int, write: bool) -> None:
    """A GM access ``[start, start + nbytes)`` of the tensor argument ``name`` (``arg_nbytes`` bytes at
    ``arg_start`` inside ``alloc``) that is not plainly inside the live tensor: freed memory and accesses
    beyond the 256-byte padding stop the kernel; inside the padding they are ``gm-padding`` warnings."""
    end = start + nbytes
    if alloc.freed:
        raise stop("gm-freed", f"GM access to {name} after its memory was freed", instruction=instr, core=ctx.core,
                   tile=tile)
    padded_end = arg_start + -(-arg_nbytes // GM_PADDING) * GM_PADDING
    if start < arg_start or end > padded_end:
        raise stop("gm-out-of-bounds",
                   f"GM {'write' if write else 'read'} of {nbytes} B at byte {start - arg_start} of {name} is outside "
                   f"the tensor ({arg_nbytes} B) and its {GM_PADDING}-byte padding", instruction=instr,
                   core=ctx.core, tile=tile)
    logical_end = arg_start + arg_nbytes
    if end > logical_end:
        over = end - logical_end
        where = ("inside its allocation" if end <= alloc.capacity
                 else f"{end - alloc.capacity} B of it past the allocation's end, into whatever lies next")
        warn(ctx, instr, tile, "gm-padding",
             f"{'writes' if write else 'reads'} {over} B past the logical end of {name} ({where})")


# --- Unified Buffer operands and repeats --------------------------------------------------------------
def ub_span(t: LocalTensor, count: int, instr: str, write: bool) -> np.ndarray:
    """The first ``count`` elements of ``t`` after the UB checks: the tensor is alive, the span stays in the
    UB, and a span longer than the buffer is an overrun (an error when a write lands in another buffer,
    else a warning). Instructions answer the common case (alive, in bounds) without calling this."""
    ctx = t.ctx
    if not t.life.alive:
        raise stop("use-after-free", f"{t.buffer} is used after FreeTensor", instruction=instr, core=ctx.core,
                   tile=t.tile)
    if count <= t.size:
        return t.data[:count]
    end = t.offset + count * t.dtype.itemsize
    if end > ctx.ub_capacity:
        raise stop("ub-out-of-bounds", f"{count} elements from {t.buffer} run past the end of the Unified Buffer "
                   f"({end} > {ctx.ub_capacity} B)", instruction=instr, core=ctx.core, tile=t.tile)
    other = ctx.region_at(t.offset + t.nbytes, end, exclude=-1)
    over = end - (t.offset + t.nbytes)
    if write and other is not None and other.name != t.buffer:
        hit = min(end, other.end) - max(t.offset + t.nbytes, other.start)
        raise stop("ub-overrun", f"writes {count} elements into {t.buffer}, which holds only {t.size}: the write "
                   f"runs {over} B past its end and {hit} B of it land in {other.name}", instruction=instr,
                   core=ctx.core, tile=t.tile)
    into = other.name if other is not None else "free UB"
    warn(ctx, instr, ctx.current_tile if t.tile is None else t.tile, "ub-overrun",
         f"{'writes' if write else 'reads'} {over} B past the end of {t.buffer} (into {into})")
    return ctx.ub[t.offset:end].view(t.dtype)


def whole_repeats(ctx: CoreContext, api: str, src: LocalTensor, count: int) -> int:
    """The elements a compare actually computes: whole 256-byte repeats only (ascendc_facts §1.5). The bits
    of a trailing partial repeat stay stale, which is a ``partial-repeat`` warning."""
    per = REPEAT_BYTES // src.dtype.itemsize
    whole = count // per * per
    if whole != count:
        warn(ctx, api, ctx.current_tile if src.tile is None else src.tile, "partial-repeat",
             f"count {count} covers {count * src.dtype.itemsize} B, not a multiple of 256 B: the last "
             f"{count - whole} elements are not compared (their mask bits keep stale values)")
    return whole

"""TPipe, TQue and TBuf: how a kernel carves up the Unified Buffer and hands tiles between pipes.

``TPipe.InitBuffer`` is a bump allocator over the UB (ascendc_facts §1.2): blocks are placed back to back,
32-byte aligned, in call order, and the simulator refuses a plan that does not fit in the UB. (Where the
AscendC library's Select scratch lies is checked when a Select runs, not here: kernel_flavours §4.) A ``TQue`` with
``num`` blocks cycles through them; its four calls carry the hardware flags that order the pipes:

=============  ===========================================  ===========================================
call           VECIN queue (MTE2 fills, V reads)            VECOUT queue (V fills, MTE3 drains)
=============  ===========================================  ===========================================
AllocTensor    MTE2 waits until V freed the block           V waits until MTE3 freed the block
EnQue          flag "data ready" when MTE2's copy is done   flag "result ready" when V is done
DeQue          V waits for that flag                        MTE3 waits for that flag
FreeTensor     flag "block free" when V is done with it     flag "block free" when MTE3 is done
=============  ===========================================  ===========================================

With ``num = 2`` (double buffering) MTE2 can fill block 1 while V computes on block 0 -- that overlap
is what the pipeline figures show. Misuse is refused with the error the hardware or the CPU-debug
build would give: DeQue of an empty queue, EnQue beyond the queue depth, AllocTensor with every block
still in use (a hang on the device), using a LocalTensor after FreeTensor.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Any

import numpy as np

from . import sanitizer
from .core import CoreContext, PlanComplete, UBState, current
from .tensor import Life, LocalTensor

_new_tensor = object.__new__


class TPosition(Enum):
    """Where a buffer sits in the data flow: VECIN (copied in), VECOUT (to copy out), VECCALC (temporaries)."""
    GM = "GM"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"


QuePosition = TPosition
VECIN, VECOUT, VECCALC = TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC

# (producer pipe, consumer pipe) for each queue position
_PIPES = {TPosition.VECIN: ("MTE2", "V"), TPosition.VECOUT: ("V", "MTE3"), TPosition.VECCALC: ("V", "V")}


def _queue_info(pos: Any) -> tuple[str, str, str, tuple[str, str, str, str]] | None:
    """(producer, consumer, position name, the trace details of AllocTensor/EnQue/DeQue/FreeTensor) of a queue
    position, or None for one a queue cannot have. Worked out once per position: every core of a launch makes
    its queues anew, and hashing an enum member or reading its ``value`` runs Python code."""
    for p, info in _QUEUE_INFO:
        if p is pos:
            return info
    return None


_QUEUE_INFO = [(pos, (p, c, pos.value, (f"{pos.value} waits for {c} to free it", f"SetFlag {p}->{c}",
                                        f"WaitFlag {p}->{c}", f"SetFlag {c}->{p}")))
               for pos, (p, c) in _PIPES.items()]


_U8 = np.dtype(np.uint8)


def _as_dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``, skipped when it already is one (this runs for every tile)."""
    return dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)


def _round32(n: int) -> int:
    return -(-int(n) // 32) * 32


def _attr_name(obj: object, frame_depth: int = 2) -> str | None:
    """The attribute name the calling kernel gave ``obj`` (``self.inQueueX``), for labels in figures."""
    frame = sys._getframe(frame_depth)
    local = frame.f_locals
    owner = local.get("this", local.get("self"))      # ``this``: a method translated from C++ (ascendc.cxx)
    if owner is not None and hasattr(owner, "__dict__"):
        for k, v in vars(owner).items():
            if v is obj:
                return k
    for k, v in local.items():                         # a local of the entry (``TQue<VECIN, 1> inQ;``)
        if v is obj:
            return k
    return None


class _Block(UBState):
    """One block of a queue; it is its own sanitizer state (``UBState``: owner pipe, written, clean)."""

    __slots__ = ("index", "offset", "nbytes", "free", "freed_at", "ready_at", "views", "queued")

    def __init__(self, index: int, offset: int, nbytes: int, name: str = ""):
        super().__init__(name, offset, offset + nbytes)
        self.index = index
        self.offset = offset
        self.nbytes = nbytes
        # what AllocTensor needs per dtype argument, worked out once: the queue name it was made for, then
        # (dtype, typed numpy view of the block, element count, their bytes, the block's label "name[index]")
        self.views: dict[Any, tuple[str | None, np.dtype, np.ndarray, int, int, str]] = {}
        self.free = True
        self.freed_at = 0.0      # "free" flag pre-set at InitBuffer, so the first Alloc never waits
        self.ready_at = 0.0
        self.queued = False      # between EnQue and DeQue (a second EnQue is the sanitizer's enque-twice)


class TQue:
    """``TQue<pos, depth>``: ``self.inQueueX = TQue(VECIN, BUFFER_NUM)``."""

    def __init__(self, pos: TPosition, depth: int = 1, name: str | None = None):
        info = _queue_info(pos)
        if info is None:
            raise ValueError(f"TQue position must be VECIN, VECOUT or VECCALC, not {pos}")
        self.pos = pos
        self.depth = depth
        self.name = name
        self.blocks: list[_Block] = []
        self.ctx: CoreContext | None = None
        self.fifo: list[LocalTensor] = []
        self.next = 0
        self.allocs = 0
        self.deques = 0                                 # DeQue calls so far: the k-th DeQue takes tile k
        # which pipe fills the queue, which one drains it; the trace details of the four calls
        self.producer, self.consumer, self.pos_name, self._details = info
        self.is_vecin = pos is TPosition.VECIN
        # blocks allocated now at this position on the core (shared by its queues) and the most it may have:
        # set by InitBuffer (sanitizer.position_counter / queue_block_limit)
        self.pos_count = [0]
        self.block_limit = 1 << 62

    def _ctx(self, instr: str) -> CoreContext:
        if self.ctx is None:
            raise sanitizer.uninitialised_queue(self.name, instr, current().core)
        return self.ctx

    def AllocTensor(self, dtype: Any = None) -> LocalTensor:
        """Next free block, round robin; the producer pipe waits until its consumer released it."""
        ctx = self.ctx if self.ctx is not None else self._ctx("AllocTensor")
        if ctx.plan_only:
            raise PlanComplete
        blocks = self.blocks
        n = len(blocks)
        b = blocks[self.next] if n else None
        if b is None or not b.free:         # the round-robin block is still in use: the next free one
            for k in range(1, n):
                b = blocks[(self.next + k) % n]
                if b.free:
                    break
            else:
                raise sanitizer.alloc_exhausted(ctx, self.name, n, self.allocs)
        self.next = (b.index + 1) % n
        count = self.pos_count
        count[0] += 1
        if count[0] > self.block_limit:
            count[0] -= 1
            raise sanitizer.queue_blocks(ctx, self, self.allocs)
        b.free = False
        b.owner = None                      # the free flag was waited for: the next pipe to touch it takes it
        b.wrote = False
        ctx.s_time += 1.0
        if b.freed_at > ctx.pipe_free[self.producer]:     # ctx.wait, inline (every tile)
            ctx.pipe_free[self.producer] = b.freed_at
        made = b.views.get(dtype)
        if made is None or made[0] is not self.name:       # once per block, dtype argument and queue name
            dt = _as_dtype(dtype) if dtype is not None else _U8
            size = b.nbytes // dt.itemsize
            made = b.views[dtype] = (self.name, dt, ctx.ub[b.offset:b.offset + b.nbytes].view(dt), size,
                                     size * dt.itemsize, f"{self.name}[{b.index}]")
        # LocalTensor(ctx, dt, offset, size, label, tile, block, queue, view), its __init__ inline (every tile)
        t = _new_tensor(LocalTensor)
        t.ctx, t.dtype, t.data, t.size, t.nbytes, t.buffer = ctx, made[1], made[2], made[3], made[4], made[5]
        t.offset, t.tile, t.life, t.block, t.queue, t.region = b.offset, self.allocs, Life(), b, self, b
        if ctx.record:
            at = ctx.pipe_free[self.producer]
            ctx.event("S", "AllocTensor", self.allocs, at, at, nbytes=b.nbytes, ub=(b.offset, b.offset + b.nbytes),
                      buffer=t.buffer, detail=self._details[0])
        self.allocs += 1
        return t

    def EnQue(self, t: LocalTensor) -> bool:
        ctx = self.ctx if self.ctx is not None else self._ctx("EnQue")
        b = t.block
        if not t.life.alive or t.queue is not self or len(self.fifo) >= self.depth or b is None or b.queued:
            sanitizer.check_enque(ctx, self, t)                                         # (the common case inline)
        ctx.s_time += 1.0
        if b is not None:
            b.queued = True
            b.ready_at = ctx.pipe_free[self.producer]
            if self.producer != self.consumer:     # a VECCALC queue hands a block from V to V: nothing to race
                b.queued_by = b.owner or self.producer
                b.owner = sanitizer.QUEUED
        self.fifo.append(t)
        if ctx.record:
            at = ctx.pipe_free[self.producer]
            ctx.event("S", "EnQue", t.tile, at, at, buffer=t.buffer,
                      detail=self._details[1])
        return True

    def DeQue(self, dtype: Any = None) -> LocalTensor:
        ctx = self.ctx if self.ctx is not None else self._ctx("DeQue")
        if not self.fifo:
            sanitizer.check_deque(ctx, self)
        t = self.fifo.pop(0)
        self.deques += 1
        ctx.s_time += 1.0
        if self.is_vecin:
            ctx.current_tile = t.tile          # the vector unit now works on this tile
        b = t.block
        if b is not None:
            b.queued = False
            if b.ready_at > ctx.pipe_free[self.consumer]:  # ctx.wait, inline (every tile)
                ctx.pipe_free[self.consumer] = b.ready_at
            b.owner, b.wrote = self.consumer, False
        if ctx.record:
            at = ctx.pipe_free[self.consumer]
            ctx.event("S", "DeQue", t.tile, at, at, buffer=t.buffer,
                      detail=self._details[2])
        if dtype is not None and dtype is not t.dtype and np.dtype(dtype) != t.dtype:
            t = t.ReinterpretCast(dtype)
        return t

    def FreeTensor(self, t: LocalTensor) -> None:
        ctx = self.ctx if self.ctx is not None else self._ctx("FreeTensor")
        if not t.life.alive or t.queue is not self or t.block is None:
            sanitizer.check_free(ctx, self, t)
        t.life.alive = False
        b = t.block
        b.free = True
        self.pos_count[0] -= 1
        b.owner, b.wrote = None, False
        b.freed_at = ctx.pipe_free[self.consumer]
        ctx.s_time += 1.0
        if ctx.record:
            ctx.event("S", "FreeTensor", t.tile, b.freed_at, b.freed_at, nbytes=b.nbytes,
                      ub=(b.offset, b.offset + b.nbytes), buffer=t.buffer,
                      detail=self._details[3])

    def VacantInQue(self) -> bool:
        return len(self.fifo) < self.depth


class TBuf:
    """``TBuf<VECCALC>``: one UB block for temporaries, never queued or freed."""

    def __init__(self, pos: TPosition = TPosition.VECCALC, name: str | None = None):
        self.pos = pos
        self.name = name
        self.ctx: CoreContext | None = None
        self.offset = 0
        self.nbytes = 0
        self.state: UBState | None = None
        self._whole: dict[np.dtype, LocalTensor] = {}

    def Get(self, dtype: Any, length: int | None = None) -> LocalTensor:
        """The whole buffer (or its first ``length`` elements) as a LocalTensor<dtype>."""
        if length is None and self.ctx is not None:
            cached = self._whole.get(dtype)
            if cached is not None:
                return cached                  # TBuf tensors are never freed: one object per dtype is enough
        if self.ctx is None:
            raise sanitizer.uninitialised_tbuf(self.name, current().core)
        dt = np.dtype(dtype)
        n = self.nbytes // dt.itemsize if length is None else int(length)
        sanitizer.check_tbuf_get(self.ctx, self.name, dt, n, self.nbytes)
        t = LocalTensor(self.ctx, dt, self.offset, n, self.name or "TBuf", region=self.state)
        if length is None:
            self._whole[dtype] = t
        return t

    # ThresholdGradV2D calls AllocTensor/FreeTensor on TBufs, which the header allows (ascendc_facts §1.2)
    def AllocTensor(self, dtype: Any) -> LocalTensor:
        return self.Get(dtype)

    def FreeTensor(self, t: LocalTensor) -> None:
        return None


class TPipe:
    """``TPipe pipe; pipe.InitBuffer(queue, num, bytes)`` / ``pipe.InitBuffer(tbuf, bytes)``."""

    def __init__(self) -> None:
        self.ctx = current()

    def InitBuffer(self, obj: TQue | TBuf, num_or_len: int, length: int | None = None) -> bool:
        ctx = self.ctx
        if obj.name is None:
            obj.name = _attr_name(obj) or f"buf{ctx.buffer_count}"
        if isinstance(obj, TQue):
            if length is None:
                raise TypeError("InitBuffer(queue, num, len) needs the number of blocks and their length")
            num, nbytes = int(num_or_len), _round32(length)
            sanitizer.check_initbuffer_num(ctx, obj.name, num)
            sanitizer.check_initbuffer_len(ctx, obj.name, nbytes)
            obj.ctx = ctx
            obj.pos_count = sanitizer.position_counter(ctx, obj.pos)
            obj.block_limit = sanitizer.queue_block_limit(ctx)
            for i in range(num):
                off = ctx.alloc_ub(nbytes, f"{obj.name}[{i}]", obj.pos_name)
                block = ctx.track(_Block(i, off, nbytes, f"{obj.name}[{i}]"))
                ctx.regions[-1].block = block          # the sanitizer asks a region whether its block is in use
                obj.blocks.append(block)
        elif isinstance(obj, TBuf):
            nbytes = _round32(num_or_len)
            sanitizer.check_initbuffer_len(ctx, obj.name, nbytes)
            obj.ctx = ctx
            obj.offset = ctx.alloc_ub(nbytes, obj.name, "VECCALC")
            obj.nbytes = nbytes
            obj.state = ctx.track(UBState(obj.name, obj.offset, obj.offset + nbytes))
        else:
            raise TypeError(f"InitBuffer takes a TQue or a TBuf, not {type(obj).__name__}")
        return True

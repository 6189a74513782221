"""Findings of queues and buffers: TQue/TBuf used before InitBuffer, AllocTensor with no free block, EnQue/DeQue/
FreeTensor misuse, and the per-position queue-block limit. An error names the kernel's stages (the methods that
allocate and DeQue) by walking the stack -- only when a finding is made."""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import KernelError, learner_line
from .catalogue import QUEUE_BLOCKS_PER_POSITION, QUEUE_BLOCKS_PER_POSITION_910A
from .report import stop

if TYPE_CHECKING:        # annotations only: core, tensor and pipe import this package
    from ..core import CoreContext
    from ..tensor import LocalTensor


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
    """AllocTensor with every block of the queue in use. Names the tile, the tiles still held and, for a kernel
    class, the stage that allocates and the stage that should have freed (the one that DeQues the queue)."""
    queue = sys._getframe(1).f_locals.get("self")              # TQue.AllocTensor's own queue
    held = sorted({b.index for b in getattr(queue, "blocks", []) if not b.free})
    message = (f"AllocTensor on {name} for tile {tile}: all {blocks} blocks still hold earlier tiles (blocks "
               f"{', '.join(f'{name}[{i}]' for i in held) or 'all'}) -- a missing FreeTensor? On the device this "
               "spins forever")
    where = _kernel_method(queue) if queue is not None else None
    if where is not None:
        owner, attr, allocator = where
        consumer = _method_calling(type(owner), f"{attr}.DeQue", prefer_not="")
        if consumer is not None:
            message += (f"; {allocator} allocates, {consumer} DeQues: call self.{attr}.FreeTensor(...) in "
                        f"{consumer} once it is done with the tensor")
    return stop("alloc-exhausted", message, instruction="AllocTensor", core=ctx.core, tile=tile)


def queue_block_limit(ctx: CoreContext) -> int:
    """How many queue blocks one TPosition may have allocated at once on this core (no limit for a "cce" kernel)."""
    if ctx.api != "ascendc":
        return 1 << 62
    return QUEUE_BLOCKS_PER_POSITION_910A if ctx.soc.family == "ascend910" else QUEUE_BLOCKS_PER_POSITION


def position_counter(ctx: CoreContext, pos: Any) -> list[int]:
    """The core's count of queue blocks allocated now at ``pos`` (one shared cell per position and core)."""
    counts = ctx.__dict__.setdefault("queue_blocks", {})
    return counts.setdefault(pos, [0])


def queue_blocks(ctx: CoreContext, queue: Any, tile: int) -> KernelError:
    """AllocTensor beyond the per-position limit of blocks allocated at once."""
    return stop("queue-blocks", f"AllocTensor on {queue.name} for tile {tile} makes {queue.pos_count[0]} blocks "
                f"allocated at once at {queue.pos_name}, more than the {queue.block_limit} event IDs "
                f"{ctx.soc.name} has per position (AscendC: \"max buffer number in same queue position is "
                f"{queue.block_limit}\")", instruction="AllocTensor", core=ctx.core, tile=tile)


def check_enque(ctx: CoreContext, queue: Any, t: LocalTensor) -> None:
    """EnQue: the tensor is alive, belongs to this queue, is not in it already, and the queue has room."""
    if not t.life.alive:
        raise stop("use-after-free", f"EnQue of {t.buffer} after FreeTensor", instruction="EnQue", core=ctx.core,
                   tile=t.tile)
    if t.queue is not queue:
        where = f"queue {t.queue.name}" if t.queue is not None else "a TBuf (TBuf tensors cannot be queued)"
        raise stop("wrong-queue", f"EnQue of {t.buffer} on {queue.name}, but it was allocated from {where}",
                   instruction="EnQue", core=ctx.core, tile=t.tile)
    if any(q is t or (q.block is not None and q.block is t.block) for q in queue.fifo):
        raise stop("enque-twice", f"EnQue of tile {t.tile} ({t.buffer}) on {queue.name}, which already holds it "
                   "(enqueued and not yet DeQue'd)", instruction="EnQue", core=ctx.core, tile=t.tile)
    if len(queue.fifo) >= queue.depth:
        held = ", ".join(str(q.tile) for q in queue.fifo)
        raise stop("enque-overflow", f"EnQue of tile {t.tile} ({t.buffer}) on {queue.name} beyond its depth "
                   f"{queue.depth}: it still holds tile {held}, not yet DeQue'd (usedCount exceeds depth): DeQue "
                   "before enqueuing more", instruction="EnQue", core=ctx.core, tile=t.tile)


def _kernel_method(queue: Any) -> tuple[Any, str, str] | None:
    """(kernel object, the attribute holding ``queue``, the method running now) of the innermost frame on the stack
    whose ``self`` holds ``queue`` -- the stage of the kernel that made the call. Only walked when a finding is made."""
    frame = sys._getframe(2)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if owner is not None and owner is not queue:
            attr = next((k for k, v in getattr(owner, "__dict__", {}).items() if v is queue), None)
            if attr is not None:
                return owner, attr, frame.f_code.co_name
        if frame.f_code.co_name == "launch" and frame.f_code.co_filename.endswith("launcher.py"):
            return None                      # past the kernel: its caller launched it
        frame = frame.f_back
    return None


def _method_calling(cls: type, needle: str, prefer_not: str = "") -> str | None:
    """The name of the method of ``cls`` (its own or inherited) whose source contains ``needle``
    (``inQueueX.AllocTensor``); one other than ``prefer_not`` when there are several."""
    found = []
    for klass in cls.__mro__[:-1]:
        for name, fn in vars(klass).items():
            if not inspect.isfunction(fn) or name in found:
                continue
            try:
                source = inspect.getsource(fn)
            except (OSError, TypeError):
                continue
            if needle in source:
                found.append(name)
    others = [n for n in found if n != prefer_not]
    return (others or found or [None])[0]


def check_deque(ctx: CoreContext, queue: Any) -> None:
    """DeQue: something was enqueued. The error names the loop tile the DeQue waited for (the queue's tiles are
    numbered by its AllocTensor calls, and its k-th DeQue takes tile k), the block that tile was allocated in, and
    the kernel's stages: the method that allocated it without an EnQue and the method whose DeQue found nothing."""
    if queue.fifo:
        return
    tile = queue.deques
    blocks = queue.blocks
    held = [b for b in blocks if not b.free]
    block = None
    if held:
        block = blocks[tile % len(blocks)] if not blocks[tile % len(blocks)].free else held[0]
    where = _kernel_method(queue)
    producer = "MTE2's copy-in" if queue.is_vecin else "the vector computation"
    if where is not None:
        owner, attr, consumer = where
        allocator = _method_calling(type(owner), f"{attr}.AllocTensor", prefer_not=consumer)
        enque = f"self.{attr}.EnQue(...)"
    else:                                    # a kernel written as plain functions: name the one that DeQues
        mine = learner_line(sys._getframe(1))
        consumer = mine.function if mine is not None else "the consumer"
        allocator, enque = None, f"{queue.name}.EnQue(...)"
    if queue.allocs > tile and block is not None:
        stage = allocator or f"the stage that calls {queue.name}.AllocTensor"
        message = (f"tile {tile}: {stage} allocated {queue.name}[{block.index}] but never EnQue'd it before "
                   f"{consumer}'s DeQue on {queue.name}, which found the queue empty: call {enque} at the end of "
                   f"{stage}, after {producer} that fills the tensor")
    else:
        stage = allocator or "the producer stage"
        message = (f"tile {tile}: {consumer} DeQues {queue.name}, but no stage allocated, filled and EnQue'd tile "
                   f"{tile} on it first ({queue.allocs} AllocTensor call{'s' if queue.allocs != 1 else ''} so far): "
                   f"{stage} must AllocTensor, fill and {enque} tile {tile} before {consumer} runs")
    raise stop("deque-empty", message, instruction="DeQue", core=ctx.core, tile=tile)


def check_free(ctx: CoreContext, queue: Any, t: LocalTensor) -> None:
    """FreeTensor: the tensor is still alive and was allocated from this queue."""
    if not t.life.alive:
        raise stop("double-free", f"FreeTensor of {t.buffer} twice", instruction="FreeTensor", core=ctx.core,
                   tile=t.tile)
    if t.queue is not queue or t.block is None:
        raise stop("wrong-queue", f"FreeTensor of {t.buffer} on the wrong queue {queue.name}",
                   instruction="FreeTensor", core=ctx.core, tile=t.tile)



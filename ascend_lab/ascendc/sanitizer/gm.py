"""Findings of GM <-> UB copies: alignment, copies the simulator does not model, GlobalTensors without an
address, freed memory, accesses past a tensor (its 256-byte padding warns, beyond it or into another argument
stops)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import KernelError
from ..running import running_core
from .catalogue import GM_PADDING
from .report import stop, warn

if TYPE_CHECKING:        # annotations only: core and tensor import this package
    from ..core import CoreContext
    from ..tensor import LocalTensor


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


def gm_unset(ctx: CoreContext | None, instr: str, tile: int | None) -> KernelError:
    if ctx is None:                             # indexed outside a launch
        return stop("gm-unset", "GlobalTensor used before SetGlobalBuffer", instruction=instr)
    return stop("gm-unset", "GlobalTensor used before SetGlobalBuffer", instruction=instr, core=ctx.core,
                tile=ctx.current_tile if tile is None else tile)


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
    if write and end > logical_end:
        check_gm_clobber(ctx, instr, tile, name, alloc, max(start, logical_end), end, arg_start)
    if end > logical_end:
        over = end - logical_end
        where = ("inside its allocation" if end <= alloc.capacity
                 else f"{end - alloc.capacity} B of it past the allocation's end, into whatever lies next")
        warn(ctx, instr, tile, "gm-padding",
             f"{'writes' if write else 'reads'} {over} B past the logical end of {name} ({where})")


def check_gm_clobber(ctx: CoreContext, instr: str, tile: int | None, name: str, alloc: Any, start: int, end: int,
                     arg_start: int) -> None:
    """A write into ``name``'s padding ``[start, end)`` must not land in another argument of the launch that
    shares the allocation (the padding is free only when each tensor has its own allocation)."""
    for other in ctx.gm_args:
        if other.ptr.allocation is not alloc or other.name == name:
            continue
        o_start, o_end = other.arg_start, other.arg_start + other.arg_nbytes
        lo, hi = max(start, o_start), min(end, o_end)
        if lo < hi:
            raise stop("gm-clobber",
                       f"GM write into the padding of {name} lands in {other.name}: {hi - lo} B at bytes "
                       f"[{lo - o_start}, {hi - o_start}) of {other.name} (byte {lo - arg_start} of {name} onwards; "
                       f"{name} and {other.name} share one allocation)", instruction=instr, core=ctx.core, tile=tile)


def unmodelled_copy(instr: str, message: str) -> KernelError:
    """A copy the simulator does not model (strided DataCopy ...): a finding, not a NotImplementedError."""
    ctx = running_core()
    return stop("copy-unmodelled", message, instruction=instr, core=None if ctx is None else ctx.core)



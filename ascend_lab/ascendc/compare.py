"""Compare, CompareScalar and Select: bit-masks in UB, one bit per element, over whole 256-byte repeats.

A compare packs its results little-endian into a mask tensor; Select reads the mask bit by bit (mode 0: the first
repeat's bits for every repeat, from CMPMASK) and blends the raw element bits of its sources. The API's limits
per architecture and the Select scratch at TMP_UB_OFFSET are the sanitizer's (:mod:`.sanitizer.api_limits`).
"""

from __future__ import annotations

from enum import IntEnum
from functools import cache
from typing import Any

import numpy as np

from ..base.platform import NpuArch
from . import sanitizer
from .core import CoreContext, reserved_ub_bytes, select_scratch
from .cost_model import compare_row
from .issue import UINT, check_local, show, tile_of, ub_operand, vector_done
from .numerics import scalar as _scalar
from .sanitizer import REPEAT_BYTES
from .tensor import LocalTensor


class CMPMODE(IntEnum):
    """Comparison of CompareScalar/Compare (AscendC enum values)."""
    LT = 0
    GT = 1
    EQ = 2
    LE = 3
    GE = 4
    NE = 5


class SELMODE(IntEnum):
    """How Select reads its mask and second operand (AscendC enum values)."""
    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2


# fast path: numpy's bit (un)packing without its __array_function__ dispatcher: called with keywords on every tile,
# the dispatcher costs more than packing a tile (0.9 us of 1.6 us for 8K elements; 0.3-1.1 us at 2K-16K elements
# re-measured under load 16); plain arrays need no dispatch
_packbits = getattr(np.packbits, "_implementation", np.packbits)
_unpackbits = getattr(np.unpackbits, "_implementation", np.unpackbits)

_CMP = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
        CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}



_CMP_FN = {int(k): v for k, v in _CMP.items()}
_DAV_3510 = NpuArch.DAV_3510          # read once (an enum member's attribute lookup, every Compare)


def _mask_span(t: LocalTensor, nbits: int, instr: str, write: bool) -> np.ndarray:
    """The bytes holding the first ``nbits`` bits of a mask tensor (whatever its declared element type). The
    sanitizer sees the access bit by bit: bit i of a mask is element i of the instruction."""
    nbytes = -(-nbits // 8)
    r = t.region
    ctx = t.ctx
    if t.life.alive and nbytes <= t.nbytes:
        owner = r.owner if r is not None else False
        if owner == "V" and r.clean and (not write or ctx.taint is None):
            if write:
                r.wrote = True
        else:
            # a mask fills only the start of its slot, so the slot is never ``clean``: ``ub_access``'s own early
            # answers (a span already known written / already read clean, no race, nothing poisoned), inline
            a = t.offset * 8
            span = (a, a + nbits)
            if write:
                if ((owner is None or owner == "V") and ctx.taint is None and not ctx.poison.lo
                        and span in ctx.written_spans):
                    r.owner, r.wrote = "V", True
                else:
                    sanitizer.ub_access(t, a, a + nbits, 1, instr, write, "V")
            elif not (owner == "V" and span in ctx.clean_spans):
                sanitizer.ub_access(t, a, a + nbits, 1, instr, write, "V")
        return ctx.ub[t.offset:t.offset + nbytes]
    raw = sanitizer.ub_span(t.ReinterpretCast(np.uint8), nbytes, instr, write, "V")
    return raw


def _pack(cond: np.ndarray, item: int) -> np.ndarray:
    """Compare results as a little-endian bit-mask. A count that is not a whole number of 256-byte repeats
    reaches here only on the 950, whose library masks the tail lanes with a predicate and stores the last
    repeat's mask register whole: the tail bits are written as 0 (zeroing predicate; UNCONFIRMED on device)."""
    pad = -cond.size % (REPEAT_BYTES // item)
    if pad:
        cond = np.concatenate((cond, np.zeros(pad, dtype=bool)))
    return _packbits(cond, bitorder="little")


def CompareScalar(dst: LocalTensor, src: LocalTensor, scalar: Any, mode: CMPMODE, count: int) -> None:
    """Bit i of dst (a uint8 bit-mask, little-endian) = src[i] <mode> scalar, over whole 256-B repeats (on the
    950 over ``count`` elements exactly, the tail predicate-masked). ``Compares`` in today's API."""
    if not (dst.__class__ is src.__class__ is LocalTensor):
        check_local("CompareScalar", dst, src)
    ctx = src.ctx
    mode = int(mode)
    key = ("CompareScalar", src.dtype, mode)           # the API limits depend on nothing else (as in Compare)
    if key not in ctx.api_checked:
        sanitizer.check_compare(ctx, "CompareScalar", tile_of(src, dst), src.dtype, mode)
        ctx.api_checked.add(key)
    count = int(count)
    per = REPEAT_BYTES // src.dtype.itemsize
    # whole_repeats and _pack, their common case (whole repeats: nothing to warn about, no tail bits) inline
    n = count if not count % per else sanitizer.whole_repeats(ctx, "CompareScalar", src, count)
    s = _scalar(src.dtype, scalar)
    cond = _CMP_FN[mode](ub_operand(src, n, "CompareScalar", False), s)
    packed = _packbits(cond, bitorder="little") if not n % per else _pack(cond, src.dtype.itemsize)
    _mask_span(dst, packed.size * 8, "CompareScalar", True)[...] = packed
    vector_done(ctx, "CompareScalar", dst, n, src.dtype.itemsize,
                 lambda: f"{dst.buffer} bits = {src.buffer} {CMPMODE(mode).name} {show(s)}", src,
                 out_bytes=packed.size, row=compare_row("CompareScalar", mode, n, src.dtype.itemsize))


def Compare(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mode: CMPMODE, count: int) -> None:
    """Tensor-tensor compare into a bit-mask, over whole 256-byte repeats (like CompareScalar; on the 950 over
    ``count`` elements, the tail predicate-masked)."""
    if not (dst.__class__ is src0.__class__ is src1.__class__ is LocalTensor):
        check_local("Compare", dst, src0, src1)
    ctx = src0.ctx
    m = int(mode)
    key = ("Compare", src0.dtype, m)
    if key not in ctx.api_checked:
        sanitizer.check_compare(ctx, "Compare", tile_of(src0, src1, dst), src0.dtype, m)
        ctx.api_checked.add(key)
    count = int(count)
    # the 950 compares every element (whole_repeats answers count there without a finding)
    n = count if ctx.soc.npu_arch == _DAV_3510 else sanitizer.whole_repeats(ctx, "Compare", src0, count)
    cond = _CMP_FN[m](ub_operand(src0, n, "Compare", False), ub_operand(src1, n, "Compare", False))
    # _pack, its common case (whole repeats: no tail bits to zero) inline
    packed = (_packbits(cond, bitorder="little") if not n % (REPEAT_BYTES // src0.dtype.itemsize)
              else _pack(cond, src0.dtype.itemsize))
    _mask_span(dst, packed.size * 8, "Compare", True)[...] = packed
    vector_done(ctx, "Compare", dst, n, src0.dtype.itemsize,
                 lambda: f"{dst.buffer} bits = {src0.buffer} {CMPMODE(mode).name} {src1.buffer}", src0, src1,
                 out_bytes=packed.size, row=compare_row("Compare", m, n, src0.dtype.itemsize))


#: Select's modes as plain ints (an enum member's attribute lookup costs more than the compare, every tile)
_SPR, _TS, _TT = (int(SELMODE.VSEL_CMPMASK_SPR), int(SELMODE.VSEL_TENSOR_SCALAR_MODE),
                  int(SELMODE.VSEL_TENSOR_TENSOR_MODE))


def Select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: Any, sel_mode: SELMODE,
           count: int) -> None:
    """dst[i] = src0[i] where mask bit i is 1, else src1 (a scalar in VSEL_TENSOR_SCALAR_MODE, a tensor
    in VSEL_TENSOR_TENSOR_MODE; in VSEL_CMPMASK_SPR the first 256/sizeof(T) bits repeat).

    Done as the hardware does it, bit by bit: ``(src0 & m) | (src1 & ~m)`` on the raw element bits, so
    NaN payloads, signed zeros and infinities pass untouched.

    Modes 1 and 2 first write the library's scratch on A2/A3 and 310P (kernel_flavours §4): 32 copies of the
    scalar (mode 1) or of the selMask's UB address as uint32 (mode 2) at TMP_UB_OFFSET; the sanitizer stops the
    kernel if a buffer lies there, and the trace records the reserve the plan had to keep (``ub_reserved``)."""
    if not (dst.__class__ is sel_mask.__class__ is src0.__class__ is LocalTensor):
        check_local("Select", dst, sel_mask, src0)
    ctx = dst.ctx
    count = int(count)
    mode = int(sel_mode)
    if (mode == _TS) is isinstance(src1, LocalTensor):      # mode 1 takes a scalar src1, modes 0 and 2 a tensor
        tile = tile_of(dst, sel_mask, src0)
        raise sanitizer.select_operand(ctx, ctx.current_tile if tile is None else tile, SELMODE(mode).name, src1)
    key = ("Select", dst.dtype, sel_mask.dtype, mode)
    if ctx.api == "ascendc" and key not in ctx.api_checked:
        _select_api(ctx, key, dst, sel_mask, src0, src1, mode)
    bits, lanes = _select_lanes(ctx, dst, sel_mask, mode, count)
    ui = UINT[dst.dtype.itemsize]
    # lanes are all-ones where the mask bit is 1, all-zeros elsewhere: ``a & lanes`` keeps a's raw bits there
    a = ub_operand(src0, count, "Select", False).view(ui)
    if mode == _TS:
        label = _blend_scalar(dst, a, lanes, src1, count)
    else:
        label = _blend_tensors(dst, src0, a, src1, bits, lanes, count)
    vector_done(ctx, "Select", dst, count, dst.dtype.itemsize,
                lambda: f"{dst.buffer} = mask {sel_mask.buffer} ? {src0.buffer} : {label()} "
                        f"({SELMODE(mode).name})", src0, sel_mask,
                reads=(src0, src1) if mode == _TT else (src0,),
                mask=None if mode == _SPR else sel_mask)   # mode 0: mask in CMPMASK


def _select_api(ctx: CoreContext, key: tuple[Any, ...], dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor,
                src1: Any, mode: int) -> None:
    """Select's API limits on this SoC and, for modes 1/2, the library's scratch at TMP_UB_OFFSET (written here when
    the SoC's library writes it). Checked once per ``key`` where no scratch depends on the UB plan."""
    tile = tile_of(dst, sel_mask, src0)
    tile = ctx.current_tile if tile is None else tile
    sanitizer.check_select(ctx, tile, dst.dtype, sel_mask.dtype, mode)
    scratch = None
    if mode:
        scratch = select_scratch(ctx.soc, 4 if mode == _TT else dst.dtype.itemsize)
        if scratch is not None and sanitizer.check_select_scratch(ctx, tile, mode, scratch):
            _write_scratch(ctx, scratch, dst.dtype, src1 if mode == _TS else None, sel_mask.offset)
    if scratch is None:             # no scratch on this SoC: nothing here depends on the UB plan either
        ctx.api_checked.add(key)


def _select_lanes(ctx: CoreContext, dst: LocalTensor, sel_mask: LocalTensor, mode: int,
                  count: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The mask as ``(bits, lanes)``: one 0/1 per element, or (modes 1/2) all-ones/all-zeros lanes of dst's element
    size, gathered from the mask bytes in one ``take``; the other is None."""
    if mode == _SPR:
        per = REPEAT_BYTES // dst.dtype.itemsize
        first = _unpackbits(_mask_span(sel_mask, per, "Select", False), count=per, bitorder="little")
        if ctx.taint is not None:          # element i uses bit i % per: repeat the poisoned bits over the count
            ctx.taint = _repeat_taint(ctx.taint, per, count)
        return np.resize(first, count), None
    raw = _mask_span(sel_mask, count, "Select", False)
    if mode == _TT or mode == _TS:
        table = _LANES.get(dst.dtype.itemsize)       # one gather: mask byte -> 8 all-ones/all-zeros lanes
        if table is None:
            table = _LANES[dst.dtype.itemsize] = _lane_masks(dst.dtype.itemsize)
        lanes = table.take(raw, axis=0).reshape(-1)
        return None, lanes if lanes.size == count else lanes[:count]
    return _unpackbits(raw, count=count, bitorder="little"), None


def _blend_scalar(dst: LocalTensor, a: np.ndarray, lanes: np.ndarray, src1: Any, count: int) -> Any:
    """Mode 1: dst = a's bits where the lane is all-ones, the scalar's bits elsewhere. Returns the trace label."""
    ui = a.dtype
    other = _scalar(dst.dtype, src1)
    # a numpy scalar reinterprets in one call; anything else (an ml_dtypes scalar) through a 0-d array
    other_bits = other.view(ui) if isinstance(other, np.generic) and other.dtype.itemsize == ui.itemsize \
        else np.asarray(other).view(ui)[()]
    rest = None if other_bits == 0 else np.bitwise_and(np.invert(lanes), other_bits)
    d = ub_operand(dst, count, "Select", True).view(ui)
    np.bitwise_and(a, lanes, out=d)                      # bit 1 -> src0 ...
    if rest is not None:
        np.bitwise_or(d, rest, out=d)                    # ... bit 0 -> src1
    return lambda: show(_scalar(dst.dtype, src1))


def _blend_tensors(dst: LocalTensor, src0: LocalTensor, a: np.ndarray, src1: Any, bits: np.ndarray | None,
                   lanes: np.ndarray | None, count: int) -> Any:
    """Modes 0 and 2: dst = a's bits where the mask bit is 1, src1's elsewhere. Returns the trace label."""
    ui = a.dtype
    if src1.__class__ is not LocalTensor:
        check_local("Select", src1)
    b = ub_operand(src1, count, "Select", False).view(ui)
    d = ub_operand(dst, count, "Select", True).view(ui)
    # lanes all-ones where the bit is 1: b ^ ((a ^ b) & lanes) is a's bits there, b's elsewhere
    if lanes is None:
        lanes = bits.astype(ui)
        np.negative(lanes, out=lanes)
    # every operand is a window of this core's UB at its tensor's offset: byte ranges tell whether they overlap
    # (what np.may_share_memory would answer, without its two calls per tile)
    nb = count * dst.dtype.itemsize
    lo = dst.offset
    if (lo + nb <= src0.offset or src0.offset + nb <= lo) and (lo + nb <= src1.offset or src1.offset + nb <= lo):
        np.bitwise_xor(a, b, out=d)                  # dst apart from both sources: no temporary
        np.bitwise_and(d, lanes, out=d)
        np.bitwise_xor(d, b, out=d)
    else:
        np.bitwise_and(np.bitwise_xor(a, b), lanes, out=lanes)
        np.bitwise_xor(lanes, b, out=d)
    return lambda: src1.buffer


#: ``_lane_masks`` by element size, read without a call (every Select of every tile)
_LANES: dict[int, np.ndarray] = {}


@cache
def _lane_masks(itemsize: int) -> np.ndarray:
    """Row k: the 8 lanes mask byte k selects (bit i set -> lane i all ones), as unsigned ``itemsize``-byte ints."""
    lanes = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(UINT[itemsize])
    np.negative(lanes, out=lanes)
    lanes.flags.writeable = False
    return lanes


def _repeat_taint(taint: list[tuple[int, int, int]], per: int, count: int) -> list[tuple[int, int, int]]:
    """Select mode 0: the poisoned bits of the first repeat's mask, seen by every repeat of ``count`` elements
    (bits are element indices; more than 64 repeats are summed up as the whole span)."""
    repeats = -(-count // per)
    if repeats > 64:
        return [(0, count, 1)]
    return [(k * per + lo, min(k * per + hi, count), 1) for k in range(repeats) for lo, hi, _ in taint
            if k * per + lo < count]


def _write_scratch(ctx: CoreContext, scratch: tuple[int, int], dtype: np.dtype, scalar: Any, mask_addr: int) -> None:
    """What VselImpl writes before the vsel: Duplicate of the scalar in T (mode 1) or of the selMask address as
    uint32 (mode 2) over 32 elements at TMP_UB_OFFSET. The trace keeps the reserve this implies."""
    start, end = scratch
    if scalar is not None:
        fill = np.full(32, _scalar(dtype, scalar), dtype=dtype)
    else:
        fill = np.full(32, mask_addr, dtype=np.uint32)
    ctx.ub[start:end] = fill.view(np.uint8)[:end - start]
    reserve = reserved_ub_bytes(ctx.soc)
    if reserve > ctx.trace.ub_reserved:
        ctx.trace.ub_reserved = reserve


"""The vector mask register and the mask/repeat ("high-dimensional") form of the vector instructions.

Every vector instruction runs in one of two **mask modes** (asc-devkit ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/
SIMD计算说明/掩码.md``, ``掩码操作/{SetVectorMask,SetMaskCount,SetMaskNorm,ResetMask}.md``; ``impl/basic_api/
kernel_reg.h`` @ 82b89a15):

* **Normal** (the default, :func:`SetMaskNorm`): the mask selects lanes *within each* 256-byte repeat -- the first
  ``n`` lanes (continuous mode) or one bit per lane (``maskHigh:maskLow``, bit i of ``maskLow`` = lane i) -- and the
  instruction runs ``repeatTime`` repeats.
* **Counter** (:func:`SetMaskCount`): the low 64 bits of the mask are the *number of elements*; the vector unit
  works out the repeats (the last one partial) and ignores ``repeatTime``.

The mask comes from the instruction's own ``mask`` argument (``isSetMask = true``, the default: the API writes the
register itself) or, with ``isSetMask = false`` (``Add<T, false>(..., MASK_PLACEHOLDER, 1, params)``), from whatever
:func:`SetVectorMask` last wrote; :func:`ResetMask` puts back all ones. The state is per core. The count form
(``Add(dst, a, b, count)``) is the library's own sequence, and what it leaves in the register is modelled per
architecture (asc-devkit impl/basic_api @ 82b89a15; :data:`.issue.MASK_RESETTING` lists the instructions):

* **A2/A3** (dav_c220): ``set_mask_count(); set_vector_mask(0, count); vadd(...); set_mask_norm();
  set_vector_mask(-1, -1)`` (``kernel_operator_vec_binary_impl.h:67-86``, Add; Sub, Mul ... Adds, Exp ..., Cast,
  Duplicate, Select, Axpy alike) -- the register ends **Normal, all ones**, whatever the kernel had set;
* **310P** (dav_m200): ``SetMaskCount(); SetVectorMask<T, COUNTER>(0, count); ...; SetMaskNorm(); ResetMask()``
  (``kernel_operator_vec_binary_impl.h:63-72``) -- the same end state;
* **Ascend950** (dav_3510): a register loop, ``Reg::UpdateMask`` into a local ``MaskReg`` per repeat
  (``kernel_operator_vec_binary_continuous_impl.h:34-51, 74-90``): the mask register and mode are never written --
  left as found (so here too);
* **910A** (dav_1001): ``BinaryCompute`` runs the mask form with ``isSetMask = true`` over full repeats, then the
  tail (``kernel_operator_vec_binary_impl.h:27-63, 130-134``): the register ends holding the last chunk's continuous
  mask -- NOT modelled, left as found here (910A has no Counter mode to leave).

Compare/CompareScalar's count form is vcmpv over whole repeats with no mask write on A2/A3
(``dav_c220/kernel_operator_vec_cmp_impl.h:153-174``): left as found. The library's mask writes cost no cycles here.

Each mask-form instruction gathers the lanes its repeats read -- 8 blocks of 32 bytes per repeat, ``blkStride`` blocks
apart, repeats ``repStride`` blocks apart, per operand -- computes them as the count form does (same dtype, same
rounding), and writes only the selected lanes of ``dst``. The sanitizer sees, per operand, the span from its first
to its last element (a gap left by a stride counts as read or written too). Cost: the count form's row over
``repeats x lanes per repeat`` elements. A mask setter costs the scalar unit one cycle (ascendc_facts §2.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from typing import Any

import numpy as np

from ..base.platform import NpuArch
from . import sanitizer
from .arith_dtypes import check_arith
from .core import current
from .issue import check_local as _check_local
from .issue import show as _show
from .issue import ub_operand as _span
from .issue import vector_done as _vector_done
from .math_common import check_dtype as _math_check
from .math_common import divide as _divide
from .math_common import via_float64 as _f64
from .numerics import RoundMode, cast
from .numerics import scalar as _scalar
from .sanitizer import REPEAT_BYTES
from .tensor import LocalTensor

__all__ = ["MASK_PLACEHOLDER", "BinaryRepeatParams", "CopyRepeatParams", "MaskMode", "ResetMask", "SetMaskCount",
           "SetMaskNorm", "SetVectorMask", "UnaryRepeatParams", "lanes", "NAMESPACE", "MASK_FORMS"]

FULL = (1 << 64) - 1
#: ``AscendC::MASK_PLACEHOLDER``: the mask argument of an ``isSetMask = false`` call (not read).
MASK_PLACEHOLDER = 0


class MaskMode(IntEnum):
    """``AscendC::MaskMode`` (kernel_reg.h): how :func:`SetVectorMask`'s ``len`` is written."""
    NORMAL = 0
    COUNTER = 1


@dataclass(slots=True)
class UnaryRepeatParams:
    """``UnaryRepeatParams{dstBlkStride, srcBlkStride, dstRepStride, srcRepStride}`` (blocks of 32 bytes)."""
    dstBlkStride: int = 1
    srcBlkStride: int = 1
    dstRepStride: int = 8
    srcRepStride: int = 8


@dataclass(slots=True)
class BinaryRepeatParams:
    """``BinaryRepeatParams{dstBlkStride, src0BlkStride, src1BlkStride, dstRepStride, src0RepStride,
    src1RepStride}``."""
    dstBlkStride: int = 1
    src0BlkStride: int = 1
    src1BlkStride: int = 1
    dstRepStride: int = 8
    src0RepStride: int = 8
    src1RepStride: int = 8


@dataclass(slots=True)
class CopyRepeatParams:
    """``CopyRepeatParams{dstStride, srcStride, dstRepeatSize, srcRepeatSize}`` (Copy's block and repeat strides)."""
    dstStride: int = 1
    srcStride: int = 1
    dstRepeatSize: int = 8
    srcRepeatSize: int = 8


class _Register:
    """One core's mask register and mode (``counter``: Counter mode)."""
    __slots__ = ("counter", "high", "low")

    def __init__(self) -> None:
        self.counter, self.high, self.low = False, FULL, FULL


def _register(ctx: Any) -> _Register:
    reg = ctx.__dict__.get("vector_mask")
    if reg is None:
        reg = ctx.__dict__["vector_mask"] = _Register()
    return reg


def _setter(name: str) -> Any:
    ctx = current()
    ctx.s_time += 1.0
    if ctx.record:
        ctx.event("S", name, ctx.current_tile, ctx.s_time, ctx.s_time, detail=f"{name}()")
    return ctx


def SetMaskCount() -> None:
    """``SetMaskCount()``: Counter mode. Not on Atlas training (910A): an ``unsupported-on-soc`` finding."""
    ctx = _setter("SetMaskCount")
    if ctx.soc.npu_arch == NpuArch.DAV_1001:
        sanitizer.check_api_dtype(ctx, "SetMaskCount", ctx.current_tile, None, frozenset(),
                                  "Counter mode exists on A2/A3, 310P and the 950")
    _register(ctx).counter = True


def SetMaskNorm() -> None:
    """``SetMaskNorm()``: Normal mode (the default)."""
    _register(_setter("SetMaskNorm")).counter = False


def ResetMask() -> None:
    """``ResetMask()``: the mask back to all ones (the mode is left as it is)."""
    reg = _register(_setter("ResetMask"))
    reg.high = reg.low = FULL


def SetVectorMask(*mask: int, dtype: Any = np.float16, mode: MaskMode = MaskMode.NORMAL) -> None:
    """``SetVectorMask<T, mode>(len)`` or ``SetVectorMask<T, mode>(maskHigh, maskLow)``.

    ``(maskHigh, maskLow)`` is written as is. ``len`` is written as ``(0, len)`` when ``mode`` is COUNTER, else as
    the first ``len`` lanes of T's repeat (0..128 for 16-bit T, 0..64 for 32-bit) -- in Counter mode that bit pattern
    is then read as an element count, as on the device."""
    ctx = _setter("SetVectorMask")
    reg = _register(ctx)
    if len(mask) == 2:
        reg.high, reg.low = int(mask[0]) & FULL, int(mask[1]) & FULL
        return
    if len(mask) != 1:
        raise TypeError("SetVectorMask takes (len) or (maskHigh, maskLow)")
    n = int(mask[0])
    if MaskMode(mode) == MaskMode.COUNTER:
        reg.high, reg.low = 0, n & FULL
        return
    per = REPEAT_BYTES // np.dtype(dtype).itemsize
    if not 0 <= n <= min(per, 128):
        raise ValueError(f"SetVectorMask<{np.dtype(dtype)}>(len): a Normal-mode len is 0..{min(per, 128)}, got {n} "
                         "(for an element count use Counter mode: SetVectorMask<T, MaskMode::COUNTER>(len))")
    bits = (1 << n) - 1
    reg.high, reg.low = bits >> 64, bits & FULL


@lru_cache(maxsize=1024)
def _bits(high: int, low: int, per: int) -> np.ndarray:
    """The lanes a Normal-mode mask selects in one repeat (read-only; cached: a kernel sets the same few masks)."""
    words = np.array([low, high], dtype=np.uint64).view(np.uint8)
    bits = np.unpackbits(words, bitorder="little").astype(bool)
    bits = bits[:per] if per <= 128 else np.concatenate((bits, np.zeros(per - 128, bool)))
    bits.flags.writeable = False
    return bits


def lanes(ctx: Any, dtype: Any, mask: Any, repeat: int, is_set_mask: bool) -> np.ndarray:
    """The lanes an instruction's repeats compute, ``(repeats, lanes per repeat)``: in Counter mode the first
    ``count`` elements (repeats inferred), in Normal mode the mask's lanes in each of ``repeat`` repeats. ``mask``: an
    int (continuous: the first n lanes; in Counter mode the count) or ``[low, high]`` words, read when
    ``is_set_mask`` (and written to the register, as the API does); otherwise the register is read."""
    reg = _register(ctx)
    per = REPEAT_BYTES // np.dtype(dtype).itemsize
    if is_set_mask:
        if isinstance(mask, (list, tuple, np.ndarray)):
            low, high = int(mask[0]) & FULL, int(mask[1]) & FULL if len(mask) > 1 else 0
        elif reg.counter:
            low, high = int(mask) & FULL, 0
        else:
            m = int(mask)
            if not 0 <= m <= per:
                raise ValueError(f"a continuous mask selects 0..{per} lanes of a 256-byte repeat here, not {m}")
            bits = (1 << m) - 1
            low, high = bits & FULL, bits >> 64
        reg.low, reg.high = low, high
    if reg.counter:
        count = reg.low
        return (np.arange(-(-count // per) * per) < count).reshape(-1, per)
    return np.broadcast_to(_bits(reg.high, reg.low, per), (int(repeat), per))


@lru_cache(maxsize=1024)
def _index(shape: tuple[int, int], itemsize: int, blk_stride: int, rep_stride: int) -> tuple[np.ndarray, bool]:
    """Element offsets of each (repeat, lane): block ``lane // blk`` of repeat r at ``r * repStride + block *
    blkStride`` blocks; and whether they are simply 0, 1, 2, ... (contiguous blocks and repeats). Read-only and
    cached: a kernel issues the same few shapes and strides over and over (the cache and the slice that ``_run``
    takes for contiguous operands halve the time of chapter 13's sweep over every kernel and SoC)."""
    blk = 32 // itemsize
    r = np.arange(shape[0])[:, None]
    lane = np.arange(shape[1])[None, :]
    idx = (r * int(rep_stride) + (lane // blk) * int(blk_stride)) * blk + lane % blk
    idx.flags.writeable = False
    return idx, bool((idx.ravel() == np.arange(idx.size)).all())


def _offsets(on: np.ndarray, every: bool, itemsize: int, blk_stride: int, rep_stride: int) -> np.ndarray | slice:
    """Where the selected lanes of an operand are: a slice when all lanes are on and the operand is contiguous (a
    view, no gather), else the element offsets of the lanes that are on."""
    idx, dense = _index(on.shape, itemsize, int(blk_stride), int(rep_stride))
    if every:
        return slice(0, idx.size) if dense else idx.ravel()
    return idx[on]


def _extent(where: np.ndarray | slice) -> int:
    """How many elements from the tensor's start the operand reaches."""
    return where.stop if isinstance(where, slice) else int(where.max()) + 1


def _run(api: str, fn: Any, dst: LocalTensor, srcs: list[tuple[LocalTensor, int, int]], dst_strides: tuple[int, int],
         mask: Any, repeat: int, is_set_mask: bool, text: str) -> None:
    """Gather the selected lanes of each source, ``fn`` over them in dst's dtype, scatter into dst's lanes. A repeat
    holds 256 bytes of the widest operand (a Cast half -> float: 64 lanes)."""
    ctx = dst.ctx
    dt = dst.dtype
    wide = max((s for s, _b, _r in srcs), key=lambda t: t.dtype.itemsize, default=dst).dtype
    wide = wide if wide.itemsize > dt.itemsize else dt
    on = lanes(ctx, wide, mask, repeat, is_set_mask)
    every = bool(on.all())
    if not every and not on.any():
        return
    vals = []
    for src, blk, rep in srcs:
        where = _offsets(on, every, src.dtype.itemsize, blk, rep)
        vals.append(_span(src, _extent(where), api, False)[where])
    dwhere = _offsets(on, every, dt.itemsize, *dst_strides)
    with np.errstate(all="ignore"):
        out = fn(*vals)
    _span(dst, _extent(dwhere), api, True)[dwhere] = out
    _vector_done(ctx, api, dst, on.size, wide.itemsize,
                 lambda: f"{dst.buffer} = {text} ({on.shape[0]} repeats, {int(on.sum())} lanes)",
                 *[s for s, _b, _r in srcs], integer=dt.kind in "iu", mask_form=True)


def _same(api: str, *ts: LocalTensor) -> np.dtype:
    _check_local(api, *ts)
    dt = ts[0].dtype
    if any(t.dtype != dt for t in ts[1:]):
        raise TypeError(f"{api}: operands must share one dtype, got {', '.join(str(t.dtype) for t in ts)}")
    return dt


_ARITH = {"Add", "Mul", "Max", "Min", "Adds", "Muls", "Maxs", "Mins"}
_MATH = {"Sub", "Div", "And", "Or", "Abs", "Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "LeakyRelu"}


def _checked(api: str, dst: LocalTensor, dt: np.dtype) -> None:
    """The count form's dtype list for this architecture (:mod:`.instructions_math`, :mod:`.arith_dtypes`)."""
    if api in _MATH:
        _math_check(dst.ctx, api, dst.tile, dt)
    elif api in _ARITH:
        check_arith(dst.ctx, api, dst.tile, dt)


_BINARY = {"Add": lambda x, y, dt: np.add(x, y), "Sub": lambda x, y, dt: np.subtract(x, y),
           "Mul": lambda x, y, dt: np.multiply(x, y), "Div": _divide, "Max": lambda x, y, dt: np.maximum(x, y),
           "Min": lambda x, y, dt: np.minimum(x, y), "And": lambda x, y, dt: np.bitwise_and(x, y),
           "Or": lambda x, y, dt: np.bitwise_or(x, y)}
_SCALAR = {"Adds": np.add, "Muls": np.multiply, "Maxs": np.maximum, "Mins": np.minimum,
           "LeakyRelu": lambda x, s: np.where(x >= 0, x, np.multiply(x, s))}
_UNARY = {"Abs": lambda x, dt: np.abs(x), "Relu": lambda x, dt: np.maximum(x, x.dtype.type(0)),
          "Not": lambda x, dt: np.invert(x), "Exp": _f64(np.exp), "Ln": _f64(np.log), "Sqrt": _f64(np.sqrt),
          "Rsqrt": _f64(lambda x: 1.0 / np.sqrt(x)), "Reciprocal": _f64(lambda x: 1.0 / x)}


def binary(api: str, dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: Any, repeat: int,
           params: BinaryRepeatParams, is_set_mask: bool = True) -> None:
    """``Add<T, isSetMask>(dst, src0, src1, mask, repeatTime, BinaryRepeatParams)`` and Sub, Mul, Div, Max, Min,
    And, Or alike."""
    dt = _same(api, dst, src0, src1)
    _checked(api, dst, dt)
    p = params
    _run(api, lambda x, y: _BINARY[api](x, y, dt), dst,
         [(src0, p.src0BlkStride, p.src0RepStride), (src1, p.src1BlkStride, p.src1RepStride)],
         (p.dstBlkStride, p.dstRepStride), mask, repeat, is_set_mask, f"{src0.buffer} {api} {src1.buffer}")


def with_scalar(api: str, dst: LocalTensor, src: LocalTensor, scalar: Any, mask: Any, repeat: int,
                params: UnaryRepeatParams, is_set_mask: bool = True) -> None:
    """``Adds<T, isSetMask>(dst, src, scalar, mask, repeatTime, UnaryRepeatParams)`` and Muls, Maxs, Mins,
    LeakyRelu alike (the scalar converted to T first)."""
    dt = _same(api, dst, src)
    _checked(api, dst, dt)
    s = _scalar(dt, scalar)
    _run(api, lambda x: _SCALAR[api](x, s), dst, [(src, params.srcBlkStride, params.srcRepStride)],
         (params.dstBlkStride, params.dstRepStride), mask, repeat, is_set_mask, f"{src.buffer} {api} {_show(s)}")


def unary(api: str, dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, params: UnaryRepeatParams,
          is_set_mask: bool = True) -> None:
    """``Exp<T, isSetMask>(dst, src, mask, repeatTime, UnaryRepeatParams)`` and Abs, Ln, Sqrt, Rsqrt, Reciprocal,
    Relu, Not alike (the count form's numerics, :mod:`.instructions_math`)."""
    dt = _same(api, dst, src)
    _checked(api, dst, dt)
    _run(api, lambda x: _UNARY[api](x, dt), dst, [(src, params.srcBlkStride, params.srcRepStride)],
         (params.dstBlkStride, params.dstRepStride), mask, repeat, is_set_mask, f"{api}({src.buffer})")


def Copy(dst: LocalTensor, src: LocalTensor, mask: Any, repeat: int, params: CopyRepeatParams,
         is_set_mask: bool = True) -> None:
    """``Copy<T, isSetMask>(dst, src, mask, repeatTime, CopyRepeatParams)``: UB -> UB on PIPE_V, the raw bits of
    the selected lanes (16- and 32-bit types)."""
    dt = _same("Copy", dst, src)
    if dt.itemsize not in (2, 4):
        raise TypeError(f"Copy takes 16- or 32-bit elements, not {dt}")
    ui = np.dtype(f"u{dt.itemsize}")
    _run("Copy", lambda x: x.view(ui).view(dt), dst, [(src, params.srcStride, params.srcRepeatSize)],
         (params.dstStride, params.dstRepeatSize), mask, repeat, is_set_mask, f"Copy({src.buffer})")


def Cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, mask: Any, repeat: int, params: UnaryRepeatParams,
         is_set_mask: bool = True) -> None:
    """``Cast<U, T, isSetMask>(dst, src, roundMode, mask, repeatTime, UnaryRepeatParams)``: the count form's
    conversion (:func:`.numerics.cast`) over the selected lanes; a repeat holds 256 bytes of the wider type."""
    _check_local("Cast", dst, src)
    mode = RoundMode(round_mode)
    _run("Cast", lambda x: cast(x, dst.dtype, mode), dst, [(src, params.srcBlkStride, params.srcRepStride)],
         (params.dstBlkStride, params.dstRepStride), mask, repeat, is_set_mask,
         f"{mode.name}({src.buffer}: {src.dtype}->{dst.dtype})")


#: Mask-form instructions by AscendC name: (kind, the repeat-params struct they take).
MASK_FORMS: dict[str, tuple[str, str]] = {
    **{n: ("binary", "BinaryRepeatParams") for n in _BINARY}, **{n: ("scalar", "UnaryRepeatParams") for n in _SCALAR},
    **{n: ("unary", "UnaryRepeatParams") for n in _UNARY}, "Copy": ("copy", "CopyRepeatParams"),
    "Cast": ("cast", "UnaryRepeatParams")}


def _bound(api: str) -> Any:
    kind = MASK_FORMS[api][0]
    if kind in ("copy", "cast"):
        return Copy if kind == "copy" else Cast
    fn = {"binary": binary, "scalar": with_scalar, "unary": unary}[kind]
    return lambda *a, **k: fn(api, *a, **k)


#: The names translated C++ calls: ``_mask_Add(dst, src0, src1, mask, repeat, params, is_set_mask)`` ...
NAMESPACE: dict[str, Any] = {f"_mask_{n}": _bound(n) for n in MASK_FORMS}
NAMESPACE.update(SetMaskCount=SetMaskCount, SetMaskNorm=SetMaskNorm, ResetMask=ResetMask, SetVectorMask=SetVectorMask,
                 MaskMode=MaskMode, MASK_PLACEHOLDER=MASK_PLACEHOLDER, UnaryRepeatParams=UnaryRepeatParams,
                 BinaryRepeatParams=BinaryRepeatParams, CopyRepeatParams=CopyRepeatParams)

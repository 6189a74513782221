"""Findings of the AscendC API's limits per architecture (kernel_flavours §6): Select modes and dtypes, Compare /
CompareScalar, Broadcast, each instruction's offered element types, the Select scratch at TMP_UB_OFFSET
(kernel_flavours §4) and compares over a partial 256-byte repeat."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...base.platform import NpuArch
from ...dtypes import bfloat16 as _BF16
from ..errors import KernelError
from .catalogue import REPEAT_BYTES
from .report import stop, warn

if TYPE_CHECKING:        # annotations only: core and tensor import this package
    from ..core import CoreContext
    from ..tensor import LocalTensor

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_HALF_FLOAT = frozenset({_F16, _F32})
#: The 950's lists (count form): Select T, Compare T, Compares T (Compares: double with EQ only).
_SEL_950 = frozenset(np.dtype(t) for t in ("int8", "uint8", "int16", "uint16", "float16", _BF16, "int32", "uint32",
                                           "float32", "int64", "uint64", "complex64"))
_CMP_950 = frozenset(np.dtype(t) for t in ("int8", "uint8", "int16", "uint16", "float16", _BF16, "int32", "uint32",
                                           "float32", "int64", "uint64", "float64"))
_SEL_MASK = frozenset(np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64"))
_ARCH_NAME = {NpuArch.DAV_1001: "Atlas training (Ascend910A, DAV_1001)",
              NpuArch.DAV_2002: "Atlas inference AI Core (Ascend310P, DAV_2002)",
              NpuArch.DAV_2201: "Atlas A2/A3 (DAV_2201)", NpuArch.DAV_3510: "Ascend950 (DAV_3510)"}


def _type_name(dt: np.dtype) -> str:
    """AscendC's name for an element type (half, float, bfloat16, int32 ...)."""
    return {"float16": "half", "float32": "float", "float64": "double"}.get(dt.name, dt.name)


def _unsupported(ctx: CoreContext, instr: str, tile: int | None, what: str, offered: str) -> KernelError:
    arch = _ARCH_NAME.get(ctx.soc.npu_arch, ctx.soc.npu_arch.name)
    return stop("unsupported-on-soc", f"{what} is not offered by the AscendC API on {ctx.soc.name}: {arch} offers "
                f"{offered}", instruction=instr, core=ctx.core, tile=tile)


def check_select(ctx: CoreContext, tile: int | None, dtype: np.dtype, mask_dtype: np.dtype, mode: int) -> None:
    """Select's limits (AD ``Select.md``, kernel_flavours §6): modes 0/1/2 everywhere but Atlas training (910A:
    mode 0 only); T half/float on 910A, 310P and A2/A3, the 950's list (count form) on the 950; selMask of
    uint8/16/32/64. Kernels with ``kernel_api = "cce"`` are not AscendC and are not checked."""
    if ctx.api != "ascendc":
        return
    arch = ctx.soc.npu_arch
    if arch == NpuArch.DAV_1001 and mode != 0:
        raise _unsupported(ctx, "Select", tile, f"Select mode {mode}", "Select mode 0 (VSEL_CMPMASK_SPR) only")
    allowed = _SEL_950 if arch == NpuArch.DAV_3510 else _HALF_FLOAT
    if dtype not in allowed:
        raise _unsupported(ctx, "Select", tile, f"Select of {_type_name(dtype)}",
                           "Select of " + ", ".join(sorted(_type_name(d) for d in allowed)))
    if mask_dtype not in _SEL_MASK:
        raise _unsupported(ctx, "Select", tile, f"a selMask of {_type_name(mask_dtype)}",
                           "selMask tensors of uint8, uint16, uint32 or uint64")


def select_operand(ctx: CoreContext, tile: int | None, mode: str, src1: Any) -> KernelError:
    """The ``select-operand`` finding: Select's ``mode`` (SELMODE's name) does not take ``src1`` (AD Select.md, src1:
    a LocalTensor in modes 0 and 2, a scalar of T in mode 1). The caller raises it, at the Select."""
    buffer = getattr(src1, "buffer", None)
    if buffer is not None:
        got, wants = f"the LocalTensor {buffer}", "a scalar of T (static_cast<T>(...))"
    else:
        scalar = np.ndim(src1) == 0 and np.asarray(src1).dtype.kind in "biuf"
        got = f"the scalar {_type_name(np.asarray(src1).dtype)} {src1}" if scalar else f"a {type(src1).__name__}"
        wants = "a LocalTensor"
    return stop("select-operand", f"Select in {mode} takes {wants} as src1, but src1 is {got}: the mode and the "
                "operand disagree", instruction="Select", core=ctx.core, tile=tile)


def check_compare(ctx: CoreContext, instr: str, tile: int | None, dtype: np.dtype, mode: int) -> None:
    """Compare / CompareScalar limits (AD ``Compare.md``, ``Compares.md``; kernel_flavours §6). Compare: half and
    float on 910A and 310P; half, float and int32 (EQ only) on A2/A3; the 950's list. CompareScalar (Compares):
    not offered on Atlas training (910A) -- ``Compares.md`` marks it unsupported there, UNCONFIRMED on device;
    half/float on 310P; half, float, int32 (EQ only) on A2/A3; the 950's list (double: EQ only)."""
    if ctx.api != "ascendc":
        return
    arch = ctx.soc.npu_arch
    scalar = instr == "CompareScalar"
    if scalar and arch == NpuArch.DAV_1001:
        raise _unsupported(ctx, instr, tile, "CompareScalar (Compares)",
                           "no Compares at all (Compares.md: 'Atlas 训练系列产品：不支持'; UNCONFIRMED on device); "
                           "Compare two tensors instead")
    if arch == NpuArch.DAV_3510:
        if dtype not in _CMP_950:
            raise _unsupported(ctx, instr, tile, f"{instr} of {_type_name(dtype)}",
                               f"{instr} of " + ", ".join(sorted(_type_name(d) for d in _CMP_950)))
        if scalar and dtype == np.float64 and mode != 2:
            raise _unsupported(ctx, instr, tile, "CompareScalar of double other than EQ", "double with EQ only")
        return
    ok = dtype in _HALF_FLOAT
    if arch == NpuArch.DAV_2201 and dtype == np.int32:
        if mode != 2:
            raise _unsupported(ctx, instr, tile, f"{instr} of int32 with mode {mode}", "int32 with EQ only")
        ok = True
    if not ok:
        offered = "half, float (all modes), int32 (EQ only)" if arch == NpuArch.DAV_2201 else "half, float"
        raise _unsupported(ctx, instr, tile, f"{instr} of {_type_name(dtype)}", f"{instr} of {offered}")


#: Broadcast<T, dim, axis> element types before the 950 (A2/A3 and 310P AI Core; Broadcast.md 支持的数据类型).
_BRC_PRE_950 = frozenset(np.dtype(t) for t in ("int8", "uint8", "float16", "float32"))


def check_broadcast(ctx: CoreContext, dst: LocalTensor, src: LocalTensor, dst_shape: tuple[int, ...],
                    src_shape: tuple[int, ...], axis: int | None, fused: tuple[int, ...],
                    tmp: LocalTensor | None, tmp_min: int) -> None:
    """Broadcast's limits (AD ``高阶API/张量变换/Broadcast.md`` @ 82b89a15, 产品支持情况 / 约束说明 / 支持的数据类型;
    ``impl/adv_api/detail/pad/broadcast/broadcast_common_impl.h``; the CPU-debug checks of
    ``api_check/kernel_check/pad/broadcast/broadcast_check_common.h``).

    ``axis`` is the template axis of ``Broadcast<T, dim, axis>``, None for the 950's shape-driven form
    (``Broadcast<T, constRank>(dst, src, dstShape, srcShape, &tiling)``); ``fused`` is the destination shape the
    950 library checks against 65535 (after GetBroadcastTilingInfo's axis fusion when it fuses). Offered: 950
    (both forms; b8/b16/b32 for the template form, b8..b64 for the shape-driven one), A2/A3 and 310P AI Core
    (template form; int8, uint8, half, float); not Atlas training (910A) nor Atlas 200I/500 A2 (310B)."""
    tile = dst.tile if dst.tile is not None else src.tile
    if ctx.api == "ascendc":
        _check_broadcast_offered(ctx, tile, dst.dtype, axis)
    what = _broadcast_fault(ctx.soc.npu_arch, dst, src, dst_shape, src_shape, axis, fused, tmp, tmp_min)
    if what is not None:
        raise stop("bad-broadcast", f"Broadcast {src.buffer} {list(src_shape)} -> {dst.buffer} {list(dst_shape)}: "
                   f"{what}", instruction="Broadcast", core=ctx.core, tile=tile)


def _check_broadcast_offered(ctx: CoreContext, tile: int | None, dt: np.dtype, axis: int | None) -> None:
    """Is this form of Broadcast, of this element type, offered on the SoC's architecture (产品支持情况)?"""
    arch = ctx.soc.npu_arch
    if arch not in (NpuArch.DAV_2002, NpuArch.DAV_2201, NpuArch.DAV_3510):
        raise _unsupported(ctx, "Broadcast", tile, "Broadcast",
                           "no Broadcast (Broadcast.md: Atlas 训练系列产品 and Atlas 200I/500 A2 推理产品：不支持)")
    if axis is None and arch != NpuArch.DAV_3510:
        raise _unsupported(ctx, "Broadcast", tile, "the shape-driven Broadcast (BroadcastTiling, rank 1..9)",
                           "Broadcast<T, dim, axis> with dim 1 or 2 only (the shape-driven form is Ascend950-only)")
    if arch == NpuArch.DAV_3510:
        sizes = (1, 2, 4, 8) if axis is None else (1, 2, 4)
        if dt.itemsize not in sizes:
            raise _unsupported(ctx, "Broadcast", tile, f"Broadcast of {_type_name(dt)}" +
                               ("" if axis is None else " through Broadcast<T, dim, axis>"),
                               "Broadcast of " + "/".join(f"b{8 * b}" for b in sizes) + " types")
    elif dt not in _BRC_PRE_950:
        raise _unsupported(ctx, "Broadcast", tile, f"Broadcast of {_type_name(dt)}",
                           "Broadcast of int8, uint8, half, float")


def _broadcast_fault(arch: NpuArch, dst: LocalTensor, src: LocalTensor, dst_shape: tuple[int, ...],
                     src_shape: tuple[int, ...], axis: int | None, fused: tuple[int, ...],
                     tmp: LocalTensor | None, tmp_min: int) -> str | None:
    """The first of Broadcast's constraints (约束说明) these operands break, said as what is wrong; None if none."""
    item = dst.dtype.itemsize
    rank = len(dst_shape)
    if axis is not None:
        if rank not in (1, 2) or axis not in (0, 1):
            return f"Broadcast<T, dim={rank}, axis={axis}>: dim must be 1 or 2 and axis 0 or 1"
        n_src, n_dst = int(np.prod(src_shape)), int(np.prod(dst_shape))
        if n_src not in (1, n_dst) and (axis >= rank or src_shape[axis] != 1):
            return f"axis {axis} is not the broadcast axis of these shapes"
        if rank == 2 and axis == 0 and src_shape[1] * item % 32:
            return f"dim=2, axis=0 needs srcShape[1] * sizeof(T) = {src_shape[1] * item} B to be a 32-byte multiple"
        if arch == NpuArch.DAV_2002 and rank == 2 and axis == 1 and src_shape[0] * item % 32:
            return (f"on 310P dim=2, axis=1 needs srcShape[0] * sizeof(T) = {src_shape[0] * item} B to be a "
                    "32-byte multiple")
    elif not 1 <= rank <= 9:
        return f"rank {rank} is outside [1, 9]"
    if arch == NpuArch.DAV_3510 and max(fused) > 0xFFFF:
        return f"dimension {max(fused)} (of {list(fused)} after axis fusion) exceeds 65535 (DstShapeCheck)"
    for t in (dst, src):
        if t.offset % 32:
            return f"UB address {t.offset} of {t.buffer} is not 32-byte aligned"
    d0, d1 = dst.offset, dst.offset + int(np.prod(dst_shape)) * item
    s0, s1 = src.offset, src.offset + int(np.prod(src_shape)) * item
    if d0 < s1 and s0 < d1:
        return f"source UB [{s0}, {s1}) and destination UB [{d0}, {d1}) overlap (不支持源操作数与目的操作数地址重叠)"
    if tmp is not None and tmp.nbytes < tmp_min:
        return (f"sharedTmpBuffer {tmp.buffer} holds {tmp.nbytes} B, less than GetBroadCastMaxMinTmpSize's minimum "
                f"{tmp_min} B")
    return None


def check_select_scratch(ctx: CoreContext, tile: int | None, mode: int, scratch: tuple[int, int] | None) -> bool:
    """A mode-1/2 Select on a SoC whose library writes its scratch (``scratch`` = that UB range, from
    ``core.select_scratch``): stop if a buffer of the kernel's TPipe overlaps it. Returns whether the scratch is
    written (the caller then writes it and records the reserve in the trace)."""
    if ctx.api != "ascendc" or mode == 0 or scratch is None:
        return False
    start, end = scratch
    hit = ctx.region_at(start, end, exclude=-1)
    if hit is not None:
        block = hit.block
        if block is None:
            state = "a TBuf, live for the whole kernel"
        elif block.free:
            state = "free at this instant, but its queue may refill or still drain it while V writes the scratch"
        else:
            state = "in use"
        raise stop("select-scratch",
                   f"Select mode {mode} writes its scratch at UB [{start}, {end}) (TMP_UB_OFFSET on "
                   f"{ctx.soc.name}), which clobbers {hit.name} at [{hit.start}, {hit.end}) ({state}); keep the "
                   f"plan below {start} B when the kernel issues Select modes 1/2",
                   instruction="Select", core=ctx.core, tile=tile)
    return True


def whole_repeats(ctx: CoreContext, api: str, src: LocalTensor, count: int) -> int:
    """The elements a compare actually computes: whole 256-byte repeats only (ascendc_facts §1.5). The bits
    of a trailing partial repeat stay stale, which is a ``partial-repeat`` warning. On the 950 the library
    masks the tail with a predicate instead (AD ``dav_3510/kernel_operator_vec_cmp_impl.h``, counter mode:
    ``UpdateMask`` over ``count``; kernel_flavours §6), so every one of the ``count`` elements is compared
    and there is nothing to warn about."""
    if ctx.soc.npu_arch == NpuArch.DAV_3510:
        return count
    per = REPEAT_BYTES // src.dtype.itemsize
    whole = count // per * per
    if whole != count:
        warn(ctx, api, ctx.current_tile if src.tile is None else src.tile, "partial-repeat",
             f"count {count} covers {count * src.dtype.itemsize} B, not a multiple of 256 B: the last "
             f"{count - whole} elements are not compared (their mask bits keep stale values)")
    return whole


def check_api_dtype(ctx: CoreContext, instr: str, tile: int | None, dtype: Any, offered: frozenset[Any],
                    where: str = "") -> None:
    """An instruction's element type against the list the AscendC library offers on this SoC's architecture (the
    ``SupportType<T, ...>`` static_assert of its count form, asc-devkit ``impl/basic_api/dav_*/
    kernel_operator_vec_*_impl.h``; the lists are :mod:`.instructions_math`'s). ``dtype`` is one type, or a tuple of
    types (Axpy's ``(T, U)``); an empty ``offered`` is an API the architecture does not have (``where`` says which
    architectures do). Kernels with ``kernel_api = "cce"`` are not AscendC and are not checked."""
    if ctx.api != "ascendc" or dtype in offered:
        return

    def spell(d: Any) -> str:
        return f"<{', '.join(_type_name(np.dtype(x)) for x in d)}>" if isinstance(d, tuple) else _type_name(d)

    if not offered:
        raise _unsupported(ctx, instr, tile, instr, f"no {instr} at all ({where or 'another architecture has it'})")
    raise _unsupported(ctx, instr, tile, f"{instr} of {spell(dtype)}",
                       f"{instr} of " + ", ".join(sorted(spell(d) for d in offered)))



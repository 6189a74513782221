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
repeats), ``cann_facts.md`` §4.1/§4.2 (ThresholdGradV2D's 256-byte GM padding), and ``kernel_flavours.md`` §4
(the Select scratch) and §6 (Select and Compare limits per architecture).

**The UB reserve** (kernel_flavours §4). The AscendC library does not shrink the UB for every kernel: on A2/A3
(DAV_2201) and 310P (DAV_2002), Select in mode 1 or 2 writes a scratch of 32 elements (the duplicated scalar,
or the selMask address) at ``TMP_UB_OFFSET`` (184 KB = 188416 B on A2/A3, 248 KB on 310P) and points CMPMASK at
it. A Select that does so while a buffer of the kernel's TPipe overlaps the scratch is a ``select-scratch``
error. A buffer counts as live for as long as the TPipe holds it -- a queue block that happens to be free at
that instant counts too, because with double buffering MTE2 may be filling it (or MTE3 draining it) while V
writes the scratch. A kernel that issues no such Select may plan up to the end of the UB (the device's TPipe
does not bound-check; only a CPU-debug build asserts against its pool). 910A has no mode 1/2 at all and the
950's count-form Select uses no scratch, so nothing is checked there. ``reserved_ub_bytes`` (in :mod:`.core`)
gives the bytes a plan should leave free by this model.

**API limits per architecture** (kernel_flavours §6; AD ``API/Memory矢量计算/比较与选择/{Select,Compare,
Compares}.md``, 数据类型 sections, read in the cannmirror/asc-devkit copy @ c67ec4c0). A kernel written against
AscendC that asks for a mode or dtype its SoC's library does not offer gets ``unsupported-on-soc``. Kernels
that stand for compiler output (``kernel_api = "cce"``: the TBE lowering) are not checked: TBE pairs vcmp and
vsel through CMPMASK per repeat instead of calling the AscendC API.
"""

from __future__ import annotations

import inspect
import linecache
import sys
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.platform import NpuArch
from ..dtypes import bfloat16 as _BF16
from .errors import FROM_STACK, KernelError, SourceLine, learner_line
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
#: Most queue blocks allocated at once per TPosition (VECIN, VECOUT, VECCALC), bounded by the hardware's event IDs
#: (ascendc_facts §1.2: 8 on A2/A3/950/310P, 4 on Atlas training 910A; CPU debug: "max buffer number in same queue
#: position is 4"). An AscendC API limit: a "cce" kernel (TBE's compiler output) manages its own flags.
QUEUE_BLOCKS_PER_POSITION = 8
QUEUE_BLOCKS_PER_POSITION_910A = 4

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
    Finding("int-overflow", _E,
            "C++ scalar code of the kernel overflowed a signed integer type, or converted NaN, inf or an out-of-range "
            "float to an integer: undefined behaviour in C++ (the compiler may assume it never happens)",
            "compute in a wider type (int64_t), or in an unsigned type where wrapping is what you mean"),
    Finding("kernel-assert", _E,
            "an ASSERT(condition) of the kernel's C++ failed (AscendC's debug check: the CPU-debug build aborts "
            "there; the NPU build compiles it out and runs on with the broken assumption)",
            "the message says what the kernel assumed: usually a tiling field the host did not set as expected"),
    Finding("bad-launch", _E, "the launch asks for fewer than one core (blockDim < 1)",
            "launch with blockDim >= 1: the tiling's core count, usually min(cores needed, cores of the SoC)"),
    Finding("tiling-zero", _E,
            "the kernel meets a tiling field of 0 where it needs a count (ubFactor, tileDataNum, blockFactor ...): "
            "InitBuffer sized by it asks for 0 bytes, or kernel code divides by it. The host tiling handed the "
            "kernel a tile of 0 elements (the experimental HardSigmoidGrad tiling, for one, does not check "
            "ubFactor > 0, which is 0 when the UB holds fewer than 32 elements per buffer); on the device the "
            "scalar unit's integer division by 0 has no defined quotient, so the tile loop runs away or never "
            "starts",
            "make the host tiling refuse a tile of 0 elements (fail when ubFactor == 0, as the main-tree tiling "
            "does) or give it a UB that holds one 32-element block per buffer (bufferNum * 32 * typeSize bytes)"),
    Finding("ub-overflow", _E,
            "TPipe::InitBuffer places a block past the end of the SoC's Unified Buffer (the device's TPipe does "
            "not check and the block wraps onto other data; a CPU-debug build asserts)",
            "shrink the tile (fewer elements per block), use fewer blocks (BUFFER_NUM) or temporaries, and "
            "check that InitBuffer lengths are bytes (elements * sizeof(T), not multiplied twice)"),
    Finding("too-many-buffers", _E, f"one TPipe holds more than {MAX_BUFFERS} buffers",
            "merge temporaries into one TBuf and index into it"),
    Finding("bad-initbuffer", _E,
            "TPipe::InitBuffer is asked for a queue with no blocks (num < 1) or for a buffer of no bytes (a "
            "tiling whose tile size is 0)",
            "pass num = 1 (single buffer) or 2 (double buffer), and a length of at least one 32-byte block (check "
            "the tiling's tile size: elements * sizeof(T))"),
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
    Finding("scalar-after-free", _E,
            "GetValue or SetValue on a LocalTensor after FreeTensor released its block: the scalar unit reads or "
            "writes a block whose producer may already be refilling it for the next tile",
            "read the scalars you need (GetValue) before FreeTensor, or keep the tensor allocated until its last "
            "GetValue/SetValue"),
    Finding("wrong-queue", _E,
            "EnQue or FreeTensor of a tensor on a queue it was not allocated from (or of a TBuf tensor)",
            "EnQue/FreeTensor a tensor on the queue whose AllocTensor/DeQue returned it"),
    Finding("enque-overflow", _E, "EnQue on a queue that already holds its depth of tensors",
            "DeQue before enqueuing more, or give the TQue a larger depth"),
    Finding("enque-twice", _E,
            "EnQue of a tensor that is already in the queue (enqueued and not yet DeQue'd): the consumer would "
            "DeQue the same block twice and read one tile's data as two",
            "EnQue each tensor once, after its copy or computation; DeQue it before enqueuing it again"),
    Finding("queue-blocks", _E,
            f"more queue blocks allocated at once at one TPosition (VECIN, VECOUT, VECCALC) than the hardware has "
            f"event IDs for: {QUEUE_BLOCKS_PER_POSITION} ({QUEUE_BLOCKS_PER_POSITION_910A} on Atlas training 910A); "
            "AllocTensor then hangs on the device",
            "use fewer queues or fewer blocks per queue at that position (e.g. BUFFER_NUM 2 with at most 4 queues), "
            "or FreeTensor earlier"),
    Finding("write-after-enque", _E,
            "an instruction writes a LocalTensor after EnQue handed it to the consumer and before the consumer's "
            "DeQue: EnQue's SetFlag fires once the writes issued before it are done, so the consumer may read the "
            "block before (or while) this write lands -- a race",
            "finish every write to the tensor before its EnQue (move the instruction up), or DeQue it first and "
            "write it on the consumer's side"),
    Finding("deque-empty", _E, "DeQue of a queue nothing was enqueued on",
            "EnQue the tensor on this queue (after its copy or computation) before the DeQue that reads it"),
    Finding("double-free", _E, "FreeTensor of a tensor that is already free",
            "free each allocated tensor exactly once"),
    Finding("gm-unset", _E, "a GlobalTensor is copied or indexed (xGm[i]) before SetGlobalBuffer gave it an address",
            "call xGm.SetGlobalBuffer(x + offset * sizeof(T), length) in Init"),
    Finding("copy-unmodelled", _E,
            "a copy with parameters the simulator does not model (a strided DataCopy: blockCount > 1 or a "
            "src/dst stride; a DataCopyPad of several blocks): refused rather than simulated wrongly",
            "copy one contiguous block per call (blockCount = 1, no strides), or DataCopyPad with blockCount = 1"),
    Finding("gm-freed", _E, "a copy touches device memory that was already freed (aclrtFree)",
            "keep the tensors alive until the kernel and its stream have finished"),
    Finding("gm-out-of-bounds", _E,
            f"a copy reads or writes GM outside its tensor and the tensor's {GM_PADDING}-byte padding",
            "check the core's offset (GetBlockIdx() * elements per core) and the tail tile's length"),
    Finding("gm-padding", _W,
            f"a copy reads or writes past the logical end of a GM tensor, inside its {GM_PADDING}-byte padding: "
            "reads see stale bytes, writes clobber whatever lies there",
            "copy only the tensor's bytes on the last tile (DataCopyPad with the exact blockLen)"),
    Finding("gm-clobber", _E,
            f"a copy writes past the logical end of a GM tensor, inside its {GM_PADDING}-byte padding, where another "
            "argument of the kernel lies (two tensors in one allocation): that padding is not free, the write "
            "overwrites the other argument's data",
            f"give each tensor its own allocation rounded up to {GM_PADDING} bytes (one aclrtMalloc per tensor, as the "
            "aclnn graph's tensors have), or end the last tile's copy-out at the tensor's last byte so nothing lands "
            "in the padding the next argument occupies"),
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
    Finding("unsupported-on-soc", _E,
            "the kernel asks the AscendC API for a mode or an operand dtype that the library does not offer on "
            "this SoC's architecture (Select mode 1/2 on Atlas training 910A, Select of a dtype other than "
            "half/float before the 950, Compare of int32 other than EQ on A2/A3, CompareScalar on 910A ...): "
            "the CPU-debug build asserts and the device build does not compile or computes garbage",
            "check the instruction's 数据类型 / 产品支持情况 for the SoC: cast to half or float first, use Select "
            "mode 0 (one mask for every repeat) or a Min/Max/Mul chain on 910A, Compare against a Duplicate'd "
            "tensor instead of CompareScalar on 910A, or run the kernel flavour registered for this SoC"),
    Finding("select-scratch", _E,
            "Select in mode 1 or 2 makes the AscendC library on A2/A3 (and 310P) write a 32-element scratch at "
            "TMP_UB_OFFSET (188416 B = 184 KB on A2/A3, 253952 B on 310P) and point CMPMASK at it; a buffer of "
            "the kernel's TPipe lies there, so its data is clobbered (and the Select may read a wrong scalar or "
            "mask address if a copy lands there first)",
            "keep the plan below TMP_UB_OFFSET when the kernel issues Select modes 1/2 (a smaller tile, one "
            "temporary fewer: leave the 8 KB at the top free), or avoid modes 1/2 (Select mode 0, or a "
            "Min/Max/Mul chain as ReluGrad's bf16/int paths do)"),
    Finding("partial-repeat", _W,
            f"a compare over a count that is not a whole number of {REPEAT_BYTES}-byte repeats: the trailing "
            "elements are not compared and their mask bits keep stale values",
            f"round the count up to a multiple of {REPEAT_BYTES} / sizeof(T) elements (pad the tile)"),
    Finding("bad-broadcast", _E,
            "a Broadcast breaks the API's constraints (AD 高阶API/张量变换/Broadcast.md, 约束说明): source and "
            "destination overlap in UB, an operand's UB address is not 32-byte aligned (通用地址对齐约束), "
            "Broadcast<T, dim, axis> with dim other than 1/2, axis other than 0/1 or an axis that is not the "
            "broadcast one, dim=2 axis=0 with a source row that is not a 32-byte multiple (and, on 310P, dim=2 "
            "axis=1 with srcShape[0] not a 32-byte multiple), the 950 form with a rank outside [1, 9] or a "
            "dimension above 65535 once its axes are fused (DstShapeCheck), or a sharedTmpBuffer smaller than "
            "GetBroadCastMaxMinTmpSize's minimum: the CPU-debug build asserts, the device computes garbage",
            "give src and dst their own 32-byte aligned buffers, pass the broadcast axis as the template axis (or "
            "use the 950's shape-driven form), pad the source row to 32 bytes, split a dimension above 65535 into "
            "tiles, and size sharedTmpBuffer with GetBroadCastMaxMinTmpSize"),
    Finding("ub-race", _E,
            "two pipes touch the same UB buffer with no queue hand-off or PipeBarrier<PIPE_ALL> between them, and "
            "at least one of them writes (MTE2 fills a TBuf that V reads, V reads a VECIN tensor before its DeQue, "
            "MTE3 copies out a tensor V has not EnQue'd ...): the pipes run concurrently and only SetFlag/WaitFlag "
            "-- which the queue calls issue -- orders them",
            "pass the data through a TQue (AllocTensor, write, EnQue on the producer side; DeQue, read, FreeTensor "
            "on the consumer side), or put PipeBarrier<PIPE_ALL>() between the two accesses"),
    Finding("flag-unset", _E,
            "WaitFlag<HardEvent::SRC_DST>(id) with no SetFlag of that event and ID pending: the waiting pipe "
            "stalls forever on the device (the kernel hangs) -- every WaitFlag needs an earlier SetFlag of the same "
            "HardEvent and event ID",
            "pair each WaitFlag with a SetFlag<same HardEvent>(same id) issued before it (FetchEventID for the ID), "
            "or let a TQue's EnQue/DeQue carry the flags"),
    Finding("ub-uninit", _EW,
            "an instruction reads UB bytes that no instruction of this core has written since the launch "
            "(uninitialised UB: on the device they hold whatever the last kernel left there; JAX's Pallas "
            "interpret mode poisons them). A vector instruction that reads them is a warning -- a compare over "
            "whole 256-byte repeats legitimately reads past the data, and the Select after it uses only the "
            "data's bits -- and so is a GetValue; a copy to GM of such bytes, or of anything computed from them, "
            "stops the kernel",
            "write every element a copy-out reads: copy in (or Duplicate) the whole span the computation covers, "
            "and copy out only the elements computed from written data"),
)}


def explain(kind: str) -> Finding:
    """The :class:`Finding` of a kind (``explain("gm-padding").hint``); ValueError for an unknown kind."""
    try:
        return FINDINGS[kind]
    except KeyError:
        raise ValueError(f"unknown sanitizer finding {kind!r}; the kinds are {', '.join(FINDINGS)}") from None


# --- reporting ----------------------------------------------------------------------------------------
def stop(kind: str, message: str, *, instruction: str, core: int | None = None,
         tile: int | None = None, line: SourceLine | None = FROM_STACK) -> KernelError:
    """The error that stops a kernel on a ``kind`` finding (the caller raises it, so the traceback ends at
    the instruction). Its text is ``[kind] message (instruction ..., core ..., tile ...)`` and the learner's line
    (``line``; by default the innermost frame of the learner's kernel on the stack, looked up now -- a finding is
    rare, so the walk costs nothing per instruction); ``hint`` carries the catalogue's advice."""
    finding = explain(kind)
    if not finding.stops:
        raise ValueError(f"{kind} is a warning, not an error: report it with sanitizer.warn")
    if line is FROM_STACK:
        line = learner_line(sys._getframe(1))
    if tile is None and core is not None:       # inside the tile loop: the tile the core is working on
        from .core import _current
        ctx = _current.get()
        if ctx is not None and ctx.core == core:
            tile = ctx.current_tile
    return KernelError(message, instruction=instruction, core=core, tile=tile, kind=kind, hint=finding.hint,
                       line=line)


def warn(ctx: CoreContext, instr: str, tile: int | None, kind: str, message: str) -> None:
    """Record a finding the hardware tolerates as a warning (always, trace or not), with the learner's line. Under
    a ``strict`` policy (see ``launch``) a finding the policy names stops the kernel right here."""
    finding = explain(kind)
    if not finding.warns:
        raise ValueError(f"{kind} stops the kernel: raise sanitizer.stop(...) instead of warning")
    line = learner_line(sys._getframe(1))
    w = Warning_(ctx.core, tile, instr, kind, message, line)
    ctx.trace.warnings.append(w)
    if ctx.strict is not None:
        why = ctx.strict(w)
        if why:
            raise KernelError(f"{message} -- {why}", instruction=instr, core=ctx.core, tile=tile, kind=kind,
                              hint=finding.hint, line=line)


# --- launch and UB plan -------------------------------------------------------------------------------
def scalar_overflow(ctx: CoreContext, message: str) -> KernelError:
    """The kernel's C++ scalar code did what C++ leaves undefined (signed overflow, a bad float -> int)."""
    return stop("int-overflow", message, instruction="scalar", core=ctx.core, tile=ctx.current_tile)


def kernel_assert(ctx: CoreContext, message: str) -> KernelError:
    """``ASSERT(cond && "message")`` in the kernel's C++ failed."""
    return stop("kernel-assert", f"ASSERT failed: {message}", instruction="ASSERT", core=ctx.core,
                tile=ctx.current_tile)


def check_launch(block_dim: int) -> None:
    if block_dim < 1:
        raise stop("bad-launch", f"blockDim must be >= 1, got {block_dim}", instruction="launch")


def zero_fields(tiling_data: Any) -> list[str]:
    """The integer fields of a TilingData that are 0 (``["ubFactor"]``), in declaration order."""
    if tiling_data is None:
        return []
    names = ([f.name for f in fields(tiling_data)] if is_dataclass(tiling_data)
             else list(getattr(tiling_data, "__annotations__", {})))
    out = []
    for name in names:
        value = getattr(tiling_data, name, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0:
            out.append(name)
    return out


def _kernel_frames(tb: Any) -> list[tuple[str, str, int, str]]:
    """(function, file, line, source) of each frame of a traceback below the launcher, innermost last."""
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
        frames.append((code.co_name, code.co_filename, tb.tb_lineno, line))
        tb = tb.tb_next
    return frames[1:]                   # the first frame is launch() itself


def zero_division(ctx: CoreContext, kernel: str, exc: ZeroDivisionError) -> KernelError:
    """A Python ``ZeroDivisionError`` raised by kernel code becomes a ``tiling-zero`` finding: it names the kernel,
    the core, the line that divided and the tiling field that is 0 (the first 0 field named on the innermost
    line that names one; every 0 field when no line does). The line is named as the learner's when it is theirs
    (file or cell and line), else by its function and line only: a message never shows a library path."""
    td = ctx.tiling_data
    zeros = zero_fields(td)
    frames = _kernel_frames(exc.__traceback__)
    at = frames[-1] if frames else ("kernel", "?", 0, "")
    culprit = None
    for frame in reversed(frames):
        named = [z for z in zeros if z in frame[3]]
        if named:
            at, culprit = frame, named[0]
            break
    func, filename, line, source = at
    mine = learner_line(exc)                 # the error's own "at <file or cell, line>" names a learner's file
    where = f"in {func}, line {line}: `{source}`"
    if culprit is not None:
        what = f"{kernel} divides by {culprit} = 0 from its tiling ({where})"
    elif zeros:
        what = f"{kernel} divides by zero ({where}); the tiling's 0 fields are {', '.join(zeros)}"
    else:
        what = f"{kernel} divides by zero ({where})"
    tiling = f"; the tiling is {td!r}" if td is not None else ""
    return stop("tiling-zero", f"{what}{tiling}: a tile of 0 elements, which the host tiling should have refused",
                instruction=func, core=ctx.core, tile=ctx.current_tile, line=mine)


def check_ub_plan(ctx: CoreContext, name: str, start: int, nbytes: int) -> None:
    """TPipe::InitBuffer: the block ``[start, start + nbytes)`` must end inside the UB (a plan-only launch
    records an over-capacity plan instead, for the UB layout figure). Nothing is reserved here: the Select
    scratch is checked when a Select writes it (:func:`check_select_scratch`)."""
    end = start + nbytes
    if end > ctx.ub_limit and not ctx.plan_only:
        raise stop("ub-overflow",
                   f"UB over capacity: {name} needs {nbytes} B at offset {start}, ending at {end} B, but the UB of "
                   f"{ctx.soc.name} holds {ctx.ub_limit} B; overflow {end - ctx.ub_limit} B",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_buffer_count(ctx: CoreContext) -> None:
    if ctx.buffer_count > MAX_BUFFERS:
        raise stop("too-many-buffers", f"more than {MAX_BUFFERS} buffers in one TPipe",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_initbuffer_num(ctx: CoreContext, name: str, num: int) -> None:
    if num < 1:
        raise stop("bad-initbuffer", f"InitBuffer({name}, {num}, ...) needs at least one block",
                   instruction="TPipe::InitBuffer", core=ctx.core)


def check_initbuffer_len(ctx: CoreContext, name: str, nbytes: int) -> None:
    """A buffer of no bytes. With a tiling that has a field of 0 it is ``tiling-zero`` (the tile size came from
    it: the message names the 0 fields and the whole tiling), else ``bad-initbuffer``."""
    if nbytes >= 1:
        return
    zeros = zero_fields(ctx.tiling_data)
    if zeros:
        raise stop("tiling-zero", f"InitBuffer({name}, ...) asks for {nbytes} B, a buffer of no bytes: the tiling's "
                   f"0 fields are {', '.join(zeros)} ({ctx.tiling_data!r}), so a tile holds 0 elements",
                   instruction="TPipe::InitBuffer", core=ctx.core)
    raise stop("bad-initbuffer", f"InitBuffer({name}, ...) asks for {nbytes} B, a buffer of no bytes",
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


def unmodelled_copy(instr: str, message: str) -> KernelError:
    """A copy the simulator does not model (strided DataCopy ...): a finding, not a NotImplementedError."""
    # core imports this module: the running core is looked up here, when a finding is made
    from .core import _current
    ctx = _current.get()
    return stop("copy-unmodelled", message, instruction=instr, core=None if ctx is None else ctx.core)


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


# --- Unified Buffer operands and repeats --------------------------------------------------------------
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
        inside = (result._arg_start + result._arg_nbytes - result._start) // t.dtype.itemsize
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


# --- API limits per architecture and the Select scratch (kernel_flavours §4, §6) -----------------------------
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
    arch = ctx.soc.npu_arch
    dt = dst.dtype
    if ctx.api == "ascendc":
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

    def bad(what: str) -> KernelError:
        return stop("bad-broadcast", f"Broadcast {src.buffer} {list(src_shape)} -> {dst.buffer} {list(dst_shape)}: "
                    f"{what}", instruction="Broadcast", core=ctx.core, tile=tile)

    item = dt.itemsize
    rank = len(dst_shape)
    if axis is not None:
        if rank not in (1, 2) or axis not in (0, 1):
            raise bad(f"Broadcast<T, dim={rank}, axis={axis}>: dim must be 1 or 2 and axis 0 or 1")
        n_src, n_dst = int(np.prod(src_shape)), int(np.prod(dst_shape))
        if n_src not in (1, n_dst) and (axis >= rank or src_shape[axis] != 1):
            raise bad(f"axis {axis} is not the broadcast axis of these shapes")
        if rank == 2 and axis == 0 and src_shape[1] * item % 32:
            raise bad(f"dim=2, axis=0 needs srcShape[1] * sizeof(T) = {src_shape[1] * item} B to be a 32-byte multiple")
        if arch == NpuArch.DAV_2002 and rank == 2 and axis == 1 and src_shape[0] * item % 32:
            raise bad(f"on 310P dim=2, axis=1 needs srcShape[0] * sizeof(T) = {src_shape[0] * item} B to be a "
                      "32-byte multiple")
    elif not 1 <= rank <= 9:
        raise bad(f"rank {rank} is outside [1, 9]")
    if arch == NpuArch.DAV_3510 and max(fused) > 0xFFFF:
        raise bad(f"dimension {max(fused)} (of {list(fused)} after axis fusion) exceeds 65535 (DstShapeCheck)")
    for t in (dst, src):
        if t.offset % 32:
            raise bad(f"UB address {t.offset} of {t.buffer} is not 32-byte aligned")
    d0, d1 = dst.offset, dst.offset + int(np.prod(dst_shape)) * item
    s0, s1 = src.offset, src.offset + int(np.prod(src_shape)) * item
    if d0 < s1 and s0 < d1:
        raise bad(f"source UB [{s0}, {s1}) and destination UB [{d0}, {d1}) overlap "
                  "(不支持源操作数与目的操作数地址重叠)")
    if tmp is not None and tmp.nbytes < tmp_min:
        raise bad(f"sharedTmpBuffer {tmp.buffer} holds {tmp.nbytes} B, less than GetBroadCastMaxMinTmpSize's minimum "
                  f"{tmp_min} B")


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


# --- who wrote which UB bytes, and which pipe holds a buffer (ub-uninit, ub-race, write-after-enque) ---------
#
# Both checks keep per-instruction bookkeeping only -- intervals, never a per-element shadow:
#
# * **ub-uninit.** Each core keeps the UB bit ranges some instruction has written since the launch (``written``;
#   bits, because a compare writes one mask bit per element) and the ranges that hold values computed from
#   unwritten bytes (``poison``). A read of unwritten bits by a vector instruction is a ``ub-uninit`` warning, and
#   the elements of the instruction that read them (element i of every operand is element i of the result; bit i
#   of a mask is element i) are *poisoned* in its destination; a read of poisoned bits poisons the destination
#   again without a new warning; a clean write un-poisons. A copy UB -> GM (MTE3) of unwritten or poisoned bytes
#   is the error: uninitialised data reached a result -- counting only the bytes that land in the copying core's
#   own part of the tensor (inside the tensor's logical bytes and inside the GlobalTensor's SetGlobalBuffer size):
#   bytes written into the padding are ``gm-padding``'s finding, and bytes written past the GlobalTensor's size
#   land in a neighbouring core's part, which that core writes too (on the device the two writes race; the
#   simulator runs the cores one after another, so the owner's data is what remains -- not reported here).
#   When it *warns*, precisely: a vector instruction or a
#   GetValue reads bytes no instruction of the core has written, once per byte range and core -- except a
#   Compare/CompareScalar (or the Not that inverts its mask, as TBE's lowering does) whose unwritten bytes all lie
#   in the operand's last 256-byte repeat: compares work on whole repeats (§1.5), kernels round their count up to
#   one (HardSigmoidGrad's CompareScalar over roundUp(n, 256 / sizeof(T)), the atvoss Compare node, TBE's vcmp
#   and its Not over whole 32-byte blocks of the mask), and the Select after it reads only the data's bits, so
#   those padding lanes are tracked (poisoned) but not reported unless they reach GM. The simulator cannot follow
#   a GetValue's scalar through Python code, so that stays a warning. "Written" is monotone: bytes a previous
#   tile wrote count as written (stale, not uninitialised).
# * **ub-race** (ascendc_facts §1.2: pipes run concurrently, only SetFlag/WaitFlag -- issued by the queue calls --
#   or PipeBarrier<PIPE_ALL> order them). Each UB buffer (a queue block or a TBuf) has an *owner*: the pipe that
#   last touched it since the last hand-off. AllocTensor and PipeBarrier<PIPE_ALL> leave it free (the next pipe
#   takes it), EnQue marks it *queued* (only the pipe that filled it may still read it; any write is a
#   ``write-after-enque``), DeQue gives it to the queue's consumer. A pipe touching a buffer another pipe owns is a
#   race when either access writes (two reads do not conflict). The scalar unit (GetValue/SetValue) is left out:
#   the compiler's auto-sync inserts its V_S/S_V flags (ascendc_facts §1.2). Accesses are checked per buffer (an
#   overrun into a neighbour is ``ub-overrun``'s business), and a read by a second pipe does not become the owner.
#
# The instructions answer the common case -- the buffer is fully written, holds no poison and is owned by the
# pipe that touches it -- without calling here (``UBState.clean`` and ``UBState.owner``).

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


def _race(ctx: CoreContext, t: LocalTensor, instr: str, write: bool, pipe: str) -> None:
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
    ``result_end`` (a copy to GM): bits from there on land in the GM tensor's padding, not in the result."""
    ctx = t.ctx
    r = t.region
    if r is not None and r.owner != pipe and pipe != "S":
        _race(ctx, t, instr, write, pipe)
    if write:
        if r is not None and r.owner == pipe:
            r.wrote = True
        taint, ctx.taint = ctx.taint, None
        if pipe != "V":                 # only a vector instruction computes its result from what it read
            taint = None
        written, poison = ctx.written, ctx.poison
        if taint is None and not poison and (a, b) in ctx.written_spans:
            return
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
        return
    if (a, b) in ctx.clean_spans:
        return
    unwritten = ctx.written.gaps(a, b)
    poisoned = ctx.poison.overlaps(a, b)
    if not unwritten and not poisoned:
        ctx.clean_spans.add((a, b))
        return
    tile = ctx.current_tile if t.tile is None else t.tile
    if pipe == "MTE3":
        if result_end is not None:             # what lands in the padding is gm-padding's business, not a result
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
                   instruction=instr, core=ctx.core, tile=tile)
    if unwritten and instr in _WHOLE_REPEAT_READS:
        last = a + (-(-(b - a) // _REPEAT_BITS) - 1) * _REPEAT_BITS     # first bit of the operand's last repeat
        if unwritten[0][0] >= last:
            unwritten_warn: list[tuple[int, int]] = []                  # the repeat padding: tracked, not warned
        else:
            unwritten_warn = unwritten
    else:
        unwritten_warn = unwritten
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
        _race(ctx, t, instr, True, "S")
    ctx.taint = None
    ub_access(t, a, a + item, item, instr, write, "S")


def pipe_barrier_all(ctx: CoreContext) -> None:
    """PipeBarrier<PIPE_ALL>: every pipe has drained, so every buffer not in a queue is free to the next pipe."""
    for st in ctx.states:
        if st.owner is not QUEUED:
            st.owner, st.wrote = None, False


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
    (:func:`_race`), while a third pipe's access is still one, and so is ``src`` writing it again after ``dst`` took
    it (until a flag the other way). A grant ends when another pipe takes the buffer. (An access ``src`` issued after
    the SetFlag is covered too: the simulator keeps one owner per buffer, not the time of each access.)"""
    grants = ctx.__dict__.setdefault("flag_grants", {})
    for st in states:
        if st.owner == src:
            g = grants.get(id(st))
            if g is None or g[0] != src:
                g = grants[id(st)] = (src, set())
            g[1].add(dst)

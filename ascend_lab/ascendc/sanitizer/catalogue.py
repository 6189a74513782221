"""The catalogue of sanitizer findings: every kind, whether it stops the kernel, what it means, what to do.

The limits the findings name (the 256-byte repeat and GM padding, the buffer and queue-block counts) live here
too, so the catalogue's text and the checks (the other modules of this package) quote the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    Finding("select-operand", _E,
            "Select's selMode and its src1 disagree (AD Select.md, src1: a LocalTensor in mode 0 "
            "VSEL_CMPMASK_SPR and mode 2 VSEL_TENSOR_TENSOR_MODE, a scalar of T in mode 1 "
            "VSEL_TENSOR_SCALAR_MODE): the overload is picked by src1's type and the mode register by selMode, so "
            "the device build fails or selects from the wrong operand",
            "pass a scalar of T (static_cast<T>(0)) with VSEL_TENSOR_SCALAR_MODE, a LocalTensor with "
            "VSEL_TENSOR_TENSOR_MODE or VSEL_CMPMASK_SPR -- or change the mode to the operand you have"),
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

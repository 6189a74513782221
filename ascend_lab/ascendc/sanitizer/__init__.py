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
(:mod:`.core`) and the launcher call the functions re-exported here; none of them builds a finding itself. The
package has one module per family of findings, and the shadow memory model apart from the reporting:

========================  ==========================================================================================
:mod:`.catalogue`         every kind of finding (:data:`FINDINGS`, :func:`explain`) and the limits they name
:mod:`.report`            :func:`stop` (the error that stops the kernel) and :func:`warn` (a recorded warning)
:mod:`.plan`              launch and UB plan: blockDim, InitBuffer, a tiling field of 0, C++ scalar UB / ASSERT
:mod:`.queues`            TQue/TBuf: AllocTensor, EnQue, DeQue, FreeTensor, the per-position block limit
:mod:`.gm`                GM <-> UB copies: alignment, unset/freed GM, out of bounds, padding, clobbered arguments
:mod:`.ub`                UB operands: freed tensors, overruns (what lies beyond), GetValue/SetValue
:mod:`.shadow`            the shadow model: written/poisoned UB bits (ub-uninit), buffer owners (ub-race), flags
:mod:`.api_limits`        the AscendC API per architecture: Select, Compare, Broadcast, dtypes, the Select scratch
========================  ==========================================================================================

Sources:
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

from .api_limits import (
    check_api_dtype,
    check_broadcast,
    check_compare,
    check_select,
    check_select_scratch,
    select_operand,
    whole_repeats,
)
from .catalogue import (
    FINDINGS,
    GM_PADDING,
    MAX_BUFFERS,
    QUEUE_BLOCKS_PER_POSITION,
    QUEUE_BLOCKS_PER_POSITION_910A,
    REPEAT_BYTES,
    Finding,
    explain,
)
from .gm import check_copy, check_gm, check_gm_clobber, check_pad_block, gm_unset, unmodelled_copy
from .plan import (
    check_buffer_count,
    check_initbuffer_len,
    check_initbuffer_num,
    check_launch,
    check_ub_plan,
    kernel_assert,
    scalar_overflow,
    zero_division,
    zero_fields,
)
from .queues import (
    alloc_exhausted,
    check_deque,
    check_enque,
    check_free,
    check_tbuf_get,
    position_counter,
    queue_block_limit,
    queue_blocks,
    uninitialised_queue,
    uninitialised_tbuf,
)
from .report import stop, warn
from .shadow import QUEUED, Intervals, flag_handover, flag_states, flag_unset, pipe_barrier_all, ub_access
from .ub import beyond, scalar_access, ub_span

__all__ = [
    "FINDINGS", "GM_PADDING", "MAX_BUFFERS", "QUEUED", "QUEUE_BLOCKS_PER_POSITION", "QUEUE_BLOCKS_PER_POSITION_910A",
    "REPEAT_BYTES", "Finding", "Intervals", "alloc_exhausted", "beyond", "check_api_dtype", "check_broadcast",
    "check_buffer_count", "check_compare", "check_copy", "check_deque", "check_enque", "check_free", "check_gm",
    "check_gm_clobber", "check_initbuffer_len", "check_initbuffer_num", "check_launch", "check_pad_block",
    "check_select", "check_select_scratch", "check_tbuf_get", "check_ub_plan", "explain", "flag_handover",
    "flag_states", "flag_unset", "gm_unset", "kernel_assert", "pipe_barrier_all", "position_counter",
    "queue_block_limit", "queue_blocks", "scalar_access", "scalar_overflow", "select_operand", "stop", "ub_access",
    "ub_span",
    "uninitialised_queue", "uninitialised_tbuf", "unmodelled_copy", "warn", "whole_repeats", "zero_division",
    "zero_fields",
]

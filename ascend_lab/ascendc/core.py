"""One simulated AI Core (vector side): its Unified Buffer and its pipes' clocks.

The launcher creates a :class:`CoreContext` per core and makes it current while the kernel body
runs, so that ``GetBlockIdx()`` and every instruction know which core they run on. Time is kept per
pipe (MTE2, V, MTE3 and the scalar issue clock S): an instruction starts when its pipe is free, when
the scalar unit has issued it, and after any flag it waits for (the queue operations set and wait
flags, see :mod:`.pipe`). Nothing here loops over elements: instructions are numpy operations on whole
tiles. The checks on what a kernel does with the core are in :mod:`.sanitizer`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.platform import NpuArch, SocInfo
from . import sanitizer
from .cost_model import ISSUE_CYCLES, CostModel
from .running import current
from .trace import CoreSummary, Event, Trace, UBBuffer, Warning_

_getframe = sys._getframe

#: ``TMP_UB_OFFSET`` per architecture: where the AscendC library's 8 KB scratch (``TMP_UB_SIZE``) starts in UB
#: (AD ``impl/basic_api/utils/kernel_utils_constants.h``: 184 KB on DAV_2201, 248 KB on DAV_1001/2002/3510;
#: read from the cannmirror/asc-devkit copy @ 02063046).
TMP_UB_OFFSET = {NpuArch.DAV_1001: 248 * 1024, NpuArch.DAV_2002: 248 * 1024, NpuArch.DAV_2201: 184 * 1024,
                 NpuArch.DAV_3510: 248 * 1024}
#: Architectures on which an instruction the simulator models writes that scratch: Select in mode 1 or 2
#: (count form) on A2/A3 (DAV_2201) and 310P (DAV_2002). The library duplicates the scalar (mode 1) or the
#: selMask address (mode 2, as uint32) over ONE_BLK_SIZE = 32 elements at TMP_UB_OFFSET and points CMPMASK at
#: it (AD ``impl/basic_api/dav_c220/kernel_operator_vec_cmpsel_impl.h`` VselImpl, ``dav_m200/...`` the same
#: code). 910A (DAV_1001) offers Select mode 0 only, and the 950's count-form Select uses no scratch
#: (``Select.md``, UB-usage note), so nothing modelled writes there on those SoCs.
SELECT_SCRATCH_ARCHS = (NpuArch.DAV_2201, NpuArch.DAV_2002)
#: Elements the library duplicates into the scratch: ONE_BLK_SIZE (= 32) used as an element count in counter
#: mode (``SetMask<U>(0, ONE_BLK_SIZE)`` then one Duplicate), so the scratch spans 32 * sizeof(T) bytes -- 64 B for
#: a half scalar, 128 B for a float scalar or a mode-2 uint32 address [derived from the cited VselImpl].
#: kernel_flavours §4 calls it "a 32-B scratch"; both readings agree on where it starts, which is what decides
#: whether a bottom-up plan is hit (any plan ending past TMP_UB_OFFSET covers its first byte).
SELECT_SCRATCH_ELEMENTS = 32
#: What a kernel entry is written against. ``"ascendc"``: the AscendC library, whose per-architecture API
#: limits (Select modes, Compare dtypes) and Select scratch the sanitizer enforces. ``"cce"``: code that stands
#: for what a compiler such as TBE emits straight to the vector ISA (vcmp/vsel through CMPMASK per repeat):
#: no AscendC API limit and no library scratch apply. An entry says so with a ``kernel_api`` attribute.
KERNEL_APIS = ("ascendc", "cce")


def select_scratch(soc: SocInfo, item: int) -> tuple[int, int] | None:
    """The UB byte range ``[start, end)`` a mode-1/2 Select whose duplicated element is ``item`` bytes wide writes
    on ``soc`` (None where no modelled instruction writes a scratch, or where the offset lies past the UB)."""
    if soc.npu_arch not in SELECT_SCRATCH_ARCHS:
        return None
    start = TMP_UB_OFFSET[soc.npu_arch]
    if start >= soc.ub_size:            # a what-if UB smaller than the offset: the write misses the UB
        return None
    return start, min(start + SELECT_SCRATCH_ELEMENTS * item, soc.ub_size)


def reserved_ub_bytes(soc: SocInfo, select: bool = True) -> int:
    """Bytes at the top of UB a TPipe plan should leave free on ``soc`` by the model (kernel_flavours §4).

    Only a kernel that issues Select in mode 1 or 2 (``select=True``, the default: the answer for a kernel that
    may) needs any: on A2/A3 and 310P the library writes its scratch at TMP_UB_OFFSET, so a plan built bottom-up
    by InitBuffer must end there -- 196608 - 188416 = 8192 B on A2/A3, 262144 - 253952 = 8192 B on 310P (Select.md
    lists the 310P AI Core with A2/A3 for the 8 KB of modes 1/2; its dav_m200 VselImpl writes the same scratch).
    A kernel that issues no such Select may use the whole UB (the device's TPipe does not bound-check).

    0 on the other architectures, for these reasons:

    * Ascend950 (DAV_3510): its count-form Select uses no 8 KB scratch (Select.md); Compare(s)/Cast/Duplicate/
      Muls/Adds use the 2 KB ASC reserve, which with the 6 KB VF stack lies above the 248 KB the catalogue
      gives as the UB (253952 B; TMP_UB_OFFSET = 248 KB is its end), so nothing inside the simulated UB.
    * Ascend910A (DAV_1001): Select has mode 0 only (Select.md), which uses no scratch. The library still
      defines TMP_UB_OFFSET = 248 KB there (and a 248 KB TPipe pool in a 256 KB UB) for other APIs the simulator
      does not model; whether a 910A kernel must keep [248 KB, 256 KB) free for anything it does issue the
      sources do not say, so the model keeps nothing."""
    if not select or soc.npu_arch not in SELECT_SCRATCH_ARCHS:
        return 0
    return max(soc.ub_size - TMP_UB_OFFSET[soc.npu_arch], 0)


@dataclass
class _Region:
    name: str
    kind: str
    start: int
    end: int
    block: Any = None        # the queue block (None for a TBuf)


class UBState:
    """The sanitizer's view of one UB buffer (a queue block or a TBuf), shared by every LocalTensor on it.

    ``owner`` is the pipe that holds the buffer (None: free to the next pipe; ``sanitizer.QUEUED`` between EnQue
    and DeQue, ``queued_by`` then names the pipe that filled it), ``wrote`` whether the owner wrote it since it
    took it, ``clean`` whether every byte of it has been written and none holds values computed from unwritten
    bytes -- so that instructions skip the bookkeeping for it (see ``sanitizer.ub_access``)."""

    __slots__ = ("name", "start", "end", "owner", "wrote", "clean", "queued_by")

    def __init__(self, name: str, start: int, end: int):
        self.name = name
        self.start = start
        self.end = end
        self.owner: str | None = None
        self.wrote = False
        self.clean = False
        self.queued_by: str | None = None


class PlanComplete(Exception):
    """Raised at the kernel's first queue allocation when only the UB plan (Init) is wanted."""


class CoreContext:
    """State of one core during a launch."""

    def __init__(self, core: int, block_dim: int, soc: SocInfo, cost: CostModel, trace: Trace,
                 record: bool, snapshot: bool = False, plan_only: bool = False,
                 strict: Callable[[Warning_], str | None] | None = None, api: str = "ascendc",
                 tiling_data: Any = None, gm_args: Sequence[Any] = ()):
        self.core = core
        self.tiling_data = tiling_data          # named by the sanitizer when a tiling field of 0 breaks the kernel
        self.gm_args = gm_args                  # the launch's GM_ADDRs: a padding write must not land in another
        self.api = api
        self.strict = strict
        self.snapshot = record and snapshot
        self.plan_only = plan_only
        self.block_dim = block_dim
        self.soc = soc
        self.cost = cost
        self.trace = trace
        self.record = record
        self.ub_capacity = soc.ub_size
        self.ub_limit = soc.ub_size          # a plan may use the whole UB; the Select scratch is checked per Select
        self.ub = np.zeros(self.ub_capacity, dtype=np.uint8)
        self.ub_top = 0                                  # TPipe bump pointer
        self.regions: list[_Region] = []
        self.pipe_free = {"MTE2": 0.0, "V": 0.0, "MTE3": 0.0, "S": 0.0}
        self.s_time = 0.0
        self.summary = CoreSummary(core)
        self.buffer_count = 0
        self.current_tile: int | None = None
        # sanitizer bookkeeping (sanitizer.ub_access): UB bit ranges written since the launch, ranges holding values
        # computed from unwritten bytes, spans known clean / already recorded, the current instruction's poisoned
        # element ranges (set by its reads, used by its write), and every buffer's UBState
        self.written = sanitizer.Intervals()
        self.poison = sanitizer.Intervals()
        self.uninit_warned = sanitizer.Intervals()
        self.clean_spans: set[tuple[int, int]] = set()
        self.written_spans: set[tuple[int, int]] = set()
        self.taint: list[tuple[int, int, int]] | None = None     # (first bit, end bit, element bits) read
        self.states: list[UBState] = []
        # (instruction, dtypes, mode) whose API limits this core's SoC already accepted (they depend on nothing else)
        self.api_checked: set[tuple[Any, ...]] = set()
        #: the C++ files of the kernel running (a compiled ascendc.cxx kernel; recorded launches only): each event
        #: then carries the C++ line that issued it
        self.source_files: frozenset[str] | None = None

    # --- UB allocation (TPipe.InitBuffer) -----------------------------------------------------------
    def alloc_ub(self, nbytes: int, name: str, kind: str) -> int:
        start = self.ub_top
        sanitizer.check_ub_plan(self, name, start, nbytes)
        self.ub_top = start + nbytes
        self.buffer_count += 1
        sanitizer.check_buffer_count(self)
        self.regions.append(_Region(name, kind, start, start + nbytes))
        self.trace.ub_layout.setdefault(self.core, []).append(UBBuffer(name, kind, start, nbytes))
        return start

    def track(self, state: UBState) -> UBState:
        """Register a buffer's UBState (PipeBarrier<PIPE_ALL> and poisoned writes visit them all)."""
        self.states.append(state)
        return state

    def region_at(self, start: int, end: int, exclude: int) -> _Region | None:
        for r in self.regions:
            if r.start < end and start < r.end and r.start != exclude:
                return r
        return None

    # --- time -------------------------------------------------------------------------------------
    def issue(self, pipe: str, cycles: float) -> tuple[float, float]:
        """Queue an instruction on ``pipe``: the scalar unit spends ISSUE_CYCLES issuing it, and it starts
        once both that is done and the pipe is free. Returns its (start, end) in cycles. Every copy and
        vector instruction goes through here (the one implementation of issue timing)."""
        issued = self.s_time = self.s_time + ISSUE_CYCLES
        free = self.pipe_free
        start = free[pipe]
        if start < issued:                  # max() without the builtin call: this runs for every instruction
            start = issued
        end = free[pipe] = start + cycles
        summary = self.summary
        summary.instructions += 1
        summary.busy[pipe] += cycles
        return start, end

    def wait(self, pipe: str, until: float) -> None:
        """WaitFlag: stall ``pipe`` until a flag set at ``until`` (the scalar unit keeps issuing)."""
        if until > self.pipe_free[pipe]:
            self.pipe_free[pipe] = until

    def barrier_all(self) -> None:
        """PipeBarrier<PIPE_ALL>: every pipe, and the scalar unit, waits until all have drained."""
        done = max(max(self.pipe_free.values()), self.s_time)
        for p in self.pipe_free:
            self.pipe_free[p] = done
        self.s_time = done

    # --- recording --------------------------------------------------------------------------------
    def event(self, pipe: str, instr: str, tile: int | None, start: float, end: float, nbytes: int = 0,
              count: int = 0, ub: tuple[int, int] | None = None, buffer: str = "", detail: str = "",
              values: object = None, bank_conflicts: int = 0) -> None:
        """Record one instruction. For a C++ kernel (``source_files`` set by the launcher when recording) the
        event names the C++ line that issued it: the innermost frame whose code came from the kernel's files
        (ascendc.cxx compiles each file with its own name and line numbers), 1-3 frames up. The walk is inlined
        here and the line passed to the constructor (it was a method call plus an attribute store per event):
        the trace's extra time on a traced 2**23-element HardsigmoidBackward fell from 710 to 573 ms (9 rounds
        interleaved in one process, load 9 on 2 cores)."""
        line = None
        files = self.source_files
        if files:
            f = _getframe(1)
            while f is not None:
                code = f.f_code
                if code.co_filename in files:
                    line = code.co_filename, f.f_lineno
                    break
                f = f.f_back
        self.trace.events.append(Event(self.core, pipe, instr, tile, start, end, nbytes, count, ub, buffer, detail,
                                       values, bank_conflicts, line))

    def finish(self) -> CoreSummary:
        self.summary.cycles = max(self.pipe_free.values())
        return self.summary


def GetBlockIdx() -> int:  # AscendC name
    """Index of the core running this kernel body, in [0, GetBlockNum())."""
    return current().core


def GetBlockNum() -> int:
    """Number of cores this launch runs on (blockDim)."""
    return current().block_dim

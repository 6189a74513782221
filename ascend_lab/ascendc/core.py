"""One simulated AI Core (vector side): its Unified Buffer and its pipes' clocks.

The launcher creates a :class:`CoreContext` per core and makes it current while the kernel body
runs, so that ``GetBlockIdx()`` and every instruction know which core they run on. Time is kept per
pipe (MTE2, V, MTE3 and the scalar issue clock S): an instruction starts when its pipe is free, when
the scalar unit has issued it, and after any flag it waits for (the queue operations set and wait
flags, see :mod:`.pipe`). Nothing here loops over elements: instructions are numpy operations on whole
tiles. The checks on what a kernel does with the core are in :mod:`.sanitizer`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..base.platform import NpuArch, SocInfo
from . import sanitizer
from .cost_model import ISSUE_CYCLES, CostModel
from .trace import CoreSummary, Event, Trace, UBBuffer, Warning_

#: Top of UB kept by the AscendC library on A2/A3/310P/910: 8 KB for Select modes 1/2 (TMP_UB_OFFSET)
#: and 256 B (ascendc_facts §1.8). The Ascend950 figure (248 KB) is already the usable size.
RESERVED_UB = 8 * 1024 + 256


def reserved_ub_bytes(soc: SocInfo) -> int:
    """Bytes at the top of UB the AscendC library keeps for itself on this SoC (0 on Ascend950)."""
    return 0 if soc.npu_arch == NpuArch.DAV_3510 else RESERVED_UB


@dataclass
class _Region:
    name: str
    kind: str
    start: int
    end: int


class PlanComplete(Exception):
    """Raised at the kernel's first queue allocation when only the UB plan (Init) is wanted."""


class CoreContext:
    """State of one core during a launch."""

    def __init__(self, core: int, block_dim: int, soc: SocInfo, cost: CostModel, trace: Trace,
                 record: bool, snapshot: bool = False, plan_only: bool = False,
                 strict: Callable[[Warning_], str | None] | None = None):
        self.core = core
        self.strict = strict
        self.snapshot = record and snapshot
        self.plan_only = plan_only
        self.block_dim = block_dim
        self.soc = soc
        self.cost = cost
        self.trace = trace
        self.record = record
        self.ub_capacity = soc.ub_size
        self.ub_limit = soc.ub_size - reserved_ub_bytes(soc)
        self.ub = np.zeros(self.ub_capacity, dtype=np.uint8)
        self.ub_top = 0                                  # TPipe bump pointer
        self.regions: list[_Region] = []
        if self.ub_limit < self.ub_capacity:    # the library's scratch at the top of UB (Select modes 1/2)
            self.regions.append(_Region("reserved UB (Select scratch)", "reserved", self.ub_limit, self.ub_capacity))
        self.pipe_free = {"MTE2": 0.0, "V": 0.0, "MTE3": 0.0, "S": 0.0}
        self.s_time = 0.0
        self.summary = CoreSummary(core)
        self.buffer_count = 0
        self.current_tile: int | None = None

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

    # --- recording --------------------------------------------------------------------------------
    def event(self, pipe: str, instr: str, tile: int | None, start: float, end: float, nbytes: int = 0,
              count: int = 0, ub: tuple[int, int] | None = None, buffer: str = "", detail: str = "",
              values: object = None) -> None:
        self.trace.events.append(Event(self.core, pipe, instr, tile, start, end, nbytes, count, ub, buffer,
                                       detail, values))

    def finish(self) -> CoreSummary:
        self.summary.cycles = max(self.pipe_free.values())
        return self.summary


_current: CoreContext | None = None


def set_current(ctx: CoreContext | None) -> None:
    global _current
    _current = ctx


def current() -> CoreContext:
    if _current is None:
        raise RuntimeError("no kernel is running: AscendC calls only work inside ascendc.launch(...)")
    return _current


def GetBlockIdx() -> int:  # AscendC name
    """Index of the core running this kernel body, in [0, GetBlockNum())."""
    return current().core


def GetBlockNum() -> int:
    """Number of cores this launch runs on (blockDim)."""
    return current().block_dim

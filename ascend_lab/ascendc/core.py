"""One simulated AI Core (vector side): its Unified Buffer, its pipes' clocks and its sanitizer.

The launcher creates a :class:`CoreContext` per core and makes it current while the kernel body
runs, so that ``GetBlockIdx()`` and every instruction know which core they run on. Time is kept per
pipe (MTE2, V, MTE3 and the scalar issue clock S): an instruction starts when its pipe is free, when
the scalar unit has issued it, and after any flag it waits for (the queue operations set and wait
flags, see :mod:`.pipe`). Nothing here loops over elements: instructions are numpy operations on whole
tiles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..base.platform import NpuArch, SocInfo
from .cost_model import ISSUE_CYCLES, CostModel
from .errors import KernelError
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
        end = start + nbytes
        if end > self.ub_limit and not self.plan_only:
            reserved = self.ub_capacity - self.ub_limit
            raise KernelError(
                f"UB over capacity: {name} needs {nbytes} B at offset {start}, ending at {end} B, but only "
                f"{self.ub_limit} B are usable ({self.ub_capacity} B UB"
                + (f" minus {reserved} B reserved" if reserved else "") + f"); overflow {end - self.ub_limit} B",
                instruction="TPipe::InitBuffer", core=self.core, kind="ub-overflow")
        self.ub_top = end
        self.buffer_count += 1
        if self.buffer_count > 64:
            raise KernelError("more than 64 buffers in one TPipe", instruction="TPipe::InitBuffer",
                              core=self.core, kind="too-many-buffers")
        self.regions.append(_Region(name, kind, start, end))
        self.trace.ub_layout.setdefault(self.core, []).append(UBBuffer(name, kind, start, nbytes))
        return start

    def region_at(self, start: int, end: int, exclude: int) -> _Region | None:
        for r in self.regions:
            if r.start < end and start < r.end and r.start != exclude:
                return r
        return None

    # --- time -------------------------------------------------------------------------------------
    def issue(self, pipe: str, cycles: float) -> tuple[float, float]:
        """Queue an instruction on ``pipe``: returns its (start, end) in cycles."""
        self.s_time += ISSUE_CYCLES
        start = max(self.pipe_free[pipe], self.s_time)
        end = start + cycles
        self.pipe_free[pipe] = end
        self.summary.instructions += 1
        self.summary.busy[pipe] += cycles
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

    def warn(self, instr: str, tile: int | None, kind: str, message: str) -> None:
        """Sanitizer findings that the hardware tolerates are kept as warnings (always, trace or not).
        Under a ``strict`` policy (see ``launch``) a finding the policy names stops the kernel right here."""
        w = Warning_(self.core, tile, instr, kind, message)
        self.trace.warnings.append(w)
        if self.strict is not None:
            why = self.strict(w)
            if why:
                raise KernelError(f"{message} -- {why}", instruction=instr, core=self.core, tile=tile, kind=kind)

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

"""What the simulated cores did: one :class:`Event` per instruction, plus warnings and UB layouts.

Like triton-viz's event records, a trace is plain data: the figures, the Chrome-trace export and the
tests all read the same list. Cycles come from :mod:`.cost_model`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PIPES = ("MTE2", "V", "MTE3", "S")


@dataclass(slots=True)
class Event:
    """One instruction on one pipe of one core, with its cycles, bytes, UB range and tile."""
    core: int
    pipe: str                 # "MTE2" copy-in, "V" vector, "MTE3" copy-out, "S" scalar / queue ops
    instr: str                # "DataCopyPad", "Muls", "AllocTensor", ...
    tile: int | None          # which tile of this core the data belongs to (from the queue buffers)
    start: float              # cycles since the core started
    end: float
    nbytes: int = 0           # bytes moved (copies) or touched (vector ops)
    count: int = 0            # elements
    ub: tuple[int, int] | None = None     # UB byte range written (or allocated/freed)
    buffer: str = ""          # the UB buffer of ``ub`` ("inQueueX[1]", "maskBuf", ...)
    detail: str = ""          # human-readable summary (operands, scalar, mode)
    values: Any = field(default=None, compare=False, repr=False)   # snapshot of the result (snapshot mode)


@dataclass(frozen=True)
class Warning_:
    """A sanitizer finding the hardware tolerates (GM padding, UB overrun into free space, partial repeat).
    ``ascendc.sanitizer.explain(w.kind)`` says what the kind means and what to do about it."""
    core: int
    tile: int | None
    instr: str
    kind: str                 # "gm-padding", "ub-overrun", "partial-repeat" (sanitizer.FINDINGS)
    message: str


@dataclass(frozen=True)
class UBBuffer:
    """One block laid out by TPipe::InitBuffer: name, kind, byte offset and size."""
    name: str                 # "inQueueGrad[0]", "tmpBuf"
    kind: str                 # "VECIN", "VECOUT", "VECCALC" (TBuf), "reserved"
    offset: int
    size: int


@dataclass
class CoreSummary:
    """Per-core totals: cycles, busy cycles per pipe, bytes in/out, tiles, instructions."""
    core: int
    cycles: float = 0.0
    busy: dict[str, float] = field(default_factory=lambda: {p: 0.0 for p in PIPES})
    bytes_in: int = 0
    bytes_out: int = 0
    tiles: int = 0
    instructions: int = 0


@dataclass
class Trace:
    """Everything recorded by one kernel launch."""
    kernel: str
    soc: str
    block_dim: int
    ub_capacity: int
    clock_mhz: int
    head_cycles: float = 0.0
    events: list[Event] = field(default_factory=list)
    warnings: list[Warning_] = field(default_factory=list)
    ub_layout: dict[int, list[UBBuffer]] = field(default_factory=dict)
    cores: list[CoreSummary] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    #: Bytes at the top of UB this launch had to leave free by the UB reserve model (``core.reserved_ub_bytes``):
    #: 8192 on A2/A3 and 310P once the kernel issued a Select in mode 1 or 2 (the library's scratch at
    #: TMP_UB_OFFSET), else 0. A plan-only launch stops before any instruction, so it records what a kernel that
    #: may issue such a Select must keep. The UB figures draw this as the reserved top.
    ub_reserved: int = 0
    #: What the kernel is written against: "ascendc" (API limits and the library's scratch apply) or "cce".
    kernel_api: str = "ascendc"

    def __repr__(self) -> str:
        return (f"Trace({self.kernel} on {self.soc}, blockDim={self.block_dim}, cycles={self.cycles:.0f}, "
                f"events={len(self.events)}, warnings={len(self.warnings)})")

    @property
    def cycles(self) -> float:
        """Estimated kernel duration: the slowest core, plus the launch head."""
        return max((c.cycles for c in self.cores), default=0.0) + self.head_cycles

    @property
    def microseconds(self) -> float:
        return self.cycles / self.clock_mhz

    def core_events(self, core: int, pipe: str | None = None) -> list[Event]:
        return [e for e in self.events if e.core == core and (pipe is None or e.pipe == pipe)]

    def to_chrome_trace(self) -> dict[str, Any]:
        """Chrome-trace JSON (chrome://tracing, Perfetto): one process per core, one thread per pipe.
        Timestamps are microseconds at the SoC clock."""
        tid = {p: i for i, p in enumerate(PIPES)}
        out: list[dict[str, Any]] = []
        for c in range(self.block_dim):
            out.append({"ph": "M", "name": "process_name", "pid": c, "tid": 0, "args": {"name": f"core {c}"}})
            for p, t in tid.items():
                out.append({"ph": "M", "name": "thread_name", "pid": c, "tid": t, "args": {"name": p}})
        mhz = self.clock_mhz
        for e in self.events:
            args = {"tile": e.tile, "bytes": e.nbytes, "count": e.count, "detail": e.detail}
            if e.ub is not None:
                args["ub"] = list(e.ub)
                args["buffer"] = e.buffer
            out.append({"ph": "X", "name": e.instr, "cat": e.pipe, "pid": e.core, "tid": tid[e.pipe],
                        "ts": e.start / mhz, "dur": max(e.end - e.start, 0.0) / mhz, "args": args})
        return {"traceEvents": out, "displayTimeUnit": "ns",
                "otherData": {"kernel": self.kernel, "soc": self.soc, "blockDim": self.block_dim,
                              "cycles": self.cycles}}

    def save_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_chrome_trace(), fh)

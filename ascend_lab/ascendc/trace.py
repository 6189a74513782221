"""What the simulated cores did: one :class:`Event` per instruction, plus warnings and UB layouts.

Like triton-viz's event records, a trace is plain data: the figures, the Chrome-trace export and the
tests all read the same list. Cycles come from :mod:`.cost_model`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .timeline import TimelineView

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
    #: Beats UB bank conflicts added to this vector instruction (ub_banks: the repeats' beats minus one per
    #: repeat; 0 = conflict-free, and always 0 off the V pipe or on a SoC without a bank model).
    bank_conflicts: int = 0
    #: The kernel source line that issued it, ``(file, line)``, for a kernel written in C++ (``ascendc.cxx``):
    #: the trace and the stepper name the C++, not the Python it was translated to. None for a Python kernel.
    line: Any = field(default=None, compare=False, repr=False)


def _call_names(calls: list[Event]) -> str:
    """The name of one queue-call marker: its calls in issue order, a run of one instruction counted
    ("EnQue ×2 + DeQue ×2 + AllocTensor")."""
    runs: list[list[Any]] = []
    for e in calls:
        if runs and runs[-1][0] == e.instr:
            runs[-1][1] += 1
        else:
            runs.append([e.instr, 1])
    return " + ".join(name if n == 1 else f"{name} ×{n}" for name, n in runs)


def _call_args(e: Event) -> dict[str, Any]:
    """One queue call inside a marker's ``args``: what it did, on which tile and buffer, where in UB."""
    a: dict[str, Any] = {"instruction": e.instr, "tile": e.tile}
    if e.buffer:
        a["buffer"] = e.buffer
    if e.ub is not None:
        a["ub"] = list(e.ub)
    if e.nbytes:
        a["bytes"] = e.nbytes
    a["detail"] = e.detail
    return a


@dataclass(frozen=True)
class Warning_:
    """A sanitizer finding the hardware tolerates (GM padding, UB overrun into free space, partial repeat).
    ``ascendc.sanitizer.explain(w.kind)`` says what the kind means and what to do about it; ``line`` is the
    learner's line that made it (an ``errors.SourceLine``; None in a library kernel)."""
    core: int
    tile: int | None
    instr: str
    kind: str                 # "gm-padding", "ub-overrun", "partial-repeat" (sanitizer.FINDINGS)
    message: str
    line: Any = field(default=None, compare=False)


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

    def core_cycles(self, core: int) -> float:
        """Estimated cycles of one core (its own end, not the launch's): its summary, else its last event."""
        for c in self.cores:
            if c.core == core:
                return float(c.cycles)
        return max((e.end for e in self.events if e.core == core), default=0.0)

    def to_chrome_trace(self, *, cores: list[int] | None = None, max_events: int | None = None,
                        ub_counter: bool = True) -> dict[str, Any]:
        """Chrome-trace JSON (chrome://tracing, Perfetto, the book's timeline viewer): one process per core,
        one thread per pipe, and per core a counter track "UB in use" (bytes held by queue blocks between
        AllocTensor and FreeTensor, plus the TBufs, which InitBuffer holds for the whole kernel). Timestamps are
        microseconds at the SoC clock; each slice's ``args`` carry its tile, bytes, element count, UB range and
        buffer, so a click in a viewer answers "which instruction, on which data, where in UB".

        The MTE2, V and MTE3 instructions are complete events ("ph": "X"), one per instruction. The queue calls
        on S (AllocTensor, EnQue, DeQue, FreeTensor) take no time in the model, and several happen at one cycle
        (a tile's EnQue and DeQue, the next tile's AllocTensor...). catapult's viewer nests zero-length events of
        one thread at one timestamp inside each other, whether they are "X" with ``dur`` 0 or thread-scoped
        instants ("i", "s": "t" -- its importer makes both the same zero-length slice), so one event per call
        made the S track as many rows tall as the most calls at one cycle (7 for a double-buffered kernel).
        They are exported as one thread-scoped instant event per core and cycle: its name lists the calls in
        issue order ("EnQue ×2 + DeQue ×2 + AllocTensor"), its ``args["queue calls"]`` holds each call's
        instruction, tile, buffer, UB range, bytes and detail. No duration is invented, S stays one row, and a
        click on a marker shows every call made at that cycle.

        ``cores`` picks the processes (default: every core of the launch, with or without events; the viewer
        passes the cores that have events). ``max_events`` keeps a page small: only the trace events (an
        instruction or a queue call) that start before a time cut are kept, the earliest ``max_events`` of them,
        so every kept core shows the same window; ``otherData["truncated"]`` then says how many were dropped.
        The export lives here, in the ascendc layer, because it reads nothing but the trace; :mod:`.timeline`
        turns it into a page.
        """
        keep = list(range(self.block_dim)) if cores is None else sorted(set(cores))
        wanted = set(keep)
        events, cut, dropped = _window([e for e in self.events if e.core in wanted], max_events)
        out = _track_names(keep) + _slices(events, self.clock_mhz)
        if ub_counter:
            out.extend(self._ub_counter(keep, cut))
        other: dict[str, Any] = {"kernel": self.kernel, "soc": self.soc, "blockDim": self.block_dim,
                                 "cycles": self.cycles}
        if dropped:
            other["truncated"] = dropped
        return {"traceEvents": out, "displayTimeUnit": "ns", "otherData": other}

    def _ub_counter(self, cores: list[int], cut: float = float("inf")) -> list[dict[str, Any]]:
        """Counter events ("ph": "C") of the UB bytes in use on each core, one point per time it changes.

        Queue blocks count from their AllocTensor to their FreeTensor (the events' ``ub`` ranges; the list is
        in issue order, not time order, so the changes are sorted by time); TBufs (VECCALC blocks of the
        layout) count throughout. Points after ``cut`` (cycles) are dropped with the slices they belong to."""
        mhz = self.clock_mhz
        wanted = set(cores)
        changes: dict[int, list[tuple[float, int]]] = {c: [] for c in cores}
        for e in self.events:
            if e.core in wanted and e.pipe == "S" and e.ub is not None and e.start <= cut:
                if e.instr == "AllocTensor":
                    changes[e.core].append((e.start, e.ub[1] - e.ub[0]))
                elif e.instr == "FreeTensor":
                    changes[e.core].append((e.start, -(e.ub[1] - e.ub[0])))
        out: list[dict[str, Any]] = []
        for c in cores:
            tbuf = sum(b.size for b in self.ub_layout.get(c, []) if b.kind == "VECCALC")
            points: dict[float, int] = {0.0: 0}
            held = 0
            for t, delta in sorted(changes[c], key=lambda x: x[0]):
                held += delta
                points[t] = held          # several changes at one cycle: the last total stands
            for t, q in points.items():
                out.append({"ph": "C", "name": "UB in use (bytes)", "cat": "UB", "pid": c, "tid": 0, "ts": t / mhz,
                            "args": {"queue blocks": q, "TBuf": tbuf}})
        return out

    def show_timeline(self, *, cores: list[int] | None = None, max_events: int | None = 20_000,
                      height: int = 640, static: str | None = None, page: str | None = None) -> TimelineView:
        """The interactive timeline viewer (catapult's, vendored by ``scripts/vendor.sh``) of this trace.

        In Jupyter (``static=None``) the returned object's ``_repr_html_`` is an iframe holding the viewer and
        the data in its ``srcdoc``, so it needs no server and no network; FileNotFoundError, saying how to fetch
        them, when the viewer files are missing. On a book page, ``static`` is the path from the page to the
        site's ``_static`` (``"../_static"`` for a chapter): the iframe then loads the site's one copy of the
        viewer and only the JSON goes into the page. Default cores: those with events. ``page``: another
        viewer page (or the ``_vendor`` folder holding it) than the one :func:`.timeline.find_page` finds."""
        if cores is None:
            cores = sorted({e.core for e in self.events}) or list(range(self.block_dim))
        data = self.to_chrome_trace(cores=cores, max_events=max_events)
        return TimelineView(data, title=f"{self.kernel} on {self.soc}", height=height, inline=static is None,
                            static=static or "../_static", page=page)

    def save_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_chrome_trace(), fh)


#: Chrome-trace thread id of each pipe (one thread per pipe, in this order).
_TID = {p: i for i, p in enumerate(PIPES)}


def _window(events: list[Event], max_events: int | None) -> tuple[list[Event], float, int]:
    """(the events kept, the time cut, how many dropped): with ``max_events``, the earliest ``max_events`` events
    that start before one time cut, so every kept core shows the same window."""
    if max_events is None:
        return events, float("inf"), 0
    if max_events < 1:
        raise ValueError(f"max_events must be at least 1, got {max_events}")
    if len(events) <= max_events:
        return events, float("inf"), 0
    cut = sorted(e.start for e in events)[max_events - 1]
    kept = [e for e in events if e.start <= cut][:max_events]
    return kept, cut, len(events) - len(kept)


def _track_names(cores: list[int]) -> list[dict[str, Any]]:
    """Metadata events: one process per core, one thread per pipe, named and sorted."""
    out: list[dict[str, Any]] = []
    for c in cores:
        out.append({"ph": "M", "name": "process_name", "pid": c, "tid": 0, "args": {"name": f"core {c}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": c, "tid": 0, "args": {"sort_index": c}})
        for p, t in _TID.items():
            out.append({"ph": "M", "name": "thread_name", "pid": c, "tid": t, "args": {"name": p}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": c, "tid": t, "args": {"sort_index": t}})
    return out


def _slices(events: list[Event], mhz: float) -> list[dict[str, Any]]:
    """One complete event ("X") per instruction, then one instant event per core and cycle holding that cycle's
    zero-time queue calls (see :meth:`Trace.to_chrome_trace`)."""
    out: list[dict[str, Any]] = []
    calls: dict[tuple[int, float], list[Event]] = {}     # (core, cycle) -> its queue calls, in issue order
    for e in events:
        if e.pipe == "S" and e.end <= e.start:
            calls.setdefault((e.core, e.start), []).append(e)
            continue
        args: dict[str, Any] = {"instruction": e.instr, "tile": e.tile, "bytes": e.nbytes, "count": e.count,
                                "detail": e.detail}
        if e.bank_conflicts:
            args["bank conflicts (beats)"] = e.bank_conflicts
        if e.ub is not None:
            args["ub"] = list(e.ub)
            args["buffer"] = e.buffer
        out.append({"ph": "X", "name": e.instr, "cat": e.pipe, "pid": e.core, "tid": _TID[e.pipe],
                    "ts": e.start / mhz, "dur": max(e.end - e.start, 0.0) / mhz, "args": args})
    for (core, start), group in calls.items():
        out.append({"ph": "i", "s": "t", "name": _call_names(group), "cat": "S", "pid": core, "tid": _TID["S"],
                    "ts": start / mhz, "args": {"queue calls": [_call_args(e) for e in group]}})
    return out

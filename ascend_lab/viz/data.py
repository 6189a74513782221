"""The numbers behind every figure, as plain functions of a UB plan, a trace or a run handed to them.

Figures only draw what these functions return, so the tests (and the book's hidden assert cells) can
check a figure by checking its data against the simulator: a pipeline lane has one bar per MTE2/V/MTE3
event, the occupancy curve is the sum of the blocks between AllocTensor and FreeTensor plus the TBufs.
A :class:`TileMap` is a plain record too; :mod:`ascend_lab.explore` fills it from the registered op's
``core_ranges`` (viz asks no registry). Nothing here imports matplotlib.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..acl.types import aclDataType
from ..ascendc.instructions import REPEAT_BYTES
from ..ascendc.launcher import KernelRun
from ..ascendc.trace import Event, Trace, UBBuffer
from ..dtypes import as_acl_dtype
from ..opdev.data_type_utils import PROMOTE_DTYPES, CanCast, PromoteType
from ..opdev.errno import describe

LANE_PIPES = ("MTE2", "V", "MTE3")

__all__ = [
    "LaneBar", "Lanes", "MaskRow", "Occupancy", "TileMap", "UBBar", "UBInterval", "UBSegment",
    "cancast_matrix", "clean_detail", "core_span", "l0_graph", "lanes", "mask_steps", "occupancy", "promote_matrix",
    "ub_bar",
]


# --- tile map --------------------------------------------------------------------------------------------
@dataclass
class TileMap:
    op: str
    dtype: str
    itemsize: int
    n: int | None                       # logical element count (None: unknown)
    padded_end: int                     # one past the last element any core touches
    tile_field: str                     # "ubFactor" / "tileDataNum"
    tile_elems: int
    cores: list[dict[str, Any]]         # op_host.core_ranges(...)
    segments: list[Any]                 # live.tile_map.TileSegment rows: core, kind, tile, start, end, tail
    padding: tuple[int, int] | None     # [n, padded_end) read and written past the logical end
    fields: dict[str, Any]              # the TilingData fields, blockDim and tilingKey
    title: str
    labels: dict[str, str]              # legend text: "big", "small", "tail", "padding"


def core_span(ids: list[int]) -> str:
    """``0-3`` for cores 0 to 3 (a title's core range), ``5`` for one core, ``none`` for none."""
    if not ids:
        return "none"
    return str(ids[0]) if len(ids) == 1 else f"{ids[0]}-{ids[-1]}"


# --- UB address bar ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UBSegment:
    name: str          # buffer name ("inQueueGrad[0]"), or "free" / "reserved"
    kind: str          # VECIN / VECOUT / VECCALC / free / reserved / overflow
    start: int         # byte offset in UB
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class UBBar:
    segments: list[UBSegment]
    buffers: list[UBBuffer]
    capacity: int
    reserved: int
    usable: int
    used: int
    free: int
    overflow: int
    buffer_num: int | None
    title: str


def _layout_source(source: Any, core: int) -> dict[str, Any]:
    """Normalise a ``ub_plan`` dict, a Trace or a KernelRun into one dict. The reserved top is what the trace
    says the launch had to leave free (``Trace.ub_reserved``: the Select scratch, only when the kernel used it)."""
    if isinstance(source, KernelRun):
        source = source.trace
    if isinstance(source, Trace):
        buffers = source.ub_layout.get(core) or next(iter(source.ub_layout.values()), [])
        reserved = source.ub_reserved
        used = max((b.offset + b.size for b in buffers), default=0)
        usable = source.ub_capacity - reserved
        return {"op": source.kernel, "dtype": str(source.meta.get("dtype", "")), "soc": source.soc,
                "buffers": buffers, "capacity": source.ub_capacity, "reserved": reserved, "usable": usable,
                "used": used, "free": max(usable - used, 0), "overflow": max(used - usable, 0),
                "buffer_num": source.meta.get("bufferNum")}
    if isinstance(source, dict) and "buffers" in source:
        return source
    raise TypeError(f"need a ub_plan dict, a Trace or a KernelRun, got {type(source).__name__}")


def ub_bar(source: Any, core: int = 0) -> UBBar:
    """The UB as an address bar: buffers in address order, the free gap, the reserved top; the part of
    any buffer past the usable limit becomes an ``overflow`` segment (drawn red)."""
    p = _layout_source(source, core)
    capacity = p["capacity"]
    usable = min(max(p["usable"], 0), capacity)
    segs: list[UBSegment] = []
    for b in sorted(p["buffers"], key=lambda b: b.offset):
        end = b.offset + b.size
        if end <= usable:
            segs.append(UBSegment(b.name, b.kind, b.offset, end))
        else:
            if b.offset < usable:
                segs.append(UBSegment(b.name, b.kind, b.offset, usable))
            segs.append(UBSegment(b.name, "overflow", max(b.offset, usable), end))
    used = p["used"]
    overflow, free = max(used - usable, 0), max(usable - used, 0)
    if used < usable:
        segs.append(UBSegment("free", "free", used, usable))
    if capacity > usable:
        segs.append(UBSegment("reserved", "reserved", usable, capacity))
    dtype = p.get("dtype") or ""
    head = f"{p.get('op', '')} {dtype} UB of core {core} on {p.get('soc', '')}".replace("  ", " ").strip()
    bn = p.get("buffer_num")
    bn_text = f", BUFFER_NUM = {bn}" if bn is not None else ""
    if overflow:
        title = f"{head}: OVER CAPACITY by {overflow:,} B ({used:,} B planned, {usable:,} B usable{bn_text})"
    else:
        title = f"{head}: {used:,} B of {usable:,} B usable in use, {free:,} B free{bn_text}"
    return UBBar(segs, list(p["buffers"]), capacity, capacity - usable, usable, used, free, overflow, bn, title)


# --- UB occupancy over time ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class UBInterval:
    name: str
    kind: str
    start: int          # bytes
    end: int
    t0: float           # cycle of AllocTensor
    t1: float           # cycle of FreeTensor
    tile: int | None


@dataclass
class Occupancy:
    times: np.ndarray           # change points (cycles), starting at 0
    used: np.ndarray            # bytes held from times[i] until times[i+1] (a step curve, "post")
    intervals: list[UBInterval]
    static: list[UBBuffer]      # TBufs: allocated for the whole kernel
    static_bytes: int
    capacity: int
    usable: int
    peak: int
    makespan: float
    title: str
    by_kind: dict[str, np.ndarray]   # the same step curve split by buffer kind (VECCALC, VECIN, VECOUT)


def occupancy(source: Any, core: int = 0) -> Occupancy:
    """UB bytes holding live data over time: TBufs always, each queue block from its AllocTensor to its
    FreeTensor (the S events carry the block's byte range)."""
    trace = source.trace if isinstance(source, KernelRun) else source
    bar = ub_bar(trace, core)
    static = [b for b in bar.buffers if b.kind == "VECCALC"]
    static_bytes = sum(b.size for b in static)
    open_: dict[str, tuple[Event, int | None]] = {}
    intervals: list[UBInterval] = []
    kinds = {b.name: b.kind for b in bar.buffers}
    end_time = trace.core_cycles(core)
    for e in trace.events:
        if e.core != core or e.pipe != "S" or e.ub is None:
            continue
        if e.instr == "AllocTensor":
            open_[e.buffer] = (e, e.tile)
        elif e.instr == "FreeTensor" and e.buffer in open_:
            a, tile = open_.pop(e.buffer)
            intervals.append(UBInterval(e.buffer, kinds.get(e.buffer, ""), a.ub[0], a.ub[1], a.start, e.start, tile))
    for name, (a, tile) in open_.items():           # never freed: held until the core ends
        intervals.append(UBInterval(name, kinds.get(name, ""), a.ub[0], a.ub[1], a.start, end_time, tile))
    intervals.sort(key=lambda iv: (iv.t0, iv.start))
    times = np.unique(np.array([0.0, end_time] + [iv.t0 for iv in intervals] + [iv.t1 for iv in intervals]))
    by_kind = {"VECCALC": np.full(times.shape, float(static_bytes)), "VECIN": np.zeros(times.shape),
               "VECOUT": np.zeros(times.shape)}
    for iv in intervals:
        curve = by_kind.setdefault(iv.kind or "VECIN", np.zeros(times.shape))
        curve[(times >= iv.t0) & (times < iv.t1)] += iv.end - iv.start
    used = sum(by_kind.values())
    peak = int(used.max()) if used.size else static_bytes
    title = (f"{trace.kernel} UB occupancy of core {core}: TBufs {static_bytes:,} B always, queue blocks between "
             f"AllocTensor and FreeTensor; peak {peak:,} B of {bar.usable:,} B usable")
    return Occupancy(times, used, intervals, static, static_bytes, bar.capacity, bar.usable, peak, end_time, title,
                     by_kind)


# --- pipeline lanes --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LaneBar:
    core: int
    pipe: str
    start: float
    end: float
    tile: int | None
    instr: str
    buffer: str
    ub: tuple[int, int] | None = None      # UB bytes the instruction wrote (copy-in, vector) or read (copy-out)


@dataclass
class Lanes:
    bars: list[LaneBar]
    cores: list[int]
    makespan: dict[int, float]                      # per core, cycles
    busy: dict[tuple[int, str], float]              # (core, pipe) -> busy cycles
    tiles: int                                      # tiles seen (max tile index + 1)
    buffer_num: int | None
    title: str


def _tiled_events(trace: Trace, core: int) -> Iterator[tuple[Event, int | None]]:
    """Events of one core in program order, with the tile of vector instructions that only touch TBufs
    (``Adds(tmp, tmp, ...)``, ``CompareScalar(mask, tmp, ...)``: the trace has ``tile=None``) taken from
    the vector instruction before them -- the kernel computes one tile at a time."""
    last: int | None = None
    for e in trace.events:
        if e.core != core:
            continue
        tile = e.tile
        if e.pipe == "V":
            if tile is None:
                tile = last
            else:
                last = tile
        yield e, tile


def lanes(source: Any, cores: Sequence[int] | None = None) -> Lanes:
    """Per core, one bar per MTE2 / V / MTE3 instruction (start and end cycle, tile, instruction)."""
    trace = source.trace if isinstance(source, KernelRun) else source
    present = sorted({e.core for e in trace.events})
    cores = present if cores is None else [c for c in cores if c in present]
    bars: list[LaneBar] = []
    busy: dict[tuple[int, str], float] = {}
    for c in cores:
        for e, tile in _tiled_events(trace, c):
            if e.pipe in LANE_PIPES:
                bars.append(LaneBar(c, e.pipe, e.start, e.end, tile, e.instr, e.buffer, e.ub))
                busy[(c, e.pipe)] = busy.get((c, e.pipe), 0.0) + (e.end - e.start)
    makespan = {c: trace.core_cycles(c) for c in cores}
    tiles = 1 + max((b.tile for b in bars if b.tile is not None), default=-1)
    bn = trace.meta.get("bufferNum")
    span = max(makespan.values(), default=0.0)
    title = (f"{trace.kernel} on {trace.soc}: pipes of core{'s' if len(cores) > 1 else ''} "
             f"{core_span(list(cores))}, {tiles} tile{'s' if tiles != 1 else ''}{' per core' if len(cores) > 1 else ''}"
             + (f", BUFFER_NUM = {bn}" if bn is not None else "") + f": {span:,.0f} cycles")
    return Lanes(bars, list(cores), makespan, busy, tiles, bn, title)


# --- mask / select steps -----------------------------------------------------------------------------------------
@dataclass
class MaskRow:
    index: int               # position in the tile's instruction sequence
    pipe: str
    instr: str
    buffer: str
    label: str               # "CompareScalar -> maskBuf"
    detail: str              # the trace's own summary, numpy scalar reprs removed
    kind: str                # "input" (copied in), "value", "mask" (bits), "output" (copied out)
    values: np.ndarray
    repeat: int              # elements per 256-byte repeat for this row
    start: float
    end: float


_NP_SCALAR = re.compile(r"np\.\w+\(([^()]*)\)")


def clean_detail(detail: str) -> str:
    """Strip numpy scalar reprs (``np.float32(0.5)`` -> ``0.5``) from older or hand-written details; the
    simulator's own details already print scalars exactly (``float 0.5``)."""
    return _NP_SCALAR.sub(r"\1", detail)


def mask_steps(source: Any, core: int = 0, tile: int = 0) -> list[MaskRow]:
    """The values after each instruction of one tile (needs a ``snapshot=True`` run): the inputs copied in,
    every vector result, each CompareScalar's bit-mask, the output copied out. ``repeat`` is
    256 B / sizeof(element) of the row; a mask row takes the repeat of the value row before it (the
    CompareScalar event records the mask's bytes, not its source dtype)."""
    trace = source.trace if isinstance(source, KernelRun) else source
    rows: list[MaskRow] = []
    repeat = REPEAT_BYTES // 4
    for e, t in _tiled_events(trace, core):
        if t != tile or e.pipe not in LANE_PIPES:
            continue
        if e.values is None:
            raise ValueError("this trace has no values: run the kernel with snapshot=True (and record=True)")
        vals = np.asarray(e.values)
        if vals.dtype == bool:
            kind = "mask"
        else:
            repeat = max(REPEAT_BYTES // vals.dtype.itemsize, 1)
            kind = {"MTE2": "input", "MTE3": "output"}.get(e.pipe, "value")
        if e.pipe == "MTE2":
            label = f"{e.instr}: GM -> {e.buffer}"
        elif e.pipe == "MTE3":
            label = f"{e.instr}: {e.buffer} -> GM"
        else:
            label = f"{e.instr} -> {e.buffer}"
        rows.append(MaskRow(len(rows), e.pipe, e.instr, e.buffer, label, clean_detail(e.detail), kind, vals, repeat,
                            e.start, e.end))
    if not rows:
        raise ValueError(f"core {core} has no instructions for tile {tile}")
    return rows


# --- dtype tables -------------------------------------------------------------------------------------------------
def promote_matrix(dtypes: Sequence[Any] | None = None) -> tuple[list[str], list[list[str]]]:
    """Row/column dtype names and ``PromoteType(row, col)`` names ("" where there is none)."""
    dts = [as_acl_dtype(d) for d in (dtypes or PROMOTE_DTYPES)]
    names = [d.short for d in dts]
    cells = [[("" if (r := PromoteType(a, b)) == aclDataType.ACL_DT_UNDEFINED else r.short) for b in dts]
             for a in dts]
    return names, cells


def cancast_matrix(dtypes: Sequence[Any] | None = None) -> tuple[list[str], np.ndarray]:
    """Row (from) / column (to) dtype names and the ``CanCast(row, col)`` booleans."""
    dts = [as_acl_dtype(d) for d in (dtypes or PROMOTE_DTYPES)]
    return [d.short for d in dts], np.array([[CanCast(a, b) for b in dts] for a in dts], dtype=bool)


# --- L0 graph ------------------------------------------------------------------------------------------------------
def _tensor_text(t: Any) -> str:
    return f"{t.dtype.short}{list(t.view_dims)}"


def l0_graph(run: Any) -> dict[str, Any]:
    """The nodes of ``run.nodes`` as text -- op, inputs -> outputs, attributes, why the node is there, whether
    it does work (a Contiguous of a contiguous tensor does not) -- plus the edges (node i's output tensor is
    node j's input), each node's layer (longest path from the inputs) and the user tensors it reads."""
    raw = list(getattr(run, "nodes", []))
    nodes: list[dict[str, Any]] = []
    edges: list[tuple[int, int]] = []
    for j, node in enumerate(raw):
        attrs = {k: v for k, v in node.attrs.items() if k not in ("tiling", "soc")}
        td = node.attrs.get("tiling")
        sources, layer = [], 0
        for t in node.inputs:
            producer = next((i for i in range(j - 1, -1, -1) if any(o is t for o in raw[i].outputs)), None)
            if producer is None:
                sources.append(getattr(t, "name", "") or "input")
            else:
                edges.append((producer, j))
                layer = max(layer, nodes[producer]["layer"] + 1)
        nodes.append({
            "op": node.op, "inputs": [_tensor_text(t) for t in node.inputs],
            "outputs": [_tensor_text(t) for t in node.outputs], "attrs": attrs, "why": node.why,
            "launches_kernel": bool(node.launches_kernel), "is_cast": node.op == "Cast", "layer": layer,
            "sources": sources,
            "tiling": None if td is None else f"blockDim = {td.blockDim}, tilingKey = {td.tilingKey}",
        })
    casts = sum(n["is_cast"] for n in nodes)
    status = getattr(run, "status", 0)
    title = f"{getattr(run, 'op', '')} on {getattr(run, 'soc', '')}: " + (
        f"L0 graph of {len(nodes)} nodes, {casts} Cast{'s' if casts != 1 else ''}" if status == 0
        else describe(status))
    return {"title": title, "status": status, "nodes": nodes, "edges": sorted(set(edges)),
            "messages": list(getattr(run, "messages", []))}

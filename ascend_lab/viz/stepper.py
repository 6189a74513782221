"""The kernel stepper's data and picture: one core of a run, tile by tile and instruction by instruction.

Everything here reads a ``snapshot=True`` run handed to it (its trace's events, their values and UB bytes);
nothing launches a kernel. :func:`ascend_lab.explore.step_kernel` runs your kernel and
:func:`ascend_lab.explore.kernel_stepper` a registered op's, then both hand the run to :class:`KernelSteps`.

Live (``static=False``): ipywidgets sliders whose ``observe`` callbacks redraw one kept figure
(:class:`StepperView`); static (``static=True``): the same pictures precomputed for at most
:data:`MAX_STATES` states behind a slider linked in the browser (:func:`.html.static_slider`).
"""

from __future__ import annotations

import html as _html
import linecache
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import data as D
from . import figures as F
from . import style as S
from .html import static_slider

__all__ = ["MAX_STATES", "KernelSteps", "StepRecord", "StepperView", "axes_at", "message", "stepper_widget"]


def axes_at(fig: Any, left: float, bottom: float, height: float, right: float = 0.25) -> Any:
    """Axes placed in inches from the bottom-left corner (fixed layout: fast and stable between updates)."""
    w, h = fig.get_figwidth(), fig.get_figheight()
    return fig.add_axes((left / w, bottom / h, 1 - (left + right) / w, height / h))


def message(ax: Any, text: str, color: str = S.OVERFLOW) -> None:
    """Replace an axes' picture by a centred message (a refused tiling, a run without snapshots)."""
    ax.set_axis_off()
    ax.text(0.5, 0.5, F.wrap(text, 6.0), ha="center", va="center", transform=ax.transAxes, fontsize=S.FONT,
            color=color)


# --- kernel stepper -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepRecord:
    """One instruction of one tile on the stepped core, as :meth:`KernelSteps.table` lists it.

    ``step`` counts the tile's data instructions (copies and vector ops) from 0; ``ub`` is the byte range
    ``[start, end)`` of UB the instruction wrote (a copy-in, a vector op) or read (a copy-out), inside
    ``buffer``; ``values`` what it produced there (what a copy-out sent to GM), a bool array for a compare's
    mask bits. Queue calls (AllocTensor, EnQue, DeQue, FreeTensor: scalar unit, pipe ``S``) appear only in
    ``KernelSteps.records(queue_ops=True)``, with ``step`` None and no values."""
    tile: int
    step: int | None
    pipe: str
    instr: str
    buffer: str
    ub: tuple[int, int] | None
    nbytes: int
    count: int
    detail: str
    start: float
    end: float
    values: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: the kernel's C++ line that issued it, ``(file, line)`` (a C++ kernel's trace carries it; None otherwise)
    line: Any = field(default=None, compare=False, repr=False)

    @property
    def where(self) -> str:
        """``hard_sigmoid_grad.h:143`` -- the C++ file and line of the instruction ("" for a Python kernel)."""
        return f"{Path(self.line[0]).name}:{self.line[1]}" if self.line else ""

    @property
    def code(self) -> str:
        """The C++ line's text (``Muls(tmpLocal, selfLocal, static_cast<T>(alpha_), currentNum);``)."""
        return linecache.getline(self.line[0], self.line[1]).strip() if self.line else ""

    @property
    def ub_text(self) -> str:
        return f"[{self.ub[0]}, {self.ub[1]})" if self.ub is not None else ""

    def values_head(self, k: int = 4) -> str:
        """The first ``k`` values (numpy's shortest text), a mask as bits: ``[0.5, -0.01, 0, 1.25, ...]``."""
        if self.values is None:
            return ""
        flat = np.asarray(self.values).reshape(-1)
        if flat.dtype == bool:
            return "bits " + "".join("1" if b else "0" for b in flat[: 4 * k]) + ("..." if flat.size > 4 * k else "")
        head = ", ".join(str(v) for v in flat[:k])
        return f"[{head}{', ...' if flat.size > k else ''}]"


_TABLE_COLUMNS = ("tile", "step", "instr", "pipe", "buffer", "UB bytes", "bytes", "values")


class KernelSteps:
    """The instructions one core of a run executed, tile by tile -- the records behind the kernel stepper.

    Build it with :func:`ascend_lab.explore.step_kernel` (launches your kernel) or from any ``snapshot=True`` run:
    ``KernelSteps(run, core)``. ``records()`` are :class:`StepRecord` in program order, ``table()`` the same as
    text (no widgets needed), ``widget()`` the two-slider stepper, ``figure(tile, step)`` one picture of it, and
    ``plot_ub_layout()`` / ``plot_ub_occupancy()`` / ``plot_pipeline()`` the core's UB plan, its occupancy over
    time and its pipes. In a notebook the object shows its table."""

    def __init__(self, run: Any, core: int = 0, output: np.ndarray | None = None):
        self.run = run
        self.core = core
        self.output = output
        self._all: list[StepRecord] = []
        last_v: int | None = None
        counters: dict[int, int] = {}
        for e in run.trace.events:
            if e.core != core:
                continue
            tile = e.tile
            if e.pipe == "V":               # a vector op on TBufs only has no tile: it belongs to the one V is on
                if tile is None:
                    tile = last_v
                else:
                    last_v = tile
            tile = 0 if tile is None else tile     # a kernel without queues is one tile
            step = None
            if e.pipe in D.LANE_PIPES:
                step = counters.get(tile, 0)
                counters[tile] = step + 1
            self._all.append(StepRecord(tile, step, e.pipe, e.instr, e.buffer, e.ub, e.nbytes, e.count,
                                        D.clean_detail(e.detail), e.start, e.end, e.values, e.line))
        if not counters:
            raise ValueError(f"core {core} ran no copy or vector instruction in this run (was it launched with "
                             "record=True, and does the core have work?)")
        self.tile_ids = sorted(counters)

    # --- plain data ------------------------------------------------------------------------------------------
    @property
    def tiles(self) -> int:
        """How many tiles the core ran (tiles are numbered by the queues' AllocTensor calls)."""
        return len(self.tile_ids)

    def records(self, tile: int | None = None, queue_ops: bool = False) -> list[StepRecord]:
        """The core's instructions in program order (one tile's with ``tile``); ``queue_ops`` adds the queue
        calls (pipe ``S``) between them."""
        return [r for r in self._all if (queue_ops or r.step is not None) and (tile is None or r.tile == tile)]

    def steps(self, tile: int) -> int:
        """Data instructions of ``tile``."""
        return len(self.records(tile))

    def at(self, tile: int, step: int) -> StepRecord:
        """Instruction ``step`` of ``tile``."""
        rows = self.records(tile)
        if not rows:
            raise ValueError(f"core {self.core} has no tile {tile}; its tiles are {self.tile_ids}")
        if not 0 <= step < len(rows):
            raise ValueError(f"tile {tile} has {len(rows)} instructions (steps 0..{len(rows) - 1}), not step {step}")
        return rows[step]

    def rows(self, tile: int | None = None, queue_ops: bool = False, head: int = 4) -> list[dict[str, Any]]:
        """``records`` as dicts with the table's columns (for a DataFrame: ``pd.DataFrame(steps.rows())``)."""
        return [{"tile": r.tile, "step": "" if r.step is None else r.step, "instr": r.instr, "pipe": r.pipe,
                 "buffer": r.buffer, "UB bytes": r.ub_text, "bytes": r.nbytes, "values": r.values_head(head),
                 "detail": r.detail, "C++": r.where} for r in self.records(tile, queue_ops)]

    def table(self, tile: int | None = None, queue_ops: bool = False, head: int = 4) -> str:
        """The records as a text table: tile, step, instruction, pipe, buffer, the UB bytes it wrote (read, for a
        copy-out), how many bytes, and the first ``head`` values it produced."""
        dicts = self.rows(tile, queue_ops, head)
        columns = _TABLE_COLUMNS + (("C++",) if any(d["C++"] for d in dicts) else ())   # a C++ kernel: its lines
        rows = [[str(row[c]) for c in columns] for row in dicts]
        widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
        fmt = "  ".join(f"{{:{'>' if c in ('tile', 'step', 'bytes') else '<'}{w}}}" for c, w in
                        zip(columns, widths, strict=True))
        lines = [self.title, fmt.format(*columns).rstrip()]
        lines += [fmt.format(*r).rstrip() for r in rows]
        return "\n".join(lines)

    @property
    def title(self) -> str:
        t = self.run.trace
        n = len(self.records())
        return (f"{t.kernel} on {t.soc}, core {self.core}: {self.tiles} tile{'s' if self.tiles != 1 else ''}, "
                f"{n} copy/vector instruction{'s' if n != 1 else ''}")

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"KernelSteps({self.title})"

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left;padding:1px 6px'>{c}</th>" for c in _TABLE_COLUMNS)
        body = "".join("<tr>" + "".join(f"<td style='padding:1px 6px;font-family:monospace'>"
                                        f"{_html.escape(str(r[c]))}</td>" for c in _TABLE_COLUMNS) + "</tr>"
                       for r in self.rows())
        return (f"<div><b>{_html.escape(self.title)}</b> <small>(.widget() steps through it; .table() as text)"
                f"</small><table style='font-size:85%'><tr>{head}</tr>{body}</table></div>")

    # --- pictures -------------------------------------------------------------------------------------------------
    def view(self) -> StepperView:
        """A :class:`StepperView` of this core (one reusable figure: ``view.update(tile, step)``)."""
        return StepperView(self.run, core=self.core, steps=self)

    def figure(self, tile: int = 0, step: int = 0) -> Any:
        """The stepper's picture at instruction ``step`` of ``tile``: the pipes with it outlined, the UB bar
        with its bytes outlined, the values it produced."""
        view = self.view()
        view.update(tile, step)
        return view.fig

    def widget(self, static: bool = False) -> Any:
        """The two-slider stepper (tile, instruction): ipywidgets live, or precomputed HTML (``static``)."""
        return stepper_widget(self, static=static)

    def plot_ub_layout(self) -> Any:
        """The core's UB plan to scale (:func:`ascend_lab.viz.plot_ub_layout`)."""
        return F.plot_ub_layout(self.run, self.core)

    def plot_ub_occupancy(self) -> Any:
        """UB bytes holding live data over the core's cycles (:func:`ascend_lab.viz.plot_ub_occupancy`)."""
        return F.plot_ub_occupancy(self.run, self.core)

    def plot_pipeline(self) -> Any:
        """The core's MTE2 / V / MTE3 lanes (:func:`ascend_lab.viz.plot_pipeline`)."""
        return F.plot_pipeline(self.run, [self.core])


class StepperView:
    """One reusable figure for stepping through a snapshot run: the core's lanes with the current instruction
    outlined, the UB bar with the bytes it touched, and the values it produced."""

    HEIGHT = 6.0

    def __init__(self, run: Any, dpi: float = S.FRAME_DPI, core: int = 0, steps: KernelSteps | None = None):
        self.run = run
        self.core = core
        self.data = steps if steps is not None else KernelSteps(run, core)
        self.lanes = D.lanes(run, [core])
        self.bar = D.ub_bar(run, core)
        # a small kernel's buffers would be slivers of the whole UB: show the bytes they use, to scale
        self.span = F.zoom_span(self.bar) if F.needs_zoom(self.bar, S.PAGE_WIDTH - 0.55) else None
        data_records = self.data.records()
        order = {id(r): i for i, r in enumerate(data_records)}     # lane bars are the data records, in order
        self.rows = {t: _mask_rows(self.data.records(t)) for t in self.data.tile_ids}
        self.index = {t: [order[id(r)] for r in self.data.records(t)] for t in self.rows}
        with S.rc():
            self.fig = S.new_figure(S.PAGE_WIDTH, self.HEIGHT, dpi=dpi, layout=None)
            self.ax_pipe = axes_at(self.fig, 1.3, 4.0, 1.3)
            self.ax_ub = axes_at(self.fig, 0.3, 2.1, 0.85)
            self.ax_val = axes_at(self.fig, 0.7, 0.5, 0.75)

    @property
    def steps(self) -> int:
        """Instructions of the longest tile."""
        return max(len(r) for r in self.rows.values())

    def update(self, tile: int = 0, step: int = 0) -> D.MaskRow:
        rows = self.rows[tile]
        step = min(step, len(rows) - 1)
        row = rows[step]
        bar_index = self.index[tile][step]
        with S.rc():
            for ax in (self.ax_pipe, self.ax_ub, self.ax_val):
                F.clear(ax)
            F.draw_lanes(self.lanes, self.ax_pipe, highlight=bar_index, legend=False)
            self.ax_pipe.set_title(F.wrap(f"{self.lanes.title} -- tile {tile}, instruction {step}: {row.instr}",
                                           5.8), fontsize=S.FONT, loc="left")
            F.draw_ub_bar(self.bar, self.ax_ub, highlight=self.lanes.bars[bar_index].ub, span=self.span)
            zoom = "" if self.span is None else f", bytes 0 to {self.span[1]:,.0f} of {self.bar.capacity:,} shown"
            self.ax_ub.set_title(F.wrap(f"UB of core {self.core}{zoom}: {row.instr} touches {row.buffer} (outlined)",
                                        7.0), fontsize=S.FONT, loc="left")
            if row.values.size:
                F.draw_mask_rows([row], [self.ax_val])
            else:
                message(self.ax_val, "no snapshot of the values: launch with snapshot=True", color="black")
        return row

    def png(self, fast: bool = False, compact: bool = False) -> bytes:
        return S.png_bytes(self.fig, fast=fast, compact=compact)


#: Most pictures a static stepper stores (``html.static_slider``'s limit).
MAX_STATES = 25


def _mask_rows(records: list[StepRecord]) -> list[D.MaskRow]:
    """The stepper's value rows (``data.MaskRow``) of one tile's records: a mask row takes the repeat of the value
    row before it, as ``data.mask_steps`` does."""
    rows: list[D.MaskRow] = []
    repeat = D.REPEAT_BYTES // 4
    for r in records:
        vals = np.asarray(r.values) if r.values is not None else np.zeros(0, np.float32)
        if vals.dtype == bool:
            kind = "mask"
        else:
            repeat = max(D.REPEAT_BYTES // vals.dtype.itemsize, 1)
            kind = {"MTE2": "input", "MTE3": "output"}.get(r.pipe, "value")
        label = (f"{r.instr}: GM -> {r.buffer}" if r.pipe == "MTE2" else f"{r.instr}: {r.buffer} -> GM"
                 if r.pipe == "MTE3" else f"{r.instr} -> {r.buffer}")
        rows.append(D.MaskRow(len(rows), r.pipe, r.instr, r.buffer, label, r.detail, kind, vals, repeat, r.start,
                              r.end))
    return rows


def stepper_widget(steps: KernelSteps, static: bool = False) -> Any:
    """Two sliders (tile, instruction) over the stepper's picture of ``steps``' core: ipywidgets live, or
    precomputed HTML (``static``: the first tiles that fit in :data:`MAX_STATES` pictures)."""
    view = StepperView(steps.run, core=steps.core, steps=steps)
    tiles = sorted(view.rows)
    first = view.rows[tiles[0]]
    if static:                  # a static page holds at most MAX_STATES pictures: the first tiles that fit
        n_steps = min(view.steps, MAX_STATES)
        tiles = tiles[:max(MAX_STATES // n_steps, 1)]
        states = [[_stepper_png(view, t, k) for k in range(n_steps)] for t in tiles]
        return static_slider(states, ([f"{t} ({len(view.rows[t][0].values)} elements)" for t in tiles],
                                      [f"{k}: {first[k].instr}" if k < len(first) else str(k)
                                       for k in range(n_steps)]),
                             ("tile", "instruction"), width=int(S.PAGE_WIDTH * S.FRAME_DPI))
    import ipywidgets as W  # deferred: optional dependency, only a live stepper needs it
    style = {"description_width": "initial"}
    tile = W.IntSlider(value=tiles[0], min=tiles[0], max=tiles[-1], description="tile", style=style)
    step = W.IntSlider(value=0, min=0, max=view.steps - 1, description="instruction", style=style)
    image = W.Image(format="png")
    text = W.HTML()

    def redraw(_: Any = None) -> None:
        row = view.update(tile.value, step.value)
        rec = steps.at(tile.value, min(step.value, steps.steps(tile.value) - 1))
        text.value = (f"<code>{_html.escape(row.label)}</code>: UB bytes {_html.escape(rec.ub_text)} "
                      f"({rec.nbytes} B), values {_html.escape(rec.values_head(8))}"
                      + (f"<br>{_html.escape(rec.where)}: <code>{_html.escape(rec.code)}</code>" if rec.line else ""))
        image.value = view.png(fast=True)

    tile.observe(redraw, names="value")
    step.observe(redraw, names="value")
    redraw()
    return W.VBox([tile, step, text, image])


def _stepper_png(view: StepperView, tile: int, step: int) -> bytes:
    view.update(tile, step)
    return view.png(compact=True)


"""Explorers: the tiling explorer, the validation playground and the kernel stepper, live or static.

Live (``static=False``): ipywidgets controls whose ``observe`` callbacks recompute with the simulator and
replace an Image (or HTML) widget's value -- for a Jupyter session. Static (``static=True``): the same
pictures precomputed for a few states (at most 25, 72 dpi) behind a slider linked in the browser
(:func:`.html.static_slider`), for the published site, which has no kernel (docs/jupyterbook_notes.md §2.4).

Each explorer draws into one figure that it keeps and redraws (``*View.update``): fixed axes, no layout
engine, only core 0 simulated and only its first few tiles -- so a live update stays near the 150 ms
budget on a 2-core machine (measured by ``benchmarks/bench_viz.py``).
"""

from __future__ import annotations

import html as _html
import inspect
import linecache
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..base import platform
from ..dtypes import as_acl_dtype
from ..opdev.tiling_data import TilingError
from ..ops import registry
from ..ops import standalone as sa
from ..ops.live_tiling import MAX_CORES
from ..run import validation_case
from . import data as D
from . import figures as F
from . import style as S
from .html import static_slider

__all__ = ["KernelSteps", "StepRecord", "StepperView", "TilingView", "kernel_stepper", "step_kernel",
           "tiling_explorer", "validation_playground"]

def op_names() -> dict[str, str]:
    """Registered ops: package key -> CANN op type (the explorer's menu)."""
    return {spec.key: spec.op_type for spec in registry.ops()}


def op_dtypes(op: str) -> list[str]:
    """Input dtypes the op's definition (OP_DEF) accepts, e.g. HardSigmoidGrad: float32, float16, bfloat16."""
    return [d.short for d in registry.get(op).dtypes]


def _axes(fig: Any, left: float, bottom: float, height: float, right: float = 0.25) -> Any:
    """Axes placed in inches from the bottom-left corner (fixed layout: fast and stable between updates)."""
    w, h = fig.get_figwidth(), fig.get_figheight()
    return fig.add_axes((left / w, bottom / h, 1 - (left + right) / w, height / h))


def _message(ax: Any, text: str, color: str = S.OVERFLOW) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, F.wrap(text, 6.0), ha="center", va="center", transform=ax.transAxes, fontsize=S.FONT,
            color=color)


# --- tiling explorer -------------------------------------------------------------------------------------------
class TilingView:
    """One reusable figure: the tile map, core 0's UB layout and core 0's first pipeline tiles."""

    HEIGHT = 8.2

    def __init__(self, dpi: float = S.FRAME_DPI):
        with S.rc():
            self.fig = S.new_figure(S.PAGE_WIDTH, self.HEIGHT, dpi=dpi, layout=None)
            self.title = self.fig.text(0.01, 0.995, "", ha="left", va="top", fontsize=S.TITLE)
            self.ax_top = _axes(self.fig, 0.3, 6.95, 0.32)
            self.ax_cores = _axes(self.fig, 0.75, 4.6, 1.6)
            self.ax_ub = _axes(self.fig, 0.3, 2.75, 0.95)
            self.ax_pipe = _axes(self.fig, 1.3, 0.65, 1.2)
        self.axes = (self.ax_top, self.ax_cores, self.ax_ub, self.ax_pipe)
        self.state: dict[str, Any] = {}

    def update(self, op: str = "hard_sigmoid_grad", dtype: Any = "float16", soc: str = "Ascend910B4",
               n: int = 1_000_000, ub_size: int | None = None, core_num: int | None = None, buffer_num: int = 2,
               threshold: float = 1.0, max_tiles: int = 4, kernel: str | None = None) -> dict[str, Any]:
        """Recompute (tiling, UB plan, core 0's pipeline) and redraw. ``ub_size`` / ``core_num`` of 0 or None
        mean the SoC's own numbers; ``kernel`` is the op's kernel flavour (None: its first, the experimental
        kernel the seed articles describe). Returns what was drawn."""
        key = sa.op_key(op)
        dt = as_acl_dtype(dtype).short
        flavour = registry.get(key).kernel(kernel).flavour
        with S.rc():
            for ax in self.axes:
                F.clear(ax)
            state: dict[str, Any] = {"op": key, "dtype": dt, "n": n, "buffer_num": buffer_num, "kernel": flavour}
            try:
                info = sa.make_soc(soc, core_num or None, ub_size or None)
                td = sa.tiling_for(key, n, dt, info, flavour, threshold=threshold)
                tm = D.tile_map(td, dt, n)
                if not tm.cores:
                    raise TilingError("nothing to tile: N is 0")
            except (TilingError, ValueError, TypeError) as exc:
                op_type = registry.get(key).op_type
                self.title.set_text(F.wrap(f"{op_type} {dt}, N = {n:,}: the tiling refuses: {exc}", 7.0))
                for ax in self.axes:
                    _message(ax, str(exc) if ax is self.ax_cores else "")
                self.state = {**state, "error": str(exc)}
                return self.state
            F.draw_tile_map(tm, self.ax_top, self.ax_cores)
            plan = sa.ub_plan(key, n, dt, info, buffer_num=buffer_num, threshold=threshold, kernel=flavour)
            bar = D.ub_bar(plan)
            F.draw_ub_bar(bar, self.ax_ub)
            state.update(tiling=td, tile_map=tm, plan=plan, ub_bar=bar)
            if bar.overflow:
                _message(self.ax_pipe, f"No pipeline: TPipe::InitBuffer refuses this plan -- the UB is over "
                                       f"capacity by {bar.overflow:,} B (BUFFER_NUM = {buffer_num}).")
            else:
                run, note = sa.pipeline_run(key, n, dt, info, buffer_num=buffer_num, max_tiles=max_tiles,
                                            threshold=threshold, kernel=flavour)
                lanes = D.lanes(run)
                F.draw_lanes(lanes, self.ax_pipe, note=note["note"], legend=False)
                state.update(run=run, lanes=lanes, note=note)
            self.title.set_text(F.wrap(tm.title + f"; {flavour} kernel, BUFFER_NUM = {buffer_num}", 7.2, S.TITLE))
        self.state = state
        return state

    def png(self, fast: bool = False, compact: bool = False) -> bytes:
        return S.png_bytes(self.fig, fast=fast, compact=compact)


def _control_values(controls: dict[str, Any]) -> dict[str, Any]:
    return {k: w.value for k, w in controls.items()}


def kernel_buffer_num(op: str, kernel: str | None = None) -> int | None:
    """The BUFFER_NUM the op's kernel uses: the default its template arguments take (the kernel source's
    ``BUFFER_NUM`` constant), or None for a kernel without a block count of its own (a template DAG)."""
    template = registry.get(op).kernel(kernel).template
    try:
        param = inspect.signature(template).parameters.get("buffer_num")
    except (TypeError, ValueError):           # a builtin or a partial without a signature
        return None
    return param.default if param is not None and isinstance(param.default, int) else None


def _open_at(box: Any, index: int) -> Any:
    """Select column ``index`` of a two-slider :func:`static_slider` before it is shown (the links between its
    sliders and stacks act in the page only, so both sides are set here)."""
    slider, body = box.children[1], box.children[2]
    slider.value = index
    for stack in body.children:
        stack.selected_index = index
    return box


def tiling_explorer(static: bool = False, *, op: str = "hard_sigmoid_grad", dtype: Any = "float16",
                    soc: str = "Ascend910B4", n: int = 1_000_000, ns: Sequence[int] = (2_000, 200_000, 2_000_000,
                                                                                       20_000_000),
                    buffer_nums: Sequence[int] = (1, 2, 4), **fixed: Any) -> Any:
    """The tiling explorer: op, dtype, SoC, N and the UB size / core count / BUFFER_NUM overrides redraw the
    tile map, the UB layout and core 0's pipeline together.

    Live: a widget panel. Static: precomputed for every N in ``ns`` and BUFFER_NUM in ``buffer_nums``
    (``op``, ``dtype``, ``soc`` and ``fixed`` overrides such as ``ub_size`` held), behind two sliders. Both open
    at the BUFFER_NUM the kernel uses (:func:`kernel_buffer_num`), so the first picture is the kernel's own."""
    view = TilingView()
    opened = kernel_buffer_num(op, fixed.get("kernel"))
    if static:
        states = []
        for size in ns:
            row = []
            for bn in buffer_nums:
                view.update(op, dtype, soc, size, buffer_num=bn, **fixed)
                row.append(view.png(compact=True))
            states.append(row)
        box = static_slider(states, ([f"{v:,}" for v in ns], [str(b) for b in buffer_nums]),
                            ("N (elements)", "BUFFER_NUM"), width=int(S.PAGE_WIDTH * S.FRAME_DPI))
        return _open_at(box, list(buffer_nums).index(opened)) if opened in buffer_nums else box
    import ipywidgets as W
    style = {"description_width": "initial"}
    controls = {
        "op": W.Dropdown(options=[(v, k) for k, v in op_names().items()], value=sa.op_key(op), description="op",
                         style=style),
        "dtype": W.Dropdown(options=op_dtypes(op), value=as_acl_dtype(dtype).short, description="dtype", style=style),
        "soc": W.Dropdown(options=platform.socs(), value=soc, description="SoC", style=style),
        "n": W.BoundedIntText(value=n, min=1, max=10**9, description="N (elements)", style=style),
        "ub_size": W.BoundedIntText(value=fixed.get("ub_size") or 0, min=0, max=1 << 22,
                                    description="UB bytes (0 = SoC)", style=style),
        "core_num": W.BoundedIntText(value=fixed.get("core_num") or 0, min=0, max=MAX_CORES,
                                     description="cores (0 = SoC)", style=style),
        "buffer_num": W.ToggleButtons(options=[1, 2, 3, 4], value=fixed.get("buffer_num", opened or 2),
                                      description="BUFFER_NUM",
                                      style=style),
        "kernel": W.Dropdown(options=list(registry.get(op).kernels),
                             value=registry.get(op).kernel(fixed.get("kernel")).flavour, description="kernel",
                             style=style),
    }
    image = W.Image(format="png")
    status = W.HTML()

    def redraw(_: Any = None) -> None:
        t0 = time.perf_counter()
        values = _control_values(controls)
        if values["dtype"] not in op_dtypes(values["op"]):
            return
        state = view.update(**values)
        image.value = view.png(fast=True)
        status.value = (f"<small>updated in {(time.perf_counter() - t0) * 1e3:.0f} ms"
                        + (f"; {_html.escape(state['error'])}" if "error" in state else "") + "</small>")

    def op_changed(change: Any) -> None:
        choices = op_dtypes(change["new"])
        flavours = list(registry.get(change["new"]).kernels)
        controls["kernel"].options = flavours
        controls["kernel"].value = controls["kernel"].value if controls["kernel"].value in flavours else flavours[0]
        keep = controls["dtype"].value
        controls["dtype"].options = choices
        controls["dtype"].value = keep if keep in choices else choices[0]
        redraw()

    controls["op"].observe(op_changed, names="value")
    for name, w in controls.items():
        if name != "op":
            w.observe(redraw, names="value")
    redraw()
    grid = W.GridBox(list(controls.values()), layout=W.Layout(grid_template_columns="repeat(2, 48%)"))
    return W.VBox([grid, status, image])


# --- validation playground -----------------------------------------------------------------------------------------
PRESET_CASES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("HardsigmoidBackward float32", {}),
    ("grad float16, self float32: a Cast", {"grad_dtype": "float16"}),
    ("grad int8", {"grad_dtype": "int8", "self_dtype": "int8"}),
    ("bfloat16 on Ascend910A", {"grad_dtype": "bfloat16", "self_dtype": "bfloat16", "soc": "Ascend910A"}),
    ("grad is nullptr", {"null": ("grad",)}),
    ("out int32 for a float32 result", {"out_dtype": "int32"}),
    ("shapes (3, 2) vs (2, 3)", {"grad_shape": (3, 2)}),
    ("9-d tensors", {"grad_shape": (1,) * 9, "self_shape": (1,) * 9}),
    ("ThresholdBackward float32", {"op": "threshold_backward"}),
    ("threshold is nullptr", {"op": "threshold_backward", "null": ("threshold",)}),
    ("grad float16, self float32", {"op": "threshold_backward", "grad_dtype": "float16"}),
    ("grad (2, 1) broadcast to (2, 3)", {"op": "threshold_backward", "grad_shape": (2, 1)}),
    ("grad (4,) vs self (2, 3)", {"op": "threshold_backward", "grad_shape": (4,)}),
    ("threshold 0: ReluGrad", {"op": "threshold_backward", "threshold": 0.0}),
    ("int64, threshold 0, Ascend950PR", {"op": "threshold_backward", "grad_dtype": "int64", "self_dtype": "int64",
                                         "threshold": 0.0, "soc": "Ascend950PR"}),
    ("int64, threshold 1, Ascend950PR", {"op": "threshold_backward", "grad_dtype": "int64", "self_dtype": "int64",
                                         "threshold": 1.0, "soc": "Ascend950PR"}),
)


def validation_card(case: dict[str, Any], result: dict[str, Any]) -> str:
    """The outcome of one call as a small HTML card: the inputs, the status, the check that fired, the graph."""
    esc = _html.escape
    ok = result["status"] == 0
    color = "var(--ascend-pass, #2b7a2b)" if ok else f"var(--ascend-fail, {S.OVERFLOW})"   # book.css: dark mode
    op = case.get("op", "hardsigmoid_backward")
    args = {"grad": (case.get("grad_dtype", "float32"), case.get("grad_shape", (2, 3))),
            "self": (case.get("self_dtype", "float32"), case.get("self_shape", (2, 3)))}
    parts = [f"{k}: {'nullptr' if k in case.get('null', ()) else f'{d}{list(s)}'}" for k, (d, s) in args.items()]
    out_shape = list(case["out_shape"]) if case.get("out_shape") else ""
    parts.append("out: " + ("nullptr" if "out" in case.get("null", ()) else
                            f"{case.get('out_dtype') or 'default'}{out_shape}"))
    if op.startswith("threshold"):
        parts.append("threshold: " + ("nullptr" if "threshold" in case.get("null", ()) else
                                      repr(case.get("threshold", 1.0))))
    rows = [("call", f"{result['op']} on {result['soc']}"), ("arguments", ", ".join(parts)),
            ("status", f"<b style='color:{color}'>{result['status']}</b> {esc(result['meaning'])}")]
    if not ok:
        rows.append(("check that fired", f"{esc(result['check'])}<br><small>logged by {esc(result['api'])}</small>"))
    else:
        rows.append(("L0 graph", esc(" -> ".join(result["graph"])) or "(empty tensors: nothing launched)"))
    body = "".join(f"<tr><td style='padding:2px 8px;vertical-align:top'><b>{k}</b></td>"
                   f"<td style='padding:2px 8px'>{v}</td></tr>" for k, v in rows)
    return (f"<div style='border:1px solid {color};border-radius:4px;padding:4px;font-size:90%'>"
            f"<table>{body}</table></div>")


def validation_playground(static: bool = False, cases: Sequence[tuple[str, dict[str, Any]]] = PRESET_CASES) -> Any:
    """Pick dtypes, shapes, nulls, SoC (and the threshold): see the status code, its meaning, the message of
    the check that fired and the L0 graph. Static: a slider over ``cases`` (label, validation_case kwargs)."""
    import ipywidgets as W
    if static:
        cards = [validation_card(kw, validation_case(**kw)) for _, kw in cases]
        return static_slider(cards, [label for label, _ in cases], "case")
    style = {"description_width": "initial"}
    dtypes = ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool", "float64"]
    apis = [api for _, api in registry.aclnn_apis()]
    scalars = {sc.name: sc.default for api in apis for sc in api.scalars}
    controls = {
        "op": W.Dropdown(options=[api.convenience for api in apis], description="API", style=style),
        "soc": W.Dropdown(options=platform.socs(), value=platform.DEFAULT_SOC, description="SoC", style=style),
        "grad_dtype": W.Dropdown(options=dtypes, description="grad dtype", style=style),
        "self_dtype": W.Dropdown(options=dtypes, description="self dtype", style=style),
        "out_dtype": W.Dropdown(options=["default", *dtypes], description="out dtype", style=style),
        "grad_shape": W.Text(value="2, 3", description="grad shape", style=style),
        "self_shape": W.Text(value="2, 3", description="self shape", style=style),
        "out_shape": W.Text(value="", description="out shape (empty = default)", style=style),
        **{name: W.FloatText(value=value, description=name, style=style) for name, value in scalars.items()},
        "null": W.SelectMultiple(options=["grad", "self", "out", *scalars], description="nullptr", style=style,
                                 rows=4),
    }
    card = W.HTML()

    def shape(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.replace("(", "").replace(")", "").split(",") if p.strip())

    def redraw(_: Any = None) -> None:
        v = _control_values(controls)
        try:
            case = {"op": v["op"], "soc": v["soc"], "grad_dtype": v["grad_dtype"], "self_dtype": v["self_dtype"],
                    "grad_shape": shape(v["grad_shape"]), "self_shape": shape(v["self_shape"]),
                    "null": tuple(v["null"]), **{name: v[name] for name in scalars}}
            if v["out_dtype"] != "default":
                case["out_dtype"] = v["out_dtype"]
            if v["out_shape"].strip():
                case["out_shape"] = shape(v["out_shape"])
            card.value = validation_card(case, validation_case(**case))
        except ValueError as exc:
            card.value = f"<span style='color:{S.OVERFLOW}'>{_html.escape(str(exc))}</span>"

    for w in controls.values():
        w.observe(redraw, names="value")
    redraw()
    grid = W.GridBox(list(controls.values()), layout=W.Layout(grid_template_columns="repeat(2, 48%)"))
    return W.VBox([grid, card])


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

    Build it with :func:`step_kernel` (launches your kernel) or from any ``snapshot=True`` run:
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
        return kernel_stepper(self.run, static=static, core=self.core, steps=self)

    def plot_ub_layout(self) -> Any:
        """The core's UB plan to scale (:func:`ascend_lab.viz.plot_ub_layout`)."""
        return F.plot_ub_layout(self.run, self.core)

    def plot_ub_occupancy(self) -> Any:
        """UB bytes holding live data over the core's cycles (:func:`ascend_lab.viz.plot_ub_occupancy`)."""
        return F.plot_ub_occupancy(self.run, self.core)

    def plot_pipeline(self) -> Any:
        """The core's MTE2 / V / MTE3 lanes (:func:`ascend_lab.viz.plot_pipeline`)."""
        return F.plot_pipeline(self.run, [self.core])


def step_kernel(entry: Any, tiling_data: Any, inputs: Any, *, soc: Any = "Ascend910B4", out_dtype: Any = None,
                core: int = 0, **kw: Any) -> KernelSteps:
    """Look inside a kernel you wrote: run one core of it and list every instruction, tile by tile, with the UB
    bytes it touched and the values it produced.

    ``entry`` is your ``__global__`` entry function (``entry(*gm_args, workspace, tiling, **template)``, the
    one you pass to ``ascendc.launch``) or your kernel class (``Init(*gm_args, tiling_data)`` + ``Process()``;
    ``init_args=(...)`` go to its constructor). ``tiling_data`` is your host tiling's TilingData, ``inputs`` the
    input arrays in argument order (a dict names them); the output has ``out_dtype`` (default: the first
    input's). ``core`` is the core to step through; every other keyword goes to
    :func:`ascend_lab.ops.standalone.entry_run` (``names``, ``out_size``, ``core_num``, ``ub_size``,
    ``init_args``) or to your entry as a template argument (``kernel=MyKernel``, ``dtype=...``).

    Returns a :class:`KernelSteps`: ``.table()`` prints the records (no widgets needed), ``.records()`` gives them
    as data, ``.widget()`` is the two-slider stepper, ``.plot_ub_layout()`` draws the core's UB plan::

        steps = viz.step_kernel(leaky_relu_grad, td, [grad, x], soc="Ascend910B4", kernel=MyKernel,
                                dtype=grad.dtype)
        print(steps.table(tile=0))          # tile, step, instr, pipe, buffer, UB bytes, bytes, values
        steps.widget()                      # step through it
        steps.plot_ub_layout()              # its UB layout

    A sanitizer finding stops the run with a :class:`~ascend_lab.ascendc.KernelError` naming your line."""
    run, out = sa.entry_run(entry, tiling_data, inputs, soc=soc, out_dtype=out_dtype, core=core, snapshot=True,
                            record=True, **kw)
    return KernelSteps(run, core, out)


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
        self.span = F.zoom_span(self.bar) if F._needs_zoom(self.bar, S.PAGE_WIDTH - 0.55) else None
        data_records = self.data.records()
        order = {id(r): i for i, r in enumerate(data_records)}     # lane bars are the data records, in order
        self.rows = {t: _mask_rows(self.data.records(t)) for t in self.data.tile_ids}
        self.index = {t: [order[id(r)] for r in self.data.records(t)] for t in self.rows}
        with S.rc():
            self.fig = S.new_figure(S.PAGE_WIDTH, self.HEIGHT, dpi=dpi, layout=None)
            self.ax_pipe = _axes(self.fig, 1.3, 4.0, 1.3)
            self.ax_ub = _axes(self.fig, 0.3, 2.1, 0.85)
            self.ax_val = _axes(self.fig, 0.7, 0.5, 0.75)

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
                _message(self.ax_val, "no snapshot of the values: launch with snapshot=True", color="black")
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


def kernel_stepper(run: Any = None, static: bool = False, core: int = 0, steps: KernelSteps | None = None,
                   **kw: Any) -> Any:
    """Step through a kernel tile by tile and instruction by instruction (two sliders). ``run`` is a
    ``snapshot=True`` KernelRun -- of your own kernel: :func:`step_kernel` builds one (``step_kernel(...).widget()``)
    -- or, by default, ``ascend_lab.ops.standalone.stepper_run(**kw)`` (a registered op). ``core``: the core to
    step through."""
    if steps is None:
        steps = KernelSteps(run if run is not None else sa.stepper_run(**kw), core)
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
    import ipywidgets as W  # optional dependency: only a live explorer needs it
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


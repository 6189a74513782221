"""Explorers: the tiling explorer, the validation playground and the kernel stepper of a registered op, live or static.

These ask the operator registry and launch kernels (``ascend_lab.standalone``, ``validation_case``) for each new state,
then hand the runs, tilings and UB plans to :mod:`ascend_lab.viz`, which only draws -- that is why they live in a
layer above viz (design §8).

Live (``static=False``): ipywidgets controls whose ``observe`` callbacks recompute with the simulator and
replace an Image (or HTML) widget's value -- for a Jupyter session. Static (``static=True``): the same
pictures precomputed for a few states (at most 25, 72 dpi) behind a slider linked in the browser
(:func:`ascend_lab.viz.html.static_slider`), for the published site, which has no kernel
(docs/jupyterbook_notes.md §2.4).

Each explorer draws into one figure that it keeps and redraws (``*View.update``): fixed axes, no layout
engine, only core 0 simulated and only its first few tiles -- so a live update stays near the 150 ms
budget on a 2-core machine (measured by ``benchmarks/bench_viz.py``).
"""

from __future__ import annotations

import html as _html
import inspect
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .. import standalone as sa
from ..base import platform
from ..dtypes import as_acl_dtype
from ..live.live_tiling import MAX_CORES
from ..opdev.tiling_data import TilingError
from ..ops import registry
from ..run import validation_case
from ..viz import data as D
from ..viz import figures as F
from ..viz import style as S
from ..viz.html import static_slider
from ..viz.stepper import KernelSteps, axes_at, message, stepper_widget
from .tile_maps import tile_map

__all__ = ["PRESET_CASES", "TilingView", "kernel_buffer_num", "kernel_stepper", "op_attr_defaults", "op_dtypes",
           "op_names", "step_kernel", "tiling_explorer", "validation_card", "validation_playground"]


def op_names() -> dict[str, str]:
    """Registered ops: package key -> CANN op type (the explorer's menu)."""
    return {spec.key: spec.op_type for spec in registry.ops()}


def op_dtypes(op: str) -> list[str]:
    """Input dtypes the op's definition (OP_DEF) accepts, e.g. HardSigmoidGrad: float32, float16, bfloat16."""
    return [d.short for d in registry.get(op).dtypes]


def op_attr_defaults(op: str, kernel: str | None = None) -> dict[str, float]:
    """The op's tiling attributes, each at the ``kernel`` flavour's default (``OpSpec.check_attrs``: the kernel's
    own first, then the op's), in the op's order: HardSigmoidGrad alpha and beta, ThresholdGradV2D threshold, none
    for ReluGrad (the live explorer's attribute controls)."""
    return registry.get(op).check_attrs({}, kernel)



def _given_attrs(threshold: float | None, attrs: Mapping[str, float] | None) -> dict[str, float]:
    """The attributes a caller gave: ``attrs``, with ``threshold=`` (the older spelling) under them."""
    return {**({} if threshold is None else {"threshold": threshold}), **(attrs or {})}


# --- tiling explorer -------------------------------------------------------------------------------------------
class TilingView:
    """One reusable figure: the tile map, core 0's UB layout and core 0's first pipeline tiles."""

    HEIGHT = 8.2

    def __init__(self, dpi: float = S.FRAME_DPI):
        with S.rc():
            self.fig = S.new_figure(S.PAGE_WIDTH, self.HEIGHT, dpi=dpi, layout=None)
            self.title = self.fig.text(0.01, 0.995, "", ha="left", va="top", fontsize=S.TITLE)
            self.ax_top = axes_at(self.fig, 0.3, 6.95, 0.32)
            self.ax_cores = axes_at(self.fig, 0.75, 4.6, 1.6)
            self.ax_ub = axes_at(self.fig, 0.3, 2.75, 0.95)
            self.ax_pipe = axes_at(self.fig, 1.3, 0.65, 1.2)
        self.axes = (self.ax_top, self.ax_cores, self.ax_ub, self.ax_pipe)
        self.state: dict[str, Any] = {}

    def update(self, op: str = "hard_sigmoid_grad", dtype: Any = "float16", soc: str = "Ascend910B4",
               n: int = 1_000_000, ub_size: int | None = None, core_num: int | None = None, buffer_num: int = 2,
               threshold: float | None = None, max_tiles: int = 4, kernel: str | None = None,
               attrs: Mapping[str, float] | None = None) -> dict[str, Any]:
        """Recompute (tiling, UB plan, core 0's pipeline) and redraw. ``ub_size`` / ``core_num`` of 0 or None
        mean the SoC's own numbers; ``kernel`` is the op's kernel flavour (None: its first, the experimental
        kernel the seed articles describe); ``attrs`` are the op's tiling attributes, the ones not given at the
        kernel's defaults (:func:`op_attr_defaults`). ``threshold=`` is the older spelling of
        ``attrs={"threshold": ...}``; like any attribute another registered op declares, it is dropped for an op
        without it (``standalone.op_attrs``), while a name no registered op declares raises TypeError. Returns
        what was drawn, the attributes used included (``state["attrs"]``)."""
        spec = registry.get(op)
        key, flavour = spec.key, spec.kernel(kernel).flavour
        attrs = spec.check_attrs(sa.op_attrs(spec, _given_attrs(threshold, attrs)), flavour)  # raises, not drawn
        dt = as_acl_dtype(dtype)          # the door: one aclDataType flows to the tiling, tile map, plan and run
        with S.rc():
            for ax in self.axes:
                F.clear(ax)
            state: dict[str, Any] = {"op": key, "dtype": dt.short, "n": n, "buffer_num": buffer_num, "kernel": flavour,
                                     "attrs": attrs}
            try:
                info = sa.make_soc(soc, core_num or None, ub_size or None)
                td = sa.tiling_for(key, n, dt, info, flavour, attrs)
                tm = tile_map(td, dt, n)
                if not tm.cores:
                    raise TilingError("nothing to tile: N is 0")
            except (TilingError, ValueError, TypeError) as exc:
                op_type = spec.op_type
                self.title.set_text(F.wrap(f"{op_type} {dt.short}, N = {n:,}: the tiling refuses: {exc}", 7.0))
                for ax in self.axes:
                    message(ax, str(exc) if ax is self.ax_cores else "")
                self.state = {**state, "error": str(exc)}
                return self.state
            F.draw_tile_map(tm, self.ax_top, self.ax_cores)
            plan = sa.ub_plan(key, n, dt, info, buffer_num=buffer_num, attrs=attrs, kernel=flavour)
            bar = D.ub_bar(plan)
            F.draw_ub_bar(bar, self.ax_ub)
            state.update(tiling=td, tile_map=tm, plan=plan, ub_bar=bar)
            if bar.overflow:
                message(self.ax_pipe, f"No pipeline: TPipe::InitBuffer refuses this plan -- the UB is over "
                                       f"capacity by {bar.overflow:,} B (BUFFER_NUM = {buffer_num}).")
            else:
                run, note = sa.pipeline_run(key, n, dt, info, buffer_num=buffer_num, max_tiles=max_tiles,
                                            attrs=attrs, kernel=flavour)
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
                    buffer_nums: Sequence[int] = (1, 2, 4), attrs: Mapping[str, float] | None = None,
                    **fixed: Any) -> Any:
    """The tiling explorer: op, dtype, SoC, N, the UB size / core count / BUFFER_NUM overrides and the op's tiling
    attributes redraw the tile map, the UB layout and core 0's pipeline together.

    ``attrs`` are tiling attributes of ``op`` (e.g. ``{"alpha": 0.25}``), the others at the kernel's defaults
    (``threshold=`` is the older spelling of ``attrs={"threshold": ...}``: :meth:`TilingView.update`).
    Live: a widget panel, with one number box per attribute of the selected op (none for an op without any),
    rebuilt at the kernel's defaults when the op or the kernel changes; ``attrs`` set the first op's. Static:
    precomputed for every N in ``ns`` and BUFFER_NUM in ``buffer_nums`` (``op``, ``dtype``, ``soc``, ``attrs``
    and ``fixed`` overrides such as ``ub_size`` held), behind two sliders. Both open at the BUFFER_NUM the kernel
    uses (:func:`kernel_buffer_num`), so the first picture is the kernel's own."""
    view = TilingView()
    opened = kernel_buffer_num(op, fixed.get("kernel"))
    if static:
        return _static_tiling(view, op, dtype, soc, ns, buffer_nums, opened, {**fixed, "attrs": attrs})
    return _live_tiling(view, op, dtype, soc, n, opened, attrs, fixed)


def _live_tiling(view: TilingView, op: str, dtype: Any, soc: str, n: int, opened: int | None,
                 attrs: Mapping[str, float] | None, fixed: dict[str, Any]) -> Any:
    """The live explorer: :func:`_tiling_controls`, a box of :func:`_attr_controls` that the op and kernel
    controls rebuild, the update time and the picture."""
    import ipywidgets as W  # deferred: optional dependency, only a live explorer needs it
    controls = _tiling_controls(W, op, dtype, soc, n, opened, fixed)
    attr_box = W.GridBox(layout=W.Layout(grid_template_columns="repeat(2, 48%)"))
    image = W.Image(format="png")
    status = W.HTML()
    # While the op control resets the kernel and dtype controls, their own redraws wait: one redraw per op switch.
    # Before, a switch redrew up to 3 times (kernel options, dtype options, then the switch's own): a switch among
    # threshold_grad_v2_d / relu_grad / hard_sigmoid_grad took median 389 ms, now 137 ms (24 interleaved switches
    # each, N = 10**6, Ascend910B4, load average ~1.6-1.9 on 2 cores). One update itself is unchanged.
    quiet = [False]

    def redraw(_: Any = None) -> None:
        if quiet[0]:
            return
        t0 = time.perf_counter()
        values = _control_values(controls)
        if values["dtype"] not in op_dtypes(values["op"]):
            return
        state = view.update(**values, attrs={w.description: w.value for w in attr_box.children})
        image.value = view.png(fast=True)
        status.value = (f"<small>updated in {(time.perf_counter() - t0) * 1e3:.0f} ms"
                        + (f"; {_html.escape(state['error'])}" if "error" in state else "") + "</small>")

    def rebuild_attrs(given: Mapping[str, float] | None = None) -> None:
        old = attr_box.children
        attr_box.children = tuple(_attr_controls(W, controls["op"].value, controls["kernel"].value, given))
        for w in old:
            w.close()
        for w in attr_box.children:
            w.observe(redraw, names="value")

    def op_changed(change: Any) -> None:
        quiet[0] = True
        try:
            _follow_op(controls, change["new"])
            rebuild_attrs()
        finally:
            quiet[0] = False
        redraw()

    def kernel_changed(_: Any) -> None:
        if not quiet[0]:
            rebuild_attrs()
            redraw()

    controls["op"].observe(op_changed, names="value")
    controls["kernel"].observe(kernel_changed, names="value")
    for name, w in controls.items():
        if name not in ("op", "kernel"):
            w.observe(redraw, names="value")
    rebuild_attrs(_given_attrs(fixed.get("threshold"), attrs))
    redraw()
    grid = W.GridBox(list(controls.values()), layout=W.Layout(grid_template_columns="repeat(2, 48%)"))
    return W.VBox([grid, attr_box, status, image])


def _static_tiling(view: TilingView, op: str, dtype: Any, soc: str, ns: Sequence[int], buffer_nums: Sequence[int],
                   opened: int | None, fixed: dict[str, Any]) -> Any:
    """The static explorer: one picture per (N, BUFFER_NUM), behind two sliders opened at ``opened``."""
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


def _tiling_controls(W: Any, op: str, dtype: Any, soc: str, n: int, opened: int | None,
                     fixed: dict[str, Any]) -> dict[str, Any]:
    """The live explorer's widgets, named as :meth:`TilingView.update`'s arguments (``W`` is ipywidgets)."""
    style = {"description_width": "initial"}
    spec = registry.get(op)
    return {
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
                                      description="BUFFER_NUM", style=style),
        "kernel": W.Dropdown(options=list(spec.kernels), value=spec.kernel(fixed.get("kernel")).flavour,
                             description="kernel", style=style),
    }


def _follow_op(controls: dict[str, Any], op: str) -> None:
    """Offer ``op``'s kernels and dtypes in the kernel and dtype controls, keeping the chosen ones it has."""
    for name, choices in (("kernel", list(registry.get(op).kernels)), ("dtype", op_dtypes(op))):
        keep = controls[name].value
        controls[name].options = choices          # (ipywidgets selects the first option here)
        controls[name].value = keep if keep in choices else choices[0]


def _attr_controls(W: Any, op: str, kernel: str | None, given: Mapping[str, float] | None = None) -> list[Any]:
    """One FloatText per tiling attribute of ``op``, described by its name, at its ``given`` value or the
    ``kernel``'s default (:func:`op_attr_defaults`); ``given`` names of other ops are dropped
    (``standalone.op_attrs``)."""
    spec = registry.get(op)
    values = spec.check_attrs(sa.op_attrs(spec, given), kernel)
    style = {"description_width": "initial"}
    return [W.FloatText(value=float(value), description=name, style=style) for name, value in values.items()]


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
    import ipywidgets as W  # deferred: optional dependency, only a live explorer needs it
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
def step_kernel(entry: Any, tiling_data: Any, inputs: Any, *, soc: Any = "Ascend910B4", out_dtype: Any = None,
                core: int = 0, **kw: Any) -> KernelSteps:
    """Look inside a kernel you wrote: run one core of it and list every instruction, tile by tile, with the UB
    bytes it touched and the values it produced.

    ``entry`` is your ``__global__`` entry function (``entry(*gm_args, workspace, tiling, **template)``, the
    one you pass to ``ascendc.launch``) or your kernel class (``Init(*gm_args, tiling_data)`` + ``Process()``;
    ``init_args=(...)`` go to its constructor). ``tiling_data`` is your host tiling's TilingData, ``inputs`` the
    input arrays in argument order (a dict names them); the output has ``out_dtype`` (default: the first
    input's). ``core`` is the core to step through; every other keyword goes to
    :func:`ascend_lab.standalone.entry_run` (``names``, ``out_size``, ``core_num``, ``ub_size``,
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




def kernel_stepper(run: Any = None, static: bool = False, core: int = 0, steps: KernelSteps | None = None,
                   **kw: Any) -> Any:
    """Step through a kernel tile by tile and instruction by instruction (two sliders). ``run`` is a
    ``snapshot=True`` KernelRun -- of your own kernel: :func:`step_kernel` builds one (``step_kernel(...).widget()``)
    -- or, by default, ``ascend_lab.standalone.stepper_run(**kw)`` (a registered op). ``core``: the core to
    step through."""
    if steps is None:
        steps = KernelSteps(run if run is not None else sa.stepper_run(**kw), core)
    return stepper_widget(steps, static)

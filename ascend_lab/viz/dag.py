"""Figures of the atvoss template: a kernel's DAG drawn from its declared nodes, and two views of a template
run that the generic figures cannot give (tiles of a ping/pong schedule, the template's tile map).

* :func:`dag_graph` / :func:`plot_dag` -- the nodes of an :class:`ascend_lab.atvoss.Dag` in execution order
  (``funlist``: the post-order walk from the CopyOut, no-op Casts removed), with each node's inputs, its
  buffer slot (ping/pong for copies, a shared temp otherwise) and the live-buffer count; the figure draws
  exactly those nodes and edges, coloured by the pipe that fills the node's buffer (CopyIn: MTE2, compute:
  V, CopyOut: MTE3);
* :func:`template_lanes` / :func:`plot_template_pipeline` -- the MTE2 / V / MTE3 lanes of a template run,
  each instruction coloured by the tile it belongs to (the trace's own tile index: the walker numbers its
  ping/pong queues' tiles by its loop index, as a hand-written kernel's loop does), titled with the schedule;

The template's tile map (``template_tile_map``, ``plot_template_tile_map``) asks the registered op for its
``core_ranges``, so it lives in :mod:`ascend_lab.explore.tile_maps` (``viz.template_tile_map`` is that).

Nothing here launches a kernel or asks the registry: the caller hands over a DAG or a finished run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..ascendc.launcher import KernelRun
from ..atvoss.dag import Dag
from . import data as D
from . import style as S
from .figures import add_legend, draw_lanes, wrap

__all__ = ["DagGraph", "DagNode", "dag_graph", "plot_dag", "plot_template_pipeline", "template_lanes"]

#: The pipe that fills a node's buffer: copy-in MTE2, copy-out MTE3, every compute node the vector unit.
_PIPE_OF = {"CopyInBrc": "MTE2", "CopyOut": "MTE3"}
_FACE = {"MTE2": S.KIND_COLORS["VECIN"], "V": S.KIND_COLORS["VECCALC"], "MTE3": S.KIND_COLORS["VECOUT"]}


# --- the DAG ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DagNode:
    index: int                 # position in ``funlist`` (execution order)
    op: str                    # CopyInBrc, Cast, Duplicate, Compare, Select, Mul, CopyOut
    label: str                 # ``Node.label()``: op with its dtypes and modes
    name: str                  # the declaration's name ("CopyInBrc self"), or ""
    dtype: str                 # the node's output element type
    slot: str                  # "0/7" (ping/pong), "3" (temp) or "—" (CopyOut writes GM)
    pipe: str                  # MTE2 / V / MTE3
    inputs: tuple[int, ...]    # funlist indices of the nodes it reads
    layer: int                 # longest path from a node with no node inputs


@dataclass
class DagGraph:
    name: str
    nodes: list[DagNode]
    edges: list[tuple[int, int]]      # (producer index, consumer index)
    buffer_num: int                   # GetBufferNum<true, true>: one-dim and NDDMA schedules, the kernel pool
    buffer_num_ub_broadcast: int      # GetBufferNum<false, true>: the UB-broadcast schedules
    temp_calc: int                    # peak live intermediates
    max_dtype_bytes: int
    min_dtype_bytes: int
    title: str


def dag_graph(dag: Dag) -> DagGraph:
    """The nodes and edges of ``dag`` in execution order, as :func:`plot_dag` draws them."""
    if not isinstance(dag, Dag):
        raise TypeError(f"dag_graph takes an ascend_lab.atvoss.Dag, got {type(dag).__name__}")
    rows = dag.table()
    layer: list[int] = []
    nodes = []
    for row, node in zip(rows, dag.funlist, strict=True):
        ins = tuple(row["inputs"])
        layer.append(1 + max((layer[i] for i in ins), default=-1))
        nodes.append(DagNode(row["#"], node.op, node.label(), node.name, node.dtype.name, row["slot"],
                             _PIPE_OF.get(node.op, "V"), ins, layer[-1]))
    edges = [(i, n.index) for n in nodes for i in n.inputs]
    title = (f"{dag.name}: {len(nodes)} nodes in execution order, BufferNum (aliveNum) {dag.buffer_num()} = "
             f"{dag.temp_calc} temps + 2 x {dag.input_size} inputs + 2 x {len(dag.out_feeders)} "
             f"output{'s' if len(dag.out_feeders) != 1 else ''}; MaxDtypeBytes {dag.max_dtype_bytes}")
    return DagGraph(dag.name, nodes, edges, dag.buffer_num(True), dag.buffer_num(False), dag.temp_calc,
                    dag.max_dtype_bytes, dag.min_dtype_bytes, title)


def _positions(g: DagGraph) -> dict[int, float]:
    """x in [0, 1] of every node: layer 0 spread evenly in execution order, later nodes under the mean x of
    their inputs (spread evenly, in that order, when a layer has several)."""
    pos: dict[int, float] = {}
    for layer in range(max(n.layer for n in g.nodes) + 1):
        members = [n for n in g.nodes if n.layer == layer]
        if layer > 0:
            members.sort(key=lambda n: float(np.mean([pos[i] for i in n.inputs])))
        if layer > 0 and len(members) == 1:
            pos[members[0].index] = float(np.mean([pos[i] for i in members[0].inputs]))
            continue
        for k, n in enumerate(members):
            pos[n.index] = (k + 0.5) / len(members)
    return pos


def plot_dag(dag: Dag) -> Figure:
    """The DAG as boxes in layers (inputs above the nodes that read them): ``#index`` and the node's label,
    its declared name and its buffer slot; blue = CopyIn (MTE2 fills a ping/pong slot), orange = compute
    (the vector unit), green = CopyOut (MTE3 drains the ping/pong slot of the node it reads)."""
    g = dag_graph(dag)
    layers = max(n.layer for n in g.nodes) + 1
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.0 + 0.62 * layers)
        ax = fig.add_subplot()
        draw_dag(g, ax, own=True)
    return fig


def draw_dag(g: DagGraph, ax: Axes, own: bool = False) -> None:
    """Draw a :class:`DagGraph` into ``ax``."""
    ax.set_axis_off()
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title(wrap(g.title), fontsize=S.FONT, loc="left")
    layers = max(n.layer for n in g.nodes) + 1
    pos = _positions(g)
    boxes = {}
    for n in g.nodes:
        extra = n.name.removeprefix(n.op).strip() if n.name else ""
        extra = "" if extra in n.label else extra          # "Duplicate 0" adds nothing to "Duplicate<float> 0.0"
        body = f"#{n.index} {n.label}\n" + (f"{extra}, " if extra else "") + \
            (f"slot {n.slot}" if n.slot != "—" else "writes GM")
        y = 1.0 - (n.layer + 0.5) / layers
        boxes[n.index] = ax.text(0.03 + 0.94 * pos[n.index], y, body, ha="center", va="center", fontsize=S.SMALL,
                                 zorder=3, bbox={"boxstyle": "round,pad=0.3", "fc": _FACE[n.pipe],
                                                 "ec": S.PIPE_COLORS[n.pipe], "lw": 1.0})
    for i, j in g.edges:
        ax.annotate("", (0.5, 1.0), xycoords=boxes[j], xytext=(0.5, 0.0), textcoords=boxes[i],
                    arrowprops={"arrowstyle": "->", "lw": 0.9, "color": "#555555", "shrinkA": 1, "shrinkB": 2},
                    zorder=1)
    handles = [Patch(facecolor=_FACE[p], edgecolor=S.PIPE_COLORS[p], label=text) for p, text in
               (("MTE2", "CopyIn: MTE2 fills a ping/pong slot"), ("V", "compute: a vector instruction"),
                ("MTE3", "CopyOut: MTE3 drains a ping/pong slot"))]
    if own:
        add_legend(ax.figure, own, ax, handles, ncols=3)


# --- a template run's lanes -------------------------------------------------------------------------------------
def _trace_of(source: Any) -> Any:
    return source.trace if isinstance(source, KernelRun) else source


def template_lanes(source: Any, cores: Sequence[int] | None = None) -> D.Lanes:
    """:func:`.data.lanes` of a template run, titled with its schedule (schMode) and ping/pong slots. Every bar
    keeps the trace's tile: the walker gives each event of tile i tile i."""
    trace = _trace_of(source)
    if not isinstance(trace.meta.get("dag"), Dag):
        raise TypeError("template_lanes reads a run of the atvoss template (its trace names the DAG it walked)")
    base = D.lanes(trace, cores)
    tiles = base.tiles
    span = max(base.makespan.values(), default=0.0)
    flavour = trace.meta.get("kernel_flavour", "?")
    many = len(base.cores) > 1
    title = (f"{trace.kernel} ({flavour} kernel, atvoss schMode {trace.meta.get('sch_mode')}) on {trace.soc}: pipes "
             f"of core{'s' if many else ''} {', '.join(map(str, base.cores))}, {tiles} tile{'s' if tiles != 1 else ''}"
             f"{' per core' if many else ''}, even tiles in the ping slots, odd in the pong slots: {span:,.0f} cycles")
    return D.Lanes(base.bars, base.cores, base.makespan, base.busy, tiles, 2, title)


def plot_template_pipeline(source: Any, cores: Sequence[int] | None = None, note: str = "") -> Figure:
    """The lanes of :func:`template_lanes`, drawn as :func:`ascend_lab.viz.plot_pipeline` draws any run."""
    ln = template_lanes(source, cores)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.6 + 0.3 * len(ln.cores) * 3.5)
        ax = fig.add_subplot()
        draw_lanes(ln, ax, note=note, own=True)
    return fig

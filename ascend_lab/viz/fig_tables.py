"""Tables and graphs: the dtype tables, an API's dtype support per SoC, and the L0 graph of a run."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..dtypes import BOOK_DTYPES
from . import data as D
from . import style as S
from .drawing import (
    add_legend,
    wrap,
)

# --- dtype tables ----------------------------------------------------------------------------------------------------
_CATEGORY_COLORS = {"float": "#C6DBEF", "bfloat": "#C6DBEF", "int": "#FDD0A2", "uint": "#FDD0A2", "bool": "#DDDDDD",
                    "complex": "#DADAEB", "": "#FFFFFF"}


def abbr(name: str) -> str:
    """float32 -> f32, bfloat16 -> bf16, uint8 -> u8, complex64 -> c64, bool -> b."""
    for long, short in (("bfloat", "bf"), ("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c"),
                        ("bool", "b")):
        if name.startswith(long):
            return short + name[len(long):]
    return name


def _category(name: str) -> str:
    return name.rstrip("0123456789") if name else ""


def plot_dtype_tables(dtypes: Sequence[Any] | None = None) -> Figure:
    """PromoteType(row, column) and CanCast(row -> column) as coloured matrices (opbase's own tables)."""
    dts = list(dtypes or BOOK_DTYPES)
    names, promote = D.promote_matrix(dts)
    _, cancast = D.cancast_matrix(dts)
    short = [abbr(n) for n in names]
    k = len(names)
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 5.2)
        a1, a2 = fig.subplots(1, 2)
        rgb = np.array([[to_rgb(_CATEGORY_COLORS.get(_category(c), "#FFFFFF")) for c in row] for row in promote])
        a1.imshow(rgb, interpolation="nearest")
        for i in range(k):
            for j in range(k):
                a1.text(j, i, abbr(promote[i][j]) if promote[i][j] else "-", ha="center", va="center",
                        fontsize=S.SMALL, fontweight="bold" if i == j else "normal")
        a1.set_title("PromoteType(row, column):\nthe dtype two inputs meet in", fontsize=S.FONT)
        a2.imshow(np.where(cancast[..., None], to_rgb("#A1D99B"), to_rgb("#FCBBA1")), interpolation="nearest")
        for i in range(k):
            for j in range(k):
                a2.text(j, i, "yes" if cancast[i, j] else "no", ha="center", va="center", fontsize=S.SMALL)
        a2.set_title("CanCast(row -> column):\nmay a result be written into out?", fontsize=S.FONT)
        for ax, (xl, yl) in ((a1, ("second input dtype", "first input dtype")),
                             (a2, ("to: the out dtype", "from: the result dtype"))):
            ax.set_xticks(range(k), short)
            ax.set_yticks(range(k), short)
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.tick_params(length=0)
            for sp in ax.spines.values():
                sp.set_visible(False)
        handles = [Patch(facecolor=_CATEGORY_COLORS[c], edgecolor=S.EDGE, label=lab) for c, lab in
                   (("float", "floating result"), ("int", "integer result"), ("bool", "bool result"),
                    ("complex", "complex result"), ("", "-: no common dtype"))]
        handles += [Patch(facecolor="#A1D99B", edgecolor=S.EDGE, label="CanCast: yes"),
                    Patch(facecolor="#FCBBA1", edgecolor=S.EDGE, label="CanCast: no (161002)")]
        add_legend(fig, True, a1, handles, ncols=4)
        fig.suptitle("opbase dtype rules (f = float, bf = bfloat, i = int, u = uint, b = bool, c = complex; "
                     "the number is bits)", fontsize=S.FONT)
    return fig


def support_figure(table: dict[str, Any]) -> Figure:
    """Which input dtypes each operator accepts on each SoC: a table of ``explore.tile_maps.support_table``
    (the ops' own GetDtypeSupportList; ``viz.plot_support`` computes and draws it)."""
    names, dts = table["socs"], [abbr(d) for d in table["dtypes"]]
    yes, zero_only, no = "#A1D99B", "#FFE699", "#F3F3F3"
    apis = table["apis"]
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 1.8 + 0.26 * len(names))
        axes = np.atleast_1d(fig.subplots(1, len(apis), sharey=True))
        handles = [Patch(facecolor=yes, edgecolor=S.EDGE, label="in the dtype support list")]
        for ax, api in zip(axes, apis, strict=True):
            counts = np.asarray(table[api["name"]], dtype=int)       # cases (scalar values) that accept the dtype
            level = np.where(counts == api["cases"], 2, np.where(counts > 0, 1, 0))
            pal = np.array([to_rgb(no), to_rgb(zero_only), to_rgb(yes)])
            ax.imshow(pal[level], aspect="auto", interpolation="nearest")
            cell, legend = api["partial"]
            for i in range(len(names)):
                for j in range(len(dts)):
                    ax.text(j, i, {2: "yes", 1: cell, 0: ""}[int(level[i, j])], ha="center", va="center",
                            fontsize=S.SMALL)
            ax.set_title(api["api"], fontsize=S.FONT)
            ax.set_xticks(range(len(dts)), dts)
            ax.set_xlabel("input dtype")
            ax.tick_params(length=0)
            for sp in ax.spines.values():
                sp.set_visible(False)
            if legend and (level == 1).any():
                handles.append(Patch(facecolor=zero_only, edgecolor=S.EDGE, label=legend))
        axes[0].set_yticks(range(len(names)), names)
        handles.append(Patch(facecolor=no, edgecolor=S.EDGE, label="rejected: 161002"))
        add_legend(fig, True, axes[0], handles, ncols=3)
        fig.suptitle("dtype support list per SoC (each operator's GetDtypeSupportList)", fontsize=S.FONT)
    return fig


# --- L0 graph ---------------------------------------------------------------------------------------------------
def plot_l0_graph(run: Any) -> Figure:
    """The L0 graph a call built (``run.nodes``): one box per node with its tensors, arrows from producer to
    consumer, a Cast in orange, a no-op node dashed, and under each box the reason it is there."""
    g = D.l0_graph(run)
    lines = sum(_l0_layout(g)[1]) if g["status"] == 0 and g["nodes"] else 6
    with S.rc():
        fig = S.new_figure(S.PAGE_WIDTH, 0.9 + _LINE_IN * lines)
        ax = fig.add_subplot()
        draw_l0_graph(g, ax, own=True)
    return fig


_LINE_IN = S.SMALL * 1.3 / 72          # one line of 8 pt text, in inches


def _l0_texts(g: dict[str, Any], pos: dict[int, tuple[float, int]]) -> dict[int, tuple[str, str]]:
    """(box text, wrapped reason) per node; a reason wraps to the room left and right of its node."""
    out = {}
    for i, n in enumerate(g["nodes"]):
        sources = "".join(f"{s} -> " for s in n["sources"])
        body = f"{n['op']}\n{sources}{', '.join(n['inputs'])} -> {', '.join(n['outputs'])}"
        if n["tiling"]:
            body += f"\n{n['tiling']}"
        x = 0.04 + 0.92 * pos[i][0]
        room_in = 2 * min(x, 1 - x) * (S.PAGE_WIDTH - 0.5)
        width = min(max(int(room_in * 72 / (S.SMALL * 0.58)), 24), 90)
        out[i] = (body, textwrap.fill(n["why"], width))
    return out


def _l0_layout(g: dict[str, Any]) -> tuple[dict[int, tuple[float, int]], list[float]]:
    """Node positions and the height of each layer in lines (box + reason + room for the arrow)."""
    pos = _layer_positions(g)
    texts = _l0_texts(g, pos)
    layers = max(layer for _, layer in pos.values()) + 1
    heights = [0.0] * layers
    for i, (body, why) in texts.items():
        layer = pos[i][1]
        heights[layer] = max(heights[layer], body.count("\n") + 1 + why.count("\n") + 1 + 2.6)
    return pos, heights


def _layer_positions(g: dict[str, Any]) -> dict[int, tuple[float, int]]:
    """x in [0, 1] and layer of every node: the first layer spread evenly, later nodes under the mean x of
    their producers (so arrows do not cut through other boxes), pushed apart when they collide."""
    nodes = g["nodes"]
    producers: dict[int, list[int]] = {}
    for i, j in g["edges"]:
        producers.setdefault(j, []).append(i)
    pos: dict[int, tuple[float, int]] = {}
    layers = max((n["layer"] for n in nodes), default=0) + 1
    for layer in range(layers):
        idx = [i for i, n in enumerate(nodes) if n["layer"] == layer]
        if layer == 0 or len(idx) > 1:
            xs = [(k + 0.5) / len(idx) for k in range(len(idx))]
            if layer > 0:
                idx.sort(key=lambda i: np.mean([pos[p][0] for p in producers.get(i, [])] or [0.5]))
        else:
            xs = [float(np.mean([pos[p][0] for p in producers.get(idx[0], [])] or [0.5]))]
        for i, x in zip(idx, xs, strict=True):
            pos[i] = (x, layer)
    return pos


def draw_l0_graph(g: dict[str, Any], ax: Axes, own: bool = False) -> None:
    """Draw :func:`.data.l0_graph`'s nodes as boxes in layers, or the failed call's status and message."""
    ax.set_axis_off()
    ax.set_title(wrap(g["title"]), fontsize=S.FONT, loc="left", color="black" if g["status"] == 0 else S.OVERFLOW)
    if g["status"] != 0 or not g["nodes"]:
        text = "\n".join(textwrap.fill(m, 90) for m in g["messages"]) or "no L0 graph: nothing was launched"
        ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=S.SMALL, transform=ax.transAxes,
                bbox={"boxstyle": "round", "fc": "#FDE0DD" if g["status"] else "#F0F0F0", "ec": S.OVERFLOW})
        return
    nodes = g["nodes"]
    pos, heights = _l0_layout(g)
    texts = _l0_texts(g, pos)
    tops = 1.0 - np.concatenate([[0.0], np.cumsum(heights)[:-1]]) / sum(heights)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    boxes, whys = {}, {}
    for i, n in enumerate(nodes):
        x, layer = pos[i]
        body, why = texts[i]
        edge = S.PIPE_COLORS["V"] if n["is_cast"] else ("black" if n["launches_kernel"] else "#888888")
        boxes[i] = ax.text(0.04 + 0.92 * x, tops[layer] - 0.3 / sum(heights), body, ha="center", va="top",
                           fontsize=S.SMALL, zorder=3,
                           bbox={"boxstyle": "round,pad=0.3", "fc": "#FFF1E6" if n["is_cast"] else "white",
                                 "ec": edge, "lw": 1.6 if n["is_cast"] else 1.0,
                                 "ls": "-" if n["launches_kernel"] else "--"})
        whys[i] = ax.annotate(why, (0.5, 0), xycoords=boxes[i], xytext=(0, -5),
                              textcoords="offset points", ha="center", va="top", fontsize=S.SMALL, style="italic",
                              color="#444444", zorder=3)
    for i, j in g["edges"]:
        ax.annotate("", (0.5, 1.0), xycoords=boxes[j], xytext=(0.5, 0.0), textcoords=whys[i],
                    arrowprops={"arrowstyle": "->", "lw": 0.9, "color": "#555555", "shrinkA": 2, "shrinkB": 4},
                    zorder=1)
    handles = [Patch(facecolor="#FFF1E6", edgecolor=S.PIPE_COLORS["V"], label="Cast: the dtypes differ"),
               Patch(facecolor="white", edgecolor="#888888", ls="--", label="no-op (nothing launched)"),
               Patch(facecolor="white", edgecolor="black", label="does work")]
    if own:
        add_legend(ax.figure, own, ax, handles, ncols=3)

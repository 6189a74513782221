"""viz.dag: the DAG figure draws the DAG's declared nodes, the template lanes count tiles in program order and the
template tile map covers the output as the op's core_ranges say; every figure renders on Agg."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from typing import Any

import numpy as np
import pytest
from matplotlib.text import Text

import ascend_lab as al
from ascend_lab import standalone as sa
from ascend_lab import viz
from ascend_lab.atvoss import CopyInBrc, CopyOut, Dag, Duplicate, In, Mul
from ascend_lab.explore import tile_maps
from ascend_lab.ops import registry
from ascend_lab.ops.relu_grad.op_kernel import main as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import main as tg
from ascend_lab.viz import dag as vd
from ascend_lab.viz.style import png_bytes

DAGS = [tg.dag(np.float32), tg.dag(np.float16), tg.dag(np.int8), rg.dag(np.float32), rg.dag(np.uint8)]


@pytest.mark.parametrize("dag", DAGS, ids=lambda d: d.name)
def test_graph_is_the_dags_nodes(dag: Dag) -> None:
    g = vd.dag_graph(dag)
    assert [n.label for n in g.nodes] == [n.label() for n in dag.funlist]
    assert [n.op for n in g.nodes] == [n.op for n in dag.funlist]
    assert [n.slot for n in g.nodes] == [r["slot"] for r in dag.table()]
    edges = {(dag.funlist.index(i), k) for k, n in enumerate(dag.funlist) for i in n.node_inputs}
    assert set(g.edges) == edges and len(g.edges) == len(edges)
    assert g.buffer_num == dag.buffer_num(True) and g.buffer_num_ub_broadcast == dag.buffer_num(False)
    assert g.temp_calc == dag.temp_calc
    for n in g.nodes:                   # a node sits below every node it reads
        assert all(g.nodes[i].layer < n.layer for i in n.inputs)
        assert n.pipe == {"CopyInBrc": "MTE2", "CopyOut": "MTE3"}.get(n.op, "V")


def test_no_op_casts_are_not_drawn() -> None:
    # float32's Casts vanish (IsCastNoOp): the figure has 7 boxes, half's has 10
    assert len(vd.dag_graph(tg.dag(np.float32)).nodes) == len(tg.dag(np.float32).funlist) == 7
    assert sum(n.op == "Cast" for n in vd.dag_graph(tg.dag(np.float16)).nodes) == 3


def test_a_learners_dag_is_drawn() -> None:
    x = CopyInBrc(In(0, np.float32), name="CopyInBrc x")
    dag = Dag([CopyOut(0, Mul(x, Duplicate(np.float32, 2.0)))], "Double")
    g = vd.dag_graph(dag)
    assert [n.op for n in g.nodes] == ["CopyInBrc", "Duplicate", "Mul", "CopyOut"]
    assert g.edges == [(0, 2), (1, 2), (2, 3)]
    with pytest.raises(TypeError, match="atvoss.Dag"):
        vd.dag_graph(x)


@pytest.mark.parametrize("dag", DAGS[:2] + DAGS[3:4], ids=lambda d: d.name)
def test_plot_dag_renders_every_node(dag: Dag) -> None:
    fig = viz.plot_dag(dag)
    texts = [t.get_text() for t in fig.axes[0].findobj(Text)]
    for k, node in enumerate(dag.funlist):
        assert sum(t.startswith(f"#{k} {node.label()}\n") for t in texts) == 1, node.label()
    assert sum(t.startswith("#") for t in texts) == len(dag.funlist)
    assert png_bytes(fig)[:4] == b"\x89PNG"


def test_template_lanes_keep_the_traces_tiles() -> None:
    run, meta = sa.pipeline_run("threshold_grad_v2_d", 10**8, "float32", "Ascend950PR", kernel="main", max_tiles=4)
    raw = viz.lanes(run)
    ln = vd.template_lanes(run)
    assert raw.tiles == ln.tiles == 4 == run.trace.cores[0].tiles    # the trace itself numbers tiles 0..3
    assert ln.bars == raw.bars
    assert [b.tile for b in ln.bars] == sorted(b.tile for b in ln.bars)   # a tile's work, then the next tile's
    copies = [b for b in ln.bars if b.pipe == "MTE3"]
    assert [b.tile for b in copies] == [0, 1, 2, 3]
    for b in ln.bars:                                # a tile's copies use its ping (even) or pong (odd) slots
        if b.pipe != "V":
            assert ("pong" in b.buffer) == (b.tile % 2 == 1), b
    ins = [b for b in ln.bars if b.pipe == "MTE2"]
    # double buffering: tile 1 is copied in while tile 0 is copied out
    assert min(b.start for b in ins if b.tile == 1) < copies[0].end
    assert "main kernel" in ln.title and "Ascend950PR" in ln.title
    assert png_bytes(vd.plot_template_pipeline(run, note=meta["note"]))[:4] == b"\x89PNG"
    hsg, _ = sa.pipeline_run("hard_sigmoid_grad", 4096, "float32", "Ascend950PR", kernel="main")
    with pytest.raises(TypeError, match="atvoss"):
        vd.template_lanes(hsg)


@pytest.mark.parametrize("case", [
    ("threshold_grad_v2_d", [(10**6,), (10**6,)], (10**6,), "float32", 201),
    ("relu_grad", [(10**6,), (10**6,)], (10**6,), "float32", 202),
    ("threshold_grad_v2_d", [(1024, 512), (1, 512)], (1024, 512), "float32", 1),
    ("threshold_grad_v2_d", [(1024, 512), (1, 512)], (1024, 512), "float16", 102),
], ids=lambda c: f"{c[0]}-{c[3]}-{c[4]}")
def test_template_tile_map_covers_the_output(case: tuple) -> None:
    op, shapes, out, dtype, mode = case
    kernel = tg if op == "threshold_grad_v2_d" else rg
    td = kernel.tiling_for_shapes(shapes, out, dtype, 64, 253952)
    n = int(np.prod(out))
    tm = tile_maps.template_tile_map(td, op, dtype, n)
    assert f"schMode {mode}" in tm.title
    covered = np.zeros(n, np.int32)
    for s in tm.segments:
        covered[s.start:s.end] += 1
    assert (covered == 1).all()                      # every output element written exactly once
    assert len(tm.cores) == td.blockDim
    full = {s.length for s in tm.segments if not s.tail}
    assert full == {tm.tile_elems}
    assert all(s.length < tm.tile_elems for s in tm.segments if s.tail)
    assert png_bytes(tile_maps.plot_template_tile_map(td, op, dtype, n))[:4] == b"\x89PNG"


def _assert_tiles_in_order(run: Any, counts: list[int]) -> None:
    """Every core's events carry tiles 0..n-1 in program order, n being that core's tile count in the tiling."""
    trace = run.trace
    cores = sorted({e.core for e in trace.events})
    assert cores == list(range(len(counts)))
    for c in cores:
        tiles = [e.tile for e in trace.events if e.core == c]
        assert None not in tiles, c
        assert tiles == sorted(tiles) and set(tiles) == set(range(counts[c])), (c, tiles)
        assert trace.cores[c].tiles == counts[c]          # one CopyOut per tile (one output)
    # the timeline viewer's slices carry the same tiles
    slices = [ev for ev in trace.to_chrome_trace()["traceEvents"] if ev["ph"] == "X"]
    for c in cores:
        tiles = [ev["args"]["tile"] for ev in slices if ev["pid"] == c]
        assert tiles == sorted(tiles) and set(tiles) == set(range(counts[c])), c


@pytest.mark.parametrize("op", ["threshold_grad_v2_d", "relu_grad"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", [3_000_001, 8_000_003])
def test_template_trace_numbers_tiles_like_the_loop(op: str, dtype: Any, n: int) -> None:
    """The one-dim schedules (201/202): tile i of a core -- its copies, every vector instruction (also a Duplicate
    before the tile's first DeQue) and its queue calls -- is tile i in the trace, not the ping/pong block's count."""
    rng = np.random.default_rng(n)
    g, x = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    run, _ = sa.run_kernel(op, g, x, soc="Ascend950PR", kernel="main", record=True)
    k = registry.get(op).kernel("main")
    counts = [r["tile_num"] for r in k.core_ranges(run.tiling)]
    assert max(counts) > 2                              # ping and pong both reused
    _assert_tiles_in_order(run, counts)


@pytest.mark.parametrize("shapes", [((4096, 512), (1, 512), np.float16), ((4096, 512), (1, 512), np.float32),
                                    ((3000, 7, 129), (1, 7, 1), np.float32)], ids=str)
def test_template_broadcast_trace_numbers_tiles_like_the_loop(shapes: tuple) -> None:
    """The broadcast schedules (UB-broadcast 102, NDDMA 1): the same numbering, one tile per UB loop."""
    gs, xs, dt = shapes
    rng = np.random.default_rng(1)
    g, x = rng.standard_normal(gs).astype(dt), rng.standard_normal(xs).astype(dt)
    r = al.threshold_backward(g, x, 0.1, soc="Ascend950PR", trace=True)
    assert r.ok, r.messages
    run = r.kernel_runs[0]
    k = registry.get("threshold_grad_v2_d").kernel("main")
    counts = [c["tile_num"] for c in k.core_ranges(run.tiling, dt)]
    assert max(counts) > 2
    _assert_tiles_in_order(run, counts)

"""The numbers behind the figures (ascend_lab.viz.data), checked against the tiling and the trace.

Where the expectation comes from: the tiling numbers are derived by hand in the comments (cann_facts §2.1,
§4.1 formulas), the rest is recomputed here independently from the op_host ``core_ranges``, the trace
events, PromoteType/CanCast and GetDtypeSupportList -- never read back from the function under test.
"""

from __future__ import annotations

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import golden, tiling
from ascend_lab import standalone as sa
from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.base import platform
from ascend_lab.dtypes import as_acl_dtype
from ascend_lab.explore import tile_maps as TM
from ascend_lab.live.tile_map import TileSegment
from ascend_lab.opdev.data_type_utils import CanCast, PromoteType
from ascend_lab.ops.hard_sigmoid_grad import op_api as hs_api
from ascend_lab.ops.hard_sigmoid_grad import op_host as hs_host
from ascend_lab.ops.threshold_grad_v2_d import op_api as th_api
from ascend_lab.ops.threshold_grad_v2_d import op_host as tg_host
from ascend_lab.viz import data as D

UB_A2 = 196608
TMP_UB_OFFSET_A2 = 184 * 1024          # kernel_flavours §4: where Select modes 1/2 write the library's scratch
RESERVED_A2 = UB_A2 - TMP_UB_OFFSET_A2  # 8192 B a plan of a kernel issuing such a Select leaves free


# --- tile map ---------------------------------------------------------------------------------------------------
def _contiguous(segments: list[TileSegment]) -> tuple[int, int]:
    segs = sorted(segments, key=lambda s: s.start)
    for a, b in zip(segs, segs[1:], strict=False):
        assert a.end == b.start, f"gap or overlap between {a} and {b}"
    return segs[0].start, segs[-1].end


def test_tile_map_hard_sigmoid_grad_small_last_core():
    # N = 100 fp32 on 8 cores: blockFactor = ceil(100/8) = 13, blockDim = ceil(100/13) = 8, the last core
    # gets 100 - 7*13 = 9; ubFactor = FloorAlign((196608 // 4) // 8, 32) = 6144, so one (tail) tile per core
    td = tiling.hard_sigmoid_grad(100, "float32", core_num=8, ub_size=UB_A2)
    tm = TM.tile_map(td)
    assert (td.blockFactor, td.blockDim, td.ubFactor) == (13, 8, 6144)
    assert len(tm.segments) == sum(len(c["tiles"]) for c in hs_host.core_ranges(td)) == 8
    assert _contiguous(tm.segments) == (0, 100)
    assert [s.kind for s in tm.segments] == ["big"] * 7 + ["small"]
    assert tm.segments[-1].length == 9
    assert all(s.tail for s in tm.segments)
    assert tm.padding is None and tm.dtype == "float32" and tm.itemsize == 4
    assert "blockFactor = 13" in tm.labels["big"] and "9 elements" in tm.labels["small"]
    assert "ubFactor = 6144" in tm.title and "blockDim = 8" in tm.title


def test_tile_map_hard_sigmoid_grad_many_tiles_matches_core_ranges():
    td = tiling.hard_sigmoid_grad(1_000_003, "float16", core_num=40, ub_size=UB_A2)
    tm = TM.tile_map(td)
    ranges = hs_host.core_ranges(td)
    assert len(tm.segments) == sum(c["tile_num"] for c in ranges)
    assert _contiguous(tm.segments) == (0, 1_000_003)
    for seg in tm.segments:
        c = ranges[seg.core]
        assert (seg.tile, seg.start, seg.length) in [(i, s, n) for i, s, n in c["tiles"]]
        assert seg.tail == (seg.tile == c["tile_num"] - 1 and seg.length < td.ubFactor)


def test_tile_map_threshold_padding_past_the_end():
    # N = 1000 fp16: 2000 B -> 2048 B = 8 blocks of 256 B; a tile of (768 // 7) = 109 blocks holds all:
    # one core reads and writes 1024 elements, 24 = 48 B past the logical end
    td = tiling.threshold_grad_v2_d(1000, "float16", core_num=4, ub_size=UB_A2)
    tm = TM.tile_map(td, "float16", 1000)
    assert td.blockDim == 1 and tm.padded_end == 1024
    assert tm.padding == (1000, 1024)
    assert "24 elements = 48 B" in tm.labels["padding"]
    with pytest.raises(ValueError, match="dtype"):
        TM.tile_map(td)


def test_tile_map_threshold_big_and_small_cores():
    # N = 300001 int8: ceil(300001 / 256) = 1172 blocks over 40 cores: e = 29, tailBlockNum = 12 big cores
    # of 30 blocks (7680 elements), 28 small ones of 29 blocks (7424); the end is padded to 300032
    td = tiling.threshold_grad_v2_d(300_001, "int8", core_num=40, ub_size=UB_A2)
    tm = TM.tile_map(td, "int8", 300_001)
    kinds = [c["kind"] for c in tm.cores]
    assert kinds.count("big") == 12 == td.tailBlockNum and kinds.count("small") == 28
    assert {c["data_num"] for c in tm.cores if c["kind"] == "big"} == {7680}
    assert {c["data_num"] for c in tm.cores if c["kind"] == "small"} == {7424}
    assert _contiguous(tm.segments) == (0, 300_032)
    assert tm.padding == (300_001, 300_032)
    assert len(tm.segments) == sum(c["tile_num"] for c in tg_host.core_ranges(td, "int8", 300_001))
    assert f"bigCoreDataNum = {td.bigCoreDataNum}" in tm.labels["big"]
    assert f"smallTailDataNum = {td.smallTailDataNum}" in tm.labels["small"]


@pytest.mark.parametrize(("kernel", "padding"), [
    # the experimental ThresholdGradV2D (registered for 910B) copies whole 256-byte blocks with a plain DataCopy:
    # 1000 fp16 = 2000 B are read and written as 2048 B = 1024 elements (cann_facts §4.1/§4.2)
    ("experimental", (1000, 1024)),
    # the stock TBE kernel moves exact byte counts (kernel_flavours §5.5: no GM overrun), so no padding
    (None, None),
])
def test_tile_map_from_a_run_takes_dtype_and_n(kernel, padding):
    x = np.linspace(-3, 3, 1000).astype(np.float16)
    run = al.threshold_backward(x, x, 0.5, soc="Ascend910B4", kernel=kernel)
    assert run.kernel == (kernel or "tbe")
    tm = TM.tile_map(run)
    assert tm.dtype == "float16" and tm.n == 1000 and tm.padding == padding


# --- UB bar ------------------------------------------------------------------------------------------------------
def test_ub_bar_fits():
    plan = sa.ub_plan("hard_sigmoid_grad", 100_000, "float16", "Ascend910B4")
    bar = D.ub_bar(plan)
    assert bar.capacity == UB_A2 and bar.reserved == RESERVED_A2 and bar.usable == UB_A2 - RESERVED_A2
    assert bar.overflow == 0 and bar.used == plan["used"] and bar.free == plan["free"]
    below = [s for s in bar.segments if s.kind != "reserved"]
    assert _covered(below) == (0, bar.usable)
    assert [s.name for s in bar.segments if s.kind in ("VECIN", "VECOUT", "VECCALC")] == \
        [b.name for b in sorted(plan["buffers"], key=lambda b: b.offset)]
    # 3 queues x BUFFER_NUM 2 blocks of ubFactor * 2 B, then tmpBuf and maskBuf (op_kernel Init)
    queue = [s for s in bar.segments if s.kind in ("VECIN", "VECOUT")]
    assert len(queue) == 6 and {s.size for s in queue} == {plan["tiling"].ubFactor * 2}
    assert f"{bar.free:,} B free" in bar.title and "BUFFER_NUM = 2" in bar.title


def _covered(segs: list[D.UBSegment]) -> tuple[int, int]:
    segs = sorted(segs, key=lambda s: s.start)
    for a, b in zip(segs, segs[1:], strict=False):
        assert a.end == b.start
    return segs[0].start, segs[-1].end


def test_ub_bar_over_capacity_is_marked():
    plan = sa.ub_plan("threshold_grad_v2_d", 100_000, "int8", "Ascend910B4", buffer_num=4)
    bar = D.ub_bar(plan)
    assert bar.overflow == plan["overflow"] > 0
    assert sum(s.size for s in bar.segments if s.kind == "overflow") == bar.overflow
    assert all(s.start >= bar.usable for s in bar.segments if s.kind == "overflow")
    assert f"OVER CAPACITY by {bar.overflow:,} B" in bar.title


def test_ub_bar_reserve_follows_the_select_scratch_offset():
    # ThresholdGradV2D issues Select mode 1: what it must leave free is everything from TMP_UB_OFFSET up. A what-if
    # UB smaller than the offset has nothing there to keep (the old model took 8448 B of any UB, here all of it).
    plan = sa.ub_plan("threshold_grad_v2_d", 100, "float32", "Ascend910B4", ub_size=2048)
    bar = D.ub_bar(plan)
    assert bar.reserved == 0 and bar.usable == bar.capacity == 2048 and bar.overflow == 0 < bar.used
    plan = sa.ub_plan("threshold_grad_v2_d", 100, "float32", "Ascend910B4", ub_size=190_000)
    assert D.ub_bar(plan).reserved == 190_000 - TMP_UB_OFFSET_A2


def test_ub_bar_of_a_kernel_without_select_has_no_reserve():
    # the experimental ReluGrad int32 path is Duplicate/Min/Max/Mul only: its 195072 B plan (kernel_flavours §4,
    # ub 196352 as the tiling sees it) fits the whole 192 KB UB, run or planned
    plan = sa.ub_plan("relu_grad", 10**6, "int32", "Ascend910B4", kernel="experimental")
    bar = D.ub_bar(plan)
    assert bar.used == 195_072 and bar.reserved == 0 and bar.usable == UB_A2 and bar.overflow == 0
    assert not [s for s in bar.segments if s.kind == "reserved"]
    x = np.arange(-3000, 3000, dtype=np.int32)
    run, _ = sa.run_kernel("relu_grad", x, x, kernel="experimental", core_num=1)
    assert run.trace.ub_reserved == 0 and D.ub_bar(run).reserved == 0


def test_ub_bar_from_trace_equals_plan():
    x = np.ones(5000, np.float32)
    run, _ = sa.run_kernel("hard_sigmoid_grad", x, x, core_num=4)
    plan = sa.ub_plan("hard_sigmoid_grad", 5000, "float32", "Ascend910B4", core_num=4)
    a, b = D.ub_bar(run), D.ub_bar(plan)
    assert a.segments == b.segments and a.used == b.used and a.buffer_num == 2


# --- occupancy ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def multi_tile_run():
    """HardSigmoidGrad fp32 on one core with a 16 KB UB (950, no reserve): ubFactor = 512, 5 tiles."""
    run, note = sa.pipeline_run("hard_sigmoid_grad", 2300, "float32", "Ascend950PR", ub_size=16384, core_num=1)
    return run


def test_occupancy_curve_recomputed_from_events(multi_tile_run):
    trace = multi_tile_run.trace
    occ = D.occupancy(multi_tile_run)
    allocs = [e for e in trace.events if e.pipe == "S" and e.instr == "AllocTensor"]
    frees = [e for e in trace.events if e.pipe == "S" and e.instr == "FreeTensor"]
    assert len(occ.intervals) == len(allocs) == len(frees) == 3 * 5
    static = sum(b.size for b in trace.ub_layout[0] if b.kind == "VECCALC")
    assert occ.static_bytes == static
    for t, used in zip(occ.times, occ.used, strict=True):
        live = sum(a.ub[1] - a.ub[0] for a, f in _pairs(allocs, frees) if a.start <= t < f.start)
        assert used == static + live
    assert np.allclose(sum(occ.by_kind.values()), occ.used)
    assert occ.peak <= max(b.offset + b.size for b in trace.ub_layout[0])
    assert occ.makespan == trace.cores[0].cycles


def _pairs(allocs, frees):
    """Alloc/Free events matched per buffer, in program order."""
    pending: dict[str, list] = {}
    for a in allocs:
        pending.setdefault(a.buffer, []).append(a)
    out = []
    for f in frees:
        out.append((pending[f.buffer].pop(0), f))
    return out


# --- lanes -------------------------------------------------------------------------------------------------------
def test_lanes_one_bar_per_copy_and_vector_event(multi_tile_run):
    trace = multi_tile_run.trace
    ln = D.lanes(multi_tile_run)
    events = [e for e in trace.events if e.pipe in ("MTE2", "V", "MTE3")]
    assert [(b.pipe, b.instr, b.start, b.end) for b in ln.bars] == [(e.pipe, e.instr, e.start, e.end) for e in events]
    assert all(b.tile is not None for b in ln.bars)
    assert ln.tiles == 5 == sum(1 for e in events if e.pipe == "MTE3")
    for pipe in ("MTE2", "V", "MTE3"):
        bars = [b for b in ln.bars if b.pipe == pipe]
        assert all(a.end <= b.start + 1e-9 for a, b in zip(bars, bars[1:], strict=False))
        assert ln.busy[(0, pipe)] == pytest.approx(trace.cores[0].busy[pipe])
    # a tile-less vector instruction (Adds on tmpBuf) belongs to the tile of the instruction before it
    adds = [b for b in ln.bars if b.instr == "Adds"]
    assert [b.tile for b in adds] == list(range(5))
    assert ln.makespan[0] == trace.cores[0].cycles and "BUFFER_NUM = 2" in ln.title


def test_pipeline_run_equals_run_kernel_when_not_scaled():
    rng = np.random.default_rng(1)
    n = 6000
    run, note = sa.pipeline_run("hard_sigmoid_grad", n, "float16", "Ascend910B4", core_num=2, max_tiles=None)
    g = np.resize(rng.uniform(-2, 2, 10).astype(np.float16), n)
    ref, _ = sa.run_kernel("hard_sigmoid_grad", g, g, soc="Ascend910B4", core_num=2, cores=[0])
    assert note["n_sim"] == n
    key = [(e.pipe, e.instr, e.tile, e.start, e.end) for e in ref.trace.events]
    assert [(e.pipe, e.instr, e.tile, e.start, e.end) for e in run.trace.events] == key
    assert run.trace.cycles == ref.trace.cycles


def test_pipeline_run_scales_down_to_max_tiles():
    run, note = sa.pipeline_run("threshold_grad_v2_d", 10**8, "float32", "Ascend910B4", max_tiles=3)
    td, td_sim = note["tiling"], note["tiling_sim"]
    assert td_sim.tileDataNum == td.tileDataNum and td_sim.blockDim == td.blockDim
    assert note["n_sim"] == td.blockDim * 3 * td.tileDataNum < 10**8
    assert D.lanes(run).tiles == 3 and "first 3 tiles" in note["note"]


def test_buffer_num_study_double_buffering_helps(multi_tile_run):
    st = sa.buffer_num_study("hard_sigmoid_grad", 2300, "float32", "Ascend950PR", ub_size=16384, core_num=1)
    assert st["cycles"][2] == multi_tile_run.trace.cores[0].cycles
    assert st["speedup"] == pytest.approx(st["cycles"][1] / st["cycles"][2]) and st["speedup"] > 1.0
    assert D.lanes(st["runs"][1]).buffer_num == 1 and D.lanes(st["runs"][2]).buffer_num == 2


# --- mask steps ---------------------------------------------------------------------------------------------------
def test_mask_steps_hard_sigmoid_grad_two_repeats():
    g = np.linspace(-1, 1, 128).astype(np.float32)
    x = np.linspace(-4, 4, 128).astype(np.float32)
    run, out = sa.run_kernel("hard_sigmoid_grad", g, x, snapshot=True, core_num=1)
    rows = D.mask_steps(run)
    assert [r.instr for r in rows] == ["DataCopyPad", "DataCopyPad", "Muls", "Adds", "Muls", "CompareScalar",
                                       "Select", "CompareScalar", "Select", "DataCopyPad"]
    assert [r.kind for r in rows] == ["input", "input", "value", "value", "value", "mask", "value", "mask",
                                      "value", "output"]
    assert {r.repeat for r in rows} == {64}                 # 256 B / 4 B
    tmp = (x * np.float32(hs_host.ALPHA_EXPERIMENTAL)).astype(np.float32) + np.float32(0.5)
    assert np.array_equal(rows[3].values, tmp)
    assert np.array_equal(rows[5].values, tmp > 0) and np.array_equal(rows[7].values, tmp < 1)
    assert np.array_equal(rows[-1].values, golden.hard_sigmoid_grad(g, x)) and np.array_equal(out, rows[-1].values)
    assert "Adds float 0.5" in rows[3].detail and "np." not in rows[3].detail


def test_mask_steps_threshold_fp16_and_needs_snapshot():
    f = np.linspace(-2, 2, 128).astype(np.float16)
    run, _ = sa.run_kernel("threshold_grad_v2_d", f, f, threshold=0.5, snapshot=True, core_num=1)
    rows = D.mask_steps(run)
    assert [r.instr for r in rows] == ["DataCopy", "DataCopy", "CompareScalar", "Select", "DataCopy"]
    assert rows[2].repeat == 128 and np.array_equal(rows[2].values, f > np.float16(0.5))
    plain, _ = sa.run_kernel("threshold_grad_v2_d", f, f, threshold=0.5, core_num=1)
    with pytest.raises(ValueError, match="snapshot"):
        D.mask_steps(plain)


# --- dtype tables -------------------------------------------------------------------------------------
def test_promote_and_cancast_matrices():
    names, cells = D.promote_matrix()
    cnames, can = D.cancast_matrix()
    assert names == cnames
    dts = [as_acl_dtype(n) for n in names]
    for i, a in enumerate(dts):
        assert cells[i][i] == a.short
        for j, b in enumerate(dts):
            p = PromoteType(a, b)
            assert cells[i][j] == ("" if p == DT.ACL_DT_UNDEFINED else p.short)
            assert can[i, j] == CanCast(a, b)


def test_support_table_follows_get_dtype_support_list():
    before = (platform.current_soc().name, th_api.thresholdVal_)
    table = TM.support_table()
    assert table["socs"] == platform.socs()
    for i, soc in enumerate(table["socs"]):
        with platform.soc(soc):
            hs = hs_api.GetDtypeSupportList()
        for j, d in enumerate(table["dtypes"]):
            assert table["HardsigmoidBackward"][i, j] == (as_acl_dtype(d) in hs)
    i950, i910a = table["socs"].index("Ascend950PR"), table["socs"].index("Ascend910A")
    j64, jbf = table["dtypes"].index("int64"), table["dtypes"].index("bfloat16")
    assert table["ThresholdBackward"][i950, j64] == 1          # int64 only when the threshold is 0
    assert table["ThresholdBackward"][i910a, jbf] == 0 and not table["HardsigmoidBackward"][i910a, jbf]
    assert (platform.current_soc().name, th_api.thresholdVal_) == before


# --- L0 graph and validation ---------------------------------------------------------------------------
def test_l0_graph_cast_and_edges():
    run = al.hardsigmoid_backward(np.zeros(4, np.float16), np.zeros(4, np.float32))
    g = D.l0_graph(run)
    assert [n["op"] for n in g["nodes"]] == run.graph
    casts = [n for n in g["nodes"] if n["is_cast"]]
    assert len(casts) == 1 and casts[0]["inputs"] == ["float16[4]"] and casts[0]["outputs"] == ["float32[4]"]
    assert "1 Cast" in g["title"]
    kernel = run.graph.index("HardSigmoidGrad")
    assert sorted(i for i, j in g["edges"] if j == kernel) == [run.graph.index("Cast"), 2]
    assert [n["launches_kernel"] for n in g["nodes"]] == [n.launches_kernel for n in run.nodes]
    same = D.l0_graph(al.hardsigmoid_backward(np.zeros(4, np.float32), np.zeros(4, np.float32)))
    assert not any(n["is_cast"] for n in same["nodes"])


def test_l0_graph_of_a_failed_call():
    run = al.hardsigmoid_backward(np.zeros(4, np.int8), np.zeros(4, np.float32))
    g = D.l0_graph(run)
    assert g["status"] == 161002 and g["nodes"] == [] and "161002" in g["title"] and g["messages"]


@pytest.mark.parametrize("kw, status, fragment", [
    ({"grad_dtype": "int8", "self_dtype": "int8"}, 161002, "dtype support list"),
    ({"null": ("grad",)}, 161001, "gradOutput should not be nullptr"),
    ({"out_dtype": "int32"}, 161002, "can't cast"),
    ({"grad_shape": (1,) * 9, "self_shape": (1,) * 9}, 161002, "dim num"),
    ({"op": "threshold_backward", "null": ("threshold",)}, 161001, "threshold should not be nullptr"),
    ({"op": "threshold_backward", "grad_dtype": "float16"}, 161002, "should be the same"),
    ({"op": "threshold_backward", "grad_shape": (4,)}, 161002, "can not broadcast"),
    ({"op": "threshold_backward", "grad_dtype": "int64", "self_dtype": "int64", "soc": "Ascend910B4",
      "threshold": 0.0}, 161002, "dtype support list"),
])
def test_validation_case_reports_the_check(kw, status, fragment):
    r = al.validation_case(**kw)
    assert r["status"] == status and fragment in r["check"] and str(status) in r["meaning"]
    assert r["api"].endswith("GetWorkspaceSize") and r["graph"] == []


def test_validation_case_success_graphs():
    assert al.validation_case(grad_dtype="float16")["graph"].count("Cast") == 1
    relu = al.validation_case(op="threshold_backward", threshold=0.0)
    assert relu["status"] == 0 and "ReluGrad" in relu["graph"]
    i64 = al.validation_case(op="threshold_backward", grad_dtype="int64", self_dtype="int64", threshold=0.0,
                            soc="Ascend950PR")
    assert i64["status"] == 0 and i64["check"] == ""
    with pytest.raises(ValueError, match="null"):
        al.validation_case(null=("bias",))

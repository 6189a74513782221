"""The TBE model: the DSL's dtype rules, the elementwise schedule (worked by hand below), and the three legacy
TBE kernels bit-exact against oracles written from ``kernel_flavours.md`` §5 (``ascend_lab.golden``).

Which SoC has ``tik.vcopy`` these tests state from the CANN 8.1.RC1 inis in their own table (:data:`VCOPY`),
independently of the simulator's catalogue.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import golden, tbe
from ascend_lab.ascendc import VECIN, LocalTensor, TPipe, TQue
from ascend_lab.ascendc.launcher import launch as ascendc_launch
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16
from ascend_lab.ops import registry
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import tbe as hsg
from ascend_lab.ops.kernel_args import gm_from_array
from ascend_lab.ops.relu_grad.op_kernel import tbe as rg
from ascend_lab.ops.standalone import run_kernel
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import tbe as tg
from ascend_lab.tbe import dsl, lowering

#: ``api_check_support("tik.vcopy")`` = the ini lists Intrinsic_vcopy (CANN 8.1.RC1 data/platform_config):
#: Ascend910B4.ini and Ascend910_9392.ini have ``128=Intrinsic_vcopy``; Ascend910A.ini and Ascend310P3.ini have none.
VCOPY = {"Ascend910A": False, "Ascend910B4": True, "Ascend910_9392": True, "Ascend310P3": False}
#: bf16 reaches the TBE kernels only where aclnn allows it (§5.6): 910B and 910_93.
BF16_SOCS = ("Ascend910B4", "Ascend910_9392")
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _assert_bits(out: np.ndarray, ref: np.ndarray, *, any_nan: bool = False) -> None:
    """Bit for bit. ``any_nan``: where both are NaN any payload passes -- for ReluGrad's ``g * mask``, where a
    NaN grad times a NaN mask returns one of the two NaNs, and which one is not documented."""
    assert out.dtype == ref.dtype and out.shape == ref.shape
    u = np.dtype(f"u{out.dtype.itemsize}")
    differ = np.ascontiguousarray(out).view(u) != np.ascontiguousarray(ref).view(u)
    if any_nan and out.dtype.kind in "fV":
        differ &= ~(np.isnan(out.astype(np.float32)) & np.isnan(ref.astype(np.float32)))
    bad = np.flatnonzero(differ)
    assert bad.size == 0, f"{bad.size} mismatches, first at {bad[:5]}: {out[bad[:5]]} vs {ref[bad[:5]]}"


def _all_patterns(dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """x: every 16-bit pattern once; grad: the same patterns in a fixed shuffled order (infs and NaNs included)."""
    x = np.arange(2**16, dtype=np.uint16).view(dt)
    g = np.random.default_rng(16).permutation(np.arange(2**16, dtype=np.uint16)).view(dt)
    return g, x


# --- the schedule, worked by hand ------------------------------------------------------------------------------
def _tiling(op_tiling, n, dtype, soc, **attrs):
    info = get_soc(soc)
    return op_tiling(n, dtype, info.vector_core_num, info.core_mem_size_ub, **attrs)


# The compile-time count and the ubFactor it leads to are worked by hand in tests/test_tbe_storage_bound.py.


def test_schedule_empty_and_core_ranges():
    td = _tiling(rg.tiling, 0, "float32", "Ascend910B4")
    assert (td.blockDim, td.tilingKey, td.dim0) == (1, 2**31 - 1, 0)
    td = _tiling(rg.tiling, 100_000, "float16", "Ascend910B4")
    ranges = tbe.core_ranges(td, "float16")
    assert sum(r["data_num"] for r in ranges) == 100_000
    assert all(r["offset"] % 128 == 0 and r["padding"] == 0 for r in ranges)
    assert ranges[-1]["padded_end"] == 100_000


def test_schedule_refuses_other_dtypes():
    with pytest.raises(ValueError, match="supports"):
        _tiling(hsg.tiling, 10, "int32", "Ascend910B4")
    with pytest.raises(ValueError, match="supports"):
        _tiling(rg.tiling, 10, "int64", "Ascend910B4")


# --- the DSL ---------------------------------------------------------------------------------------------------
def test_dsl_dtype_rules():
    x = dsl.placeholder((8,), "int32", "x")
    with pytest.raises(TypeError, match="vcmpsel supports"):
        dsl.vcmpsel(x, 1, "gt", x, 0)
    with pytest.raises(TypeError, match="share one dtype"):
        dsl.vmul(dsl.placeholder((8,), "float16"), dsl.placeholder((8,), "float32"))
    with pytest.raises(TypeError, match="vabs supports"):
        dsl.vabs(x)
    with pytest.raises(TypeError, match="condition"):
        dsl.vsel(dsl.placeholder((8,), "float16"), 0, dsl.placeholder((8,), "float16"))
    h = dsl.placeholder((8,), "float16")
    assert float(dsl.vmuls(h, 1 / 6).args[1]) == 0.1666259765625      # the scalar takes the tensor's dtype
    assert dsl.vcmp(h, 0, "le", "bit").dtype == "uint1"
    assert dsl.vcmp(h, 0, "le").dtype == "bool"


def test_cast_to_routes_and_truncation():
    i8 = dsl.placeholder((8,), "int8")
    up = dsl.cast_to(i8, "float32")
    assert (up.dtype, up.inputs[0].dtype, up.inputs[0].inputs[0] is i8) == ("float32", "float16", True)
    down = dsl.cast_to(up, "int8")
    assert down.attrs["round"] == "CAST_TRUNC" and down.inputs[0].attrs["round"] == "CAST_RINT"
    assert dsl.cast_to(dsl.placeholder((8,), "float32"), "int32").attrs["round"] == "CAST_TRUNC"
    h = dsl.placeholder((8,), "float16")
    not_integral = dsl.cast_to(h, "int8", f1628IntegerFlag=False)
    assert not_integral.inputs[0].op == "vadds" and float(not_integral.inputs[0].args[1]) == -0.5


def test_lowering_refuses_tensor_tensor_min():
    with dsl.compile_for("Ascend910A"):
        a, b = dsl.placeholder((8,), "float16", "a"), dsl.placeholder((8,), "float16", "b")
        c = dsl.Compute("m", (a, b), dsl.vmin(a, b))
    with pytest.raises(NotImplementedError, match="Min/Max"):
        tbe.build(c, "Ascend910A")


def test_per_soc_paths_in_the_descriptions():
    with dsl.compile_for("Ascend910A"):
        assert dsl.api_check_support("tik.vcopy") is False
        ops_a = [t.op for t in tg.describe("float32").nodes]
        relu_a = [t.op for t in rg.describe("float16").nodes]
    with dsl.compile_for("Ascend910B4"):
        ops_b = [t.op for t in tg.describe("float32").nodes]
        relu_b = [t.op for t in rg.describe("float16").nodes]
    assert "vcmpsel" in ops_a and "vsel" in ops_b
    assert "vmin" in relu_a and "vsel" in relu_b
    with pytest.raises(ValueError, match="built for"):
        with dsl.compile_for("Ascend950PR"):
            pass


# --- kernels vs oracles -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("soc", list(VCOPY))
def test_exhaustive_fp16(soc):
    g, x = _all_patterns(F16)
    _, out = run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="tbe", alpha=hsg.ALPHA_EXPERIMENTAL, record=False)
    _assert_bits(out, golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=hsg.ALPHA_EXPERIMENTAL))
    for thr in (0.5, -1.25, 65504.0):
        _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=thr, record=False)
        _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, thr, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_exhaustive_bf16(soc):
    g, x = _all_patterns(bfloat16)
    _, out = run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="tbe", alpha=hsg.ALPHA_EXPERIMENTAL, record=False)
    _assert_bits(out, golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=hsg.ALPHA_EXPERIMENTAL))
    _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=0.3, record=False)
    _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, 0.3, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)


def _fp32_cases(n: int = 30_000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(32)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0, -3.0, np.nextafter(3, 0), 1e-45, -1e-45,
                        2.0**-126, 2.0**-127, 0.5, np.nextafter(0.5, 1), 1.0], dtype=F32)
    x = np.concatenate([np.repeat(special, len(special)), (rng.standard_normal(n) * 4).astype(F32)])
    g = np.concatenate([np.tile(special, len(special)), rng.standard_normal(n).astype(F32)])
    return g, x


@pytest.mark.parametrize("soc", list(VCOPY))
def test_fp32_specials_and_random(soc):
    g, x = _fp32_cases()
    _, out = run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="tbe", alpha=hsg.ALPHA_EXPERIMENTAL, record=False)
    _assert_bits(out, golden.hard_sigmoid_grad_legacy_tbe(g, x, alpha=hsg.ALPHA_EXPERIMENTAL))
    _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=0.5, record=False)
    _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, 0.5, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3"])
def test_exhaustive_int8_pairs(soc, dt):
    vals = np.arange(256, dtype=np.uint8).view(dt)
    g, x = (a.ravel() for a in np.meshgrid(vals, vals))          # every (grad, feature) pair
    for thr in (0.0, 2.5, -7.0):
        _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=thr, record=False)
        _assert_bits(out, golden.threshold_grad_v2_d_legacy_tbe(g, x, thr, vcopy=VCOPY[soc]))
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)
    np.testing.assert_array_equal(out, np.where(x > 0, g, 0).astype(dt))


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend910B4"])
def test_int32_beyond_two_to_the_24(soc):
    info = np.iinfo(np.int32)
    edge = np.array([info.min, info.max, 2**24 + 1, -(2**24) - 1, 16777217, 0, 1, -1, 3], dtype=np.int32)
    rng = np.random.default_rng(3)
    g = np.concatenate([np.repeat(edge, edge.size), rng.integers(info.min, info.max, 5000, dtype=np.int32)])
    x = np.concatenate([np.tile(edge, edge.size), rng.integers(info.min, info.max, 5000, dtype=np.int32)])
    _, out = run_kernel("threshold_grad_v2_d", g, x, soc=soc, kernel="tbe", threshold=16777216.0, record=False)
    ref = golden.threshold_grad_v2_d_legacy_tbe(g, x, 16777216.0, vcopy=VCOPY[soc])
    _assert_bits(out, ref)
    assert not np.array_equal(ref, np.where(x > 16777216, g, 0))     # the fp32 route is inexact above 2^24
    _, out = run_kernel("relu_grad", g, x, soc=soc, kernel="tbe", record=False)
    _assert_bits(out, golden.relu_grad_legacy_tbe(g, x, vcopy=VCOPY[soc]), any_nan=True)
    np.testing.assert_array_equal(out, np.where(x > 0, g, 0))        # the int32 min/max/mul path is exact


def test_nan_and_inf_per_soc():
    g = np.array([1.0, np.inf, -2.0, 5.0], dtype=F32)
    x = np.array([np.nan, -1.0, -1.0, 3.0], dtype=F32)
    _, a = run_kernel("threshold_grad_v2_d", g, x, soc="Ascend910A", kernel="tbe", threshold=0.0)
    _, b = run_kernel("threshold_grad_v2_d", g, x, soc="Ascend910B4", kernel="tbe", threshold=0.0)
    assert a[0] == 0 and b[0] == 1.0                                  # NaN -> 0 (vcmpsel gt) vs NaN -> g (vsel)
    _, ra = run_kernel("relu_grad", g, x, soc="Ascend910A", kernel="tbe")
    _, rb = run_kernel("relu_grad", g, x, soc="Ascend910B4", kernel="tbe")
    assert np.isnan(ra[1]) and rb[1] == 0                              # inf * 0 on the min/max/mul path
    assert np.signbit(ra[2]) and not np.signbit(rb[2])                 # -2 * 0 = -0 there, +0 from vsel
    _, h = run_kernel("hard_sigmoid_grad", g, x, soc="Ascend910A", kernel="tbe")
    assert h[0] == 0 and h[3] == 0 and h[1] == np.inf                  # NaN x -> 0; x = 3 -> 0 (|x| < 3)


# --- trace, UB layout, registry --------------------------------------------------------------------------------
def test_trace_and_ub_layout():
    g, x = _fp32_cases(200_000)
    run, _ = run_kernel("hard_sigmoid_grad", g, x, soc="Ascend910B4", kernel="tbe", record=True)
    pipes = {e.pipe for e in run.trace.events}
    assert {"MTE2", "V", "MTE3"} <= pipes
    assert {e.instr for e in run.trace.events if e.pipe == "V"} >= {"Muls", "CompareScalar", "Select"}
    layout = run.trace.ub_layout[0]
    names = [b.name for b in layout]
    td = run.tiling
    blocks = 2 if tbe.schedule.double_buffered(td) else 1
    assert sum(n.startswith("inQueue_grad_input[") for n in names) == blocks
    assert any(n.startswith("outQueue[") for n in names) and "mask0" in names
    used = max(b.offset + b.size for b in layout)
    assert used <= get_soc("Ascend910B4").ub_size - 8 * 1024 - 256
    assert run.cycles > 0 and not run.warnings


def test_registry_has_the_tbe_flavour():
    for op in ("hard_sigmoid_grad", "threshold_grad_v2_d", "relu_grad"):
        k = registry.get(op).kernel("tbe")
        assert k.socs == ("ascend910", "ascend910b", "ascend910_93", "ascend310p")
        td = k.tiling(10_000, "float16", 40, 196608)
        assert k.template(td, "float16", 2)["bufferNum"] == (2 if tbe.schedule.double_buffered(td) else 1)


# --- the generated tile body: the same calls as the interpreter -----------------------------------------------------
def _plain(v):
    """Every field of a trace, events and warnings included (their ``values`` and ``line`` too, which their own
    ``==`` skips), as comparable values: arrays as (dtype, shape, bytes), floats by bits."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, *((f.name, _plain(getattr(v, f.name))) for f in dataclasses.fields(v)))
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, dict):
        return ("dict", *sorted((repr(k), _plain(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    if isinstance(v, float):
        return ("float", v.hex())
    return v


def _interpreted_and_generated(monkeypatch, launch):
    """``launch()`` twice: the kernel's CopyIn/Compute/CopyOut methods stepping through the program (the
    reference), then the generated tile body -- each kept from taking the other path."""
    def wrong_path(*args, **kwargs):
        raise AssertionError("the other path ran")
    with monkeypatch.context() as m:
        m.setattr(lowering, "_INTERPRET", True)
        m.setattr(lowering.Program, "_body", wrong_path)
        ref = launch()
    with monkeypatch.context() as m:
        for stage in ("CopyIn", "Compute", "CopyOut"):
            m.setattr(lowering.TbeElewiseKernel, stage, wrong_path)
        got = launch()
    return ref, got


def _assert_same_run(ref, got) -> None:
    """Same output bits, and the same trace in every field: events, cycles, warnings, UB layout, core summaries."""
    (run_a, out_a), (run_b, out_b) = ref, got
    assert out_a.tobytes() == out_b.tobytes()
    assert run_a.cycles == run_b.cycles
    assert _plain(run_a.trace.warnings) == _plain(run_b.trace.warnings)
    assert _plain(run_a.trace) == _plain(run_b.trace)


def _op_cases(soc: str):
    """(op, dtype, attrs) of the three TBE kernels on ``soc``, every dtype they take there."""
    floats = ["float32", "float16"] + (["bfloat16"] if soc in BF16_SOCS else [])
    yield from (("hard_sigmoid_grad", dt, {}) for dt in floats)
    for dt in [*floats, "int8", "uint8", "int32"]:
        yield "threshold_grad_v2_d", dt, {"threshold": 0.5}
        yield "relu_grad", dt, {}


def _inputs(dt: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    if dt in ("int8", "uint8", "int32"):
        info = np.iinfo(dt)
        return tuple(rng.integers(info.min, info.max, n, endpoint=True, dtype=dt) for _ in range(2))
    np_dt = bfloat16 if dt == "bfloat16" else np.dtype(dt)
    g, x = ((rng.standard_normal(n) * 4).astype(np_dt) for _ in range(2))
    x[:8] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.0, -3.0, 0.5], dtype=np_dt)
    return g, x


@pytest.mark.parametrize("soc", list(VCOPY))
def test_tile_body_matches_the_interpreter(soc, monkeypatch):
    """Every kernel and dtype, double-buffered over several tiles per core (2 cores, a small UB, a short last
    tile and a short last core) traced with snapshots, and single-buffered (one tile per core) untraced."""
    for op, dt, attrs in _op_cases(soc):
        g, x = _inputs(dt, 10_007)
        ref, got = _interpreted_and_generated(monkeypatch, functools.partial(
            run_kernel, op, g, x, soc=soc, kernel="tbe", core_num=2, ub_size=32768, record=True, snapshot=True,
            **attrs))
        td = got[0].tiling
        assert tbe.schedule.double_buffered(td) and td.blockFactor > 2 * td.ubFactor, td
        assert any(e.values is not None for e in got[0].trace.events)
        _assert_same_run(ref, got)
        g, x = _inputs(dt, 1000)
        ref, got = _interpreted_and_generated(monkeypatch, functools.partial(
            run_kernel, op, g, x, soc=soc, kernel="tbe", record=False, **attrs))
        assert not tbe.schedule.double_buffered(got[0].tiling)
        _assert_same_run(ref, got)


def test_kernel_source_is_the_program_written_out():
    """The tile body a learner can print: every step of the listing, in order, between the queue calls."""
    prog = hsg.hard_sigmoid_grad.program("float32", "Ascend910B4", (0.25,))
    src = prog.kernel_source()
    compile(src, "<test>", "exec")
    compute = src[src.index("def Compute"):src.index("def CopyOut")].splitlines()
    calls = [line.strip().split("(")[0] for line in compute]
    steps = [line.split("(")[0] for line in prog.listing]
    first = calls.index(steps[0])
    assert calls[first:first + len(steps)] == steps
    assert calls[1:3] == ["grad_input = inQueue_grad_input.DeQue", "data_input = inQueue_data_input.DeQue"]
    assert "data_input_int32 = _retyped(data_input, int32" in src          # the sign-bit view, per tile
    assert "DataCopyPad(grad_input, grad_inputGm[off], p[0])" in src and "broadcast_copy" not in src
    brc = tg.threshold_grad_v2_d.program("float32", "Ascend910B4", (0.5,)).kernel_source([True, False])
    assert brc.count("broadcast_copy(") == 1 and brc.count("DataCopyPad(") == 2
    with pytest.raises(ValueError, match="one flag per input"):
        prog.kernel_source([True])


def test_tile_body_names_stay_valid_python(monkeypatch):
    """Placeholders named like the body's own variables, a keyword or a builtin still give a body that runs,
    and runs as the interpreter does."""
    def describe(dtype: str) -> dsl.Compute:
        a, b = dsl.placeholder((1,), dtype, "n"), dsl.placeholder((1,), dtype, "lambda")
        return dsl.Compute("names", (a, b), dsl.vmul(dsl.vadds(a, 1.5), dsl.vabs(b)))

    entry = tbe.make_entry("names", lambda dtype: describe(dtype), tbe.schedule.TbeElewiseTilingData)
    info = get_soc("Ascend910B4")
    a, b = _inputs("float32", 5000)
    td = tbe.schedule.op_tiling("Names", describe, ("float32",), a.size, "float32", 2, 32768)

    def launch_once():
        args = [gm_from_array(a, "a"), gm_from_array(b, "b"), gm_from_array(None, "out", nbytes=a.nbytes)]
        run = ascendc_launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=True,
                             kernel_name="Names", tiling_data=td, **lowering.template_args(td, "float32"))
        return run, args[2].ptr.allocation.buffer[:a.nbytes].view(np.float32).copy()

    ref, got = _interpreted_and_generated(monkeypatch, launch_once)
    _assert_same_run(ref, got)
    with np.errstate(invalid="ignore"):
        _assert_bits(got[1], (a + np.float32(1.5)) * np.abs(b))
    src = entry.program("float32", "Ascend910B4", ()).kernel_source()
    assert "n_ = inQueue_n.DeQue" in src and "lambda_ = inQueue_lambda.DeQue" in src


def test_retyped_view_is_reinterpret_cast():
    """The per-tile view of a queue block equals ReinterpretCast's in every field (its numpy view: the same bytes,
    shape and strides) and shares the block's life: FreeTensor kills both."""
    seen = []

    def kernel(x, workspace, tiling):
        pipe, q = TPipe(), TQue(VECIN, 2, name="q")
        pipe.InitBuffer(q, 2, 1000)
        cache: dict = {}
        for _ in range(5):
            t = q.AllocTensor(np.float32)
            fast, ref = lowering._retyped(t, np.dtype(np.int16), cache), t.ReinterpretCast(np.int16)
            for name in LocalTensor.__slots__:
                a, b = getattr(fast, name), getattr(ref, name)
                if isinstance(a, np.ndarray):
                    assert (a.__array_interface__, a.dtype) == (b.__array_interface__, b.dtype), name
                else:
                    assert a is b or a == b, name
            assert fast.life is t.life and fast.alive
            q.EnQue(t)
            q.FreeTensor(q.DeQue(np.float32))
            assert not fast.alive and not ref.alive
            seen.append(fast.tile)
        assert len(cache) == 2                       # one numpy view per block

    ascendc_launch(kernel, 1, [gm_from_array(np.zeros(8, np.float32), "x")], b"", get_soc("Ascend910B4"),
                   outputs=(0,), record=True)
    assert seen == [0, 1, 2, 3, 4]


def test_interpreted_runs_the_steps_for_the_block_only():
    """``tbe.interpreted()``: inside the block the kernel's own CopyIn/Compute/CopyOut run (same bits and cycles as
    the generated tile body); the flag comes back as it was, also after an exception."""
    rng = np.random.default_rng(8)
    g, x = rng.standard_normal((2, 20_001)).astype(np.float32)
    stepped = []
    compute = lowering.TbeElewiseKernel.Compute

    def spy(self, *args, **kwargs):
        stepped.append(1)
        return compute(self, *args, **kwargs)

    lowering.TbeElewiseKernel.Compute = spy
    try:
        generated = al.hardsigmoid_backward(g, x, soc="Ascend910B4", kernel="tbe")
        assert not stepped
        with tbe.interpreted():
            interpreted = al.hardsigmoid_backward(g, x, soc="Ascend910B4", kernel="tbe")
        assert stepped and not lowering._INTERPRET
        with pytest.raises(RuntimeError), tbe.interpreted():
            raise RuntimeError("inside")
        assert not lowering._INTERPRET
    finally:
        lowering.TbeElewiseKernel.Compute = compute
    assert np.array_equal(generated.out.view(np.uint32), interpreted.out.view(np.uint32))
    assert generated.cycles == interpreted.cycles


def test_program_for_a_tiling_is_the_program_the_run_ran():
    """``entry.program_for(td, dtype, soc)`` reads the attribute values from the tiling as the entry does: for an
    aclnn run's tiling it is the very (cached) Program that run used, and a different alpha gives another one."""
    rng = np.random.default_rng(9)
    g, x = rng.standard_normal((2, 5_000)).astype(np.float32)
    run = al.hardsigmoid_backward(g, x, soc="Ascend910B4", kernel="tbe")
    entry = hsg.hard_sigmoid_grad
    prog = entry.program_for(run.tiling, np.float32, "Ascend910B4")
    assert prog is entry.program("float32", "Ascend910B4", (run.tiling.alpha,))
    assert prog is entry.program_for(run.tiling, "float32", get_soc("Ascend910B4"))
    other = run.tiling.replace(alpha=np.float32(0.25))
    assert entry.program_for(other, np.float32, "Ascend910B4") is not prog

"""The convenience layer (docs/design.md §3): ``al.hardsigmoid_backward`` / ``al.threshold_backward`` on numpy
arrays, compared with the golden oracles bit for bit (``.view(uint)``: NaN patterns and signed zeros count)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_bits_equal, last_kernel_oracle, watch_kernel_nodes

import ascend_lab as al
from ascend_lab import acl, golden
from ascend_lab.acl import runtime as rt
from ascend_lab.ops import registry

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, U8, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64))
NULLPTR, INVALID = 161001, 161002
FLT_EPSILON = np.float32(1.1920929e-07)
RNG = np.random.default_rng(777)



@pytest.fixture(autouse=True)
def _kernel_nodes():
    """Which kernel each call ran: the expected values come from that flavour's oracle."""
    with watch_kernel_nodes():
        yield


def tiled_elements(run: al.Run, dtype: np.dtype) -> int:
    """How many elements the run's tiling hands to the cores, read through the KernelSpec of the kernel that ran
    (its ``core_ranges``), whatever the flavour's TilingData fields are called."""
    node = run.kernel_node
    kernel = registry.get(node.op).kernel(run.kernel)
    ranges = kernel.core_ranges(run.tiling, dtype, None, tiles=False)
    assert [r["offset"] for r in ranges] == list(np.cumsum([0] + [r["data_num"] for r in ranges])[:-1])
    return sum(r["data_num"] for r in ranges)


def fvals(shape, dtype=F32, lo=-5.0, hi=5.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32).astype(dtype)


def ivals(shape, dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -50), min(info.max, 50), size=shape, endpoint=True).astype(dtype)


def hs_want(g, x, out_dtype=None) -> np.ndarray:
    g, x = np.asarray(g), np.asarray(x)
    promote = g.dtype if g.dtype == x.dtype else F32         # §7 for {f32, f16, bf16}
    with np.errstate(all="ignore"):
        y = last_kernel_oracle()[1](golden.cast(g, promote), golden.cast(x, promote))
    if out_dtype is None or np.dtype(out_dtype) == promote:
        return y
    return y.astype(F64) if np.dtype(out_dtype) == F64 else golden.cast(y, out_dtype, "CAST_RINT")


def th_want(g, x, thr) -> np.ndarray:
    g, x = np.asarray(g), np.asarray(x)
    shape = np.broadcast_shapes(g.shape, x.shape)
    gb, xb = np.broadcast_to(g, shape).copy(), np.broadcast_to(x, shape).copy()
    op, oracle = last_kernel_oracle()
    assert ("relu" in op) == bool(abs(np.float32(thr)) <= FLT_EPSILON), op     # ReluGrad iff the threshold is 0
    return oracle(gb, xb)


@pytest.fixture(autouse=True)
def _finalized():
    assert not rt.is_initialized()
    yield
    assert not rt.is_initialized(), "the convenience API must undo its own aclInit"


SPECIAL_F32 = np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 2.9999998, -2.9999998, -3.0000002, 3.0000002,
                        np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38, 0.5, 65504.0],
                       np.float32)
# a NaN with a payload: must travel through unchanged where nothing recomputes it
PAYLOAD_NAN = np.array([0x7FC12345, 0xFFA00001], np.uint32).view(np.float32)


# --- hardsigmoid_backward --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_hs_basic_dtypes(dtype):
    g, x = fvals((7, 33), dtype, -50, 50), fvals((7, 33), dtype)
    run = al.hardsigmoid_backward(g, x)
    assert run.status == 0 and run.ok
    assert_bits_equal(run.out, hs_want(g, x))
    assert run.graph == ["Contiguous", "Contiguous", "HardSigmoidGrad", "ViewCopy"]
    assert run.tiling is not None and tiled_elements(run, dtype) == g.size
    assert isinstance(run.workspace_size, int) and run.workspace_size > 0
    assert run.messages == []
    assert run.soc == "Ascend910B4" and run.op == "aclnnHardsigmoidBackward"


def test_hs_special_values_bit_exact():
    x = np.concatenate([SPECIAL_F32, SPECIAL_F32[::-1], [0.0, 0.0]]).astype(np.float32)
    g = np.concatenate([SPECIAL_F32[::-1], SPECIAL_F32, PAYLOAD_NAN]).astype(np.float32)
    run = al.hardsigmoid_backward(g, x)
    assert_bits_equal(run.out, hs_want(g, x))
    for dt in (F16, BF16):
        with np.errstate(all="ignore"):
            g2, x2 = g.astype(dt), x.astype(dt)
        assert_bits_equal(al.hardsigmoid_backward(g2, x2).out, hs_want(g2, x2))


def test_hs_transposed_and_stepped_views():
    base_g = fvals((12, 10))
    base_x = fvals((10, 12))
    g, x = base_g[::3, 1::2], base_x.T[::3, 1::2]
    assert not g.flags.c_contiguous and not x.flags.c_contiguous
    run = al.hardsigmoid_backward(g, x)
    assert run.status == 0
    assert_bits_equal(run.out, hs_want(g.copy(), x.copy()))
    assert run.out.shape == (4, 5)


def test_hs_negative_step_view():
    g, x = fvals((6, 4))[::-1], fvals((6, 4))[:, ::-2]
    x = np.ascontiguousarray(np.resize(x, (6, 4)))[::-1]
    run = al.hardsigmoid_backward(g, x)
    assert_bits_equal(run.out, hs_want(g.copy(), x.copy()))


def test_hs_broadcast_views_with_zero_strides():
    row = fvals((5,))
    col = fvals((3, 1))
    g = np.broadcast_to(row, (3, 5))
    x = np.broadcast_to(col, (3, 5))
    assert 0 in g.strides and 0 in x.strides
    run = al.hardsigmoid_backward(g, x)
    assert run.status == 0
    assert_bits_equal(run.out, hs_want(g.copy(), x.copy()))


def test_hs_zero_d():
    g, x = np.array(2.0, np.float32), np.array(1.0, np.float32)
    run = al.hardsigmoid_backward(g, x)
    assert run.status == 0 and run.out.shape == ()
    assert_bits_equal(run.out, hs_want(g, x))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 2)])
def test_hs_empty(shape):
    run = al.hardsigmoid_backward(np.zeros(shape, np.float32), np.zeros(shape, np.float32))
    assert run.status == 0 and run.workspace_size == 0
    assert run.out.shape == shape and run.out.dtype == F32
    assert "HardSigmoidGrad" not in run.graph and run.tiling is None


def test_hs_eight_dims_ok_nine_dims_invalid():
    s8 = (2, 1, 2, 1, 1, 2, 1, 2)
    g, x = fvals(s8), fvals(s8)
    run = al.hardsigmoid_backward(g, x)
    assert run.status == 0
    assert_bits_equal(run.out, hs_want(g, x))
    s9 = s8 + (1,)
    run = al.hardsigmoid_backward(fvals(s9), fvals(s9))
    assert run.status == INVALID and run.out is None
    assert any("gradOutput" in m for m in run.messages)
    assert run.tiling is None and run.graph == []


def test_hs_none_inputs():
    run = al.hardsigmoid_backward(None, fvals((2,)))
    assert run.status == NULLPTR and run.out is None
    assert any("gradOutput" in m for m in run.messages)
    run = al.hardsigmoid_backward(fvals((2,)), None)
    assert run.status == NULLPTR and any("self" in m for m in run.messages)


def test_hs_out_nullptr():
    run = al.hardsigmoid_backward(fvals((2,)), fvals((2,)), out=al.NULLPTR)
    assert run.status == NULLPTR and run.out is None
    assert any("out" in m for m in run.messages)


def test_hs_user_out_written_in_place():
    g, x = fvals((4, 6)), fvals((4, 6))
    out = np.full((4, 6), 123.0, np.float32)
    run = al.hardsigmoid_backward(g, x, out=out)
    assert run.status == 0 and run.out is out
    assert_bits_equal(out, hs_want(g, x))


def test_hs_user_out_non_contiguous():
    g, x = fvals((4, 3)), fvals((4, 3))
    big = np.full((4, 9), -1.0, np.float32)
    view = big[:, 1::3]
    run = al.hardsigmoid_backward(g, x, out=view)
    assert run.status == 0
    want = np.full((4, 9), -1.0, np.float32)
    want[:, 1::3] = hs_want(g, x)
    assert_bits_equal(big, want)


def test_hs_user_out_other_dtype():
    g, x = fvals((8,), F32, -1e5, 1e5), fvals((8,))
    out = np.zeros(8, F16)
    run = al.hardsigmoid_backward(g, x, out=out)
    assert run.status == 0 and run.graph[-2] == "Cast"
    assert_bits_equal(out, hs_want(g, x, F16))


def test_hs_user_out_wrong_shape_or_dtype():
    g, x = fvals((4, 2)), fvals((4, 2))
    out = np.full((8,), 5.0, np.float32)
    run = al.hardsigmoid_backward(g, x, out=out)
    assert run.status == INVALID and run.out is None
    assert (out == 5.0).all()                       # untouched on failure
    run = al.hardsigmoid_backward(g, x, out=np.zeros((4, 2), np.int32))
    assert run.status == INVALID and any("out" in m for m in run.messages)


@pytest.mark.parametrize("out_dtype", ["float16", "fp16", np.float16, acl.ACL_FLOAT16, "bfloat16", "bf16",
                                       ml_dtypes.bfloat16, "float64", "float32"])
def test_hs_out_dtype_spellings(out_dtype):
    g, x = fvals((3, 5), F32, -300, 300), fvals((3, 5))
    run = al.hardsigmoid_backward(g, x, out_dtype=out_dtype)
    assert run.status == 0
    want_dt = {acl.ACL_FLOAT16: F16}.get(out_dtype, None) or np.dtype(
        {"fp16": "float16", "bf16": BF16, "bfloat16": BF16}.get(out_dtype, out_dtype)
        if not isinstance(out_dtype, str) or out_dtype not in ("bf16", "bfloat16") else BF16)
    assert run.out.dtype == want_dt
    assert_bits_equal(run.out, hs_want(g, x, want_dt))


@pytest.mark.parametrize("out_dtype", ["int32", "bool", "int8"])
def test_hs_out_dtype_not_castable(out_dtype):
    run = al.hardsigmoid_backward(fvals((3,)), fvals((3,)), out_dtype=out_dtype)
    assert run.status == INVALID and any("out" in m for m in run.messages)


@pytest.mark.parametrize("g_dt, x_dt", [(F16, F32), (F32, BF16), (F16, BF16), (BF16, F16)])
def test_hs_mixed_dtypes_default_out_is_promote(g_dt, x_dt):
    g, x = fvals((5, 5), g_dt), fvals((5, 5), x_dt)
    run = al.hardsigmoid_backward(g, x)
    assert run.status == 0 and run.out.dtype == F32
    assert "Cast" in run.graph
    assert_bits_equal(run.out, hs_want(g, x))


def test_hs_python_lists():
    run = al.hardsigmoid_backward([1.0, 2.0, -4.0], [0.5, 2.0, 1.0])
    assert run.status == 0 and run.out.dtype == F32
    assert_bits_equal(run.out, hs_want(np.array([1.0, 2.0, -4.0], F32), np.array([0.5, 2.0, 1.0], F32)))


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3"])
def test_hs_bf16_refused_on_old_socs(soc):
    run = al.hardsigmoid_backward(fvals((3,), BF16), fvals((3,), BF16), soc=soc)
    assert run.status == INVALID and run.soc == soc
    assert any("BF16" in m and "gradOutput" in m for m in run.messages)
    assert "INVALID" in run.explain() and soc in run.explain()


def test_hs_soc_none_uses_the_soc_in_force():
    with acl.soc("Ascend910A"):
        run = al.hardsigmoid_backward(fvals((3,), BF16), fvals((3,), BF16), soc=None)
    assert run.status == INVALID and run.soc == "Ascend910A"


def test_hs_shape_mismatch():
    run = al.hardsigmoid_backward(fvals((3, 1)), fvals((3, 4)))
    assert run.status == INVALID and any("gradOutput" in m for m in run.messages)


def test_hs_int_inputs_refused():
    run = al.hardsigmoid_backward(ivals((3,), I32), ivals((3,), I32))
    assert run.status == INVALID and any("gradOutput" in m for m in run.messages)


def test_hs_explain():
    run = al.hardsigmoid_backward(fvals((3,)), fvals((3,)))
    text = run.explain()
    assert "ACLNN_SUCCESS" in text and "HardSigmoidGrad" in text


def test_hs_trace_flag_accepted():
    g, x = fvals((40,)), fvals((40,))
    run = al.hardsigmoid_backward(g, x, trace=True)
    assert run.status == 0
    assert_bits_equal(run.out, hs_want(g, x))


# --- threshold_backward ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32, I8, U8])
@pytest.mark.parametrize("thr", [1.0, 0.0, -2.5, 0.3])
def test_th_basic_dtypes(dtype, thr):
    mk = (lambda s: fvals(s, dtype)) if dtype.kind == "f" or dtype == BF16 else (lambda s: ivals(s, dtype))
    g, x = mk((9, 31)), mk((9, 31))
    run = al.threshold_backward(g, x, thr)
    assert run.status == 0, run.messages
    assert_bits_equal(run.out, th_want(g, x, thr))
    op = "ReluGrad" if thr == 0 else "ThresholdGradV2D"
    assert run.graph == ["Contiguous", "Contiguous", op, "ViewCopy"]
    assert run.tiling is not None


def test_th_seed_values():
    run = al.threshold_backward(np.array([[4.5, 4.4], [4.3, 4.2]], np.float32),
                                np.array([[0.2, 1.2], [2.2, 3.2]], np.float32), 1.0)
    assert_bits_equal(run.out, np.array([[0, 4.4], [4.3, 4.2]], np.float32))


def test_th_special_values():
    x = np.concatenate([SPECIAL_F32, SPECIAL_F32[::-1]])
    g = np.concatenate([SPECIAL_F32[::-1], SPECIAL_F32])
    for thr in (0.0, 1e-8, -1e-8, 1.0, -3.0, float("nan"), float("inf"), float("-inf"), 3.4e38):
        run = al.threshold_backward(g, x, thr)
        assert run.status == 0
        assert_bits_equal(run.out, th_want(g, x, thr))
    run = al.threshold_backward(PAYLOAD_NAN, np.array([5.0, 5.0], np.float32), 1.0)
    assert_bits_equal(run.out, PAYLOAD_NAN)                 # passed through untouched


def test_th_threshold_as_int_and_numpy_scalar():
    g, x = ivals((10,), I32), ivals((10,), I32)
    for thr in (3, np.int64(3), np.float32(3.0), np.float64(3.0)):
        run = al.threshold_backward(g, x, thr)
        assert_bits_equal(run.out, th_want(g, x, 3.0))


def test_th_non_contiguous_views():
    base = ivals((8, 9), I8)
    g = base[1::2, ::3]
    x = ivals((9, 8), I8).T[::2, 2::3]
    run = al.threshold_backward(g, x, 0.5)
    assert run.status == 0
    assert_bits_equal(run.out, th_want(g.copy(), x.copy(), 0.5))


@pytest.mark.parametrize("soc", [None, "Ascend950PR"])
def test_th_broadcast_inputs(soc):
    """No BroadcastTo node (kernel_flavours §6): the stock kernels (TBE on the default 910B4, main on 950) take
    the inputs with their own shapes and broadcast them natively."""
    g, x = fvals((3, 1)), fvals((1, 4))
    run = al.threshold_backward(g, x, 0.25, soc=soc)
    assert run.status == 0 and run.out.shape == (3, 4)
    assert run.graph == ["Contiguous", "Contiguous", "ThresholdGradV2D", "ViewCopy"]
    assert_bits_equal(run.out, th_want(g, x, 0.25))
    np.testing.assert_array_equal(run.out, np.where(x > np.float32(0.25), g, np.float32(0)))


def test_th_broadcast_to_views():
    g = np.broadcast_to(fvals((4,), F16), (3, 4))
    x = fvals((3, 4), F16)
    run = al.threshold_backward(g, x, -0.5)
    assert run.status == 0
    assert_bits_equal(run.out, th_want(g.copy(), x, -0.5))


def test_th_broadcast_failure():
    run = al.threshold_backward(fvals((3, 2)), fvals((2, 3)), 1.0)
    assert run.status == INVALID and any("broadcast" in m for m in run.messages)


def test_th_zero_d_and_empty():
    run = al.threshold_backward(np.array(2.0, np.float32), np.array(3.0, np.float32), 1.0)
    assert run.status == 0 and run.out.shape == ()
    assert run.out == np.float32(2.0)
    run = al.threshold_backward(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), 1.0)
    assert run.status == 0 and run.workspace_size == 0 and run.out.shape == (0, 3)
    assert run.tiling is None
    run = al.threshold_backward(np.zeros((0, 1), np.float32), np.zeros((1, 5), np.float32), 1.0)
    assert run.status == 0 and run.out.shape == (0, 5)


def test_th_nine_dims():
    s9 = (1,) * 9
    run = al.threshold_backward(fvals(s9), fvals(s9), 1.0)
    assert run.status == INVALID and any("gradOutput" in m for m in run.messages)


def test_th_none_inputs():
    run = al.threshold_backward(fvals((2,)), fvals((2,)), None)
    assert run.status == NULLPTR and any("threshold" in m for m in run.messages)
    run = al.threshold_backward(None, fvals((2,)), 1.0)
    assert run.status == NULLPTR and any("gradOutput" in m for m in run.messages)
    run = al.threshold_backward(fvals((2,)), None, 1.0)
    assert run.status == NULLPTR
    run = al.threshold_backward(fvals((2,)), fvals((2,)), 1.0, out=al.NULLPTR)
    assert run.status == NULLPTR and any("out" in m for m in run.messages)


def test_th_user_out_in_place_and_dtype_rules():
    g, x = fvals((3, 3), F16), fvals((3, 3), F16)
    out = np.full((3, 3), 9, F16)
    run = al.threshold_backward(g, x, 0.5, out=out)
    assert run.status == 0 and run.out is out
    assert_bits_equal(out, th_want(g, x, 0.5))
    run = al.threshold_backward(g, x, 0.5, out_dtype="float32")
    assert run.status == INVALID and any("out" in m for m in run.messages)
    run = al.threshold_backward(g, x.astype(F32), 0.5)
    assert run.status == INVALID


def test_th_int64_on_950():
    g, x = ivals((6,), I64), ivals((6,), I64)
    run = al.threshold_backward(g, x, 0.0, soc="Ascend950PR")
    assert run.status == 0 and run.graph[2] == "ReluGrad"
    assert_bits_equal(run.out, golden.relu_grad(g, x))
    assert al.threshold_backward(g, x, 1.0, soc="Ascend950PR").status == INVALID
    assert al.threshold_backward(g, x, 0.0, soc="Ascend910B4").status == INVALID


def test_th_threshold_not_a_number():
    with pytest.raises(TypeError):
        al.threshold_backward(fvals((2,)), fvals((2,)), "1.0")
    with pytest.raises(TypeError):
        al.threshold_backward(fvals((2,)), fvals((2,)), np.array([1.0]))


# --- errors raised to the Python caller ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["hs", "th"])
def test_unknown_soc(fn):
    with pytest.raises(ValueError) as exc:
        if fn == "hs":
            al.hardsigmoid_backward(fvals((2,)), fvals((2,)), soc="Ascend911Z")
        else:
            al.threshold_backward(fvals((2,)), fvals((2,)), 1.0, soc="Ascend911Z")
    assert "Ascend911Z" in str(exc.value) and "Ascend910B4" in str(exc.value)


BAD_ARRAYS = [
    pytest.param(lambda: np.ones(3, np.complex256), id="complex256"),
    pytest.param(lambda: np.array(["a", "b", "c"]), id="str"),
    pytest.param(lambda: np.array([b"a", b"b", b"c"]), id="bytes"),
    pytest.param(lambda: np.array([1.0, None, 2.0], dtype=object), id="object"),
    pytest.param(lambda: np.ones(3, np.float128) if hasattr(np, "float128") else np.ones(3, "V4"), id="f128"),
]


@pytest.mark.parametrize("make", BAD_ARRAYS)
def test_unknown_dtype_raises_with_a_useful_message(make):
    bad = make()
    for call in (lambda: al.hardsigmoid_backward(bad, bad),
                 lambda: al.hardsigmoid_backward(fvals((3,)), bad),
                 lambda: al.threshold_backward(bad, bad, 1.0)):
        with pytest.raises((ValueError, TypeError)) as exc:
            call()
        msg = str(exc.value)
        assert "float32" in msg or "float16" in msg        # says what is supported


def test_unknown_out_dtype_name():
    with pytest.raises(ValueError, match="float33"):
        al.hardsigmoid_backward(fvals((3,)), fvals((3,)), out_dtype="float33")
    with pytest.raises(ValueError):
        al.threshold_backward(fvals((3,)), fvals((3,)), 1.0, out_dtype="float33")


def test_non_array_input_type_error():
    with pytest.raises(TypeError):
        al.hardsigmoid_backward({"a": 1}, fvals((3,)))


def test_runtime_left_initialised_if_the_caller_initialised_it():
    assert acl.aclInit(None) == 0
    assert acl.aclrtSetDevice(2) == 0
    try:
        run = al.hardsigmoid_backward(fvals((3,)), fvals((3,)))
        assert run.status == 0
        assert rt.is_initialized() and rt.current_device() == 2
    finally:
        assert acl.aclFinalize() == 0


def test_no_device_memory_leaked():
    before = rt._state.allocated
    for _ in range(3):
        al.hardsigmoid_backward(fvals((64,)), fvals((64,)))
        al.threshold_backward(fvals((64,)), fvals((64,)), 0.5)
        al.hardsigmoid_backward(fvals((64,)), fvals((64,)), out_dtype="int32")   # failing path too
    assert rt._state.allocated == before


def test_soc_in_force_restored_after_call():
    start = acl.current_soc().name
    al.hardsigmoid_backward(fvals((3,)), fvals((3,)), soc="Ascend950PR")
    assert acl.current_soc().name == start

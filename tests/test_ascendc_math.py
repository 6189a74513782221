"""The math instructions of ``ascendc.instructions_math`` (issue 23 items 1-3): each one against numpy for every dtype
it takes, with edge values (±0, subnormals, ±inf, NaN, overflow to inf, integer wrap) and partial repeats; its dtype
list per architecture (a type the library refuses is an ``unsupported-on-soc`` finding); its cost row against GE-ATT's
figure; and each called from C++ equal to the Python API (bits, events, cycles).

The expected values are numpy's, computed here without the simulator: the exact and IEEE operations in the dtype,
the others as the module states its model -- float64, rounded once to the dtype (numpy's own float64 -> float32 /
float16 conversions, which round to nearest-even).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_cxx_frontend import API_KERNEL, PyApi, _events

from ascend_lab.ascendc import (
    VECCALC,
    VECIN,
    VECOUT,
    Abs,
    And,
    Axpy,
    DataCopy,
    Div,
    Divs,
    Duplicate,
    Exp,
    FetchEventID,
    GlobalTensor,
    HardEvent,
    KernelError,
    LeakyRelu,
    Ln,
    Log,
    Muls,
    Or,
    Reciprocal,
    Relu,
    Rsqrt,
    SetFlag,
    Sigmoid,
    Sqrt,
    Sub,
    Subs,
    Tanh,
    TBuf,
    TPipe,
    TQue,
    WaitFlag,
    WholeReduceMax,
    WholeReduceMin,
    WholeReduceSum,
    cxx,
    launch,
    sanitizer,
)
from ascend_lab.ascendc import cost_model as cm
from ascend_lab.ascendc import instructions_math as im
from ascend_lab.ascendc import instructions_reduce as ir
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16
from ascend_lab.ops.common.kernel_args import gm_from_array

A2, P310, T910A, A950 = (get_soc(n) for n in ("Ascend910B4", "Ascend310P3", "Ascend910A", "Ascend950PR"))
F16, F32, BF16 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(bfloat16)


def run_api(soc, call, arrays, out_dtype, count, init=None):
    """Run ``call(dst, *srcs)`` on one core: each array copied GM -> UB through a VECIN queue, the result through a
    VECOUT queue to GM. ``init``: dst's starting values (Axpy accumulates into dst). Returns (result, run)."""
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out_dtype = np.dtype(out_dtype)
    if init is not None:
        arrays = [*arrays, np.ascontiguousarray(init, out_dtype)]

    def entry(*args):
        addrs, y = args[:len(arrays)], args[len(arrays)]
        pipe = TPipe()
        qs = [TQue(VECIN, 1) for _ in arrays]
        outQ = TQue(VECOUT, 1)
        gms = []
        for a, q, addr in zip(arrays, qs, addrs, strict=True):
            g = GlobalTensor(a.dtype)
            g.SetGlobalBuffer(addr, a.size)
            gms.append(g)
            pipe.InitBuffer(q, 1, max(a.nbytes, 32))
        yg = GlobalTensor(out_dtype)
        yg.SetGlobalBuffer(y, count)
        pipe.InitBuffer(outQ, 1, max(count * out_dtype.itemsize, 32))
        srcs = []
        for a, q, g in zip(arrays, qs, gms, strict=True):
            t = q.AllocTensor(a.dtype)
            DataCopy(t, g, a.size)
            q.EnQue(t)
            srcs.append(q.DeQue(a.dtype))
        o = outQ.AllocTensor(out_dtype)
        if init is not None:
            DataCopy(o, srcs.pop(), count)
        call(o, *srcs)
        outQ.EnQue(o)
        o = outQ.DeQue(out_dtype)
        DataCopy(yg, o, count)
        outQ.FreeTensor(o)
        for q, t in zip(qs, srcs, strict=False):
            q.FreeTensor(t)

    gms = [gm_from_array(a, f"x{i}") for i, a in enumerate(arrays)]
    out = gm_from_array(None, "y", nbytes=count * out_dtype.itemsize)
    r = launch(entry, 1, [*gms, out], b"", soc, outputs=(len(gms),), record=True)
    got = out.ptr.allocation.buffer[:count * out_dtype.itemsize].view(out_dtype).copy()
    return got, r


def same(got, want):
    """Equal bit for bit, except that any NaN equals any NaN (numpy's NaN sign/payload is not the model's)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    if got.dtype.kind in "fV":
        gn, wn = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
        assert (gn == wn).all(), np.flatnonzero(gn != wn)[:8]
        ui = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
        bad = np.flatnonzero((got.view(ui) != want.view(ui)) & ~gn)
        assert not bad.size, [(i, got[i], want[i]) for i in bad[:8]]
    else:
        assert (got == want).all(), np.flatnonzero(got != want)[:8]


def edges(dt, n, rng, lo=-4.0, hi=4.0):
    """n values of dt: the edge values first (±0, the smallest subnormal, the largest subnormal, the smallest normal,
    ±1, ±inf, NaN, ±max), then uniform random ones in [lo, hi)."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        head = np.array([0, 1, info.max, info.min, info.max - 1, info.min + 1 if dt.kind == "i" else 2, 7, 3],
                        dtype=dt)
        body = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
    else:
        fi = np.finfo(np.float16 if dt == F16 else np.float32) if dt != BF16 else None
        if dt == BF16:
            tiny, sub_min, sub_max, big = 2.0 ** -126, 2.0 ** -133, 2.0 ** -126 - 2.0 ** -133, 3.3895e38
        else:
            tiny, big = float(fi.tiny), float(fi.max)
            sub_min = float(fi.smallest_subnormal)
            sub_max = tiny - sub_min
        head = np.array([0.0, -0.0, sub_min, -sub_min, sub_max, tiny, 1.0, -1.0, np.inf, -np.inf, np.nan, big, -big,
                         0.5, 2.0, -2.5], dtype=np.float64).astype(dt)
        body = rng.uniform(lo, hi, n).astype(dt)
    body[:head.size] = head
    return body


# --- numpy oracles ---------------------------------------------------------------------------------------------
def f64_round(fn):
    return lambda x, dt: fn(x.astype(np.float64)).astype(dt)


UNARY = {
    "Abs": (Abs, lambda x, dt: np.abs(x)),
    "Exp": (Exp, f64_round(np.exp)),
    "Ln": (Ln, f64_round(np.log)),
    "Sqrt": (Sqrt, f64_round(np.sqrt)),
    "Rsqrt": (Rsqrt, f64_round(lambda x: 1 / np.sqrt(x))),
    "Reciprocal": (Reciprocal, f64_round(lambda x: 1 / x)),
    "Relu": (Relu, lambda x, dt: np.maximum(x, dt.type(0))),
}


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dt", [F16, F32])
def test_unary_against_numpy_with_edge_values(name, dt):
    fn, want = UNARY[name]
    rng = np.random.default_rng(3)
    count = 208 if dt == F16 else 200                    # not whole 256-byte repeats (128 / 64 per repeat)
    x = edges(dt, count + 16, rng, -12, 12)
    if name == "Exp":
        x[20:24] = np.array([11.1, 89.0, -17.0, -100.0]).astype(dt)   # fp16 overflow, fp32 overflow, subnormal results
    got, _ = run_api(A2, lambda o, s: fn(o, s, count), [x], dt, count)
    with np.errstate(all="ignore"):
        expect = want(x[:count], dt)
    same(got, expect)
    if name == "Exp":
        assert np.isposinf(got[21]) and (dt == F32 or np.isposinf(got[20]))
        assert 0 < abs(float(got[23 if dt == F32 else 22])) < np.finfo(dt).tiny    # a subnormal, not flushed


@pytest.mark.parametrize("dt", [np.int32, np.int16, np.int8, np.int64])
def test_integer_abs_and_relu_wrap_on_the_950(dt):
    rng = np.random.default_rng(5)
    dt = np.dtype(dt)
    count = 64 // dt.itemsize * 5
    x = edges(dt, count, rng)
    got, _ = run_api(A950, lambda o, s: Abs(o, s, count), [x], dt, count)
    same(got, np.abs(x))                                  # |min| == min: two's complement wrap
    assert got[3] == np.iinfo(dt).min
    if dt in (np.int32, np.int64):
        got, _ = run_api(A950, lambda o, s: Relu(o, s, count), [x], dt, count)
        same(got, np.maximum(x, 0))


BINARY = {
    "Sub": (Sub, lambda x, y, dt: np.subtract(x, y)),
    "Div": (Div, lambda x, y, dt: (x.astype(np.float64) / y.astype(np.float64)).astype(dt)),
}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("dt", [F16, F32])
def test_binary_against_numpy_with_edge_values(name, dt):
    fn, want = BINARY[name]
    rng = np.random.default_rng(11)
    count = 208 if dt == F16 else 200
    x, y = edges(dt, count, rng), edges(dt, count, rng)[::-1].copy()
    y[30:34] = np.array([0.0, -0.0, 0.0, 1e-3]).astype(dt)               # x / ±0, 0 / 0
    x[32] = 0
    x[33] = np.finfo(np.float16 if dt == F16 else np.float32).max       # overflow to inf
    got, _ = run_api(A2, lambda o, a, b: fn(o, a, b, count), [x, y], dt, count)
    with np.errstate(all="ignore"):
        expect = want(x, y, dt)
    same(got, expect)
    if name == "Div":
        assert np.isnan(got[32]) and np.isinf(got[33])


@pytest.mark.parametrize("dt", [np.int16, np.int32])
def test_integer_sub_wraps(dt):
    dt = np.dtype(dt)
    count = 64
    x = edges(dt, count, np.random.default_rng(1))
    y = np.ones(count, dt)
    got, _ = run_api(A2, lambda o, a, b: Sub(o, a, b, count), [x, y], dt, count)
    same(got, x - y)
    assert got[3] == np.iinfo(dt).max                     # min - 1 wraps to max


def test_bf16_sub_on_the_950_rounds_in_bf16():
    rng = np.random.default_rng(2)
    count = 128
    x, y = edges(BF16, count, rng), edges(BF16, count, rng)[::-1].copy()
    got, _ = run_api(A950, lambda o, a, b: Sub(o, a, b, count), [x, y], BF16, count)
    with np.errstate(all="ignore"):
        same(got, (x.astype(np.float32) - y.astype(np.float32)).astype(BF16))


def test_integer_div_on_the_950_truncates_toward_zero():
    x = np.array([7, -7, 7, -7, 0, -2147483648, 5, 9] * 2, np.int32)
    y = np.array([2, 2, -2, -2, 3, -1, 0, 9] * 2, np.int32)
    got, _ = run_api(A950, lambda o, a, b: Div(o, a, b, 16), [x, y], np.int32, 16)
    assert got[:8].tolist() == [3, -3, -3, 3, 0, -2147483648, 0, 1]       # INT_MIN / -1 wraps; x / 0 -> 0 (model)


@pytest.mark.parametrize("fn, op", [(And, np.bitwise_and), (Or, np.bitwise_or)])
@pytest.mark.parametrize("dt", [np.int16, np.uint16, np.int32])
def test_and_or_bitwise(fn, op, dt):
    dt = np.dtype(dt)
    rng = np.random.default_rng(4)
    count = 32 // dt.itemsize * 9
    x, y = edges(dt, count, rng), edges(dt, count, rng)[::-1].copy()
    got, _ = run_api(A2, lambda o, a, b: fn(o, a, b, count), [x, y], dt, count)
    same(got, op(x, y))


@pytest.mark.parametrize("dt", [F16, F32])
def test_leaky_relu(dt):
    rng = np.random.default_rng(8)
    count = 208 if dt == F16 else 200
    x = edges(dt, count, rng)
    got, _ = run_api(A2, lambda o, s: LeakyRelu(o, s, 0.1, count), [x], dt, count)
    alpha = dt.type(0.1)
    with np.errstate(all="ignore"):
        same(got, np.where(x >= 0, x, x * alpha))
    assert np.signbit(got[1]) and got[1] == 0              # -0 >= 0: passed through


@pytest.mark.parametrize("t, u", [(F16, F16), (F32, F32), (F32, F16)])
def test_axpy_fused_once_in_t(t, u):
    rng = np.random.default_rng(9)
    count = 96
    src, acc = edges(u, count, rng), rng.uniform(-4, 4, count).astype(t)
    acc[:4] = [0.0, -0.0, np.inf, np.nan]
    got, r = run_api(A2, lambda o, s: Axpy(o, s, 1.5, count), [src], t, count, init=acc)
    with np.errstate(all="ignore"):
        want = (acc.astype(np.float64) + src.astype(np.float64) * np.float64(u.type(1.5))).astype(t)
    same(got, want)
    assert [e.instr for e in r.trace.events if e.pipe == "V"][-1] == "Axpy"


def test_subs_and_divs_both_operand_orders_on_the_950():
    x = np.array([1.0, -2.0, 0.0, -0.0, np.inf, 3.0, 0.5, 8.0] * 2, np.float32)
    got, _ = run_api(A950, lambda o, s: Subs(o, s, 2.0, 16), [x], F32, 16)
    same(got, x - np.float32(2))
    got, _ = run_api(A950, lambda o, s: Subs(o, 2.0, s, 16), [x], F32, 16)
    same(got, np.float32(2) - x)
    got, _ = run_api(A950, lambda o, s: Divs(o, s, 3.0, 16), [x], F32, 16)
    same(got, (x.astype(np.float64) / 3).astype(np.float32))
    with np.errstate(all="ignore"):
        got, _ = run_api(A950, lambda o, s: Divs(o, 1.0, s, 16), [x], F32, 16)
        same(got, (1 / x.astype(np.float64)).astype(np.float32))


# --- the dtype lists per architecture ---------------------------------------------------------------------------
REFUSED = [
    ("Div of int32 on A2", A2, lambda o, a, b: Div(o, a, b, 8), np.int32, 2),
    ("Exp of int32 on the 950", A950, lambda o, a: Exp(o, a, 8), np.int32, 1),
    ("Sub of bf16 on A2", A2, lambda o, a, b: Sub(o, a, b, 16), BF16, 2),
    ("And of int32 on 310P", P310, lambda o, a, b: And(o, a, b, 8), np.int32, 2),
    ("Subs before the 950", A2, lambda o, a: Subs(o, a, 1.0, 8), np.float32, 1),
    ("Divs on 910A", T910A, lambda o, a: Divs(o, a, 1.0, 8), np.float32, 1),
    ("Relu of int16 on A2", A2, lambda o, a: Relu(o, a, 16), np.int16, 1),
    ("Abs of int32 on A2", A2, lambda o, a: Abs(o, a, 8), np.int32, 1),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_dtype_the_library_refuses_is_a_finding(case):
    _, soc, call, dt, n = case
    dt = np.dtype(dt)
    arrays = [np.zeros(32 // dt.itemsize * 2, dt) for _ in range(n)]
    with pytest.raises(KernelError) as info:
        run_api(soc, call, arrays, dt, 16 if dt.itemsize == 2 else 8)
    e = info.value
    assert e.kind == "unsupported-on-soc" and e.core == 0, str(e)
    assert e.hint == sanitizer.explain("unsupported-on-soc").hint


def test_the_dtype_lists_follow_the_headers():
    """A few entries read in asc-devkit @ 82b89a15 (impl/basic_api/dav_*/kernel_operator_vec_*_impl.h)."""
    from ascend_lab.base.platform import NpuArch
    a2, p3, x950 = im.DTYPES[NpuArch.DAV_2201], im.DTYPES[NpuArch.DAV_2002], im.DTYPES[NpuArch.DAV_3510]
    assert a2["Div"] == {F16, F32} and a2["Sub"] == {F16, F32, np.dtype(np.int16), np.dtype(np.int32)}
    assert a2["Relu"] == {F16, F32, np.dtype(np.int32)} and not a2["Subs"] and not a2["Divs"]
    assert p3["And"] == {np.dtype(np.int16), np.dtype(np.uint16)}
    assert (BF16, BF16) in x950["Axpy"] and (F32, F16) in a2["Axpy"] and (F16, F32) not in a2["Axpy"]
    assert BF16 in x950["Sub"] and BF16 not in x950["Div"] and x950["Exp"] == {F16, F32}
    assert set(im.DTYPES) >= {NpuArch.DAV_1001, NpuArch.DAV_2002, NpuArch.DAV_2201, NpuArch.DAV_3510}


# --- cost rows: GE-ATT V1 (perf_param_v1.cpp @ hicann/ge 3d7dd1d40a5e), and the borrowed ones ------------------
GE_ATT_V1_MATH = {                                    # the figures as the file writes them (float16, float32)
    "Sub": ((0.0107, 22.1226), (0.0213, 22.1254)), "Div": ((0.0460, 29.1233), (0.0454, 29.0892)),
    "Abs": ((0.0077, 20.0153), (0.0147, 20.0592)), "Exp": ((0.0311, 28.0144), (0.0307, 28.0376)),
    "Sqrt": ((0.0312, 29.0056), (0.0313, 28.9961)), "Rsqrt": ((0.0071, 21.0970), (0.0143, 21.0979)),
    "Reciprocal": ((0.0078, 21.0076), (0.0146, 21.0639)), "Relu": ((0.0077, 20.0173), (0.0154, 20.0189)),
    "And": ((0.0107, 17.1393), (0.0112, 17.5611)),
    "WholeReduceSum": ((0.0547, 35.0021), (0.1094, 32.0029)), "WholeReduceMax": ((0.0547, 21.0027), (0.1094, 20.0051)),
    "WholeReduceMin": ((0.0547, 21.0056), (0.1094, 20.0068)),
    "Sigmoid": ((0.1011, 116.0436), (0.1256, 115.9747)), "Tanh": ((0.1976, 181.6919), (0.1570, 153.9298)),
    "BlockReduceMax": ((0.0547, 18.0042), (0.0198, 16.7401)), "BlockReduceMin": ((0.0547, 18.0092), (0.0198, 16.7413)),
}
GE_ATT_V1_OR_UINT16 = (0.0132, 12.4018)


def _row(api):
    """The cost row of a math instruction: its own, or the one it borrows (from MATH_COST or VECTOR_COST)."""
    name = cm.MATH_BORROWED.get(api, api)
    return cm.MATH_COST.get(name) or cm.VECTOR_COST[name]


def test_every_math_row_is_ge_atts_figure():
    assert set(cm.MATH_COST) == set(GE_ATT_V1_MATH) | {"Or"}
    for api, (h, f) in GE_ATT_V1_MATH.items():
        assert cm.MATH_COST[api] == {"half": h, "float": f}, api
    k, b = GE_ATT_V1_OR_UINT16
    assert cm.MATH_COST["Or"] == {"half": (k, b), "float": (2 * k, b)}        # float: the documented stand-in
    assert cm.MATH_BORROWED == {"Ln": "Exp", "LeakyRelu": "Muls", "Axpy": "Mul", "Subs": "Adds", "Divs": "Div",
                                "Log": "Exp", "BlockReduceSum": "BlockReduceMax", "Erf": "Tanh"}
    assert not set(cm.MATH_COST) & set(cm.VECTOR_COST) and not set(cm.MATH_BORROWED) & set(cm.MATH_COST)
    n = 1000
    for api in [*cm.MATH_COST, *cm.MATH_BORROWED]:
        row = _row(api)
        for width, cls in ((2, "half"), (4, "float")):
            k, b = row[cls]
            for table in ("V1", "V2"):                   # the 950's V2 has the same figures (or none: V1's)
                assert cm.vector_cycles(api, width, n, 1.0, False, None, table) == pytest.approx(b + k * n)


@pytest.mark.parametrize("name", ["Exp", "Div", "Axpy", "Or"])
def test_an_instruction_occupies_pipe_v_for_its_row(name):
    count = 256
    dt = np.dtype(np.int16) if name == "Or" else F32
    x = np.ones(count, dt)
    calls = {"Exp": lambda o, a: Exp(o, a, count), "Div": lambda o, a: Div(o, a, a, count),
             "Axpy": lambda o, a: Axpy(o, a, 2.0, count), "Or": lambda o, a: Or(o, a, a, count)}
    with cm.without_bank_conflicts():
        _, r = run_api(A2, calls[name], [x], dt, count, init=x if name == "Axpy" else None)
    e = [e for e in r.trace.events if e.instr == name][0]
    k, b = _row(name)["half" if dt.itemsize == 2 else "float"]
    assert e.pipe == "V" and e.end - e.start == pytest.approx(b + k * count)


# --- from C++: the same bits, events and cycles as the Python API -----------------------------------------------
f32 = np.float32
CXX_CASES = {
    "Sub": ("Sub(y, x, xb, 256);", lambda x, xb, y, t, m: Sub(y, x, xb, 256)),
    "Div": ("Div(y, x, xb, 256);", lambda x, xb, y, t, m: Div(y, x, xb, 256)),
    "Abs": ("Abs(y, x, 256);", lambda x, xb, y, t, m: Abs(y, x, 256)),
    "Exp": ("Exp(y, x, 256);", lambda x, xb, y, t, m: Exp(y, x, 256)),
    "Ln": ("Ln(y, x, 256);", lambda x, xb, y, t, m: Ln(y, x, 256)),
    "Sqrt": ("Sqrt(y, x, 256);", lambda x, xb, y, t, m: Sqrt(y, x, 256)),
    "Rsqrt": ("Rsqrt(y, x, 256);", lambda x, xb, y, t, m: Rsqrt(y, x, 256)),
    "Reciprocal": ("Reciprocal(y, x, 256);", lambda x, xb, y, t, m: Reciprocal(y, x, 256)),
    "Relu": ("Relu(y, x, 256);", lambda x, xb, y, t, m: Relu(y, x, 256)),
    "LeakyRelu": ("LeakyRelu(y, x, 0.01f, 256);", lambda x, xb, y, t, m: LeakyRelu(y, x, f32(0.01), 256)),
    "Subs": ("Subs(y, x, 1.5f, 256);", lambda x, xb, y, t, m: Subs(y, x, f32(1.5), 256)),
    "Subs scalar first": ("Subs(y, 1.5f, x, 256);", lambda x, xb, y, t, m: Subs(y, f32(1.5), x, 256)),
    "Divs": ("Divs(y, x, 3, 256);", lambda x, xb, y, t, m: Divs(y, x, f32(3), 256)),
    "Divs scalar first": ("Divs(y, 1.0f, x, 256);", lambda x, xb, y, t, m: Divs(y, f32(1), x, 256)),
    "Axpy": ("Sub(y, x, xb, 256);\n    Axpy(y, xb, 0.5f, 256);",
             lambda x, xb, y, t, m: (Sub(y, x, xb, 256), Axpy(y, xb, f32(0.5), 256))),
    "Axpy float += half": (
        "Duplicate(y, 1.0f, 256);\n    Cast(tmp.ReinterpretCast<half>(), x, RoundMode::CAST_RINT, 256);\n"
        "    Axpy(y, tmp.ReinterpretCast<half>(), (half)2.0f, 256);",
        lambda x, xb, y, t, m: (Duplicate(y, f32(1), 256),
                                __import__("ascend_lab.ascendc", fromlist=["Cast"]).Cast(
                                    t.ReinterpretCast(np.float16), x, __import__(
                                        "ascend_lab.ascendc", fromlist=["RoundMode"]).RoundMode.CAST_RINT, 256),
                                Axpy(y, t.ReinterpretCast(np.float16), np.float16(2), 256))),
    "And/Or": ("And(y.ReinterpretCast<int16_t>(), x.ReinterpretCast<int16_t>(), xb.ReinterpretCast<int16_t>(),"
               " 512);\n    Or(y.ReinterpretCast<int16_t>(), y.ReinterpretCast<int16_t>(),"
               " x.ReinterpretCast<int16_t>(), 512);",
               lambda x, xb, y, t, m: (And(y.ReinterpretCast(np.int16), x.ReinterpretCast(np.int16),
                                           xb.ReinterpretCast(np.int16), 512),
                                       Or(y.ReinterpretCast(np.int16), y.ReinterpretCast(np.int16),
                                          x.ReinterpretCast(np.int16), 512))),
}


@pytest.mark.parametrize("name", list(CXX_CASES))
def test_each_math_api_from_cxx_equals_the_python_api(name):
    body, py = CXX_CASES[name]
    rng = np.random.default_rng(7)
    a = rng.uniform(-3, 3, 256).astype(np.float32)
    b = rng.uniform(-3, 3, 256).astype(np.float32)
    a[:6] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40]
    b[:3] = [0.0, -0.0, 2.0]
    results = []
    with np.errstate(all="ignore"):
        for entry in (cxx.compile(API_KERNEL.format(BODY=body)), PyApi(py)):
            out = gm_from_array(None, "y", nbytes=1024)
            run = launch(entry, 1, [gm_from_array(a, "a"), gm_from_array(b, "b"), out], b"", A950, outputs=(2,),
                         record=True)
            results.append((bytes(out.ptr.allocation.buffer[:1024]), _events(run), run.cycles))
    assert results[0] == results[1]
    assert any(e[2] in name or name.startswith(e[2]) for e in results[0][1])


def test_a_refused_dtype_from_cxx_is_the_same_finding():
    body = "Div(y.ReinterpretCast<int32_t>(), x.ReinterpretCast<int32_t>(), xb.ReinterpretCast<int32_t>(), 256);"
    k = cxx.compile(API_KERNEL.format(BODY=body))
    a = np.ones(256, np.float32)
    with pytest.raises(KernelError) as info:
        launch(k, 1, [gm_from_array(a, "a"), gm_from_array(a, "b"), gm_from_array(None, "y", nbytes=1024)], b"",
               A2, outputs=(2,))
    assert info.value.kind == "unsupported-on-soc" and "Div of int32" in str(info.value)


# --- SetFlag / WaitFlag: hazards and timing (issue 23 items 3-4) ----------------------------------------------
def _flag_kernel(flags: set[str], tiles: int = 2):
    """A TBuf filled by MTE2 and read by V, V's result in a TBuf copied out by MTE3, ``tiles`` times: the HardEvents
    in ``flags`` are set and waited at their places (MTE2_V before V reads, V_MTE3 before MTE3 copies, V_MTE2 and
    MTE3_V before the next tile overwrites what the other pipe still reads)."""
    def entry(x, y, workspace, tiling):
        pipe = TPipe()
        inBuf, outBuf = TBuf(VECCALC), TBuf(VECCALC)
        xg, yg = GlobalTensor(np.float32), GlobalTensor(np.float32)
        xg.SetGlobalBuffer(x, 64 * tiles)
        yg.SetGlobalBuffer(y, 64 * tiles)
        pipe.InitBuffer(inBuf, 256)
        pipe.InitBuffer(outBuf, 256)
        t, o = inBuf.Get(np.float32), outBuf.Get(np.float32)
        for i in range(tiles):
            if i and "V_MTE2" in flags:
                WaitFlag(HardEvent.V_MTE2, 1)
            DataCopy(t, xg[64 * i], 64)
            if "MTE2_V" in flags:
                eid = FetchEventID(HardEvent.MTE2_V)
                SetFlag(HardEvent.MTE2_V, eid)
                WaitFlag(HardEvent.MTE2_V, eid)
            if i and "MTE3_V" in flags:
                WaitFlag(HardEvent.MTE3_V, 2)
            Muls(o, t, 2.0, 64)
            if "V_MTE2" in flags:
                SetFlag(HardEvent.V_MTE2, 1)
            if "V_MTE3" in flags:
                SetFlag(HardEvent.V_MTE3, 0)
                WaitFlag(HardEvent.V_MTE3, 0)
            DataCopy(yg[64 * i], o, 64)
            if "MTE3_V" in flags:
                SetFlag(HardEvent.MTE3_V, 2)
        if "V_MTE2" in flags:                   # the last tile's flags, waited so none is left pending
            WaitFlag(HardEvent.V_MTE2, 1)
        if "MTE3_V" in flags:
            WaitFlag(HardEvent.MTE3_V, 2)
    return entry


def _run_flags(flags, tiles=2):
    x = np.arange(64 * tiles, dtype=np.float32)
    out = gm_from_array(None, "y", nbytes=256 * tiles)
    r = launch(_flag_kernel(set(flags), tiles), 1, [gm_from_array(x, "x"), out], b"", A2, outputs=(1,), record=True)
    return out.ptr.allocation.buffer[:256 * tiles].view(np.float32), r, x


ALL_FLAGS = ("MTE2_V", "V_MTE3", "V_MTE2", "MTE3_V")


def test_a_kernel_with_every_flag_is_clean_and_correct():
    got, r, x = _run_flags(ALL_FLAGS)
    assert (got == 2 * x).all()
    ev = r.trace.events
    copy_in = [e for e in ev if e.pipe == "MTE2"]
    muls = [e for e in ev if e.instr == "Muls"]
    copy_out = [e for e in ev if e.pipe == "MTE3"]
    for i in range(2):                            # each wait holds its pipe until the other pipe's work is done
        assert muls[i].start >= copy_in[i].end and copy_out[i].start >= muls[i].end
    assert copy_in[1].start >= muls[0].end and muls[1].start >= copy_out[0].end
    assert {e.instr for e in ev if e.pipe == "S"} >= {"SetFlag", "WaitFlag"}


@pytest.mark.parametrize("missing, where", [("MTE2_V", "V reads"), ("V_MTE3", "MTE3 reads"),
                                            ("V_MTE2", "MTE2 writes"), ("MTE3_V", "V writes")])
def test_a_missing_flag_is_a_race(missing, where):
    """Without one of the four pairs the two pipes touch a buffer concurrently: ``ub-race`` at the access."""
    with pytest.raises(KernelError) as info:
        _run_flags(set(ALL_FLAGS) - {missing})
    e = info.value
    assert e.kind == "ub-race" and where in str(e), str(e)


def test_a_waitflag_without_its_setflag_is_flag_unset():
    def entry(x, y, workspace, tiling):
        TPipe()
        WaitFlag(HardEvent.MTE2_V, 3)
    with pytest.raises(KernelError) as info:
        launch(entry, 1, [gm_from_array(np.zeros(8, np.float32), "x"), gm_from_array(None, "y", nbytes=32)], b"", A2,
               outputs=(1,))
    assert info.value.kind == "flag-unset" and "MTE2_V>(3)" in str(info.value)
    assert sanitizer.explain("flag-unset").stops


def test_cube_events_are_refused():
    def entry(x, y, workspace, tiling):
        SetFlag(HardEvent.MTE1_M, 0)
    with pytest.raises(ValueError, match="cube side"):
        launch(entry, 1, [gm_from_array(np.zeros(8, np.float32), "x"), gm_from_array(None, "y", nbytes=32)], b"", A2,
               outputs=(1,))


# --- WholeReduceSum / Max / Min (mask/repeat form) ------------------------------------------------------------
def _tree(v, dt):
    """The binary-tree sum the docs draw (ReduceDataBlock.md), each addition in dt -- written as a loop."""
    v = [dt.type(x) for x in v]
    while len(v) > 1:
        v = [dt.type(v[i] + v[i + 1]) for i in range(0, len(v), 2)]
    return v[0]


@pytest.mark.parametrize("dt", [F16, F32])
@pytest.mark.parametrize("mask_kind", ["full", "partial", "bits"])
def test_whole_reduce_sum_is_a_tree_in_t(dt, mask_kind):
    per = 256 // dt.itemsize
    rng = np.random.default_rng(12)
    repeat = 3
    x = rng.uniform(-100, 100, per * repeat).astype(dt)
    x[5] = np.finfo(np.float16 if dt == F16 else np.float32).max      # a lane that overflows the sum
    lanes = np.ones(per, bool)
    mask = per
    if mask_kind == "partial":
        mask = per - 7
        lanes[mask:] = False
    elif mask_kind == "bits":
        mask = [0x5555_5555_5555_5555, 0xFFFF_0000_0000_FFFF if per > 64 else 0]
        lanes = np.array([(mask[i // 64] >> (i % 64)) & 1 for i in range(per)], bool)
    out_n = 32 // dt.itemsize * 2
    with np.errstate(all="ignore"):
        got, r = run_api(A2, lambda o, s: (Duplicate(o, 0.0, out_n), WholeReduceSum(o, s, mask, repeat, 2, 1, 8)),
                         [x], dt, out_n)
        for k in range(repeat):
            want = _tree(np.where(lanes, x[k * per:(k + 1) * per], dt.type(0)), dt)
            same(got[2 * k:2 * k + 1], np.array([want], dt))
    assert got[1] == 0 and got[3] == 0                  # dstRepStride 2: the gaps keep their values
    e = [e for e in r.trace.events if e.instr == "WholeReduceSum"][0]
    k_, b_ = cm.MATH_COST["WholeReduceSum"]["half" if dt == F16 else "float"]
    assert e.count == repeat * per and e.end - e.start >= b_ + k_ * repeat * per - 1e-9


@pytest.mark.parametrize("api", ["WholeReduceMax", "WholeReduceMin"])
@pytest.mark.parametrize("order", list(ir.ReduceOrder))
def test_whole_reduce_max_min_value_and_index(api, order):
    dt, per, repeat = F32, 64, 2
    fn = {"WholeReduceMax": WholeReduceMax, "WholeReduceMin": WholeReduceMin}[api]
    x = np.random.default_rng(13).uniform(-5, 5, per * repeat).astype(dt)
    x[40] = x[50] = 9.0 if api == "WholeReduceMax" else -9.0          # equal extremes: the smaller index
    x[64 + 60] = 30.0 if api == "WholeReduceMax" else -30.0            # outside the mask of 48 lanes: ignored
    got, _ = run_api(A2, lambda o, s: (Duplicate(o, 0.0, 8), fn(o, s, 48, repeat, 1, 1, 8, order)), [x], dt, 8)
    pick = np.argmax if api == "WholeReduceMax" else np.argmin
    for k in range(repeat):
        seg = x[k * per:k * per + 48]
        i, v = int(pick(seg)), seg[pick(seg)]
        if order == ir.ReduceOrder.ORDER_VALUE_INDEX:
            assert got[2 * k] == v and got[2 * k + 1:2 * k + 2].view(np.uint32)[0] == i
        elif order == ir.ReduceOrder.ORDER_INDEX_VALUE:
            assert got[2 * k + 1] == v and got[2 * k:2 * k + 1].view(np.uint32)[0] == i
        elif order == ir.ReduceOrder.ORDER_ONLY_VALUE:
            assert got[k] == v
        else:
            assert got[k:k + 1].view(np.uint32)[0] == i
    assert got[:2].view(np.uint32)[1] == 40 or order != ir.ReduceOrder.ORDER_VALUE_INDEX


def test_whole_reduce_strided_source_half_index_bits():
    """srcBlkStride 2 reads every other 32-byte block; a half maximum's index is stored as uint16 bits."""
    dt, per = F16, 128
    x = np.arange(256, dtype=np.float32).astype(dt) / 4
    got, _ = run_api(A2, lambda o, s: (Duplicate(o, 0.0, 16), WholeReduceMax(o, s, 128, 1, 1, 2, 16)), [x], dt, 16)
    blocks = x.reshape(16, 16)[0::2].reshape(-1)       # blocks 0, 2, 4 ... 14
    assert got[0] == blocks.max() and got[1:2].view(np.uint16)[0] == int(np.argmax(blocks)) == per - 1


@pytest.mark.parametrize("soc, call, dt", [
    (T910A, lambda o, s: WholeReduceSum(o, s, 64, 1, 1, 1, 8), F32),
    (P310, lambda o, s: WholeReduceMax(o, s, 64, 1, 1, 1, 8, ir.ReduceOrder.ORDER_ONLY_VALUE), F32),
    (A2, lambda o, s: WholeReduceSum(o, s, 64, 1, 1, 1, 8), np.dtype(np.int32)),
], ids=["910A float", "310P ORDER_ONLY_VALUE", "A2 int32"])
def test_whole_reduce_refusals(soc, call, dt):
    with pytest.raises(KernelError) as info:
        run_api(soc, call, [np.ones(64, dt)], dt, 8)
    assert info.value.kind == "unsupported-on-soc", str(info.value)


CXX_REDUCE = {
    "WholeReduceSum": ("Duplicate(tmp, 0.0f, 64);\n    PipeBarrier<PIPE_V>();\n"
                       "    WholeReduceSum(tmp, x, 64, 4, 1, 1, 8);\n    Duplicate(y, 0.0f, 256);\n"
                       "    PipeBarrier<PIPE_V>();\n    Adds(y, tmp, 0.0f, 8);",
                       lambda x, xb, y, t, m: (Duplicate(t, f32(0), 64), WholeReduceSum(t, x, 64, 4, 1, 1, 8),
                                               Duplicate(
                                                   y, f32(0), 256),
                                               __import__("ascend_lab.ascendc", fromlist=["Adds"]).Adds(
                                                   y, t, f32(0), 8))),
    "WholeReduceMax": ("Duplicate(y, 0.0f, 256);\n    PipeBarrier<PIPE_V>();\n"
                       "    WholeReduceMax(y, x, 32, 4, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);",
                       lambda x, xb, y, t, m: (Duplicate(
                           y, f32(0), 256), WholeReduceMax(y, x, 32, 4, 1, 1, 8, ir.ReduceOrder.ORDER_ONLY_VALUE))),
    "WholeReduceMin": ("Duplicate(y, 0.0f, 256);\n    PipeBarrier<PIPE_V>();\n"
                       "    WholeReduceMin(y, x, 64, 4, 1, 1, 8);",
                       lambda x, xb, y, t, m: (Duplicate(
                           y, f32(0), 256), WholeReduceMin(y, x, 64, 4, 1, 1, 8))),
}
CXX_CASES.update(CXX_REDUCE)


@pytest.mark.parametrize("name", list(CXX_REDUCE))
def test_each_reduce_from_cxx_equals_the_python_api(name):
    test_each_math_api_from_cxx_equals_the_python_api(name)


# --- high-level Log, Sigmoid, Tanh: the documented compositions -------------------------------------------------
def _h(v, dt):
    return np.asarray(v, np.float64).astype(dt)


def sigmoid_in_t(x, dt):
    """sigmoid_impl.h step by step, each step rounded in T."""
    t = (x * dt.type(-1)).astype(dt)
    t = _h(np.exp(t.astype(np.float64)), dt)
    t = (t + dt.type(1)).astype(dt)
    return _h(1 / t.astype(np.float64), dt)


def tanh_in_f32(x):
    """tanh_common_impl.h / tanh_3510_impl.h in float32."""
    c = np.maximum(np.minimum(x.astype(np.float32), np.float32(8.8)), np.float32(-8.8))
    e = _h(np.exp((c * np.float32(2)).astype(np.float64)), F32)
    return _h((e - np.float32(1)).astype(np.float64) / (e + np.float32(1)).astype(np.float64), F32)


def sigmoid_in_f32(x):
    t = _h(np.exp((x.astype(np.float32) * np.float32(-1)).astype(np.float64)), F32)
    return _h(1 / (t + np.float32(1)).astype(np.float64), F32)


@pytest.mark.parametrize("dt", [F16, F32])
@pytest.mark.parametrize("soc", [A2, A950], ids=["A2", "950"])
def test_sigmoid_and_tanh_follow_their_composition(dt, soc):
    count = 200 if dt == F32 else 208
    x = edges(dt, count, np.random.default_rng(21), -10, 10)
    with np.errstate(all="ignore"):
        got_s, rs = run_api(soc, lambda o, s: Sigmoid(o, s, count), [x], dt, count)
        got_t, rt = run_api(soc, lambda o, s: Tanh(o, s, count), [x], dt, count)
        if soc is A950:
            want_s = _h(sigmoid_in_f32(x), dt)
            want_t = _h(tanh_in_f32(x), dt)
        else:
            want_s = sigmoid_in_t(x, dt)
            want_t = _h(tanh_in_f32(x.astype(np.float32)), dt)
    same(got_s, want_s)
    same(got_t, want_t)
    vs = [e.instr for e in rs.trace.events if e.pipe == "V"]
    vt = [e.instr for e in rt.trace.events if e.pipe == "V"]
    if soc is A950:
        assert vs == ["Sigmoid"] and vt == ["Tanh"]
        k, b = cm.MATH_COST["Sigmoid"]["half" if dt == F16 else "float"]
        e = [e for e in rs.trace.events if e.instr == "Sigmoid"][0]
        assert e.end - e.start >= b + k * count - 1e-9
    else:                                       # the stack buffer holds the whole count: one chunk
        assert vs == ["Muls", "Exp", "Adds", "Duplicate", "Div"]
        assert vt == (["Cast"] if dt == F16 else []) + ["Mins", "Maxs", "Muls", "Exp", "Adds", "Adds", "Div"] + \
            (["Cast"] if dt == F16 else [])


def test_sigmoid_chunks_by_its_shared_tmp_buffer():
    """A 256-byte sharedTmpBuffer holds 64 floats: 200 elements take 4 chunks of the 5-instruction sequence."""
    count = 200
    x = np.linspace(-6, 6, count).astype(np.float32)

    def entry(xa, ya, workspace, tiling):
        pipe = TPipe()
        q, oq, tb = TQue(VECIN, 1), TQue(VECOUT, 1), TBuf(VECCALC)
        xg, yg = GlobalTensor(np.float32), GlobalTensor(np.float32)
        xg.SetGlobalBuffer(xa, count)
        yg.SetGlobalBuffer(ya, count)
        pipe.InitBuffer(q, 1, count * 4)
        pipe.InitBuffer(oq, 1, count * 4)
        pipe.InitBuffer(tb, 256)
        t = q.AllocTensor(np.float32)
        DataCopy(t, xg, count)
        q.EnQue(t)
        t = q.DeQue(np.float32)
        o = oq.AllocTensor(np.float32)
        Sigmoid(o, t, tb.Get(np.uint8), count)
        oq.EnQue(o)
        o = oq.DeQue(np.float32)
        DataCopy(yg, o, count)
        oq.FreeTensor(o)
        q.FreeTensor(t)

    out = gm_from_array(None, "y", nbytes=count * 4)
    r = launch(entry, 1, [gm_from_array(x, "x"), out], b"", A2, outputs=(1,), record=True)
    same(out.ptr.allocation.buffer[:count * 4].view(np.float32), sigmoid_in_t(x, F32))
    divs = [e.count for e in r.trace.events if e.instr == "Div"]
    assert divs == [64, 64, 64, 8]


def test_log_is_ln_and_refused_on_910a():
    x = edges(F32, 64, np.random.default_rng(3), 0, 9)
    with np.errstate(all="ignore"):
        got, r = run_api(A2, lambda o, s: Log(o, s, 64), [x], F32, 64)
        same(got, _h(np.log(x.astype(np.float64)), F32))
    assert [e.instr for e in r.trace.events if e.pipe == "V"] == ["Log"]
    with pytest.raises(KernelError) as info:
        run_api(T910A, lambda o, s: Log(o, s, 64), [x], F32, 64)
    assert info.value.kind == "unsupported-on-soc" and "no Log at all" in str(info.value)


CXX_HIGH = {
    "Log": ("Log(y, x, 256);", lambda x, xb, y, t, m: Log(y, x, 256)),
    "Sigmoid": ("Sigmoid(y, x, 256);", lambda x, xb, y, t, m: Sigmoid(y, x, 256)),
    "Sigmoid with tmp": ("Sigmoid(y, x, mask, 256);", lambda x, xb, y, t, m: Sigmoid(y, x, m, 256)),
    "Tanh": ("Tanh(y, xb);", lambda x, xb, y, t, m: Tanh(y, xb)),
    "Tanh with tmp": ("Tanh(y, x, tmp.ReinterpretCast<uint8_t>(), 256);",
                      lambda x, xb, y, t, m: Tanh(y, x, t.ReinterpretCast(np.uint8), 256)),
}
CXX_CASES.update(CXX_HIGH)


@pytest.mark.parametrize("name", list(CXX_HIGH))
def test_each_high_level_api_from_cxx_equals_the_python_api(name):
    test_each_math_api_from_cxx_equals_the_python_api(name)


# --- every (API, dtype) each architecture offers, against numpy -------------------------------------------------
def _trunc_div(x, y):
    """C's integer division (toward zero, wrapping), x / 0 -> 0 (the model), with Python ints."""
    info = np.iinfo(x.dtype)
    out = []
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        q = 0 if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        out.append((q - info.min) % (info.max - info.min + 1) + info.min)     # wrap into the type
    return np.array(out, x.dtype)


def _wrap(v, dt):
    info = np.iinfo(dt)
    return np.array([(int(a) - info.min) % (info.max - info.min + 1) + info.min for a in v], dt)


def _oracle(api, x, y, s, dt):
    """numpy (or Python ints) for one instruction, as the module states its model."""
    f64 = lambda v: np.asarray(v, np.float64)  # noqa: E731
    rnd = lambda v: f64(v).astype(np.float32).astype(dt) if dt == BF16 else f64(v).astype(dt)  # noqa: E731
    integer = dt.kind in "iu"
    if api == "Sub":
        return _wrap([int(a) - int(b) for a, b in zip(x, y, strict=True)], dt) if integer else \
            (rnd(f64(x) - f64(y)) if dt != BF16 else (x.astype(np.float32) - y.astype(np.float32)).astype(dt))
    if api == "Div":
        return _trunc_div(x, y) if integer else rnd(f64(x) / f64(y))
    if api in ("And", "Or"):
        return (np.bitwise_and if api == "And" else np.bitwise_or)(x, y)
    if api == "Abs":
        return _wrap([abs(int(a)) for a in x], dt) if integer else np.abs(x)
    if api == "Relu":
        return np.maximum(x, dt.type(0))
    if api in ("Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal"):
        fn = {"Exp": np.exp, "Ln": np.log, "Sqrt": np.sqrt, "Rsqrt": lambda v: 1 / np.sqrt(v),
              "Reciprocal": lambda v: 1 / v}[api]
        return rnd(fn(f64(x)))
    if api == "LeakyRelu":
        return np.where(x >= 0, x, (x * dt.type(s)).astype(dt))
    if api == "Subs":
        return _wrap([int(a) - int(s) for a in x], dt) if integer else \
            (x.astype(np.float32) - np.float32(dt.type(s))).astype(dt) if dt == BF16 else \
            rnd(f64(x) - f64(dt.type(s)))
    if api == "Divs":
        return _trunc_div(x, np.full_like(x, s)) if integer else rnd(f64(x) / f64(dt.type(s)))
    raise AssertionError(api)


SWEEP = [(soc, api, dt) for soc in (A2, P310, T910A, A950)
         for api, dts in sorted(im.DTYPES[soc.npu_arch].items())
         if api not in ("Axpy", "Log", "Sigmoid", "Tanh", "Erf") for dt in sorted(dts, key=str)]


@pytest.mark.parametrize("soc, api, dt", SWEEP, ids=[f"{s.name}-{a}-{d}" for s, a, d in SWEEP])
def test_every_offered_dtype_against_numpy(soc, api, dt):
    rng = np.random.default_rng(abs(hash((api, str(dt)))) % 2**32)
    n = 256 // dt.itemsize + 32 // dt.itemsize             # a repeat and a block: a partial repeat
    x = edges(dt, n, rng, -40 if api != "Exp" else -20, 40 if api != "Exp" else 20)
    y = edges(dt, n, rng, -40, 40)[::-1].copy()
    if dt.kind in "iu":
        y[y == 0] = 3
        y[5] = 0                                          # one x / 0
    s = 3 if dt.kind in "iu" else 0.3
    fn = getattr(im, api)
    two = api in ("Sub", "Div", "And", "Or")
    call = (lambda o, a, b: fn(o, a, b, n)) if two else \
        (lambda o, a: fn(o, a, s, n)) if api in ("LeakyRelu", "Subs", "Divs") else (lambda o, a: fn(o, a, n))
    with np.errstate(all="ignore"):
        got, _ = run_api(soc, call, [x, y] if two else [x], dt, n)
        same(got, _oracle(api, x, y, s, dt))


@pytest.mark.parametrize("t, u", sorted(im.DTYPES[A950.npu_arch]["Axpy"], key=str))
def test_every_axpy_pair_on_the_950(t, u):
    rng = np.random.default_rng(17)
    n = 64
    src, acc = edges(u, n, rng, -8, 8), edges(t, n, rng, -8, 8)
    s = 3 if u.kind in "iu" else 1.5
    got, _ = run_api(A950, lambda o, a: Axpy(o, a, s, n), [src], t, n, init=acc)
    with np.errstate(all="ignore"):
        if t.kind in "iu":
            want = _wrap([int(a) + int(b) * s for a, b in zip(acc, src, strict=True)], t)
        else:
            exact = acc.astype(np.float64) + src.astype(np.float64) * np.float64(u.type(s))
            want = exact.astype(np.float32).astype(t) if t == BF16 else exact.astype(t)
    same(got, want)


# --- BlockReduceSum / Max / Min --------------------------------------------------------------------------------
@pytest.mark.parametrize("soc", [A2, A950], ids=["A2", "950"])
@pytest.mark.parametrize("api", ["BlockReduceSum", "BlockReduceMax", "BlockReduceMin"])
@pytest.mark.parametrize("dt", [F16, F32])
def test_block_reduce_per_32_byte_block(soc, api, dt):
    per, blk, repeat = 256 // dt.itemsize, 32 // dt.itemsize, 2
    x = np.random.default_rng(31).uniform(-50, 50, per * repeat).astype(dt)
    mask = per - blk * 2 - 3                      # the last two blocks empty, the sixth partial
    fn = getattr(ir, api)
    n_out = max(32 // dt.itemsize, 16) * 2
    sentinel = 7.0
    with np.errstate(all="ignore"):
        got, r = run_api(soc, lambda o, s: (Duplicate(o, sentinel, n_out), fn(o, s, repeat, mask, 2, 1, 8)), [x],
                         dt, n_out)
    on = (np.arange(per) < mask).reshape(8, blk)
    for k in range(repeat):
        b = x[k * per:(k + 1) * per].reshape(8, blk)
        for j in range(8):
            lanes = b[j][on[j]]
            slot = got[k * 16 + j]                   # dstRepStride 2: 16 elements apart
            if not lanes.size:
                empty = {"BlockReduceSum": 0, "BlockReduceMax": -np.inf, "BlockReduceMin": np.inf}[api]
                assert slot == (empty if soc is A950 else sentinel), (k, j, slot)
            elif api == "BlockReduceSum":
                same(np.array([slot], dt), np.array([_tree(np.where(on[j], b[j], dt.type(0)), dt)], dt))
            else:
                assert slot == (lanes.max() if api == "BlockReduceMax" else lanes.min())
    e = [e for e in r.trace.events if e.instr == api][0]
    assert e.count == repeat * per


def test_block_reduce_refused_for_float_on_910a():
    with pytest.raises(KernelError) as info:
        run_api(T910A, lambda o, s: ir.BlockReduceMax(o, s, 1, 64, 1, 1, 8), [np.ones(64, np.float32)], F32, 8)
    assert info.value.kind == "unsupported-on-soc"


CXX_BLOCK = {
    "BlockReduceSum": ("Duplicate(y, 0.0f, 256);\n    PipeBarrier<PIPE_V>();\n"
                       "    BlockReduceSum(y, x, 4, 64, 1, 1, 8);",
                       lambda x, xb, y, t, m: (Duplicate(y, f32(0), 256), ir.BlockReduceSum(y, x, 4, 64, 1, 1, 8))),
    "BlockReduceMax": ("Duplicate(y, 0.0f, 256);\n    PipeBarrier<PIPE_V>();\n"
                       "    BlockReduceMax(y, x, 2, 40, 1, 2, 16);",
                       lambda x, xb, y, t, m: (Duplicate(y, f32(0), 256), ir.BlockReduceMax(y, x, 2, 40, 1, 2, 16))),
}
CXX_CASES.update(CXX_BLOCK)


@pytest.mark.parametrize("name", list(CXX_BLOCK))
def test_each_block_reduce_from_cxx_equals_the_python_api(name):
    test_each_math_api_from_cxx_equals_the_python_api(name)

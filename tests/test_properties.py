"""Property tests (hypothesis): random shapes (0-8 dims, zero-size dims, sometimes 9), dtypes, SoCs,
non-contiguous views, thresholds and NaN/inf data, through both the convenience API and the raw aclnn API.

Properties:
* nothing raises; the status is a documented aclnn code;
* the status equals the one predicted by an independent model of the checks (cann_facts §1.2, §3.2);
* when the status is 0 the output equals, bit for bit, the oracle of the kernel that ran (each SoC runs its
  stock flavour, kernel_flavours §1: TBE on 910A/910B/910_93/310P, main on 950; ``helpers.last_kernel_oracle``):
  HardSigmoidGrad in the promoted dtype, ThresholdGradV2D, or ReluGrad when |threshold| <= FLT_EPSILON.

One relaxation, documented: where the L0 ``Cast`` after HardSigmoidGrad narrows a NaN (out dtype differs
from the promoted dtype), only "NaN with the same sign" is required — the references do not say which NaN
payload the Cast kernel produces.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import ml_dtypes
import numpy as np
from helpers import bits, device, last_kernel_oracle, watch_kernel_nodes
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import ascend_lab as al
from ascend_lab import acl, aclnn, golden
from ascend_lab.acl import runtime as rt
from ascend_lab.base import platform
from ascend_lab.opdev.errno import AclnnStatus

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, U8, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64))
BOOL = np.dtype(np.bool_)
DTYPES = [F32, F16, BF16, I8, U8, I32, I64, F64, BOOL]
FLOATS = {F32, F16, BF16, F64}
SOCS = platform.socs()
DOCUMENTED = {int(m) for m in AclnnStatus}
NULLPTR, INVALID = 161001, 161002
FLT_EPSILON = np.float32(1.1920929e-07)
MAX_ELEMS = 96

_NP2ACL = {F32: acl.ACL_FLOAT, F16: acl.ACL_FLOAT16, BF16: acl.ACL_BF16, F64: acl.ACL_DOUBLE, I8: acl.ACL_INT8,
           U8: acl.ACL_UINT8, I32: acl.ACL_INT32, I64: acl.ACL_INT64, BOOL: acl.ACL_BOOL}

#: Random draws on a developer's machine (new cases every run); a fixed sequence in CI (CI=true), so a landing
#: is judged on the same cases every time.
SETTINGS = settings(max_examples=300, deadline=None, derandomize=bool(os.environ.get("CI")),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: dtype draws biased towards the ones each operator accepts (every dtype still appears)
HS_BIASED = [F32, F16, BF16] * 3 + DTYPES
TH_BIASED = [F32, F16, BF16, I8, U8, I32, I64] * 2 + DTYPES

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 2.9999998, -2.9999998, -3.0000002, 0.5, -0.5, 1e-8, -1e-8,
                    5e-9, np.nan, -np.nan, np.inf, -np.inf, 1e-45, 3.4e38, -3.4e38, 65504.0, 70000.0, 1.0000001],
                   np.float32)
PAYLOAD_NANS = np.array([0x7FC12345, 0xFFA00001, 0x7F800001, 0x7FFFFFFF], np.uint32).view(np.float32)
THRESHOLDS = [0.0, -0.0, 1e-8, -1e-8, float(FLT_EPSILON), -float(FLT_EPSILON), 2.4e-7, float("nan"), float("inf"),
              float("-inf"), 1.0, -0.5, 0.1, 0.10002, 3.0, 2.5, -100.0, 1e30, 127.5, -128.0, 255.0]


# --- the independent model of the checks ---------------------------------------------------------------------

def _info(soc):
    return platform.get_soc(soc)


def hs_support(soc) -> set:
    """§1.1: SocVersion in [ASCEND910B, ASCEND910E] or regbase -> {f32, bf16, f16}; else {f32, f16}."""
    info = _info(soc)
    SV = platform.SocVersion
    if SV.ASCEND910B <= info.soc_version <= SV.ASCEND910E or info.npu_arch == platform.NpuArch.DAV_3510:
        return {F32, F16, BF16}
    return {F32, F16}


def th_support(soc, thr32: np.float32) -> set:
    """§3.1: DAV_2201 / DAV_3510 -> 910B list (+ INT64 on DAV_3510 when thr == 0); else the 910 list."""
    arch = _info(soc).npu_arch
    base = {F32, I32, F16, I8, U8}
    if arch in (platform.NpuArch.DAV_2201, platform.NpuArch.DAV_3510):
        extra = {BF16}
        if arch == platform.NpuArch.DAV_3510 and abs(thr32) <= FLT_EPSILON:
            extra.add(I64)
        return base | extra
    return base


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    return a if a == b else F32          # only reached for pairs in {f32, f16, bf16} (§7)


def can_cast_float_to(dst: np.dtype) -> bool:
    return dst in FLOATS                 # §7: floating -> integral and -> bool are refused


def hs_expected_status(soc, g, s, o) -> int:
    if g is None or s is None or o is None:
        return NULLPTR
    sup = hs_support(soc)
    if g.dtype not in sup or s.dtype not in sup:
        return INVALID
    if not can_cast_float_to(o.dtype):
        return INVALID
    if max(g.ndim, s.ndim, o.ndim) > 8:
        return INVALID
    if g.shape != s.shape or s.shape != o.shape:
        return INVALID
    return 0


def broadcast(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


def th_expected_status(soc, g, s, thr, o) -> int:
    if thr is None or o is None or g is None or s is None:
        return NULLPTR
    thr32 = np.float32(thr)
    sup = th_support(soc, thr32)
    if g.dtype not in sup or s.dtype not in sup or g.dtype != s.dtype or o.dtype != s.dtype:
        return INVALID
    if g.ndim > 8 or s.ndim > 8:
        return INVALID
    shape = broadcast(s.shape, g.shape)
    if shape is None or shape != o.shape:
        return INVALID
    return 0


# --- expected values ---------------------------------------------------------------------------------------------

def ran_oracle(nodes: list) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The oracle of the kernel the call ran (``watch_kernel_nodes``); an empty tensor builds no kernel node and
    computes nothing, so its expected output is empty too."""
    if nodes:
        return last_kernel_oracle()[1]
    return lambda a, b: np.zeros(np.broadcast_shapes(a.shape, b.shape), a.dtype)


def hs_expected(g: np.ndarray, s: np.ndarray, out_dtype: np.dtype, nodes: list) -> tuple[np.ndarray, bool]:
    """(expected, relaxed_nan): the oracle of the HardSigmoidGrad kernel that ran, in the promoted dtype, then
    the L0 Cast to out."""
    p = promote(g.dtype, s.dtype)
    oracle = ran_oracle(nodes)
    with np.errstate(all="ignore"):
        y = oracle(golden.cast(g, p), golden.cast(s, p))
        if out_dtype == p:
            return y, False
        if out_dtype == F64:
            return y.astype(F64), False
        widening = out_dtype == F32 or (p == F16 and out_dtype == F64)
        return golden.cast(y, out_dtype, "CAST_RINT"), not widening


def nan_times_nan(nodes: list) -> bool:
    """ReluGrad computed as grad * mask (the TBE min/max/mul path, the main kernel): a NaN grad times a NaN mask."""
    return bool(nodes) and nodes[-1].op == "ReluGrad" and nodes[-1].attrs.get("kernel") in ("tbe", "main")


def th_expected(g: np.ndarray, s: np.ndarray, thr, nodes: list) -> np.ndarray:
    """The oracle of the kernel that ran (ThresholdGradV2D, or ReluGrad when |thr| <= FLT_EPSILON: the kernel
    node's op says which) on the inputs broadcast to the output shape. The stock kernels broadcast natively,
    so their oracles would take the shapes as they are; broadcasting first gives the same values."""
    shape = np.broadcast_shapes(g.shape, s.shape)
    gb, sb = np.broadcast_to(g, shape).copy(), np.broadcast_to(s, shape).copy()
    oracle = ran_oracle(nodes)
    if nodes:
        assert nodes[-1].op == ("ReluGrad" if abs(np.float32(thr)) <= FLT_EPSILON else "ThresholdGradV2D")
    with np.errstate(all="ignore"):
        return oracle(gb, sb)


def assert_same(got: np.ndarray, want: np.ndarray, relaxed_nan: bool = False, any_nan: bool = False) -> None:
    """Bit for bit; ``relaxed_nan``: a NaN the L0 Cast narrowed only needs the same sign (see the module doc);
    ``any_nan``: any NaN matches any NaN -- for kernels that multiply a NaN by a NaN, where IEEE 754 leaves open
    which operand's payload (and sign) the product keeps."""
    assert got is not None
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    bad = bits(got) != bits(want)
    if (relaxed_nan or any_nan) and want.dtype.kind in "fV" and bad.any():
        w = want.astype(F32)
        gg = got.astype(F32)
        nan_ok = np.isnan(w) & np.isnan(gg) & (any_nan | (np.signbit(w) == np.signbit(gg)))
        bad &= ~nan_ok
    assert not bad.any(), f"{bad.sum()} differ: got {got[bad][:6]!r} want {want[bad][:6]!r}"


# --- strategies --------------------------------------------------------------------------------------------------

@st.composite
def shapes(draw, max_rank=8):
    if draw(st.integers(0, 19)) == 11:    # (not 0: hypothesis favours the low end)
        return tuple(draw(st.lists(st.integers(1, 2), min_size=9, max_size=9)))          # rank 9
    rank = draw(st.integers(0, max_rank))
    dims = draw(st.lists(st.sampled_from([1, 1, 2, 3, 4, 5, 0, 7]), min_size=rank, max_size=rank))
    while math.prod(dims) > MAX_ELEMS:
        dims[dims.index(max(dims))] = 1
    return tuple(dims)


def fill(rng: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    if dtype == BOOL:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64 if dtype != U8 else np.int64)
        small = rng.integers(-5, 6, n)
        return np.where(rng.random(n) < 0.5, small, wide).astype(dtype)
    v = rng.uniform(-8, 8, n).astype(np.float32)
    pick = rng.random(n)
    v = np.where(pick < 0.3, SPECIAL[rng.integers(0, SPECIAL.size, n)], v)
    v = np.where(pick > 0.97, PAYLOAD_NANS[rng.integers(0, PAYLOAD_NANS.size, n)], v)
    with np.errstate(all="ignore"):
        return v.astype(dtype)


@st.composite
def strided(draw, shape, dtype, kinds=("plain", "T", "step", "bcast", "neg", "offset")):
    """(buffer_1d, view): a numpy view of ``shape`` into a 1-D buffer, contiguous or not."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(kinds))
    n = math.prod(shape)
    off = 0
    if kind == "offset":
        off = draw(st.integers(1, 5))
    if kind in ("plain", "offset"):
        buf = fill(rng, n + off, dtype)
        return buf, buf[off:off + n].reshape(shape)
    if kind == "T":
        buf = fill(rng, n, dtype)
        return buf, buf.reshape(shape[::-1]).T
    if kind == "step":
        big = tuple(2 * d for d in shape)
        buf = fill(rng, math.prod(big), dtype)
        return buf, buf.reshape(big)[tuple(slice(None, None, 2) for _ in shape) + (Ellipsis,)]
    if kind == "bcast":
        small = tuple(1 if draw(st.booleans()) else d for d in shape)
        buf = fill(rng, math.prod(small), dtype)
        return buf, np.broadcast_to(buf.reshape(small), shape)
    buf = fill(rng, n, dtype)                  # "neg": a reversed last axis
    v = buf.reshape(shape)
    return buf, (v[..., ::-1] if shape else v)


def related_shape(draw, shape):
    """A shape that broadcasts with ``shape`` most of the time, sometimes one that does not."""
    how = draw(st.integers(0, 9))
    if how < 6:
        return shape
    if how < 9:
        out = tuple(1 if draw(st.booleans()) else d for d in shape)
        drop = draw(st.integers(0, len(out)))
        return out[drop:]
    return draw(shapes())


# --- convenience API ------------------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_convenience_hardsigmoid(data):
    draw = data.draw
    soc = draw(st.sampled_from(SOCS))
    g_dt = draw(st.sampled_from(HS_BIASED))
    s_dt = g_dt if draw(st.booleans()) else draw(st.sampled_from(HS_BIASED))
    shape = draw(shapes())
    g_shape = shape if draw(st.integers(0, 9)) != 7 else draw(shapes())
    _, g = draw(strided(g_shape, g_dt))
    _, s = draw(strided(shape, s_dt))
    g = None if draw(st.integers(0, 29)) == 17 else g
    s = None if draw(st.integers(0, 29)) == 17 else s
    out_dt = draw(st.sampled_from([None] * 9 + DTYPES))

    with watch_kernel_nodes() as nodes:
        run = al.hardsigmoid_backward(g, s, soc=soc, out_dtype=out_dt)

    assert not rt.is_initialized()
    assert run.status in DOCUMENTED
    event(f"status {run.status}")
    if s is None:
        o = None
    else:
        if out_dt is not None:
            o_dt = np.dtype(out_dt)
        elif g is not None and {g.dtype, s.dtype} <= {F32, F16, BF16}:
            o_dt = promote(g.dtype, s.dtype)
        elif g is not None and g.dtype == s.dtype:
            o_dt = s.dtype
        else:
            o_dt = None                               # PromoteType of other pairs: not modelled here
        o = None if o_dt is None else np.empty(s.shape, o_dt)
    if o is not None or g is None or s is None:
        assert run.status == hs_expected_status(soc, g, s, o), run.messages
    if run.status != 0:
        assert run.out is None and run.messages
        return
    want, relaxed = hs_expected(g.copy(), s.copy(), run.out.dtype, nodes)
    assert_same(run.out, want, relaxed)
    nonempty = math.prod(shape) > 0
    assert ("HardSigmoidGrad" in run.graph) == nonempty
    assert (run.tiling is not None) == nonempty
    if not nonempty:
        assert run.workspace_size == 0


@SETTINGS
@given(data=st.data())
def test_convenience_threshold(data):
    draw = data.draw
    soc = draw(st.sampled_from(SOCS))
    dt = draw(st.sampled_from(TH_BIASED))
    g_dt = dt if draw(st.integers(0, 5)) != 3 else draw(st.sampled_from(DTYPES))
    s_shape = draw(shapes())
    g_shape = related_shape(draw, s_shape)
    _, g = draw(strided(g_shape, g_dt))
    _, s = draw(strided(s_shape, dt))
    thr = draw(st.one_of(st.sampled_from(THRESHOLDS), st.floats(width=32, allow_nan=True)))
    out_dt = None if draw(st.integers(0, 5)) != 3 else draw(st.sampled_from(DTYPES))
    g = None if draw(st.integers(0, 39)) == 17 else g
    thr = None if draw(st.integers(0, 39)) == 17 else thr

    with watch_kernel_nodes() as nodes:
        run = al.threshold_backward(g, s, thr, soc=soc, out_dtype=out_dt)

    assert not rt.is_initialized()
    assert run.status in DOCUMENTED
    event(f"status {run.status}")
    b = s.shape if g is None else (broadcast(s.shape, g.shape) or s.shape)
    o = np.empty(b, np.dtype(out_dt) if out_dt is not None else s.dtype)
    assert run.status == th_expected_status(soc, g, s, thr, o), run.messages
    if run.status != 0:
        assert run.out is None and run.messages
        return
    assert_same(run.out, th_expected(g.copy(), s.copy(), thr, nodes), any_nan=nan_times_nan(nodes))
    op = "ReluGrad" if abs(np.float32(thr)) <= FLT_EPSILON else "ThresholdGradV2D"
    nonempty = math.prod(b) > 0
    assert (op in run.graph) == nonempty
    assert "Cast" not in run.graph


# --- raw aclnn API ----------------------------------------------------------------------------------------------

class _Dev:
    """One example's device memory on the runtime ``helpers.device`` set up: aclTensors over device copies of
    numpy buffers (strides and offsets kept), phase 1 + 2 on its stream, everything freed by ``close``."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.ptrs: list = []

    def tensor(self, buf: np.ndarray, view: np.ndarray):
        """An aclTensor describing ``view`` over a device copy of ``buf`` (same strides and offset)."""
        item = buf.itemsize
        ptr = None
        if buf.nbytes:
            ret, ptr = acl.aclrtMalloc(buf.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == 0
            self.ptrs.append(ptr)
            assert acl.aclrtMemcpy(ptr, buf.nbytes, buf, buf.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        if view.size == 0:
            return acl.aclCreateTensor(view.shape, _NP2ACL[buf.dtype], acl.contiguous_strides(view.shape), 0,
                                       acl.ACL_FORMAT_ND, (buf.size,), ptr)
        offset = (view.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) // item
        strides = tuple(st_ // item for st_ in view.strides)
        t = acl.aclCreateTensor(view.shape, _NP2ACL[buf.dtype], strides, offset, acl.ACL_FORMAT_ND, (buf.size,),
                                ptr)
        assert t is not None
        return t

    def storage(self, t, dtype, n) -> np.ndarray:
        host = np.zeros(n, dtype)
        if n:
            assert acl.aclrtMemcpy(host, host.nbytes, t.data, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return host

    def run(self, gws, run, *args):
        """Phase 1 + workspace + phase 2; returns (status1, status2)."""
        ret, ws, exe = gws(*args)
        assert ret in DOCUMENTED
        if ret != 0:
            assert exe is None
            return ret, None
        wsp = None
        if ws:
            r, wsp = acl.aclrtMalloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            assert r == 0
            self.ptrs.append(wsp)
        ret2 = run(wsp, ws, exe, self.stream)
        assert ret2 in DOCUMENTED
        assert acl.aclrtSynchronizeStream(self.stream) == 0
        return ret, ret2

    def close(self) -> None:
        for p in self.ptrs:
            assert acl.aclrtFree(p) == 0


def _expect_out_storage(o_buf, o_view, result) -> np.ndarray:
    """The out buffer after a scatter of ``result`` into ``o_view`` (computed on a host copy)."""
    host = o_buf.copy()
    if o_view.size == 0:
        return host
    off = (o_view.__array_interface__["data"][0] - o_buf.__array_interface__["data"][0]) // o_buf.itemsize
    v = np.lib.stride_tricks.as_strided(host[off:], o_view.shape, o_view.strides)
    v[...] = result
    return host


OUT_KINDS = ("plain", "T", "step", "offset")
IN_KINDS = ("plain", "T", "step", "bcast", "offset")


@SETTINGS
@given(data=st.data())
def test_raw_aclnn_hardsigmoid(data):
    draw = data.draw
    soc = draw(st.sampled_from(SOCS))
    g_dt = draw(st.sampled_from(HS_BIASED))
    s_dt = g_dt if draw(st.booleans()) else draw(st.sampled_from(HS_BIASED))
    o_dt = draw(st.sampled_from([promote(g_dt, s_dt)] * 6 + DTYPES))
    shape = draw(shapes())
    g_buf, g = draw(strided(shape if draw(st.integers(0, 9)) != 7 else draw(shapes()), g_dt, IN_KINDS))
    s_buf, s = draw(strided(shape, s_dt, IN_KINDS))
    o_buf, o = draw(strided(shape if draw(st.integers(0, 9)) != 7 else draw(shapes()), o_dt, OUT_KINDS))
    nulls = (draw(st.integers(0, 39)) + 20) % 40      # 0..2 (a nullptr) in 3 of 40 cases

    with device() as stream, watch_kernel_nodes() as nodes:
        dev = _Dev(stream)
        try:
            with acl.soc(soc):
                tg, ts, to = dev.tensor(g_buf, g), dev.tensor(s_buf, s), dev.tensor(o_buf, o)
                args = [tg, ts, to]
                if nulls < 3:
                    args[nulls] = None
                ret, ret2 = dev.run(aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize, aclnn.aclnnHardsigmoidBackward,
                                    *args)
                model = [g, s, o]
                if nulls < 3:
                    model[nulls] = None
                assert ret == hs_expected_status(soc, *model)
                event(f"status {ret}")
                if ret != 0:
                    return
                assert ret2 == 0
                got = dev.storage(to, o_dt, o_buf.size)
            result, relaxed = hs_expected(g.copy(), s.copy(), o_dt, nodes)
            want = _expect_out_storage(o_buf, o, result)
            assert_same(got, want, relaxed)
        finally:
            dev.close()


@SETTINGS
@given(data=st.data())
def test_raw_aclnn_threshold(data):
    draw = data.draw
    soc = draw(st.sampled_from(SOCS))
    dt = draw(st.sampled_from(TH_BIASED))
    g_dt = dt if draw(st.integers(0, 5)) != 3 else draw(st.sampled_from(DTYPES))
    o_dt = dt if draw(st.integers(0, 5)) != 3 else draw(st.sampled_from(DTYPES))
    s_shape = draw(shapes())
    g_shape = related_shape(draw, s_shape)
    b = broadcast(s_shape, g_shape) or s_shape
    o_shape = b if draw(st.integers(0, 9)) != 7 else draw(shapes())
    g_buf, g = draw(strided(g_shape, g_dt, IN_KINDS))
    s_buf, s = draw(strided(s_shape, dt, IN_KINDS))
    o_buf, o = draw(strided(o_shape, o_dt, OUT_KINDS))
    thr = draw(st.one_of(st.sampled_from(THRESHOLDS), st.floats(width=32, allow_nan=True)))
    thr_dt = draw(st.sampled_from([acl.ACL_FLOAT] * 4 + [acl.ACL_DOUBLE, acl.ACL_FLOAT16, acl.ACL_BF16]))
    nulls = (draw(st.integers(0, 59)) + 30) % 60       # 0..3 (a nullptr) in 4 of 60 cases

    with device() as stream, watch_kernel_nodes() as nodes:
        dev = _Dev(stream)
        scalar = None
        try:
            with acl.soc(soc):
                scalar = acl.aclCreateScalar(thr, thr_dt)
                assert scalar is not None
                thr_seen = scalar.ToFloat()                  # what the API reads (ToFloat, §3.2 step 3)
                args = [dev.tensor(g_buf, g), dev.tensor(s_buf, s), scalar, dev.tensor(o_buf, o)]
                model = [g, s, thr_seen, o]
                if nulls < 4:
                    args[nulls] = model[nulls] = None
                ret, ret2 = dev.run(aclnn.aclnnThresholdBackwardGetWorkspaceSize, aclnn.aclnnThresholdBackward,
                                    *args)
                assert ret == th_expected_status(soc, *model)
                event(f"status {ret}")
                if ret != 0:
                    return
                assert ret2 == 0
                got = dev.storage(args[3], o_dt, o_buf.size)
            want = _expect_out_storage(o_buf, o, th_expected(g.copy(), s.copy(), thr_seen, nodes))
            assert_same(got, want, any_nan=nan_times_nan(nodes))
        finally:
            acl.aclDestroyScalar(scalar)
            dev.close()

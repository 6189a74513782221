"""aclnnThresholdBackward through the C-named layers (``acl`` + ``aclnn``).

(a) the seed sample (seeds/004) re-enacted line by line, checked against the formula;
(b) every status-code path of cann_facts §3.2 in its exact order, one test each;
(c) dispatch (ReluGrad when |threshold| <= FLT_EPSILON), broadcasting, empty tensors, the L0 graph,
    phase-2 misuse.
Numeric expectations come from the formula or from ``ascend_lab.golden``, never from the code under test.
"""

from __future__ import annotations

import contextlib
import math

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_bits_equal, bits, device, last_kernel_oracle, watch_kernel_nodes

from ascend_lab import acl, aclnn, golden
from ascend_lab.acl import runtime as rt
from ascend_lab.base import log as oplog
from ascend_lab.base import platform

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, U8, I16, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64))
NULLPTR, INVALID = 161001, 161002
FLT_EPSILON = np.float32(1.1920929e-07)
GWS = aclnn.aclnnThresholdBackwardGetWorkspaceSize
RUN = aclnn.aclnnThresholdBackward
ALL_SOCS = ["Ascend910A", "Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9392",
            "Ascend310P3", "Ascend950PR"]
#: cann_facts §3.1: DAV_2201 / DAV_3510 -> 910B list (with BF16); others -> 910 list
HAS_BF16 = {"Ascend910A": False, "Ascend310P3": False}
RNG = np.random.default_rng(4321)


# --- helpers -------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _kernel_nodes():
    """Which kernel each call ran: the expected values come from that flavour's oracle."""
    with watch_kernel_nodes():
        yield



_NP2ACL = {F32: acl.ACL_FLOAT, F16: acl.ACL_FLOAT16, BF16: acl.ACL_BF16, F64: acl.ACL_DOUBLE, I8: acl.ACL_INT8,
           U8: acl.ACL_UINT8, I16: acl.ACL_INT16, I32: acl.ACL_INT32, I64: acl.ACL_INT64,
           np.dtype(np.bool_): acl.ACL_BOOL, np.dtype(np.complex64): acl.ACL_COMPLEX64}
_ACL2NP = {v: k for k, v in _NP2ACL.items()}


class Device:
    """Tensors and scalars made the way the sample makes them, on the stream ``helpers.device`` set up;
    ``release`` destroys them and frees their memory (checking each call)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.ptrs: list = []
        self.tensors: list = []
        self.scalars: list = []

    def malloc(self, nbytes: int):
        ret, p = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0
        self.ptrs.append(p)
        return p

    def tensor(self, storage: np.ndarray, view=None, strides=None, offset: int = 0):
        storage = np.array(storage, order="C")
        ptr = None
        if storage.nbytes:
            ptr = self.malloc(storage.nbytes)
            assert acl.aclrtMemcpy(ptr, storage.nbytes, storage, storage.nbytes,
                                   acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        view = storage.shape if view is None else tuple(view)
        strides = acl.contiguous_strides(view) if strides is None else tuple(strides)
        t = acl.aclCreateTensor(view, _NP2ACL[storage.dtype], strides, offset, acl.ACL_FORMAT_ND, storage.shape,
                                ptr)
        assert t is not None
        self.tensors.append(t)
        return t

    def empty(self, shape, dtype):
        t = acl.aclCreateTensor(shape, _NP2ACL[np.dtype(dtype)], acl.contiguous_strides(shape), 0,
                                acl.ACL_FORMAT_ND, shape, None)
        assert t is not None
        self.tensors.append(t)
        return t

    def scalar(self, value, dtype=acl.ACL_FLOAT):
        s = acl.aclCreateScalar(value, dtype)
        assert s is not None
        self.scalars.append(s)
        return s

    def read_storage(self, t) -> np.ndarray:
        host = np.zeros(math.prod(t.storage_dims), dtype=_ACL2NP[t.dtype])
        if host.nbytes:
            assert acl.aclrtMemcpy(host, host.nbytes, t.data, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return host

    def read(self, t) -> np.ndarray:
        host = self.read_storage(t)
        if t.IsEmpty():
            return np.zeros(t.view_dims, host.dtype)
        item = host.dtype.itemsize
        return np.lib.stride_tricks.as_strided(host[t.offset:], t.view_dims, [s * item for s in t.strides]).copy()

    def release(self) -> None:
        for t in self.tensors:
            assert acl.aclDestroyTensor(t) == 0
        for s in self.scalars:
            assert acl.aclDestroyScalar(s) == 0
        for p in self.ptrs:
            assert acl.aclrtFree(p) == 0


@pytest.fixture(autouse=True)
def _finalized():
    assert not rt.is_initialized()
    yield
    if rt.is_initialized():
        acl.aclFinalize()


@pytest.fixture
def dev():
    with device() as stream:
        d = Device(stream)
        try:
            yield d
        finally:
            d.release()


def phase1(*args, **kw):
    with oplog.capture() as recs:
        ret, ws, exe = GWS(*args, **kw)
    return ret, ws, exe, " | ".join(r.message for r in recs)


def run_ok(dev: Device, g, s, thr, o):
    ret, ws, exe, msg = phase1(g, s, thr, o)
    assert ret == 0, msg
    wsp = dev.malloc(ws) if ws > 0 else None
    assert RUN(wsp, ws, exe, dev.stream) == 0
    assert acl.aclrtSynchronizeStream(dev.stream) == 0
    return ws, exe


def expected(g: np.ndarray, s: np.ndarray, thr) -> np.ndarray:
    """ThresholdGradV2D, or ReluGrad when |float(thr)| <= FLT_EPSILON (§3.2 step 10), on broadcast inputs."""
    shape = np.broadcast_shapes(g.shape, s.shape)
    gb, sb = np.broadcast_to(g, shape).copy(), np.broadcast_to(s, shape).copy()
    op, oracle = last_kernel_oracle()
    assert ("relu" in op) == bool(abs(np.float32(thr)) <= FLT_EPSILON), op     # ReluGrad iff the threshold is 0
    return oracle(gb, sb)


def values(shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dtype)
    return RNG.uniform(-3, 3, size=shape).astype(np.float32).astype(dtype)


# --- (a) the seed sample, line by line ----------------------------------------------------------------------

def GetShapeSize(shape):
    shapeSize = 1
    for i in shape:
        shapeSize *= i
    return shapeSize


def CreateAclTensor(hostData, shape, dataType):
    size = GetShapeSize(shape) * hostData.itemsize
    ret, deviceAddr = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_SUCCESS
    ret = acl.aclrtMemcpy(deviceAddr, size, hostData, size, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    assert ret == acl.ACL_SUCCESS
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    tensor = acl.aclCreateTensor(shape, dataType, strides, 0, acl.ACL_FORMAT_ND, shape, deviceAddr)
    return 0, deviceAddr, tensor


def reenact_seed_sample(thresholdValue: float):
    deviceId = 0
    assert acl.aclInit(None) == acl.ACL_SUCCESS
    assert acl.aclrtSetDevice(deviceId) == acl.ACL_SUCCESS
    ret, stream = acl.aclrtCreateStream()
    assert ret == acl.ACL_SUCCESS
    selfShape, gradOutputShape, outShape = [2, 2], [2, 2], [2, 2]
    selfHostData = np.array([0.2, 1.2, 2.2, 3.2], dtype=np.float32)
    gradOutputHostData = np.array([4.5, 4.4, 4.3, 4.2], dtype=np.float32)
    outHostData = np.array([0.0, 0.0, 0.0, 0.0], dtype=np.float32)
    ret, selfDeviceAddr, self_ = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    assert ret == acl.ACL_SUCCESS and self_ is not None
    ret, gradOutputDeviceAddr, gradOutput = CreateAclTensor(
        gradOutputHostData, gradOutputShape, acl.ACL_FLOAT)
    assert ret == acl.ACL_SUCCESS and gradOutput is not None
    threshold = acl.aclCreateScalar(np.float32(thresholdValue), acl.ACL_FLOAT)
    assert threshold is not None
    ret, outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    assert ret == acl.ACL_SUCCESS and out is not None

    ret, workspaceSize, executor = aclnn.aclnnThresholdBackwardGetWorkspaceSize(
        gradOutput, self_, threshold, out)
    assert ret == acl.ACL_SUCCESS
    graph = list(executor.graph)
    workspaceAddr = None
    if workspaceSize > 0:
        ret, workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == acl.ACL_SUCCESS
    assert aclnn.aclnnThresholdBackward(workspaceAddr, workspaceSize, executor, stream) == acl.ACL_SUCCESS
    assert acl.aclrtSynchronizeStream(stream) == acl.ACL_SUCCESS

    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    ret = acl.aclrtMemcpy(resultData, resultData.size * resultData.itemsize, outDeviceAddr,
                          size * resultData.itemsize, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == acl.ACL_SUCCESS

    assert acl.aclDestroyTensor(self_) == 0
    assert acl.aclDestroyTensor(gradOutput) == 0
    assert acl.aclDestroyScalar(threshold) == 0
    assert acl.aclDestroyTensor(out) == 0
    assert acl.aclrtFree(selfDeviceAddr) == 0
    assert acl.aclrtFree(gradOutputDeviceAddr) == 0
    assert acl.aclrtFree(outDeviceAddr) == 0
    if workspaceSize > 0:
        assert acl.aclrtFree(workspaceAddr) == 0
    assert acl.aclrtDestroyStream(stream) == 0
    assert acl.aclrtResetDevice(deviceId) == 0
    assert acl.aclFinalize() == 0
    return resultData, graph


def test_seed_sample_reenacted():
    result, graph = reenact_seed_sample(1.0)
    # self > threshold ? grad : 0  ->  {0, 4.4, 4.3, 4.2} (float32 values)
    assert_bits_equal(result, np.array([0.0, 4.4, 4.3, 4.2], np.float32))
    assert graph == ["Contiguous", "Contiguous", "ThresholdGradV2D", "ViewCopy"]
    assert not rt.is_initialized()


def test_seed_sample_threshold_zero_uses_relu_grad():
    result, graph = reenact_seed_sample(0.0)
    assert graph == ["Contiguous", "Contiguous", "ReluGrad", "ViewCopy"]
    # every self value is > 0, so every gradient passes (the article's "{0.0, 4.4, 4.3, 4.2}" for this
    # case contradicts its own formula: 0.2 > 0)
    assert_bits_equal(result, np.array([4.5, 4.4, 4.3, 4.2], np.float32))


# --- (b) check order, cann_facts §3.2 ------------------------------------------------------------------------

def f32(dev, shape=(2, 3)):
    return dev.tensor(values(shape, F32))


def test_threshold_null_first(dev):
    ret, ws, exe, msg = phase1(None, None, None, None)
    assert (ret, ws, exe) == (NULLPTR, 0, None)
    assert "threshold" in msg and "out" not in msg and "gradOutput" not in msg


def test_threshold_null_checked_before_out_null(dev):
    ret, _, _, msg = phase1(f32(dev), f32(dev), None, None)
    assert ret == NULLPTR and "threshold" in msg and "out " not in msg


def test_threshold_null_before_workspace_size_null(dev):
    ret, _, _, msg = phase1(f32(dev), f32(dev), None, f32(dev), workspaceSize=None)
    assert ret == NULLPTR and "threshold" in msg and "workspaceSize" not in msg


def test_out_null_before_grad_output_null(dev):
    ret, _, _, msg = phase1(None, None, dev.scalar(1.0), None)
    assert ret == NULLPTR and "out" in msg and "gradOutput" not in msg


def test_out_null_before_workspace_size_null(dev):
    ret, _, _, msg = phase1(f32(dev), f32(dev), dev.scalar(1.0), None, workspaceSize=None)
    assert ret == NULLPTR and "out" in msg and "workspaceSize" not in msg


def test_workspace_size_null_before_grad_output_null(dev):
    ret, _, _, msg = phase1(None, None, dev.scalar(1.0), f32(dev), workspaceSize=None)
    assert ret == NULLPTR and "workspaceSize" in msg and "gradOutput" not in msg


def test_workspace_size_null_before_dtype_checks(dev):
    bad = dev.tensor(np.zeros((2, 3), I16))
    ret, _, _, msg = phase1(bad, bad, dev.scalar(1.0), bad, workspaceSize=None)
    assert ret == NULLPTR and "workspaceSize" in msg


def test_grad_output_null(dev):
    ret, _, _, msg = phase1(None, None, dev.scalar(1.0), f32(dev))
    assert ret == NULLPTR and "gradOutput" in msg and "self" not in msg


def test_self_null(dev):
    ret, _, _, msg = phase1(f32(dev), None, dev.scalar(1.0), f32(dev))
    assert ret == NULLPTR and "self" in msg


def test_null_checked_before_dtype(dev):
    bad = dev.tensor(np.zeros((2, 3), I16))
    ret, _, _, msg = phase1(bad, None, dev.scalar(1.0), bad)
    assert ret == NULLPTR and "self" in msg


@pytest.mark.parametrize("dtype", [I16, I64, F64, np.dtype(np.bool_)])
def test_grad_output_dtype_not_in_list(dev, dtype):
    g = dev.tensor(np.zeros((2, 3), dtype))
    ret, ws, exe, msg = phase1(g, f32(dev), dev.scalar(1.0), f32(dev))
    assert (ret, exe) == (INVALID, None)
    assert "gradOutput" in msg


@pytest.mark.parametrize("dtype", [I16, I64, F64])
def test_self_dtype_not_in_list(dev, dtype):
    s = dev.tensor(np.zeros((2, 3), dtype))
    ret, _, _, msg = phase1(f32(dev), s, dev.scalar(1.0), f32(dev))
    assert ret == INVALID and "self" in msg


def test_list_checked_before_equality(dev):
    g = dev.tensor(np.zeros((2, 3), I16))
    ret, _, _, msg = phase1(g, dev.tensor(np.zeros((2, 3), F16)), dev.scalar(1.0), f32(dev))
    assert ret == INVALID and "INT16" in msg


@pytest.mark.parametrize("g_dt, s_dt", [(F32, F16), (F16, F32), (I8, U8), (I32, F32), (BF16, F32)])
def test_grad_output_and_self_dtype_must_match(dev, g_dt, s_dt):
    ret, _, exe, msg = phase1(dev.tensor(values((2, 3), g_dt)), dev.tensor(values((2, 3), s_dt)),
                              dev.scalar(1.0), dev.tensor(np.zeros((2, 3), s_dt)))
    assert (ret, exe) == (INVALID, None)
    assert "gradOutput" in msg and "self" in msg


@pytest.mark.parametrize("in_dt, out_dt", [(F16, F32), (F32, F16), (F32, F64), (I8, I32), (I32, F32)])
def test_out_dtype_must_equal_self(dev, in_dt, out_dt):
    ret, _, exe, msg = phase1(dev.tensor(values((2, 3), in_dt)), dev.tensor(values((2, 3), in_dt)),
                              dev.scalar(1.0), dev.tensor(np.zeros((2, 3), out_dt)))
    assert (ret, exe) == (INVALID, None)
    assert "out" in msg


_ACL2NP_NAME = {F32: "FLOAT", F16: "FLOAT16", I32: "INT32"}


@pytest.mark.parametrize("soc", ALL_SOCS)
@pytest.mark.parametrize("in_dt, thr", [(F32, 1.0), (F32, 0.0), (F16, 0.5), (I32, 2.0)])
def test_out_complex64_is_refused_on_every_soc(dev, soc, in_dt, thr):
    """Unlike HardsigmoidBackward (CanCast), ThresholdBackward wants out's dtype *equal* to self's:
    ``OP_CHECK_DTYPE_NOT_MATCH(out, self->GetDataType())`` in CheckDtypeValid (ops-nn aclnn_threshold_backward.cpp;
    cann_facts §3.2 step 5.2) -> 161002, whatever the threshold (ReluGrad or ThresholdGradV2D) and the SoC."""
    with acl.soc(soc):
        ret, ws, exe, msg = phase1(dev.tensor(values((2, 3), in_dt)), dev.tensor(values((2, 3), in_dt)),
                                   dev.scalar(thr), dev.tensor(np.zeros((2, 3), np.complex64)))
    assert (ret, ws, exe) == (INVALID, 0, None)
    assert "out dtype COMPLEX64" in msg and _ACL2NP_NAME[in_dt] in msg and "should be the same" in msg


def test_dtype_equality_checked_before_rank(dev):
    nine_f16 = dev.tensor(np.zeros((1,) * 9, F16))
    ret, _, _, msg = phase1(nine_f16, dev.tensor(np.zeros((1,) * 9, F32)), dev.scalar(1.0),
                            dev.tensor(np.zeros((1,) * 9, F32)))
    assert ret == INVALID and "dim" not in msg


@pytest.mark.parametrize("soc", ALL_SOCS)
@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32, I8, U8])
def test_dtype_list_per_soc(dev, soc, dtype):
    g_np, s_np = values((3, 4), dtype), values((3, 4), dtype)
    with acl.soc(soc):
        o = dev.tensor(np.zeros((3, 4), dtype))
        ret, ws, exe, msg = phase1(dev.tensor(g_np), dev.tensor(s_np), dev.scalar(0.5), o)
        if dtype == BF16 and not HAS_BF16.get(soc, True):
            assert (ret, exe) == (INVALID, None)
            assert "gradOutput" in msg and "BF16" in msg
            return
        assert ret == 0, msg
        assert RUN(dev.malloc(ws) if ws else None, ws, exe, dev.stream) == 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np, 0.5))


@pytest.mark.parametrize("soc, thr, ok", [
    ("Ascend950PR", 0.0, True),
    ("Ascend950PR", 1e-8, True),          # IsFloatEqual(1e-8, 0) -> the REGBASE list
    ("Ascend950PR", -1e-8, True),
    ("Ascend950PR", 1.0, False),
    ("Ascend950PR", 2.4e-7, False),
    ("Ascend910B4", 0.0, False),
    ("Ascend910B1", 0.0, False),
    ("Ascend910_9392", 0.0, False),
    ("Ascend910A", 0.0, False),
    ("Ascend310P3", 0.0, False),
    ("Ascend910B4", 1.0, False),
])
def test_int64_only_on_950_with_threshold_zero(dev, soc, thr, ok):
    g_np = np.array([[5, -7, 2**40 + 1], [0, 1, -1]], I64)
    s_np = np.array([[-1, 0, 1], [2**62, -(2**62), 3]], I64)
    with acl.soc(soc):
        o = dev.tensor(np.zeros((2, 3), I64))
        ret, ws, exe, msg = phase1(dev.tensor(g_np), dev.tensor(s_np), dev.scalar(thr), o)
        if not ok:
            assert (ret, exe) == (INVALID, None)
            assert "INT64" in msg
            return
        assert ret == 0, msg
        assert exe.graph == ["Contiguous", "Contiguous", "ReluGrad", "ViewCopy"]
        assert RUN(dev.malloc(ws) if ws else None, ws, exe, dev.stream) == 0
    got = dev.read(o)
    assert_bits_equal(got, golden.relu_grad(g_np, s_np))
    np.testing.assert_array_equal(got, np.where(s_np > 0, g_np, 0))


def test_list_choice_follows_each_calls_threshold(dev):
    """thresholdVal_ is refreshed on every call (a stale 0 must not keep INT64 allowed)."""
    t = dev.tensor(np.zeros((3,), I64))
    with acl.soc("Ascend950PR"):
        assert phase1(t, t, dev.scalar(0.0), t)[0] == 0
        assert phase1(t, t, dev.scalar(1.0), t)[0] == INVALID
        assert phase1(t, t, dev.scalar(0.0), t)[0] == 0


@pytest.mark.parametrize("which", ["gradOutput", "self"])
def test_rank_nine(dev, which):
    shapes = {"gradOutput": (1,) * 8, "self": (1,) * 8}
    shapes[which] = (1,) * 9
    g, s = dev.tensor(values(shapes["gradOutput"], F32)), dev.tensor(values(shapes["self"], F32))
    ret, _, exe, msg = phase1(g, s, dev.scalar(1.0), dev.tensor(np.zeros((1,) * 9, F32)))
    assert (ret, exe) == (INVALID, None)
    assert which in msg and "9" in msg


def test_rank_gradoutput_checked_first(dev):
    nine = dev.tensor(values((1,) * 9, F32))
    ret, _, _, msg = phase1(nine, nine, dev.scalar(1.0), nine)
    assert ret == INVALID and "gradOutput" in msg and "dim" in msg


def test_out_rank_nine_fails_on_the_shape_check(dev):
    eight = dev.tensor(values((1,) * 8, F32))
    ret, _, _, msg = phase1(eight, eight, dev.scalar(1.0), dev.tensor(np.zeros((1,) * 9, F32)))
    assert ret == INVALID and "out" in msg


def test_rank_eight_is_fine(dev):
    shape = (2, 1, 2, 1, 2, 1, 2, 1)
    g_np, s_np = values(shape, F32), values(shape, F32)
    o = dev.tensor(np.zeros(shape, F32))
    run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(0.25), o)
    assert_bits_equal(dev.read(o), expected(g_np, s_np, 0.25))


@pytest.mark.parametrize("s_shape, g_shape", [((2, 3), (3, 2)), ((4,), (3,)), ((2, 3, 4), (5, 4))])
def test_broadcast_failure(dev, s_shape, g_shape):
    ret, _, exe, msg = phase1(f32(dev, g_shape), f32(dev, s_shape), dev.scalar(1.0), f32(dev, s_shape))
    assert (ret, exe) == (INVALID, None)
    assert "broadcast" in msg and "self" in msg and "gradOutput" in msg


def test_broadcast_checked_before_out_shape(dev):
    ret, _, _, msg = phase1(f32(dev, (3, 2)), f32(dev, (2, 3)), dev.scalar(1.0), f32(dev, (7,)))
    assert ret == INVALID and "broadcast" in msg


@pytest.mark.parametrize("s_shape, g_shape, o_shape", [
    ((2, 3), (2, 3), (3, 2)),
    ((3, 1), (1, 4), (3, 1)),       # out must be the broadcast shape (3, 4)
    ((3, 1), (1, 4), (4, 3)),
    ((4,), (3, 4), (4,)),
    ((2, 3), (2, 3), (1, 2, 3)),
    ((2, 3), (2, 3), (6,)),
])
def test_out_shape_must_be_the_broadcast_shape(dev, s_shape, g_shape, o_shape):
    ret, _, exe, msg = phase1(f32(dev, g_shape), f32(dev, s_shape), dev.scalar(1.0), f32(dev, o_shape))
    assert (ret, exe) == (INVALID, None)
    assert "out" in msg


def test_scalar_wrong_type(dev):
    ret, _, exe, msg = phase1(f32(dev), f32(dev), 1.0, f32(dev))
    assert ret != 0 and exe is None and "threshold" in msg


def test_executor_null_only_after_the_checks(dev):
    """CANN does not check the executor out-pointer (§3.2 step 4); the simulator reports it last."""
    ret, _, _, msg = phase1(f32(dev), f32(dev), dev.scalar(1.0), f32(dev), executor=None)
    assert ret == NULLPTR and "executor" in msg
    ret, _, _, msg = phase1(f32(dev), f32(dev), None, f32(dev), executor=None)
    assert ret == NULLPTR and "threshold" in msg
    ret, _, _, msg = phase1(dev.tensor(np.zeros((2, 3), I16)), f32(dev), dev.scalar(1.0), f32(dev), executor=None)
    assert ret == INVALID


# --- dispatch: ReluGrad when |threshold| <= FLT_EPSILON -------------------------------------------------------

@pytest.mark.parametrize("thr, op", [
    (0.0, "ReluGrad"), (-0.0, "ReluGrad"), (1e-8, "ReluGrad"), (-1e-8, "ReluGrad"),
    (float(FLT_EPSILON), "ReluGrad"), (-float(FLT_EPSILON), "ReluGrad"),
    (2.4e-7, "ThresholdGradV2D"), (-2.4e-7, "ThresholdGradV2D"), (1.0, "ThresholdGradV2D"),
    (float("nan"), "ThresholdGradV2D"), (float("inf"), "ThresholdGradV2D"), (float("-inf"), "ThresholdGradV2D"),
])
def test_dispatch(dev, thr, op):
    s_np = np.array([5e-9, -5e-9, 0.0, -0.0, 1e-7, 3e-7, -2.0, 2.0, np.nan, np.inf, -np.inf, 1.0], np.float32)
    g_np = np.arange(1, 13, dtype=np.float32)
    o = dev.tensor(np.zeros(12, F32))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(thr), o)
    assert exe.graph == ["Contiguous", "Contiguous", op, "ViewCopy"]
    kern = exe.nodes[2]
    if op == "ThresholdGradV2D":
        assert bits(np.float32(kern.attrs["threshold"])) == bits(np.float32(thr))
    got = dev.read(o)
    assert_bits_equal(got, expected(g_np, s_np, thr))
    if op == "ReluGrad":
        # 5e-9 > 0 passes even when thr = 1e-8 (cann_facts §9: PyTorch would give 0)
        assert got[0] == 1.0


@pytest.mark.parametrize("value, dtype, op", [
    (0, acl.ACL_INT32, "ReluGrad"), (1, acl.ACL_INT32, "ThresholdGradV2D"),
    (0.0, acl.ACL_DOUBLE, "ReluGrad"), (1e-300, acl.ACL_DOUBLE, "ReluGrad"),
    (0.5, acl.ACL_FLOAT16, "ThresholdGradV2D"), (0.0, acl.ACL_BF16, "ReluGrad"),
])
def test_threshold_scalar_dtypes(dev, value, dtype, op):
    g_np, s_np = values((4,), F32), values((4,), F32)
    o = dev.tensor(np.zeros(4, F32))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(value, dtype), o)
    assert exe.graph[2] == op
    assert_bits_equal(dev.read(o), expected(g_np, s_np, value))


@pytest.mark.parametrize(("custom", "flavour"), [(True, "experimental"), (False, "tbe")])
def test_fp16_compares_against_half_threshold(dev, custom, flavour):
    """cann_facts §4.2/§9 (experimental kernel) and kernel_flavours §5.2 step 5 (TBE: the threshold converted to
    the compute dtype): fp16 compares against half(thr): thr=0.10002 -> 0.10003662, so self=0.10003662 gives 0.
    On the default SoC (910B4) the experimental package registers ThresholdGradV2D (§1)."""
    s_np = np.array([0.10003662, 0.1, 0.2], F16)
    g_np = np.array([1, 2, 3], F16)
    o = dev.tensor(np.zeros(3, F16))
    with acl.custom_package() if custom else contextlib.nullcontext():
        ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(0.10002), o)
    assert exe.nodes[2].attrs["kernel"] == flavour
    got = dev.read(o)
    assert_bits_equal(got, expected(g_np, s_np, 0.10002))
    if custom:
        assert_bits_equal(got, golden.threshold_grad_v2_d(g_np, s_np, 0.10002))
    assert got[0] == 0 and got[2] == 3


# --- broadcasting ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("s_shape, g_shape", [
    ((3, 1), (1, 4)), ((4,), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (2, 3)), ((2, 3), ()),
    ((1,), (5,)),
])
@pytest.mark.parametrize("thr", [0.3, 0.0])
@pytest.mark.parametrize("soc", [platform.DEFAULT_SOC, "Ascend950PR"])
def test_broadcast_result(dev, s_shape, g_shape, thr, soc):
    """No BroadcastTo node (kernel_flavours §6): the inputs reach the kernel with their own shapes, as in CANN's
    graph, and the stock kernels (TBE on the default 910B4, main on 950) broadcast them natively."""
    g_np, s_np = values(g_shape, F32), values(s_shape, F32)
    shape = np.broadcast_shapes(s_shape, g_shape)
    o = dev.tensor(np.zeros(shape, F32))
    with acl.soc(soc):
        ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(thr), o)
    assert exe.graph == ["Contiguous", "Contiguous", "ReluGrad" if thr == 0 else "ThresholdGradV2D", "ViewCopy"]
    kern = exe.nodes[2]
    assert [tuple(t.view_dims) for t in kern.inputs] == [tuple(g_shape), tuple(s_shape)]
    assert tuple(kern.outputs[0].view_dims) == shape
    got = dev.read(o)
    assert_bits_equal(got, expected(g_np, s_np, thr))
    # and plainly: numpy broadcasting of "self > thr ? grad : 0"
    np.testing.assert_array_equal(got, np.where(s_np > np.float32(thr), g_np, np.float32(0)))


def test_broadcast_on_the_experimental_kernel_reads_past_the_smaller_input(dev):
    """The experimental ThresholdGradV2D (custom package, 910B) tiles by input 0's element count (cann_facts §4.1)
    and reads both inputs at the same offsets: with self (4,) and gradOutput (3, 4) it reads 8 elements past
    self's end -- inside the tensor's GM padding, so a gm-padding finding and wrong values, the real kernel's
    defect (kernel_flavours §6); with a gradOutput far larger than self's padding the kernel stops
    (gm-out-of-bounds) and phase 2 fails with 361001."""
    g_np, s_np = values((3, 4), F32), values((4,), F32)
    o = dev.tensor(np.zeros((3, 4), F32))
    with acl.custom_package():
        ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(0.3), o)
    assert exe.nodes[2].attrs["kernel"] == "experimental"
    found = [w for k in exe.kernel_runs for w in k.warnings if w.kind == "gm-padding"]
    assert any("input_feature" in w.message and "reads" in w.message for w in found), found
    got = dev.read(o)
    assert_bits_equal(got[0], np.where(s_np > np.float32(0.3), g_np[0], np.float32(0)), "row 0 reads self itself")
    g_big = values((300, 4), F32)
    o = dev.tensor(np.zeros((300, 4), F32))
    with acl.custom_package():
        ret, ws, exe, msg = phase1(dev.tensor(g_big), dev.tensor(s_np), dev.scalar(0.3), o)
        assert ret == 0, msg
        with oplog.capture() as recs:
            assert RUN(dev.malloc(ws), ws, exe, dev.stream) == 361001
    assert any("gm-out-of-bounds" in r.message and "input_feature" in r.message for r in recs)


# --- empty tensors (§3.2 step 8) ----------------------------------------------------------------------------------

@pytest.mark.parametrize("s_shape, g_shape", [((0,), (0,)), ((0, 4), (0, 4)), ((0, 1), (1, 4)), ((3, 0), (1,))])
def test_empty_tensors_short_circuit(dev, s_shape, g_shape):
    shape = np.broadcast_shapes(s_shape, g_shape)
    def make(sh):
        return dev.empty(sh, F32) if 0 in sh else dev.tensor(values(sh, F32))

    s, g, o = make(s_shape), make(g_shape), make(shape)
    ret, ws, exe, msg = phase1(g, s, dev.scalar(1.0), o)
    assert (ret, ws) == (0, 0), msg
    assert exe is not None
    assert not any(n.op in ("ThresholdGradV2D", "ReluGrad") for n in exe.nodes)
    assert RUN(None, 0, exe, dev.stream) == 0
    assert acl.aclrtSynchronizeStream(dev.stream) == 0
    assert dev.stream.tasks == []


def test_checks_apply_to_empty_tensors(dev):
    e = dev.empty((0, 3), F32)
    one = dev.scalar(1.0)
    assert phase1(dev.empty((0, 3), I16), dev.empty((0, 3), I16), one, dev.empty((0, 3), I16))[0] == INVALID
    assert phase1(dev.empty((0, 3), F16), e, one, e)[0] == INVALID
    assert phase1(e, e, one, dev.empty((0, 3), F16))[0] == INVALID
    assert phase1(e, e, one, dev.empty((3, 0), F32))[0] == INVALID
    assert phase1(e, dev.empty((0, 2), F32), one, e)[0] == INVALID           # (0,3) vs (0,2) don't broadcast
    nine = dev.empty((0,) + (1,) * 8, F32)
    assert phase1(nine, nine, one, nine)[0] == INVALID
    assert phase1(e, e, None, e)[0] == NULLPTR
    assert phase1(e, None, one, e)[0] == NULLPTR
    with acl.soc("Ascend910A"):
        b = dev.empty((0, 3), BF16)
        ret, _, _, msg = phase1(b, b, one, b)
        assert ret == INVALID and "BF16" in msg
    with acl.soc("Ascend950PR"):
        i = dev.empty((0, 3), I64)
        assert phase1(i, i, one, i)[0] == INVALID
        assert phase1(i, i, dev.scalar(0.0), i)[0] == 0


# --- the L0 graph --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32, I8, U8])
def test_graph_same_dtype_never_casts(dev, dtype):
    g_np, s_np = values((5, 7), dtype), values((5, 7), dtype)
    o = dev.tensor(np.zeros((5, 7), dtype))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(1.5), o)
    assert exe.graph == ["Contiguous", "Contiguous", "ThresholdGradV2D", "ViewCopy"]
    assert exe.nodes[2].outputs[0].dtype == _NP2ACL[dtype]
    assert_bits_equal(dev.read(o), expected(g_np, s_np, 1.5))
    assert "ThresholdGradV2D" in dev.stream.tasks


def test_graph_non_contiguous_out_scatters(dev):
    g_np, s_np = values((3, 2), F32), values((3, 2), F32)
    sentinel = np.full((3, 5), -9.0, np.float32)
    o = dev.tensor(sentinel, view=(3, 2), strides=(5, 2), offset=1)     # columns 1 and 3
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(0.1), o)
    want = sentinel.copy()
    want[:, 1:4:2] = expected(g_np, s_np, 0.1)
    assert_bits_equal(dev.read_storage(o).reshape(3, 5), want)


def test_graph_non_contiguous_inputs(dev):
    base = values((4, 6), I32)
    g = dev.tensor(base, view=(6, 4), strides=(1, 6))                     # transposed
    s_base = values((12, 4), I32)
    s = dev.tensor(s_base, view=(6, 4), strides=(8, 1))                   # every other row
    o = dev.tensor(np.zeros((6, 4), I32))
    ws, exe = run_ok(dev, g, s, dev.scalar(2.5), o)
    cont = [n for n in exe.nodes if n.op == "Contiguous"]
    assert len(cont) == 2 and all(n.launches_kernel for n in cont)
    assert_bits_equal(dev.read(o), expected(base.T.copy(), s_base[::2].copy(), 2.5))


@pytest.mark.parametrize(("custom", "flavour"), [(True, "experimental"), (False, "tbe")])
def test_nan_and_signed_zero(dev, custom, flavour):
    s_np = np.array([np.nan, -np.nan, 2.0, 2.0, 0.5, np.inf], np.float32)
    g_np = np.array([1.0, 1.0, np.nan, -0.0, 7.0, -np.inf], np.float32)
    o = dev.tensor(np.full(6, 3.0, np.float32))
    with acl.custom_package() if custom else contextlib.nullcontext():
        ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), dev.scalar(1.0), o)
    assert exe.nodes[2].attrs["kernel"] == flavour
    got = dev.read(o)
    assert_bits_equal(got, expected(g_np, s_np, 1.0))
    if custom:
        assert_bits_equal(got, golden.threshold_grad_v2_d(g_np, s_np, 1.0))
        assert got[0] == 0 and got[1] == 0           # cann_facts §4.2: NaN > thr is false -> 0
    else:
        # kernel_flavours §5.2 step 6: 910B has tik.vcopy, so vsel(vcmp(x, thr, 'le'), 0, g): NaN <= thr is
        # false -> the gradient passes
        assert got[0] == 1 and got[1] == 1
    assert np.isnan(got[2]) and np.signbit(got[3]) and got[5] == -np.inf


# --- phase 2 misuse --------------------------------------------------------------------------------------------

def _planned(dev):
    ret, ws, exe, msg = phase1(f32(dev), f32(dev), dev.scalar(1.0), f32(dev))
    assert ret == 0 and ws > 0, msg
    return ws, exe


def test_phase2_executor_null(dev):
    with oplog.capture() as recs:
        assert RUN(None, 0, None, dev.stream) == NULLPTR
    assert any("executor" in r.message for r in recs)


def test_phase2_executor_reused(dev):
    ws, exe = _planned(dev)
    wsp = dev.malloc(ws)
    assert RUN(wsp, ws, exe, dev.stream) == 0
    assert RUN(wsp, ws, exe, dev.stream) == INVALID


def test_phase2_workspace_too_small(dev):
    ws, exe = _planned(dev)
    small = dev.malloc(ws - 1)
    with oplog.capture() as recs:
        assert RUN(small, ws - 1, exe, dev.stream) == INVALID
    assert any("workspace" in r.message for r in recs)


def test_phase2_workspace_null_when_needed(dev):
    ws, exe = _planned(dev)
    with oplog.capture() as recs:
        assert RUN(None, ws, exe, dev.stream) == NULLPTR
    assert any("workspace" in r.message for r in recs)


def test_phase2_empty_executor_reused(dev):
    e = dev.empty((0,), F32)
    ret, ws, exe, _ = phase1(e, e, dev.scalar(1.0), e)
    assert RUN(None, 0, exe, dev.stream) == 0
    assert RUN(None, 0, exe, dev.stream) == INVALID

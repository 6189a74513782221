"""aclnnHardsigmoidBackward through the C-named layers (``acl`` + ``aclnn``).

(a) the seed sample (seeds/000) re-enacted line by line, checked against the formula;
(b) every status-code path of cann_facts §1.2 in its exact order, one test each;
(c) the L0 graph (§1.2 step 6) and phase-2 misuse.
Numeric expectations come from the formula or from ``ascend_lab.golden``, never from the code under test.
"""

from __future__ import annotations

import contextlib
import math

import ml_dtypes
import numpy as np
import pytest
from helpers import KERNEL_NODES, assert_bits_equal, device, last_kernel_oracle, watch_kernel_nodes

from ascend_lab import acl, aclnn, golden
from ascend_lab.acl import runtime as rt
from ascend_lab.base import log as oplog
from ascend_lab.base import platform

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
NULLPTR, INVALID = 161001, 161002
GWS = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize
RUN = aclnn.aclnnHardsigmoidBackward
ALL_SOCS = ["Ascend910A", "Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9392",
            "Ascend310P3", "Ascend950PR"]
#: cann_facts §1.1: SocVersion in [ASCEND910B, ASCEND910E] or regbase -> {f32, bf16, f16}; else {f32, f16}
BF16_OK = {"Ascend910B1": True, "Ascend910B2": True, "Ascend910B3": True, "Ascend910B4": True,
           "Ascend910_9392": True, "Ascend950PR": True, "Ascend910A": False, "Ascend310P3": False}
RNG = np.random.default_rng(1234)


# --- helpers -------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _kernel_nodes():
    """Which kernel each call ran: the expected values come from that flavour's oracle."""
    with watch_kernel_nodes():
        yield



def np_dtype(d) -> np.dtype:
    return {acl.ACL_FLOAT: F32, acl.ACL_FLOAT16: F16, acl.ACL_BF16: BF16, acl.ACL_DOUBLE: F64,
            acl.ACL_INT8: np.dtype(np.int8), acl.ACL_UINT8: np.dtype(np.uint8), acl.ACL_INT16: np.dtype(np.int16),
            acl.ACL_INT32: np.dtype(np.int32), acl.ACL_INT64: np.dtype(np.int64), acl.ACL_BOOL: np.dtype(np.bool_),
            acl.ACL_COMPLEX64: np.dtype(np.complex64)}[d]


def acl_dtype(d: np.dtype):
    return {F32: acl.ACL_FLOAT, F16: acl.ACL_FLOAT16, BF16: acl.ACL_BF16, F64: acl.ACL_DOUBLE,
            np.dtype(np.int8): acl.ACL_INT8, np.dtype(np.uint8): acl.ACL_UINT8,
            np.dtype(np.int16): acl.ACL_INT16, np.dtype(np.int32): acl.ACL_INT32,
            np.dtype(np.int64): acl.ACL_INT64, np.dtype(np.bool_): acl.ACL_BOOL,
            np.dtype(np.complex64): acl.ACL_COMPLEX64}[np.dtype(d)]


class Device:
    """Tensors made the way the sample makes them, on the stream ``helpers.device`` set up; ``release`` destroys
    them and frees their memory (checking each call)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.ptrs: list = []
        self.tensors: list = []

    def malloc(self, nbytes: int):
        ret, p = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0
        self.ptrs.append(p)
        return p

    def tensor(self, storage: np.ndarray, view=None, strides=None, offset: int = 0, dtype=None):
        """An aclTensor over a device copy of ``storage``; default: the contiguous view of its shape."""
        storage = np.array(storage, order="C")        # (np.ascontiguousarray would make a 0-d array 1-d)
        ptr = None
        if storage.nbytes:
            ptr = self.malloc(storage.nbytes)
            assert acl.aclrtMemcpy(ptr, storage.nbytes, storage, storage.nbytes,
                                   acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        view = storage.shape if view is None else tuple(view)
        strides = acl.contiguous_strides(view) if strides is None else tuple(strides)
        t = acl.aclCreateTensor(view, acl_dtype(storage.dtype) if dtype is None else dtype, strides, offset,
                                acl.ACL_FORMAT_ND, storage.shape, ptr)
        assert t is not None
        self.tensors.append((t, storage.dtype))
        return t

    def empty(self, shape, dtype):
        t = acl.aclCreateTensor(shape, acl_dtype(dtype), acl.contiguous_strides(shape), 0, acl.ACL_FORMAT_ND,
                                shape, None)
        assert t is not None
        return t

    def read_storage(self, t) -> np.ndarray:
        dt = np_dtype(t.dtype)
        host = np.zeros(math.prod(t.storage_dims), dtype=dt)
        if host.nbytes:
            assert acl.aclrtMemcpy(host, host.nbytes, t.data, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return host

    def read(self, t) -> np.ndarray:
        """Copy the storage back (aclrtMemcpy) and apply the view on the host, independently of t.numpy()."""
        host = self.read_storage(t)
        item = host.dtype.itemsize
        if t.IsEmpty():
            return np.zeros(t.view_dims, host.dtype)
        return np.lib.stride_tricks.as_strided(host[t.offset:], t.view_dims, [s * item for s in t.strides]).copy()

    def release(self) -> None:
        for t, _ in self.tensors:
            assert acl.aclDestroyTensor(t) == 0
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
    """GetWorkspaceSize with the log captured: (status, ws, executor, messages)."""
    with oplog.capture() as recs:
        ret, ws, exe = GWS(*args, **kw)
    return ret, ws, exe, " | ".join(r.message for r in recs)


def run_ok(dev: Device, g, s, o):
    ret, ws, exe, msg = phase1(g, s, o)
    assert ret == 0, msg
    wsp = dev.malloc(ws) if ws > 0 else None
    assert RUN(wsp, ws, exe, dev.stream) == 0
    assert acl.aclrtSynchronizeStream(dev.stream) == 0
    return ws, exe


def expected(g: np.ndarray, s: np.ndarray, out_dtype: np.dtype | None = None) -> np.ndarray:
    """The oracle of the kernel that ran (the flavour the SoC dispatched to) in PromoteType(g, s) (cann_facts §7),
    then the L0 Cast to out."""
    pair = {g.dtype, s.dtype}
    promote = g.dtype if len(pair) == 1 else F32          # f16+f32, bf16+f32, f16+bf16 -> f32 (§7)
    y = last_kernel_oracle()[1](golden.cast(g, promote), golden.cast(s, promote))
    if out_dtype is None or np.dtype(out_dtype) == promote:
        return y
    if np.dtype(out_dtype) == F64:
        return y.astype(F64)                              # exact widening
    return golden.cast(y, out_dtype, "CAST_RINT")


def values(shape, dtype, lo=-5.0, hi=5.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32).astype(dtype)


# --- (a) the seed sample, line by line ----------------------------------------------------------------------

def GetShapeSize(shape):  # the sample's name
    shape_size = 1
    for i in shape:
        shape_size *= i
    return shape_size


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


#: (SoC, custom package installed?): the sample on a stock install of the default SoC (910B4 runs the legacy TBE
#: kernel) and on Ascend950PR with the ops-nn experimental package installed (its HardSigmoidGrad), kernel_flavours §1
SAMPLE_SETUPS = [(platform.DEFAULT_SOC, False), ("Ascend950PR", True)]


@pytest.mark.parametrize(("soc", "custom"), SAMPLE_SETUPS)
def test_seed_sample_reenacted(soc, custom):
    with acl.soc(soc), (acl.custom_package() if custom else contextlib.nullcontext()):
        resultData = _seed_sample()
    node = KERNEL_NODES[-1]
    assert node.attrs["kernel"] == ("experimental" if custom else "tbe"), node.attrs["kernel"]
    selfHostData = gradOutHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    assert_bits_equal(resultData, last_kernel_oracle()[1](gradOutHostData, selfHostData))
    x, g = selfHostData, gradOutHostData
    if custom:
        # the formula (seed 000, the experimental kernel): grad * alpha where 0 < alpha*self + beta < 1, each op
        # rounded in float32, with the experimental aclnn's alpha 0.16666666 (cann_facts §1.3)
        alpha, beta = np.float32(0.16666666), np.float32(0.5)
        tmp = (x * alpha).astype(np.float32) + beta
        want = np.where((tmp > np.float32(0)) & (tmp < np.float32(1)), g * alpha, np.float32(0)).astype(np.float32)
        assert_bits_equal(resultData, want)
        # spelled out: x = 0, 1, 2 pass; x = 3 gives 3*0.16666666f = 0.49999997f, + 0.5f rounds to 1.0f -> 0
        assert_bits_equal(resultData, np.array([0, alpha, np.float32(2) * alpha, 0, 0, 0, 0, 0], np.float32))
    else:
        # the stock TBE kernel (kernel_flavours §5.1): |x| < 3 ? grad * alpha : 0 with the main aclnn's
        # alpha = 1/6f (§1; beta unused): x = 0, 1, 2 pass, x = 3 does not
        alpha = np.float32(1) / np.float32(6)
        assert_bits_equal(resultData, np.where(np.abs(x) < 3, g * alpha, np.float32(0)).astype(np.float32))
        assert_bits_equal(resultData, np.array([0, alpha, np.float32(2) * alpha, 0, 0, 0, 0, 0], np.float32))
    assert not rt.is_initialized()


def _seed_sample() -> np.ndarray:
    """The sample's steps 1-7, line by line; returns the result copied back to the host."""
    # 1. device/stream init
    deviceId = 0
    assert acl.aclInit(None) == acl.ACL_SUCCESS
    assert acl.aclrtSetDevice(deviceId) == acl.ACL_SUCCESS
    ret, stream = acl.aclrtCreateStream()
    assert ret == acl.ACL_SUCCESS
    # 2. inputs and outputs
    gradOutShape, selfShape, outShape = [4, 2], [4, 2], [4, 2]
    selfHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    gradOutHostData = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.float32)
    outHostData = np.zeros(8, dtype=np.float32)
    ret, selfDeviceAddr, self_ = CreateAclTensor(selfHostData, selfShape, acl.ACL_FLOAT)
    assert ret == acl.ACL_SUCCESS and self_ is not None
    ret, gradOutDeviceAddr, gradOut = CreateAclTensor(gradOutHostData, gradOutShape, acl.ACL_FLOAT)
    assert ret == acl.ACL_SUCCESS and gradOut is not None
    ret, outDeviceAddr, out = CreateAclTensor(outHostData, outShape, acl.ACL_FLOAT)
    assert ret == acl.ACL_SUCCESS and out is not None
    # 3. the two-phase API
    ret, workspaceSize, executor = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(gradOut, self_, out)
    assert ret == acl.ACL_SUCCESS
    assert isinstance(workspaceSize, int) and workspaceSize >= 0 and executor is not None
    workspaceAddr = None
    if workspaceSize > 0:
        ret, workspaceAddr = acl.aclrtMalloc(workspaceSize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == acl.ACL_SUCCESS
    ret = aclnn.aclnnHardsigmoidBackward(workspaceAddr, workspaceSize, executor, stream)
    assert ret == acl.ACL_SUCCESS
    # 4. synchronise
    assert acl.aclrtSynchronizeStream(stream) == acl.ACL_SUCCESS
    # 5. copy the result back
    size = GetShapeSize(outShape)
    resultData = np.zeros(size, dtype=np.float32)
    ret = acl.aclrtMemcpy(resultData, resultData.size * resultData.itemsize, outDeviceAddr, size * 4,
                          acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == acl.ACL_SUCCESS
    # 6./7. release
    assert acl.aclDestroyTensor(self_) == 0
    assert acl.aclDestroyTensor(gradOut) == 0
    assert acl.aclDestroyTensor(out) == 0
    assert acl.aclrtFree(selfDeviceAddr) == 0
    assert acl.aclrtFree(gradOutDeviceAddr) == 0
    assert acl.aclrtFree(outDeviceAddr) == 0
    if workspaceSize > 0:
        assert acl.aclrtFree(workspaceAddr) == 0
    assert acl.aclrtDestroyStream(stream) == 0
    assert acl.aclrtResetDevice(deviceId) == 0
    assert acl.aclFinalize() == 0
    return resultData


# --- (b) check order, cann_facts §1.2 ----------------------------------------------------------------------

def f32(dev, shape=(4, 2)):
    return dev.tensor(values(shape, F32))


def test_workspace_size_nullptr_checked_before_anything(dev):
    ret, ws, exe, msg = phase1(None, None, None, workspaceSize=None)
    assert (ret, ws, exe) == (NULLPTR, 0, None)
    assert "workspaceSize" in msg and "gradOutput" not in msg


def test_executor_nullptr_checked_before_anything(dev):
    ret, ws, exe, msg = phase1(None, None, None, executor=None)
    assert (ret, exe) == (NULLPTR, None)
    assert "executor" in msg and "gradOutput" not in msg


def test_out_pointers_checked_before_dtype_and_shape(dev):
    bad = dev.tensor(np.zeros((1,) * 9, np.int32))
    ret, _, _, msg = phase1(bad, bad, bad, workspaceSize=None)
    assert ret == NULLPTR and "workspaceSize" in msg
    ret, _, _, msg = phase1(bad, bad, bad, executor=None)
    assert ret == NULLPTR and "executor" in msg


def test_grad_output_null_first(dev):
    ret, ws, exe, msg = phase1(None, None, None)
    assert (ret, ws, exe) == (NULLPTR, 0, None)
    assert "gradOutput" in msg and "self" not in msg


def test_self_null(dev):
    ret, _, _, msg = phase1(f32(dev), None, None)
    assert ret == NULLPTR and "self" in msg and "gradOutput" not in msg


def test_out_null(dev):
    ret, _, _, msg = phase1(f32(dev), f32(dev), None)
    assert ret == NULLPTR and "out" in msg


def test_null_checked_before_dtype(dev):
    i32 = dev.tensor(np.zeros((4, 2), np.int32))
    ret, _, _, msg = phase1(i32, None, i32)
    assert ret == NULLPTR and "self" in msg
    ret, _, _, msg = phase1(i32, i32, None)
    assert ret == NULLPTR and "out" in msg


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64, np.bool_, np.float64, np.int16])
def test_grad_output_dtype_not_supported(dev, dtype):
    g = dev.tensor(np.zeros((4, 2), dtype))
    ret, ws, exe, msg = phase1(g, f32(dev), f32(dev))
    assert (ret, exe) == (INVALID, None)
    assert "gradOutput" in msg


def test_grad_output_dtype_checked_before_self(dev):
    i32 = dev.tensor(np.zeros((4, 2), np.int32))
    i8 = dev.tensor(np.zeros((4, 2), np.int8))
    ret, _, _, msg = phase1(i32, i8, f32(dev))
    assert ret == INVALID and "gradOutput" in msg and "INT32" in msg


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.bool_])
def test_self_dtype_not_supported(dev, dtype):
    s = dev.tensor(np.zeros((4, 2), dtype))
    ret, _, _, msg = phase1(f32(dev), s, f32(dev))
    assert ret == INVALID and "self" in msg


@pytest.mark.parametrize("soc", ALL_SOCS)
def test_bf16_support_per_soc(dev, soc):
    g_np, s_np = values((3, 5), BF16), values((3, 5), BF16)
    with acl.soc(soc):
        g, s, o = dev.tensor(g_np), dev.tensor(s_np), dev.tensor(np.zeros((3, 5), BF16))
        ret, ws, exe, msg = phase1(g, s, o)
        if not BF16_OK[soc]:
            assert (ret, exe) == (INVALID, None)
            assert "gradOutput" in msg and "BF16" in msg
            # self alone in bf16 is caught too (gradOutput passes)
            ret, _, _, msg = phase1(dev.tensor(values((3, 5), F32)), s, dev.tensor(np.zeros((3, 5), F32)))
            assert ret == INVALID and "self" in msg
            return
        assert ret == 0, msg
        wsp = dev.malloc(ws) if ws else None
        assert RUN(wsp, ws, exe, dev.stream) == 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


@pytest.mark.parametrize("soc", ALL_SOCS)
@pytest.mark.parametrize("dtype", [F32, F16])
def test_fp32_fp16_supported_everywhere(dev, soc, dtype):
    g_np, s_np = values((2, 3), dtype), values((2, 3), dtype)
    with acl.soc(soc):
        g, s, o = dev.tensor(g_np), dev.tensor(s_np), dev.tensor(np.zeros((2, 3), dtype))
        run_ok(dev, g, s, o)
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


def test_out_dtype_not_checked_against_the_support_list(dev):
    """§1.2: out is only checked with CanCast; bf16 out on Ascend910A passes the checks."""
    g_np, s_np = values((2, 4), F32), values((2, 4), F32)
    with acl.soc("Ascend910A"):
        o = dev.tensor(np.zeros((2, 4), BF16))
        run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    assert_bits_equal(dev.read(o), expected(g_np, s_np, BF16))


@pytest.mark.parametrize("out_dtype", [np.int32, np.bool_, np.int8, np.uint8, np.int64, np.int16])
def test_out_dtype_not_castable(dev, out_dtype):
    o = dev.tensor(np.zeros((4, 2), out_dtype))
    ret, ws, exe, msg = phase1(f32(dev), f32(dev), o)
    assert (ret, exe) == (INVALID, None)
    assert "out" in msg


@pytest.mark.parametrize("in_dtype", [F16, BF16])
def test_out_int_not_castable_from_half_types(dev, in_dtype):
    o = dev.tensor(np.zeros((4, 2), np.int32))
    ret, _, _, msg = phase1(dev.tensor(values((4, 2), in_dtype)), dev.tensor(values((4, 2), in_dtype)), o)
    assert ret == INVALID and "out" in msg


def test_out_double_passes_the_check(dev):
    g_np, s_np = values((4, 2), F32), values((4, 2), F32)
    o = dev.tensor(np.zeros((4, 2), F64))
    ret, ws, exe, msg = phase1(dev.tensor(g_np), dev.tensor(s_np), o)
    assert ret == 0, msg
    assert exe.graph[-2:] == ["Cast", "ViewCopy"]
    assert exe.nodes[-2].outputs[0].dtype == acl.ACL_DOUBLE
    wsp = dev.malloc(ws) if ws else None
    assert RUN(wsp, ws, exe, dev.stream) == 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np, F64))


def test_out_complex64_passes_the_check(dev):
    o = dev.tensor(np.zeros((4, 2), np.complex64))
    ret, _, exe, msg = phase1(f32(dev), f32(dev), o)
    assert ret == 0, msg
    assert exe is not None and exe.nodes[-2].outputs[0].dtype == acl.ACL_COMPLEX64


C64 = np.dtype(np.complex64)
#: kernel_flavours §6 (ops-math cast.cpp): promote -> COMPLEX64 is in the AI Core list only on the 950 (f32, bf16);
#: everywhere else both dtypes are in the AI CPU list, so the AI CPU kernel runs it.
C64_ON_AICORE = {("Ascend950PR", F32), ("Ascend950PR", BF16)}


@pytest.mark.parametrize(("soc", "dtype"), [(soc, dt) for soc in ALL_SOCS for dt in (F32, F16, BF16)
                                             if dt != BF16 or BF16_OK[soc]])      # bf16 in: see test_bf16_support
def test_out_complex64_is_accepted_and_holds_the_real_result(dev, soc, dtype):
    """The real API accepts a complex64 ``out``: its only check on out's dtype is
    ``OP_CHECK_RESULT_DTYPE_CAST_FAILED(promote, out)`` (ops-nn aclnn_hardsigmoid_backward.cpp, CheckDtypeValid), and
    ``CanCast`` refuses only complex -> real, floating -> integral and non-bool -> bool (opbase data_type_utils.h,
    cann_facts §7). The graph's last Cast then writes (result, +0) -- the AI CPU Cast's
    ``static_cast<std::complex<float>>`` (golden.cast)."""
    with acl.soc(soc):
        g_np = values((3, 5), dtype)
        s_np = np.concatenate([values((3, 4), dtype), np.array([[-3.0], [3.0], [0.0]]).astype(dtype)], axis=1)
        o = dev.tensor(np.full((3, 5), 7 + 7j, C64))
        _, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
        cast = exe.nodes[-2]
        assert (cast.op, cast.outputs[0].dtype) == ("Cast", acl.ACL_COMPLEX64)
        assert cast.attrs["engine"] == ("AICORE" if (soc, dtype) in C64_ON_AICORE else "AICPU")
        got = dev.read(o)
        assert_bits_equal(got, expected(g_np, s_np, C64))
        assert not np.signbit(got.imag).any() and (got.imag == 0).all()


def test_dtype_checked_before_rank(dev):
    bad = dev.tensor(np.zeros((1,) * 9, np.int32))
    nine = dev.tensor(np.zeros((1,) * 9, F32))
    ret, _, _, msg = phase1(bad, nine, nine)
    assert ret == INVALID and "INT32" in msg and "dim" not in msg


def test_out_cast_checked_before_rank_and_shape(dev):
    o = dev.tensor(np.zeros((1,) * 9, np.int32))
    ret, _, _, msg = phase1(f32(dev), f32(dev), o)
    assert ret == INVALID and "INT32" in msg and "dim" not in msg and "Shape" not in msg


@pytest.mark.parametrize("which", ["gradOutput", "self", "out"])
def test_rank_nine_each_argument(dev, which):
    shapes = {"gradOutput": (1,) * 8, "self": (1,) * 8, "out": (1,) * 8}
    shapes[which] = (1,) * 9
    ts = [dev.tensor(values(shapes[k], F32)) for k in ("gradOutput", "self", "out")]
    ret, ws, exe, msg = phase1(*ts)
    assert (ret, exe) == (INVALID, None)
    assert which in msg and "9" in msg and "8" in msg


def test_rank_checked_in_order_before_shape_equality(dev):
    nine = dev.tensor(values((1,) * 9, F32))
    ret, _, _, msg = phase1(nine, nine, nine)
    assert ret == INVALID and "gradOutput" in msg and "dim" in msg
    ret, _, _, msg = phase1(f32(dev, (2, 2)), nine, f32(dev, (3,)))
    assert ret == INVALID and "self" in msg and "dim" in msg


def test_rank_eight_and_zero_are_fine(dev):
    for shape in [(1, 2, 1, 2, 1, 2, 1, 2), ()]:
        g_np, s_np = values(shape, F32), values(shape, F32)
        o = dev.tensor(np.zeros(shape, F32))
        run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
        assert_bits_equal(dev.read(o), expected(g_np, s_np))


@pytest.mark.parametrize("g_shape, s_shape, o_shape, culprit", [
    ((2, 4), (4, 2), (4, 2), "gradOutput"),
    ((1, 2), (4, 2), (4, 2), "gradOutput"),      # broadcastable, but no broadcast here
    ((4, 2), (4, 2), (4, 1), "out"),
    ((4, 2), (4, 2), (8,), "out"),               # same element count, other shape
    ((4, 2), (4, 2), (1, 4, 2), "out"),
    ((), (1,), (1,), "gradOutput"),
])
def test_shape_mismatch(dev, g_shape, s_shape, o_shape, culprit):
    ret, ws, exe, msg = phase1(f32(dev, g_shape), f32(dev, s_shape), f32(dev, o_shape))
    assert (ret, exe) == (INVALID, None)
    assert culprit in msg and "self" in msg


def test_grad_shape_checked_before_out_shape(dev):
    ret, _, _, msg = phase1(f32(dev, (2, 4)), f32(dev, (4, 2)), f32(dev, (3,)))
    assert ret == INVALID and "gradOutput" in msg


def test_not_an_acl_tensor(dev):
    ret, _, exe, msg = phase1(np.zeros((4, 2), np.float32), f32(dev), f32(dev))
    assert ret != 0 and exe is None and "gradOutput" in msg


def test_destroyed_tensor_refused(dev):
    g = f32(dev)
    acl.aclDestroyTensor(g)
    ret, _, _, msg = phase1(g, f32(dev), f32(dev))
    assert ret == INVALID and "gradOutput" in msg


# --- empty tensors (§1.2 step 5) -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4), (1,) * 7 + (0,)])
def test_empty_tensors_short_circuit(dev, shape):
    g, s, o = dev.empty(shape, F32), dev.empty(shape, F32), dev.empty(shape, F32)
    ret, ws, exe, msg = phase1(g, s, o)
    assert (ret, ws) == (0, 0), msg
    assert exe is not None
    assert not any(n.op == "HardSigmoidGrad" for n in exe.nodes)
    assert RUN(None, 0, exe, dev.stream) == 0
    assert acl.aclrtSynchronizeStream(dev.stream) == 0
    assert dev.stream.tasks == []


def test_empty_mixed_dtypes_still_ok(dev):
    ret, ws, exe, msg = phase1(dev.empty((0, 2), F16), dev.empty((0, 2), BF16), dev.empty((0, 2), F64))
    assert (ret, ws) == (0, 0), msg


def test_checks_apply_to_empty_tensors(dev):
    e = dev.empty((0, 3), F32)
    assert phase1(dev.empty((0, 3), np.int32), e, e)[0] == INVALID
    assert phase1(e, e, dev.empty((0, 3), np.int32))[0] == INVALID
    assert phase1(e, dev.empty((3, 0), F32), e)[0] == INVALID
    assert phase1(e, e, dev.empty((0, 2), F32))[0] == INVALID
    nine = dev.empty((0,) + (1,) * 8, F32)
    assert phase1(nine, nine, nine)[0] == INVALID
    assert phase1(e, None, e)[0] == NULLPTR
    assert phase1(e, e, e, workspaceSize=None)[0] == NULLPTR
    with acl.soc("Ascend310P3"):
        b = dev.empty((0, 3), BF16)
        ret, _, _, msg = phase1(b, b, b)
        assert ret == INVALID and "BF16" in msg


# --- (c) the L0 graph --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_graph_same_dtype(dev, dtype):
    g_np, s_np = values((5, 7), dtype), values((5, 7), dtype)
    o = dev.tensor(np.zeros((5, 7), dtype))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    assert exe.graph == ["Contiguous", "Contiguous", "HardSigmoidGrad", "ViewCopy"]
    kern = exe.nodes[2]
    # the stock (main) aclnn passes alpha 1/6f and beta 0.5 to L0 (kernel_flavours §1); see also the next test
    assert np.float32(kern.attrs["alpha"]) == np.float32(1) / np.float32(6)
    assert kern.attrs["beta"] == 0.5
    assert kern.outputs[0].dtype == acl_dtype(dtype)
    assert_bits_equal(dev.read(o), expected(g_np, s_np))
    assert "HardSigmoidGrad" in dev.stream.tasks


@pytest.mark.parametrize(("soc", "custom", "flavour", "alpha"), [
    ("Ascend910B4", False, "tbe", np.float32(1) / np.float32(6)),
    ("Ascend950PR", False, "main", np.float32(1) / np.float32(6)),
    ("Ascend950PR", True, "experimental", np.float32(0.16666666)),
    ("Ascend910B4", True, "tbe", np.float32(1) / np.float32(6)),          # the package has no 910B HardSigmoidGrad
])
def test_graph_alpha_follows_the_aclnn_of_the_kernel(dev, soc, custom, flavour, alpha):
    """The shipping aclnn is the main one (alpha 1/6f, kernel_flavours §1); the experimental package's aclnn passes
    0.16666666 (cann_facts §1.3), so the L0 node carries the alpha of the kernel that runs."""
    g_np, s_np = values((5, 7), F32), values((5, 7), F32)
    o = dev.tensor(np.zeros((5, 7), F32))
    with acl.soc(soc), (acl.custom_package() if custom else contextlib.nullcontext()):
        ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    kern = exe.nodes[2]
    assert (kern.op, kern.attrs["kernel"]) == ("HardSigmoidGrad", flavour)
    assert np.float32(kern.attrs["alpha"]) == alpha and kern.attrs["beta"] == 0.5
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


@pytest.mark.parametrize("g_dt, s_dt", [(F16, F32), (F32, F16), (BF16, F32), (F32, BF16)])
def test_graph_mixed_inputs_cast_the_narrow_one(dev, g_dt, s_dt):
    g_np, s_np = values((3, 4), g_dt), values((3, 4), s_dt)
    o = dev.tensor(np.zeros((3, 4), F32))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    casts = [n for n in exe.nodes if n.op == "Cast"]
    assert len(casts) == 1
    narrow = g_dt if g_dt != F32 else s_dt
    assert casts[0].inputs[0].dtype == acl_dtype(narrow) and casts[0].outputs[0].dtype == acl.ACL_FLOAT
    want = (["Contiguous", "Cast", "Contiguous"] if g_dt != F32 else ["Contiguous", "Contiguous", "Cast"])
    assert exe.graph == want + ["HardSigmoidGrad", "ViewCopy"]
    assert exe.nodes[3].outputs[0].dtype == acl.ACL_FLOAT
    assert ws > 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


def test_graph_fp16_and_bf16_meet_in_fp32(dev):
    g_np, s_np = values((6,), F16), values((6,), BF16)
    o = dev.tensor(np.zeros((6,), F32))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    assert exe.graph == ["Contiguous", "Cast", "Contiguous", "Cast", "HardSigmoidGrad", "ViewCopy"]
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


@pytest.mark.parametrize("in_dt, out_dt", [(F32, F16), (F32, BF16), (F16, F32), (BF16, F32), (F16, BF16)])
def test_graph_out_dtype_differs_from_promote(dev, in_dt, out_dt):
    g_np = values((4, 9), in_dt, -100, 100)
    s_np = values((4, 9), in_dt)
    o = dev.tensor(np.zeros((4, 9), out_dt))
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    assert exe.graph == ["Contiguous", "Contiguous", "HardSigmoidGrad", "Cast", "ViewCopy"]
    cast = exe.nodes[3]
    assert cast.inputs[0].dtype == acl_dtype(in_dt) and cast.outputs[0].dtype == acl_dtype(out_dt)
    assert_bits_equal(dev.read(o), expected(g_np, s_np, out_dt))


def test_graph_non_contiguous_out_scatters(dev):
    g_np, s_np = values((4, 2), F32), values((4, 2), F32)
    sentinel = np.full((4, 4), -7.0, np.float32)
    o = dev.tensor(sentinel, view=(4, 2), strides=(4, 2), offset=1)      # columns 1 and 3
    ws, exe = run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    assert exe.graph[-1] == "ViewCopy"
    storage = dev.read_storage(o).reshape(4, 4)
    want = sentinel.copy()
    want[:, 1::2] = expected(g_np, s_np)
    assert_bits_equal(storage, want)


def test_graph_transposed_out(dev):
    g_np, s_np = values((3, 2), F32), values((3, 2), F32)
    o = dev.tensor(np.zeros((2, 3), F32), view=(3, 2), strides=(1, 3))
    run_ok(dev, dev.tensor(g_np), dev.tensor(s_np), o)
    assert_bits_equal(dev.read_storage(o).reshape(2, 3), expected(g_np, s_np).T.copy())


def test_graph_non_contiguous_inputs_are_gathered(dev):
    base_g = values((6, 4), F32)
    base_s = values((4, 6), F32)
    g = dev.tensor(base_g, view=(3, 4), strides=(8, 1))                  # every other row
    s = dev.tensor(base_s, view=(3, 4), strides=(2, 6), offset=1)        # transposed, strided, offset
    g_np = base_g[::2]
    s_np = np.lib.stride_tricks.as_strided(base_s.reshape(-1)[1:], (3, 4), (8, 24)).copy()
    o = dev.tensor(np.zeros((3, 4), F32))
    ws, exe = run_ok(dev, g, s, o)
    cont = [n for n in exe.nodes if n.op == "Contiguous"]
    assert len(cont) == 2 and all(n.launches_kernel for n in cont)
    assert all(n.outputs[0].IsContiguous() for n in cont)
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


def test_graph_broadcast_view_input(dev):
    row = values((5,), F32)
    g = dev.tensor(row, view=(3, 5), strides=(0, 1))
    s_np = values((3, 5), F32)
    o = dev.tensor(np.zeros((3, 5), F32))
    run_ok(dev, g, dev.tensor(s_np), o)
    assert_bits_equal(dev.read(o), expected(np.broadcast_to(row, (3, 5)).copy(), s_np))


SPECIAL_X = np.array([-3.0000002, -3, -2.9999998, 2.9999998, 3, 0, -0.0, np.nan, np.inf, -np.inf, 1, -1], np.float32)
SPECIAL_G = np.array([1, 1, 1, 1, 1, np.nan, -0.0, 1, 1, 1, np.inf, -np.inf], np.float32)


def test_special_values_experimental(dev):
    """The experimental kernel, where its package registers it (Ascend950PR, kernel_flavours §1)."""
    o = dev.tensor(np.zeros(12, F32))
    with acl.soc("Ascend950PR"), acl.custom_package():
        ws, exe = run_ok(dev, dev.tensor(SPECIAL_G), dev.tensor(SPECIAL_X), o)
    assert exe.nodes[2].attrs["kernel"] == "experimental"
    got = dev.read(o)
    assert_bits_equal(got, golden.hard_sigmoid_grad(SPECIAL_G, SPECIAL_X))
    assert got[1] == np.float32(0.16666666)          # §9: x = -3 leaks through with alpha = 0.16666666f
    assert np.isnan(got[5]) and np.signbit(got[6])   # NaN grad passes; -0 * alpha = -0


def test_special_values_stock_tbe(dev):
    """The default SoC's stock kernel, the legacy TBE one (kernel_flavours §5.1): |x| < 3 with alpha 1/6f, so
    x = -3 does not leak, a NaN or infinite x gives 0."""
    o = dev.tensor(np.zeros(12, F32))
    ws, exe = run_ok(dev, dev.tensor(SPECIAL_G), dev.tensor(SPECIAL_X), o)
    assert exe.nodes[2].attrs["kernel"] == "tbe"
    got = dev.read(o)
    assert_bits_equal(got, expected(SPECIAL_G, SPECIAL_X))
    sixth = np.float32(1) / np.float32(6)
    assert got[:5].tolist() == [0, 0, sixth, sixth, 0]
    assert np.isnan(got[5]) and np.signbit(got[6])   # NaN grad passes; -0 * alpha = -0
    assert got[7:10].tolist() == [0, 0, 0]           # NaN, +inf, -inf x


# --- phase 2 misuse ------------------------------------------------------------------------------------------

def _planned(dev):
    ret, ws, exe, msg = phase1(f32(dev), f32(dev), f32(dev))
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
    with oplog.capture() as recs:
        assert RUN(wsp, ws, exe, dev.stream) == INVALID
    assert any("executor" in r.message for r in recs)


def test_phase2_workspace_too_small(dev):
    ws, exe = _planned(dev)
    small = dev.malloc(ws // 2)
    with oplog.capture() as recs:
        assert RUN(small, ws // 2, exe, dev.stream) == INVALID
    assert any("workspace" in r.message for r in recs)
    # the size claims enough but the allocation behind the pointer is too small
    assert RUN(small, ws, exe, dev.stream) == INVALID
    # a pointer near the end of a big enough allocation
    big = dev.malloc(ws)
    assert RUN(big + 32, ws, exe, dev.stream) == INVALID


def test_phase2_workspace_null_when_needed(dev):
    ws, exe = _planned(dev)
    with oplog.capture() as recs:
        assert RUN(None, ws, exe, dev.stream) == NULLPTR
    assert any("workspace" in r.message for r in recs)


def test_phase2_freed_workspace(dev):
    ws, exe = _planned(dev)
    ret, wsp = acl.aclrtMalloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert acl.aclrtFree(wsp) == 0
    assert RUN(wsp, ws, exe, dev.stream) == INVALID


def test_phase2_bigger_workspace_is_fine(dev):
    g_np, s_np = values((4, 2), F32), values((4, 2), F32)
    o = dev.tensor(np.zeros((4, 2), F32))
    ret, ws, exe, _ = phase1(dev.tensor(g_np), dev.tensor(s_np), o)
    assert RUN(dev.malloc(ws + 4096), ws + 4096, exe, dev.stream) == 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


def test_phase2_workspace_size_as_numpy_integer(dev):
    g_np, s_np = values((4, 2), F32), values((4, 2), F32)
    o = dev.tensor(np.zeros((4, 2), F32))
    ret, ws, exe, _ = phase1(dev.tensor(g_np), dev.tensor(s_np), o)
    assert RUN(dev.malloc(ws), np.uint64(ws), exe, dev.stream) == 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np))


def test_phase2_destroyed_stream(dev):
    ws, exe = _planned(dev)
    ret, s = acl.aclrtCreateStream()
    assert acl.aclrtDestroyStream(s) == 0
    assert RUN(dev.malloc(ws), ws, exe, s) != 0


def test_phase2_default_stream(dev):
    g_np, s_np = values((4, 2), F32), values((4, 2), F32)
    o = dev.tensor(np.zeros((4, 2), F32))
    ret, ws, exe, _ = phase1(dev.tensor(g_np), dev.tensor(s_np), o)
    assert RUN(dev.malloc(ws), ws, exe, None) == 0
    assert acl.aclrtSynchronizeStream(None) == 0
    assert_bits_equal(dev.read(o), expected(g_np, s_np))

"""Lent device memory (``DeviceAllocation.lend``): an upload a kernel only reads costs no copy, and nothing can tell.

A lent allocation must behave exactly like one the bytes were copied into: every read sees them, a write copies
them in first (the caller's array never changes), views cached over the lent bytes are dropped at that moment,
padding and guard reads see what an upload leaves there, and freeing never hands the caller's array to the pool.
"""

from __future__ import annotations

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab.acl import pool
from ascend_lab.acl import runtime as rt
from ascend_lab.ascendc import (
    VECIN,
    DataCopyPad,
    DataCopyParams,
    GlobalTensor,
    TPipe,
    TQue,
    float_,
)
from ascend_lab.ascendc.launcher import launch
from ascend_lab.base.platform import get_soc
from ascend_lab.ops.common.kernel_args import gm_from_array
from ascend_lab.standalone import kernel_entry, make_soc, run_kernel, tiling_for

SOC = get_soc("Ascend950PR")


def _host(n: int = 1024, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_lent_bytes_are_read_in_place_and_copied_in_on_a_look():
    host = _host()
    addr = gm_from_array(host, "x", lend=True)
    alloc = addr.ptr.allocation
    assert alloc.lent
    assert alloc.read_bytes().ctypes.data == host.ctypes.data          # no copy made
    seen = alloc.buffer                                                 # a look: copied in
    assert not alloc.lent
    assert seen.ctypes.data != host.ctypes.data
    assert np.array_equal(seen[:host.nbytes].view(np.float32), host)
    assert not seen[host.nbytes:].any()                                 # padding and guard as an upload leaves them
    assert host.flags.writeable                                         # the caller's array is as it was


def _copy_kernel(src_index: int, dst_index: int, n: int, read_back: list):
    """Core 0 copies n floats GM[src] -> UB -> GM[dst], then reads GM[dst] again through a GlobalTensor that read
    it before the write (its view cache was made over lent bytes)."""
    def kernel(*args):
        gms = args[:2]
        pipe = TPipe()
        q = TQue(VECIN, 1)
        pipe.InitBuffer(q, 1, n * 4)
        src, dst, again = GlobalTensor(float_), GlobalTensor(float_), GlobalTensor(float_)
        src.SetGlobalBuffer(gms[src_index], n)
        dst.SetGlobalBuffer(gms[dst_index], n)
        again.SetGlobalBuffer(gms[dst_index], n)
        p = DataCopyParams(1, n * 4, 0, 0)
        t = q.AllocTensor(float_)
        DataCopyPad(t, again[0], p)                  # a read of the destination first: caches its lent view
        q.EnQue(t)
        t = q.DeQue(float_)
        q.FreeTensor(t)
        t = q.AllocTensor(float_)
        DataCopyPad(t, src[0], p)
        q.EnQue(t)
        t = q.DeQue(float_)
        DataCopyPad(dst[0], t, p)                     # the write: the destination's bytes are copied in first
        q.FreeTensor(t)
        t = q.AllocTensor(float_)
        DataCopyPad(t, again[0], p)                   # must see the write, not the lent bytes
        q.EnQue(t)
        t = q.DeQue(float_)
        read_back.append(t.data[:n].copy())
        q.FreeTensor(t)
    return kernel


@pytest.mark.parametrize("record", [False, True])
def test_a_kernel_writing_a_lent_input_sees_its_write_and_leaves_the_caller_alone(record):
    a, b = _host(seed=1), _host(seed=2)
    a_before, b_before = a.copy(), b.copy()
    args = [gm_from_array(a, "a", lend=True), gm_from_array(b, "b", lend=True)]
    seen: list = []
    launch(_copy_kernel(0, 1, a.size, seen), 1, args, b"", SOC, outputs=(1,), record=record)
    assert np.array_equal(seen[0], a)                                   # the re-read saw the kernel's write
    dst = args[1].ptr.allocation
    assert not dst.lent and np.array_equal(dst.buffer[:b.nbytes].view(np.float32), a)
    assert args[0].ptr.allocation.lent                                  # only read: still lent, never copied
    assert np.array_equal(a, a_before) and np.array_equal(b, b_before)


def test_lent_and_copied_uploads_give_the_same_run_bit_for_bit():
    g, x = _host(50_000, 3), _host(50_000, 4) * np.float32(4)
    for op, kernel in (("threshold_grad_v2_d", "main"), ("hard_sigmoid_grad", "experimental"),
                       ("threshold_grad_v2_d", "experimental")):
        soc = "Ascend950PR" if kernel == "main" or op == "hard_sigmoid_grad" else "Ascend910B4"
        run, out = run_kernel(op, g, x, threshold=0.5, soc=soc, kernel=kernel, record=True)
        # the same launch on copied uploads (what run_kernel did before it lent)
        info = make_soc(soc)
        td = tiling_for(op, g.size, "float32", info, kernel, threshold=0.5)
        entry, template = kernel_entry(op, td, "float32", 2, kernel)
        args = [gm_from_array(g, "g"), gm_from_array(x, "x"), gm_from_array(None, "out", nbytes=g.nbytes)]
        ref = launch(entry, td.blockDim, args, td.to_bytes(), info, outputs=(2,), record=True, tiling_data=td,
                     **template)
        want = args[2].ptr.allocation.buffer[:g.nbytes].view(np.float32)
        assert np.array_equal(out.view(np.uint32), want.view(np.uint32)), (op, kernel)
        assert run.trace.cycles == ref.trace.cycles
        assert [w.kind for w in run.trace.warnings] == [w.kind for w in ref.trace.warnings]
        assert len(run.trace.events) == len(ref.trace.events)


def test_a_read_past_a_lent_tensor_sees_the_padding_an_upload_leaves():
    # the experimental ThresholdGradV2D reads whole 256-byte blocks: its last core reads past the tensor's end
    g, x = _host(1000, 5), _host(1000, 6)
    run, out = run_kernel("threshold_grad_v2_d", g, x, threshold=0.0, soc="Ascend910B4", kernel="experimental",
                          record=False)
    assert any(w.kind == "gm-padding" for w in run.trace.warnings)
    assert np.array_equal(out, np.where(x > 0, g, np.float32(0)))


def test_freeing_a_lent_allocation_never_pools_the_callers_array():
    host = _host(4096)
    alloc = rt.DeviceAllocation(host.nbytes)
    alloc.lend(host.view(np.uint8))
    alloc.release("aclrtFree")
    assert alloc.released and not alloc.lent
    for bucket in pool._POOL.values():
        assert all(not np.shares_memory(buf, host) for buf in bucket)


def test_lend_refuses_what_it_cannot_stand_for():
    alloc = rt.DeviceAllocation(64)
    with pytest.raises(ValueError, match="64 C-contiguous uint8 bytes"):
        alloc.lend(np.zeros(32, np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        alloc.lend(np.zeros(16, np.float32))
    alloc.release("aclrtFree")
    with pytest.raises(ValueError, match="released"):
        alloc.lend(np.zeros(64, np.uint8))


def test_the_memory_check_of_an_acltensor_does_not_copy_lent_bytes_in():
    from ascend_lab import acl
    host = _host(256)
    ptr = rt.DevicePtr(rt.DeviceAllocation(host.nbytes))
    ptr.allocation.lend(host.view(np.uint8))
    t = acl.aclCreateTensor((256,), np.float32, (1,), 0, acl.ACL_FORMAT_ND, (256,), ptr)
    assert t.memory_error() is None
    assert ptr.allocation.lent


def test_lending_uploads_lends_whole_allocations_only_and_a_download_sees_the_bytes():
    assert rt.aclInit(None) == 0 and rt.aclrtSetDevice(0) == 0
    try:
        host = _host(512)
        ret, whole = rt.aclrtMalloc(host.nbytes, rt.ACL_MEM_MALLOC_HUGE_FIRST)
        ret2, part = rt.aclrtMalloc(host.nbytes * 2, rt.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == ret2 == 0
        with rt.lending_uploads():
            assert rt.aclrtMemcpy(whole, host.nbytes, host, host.nbytes, rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            assert rt.aclrtMemcpy(part, host.nbytes * 2, host, host.nbytes, rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert whole.allocation.lent and not part.allocation.lent        # a partial fill is a copy
        assert rt.aclrtMemcpy(whole, host.nbytes, host, host.nbytes, rt.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert not whole.allocation.lent                                 # outside the block: an ordinary copy
        with rt.lending_uploads():
            rt.aclrtMemcpy(whole, host.nbytes, host, host.nbytes, rt.ACL_MEMCPY_HOST_TO_DEVICE)
        back = np.zeros_like(host)
        assert rt.aclrtMemcpy(back, back.nbytes, whole, host.nbytes, rt.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert np.array_equal(back, host)
        for p in (whole, part):
            assert rt.aclrtFree(p) == 0
    finally:
        rt.aclrtResetDevice(0)
        rt.aclFinalize()


def test_a_convenience_call_writing_over_its_own_input_is_right_and_leaves_the_other_input_alone():
    g, x = _host(3000, 7), _host(3000, 8) * np.float32(4)
    want = al.hardsigmoid_backward(g.copy(), x, soc="Ascend910B4").out
    x_before = x.copy()
    run = al.hardsigmoid_backward(g, x, soc="Ascend910B4", out=g)        # out is the lent grad's array
    assert run.status == 0 and run.out is g
    assert np.array_equal(g.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(x, x_before)

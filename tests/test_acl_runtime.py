"""The ACL runtime layer (``ascend_lab.acl``): init/finalize, devices, streams, device memory, memcpy,
aclCreateTensor / aclCreateScalar and the enum values of ``acl/acl_base.h``.

Expectations come from the seed samples (the call sequence and its return codes), docs/design.md §3 (enum
values, ``None`` is nullptr, errors are returned codes, Python misuse raises) and the ACL docs the
runtime module cites. Every test leaves the runtime finalized.
"""

from __future__ import annotations

import gc

import ml_dtypes
import numpy as np
import pytest

from ascend_lab import acl
from ascend_lab.acl import memory, pool
from ascend_lab.acl import runtime as rt
from ascend_lab.base import log as oplog

BF16 = np.dtype(ml_dtypes.bfloat16)
ERR = acl.ACL_ERROR_INVALID_PARAM


@pytest.fixture(autouse=True)
def _always_finalized():
    """Every test starts and ends with the runtime finalized (whatever the test did)."""
    assert not rt.is_initialized(), "a previous test left the runtime initialized"
    yield
    if rt.is_initialized():
        acl.aclFinalize()
    assert not rt.is_initialized()


@pytest.fixture
def dev():
    """aclInit + aclrtSetDevice(0); aclFinalize always runs afterwards."""
    assert acl.aclInit(None) == acl.ACL_SUCCESS
    try:
        assert acl.aclrtSetDevice(0) == acl.ACL_SUCCESS
        yield 0
    finally:
        acl.aclFinalize()


def malloc(nbytes: int) -> acl.DevicePtr:
    ret, ptr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_SUCCESS and ptr is not None
    return ptr


def upload(host: np.ndarray) -> acl.DevicePtr:
    ptr = malloc(host.nbytes)
    assert acl.aclrtMemcpy(ptr, host.nbytes, host, host.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    return ptr


def download(ptr: acl.DevicePtr, nbytes: int, dtype=np.uint8) -> np.ndarray:
    host = np.zeros(nbytes // np.dtype(dtype).itemsize, dtype=dtype)
    assert acl.aclrtMemcpy(host, host.nbytes, ptr, nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return host


# --- enums ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [
    ("ACL_FLOAT", 0), ("ACL_FLOAT16", 1), ("ACL_INT8", 2), ("ACL_INT32", 3), ("ACL_UINT8", 4),
    ("ACL_INT16", 6), ("ACL_INT64", 9), ("ACL_DOUBLE", 11), ("ACL_BOOL", 12), ("ACL_BF16", 27),
])
def test_acl_data_type_values(name, value):
    assert int(getattr(acl, name)) == value
    assert int(acl.aclDataType[name]) == value
    assert acl.aclDataType(value).name == name


def test_acl_format_nd_is_2():
    assert int(acl.ACL_FORMAT_ND) == 2
    assert acl.aclFormat(2) is acl.ACL_FORMAT_ND


def test_memcpy_kind_values():
    # acl_rt.h: HOST_TO_HOST 0, HOST_TO_DEVICE 1, DEVICE_TO_HOST 2, DEVICE_TO_DEVICE 3
    assert [int(k) for k in (acl.ACL_MEMCPY_HOST_TO_HOST, acl.ACL_MEMCPY_HOST_TO_DEVICE,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)] == [0, 1, 2, 3]


def test_error_code_values():
    assert acl.ACL_SUCCESS == 0
    assert acl.ACL_ERROR_INVALID_PARAM == 100000
    assert acl.ACL_ERROR_UNINITIALIZE == 100001
    assert acl.ACL_ERROR_REPEAT_INITIALIZE == 100002


# --- init / finalize / device --------------------------------------------------------------------------

def test_init_twice_then_finalize_twice():
    assert acl.aclInit(None) == acl.ACL_SUCCESS
    assert rt.is_initialized()
    assert acl.aclInit(None) == 100002          # ACL_ERROR_REPEAT_INITIALIZE
    assert rt.is_initialized()                  # the failed repeat does not undo the first
    assert acl.aclFinalize() == acl.ACL_SUCCESS
    assert not rt.is_initialized()
    assert acl.aclFinalize() == 100001          # ACL_ERROR_UNINITIALIZE


def test_finalize_without_init():
    assert acl.aclFinalize() == 100001


def test_init_again_after_finalize():
    for _ in range(3):
        assert acl.aclInit(None) == 0
        assert acl.aclFinalize() == 0


def test_set_device_before_init_fails():
    assert acl.aclrtSetDevice(0) == acl.ACL_ERROR_UNINITIALIZE
    assert rt.current_device() is None


def test_set_device_range(dev):
    for d in range(rt.DEVICE_COUNT):
        assert acl.aclrtSetDevice(d) == acl.ACL_SUCCESS
        assert rt.current_device() == d
    for bad in (-1, rt.DEVICE_COUNT, rt.DEVICE_COUNT + 100):
        with oplog.capture() as recs:
            assert acl.aclrtSetDevice(bad) == acl.ACL_ERROR_RT_INVALID_DEVICEID
        assert any(str(bad) in r.message for r in recs)
    assert rt.current_device() == rt.DEVICE_COUNT - 1     # a failed call does not change the device


def test_set_device_wrong_type_raises(dev):
    with pytest.raises(TypeError):
        acl.aclrtSetDevice("0")
    with pytest.raises(TypeError):
        acl.aclrtSetDevice(0.0)


def test_reset_device(dev):
    assert acl.aclrtResetDevice(1) != acl.ACL_SUCCESS     # not the current device
    assert acl.aclrtResetDevice(0) == acl.ACL_SUCCESS
    assert rt.current_device() is None
    ret, stream = acl.aclrtCreateStream()
    assert ret != acl.ACL_SUCCESS and stream is None      # no device context any more


def test_finalize_forgets_the_device():
    assert acl.aclInit(None) == 0
    assert acl.aclrtSetDevice(3) == 0
    assert acl.aclFinalize() == 0
    assert rt.current_device() is None


# --- streams -------------------------------------------------------------------------------------------

def test_stream_lifecycle(dev):
    ret, s1 = acl.aclrtCreateStream()
    assert ret == 0 and isinstance(s1, acl.aclrtStream)
    ret, s2 = acl.aclrtCreateStream()
    assert ret == 0 and s2 is not s1
    assert acl.aclrtSynchronizeStream(s1) == 0
    assert acl.aclrtSynchronizeStream(None) == 0           # the default stream
    assert acl.aclrtDestroyStream(s1) == 0
    assert acl.aclrtSynchronizeStream(s1) != 0             # destroyed
    assert acl.aclrtDestroyStream(s1) != 0                 # destroyed twice
    assert acl.aclrtSynchronizeStream(s2) == 0             # the other one lives on
    assert acl.aclrtDestroyStream(s2) == 0
    assert acl.aclrtDestroyStream(None) != 0


@pytest.mark.parametrize("not_a_stream", [5, "stream", 1.5, np.zeros(2), object()])
def test_stream_calls_on_a_non_stream_return_codes(dev, not_a_stream):
    with oplog.capture() as recs:
        assert acl.aclrtSynchronizeStream(not_a_stream) == ERR
        assert acl.aclrtDestroyStream(not_a_stream) == ERR
    assert [r.api for r in recs] == ["aclrtSynchronizeStream", "aclrtDestroyStream"]
    ptr = malloc(16)
    assert acl.aclrtSynchronizeStream(ptr) == ERR and acl.aclrtDestroyStream(ptr) == ERR


def test_stream_needs_init_and_device():
    ret, s = acl.aclrtCreateStream()
    assert ret == acl.ACL_ERROR_UNINITIALIZE and s is None
    assert acl.aclInit(None) == 0
    ret, s = acl.aclrtCreateStream()
    assert ret != 0 and s is None                           # no aclrtSetDevice yet
    assert acl.aclrtSetDevice(0) == 0
    ret, s = acl.aclrtCreateStream()
    assert ret == 0 and s is not None
    assert acl.aclrtDestroyStream(s) == 0
    assert acl.aclFinalize() == 0
    assert acl.aclrtSynchronizeStream(None) == acl.ACL_ERROR_UNINITIALIZE


# --- aclrtMalloc / aclrtFree ---------------------------------------------------------------------------

def test_malloc_returns_distinct_aligned_pointers(dev):
    ptrs = [malloc(n) for n in (1, 31, 32, 33, 1000)]
    addrs = [p.address for p in ptrs]
    assert len(set(addrs)) == len(addrs)
    assert all(a % 32 == 0 for a in addrs)
    assert all(p.available == n for p, n in zip(ptrs, (1, 31, 32, 33, 1000), strict=True))
    for p in ptrs:
        assert acl.aclrtFree(p) == 0


@pytest.mark.parametrize("policy", [acl.ACL_MEM_MALLOC_HUGE_FIRST, acl.ACL_MEM_MALLOC_HUGE_ONLY,
                                    acl.ACL_MEM_MALLOC_NORMAL_ONLY])
def test_malloc_policies(dev, policy):
    ret, p = acl.aclrtMalloc(64, policy)
    assert ret == 0 and p is not None
    assert acl.aclrtFree(p) == 0


def test_malloc_unknown_policy(dev):
    ret, p = acl.aclrtMalloc(64, 99)
    assert ret == ERR and p is None


@pytest.mark.parametrize("size", [0, -1, -4096])
def test_malloc_non_positive_size(dev, size):
    with oplog.capture() as recs:
        ret, p = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == ERR and p is None
    assert any("size" in r.message for r in recs)


def test_malloc_before_init():
    ret, p = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_ERROR_UNINITIALIZE and p is None


def test_malloc_without_device():
    assert acl.aclInit(None) == 0
    ret, p = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret != 0 and p is None


@pytest.mark.parametrize("size", [1.5, "64", None, True, [64]])
def test_malloc_wrong_type_raises(dev, size):
    with pytest.raises(TypeError):
        acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)


def test_malloc_numpy_integer_size(dev):
    ret, p = acl.aclrtMalloc(np.int64(128), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and p.available == 128
    assert acl.aclrtFree(p) == 0


def test_malloc_absurd_size_fails_with_code(dev):
    ret, p = acl.aclrtMalloc(rt.DEVICE_MEMORY_BYTES + 1, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret != 0 and p is None


def test_device_memory_size_is_configurable(dev):
    assert rt.device_memory_size() == rt.DEVICE_MEMORY_BYTES
    ret, free, total = acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)
    assert ret == 0 and total == rt.DEVICE_MEMORY_BYTES and free == total
    previous = rt.set_device_memory_size(4096)
    try:
        assert previous == rt.DEVICE_MEMORY_BYTES and rt.device_memory_size() == 4096
        a = malloc(3000)
        assert acl.aclrtGetMemInfo(acl.ACL_HBM_MEM) == (0, 1096, 4096)
        with oplog.capture() as recs:
            ret, p = acl.aclrtMalloc(1097, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert (ret, p) == (acl.ACL_ERROR_RT_MEMORY_ALLOCATION, None) and ret == 207001
        assert "out of device memory" in recs[0].message
        b = malloc(1096)                                   # exactly what is left
        assert acl.aclrtFree(a) == 0 and acl.aclrtFree(b) == 0
        assert malloc(4096) is not None
    finally:
        rt.set_device_memory_size(None)
    assert rt.device_memory_size() == rt.DEVICE_MEMORY_BYTES
    with pytest.raises(ValueError):
        rt.set_device_memory_size(0)
    assert acl.aclrtGetMemInfo(acl.ACL_DDR_MEM)[0] == ERR


def test_get_mem_info_needs_a_context():
    assert acl.aclrtGetMemInfo(acl.ACL_HBM_MEM)[0] == acl.ACL_ERROR_UNINITIALIZE


def test_malloc_beyond_what_the_host_can_back_is_refused_before_allocating(dev, monkeypatch):
    allocated = []
    real = pool.take
    monkeypatch.setattr(pool, "take", lambda n: allocated.append(n) or real(n))
    monkeypatch.setattr(memory, "_host_available", lambda: rt.HOST_RESERVE_BYTES + (64 << 20))
    with oplog.capture() as recs:
        ret, p = acl.aclrtMalloc(65 << 20, acl.ACL_MEM_MALLOC_HUGE_FIRST)   # fits the device, not the host
    assert (ret, p) == (207001, None) and allocated == []
    assert "host cannot back" in recs[-1].message
    q = malloc(32 << 20)                                   # half of what the host has: fine
    ret, p = acl.aclrtMalloc(33 << 20, acl.ACL_MEM_MALLOC_HUGE_FIRST)    # live allocations count
    assert ret == 207001 and p is None and len(allocated) == 1
    assert acl.aclrtFree(q) == 0
    assert malloc(33 << 20) is not None


def test_malloc_host_memory_error_is_a_code(dev, monkeypatch):
    def no_memory(n):
        raise MemoryError
    monkeypatch.setattr(pool, "take", no_memory)
    with oplog.capture():
        assert acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST) == (207001, None)
    assert rt._state.allocated == 0


def test_free_takes_the_bytes_away(dev):
    p = upload(np.arange(4, dtype=np.float32))
    t = acl.aclCreateTensor((4,), acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, (4,), p)
    assert acl.aclrtFree(p) == 0
    assert p.allocation.buffer is None and p.allocation.freed_by == "aclrtFree"
    with pytest.raises(ValueError, match="released by aclrtFree"):
        p.bytes(4)
    with pytest.raises(ValueError, match="released by aclrtFree"):
        t.numpy()
    assert "released by aclrtFree" in t.memory_error()


def test_numpy_view_never_outgrows_its_allocation(dev):
    p = upload(np.arange(8, dtype=np.float32))
    t = acl.aclCreateTensor((8,), acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, (8,), p)
    assert t.numpy().tolist() == list(range(8))
    t.view_dims, t.strides, t.storage_dims = (8,), (1000,), (8,)      # changed after creation
    with pytest.raises(ValueError, match="outside its storage"):
        t.numpy()
    t.view_dims, t.strides, t.storage_dims = (64,), (1,), (64,)
    with pytest.raises(ValueError, match="does not fit"):
        t.numpy()
    t.view_dims, t.strides, t.storage_dims, t.offset = (2,), (1,), (8,), -1
    with pytest.raises(ValueError, match="inconsistent"):
        t.numpy()
    with pytest.raises(ValueError):
        (p + -4).bytes(4)
    with pytest.raises(ValueError):
        p.bytes(10**6)


def test_a_freed_buffer_still_viewed_is_not_handed_out_again(dev):
    size = 4096 + 7                                        # a length no other test pools
    p = upload(np.full(size, 7, np.uint8))
    t = acl.aclCreateTensor((size,), acl.ACL_UINT8, None, 0, acl.ACL_FORMAT_ND, (size,), p)
    old_view = t.numpy()
    pooled = rt.pool_bytes()
    assert acl.aclrtFree(p) == 0
    assert rt.pool_bytes() == pooled                      # not pooled: a view still reaches it
    q = malloc(size)
    assert not np.shares_memory(old_view, q.bytes(size))
    assert acl.aclrtMemset(q, size, 1, size) == 0
    assert (old_view == 7).all()                          # the old view does not see the new allocation
    # without an outstanding view the buffer is reused
    r = malloc(size + 1000)
    address = r.allocation.buffer.__array_interface__["data"][0]
    pooled = rt.pool_bytes()
    assert acl.aclrtFree(r) == 0
    assert rt.pool_bytes() == pooled + r.allocation.backing_bytes
    assert malloc(size + 1000).allocation.buffer.__array_interface__["data"][0] == address


def test_finalize_releases_every_allocation():
    assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
    p = malloc(64)
    assert rt._state.allocated == 64
    assert acl.aclFinalize() == 0
    assert p.allocation.freed and p.allocation.freed_by == "aclFinalize" and rt._state.allocated == 0
    assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
    with oplog.capture() as recs:
        assert acl.aclrtMemcpy(np.zeros(64, np.uint8), 64, p, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST) == ERR
        assert acl.aclrtFree(p) == ERR
    assert "aclFinalize" in recs[0].message


# --- the memory pool -------------------------------------------------------------------------------------

def test_pool_retains_at_most_its_limit(dev):
    rt.trim_pool()
    previous = rt.set_pool_limit(3 * 8192)
    try:
        assert rt.pool_limit() == 3 * 8192
        ptrs = [malloc(8192 - 32 - rt.GUARD_BYTES) for _ in range(5)]   # 8192 B of backing each
        assert {p.allocation.backing_bytes for p in ptrs} == {8192}
        for p in ptrs:
            assert acl.aclrtFree(p) == 0
            assert rt.pool_bytes() <= rt.pool_limit()
        assert rt.pool_bytes() == 3 * 8192
        assert rt.set_pool_limit(8192) == 3 * 8192         # lowering the limit trims
        assert rt.pool_bytes() <= 8192
        assert rt.trim_pool() == rt.pool_bytes() + rt.trim_pool() or rt.pool_bytes() == 0
        rt.set_pool_limit(0)
        p = malloc(100)
        assert acl.aclrtFree(p) == 0 and rt.pool_bytes() == 0
    finally:
        rt.set_pool_limit(previous)
    assert rt.pool_limit() == rt.POOL_LIMIT_BYTES
    with pytest.raises(ValueError):
        rt.set_pool_limit(-1)


_TRIM_SCRIPT = r"""
import numpy as np
from ascend_lab import acl
from ascend_lab.acl import runtime as rt

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

acl.aclInit(None); acl.aclrtSetDevice(0)
rt.set_pool_limit(256 << 20)
# many mid-sized buffers (below glibc's mmap threshold once it has grown), every page touched
ptrs = [acl.aclrtMalloc(96 << 10 | 1000 + i % 50 * 64, 0)[1] for i in range(1500)]
for p in ptrs:
    assert acl.aclrtMemset(p, p.allocation.size, 0x5A, p.allocation.size) == 0
before = rss()
for p in ptrs:
    assert acl.aclrtFree(p) == 0
pooled = rt.pool_bytes()
kept = rss()
released = rt.trim_pool()
after = rss()
print(before, pooled, kept, released, after)
"""


def test_trim_returns_memory_to_the_os():
    """In a fresh process: RSS stays up while the pool holds freed buffers and falls once it is trimmed."""
    import subprocess
    import sys
    res = subprocess.run([sys.executable, "-c", _TRIM_SCRIPT], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    before, pooled, kept, released, after = map(int, res.stdout.split())
    assert pooled == released and pooled > 100 << 20
    assert kept > before - (16 << 20)               # pooled: still resident
    assert kept - after > 0.8 * pooled, (before, pooled, kept, after)


# --- aclrtMemset ---------------------------------------------------------------------------------------

def test_memset_sets_the_low_byte(dev):
    p = malloc(16)
    assert acl.aclrtMemset(p, 16, 0x1AB, 8) == 0
    assert download(p, 16).tolist() == [0xAB] * 8 + [0] * 8
    assert acl.aclrtMemset(p + 8, 8, np.int64(-1), 8) == 0
    assert download(p, 16).tolist() == [0xAB] * 8 + [0xFF] * 8


@pytest.mark.parametrize("args", [
    (16, 0, -1), (-1, 0, 0), (16, 1.5, 4), (16, None, 4), (16, "a", 4), (16, True, 4), (16, 0, 2.0),
    (16, 0, 17), (32, 0, 4),                               # count > maxCount; maxCount beyond the allocation
])
def test_memset_bad_arguments_are_codes(dev, args):
    p = malloc(16)
    with oplog.capture() as recs:
        assert acl.aclrtMemset(p, *args) == ERR
    assert recs and recs[0].api == "aclrtMemset"


def test_memset_bad_pointer_and_context():
    assert acl.aclrtMemset(None, 4, 0, 4) == acl.ACL_ERROR_UNINITIALIZE
    assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
    p = malloc(16)
    assert acl.aclrtFree(p) == 0
    with oplog.capture():
        assert acl.aclrtMemset(p, 16, 0, 16) == ERR
        assert acl.aclrtMemset(np.zeros(16, np.uint8), 16, 0, 16) == ERR
        assert acl.aclrtMemset(None, 16, 0, 16) == ERR


def test_free_rules(dev):
    p = malloc(64)
    assert acl.aclrtFree(p + 32) == ERR          # not the start of the allocation
    assert acl.aclrtFree(p) == 0
    assert acl.aclrtFree(p) == ERR               # double free
    assert acl.aclrtFree(None) == ERR


# --- aclrtMemcpy -----------------------------------------------------------------------------------------

def test_memcpy_host_device_round_trip(dev):
    host = np.arange(10, dtype=np.float32)
    ptr = upload(host)
    back = download(ptr, host.nbytes, np.float32)
    np.testing.assert_array_equal(back, host)
    assert acl.aclrtFree(ptr) == 0


def test_memcpy_host_to_host(dev):
    src = np.arange(6, dtype=np.int16)
    dst = np.zeros(8, dtype=np.int16)
    assert acl.aclrtMemcpy(dst, dst.nbytes, src, src.nbytes, acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    np.testing.assert_array_equal(dst, [0, 1, 2, 3, 4, 5, 0, 0])


def test_memcpy_device_to_device(dev):
    host = np.arange(16, dtype=np.uint8)
    a = upload(host)
    b = malloc(16)
    assert acl.aclrtMemcpy(b, 16, a, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    np.testing.assert_array_equal(download(b, 16), host)
    # inside one allocation, overlapping, with pointer arithmetic (memmove semantics)
    assert acl.aclrtMemcpy(a + 4, 12, a, 8, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    want = host.copy()
    want[4:12] = host[0:8]
    np.testing.assert_array_equal(download(a, 16), want)
    assert acl.aclrtFree(a) == 0 and acl.aclrtFree(b) == 0


def test_memcpy_partial_count(dev):
    ptr = upload(np.full(8, 7, np.uint8))
    assert acl.aclrtMemcpy(ptr, 8, np.arange(8, dtype=np.uint8), 3, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    np.testing.assert_array_equal(download(ptr, 8), [0, 1, 2, 7, 7, 7, 7, 7])
    assert acl.aclrtMemcpy(ptr, 8, np.zeros(8, np.uint8), 0, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0


@pytest.mark.parametrize("kind", list(rt.aclrtMemcpyKind))
def test_memcpy_count_larger_than_dest_max_is_an_error_code(dev, kind):
    host_src = np.zeros(64, np.uint8)
    host_dst = np.zeros(64, np.uint8)
    d_src, d_dst = malloc(64), malloc(64)
    dst = d_dst if kind in (acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) else host_dst
    src = d_src if kind in (acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) else host_src
    with oplog.capture() as recs:
        ret = acl.aclrtMemcpy(dst, 16, src, 32, kind)      # must not raise
    assert ret == acl.ACL_ERROR_INVALID_PARAM
    assert any("destMax" in r.message for r in recs)


def test_memcpy_host_source_smaller_than_count(dev):
    ptr = malloc(64)
    assert acl.aclrtMemcpy(ptr, 64, np.zeros(4, np.float32), 32, acl.ACL_MEMCPY_HOST_TO_DEVICE) == ERR


def test_memcpy_host_destination_smaller_than_dest_max(dev):
    ptr = upload(np.zeros(64, np.uint8))
    small = np.zeros(8, np.uint8)
    assert acl.aclrtMemcpy(small, 64, ptr, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST) == ERR
    assert acl.aclrtMemcpy(small, 64, ptr, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST) == ERR  # destMax lies
    assert acl.aclrtMemcpy(small, 8, ptr, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0


def test_memcpy_pointer_arithmetic(dev):
    ptr = upload(np.zeros(8, np.float32))
    one = np.array([5.0], np.float32)
    assert acl.aclrtMemcpy(ptr + 12, 4, one, 4, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    np.testing.assert_array_equal(download(ptr, 32, np.float32), [0, 0, 0, 5, 0, 0, 0, 0])
    out = np.zeros(1, np.float32)
    assert acl.aclrtMemcpy(out, 4, ptr + 12, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert out[0] == 5.0
    assert (ptr + 12).address == ptr.address + 12
    assert ptr + 0 == ptr and ptr + 4 != ptr


def test_memcpy_past_the_end_refused(dev):
    ptr = malloc(32)
    data = np.arange(32, dtype=np.uint8)
    h2d = acl.ACL_MEMCPY_HOST_TO_DEVICE
    assert acl.aclrtMemcpy(ptr, 33, data, 32, h2d) == ERR             # destMax beyond the allocation
    assert acl.aclrtMemcpy(ptr + 28, 8, data, 8, h2d) == ERR           # 4 bytes past the end
    assert acl.aclrtMemcpy(ptr + 32, 1, data, 1, h2d) == ERR           # starts at the end
    assert acl.aclrtMemcpy(ptr + 28, 4, data, 4, h2d) == 0             # exactly up to the end
    out = np.zeros(8, np.uint8)
    assert acl.aclrtMemcpy(out, 8, ptr + 28, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST) == ERR
    other = malloc(64)
    assert acl.aclrtMemcpy(other, 64, ptr, 64, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == ERR
    assert acl.aclrtMemcpy(ptr + -4, 4, data, 4, h2d) == ERR          # before the start


def test_memcpy_freed_memory_refused(dev):
    ptr = upload(np.arange(16, dtype=np.uint8))
    other = malloc(16)
    assert acl.aclrtFree(ptr) == 0
    out = np.zeros(16, np.uint8)
    assert acl.aclrtMemcpy(out, 16, ptr, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST) == ERR
    assert acl.aclrtMemcpy(ptr, 16, out, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == ERR
    assert acl.aclrtMemcpy(other, 16, ptr, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == ERR
    assert acl.aclrtMemcpy(ptr, 16, other, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == ERR


def test_memcpy_unknown_kind(dev):
    ptr = malloc(8)
    assert acl.aclrtMemcpy(ptr, 8, np.zeros(8, np.uint8), 8, 7) == ERR


def test_memcpy_negative_sizes(dev):
    ptr = malloc(8)
    assert acl.aclrtMemcpy(ptr, -1, np.zeros(8, np.uint8), -1, acl.ACL_MEMCPY_HOST_TO_DEVICE) == ERR


def test_memcpy_non_contiguous_host_refused(dev):
    ptr = malloc(64)
    host = np.arange(32, dtype=np.float32)[::2]
    assert acl.aclrtMemcpy(ptr, 64, host, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE) == ERR


def test_memcpy_read_only_host_destination_refused(dev):
    ptr = upload(np.arange(8, dtype=np.uint8))
    ro = np.zeros(8, np.uint8)
    ro.flags.writeable = False
    assert acl.aclrtMemcpy(ro, 8, ptr, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST) == ERR
    assert not ro.any()


def test_memcpy_wrong_python_types_raise(dev):
    ptr = malloc(8)
    with pytest.raises(TypeError):
        acl.aclrtMemcpy(ptr, 8, [1, 2, 3], 8, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    with pytest.raises(TypeError):
        acl.aclrtMemcpy(ptr, 8.0, np.zeros(8, np.uint8), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE)


def test_memcpy_pointer_on_the_wrong_side_is_a_code(dev):
    """Host and device pointers are both void* in C: a mix-up (or nullptr) is an error code, not a raise."""
    ptr, host = malloc(8), np.zeros(8, np.uint8)
    H2D, D2H, D2D = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE
    with oplog.capture() as recs:
        assert acl.aclrtMemcpy(host, 8, host.copy(), 8, H2D) == ERR
        assert acl.aclrtMemcpy(ptr, 8, ptr, 8, H2D) == ERR
        assert acl.aclrtMemcpy(host, 8, host.copy(), 8, D2H) == ERR
        assert acl.aclrtMemcpy(None, 8, ptr, 8, D2D) == ERR
        assert acl.aclrtMemcpy(ptr, 8, None, 8, H2D) == ERR
        assert acl.aclrtMemcpy(None, 8, host, 8, acl.ACL_MEMCPY_HOST_TO_HOST) == ERR
    assert len(recs) == 6 and all(r.api == "aclrtMemcpy" for r in recs)


def test_memcpy_to_device_before_init():
    ret = acl.aclrtMemcpy(np.zeros(4, np.uint8), 4, np.zeros(4, np.uint8), 4, acl.ACL_MEMCPY_HOST_TO_HOST)
    assert ret == 0       # host to host needs no device
    assert acl.aclInit(None) == 0
    assert acl.aclrtSetDevice(0) == 0
    ptr = malloc(4)
    assert acl.aclFinalize() == 0
    assert acl.aclrtMemcpy(ptr, 4, np.zeros(4, np.uint8), 4, acl.ACL_MEMCPY_HOST_TO_DEVICE) != 0


# --- aclCreateTensor -------------------------------------------------------------------------------------

def test_create_tensor_contiguous_like_the_seed_sample(dev):
    host = np.arange(8, dtype=np.float32)
    shape = [4, 2]
    strides = [1] * len(shape)                  # the sample's stride loop
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    ptr = upload(host)
    t = acl.aclCreateTensor(shape, acl.ACL_FLOAT, strides, 0, acl.ACL_FORMAT_ND, shape, ptr)
    assert isinstance(t, acl.aclTensor)
    assert t.GetViewShape() == (4, 2) and t.GetStorageShape() == (4, 2)
    assert t.GetViewStrides() == (2, 1) and t.GetViewOffset() == 0
    assert t.GetDataType() == acl.ACL_FLOAT and t.GetViewFormat() == acl.ACL_FORMAT_ND
    assert t.IsContiguous() and not t.IsEmpty() and t.Size() == 8
    assert acl.contiguous_strides(shape) == (2, 1)
    v = t.numpy()
    assert v.dtype == np.float32 and v.shape == (4, 2)
    np.testing.assert_array_equal(v, host.reshape(4, 2))
    assert acl.aclDestroyTensor(t) == 0


def test_create_tensor_transposed(dev):
    host = np.arange(6, dtype=np.int32)          # storage (2, 3)
    ptr = upload(host)
    t = acl.aclCreateTensor((3, 2), acl.ACL_INT32, (1, 3), 0, acl.ACL_FORMAT_ND, (2, 3), ptr)
    assert t is not None and not t.IsContiguous()
    np.testing.assert_array_equal(t.numpy(), host.reshape(2, 3).T)


def test_create_tensor_every_other_element(dev):
    host = np.arange(8, dtype=np.float16)
    ptr = upload(host)
    t = acl.aclCreateTensor((4,), acl.ACL_FLOAT16, (2,), 0, acl.ACL_FORMAT_ND, (8,), ptr)
    assert t is not None and not t.IsContiguous()
    np.testing.assert_array_equal(t.numpy(), host[::2])
    t1 = acl.aclCreateTensor((4,), acl.ACL_FLOAT16, (2,), 1, acl.ACL_FORMAT_ND, (8,), ptr)
    np.testing.assert_array_equal(t1.numpy(), host[1::2])


def test_create_tensor_with_storage_offset(dev):
    host = np.arange(12, dtype=np.float32)
    ptr = upload(host)
    t = acl.aclCreateTensor((2, 2), acl.ACL_FLOAT, (2, 1), 4, acl.ACL_FORMAT_ND, (12,), ptr)
    np.testing.assert_array_equal(t.numpy(), host[4:8].reshape(2, 2))
    t2 = acl.aclCreateTensor((2, 3), acl.ACL_FLOAT, (1, 2), 5, acl.ACL_FORMAT_ND, (12,), ptr)
    np.testing.assert_array_equal(t2.numpy(), np.array([[5, 7, 9], [6, 8, 10]], np.float32))
    # the data pointer itself may be offset too: ptr + 8 bytes = element 2
    t3 = acl.aclCreateTensor((3,), acl.ACL_FLOAT, (1,), 1, acl.ACL_FORMAT_ND, (4,), ptr + 8)
    np.testing.assert_array_equal(t3.numpy(), [3, 4, 5])


def test_create_tensor_zero_stride_broadcast_view(dev):
    host = np.array([1, 2, 3], np.float32)
    ptr = upload(host)
    t = acl.aclCreateTensor((4, 3), acl.ACL_FLOAT, (0, 1), 0, acl.ACL_FORMAT_ND, (3,), ptr)
    assert t is not None and not t.IsContiguous()
    np.testing.assert_array_equal(t.numpy(), np.broadcast_to(host, (4, 3)))


def test_numpy_view_reads_what_was_copied_and_writes_through(dev):
    ptr = upload(np.zeros(4, np.float32))
    t = acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)
    v = t.numpy()
    new = np.array([1.5, -2.0, 3.25, 0.0], np.float32)
    assert acl.aclrtMemcpy(ptr, 16, new, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    np.testing.assert_array_equal(v, new)               # a view, not a snapshot
    v[1] = 42.0
    np.testing.assert_array_equal(download(ptr, 16, np.float32), [1.5, 42.0, 3.25, 0.0])


def test_numpy_view_bfloat16(dev):
    host = np.array([1.0, -0.5, 3.0, 65280.0], BF16)
    ptr = upload(host)
    t = acl.aclCreateTensor((2, 2), acl.ACL_BF16, None, 0, acl.ACL_FORMAT_ND, (2, 2), ptr)
    assert t.numpy().dtype == BF16
    assert (t.numpy().view(np.uint16) == host.reshape(2, 2).view(np.uint16)).all()


def test_view_outside_storage_is_nullptr(dev):
    ptr = upload(np.zeros(8, np.float32))
    ok = acl.aclCreateTensor((3,), acl.ACL_FLOAT, (3,), 1, acl.ACL_FORMAT_ND, (8,), ptr)   # last = 7
    assert ok is not None
    with oplog.capture() as recs:
        bad = acl.aclCreateTensor((3,), acl.ACL_FLOAT, (3,), 2, acl.ACL_FORMAT_ND, (8,), ptr)  # last = 8
    assert bad is None
    assert any(r.api == "aclCreateTensor" for r in recs)
    assert acl.aclCreateTensor((3, 3), acl.ACL_FLOAT, (3, 1), 0, acl.ACL_FORMAT_ND, (8,), ptr) is None
    assert acl.aclCreateTensor((2, 2), acl.ACL_FLOAT, (2, 1), 5, acl.ACL_FORMAT_ND, (8,), ptr) is None


def test_storage_outside_allocation_is_nullptr(dev):
    ptr = malloc(16)                                     # room for 4 floats
    assert acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr) is not None
    assert acl.aclCreateTensor((5,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (5,), ptr) is None
    assert acl.aclCreateTensor((2,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr + 4) is None
    assert acl.aclCreateTensor((3,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (3,), ptr + 4) is not None
    assert acl.aclCreateTensor((4,), acl.ACL_INT64, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr) is None


def test_storage_before_allocation_start_is_nullptr(dev):
    ptr = malloc(64)
    assert acl.aclCreateTensor((2,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (2,), ptr + -8) is None


def test_tensor_on_freed_memory_is_nullptr(dev):
    ptr = malloc(16)
    assert acl.aclrtFree(ptr) == 0
    assert acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr) is None


def test_non_empty_tensor_without_data_is_nullptr(dev):
    assert acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), None) is None


def test_empty_tensor(dev):
    t = acl.aclCreateTensor((0, 3), acl.ACL_FLOAT, (3, 1), 0, acl.ACL_FORMAT_ND, (0, 3), None)
    assert t is not None and t.IsEmpty() and t.Size() == 0
    assert t.numpy().shape == (0, 3)


def test_zero_dim_tensor(dev):
    ptr = upload(np.array([2.5], np.float32))
    t = acl.aclCreateTensor((), acl.ACL_FLOAT, (), 0, acl.ACL_FORMAT_ND, (1,), ptr)
    assert t is not None and t.ndim == 0 and t.Size() == 1 and not t.IsEmpty()
    assert t.numpy().shape == () and float(t.numpy()) == 2.5


@pytest.mark.parametrize("view, storage", [((-1, 2), (4, 2)), ((4, 2), (-4, 2)), ((2, -1), (2,))])
def test_negative_dims_are_nullptr(dev, view, storage):
    ptr = malloc(64)
    strides = acl.contiguous_strides([abs(d) for d in view])
    assert acl.aclCreateTensor(view, acl.ACL_FLOAT, strides, 0, acl.ACL_FORMAT_ND, storage, ptr) is None


def test_negative_offset_or_stride_is_nullptr(dev):
    ptr = malloc(64)
    assert acl.aclCreateTensor((2,), acl.ACL_FLOAT, (1,), -1, acl.ACL_FORMAT_ND, (4,), ptr) is None
    assert acl.aclCreateTensor((2,), acl.ACL_FLOAT, (-1,), 1, acl.ACL_FORMAT_ND, (4,), ptr) is None


@pytest.mark.parametrize("view", [(4.0, 2), "42", None, (4, None), (np.float32(4), 2), 8])
def test_non_int_shape_raises_type_error(dev, view):
    ptr = malloc(64)
    with pytest.raises(TypeError):
        acl.aclCreateTensor(view, acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, (4, 2), ptr)
    with pytest.raises(TypeError):
        acl.aclCreateTensor((4, 2), acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, view, ptr)


def test_numpy_int_shape_accepted(dev):
    ptr = malloc(64)
    t = acl.aclCreateTensor(np.array([4, 2]), acl.ACL_FLOAT, (np.int64(2), 1), np.int32(0), acl.ACL_FORMAT_ND,
                            (np.int64(4), 2), ptr)
    assert t is not None and t.view_dims == (4, 2) and all(type(d) is int for d in t.view_dims)


def test_stride_length_mismatch_raises_value_error(dev):
    ptr = malloc(64)
    with pytest.raises(ValueError, match="stride"):
        acl.aclCreateTensor((4, 2), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4, 2), ptr)


@pytest.mark.parametrize("dtype", ["float33", "ACL_FLOAT33", "complex", "int"])
def test_unknown_dtype_name_raises_value_error(dev, dtype):
    ptr = malloc(64)
    with pytest.raises(ValueError):
        acl.aclCreateTensor((4,), dtype, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)


@pytest.mark.parametrize("value", [5, 999, -7, 2**40, np.int32(14), acl.ACL_STRING, acl.ACL_COMPLEX32,
                                   acl.ACL_DT_UNDEFINED])
def test_unknown_dtype_value_gives_a_descriptor_aclnn_refuses(dev, value):
    """An int outside the enum (or an enum dtype with no storage) is not a creation error, as in CANN: the
    tensor is a descriptor that no view is built from, and the aclnn API answers with the dtype status."""
    from ascend_lab import aclnn
    ptr = upload(np.ones(4, np.float32))
    with oplog.capture():
        t = acl.aclCreateTensor((4,), value, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)
    assert t is not None and not t.storable
    assert t.dtype_value == int(value)
    if int(value) not in {int(m) for m in acl.aclDataType}:
        assert t.GetDataType() == acl.ACL_DT_UNDEFINED and str(int(value)) in repr(t)
    with pytest.raises(ValueError, match="storage"):
        t.numpy()
    good = lambda: acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)  # noqa: E731
    thr = acl.aclCreateScalar(1.0, acl.ACL_FLOAT)
    with oplog.capture() as recs:
        hs = [aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(*args)[0]
              for args in ((t, good(), good()), (good(), t, good()), (good(), good(), t))]
        th = [aclnn.aclnnThresholdBackwardGetWorkspaceSize(*args)[0]
              for args in ((t, good(), thr, good()), (good(), t, thr, good()), (good(), good(), thr, t))]
    # gradOutput/self: not in the dtype support list. hardsigmoid's out only has to pass CanCast, then the
    # L0 Cast finds no kernel and returns nullptr (CANN's CHECK_RET -> 561103); threshold's out must equal self.
    assert hs == [161002, 161002, 561103] and th == [161002, 161002, 161002]
    assert all(r.api.startswith("aclnn") for r in recs if r.level == "ERROR")


def test_descriptor_only_tensor_still_checks_its_pointer(dev):
    ptr = malloc(16)
    assert acl.aclrtFree(ptr) == 0
    with oplog.capture():
        assert acl.aclCreateTensor((4,), 999, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr) is None


def test_none_dtype_is_not_silently_double(dev):
    ptr = malloc(64)
    with pytest.raises(TypeError):
        acl.aclCreateTensor((4,), None, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)


@pytest.mark.parametrize("spelling", ["float16", "fp16", "half", "ACL_FLOAT16", np.float16, np.dtype("float16"), 1])
def test_dtype_spellings(dev, spelling):
    ptr = malloc(64)
    t = acl.aclCreateTensor((4,), spelling, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)
    assert t.GetDataType() == acl.ACL_FLOAT16


def test_unknown_format_is_a_null_tensor_with_a_reason(dev):
    """An int C can pass that is no aclFormat answers like the other bad descriptions: nullptr and a log line."""
    ptr = malloc(64)
    for fmt in (12345, 77, -2):
        with oplog.capture() as records:
            assert acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, fmt, (4,), ptr) is None
        assert [r.api for r in records] == ["aclCreateTensor"] and f"format {fmt} is not an aclFormat" in \
            records[0].message
    with pytest.raises(TypeError, match="format must be an aclFormat"):      # not an int: C would not compile it
        acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, "ND", (4,), ptr)


def test_data_must_be_a_device_pointer(dev):
    with pytest.raises(TypeError):
        acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), np.zeros(4, np.float32))


def test_destroy_tensor(dev):
    ptr = malloc(16)
    t = acl.aclCreateTensor((4,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (4,), ptr)
    assert acl.aclDestroyTensor(t) == 0 and t.destroyed
    assert acl.aclDestroyTensor(None) == 0


# --- aclCreateScalar -------------------------------------------------------------------------------------

def test_scalar_float():
    s = acl.aclCreateScalar(1.0, acl.ACL_FLOAT)
    assert s.GetDataType() == acl.ACL_FLOAT
    f = s.ToFloat()
    assert isinstance(f, np.float32) and f == np.float32(1.0)
    assert acl.aclDestroyScalar(s) == 0 and s.destroyed


def test_scalar_to_float_rounds_to_a_c_float():
    s = acl.aclCreateScalar(0.1, acl.ACL_DOUBLE)
    assert s.ToDouble() == 0.1
    assert s.ToFloat() == np.float32(0.1) and float(s.ToFloat()) != 0.1
    assert acl.aclCreateScalar(1e-8, acl.ACL_FLOAT).ToFloat() == np.float32(1e-8)
    assert acl.aclCreateScalar(1e300, acl.ACL_DOUBLE).ToFloat() == np.float32(np.inf)


def test_scalar_integer_and_bf16():
    s = acl.aclCreateScalar(3, acl.ACL_INT32)
    assert s.ToFloat() == np.float32(3.0) and s.ToInt64() == 3
    b = acl.aclCreateScalar(0.1, acl.ACL_BF16)
    assert b.ToFloat() == np.float32(ml_dtypes.bfloat16(0.1))
    h = acl.aclCreateScalar(0.10002, acl.ACL_FLOAT16)
    assert h.ToFloat() == np.float32(np.float16(0.10002))


def test_scalar_special_values():
    assert np.isnan(acl.aclCreateScalar(float("nan"), acl.ACL_FLOAT).ToFloat())
    assert acl.aclCreateScalar(float("-inf"), acl.ACL_FLOAT).ToFloat() == -np.inf
    z = acl.aclCreateScalar(-0.0, acl.ACL_FLOAT).ToFloat()
    assert z == 0 and np.signbit(z)


def test_scalar_unrepresentable_is_nullptr():
    assert acl.aclCreateScalar(float("nan"), acl.ACL_INT32) is None


def test_scalar_from_array_raises():
    with pytest.raises(TypeError):
        acl.aclCreateScalar(np.array([1.0]), acl.ACL_FLOAT)
    with pytest.raises(ValueError):
        acl.aclCreateScalar(1.0, "float33")


def test_destroy_scalar_none():
    assert acl.aclDestroyScalar(None) == 0


def test_a_reused_buffer_never_shows_its_last_owners_bytes(dev):
    """The pool hands back a freed buffer without zeroing it at once: a plain look zeroes all of it, an upload
    zeroes all but the bytes it writes, and a memcpy refused for a bad source zeroes nothing it then exposes."""
    def dirty(nbytes: int) -> None:
        p = upload(np.full(nbytes, 0xAB, np.uint8))
        assert acl.aclrtFree(p) == 0
    dirty(1000)
    p = malloc(1000)                                    # same length: the pooled buffer comes back
    assert p.allocation._stale                          # ... still holding 0xAB until someone looks
    assert not p.allocation.buffer.any()
    assert acl.aclrtFree(p) == 0
    dirty(1000)
    p = malloc(1000)
    host = np.arange(96, dtype=np.uint8)
    assert acl.aclrtMemcpy(p + 64, 96, host, 96, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    buf = p.allocation.buffer
    assert np.array_equal(buf[64:160], host) and not buf[:64].any() and not buf[160:].any()
    assert acl.aclrtFree(p) == 0
    dirty(1000)
    p = malloc(1000)
    with oplog.capture():
        assert acl.aclrtMemcpy(p, 1000, host, 1000, acl.ACL_MEMCPY_HOST_TO_DEVICE) != 0   # source too small
    assert not p.allocation.buffer.any()
    assert acl.aclrtFree(p) == 0


def test_an_allocation_dropped_without_free_returns_its_bytes_to_the_pool_unless_a_view_holds_them():
    rt.trim_pool()
    alloc = rt.DeviceAllocation(4096)                    # as ops.common.kernel_args makes kernel arguments
    alloc.buffer[:4] = 7
    size = alloc.backing_bytes
    del alloc
    gc.collect()
    assert rt.pool_bytes() == size                       # back in the pool for the next allocation of this size
    again = rt.DeviceAllocation(4096)
    assert rt.pool_bytes() == 0 and not again.buffer.any()   # reused, and its old bytes never show
    view = again.buffer[:16]
    del again
    gc.collect()
    assert rt.pool_bytes() == 0                          # a numpy view still reaches the bytes: not reused
    assert view[:4].tolist() == [0, 0, 0, 0]

"""AscendC ``Broadcast`` on the simulated AI Core and the atvoss UB-broadcast schedules (schMode 101-104, 109).

Sources: AD ``docs/zh/api/SIMD-API/高阶API/张量变换/Broadcast.md`` and ``GetBroadCastMaxMinTmpSize.md``
(mirror-cann/asc-devkit @ 82b89a15), the implementation ``impl/adv_api/detail/pad/broadcast/
broadcast_common_impl.h`` and host tiling ``impl/adv_api/tiling/pad/broadcast_tiling.cpp``; the schedule
``pkg_inc/op_common/atvoss/broadcast/broadcast_sch_ub_broadcast.h`` (hicann/opbase @ aa3cd74b); the tiling
rules of kernel_flavours.md §3.4 (IsUbBroadcast, maxElemNum, the UB split, schMode = 100 + shapeLen -
ubSplitAxis, 109 beyond 4). The shapes below are chosen by those rules; each case states why it lands where.
Outputs are compared as raw bits with ``ascend_lab.golden`` and, for ThresholdGradV2D, with a numpy formula.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import acl, golden
from ascend_lab.ascendc import (
    VECIN,
    VECOUT,
    Broadcast,
    DataCopyPad,
    DataCopyParams,
    GetBroadCastMaxMinTmpSize,
    GlobalTensor,
    KernelError,
    TBuf,
    TPipe,
    TQue,
    launch,
    sanitizer,
)
from ascend_lab.ascendc import cost_model as cm
from ascend_lab.atvoss import pool_bytes, sch_mode_of
from ascend_lab.base.platform import get_soc
from ascend_lab.book.calls import dense_tensor
from ascend_lab.ops import registry
from ascend_lab.ops.common import kernel_args
from ascend_lab.ops.relu_grad.op_kernel import main as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import main as tg
from ascend_lab.run import DeviceTensors, acl_session

SOC = "Ascend950PR"
CORES, UB = 64, 253952
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
I8, U8, I32, I64 = (np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64))
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize])


def assert_bits(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    want = np.ascontiguousarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    bad = bits(got) != bits(want)
    assert not bad.any(), f"{what}: {bad.sum()} differ, e.g. got {got[bad][:6]!r} want {want[bad][:6]!r}"


def random_bits(shape: tuple[int, ...], dt: np.dtype, seed: int) -> np.ndarray:
    """Arbitrary bit patterns (NaN payloads, -0, subnormals, infinities): a copy must move them untouched."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    return rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt).reshape(shape)


# --- the Broadcast instruction on its own -------------------------------------------------------------------
def k_brc(src_gm, dst_gm, workspace, tiling, *, dt, dst_shape, src_shape, axis=None, const_rank=-1,
          tmp_bytes=0, src_shift=0, overlap=False):
    """Copy src in, Broadcast it into a second buffer, copy dst out (one core). ``src_shift`` reads the source
    that many elements further on (a misaligned UB address); ``overlap`` broadcasts in place (dst = src's buffer)."""
    n_src, n_dst = math.prod(src_shape), math.prod(dst_shape)
    pipe = TPipe()
    qin, qout = TQue(VECIN, 1, name="inQueue"), TQue(VECOUT, 1, name="outQueue")
    pipe.InitBuffer(qin, 1, -(-(n_src + src_shift + n_dst) * dt.itemsize // 32) * 32 + 32)
    pipe.InitBuffer(qout, 1, -(-n_dst * dt.itemsize // 32) * 32 + 32)
    tmp = None
    if tmp_bytes:
        tbuf = TBuf(name="tmpBuf")
        pipe.InitBuffer(tbuf, tmp_bytes)
        tmp = tbuf.Get(np.uint8)
    gs, gd = GlobalTensor(dt), GlobalTensor(dt)
    gs.SetGlobalBuffer(src_gm, n_src)
    gd.SetGlobalBuffer(dst_gm, n_dst)
    t = qin.AllocTensor(dt)
    DataCopyPad(t, gs, DataCopyParams(1, n_src * dt.itemsize, 0, 0))
    qin.EnQue(t)
    t = qin.DeQue(dt)
    o = qout.AllocTensor(dt)
    src = t[src_shift] if src_shift else t          # a shifted source is refused before it is read
    Broadcast(t if overlap else o, src, dst_shape, src_shape, tmp, axis=axis, const_rank=const_rank)
    if overlap:
        o.data[:n_dst] = t.data[:n_dst]
    qin.FreeTensor(t)
    qout.EnQue(o)
    o = qout.DeQue(dt)
    DataCopyPad(gd, o, DataCopyParams(1, n_dst * dt.itemsize, 0, 0))
    qout.FreeTensor(o)


@contextlib.contextmanager
def device(*arrays: np.ndarray) -> Iterator[list]:
    with acl_session():
        held = DeviceTensors()
        try:
            ts = [held.upload(a, n) for a, n in zip(arrays, ("src", "dst"), strict=True)]
            yield [(t, kernel_args.gm_arg(t, n)) for t, n in zip(ts, ("src", "dst"), strict=True)]
        finally:
            held.release()


def run_brc(src: np.ndarray, dst_shape: tuple[int, ...], *, soc: str = SOC, record: bool = False, **kw):
    dst = np.zeros(dst_shape, src.dtype)
    with device(src, dst) as args:
        kr = launch(k_brc, 1, [a for _, a in args], b"", get_soc(soc), outputs=(1,), record=record,
                    dt=src.dtype, dst_shape=dst_shape, src_shape=src.shape, **kw)
        out = args[1][0].numpy().copy().reshape(dst_shape)
    return kr, out


@pytest.mark.parametrize("dt", [I8, U8, F16, BF16, F32, I32, I64])
@pytest.mark.parametrize("src_shape, dst_shape", [
    ((1,), (300,)),                         # a scalar (BrcDuplicate)
    ((37,), (37,)),                         # nothing broadcast (a DataCopy of whole 32-byte blocks)
    ((16, 1), (16, 16)),                    # the doc's example: the last axis
    ((1, 48), (20, 48)),                    # the first axis
    ((5, 1, 7), (5, 6, 7)),                 # a middle axis
    ((1, 3, 1, 8), (4, 3, 5, 8)),           # alternating
    ((2, 1, 3, 1, 4, 1), (2, 5, 3, 2, 4, 3)),   # rank 6 (the 950's rank 1..9)
])
def test_broadcast_matches_numpy(dt, src_shape, dst_shape):
    src = random_bits(src_shape, dt, seed=len(src_shape) * 10 + dt.itemsize)
    kr, out = run_brc(src, dst_shape)
    assert_bits(out, np.broadcast_to(src, dst_shape), f"{dt} {src_shape}->{dst_shape}")
    assert not kr.trace.warnings


def test_broadcast_template_form_and_trace():
    """Broadcast<float, 2, 1>({16,16} from {16,1}) as in Broadcast.md's example; one PIPE_V event over dst's
    elements, costed with the borrowed Copy row."""
    src = np.arange(1, 17, dtype=np.float32).reshape(16, 1)
    kr, out = run_brc(src, (16, 16), axis=1, record=True)
    assert (out == np.repeat(src, 16, axis=1)).all()
    ev = [e for e in kr.trace.events if e.instr == "Broadcast"]
    assert len(ev) == 1 and ev[0].pipe == "V" and ev[0].count == 256 and ev[0].nbytes == 1024
    assert "[16, 16]" in ev[0].detail and "[16, 1]" in ev[0].detail and "<float, 2, 1>" in ev[0].detail
    assert cm.BORROWED_ROWS["Broadcast"] == "VecCopy"          # GE-ATT's vector Copy API fit
    assert ev[0].end - ev[0].start == pytest.approx(cm.vector_cycles("VecCopy", 4, 256))
    # A2 offers the template form for half/float too
    kr, out = run_brc(src.astype(np.float16), (16, 16), axis=1, soc="Ascend910B4")
    assert (out == np.repeat(src, 16, axis=1)).all()


def test_get_broadcast_max_min_tmp_size():
    """broadcast_tiling.cpp by hand: A2 last-axis half (1024,1)->(1024,16) (the doc's call): brcb min 16*16*2 =
    512 B, max ceil(1024/8)*8*16*2 = 32768 B; axis 0 needs one 32-byte block; int8 adds the half copies of src and
    dst; the 950 needs nothing (its values stay at the caller's 0) but 32 B + the half copies for a b8 copy."""
    a2, soc950 = get_soc("Ascend910B4"), get_soc(SOC)
    assert GetBroadCastMaxMinTmpSize(a2, (1024, 1), (1024, 16), 2) == (32768, 512)
    assert GetBroadCastMaxMinTmpSize(a2, (1, 64), (8, 64), 4) == (32, 32)
    assert GetBroadCastMaxMinTmpSize(a2, (1, 64), (8, 64), 1) == (32 + (64 + 512) * 2, 32 + (64 + 512) * 2)
    assert GetBroadCastMaxMinTmpSize(soc950, (1024, 1), (1024, 16), 2) == (0, 0)
    assert GetBroadCastMaxMinTmpSize(soc950, (40,), (40,), 1) == (32 + (48 + 48) * 2,) * 2
    with pytest.raises(ValueError, match="cannot broadcast"):
        GetBroadCastMaxMinTmpSize(a2, (3, 2), (3, 4), 2)
    with pytest.raises(ValueError, match="not 32-byte aligned"):
        GetBroadCastMaxMinTmpSize(a2, (1, 10), (4, 10), 2)


def _kind(**kw) -> KernelError:
    src = kw.pop("src")
    with pytest.raises(KernelError) as info:
        run_brc(src, kw.pop("dst_shape"), **kw)
    e = info.value
    assert e.instruction == "Broadcast" and e.hint == sanitizer.explain(e.kind).hint
    return e


def test_broadcast_checks():
    f16 = np.ones((16, 1), np.float16)
    # per-SoC offer (Broadcast.md 产品支持情况 / 支持的数据类型)
    assert _kind(src=f16, dst_shape=(16, 16), axis=1, soc="Ascend910A").kind == "unsupported-on-soc"
    e = _kind(src=f16, dst_shape=(16, 16), soc="Ascend910B4")             # the shape-driven form is 950-only
    assert e.kind == "unsupported-on-soc" and "Ascend950-only" in str(e)
    assert _kind(src=f16.astype(np.int32), dst_shape=(16, 16), axis=1, soc="Ascend910B4").kind == \
        "unsupported-on-soc"
    assert _kind(src=f16.astype(np.int64), dst_shape=(16, 16), axis=1).kind == "unsupported-on-soc"
    run_brc(f16.astype(np.int64), (16, 16))                               # b64 through the shape-driven form
    # constraints (约束说明)
    assert "not the broadcast axis" in str(_kind(src=f16, dst_shape=(16, 16), axis=0))
    row = np.ones((1, 10), np.float16)                                    # 20-byte row, dim=2 axis=0
    assert "32-byte multiple" in str(_kind(src=row, dst_shape=(4, 10), axis=0))
    run_brc(row, (4, 10))                                                 # the 950 form has no such rule
    assert "not 32-byte aligned" in str(_kind(src=np.ones(40, np.float16), dst_shape=(40,), src_shift=3))
    assert "overlap" in str(_kind(src=np.ones((4, 1), np.float32), dst_shape=(4, 8), overlap=True))
    assert "65535" in str(_kind(src=np.ones(1, np.int8), dst_shape=(70000,)))
    run_brc(np.ones((2, 1), np.int8), (2, 35000))                         # fused dims stay below 65535
    e = _kind(src=f16, dst_shape=(16, 16), axis=1, soc="Ascend910B4", tmp_bytes=256)
    assert e.kind == "bad-broadcast" and "512 B" in str(e)
    run_brc(f16, (16, 16), axis=1, soc="Ascend910B4", tmp_bytes=512)
    # Python-level misuse
    with pytest.raises(ValueError, match="does not broadcast"):
        run_brc(np.ones((3, 2), np.float32), (3, 4))
    with pytest.raises(ValueError, match="constRank"):
        run_brc(f16, (16, 16), const_rank=3)


# --- the UB-broadcast schedules through aclnnThresholdBackward ------------------------------------------------
def _data(shape: tuple[int, ...], dt: np.dtype, seed: int, scale: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32) * np.float32(scale)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.clip(np.round(a), info.min, info.max).astype(dt)
    a = a.astype(dt)
    flat = a.reshape(-1)
    if flat.size > 8:                    # specials where the compare and the select must pass bits through
        flat[::53] = np.inf
        flat[1::53] = -np.inf
        flat[2::53] = np.nan
        flat[3::53] = -0.0
    return a


# (grad shape, self shape, dtype, schMode) -- why each lands there (§3.4, maxElem = ub*8/(bufferNum*maxBits)
# floored to 256: TG fp16/bf16/int8/int32 5120, TG fp32 6144; RG fp16/bf16 10496, RG fp32/int32 5120, RG int8
# 9728, RG int64 2560):
CASES = [
    # 101: the split is on the last axis (it alone exceeds maxElem); grad broadcast along it (cached)
    ((200, 1), (200, 12000), F16, 101),
    # 101, fp32 by IsBigNLastBrc: self is broadcast on axis 0 with a 7000*4 >= 4096-byte last axis
    ((2, 7000), (1, 7000), F32, 101),
    # 102: aligned last axis (512 % (32/size) == 0) and a b8/b16 input; rows split on axis 0
    ((1024, 512), (1, 512), F16, 102),
    ((1024, 512), (1, 512), BF16, 102),
    ((1024, 512), (1, 512), I8, 102),
    ((300, 512), (1, 512), U8, 102),
    # 102 for 4-byte types by IsBigNLastBrc (1024 * 4 = 4096 bytes)
    ((300, 1024), (1, 1024), F32, 102),
    ((300, 1024), (1, 1024), I32, 102),
    # 102: the last axis broadcast (grad a column) and both sides broadcast
    ((64, 1), (64, 512), F16, 102),
    ((1, 512), (64, 1), F16, 102),
    # 103 / 104 / 109: 3, 4 and 5 alternating axes split on axis 0
    ((4, 1, 64), (4, 32, 64), F16, 103),
    ((1, 8, 1, 64), (6, 8, 5, 64), BF16, 104),
    ((3, 1, 4, 1, 32), (3, 5, 4, 6, 32), F16, 109),
    ((3, 5, 4, 6, 32), (3, 1, 4, 1, 32), I8, 109),
]


@pytest.mark.parametrize("gs, xs, dt, mode", CASES, ids=[f"{m}-{d}-{g}x{x}" for g, x, d, m in CASES])
@pytest.mark.parametrize("thr", [0.5, 0.0])
def test_ub_broadcast_bit_exact(gs, xs, dt, mode, thr):
    """al.threshold_backward on the 950: threshold != 0 runs ThresholdGradV2D, 0 runs ReluGrad (both DAGs on the
    template); the schedule is the expected UB-broadcast one and the result is the golden's, bit for bit."""
    g, x = _data(gs, dt, 1, 40.0), _data(xs, dt, 2, 3.0)
    r = al.threshold_backward(g, x, thr, soc=SOC)
    assert r.ok, r.messages
    kr = r.kernel_runs[0]
    assert sch_mode_of(kr.tiling.tilingKey) == mode
    assert not kr.trace.warnings
    if thr:
        want = golden.threshold_grad_v2_d_main950(g, x, thr)
        xf = np.broadcast_to(x, r.out.shape).astype(np.float32)
        formula = np.where(~(xf <= np.float32(thr)), np.broadcast_to(g, r.out.shape), dt.type(0))
        assert_bits(r.out, formula, "formula")
    else:
        want = golden.relu_grad_main950(g, x)
    assert_bits(r.out, want, "golden")


def test_int64_relu_grad_ub_broadcast():
    """int64 reaches ReluGrad only with threshold 0; (1, 512) * 8 B = 4096 B broadcast on axis 0 -> 102."""
    g = np.arange(-600 * 512, 600 * 512, 2, dtype=np.int64).reshape(600, 512) * (2**40 + 1)
    x = np.arange(-256, 256, dtype=np.int64).reshape(1, 512)
    r = al.threshold_backward(g, x, 0.0, soc=SOC)
    assert r.ok, r.messages
    assert sch_mode_of(r.kernel_runs[0].tiling.tilingKey) == 102
    assert_bits(r.out, golden.relu_grad_main950(g, x))
    assert_bits(r.out, np.where(x > 0, g, 0))


@pytest.fixture
def acl_device():
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    try:
        yield
    finally:
        acl.aclrtResetDevice(0)
        acl.aclFinalize()


def test_schedule_trace(acl_device):
    """TG fp16 grad (1024, 512), self (1, 512) -> 102 (§3.6): 12 slots of elemNum 5120 * 4 B; core 0 runs loops
    0 and 1 of the 103 ubOuter loops (blockFormer 2); self is broadcast along the split axis, so it is copied and
    expanded once (loop 0), grad each loop; the Broadcasts expand [1, 512] and copy [10, 512]; loop 1's grad copy
    starts before loop 0's compute ends (ping/pong MTE2 slots)."""
    g = np.ones((1024, 512), np.float16)
    x = np.linspace(-2, 2, 512, dtype=np.float16).reshape(1, 512)
    k = registry.get("threshold_grad_v2_d").kernel("main")
    soc = get_soc(SOC)
    td = k.tiling_shapes([g.shape, x.shape], g.shape, g.dtype, soc.vector_core_num, soc.ub_size, threshold=0.0)
    assert sch_mode_of(td.tilingKey) == 102 and (td.ubFormer, td.blockFormer, td.elemNum) == (10, 2, 5120)
    out = np.zeros_like(g)
    run = k.launch(td, dense_tensor(g), dense_tensor(x), dense_tensor(out), soc, record=True, cores=[0])
    layout = run.trace.ub_layout[0]
    assert [b.offset for b in layout] == [s * 5120 * 4 for s in range(12)]
    assert sum(b.size for b in layout) == pool_bytes(tg.dag(F16), td) == 245760
    assert "broadcast" in layout[3].name and "broadcast" in layout[4].name      # the persistent slots 3, 4
    ev = [e for e in run.trace.events if e.core == 0]
    mte2 = [e for e in ev if e.pipe == "MTE2"]
    assert [e.nbytes for e in mte2] == [512 * 2, 10 * 512 * 2, 10 * 512 * 2]
    brc = [e for e in ev if e.instr == "Broadcast"]
    assert len(brc) == 3 and "[10, 512]" in brc[0].detail and "[1, 512]" in brc[0].detail
    assert all("[10, 512] = Broadcast<half, 2>" in e.detail for e in brc)
    vec0 = [e for e in ev if e.pipe == "V" and e.tile == 0]
    assert mte2[2].start < max(e.end for e in vec0)


def test_ub_broadcast_slot_table():
    """GetBufferIds<false, true>: MTE2 pings, MTE3 ping, a persistent slot per CopyInBrc, the temps, pongs."""
    rows = [r["slot"] for r in tg.dag(F16).table(nddma=False)]
    assert rows == ["0/9 -> 3", "5", "6", "7", "8", "1/10 -> 4", "5", "6", "2/11", "—"]
    for d in (tg.dag(F16), tg.dag(F32), rg.dag(I8), rg.dag(I64)):
        used = {s.ping for s in d.ub_broadcast_slots.values()} | {s.pong for s in d.ub_broadcast_slots.values()
                                                                   if s.pong is not None}
        used |= {s.ping for s in d.cache_slots.values()}
        assert used == set(range(d.buffer_num(nddma=False))), d


@pytest.mark.parametrize("gs, xs, mode", [((1024, 512), (1, 512), 102), ((200, 1), (200, 12000), 101),
                                          ((3, 1, 4, 1, 32), (3, 5, 4, 6, 32), 109)])
def test_ub_broadcast_core_ranges_cover_output(gs, xs, mode):
    """The UB loops of every core, as core_ranges lists them, tile the output exactly once."""
    k = registry.get("threshold_grad_v2_d").kernel("main")
    out = np.broadcast_shapes(gs, xs)
    td = k.tiling_shapes([gs, xs], out, F16, CORES, UB)
    assert sch_mode_of(td.tilingKey) == mode
    runs = sorted((s, ln) for r in k.core_ranges(td, F16) for _, s, ln in r["tiles"])
    assert runs[0][0] == 0 and all(a[0] + a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))
    assert runs[-1][0] + runs[-1][1] == math.prod(out)

"""The simulated AI Core's sanitizer: one deliberately broken kernel per finding.

Each broken kernel is launched directly with ``ascend_lab.ascendc.launch`` on a few cores, breaking only on
one core (and, where a tile is involved, only on a later tile), so that the error must name the right
instruction, core and tile. Expected numbers (usable UB, padding, overflow bytes) are computed here from
``shared/reference/ascendc_facts.md`` (§1.2 queues, §1.4 DataCopy), ``kernel_flavours.md`` §4 (UB reserve) and
``cann_facts.md`` (§4.1/§4.2 ThresholdGradV2D padding and its int8 tmp2), never read back from the simulator.

The catalogue (``ascendc.sanitizer.FINDINGS``) is checked against the code: every kind the simulator can
report is listed with a meaning and a hint, every listed kind is reported somewhere, and no module other than
the sanitizer builds a finding.

Also checked: a sanitizer error inside phase 2 of an aclnn call is status 361001 with the message in the log
(never a Python exception), and the real kernels behave as documented (ThresholdGradV2D reads/writes the
256-byte padding with ``gm-padding`` warnings; its int8 path overruns tmp2 into free UB; HardSigmoidGrad's
DataCopyPad never touches padding).
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import linecache
import re
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from helpers import oracle_of

import ascend_lab as al
from ascend_lab import golden, standalone
from ascend_lab.ascendc import (
    CMPMODE,
    SELMODE,
    VECCALC,
    VECIN,
    VECOUT,
    Adds,
    CompareScalar,
    DataCopy,
    DataCopyPad,
    DataCopyPadParams,
    DataCopyParams,
    Duplicate,
    GetBlockIdx,
    GetBlockNum,
    GlobalTensor,
    GmAddr,
    KernelError,
    LocalTensor,
    Muls,
    PipeBarrier,
    Select,
    TBuf,
    TPipe,
    TQue,
    errors,
    float_,
    half,
    launch,
    sanitizer,
)
from ascend_lab.ascendc.sanitizer import report as sanitizer_report
from ascend_lab.ascendc.trace import Warning_
from ascend_lab.base.platform import get_soc
from ascend_lab.opdev.tiling_data import GET_TILING_DATA
from ascend_lab.ops.common import kernel_args
from ascend_lab.ops.hard_sigmoid_grad import op_host as hs_host
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import experimental as hs_kernel
from ascend_lab.ops.relu_grad.op_kernel import experimental as rg_kernel
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import experimental as th_kernel
from ascend_lab.run import DeviceTensors, acl_session

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
RUNTIME_ERROR = 361001          # ACLNN_ERR_RUNTIME_ERROR, cann_facts §8

# kernel_flavours §4: a TPipe plan may fill the whole UB (192 KB on A2, 248 KB on the 950); only a kernel that
# issues Select modes 1/2 must keep its plan below the library's scratch at TMP_UB_OFFSET = 184 KB on A2/A3
# (tests/test_ub_reserve.py checks that boundary).
UB_910B4 = 196608
TMP_UB_OFFSET_A2 = 184 * 1024                   # 188416
USABLE_950 = 253952


def ceil32(n: int) -> int:
    return -(-n // 32) * 32


_PART = re.compile(r"\[(\d+), (\d+)\) = (\d+) B of (.+)")


def accounts_for_every_byte(message: str) -> tuple[int, int, list[tuple[int, int, str]]]:
    """An overrun message, checked to add up: (bytes accessed, bytes inside the buffer, [(start, end, what lies
    there)]) -- the access range equals the buffer's part plus the parts past it, which tile [buffer end, end)."""
    m = re.match(r"(?:reads|writes) \d+ elements \((\d+) B\) at UB \[(\d+), (\d+)\) of \S+, which holds \d+ "
                 r"elements at \[(\d+), (\d+)\): (\d+) B inside it, (\d+) B past its end -- (.*)$", message)
    assert m, message
    total, a, b, t0, t1, inside, past = (int(g) for g in m.groups()[:7])
    assert b - a == total and t0 == a and t1 - t0 == inside and inside + past == total, message
    parts = []
    at = t1
    for piece in m.group(8).split("; "):
        pm = _PART.fullmatch(piece)
        assert pm, piece
        lo, hi, nbytes = int(pm[1]), int(pm[2]), int(pm[3])
        assert lo == at and hi - lo == nbytes, message
        what = pm[4]
        parts.append((lo, hi, "free UB" if what == "free UB" else what))
        at = hi
    assert at == b, message
    return total, inside, parts


# --- harness -----------------------------------------------------------------------------------------------

@contextlib.contextmanager
def device(*arrays: np.ndarray, names: tuple[str, ...] = ("x", "y", "z")) -> Iterator[list]:
    """Upload ``arrays`` to simulated device memory; yields ``[(aclTensor, GmAddr), ...]``."""
    with acl_session():
        held = DeviceTensors()
        try:
            ts = [held.upload(a, n) for a, n in zip(arrays, names, strict=False)]
            yield [(t, kernel_args.gm_arg(t, n)) for t, n in zip(ts, names, strict=False)]
        finally:
            held.release()


def run(kernel, *, block_dim: int = 2, soc: str = "Ascend910B4", n: int = 256, record: bool = True, **template):
    """Launch ``kernel`` on three float32 GM tensors of ``n`` elements (x, y inputs; z output)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    with device(x, y, z) as args:
        kr = launch(kernel, block_dim, [a for _, a in args], b"", get_soc(soc), outputs=(2,), record=record,
                    **template)
        out = args[2][0].numpy().copy()
    return kr, x, y, out


def expect_error(kind: str, instruction: str, core: int, tile: int | None, **kw) -> KernelError:
    with pytest.raises(KernelError) as info:
        run(**kw)
    e = info.value
    msg = str(e)
    assert e.kind == kind, msg
    assert msg.startswith(f"[{kind}]"), msg
    assert e.instruction == instruction, msg
    assert f"instruction {instruction}" in msg, msg
    assert e.core == core and f"core {core}" in msg, msg
    if tile is None:
        assert e.tile is None and "tile" not in msg.split("(instruction")[-1], msg
    else:
        assert e.tile == tile and f"tile {tile}" in msg, msg
    assert e.hint == sanitizer.explain(kind).hint and e.hint, msg      # the catalogue's advice travels along
    return e


def last_core() -> bool:
    return GetBlockIdx() == GetBlockNum() - 1


# --- UB over capacity at TPipe::InitBuffer ------------------------------------------------------------------

def k_ub_plan(x, y, z, workspace, tiling, *, queue_bytes: int, tbuf_bytes: int):
    """Two double-buffered VECIN blocks + one TBuf; the last core asks for the oversized plan."""
    pipe = TPipe()
    q = TQue(VECIN, 2, name="inQueueX")
    tmp = TBuf(VECCALC, name="tmpBuf")
    if not last_core():
        queue_bytes, tbuf_bytes = 1024, 1024
    pipe.InitBuffer(q, 2, queue_bytes)
    pipe.InitBuffer(tmp, tbuf_bytes)


def test_ub_over_capacity_names_initbuffer_core_and_overflow_bytes():
    # 2 x 60000 B of queue + 80000 B of TBuf = 200000 B: over the 192 KB UB of an A2 core by 3392 B. (Until the
    # §4 reserve model the simulator refused 190016 B already, keeping 8 KB + 256 B for every kernel.)
    plan_end = 2 * 60000 + ceil32(80000)
    assert plan_end > UB_910B4
    e = expect_error("ub-overflow", "TPipe::InitBuffer", 2, None, kernel=k_ub_plan, block_dim=3,
                     queue_bytes=60000, tbuf_bytes=80000)
    msg = str(e)
    assert f"overflow {plan_end - UB_910B4} B" in msg, msg
    assert f"holds {UB_910B4} B" in msg and "tmpBuf" in msg, msg
    assert "reserved" not in msg, msg


def test_ub_plan_fits_on_950_but_not_on_910b4():
    ok, *_ = run(kernel=k_ub_plan, block_dim=1, soc="Ascend950PR", queue_bytes=60000, tbuf_bytes=80000)
    layout = ok.trace.ub_layout[0]
    assert [b.size for b in layout] == [60000, 60000, 80000]
    with pytest.raises(KernelError) as info:
        run(kernel=k_ub_plan, soc="Ascend910B4", queue_bytes=60000, tbuf_bytes=80000)
    assert info.value.kind == "ub-overflow"


def test_ub_capacity_boundary_exact_fit_and_one_byte_over():
    # a plan that issues no Select may fill the UB: exactly 192 KB fit on an A2 core (the 8 KB + 256 B the old
    # model kept for every kernel are no longer taken); one byte more is rounded up to 32 B and overflows by 32 B
    run(kernel=k_ub_plan, block_dim=1, queue_bytes=32, tbuf_bytes=UB_910B4 - 64)
    e = expect_error("ub-overflow", "TPipe::InitBuffer", 0, None, kernel=k_ub_plan, block_dim=1, queue_bytes=32,
                     tbuf_bytes=UB_910B4 - 64 + 1)
    assert "overflow 32 B" in str(e)
    # on the 950 the whole 248 KB is usable: the same boundary sits at 253952 B
    run(kernel=k_ub_plan, block_dim=1, soc="Ascend950PR", queue_bytes=32, tbuf_bytes=USABLE_950 - 64)
    with pytest.raises(KernelError, match="overflow 32 B"):
        run(kernel=k_ub_plan, block_dim=1, soc="Ascend950PR", queue_bytes=32, tbuf_bytes=USABLE_950 - 63)


def k_many_buffers(x, y, z, workspace, tiling, *, count: int):
    pipe = TPipe()
    for i in range(count):
        pipe.InitBuffer(TBuf(VECCALC, name=f"t{i}"), 32)


def test_more_than_64_buffers_is_refused():
    run(kernel=k_many_buffers, block_dim=1, count=64)                      # ascendc_facts §1.2: at most 64
    expect_error("too-many-buffers", "TPipe::InitBuffer", 0, None, kernel=k_many_buffers, block_dim=1, count=65)


# --- DataCopy lengths ------------------------------------------------------------------------------------------

def k_copy(x, y, z, workspace, tiling, *, count_in: int, count_out: int, bad_tile: int, pad: bool = False):
    """Three tiles of 64 floats through a VECIN and a VECOUT queue; tile ``bad_tile`` on the last core copies
    ``count_in`` elements in and ``count_out`` out (plain DataCopy, or DataCopyPad with ``pad``)."""
    pipe = TPipe()
    qin, qout = TQue(VECIN, 1, name="inQueueX"), TQue(VECOUT, 1, name="outQueueZ")
    pipe.InitBuffer(qin, 2, 64 * 4)
    pipe.InitBuffer(qout, 2, 64 * 4)
    xg, zg = GlobalTensor(float_), GlobalTensor(float_)
    xg.SetGlobalBuffer(x, 256)
    zg.SetGlobalBuffer(z, 256)
    for i in range(3):
        cin = cout = 64
        if i == bad_tile and last_core():
            cin, cout = count_in, count_out
        t = qin.AllocTensor(float_)
        if pad:
            DataCopyPad(t, xg[i * 64], DataCopyParams(1, cin * 4, 0, 0), DataCopyPadParams(False, 0, 0, 0))
        else:
            DataCopy(t, xg[i * 64], cin)
        qin.EnQue(t)
        t = qin.DeQue(float_)
        o = qout.AllocTensor(float_)
        Muls(o, t, 2.0, 64)
        qout.EnQue(o)
        qin.FreeTensor(t)
        o = qout.DeQue(float_)
        if pad:
            DataCopyPad(zg[i * 64], o, DataCopyParams(1, cout * 4, 0, 0))
        else:
            DataCopy(zg[i * 64], o, cout)
        qout.FreeTensor(o)


def test_datacopy_gm_to_ub_not_multiple_of_32_bytes():
    # 7 floats = 28 B (ascendc_facts §1.4: the hardware silently rounds down to 0 B; the simulator refuses)
    e = expect_error("misaligned-copy", "DataCopy", 1, 2, kernel=k_copy, count_in=7, count_out=64, bad_tile=2)
    assert "28 B" in str(e) and "DataCopyPad" in str(e)


def test_datacopy_ub_to_gm_not_multiple_of_32_bytes():
    e = expect_error("misaligned-copy", "DataCopy", 1, 1, kernel=k_copy, count_in=64, count_out=12, bad_tile=1)
    assert "48 B" in str(e)


def test_datacopy_whole_32_byte_blocks_and_datacopypad_any_length_are_fine():
    # 8 floats = 32 B: a legal DataCopy. The Muls over all 64 lanes then reads 56 lanes no copy wrote (a ub-uninit
    # warning, once), and only the 8 computed from written data are copied out
    kr, x, _, out = run(kernel=k_copy, count_in=8, count_out=8, bad_tile=0)
    assert [(w.kind, w.core, w.tile, w.instr) for w in kr.trace.warnings] == [("ub-uninit", 1, 0, "Muls")]
    assert kr.trace.warnings[0].message.startswith(f"reads {56 * 4} B of inQueueX[0] that no instruction has written")
    kr, x, _, out = run(kernel=k_copy, block_dim=1, count_in=7, count_out=7, bad_tile=1, pad=True)
    assert [(w.kind, w.tile) for w in kr.trace.warnings] == [("ub-uninit", 1)]
    # one core, tile 1: 7 elements in; the 8th UB lane holds DataCopyPad's dummy = the first element (ascendc_facts
    # §1.4, isPad=false), lanes 8..63 were never written (block 1's first use); only 7 elements land in GM.
    want = np.zeros(256, np.float32)
    want[:192] = x[:192] * np.float32(2.0)
    want[64 + 7:128] = 0.0
    np.testing.assert_array_equal(out, want)


# --- GM bounds and the 256-byte padding ----------------------------------------------------------------------

def k_gm(x, y, z, workspace, tiling, *, start: int, count: int, write: bool):
    """One tile on the last core reads (or writes) ``count`` floats at element ``start`` of a 100-float x / z. A
    write copies out a tile V filled and handed over through a VECOUT queue (so the data is written and the pipes
    are ordered: only the GM side is under test)."""
    pipe = TPipe()
    q = TQue(VECOUT if write else VECIN, 1, name="outQueueZ" if write else "inQueueX")
    pipe.InitBuffer(q, 1, 256 * 4)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(z if write else x, 100)
    t = q.AllocTensor(float_)
    if write:
        Duplicate(t, 1.0, 256)
        q.EnQue(t)
        t = q.DeQue(float_)
    if last_core():
        if write:
            DataCopy(g[start], t, count)
        else:
            DataCopy(t, g[start], count)
    q.FreeTensor(t)


PAD_N = 100                    # 400 B; the 256-byte padding ends at 512 B, so 112 B of padding


@pytest.mark.parametrize("write", [False, True])
def test_gm_access_inside_the_padding_is_a_warning(write):
    kr, *_ = run(kernel=k_gm, n=PAD_N, start=0, count=128, write=write)       # 512 B = the padded length
    w = [w for w in kr.trace.warnings if w.kind == "gm-padding"]
    assert len(w) == 1, kr.trace.warnings
    assert w[0].core == 1 and w[0].tile == 0 and w[0].instr == "DataCopy"
    verb = "writes" if write else "reads"
    assert f"{verb} {512 - 4 * PAD_N} B past the logical end of {'z' if write else 'x'}" in w[0].message


def test_gm_padding_warning_is_kept_without_tracing_and_not_for_in_bounds_reads():
    kr, *_ = run(kernel=k_gm, n=PAD_N, start=120, count=8, write=False, record=False)   # bytes 480..512
    assert not kr.trace.events
    assert [(w.kind, w.core) for w in kr.trace.warnings] == [("gm-padding", 1)]
    assert "reads 112 B" in kr.trace.warnings[0].message
    kr, *_ = run(kernel=k_gm, n=PAD_N, start=0, count=96, write=False)                  # 384 B <= 400 B
    assert not kr.trace.warnings


def test_a_strict_policy_turns_chosen_warnings_into_errors_at_the_instruction():
    def policy(w):
        return "writes past the end are bugs here" if w.kind == "gm-padding" and "writes" in w.message else None

    kr, *_ = run(kernel=k_gm, n=PAD_N, start=0, count=128, write=False, strict=policy)   # a read: still a warning
    assert [w.kind for w in kr.trace.warnings] == ["gm-padding"]
    e = expect_error("gm-padding", "DataCopy", 1, 0, kernel=k_gm, n=PAD_N, start=0, count=128, write=True,
                     strict=policy)
    assert "writes 112 B past the logical end of z" in str(e) and "writes past the end are bugs here" in str(e)


@pytest.mark.parametrize("write", [False, True])
@pytest.mark.parametrize("start,count", [(0, 136), (128, 8), (120, 16)])
def test_gm_access_past_the_padding_is_out_of_bounds(write, start, count):
    e = expect_error("gm-out-of-bounds", "DataCopy", 1, 0, kernel=k_gm, n=PAD_N, start=start, count=count,
                     write=write)
    msg = str(e)
    assert f"{'write' if write else 'read'} of {4 * count} B at byte {4 * start} of {'z' if write else 'x'}" in msg
    assert f"({4 * PAD_N} B)" in msg and "256-byte padding" in msg


def test_gm_access_before_the_tensor_is_out_of_bounds():
    expect_error("gm-out-of-bounds", "DataCopy", 1, 0, kernel=k_gm, n=PAD_N, start=-8, count=8, write=False)


# --- queue misuse ------------------------------------------------------------------------------------------------

def k_deque_empty(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 2, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 256)
    t = q.AllocTensor(float_)
    DataCopy(t, g, 64)
    if not last_core():
        q.EnQue(t)                    # the last core "forgets" the EnQue
    t = q.DeQue(float_)
    q.FreeTensor(t)


def test_deque_of_an_empty_queue():
    # the error names the loop tile the DeQue waited for (the queue's first, allocated but never EnQue'd), the block,
    # and -- a kernel of plain functions -- the function whose DeQue found nothing
    e = expect_error("deque-empty", "DeQue", 2, 0, kernel=k_deque_empty, block_dim=3)
    assert "tile 0: the stage that calls inQueueX.AllocTensor allocated inQueueX[0] but never EnQue'd it before " \
           "k_deque_empty's DeQue on inQueueX" in str(e), str(e)


class KernelForgetsEnQue:
    """A learner's staged kernel (CopyIn / Compute / CopyOut, BUFFER_NUM = 2) whose CopyIn skips the EnQue on tile 3."""

    def __init__(self, skip: int | None, skip_out: int | None = None, free: bool = True):
        self.skip, self.skip_out, self.free = skip, skip_out, free
        self.pipe = TPipe()
        self.inQueueX = TQue(VECIN, 2)
        self.outQueueZ = TQue(VECOUT, 2)
        self.xGm, self.zGm = GlobalTensor(float_), GlobalTensor(float_)

    def Init(self, x, z):
        self.xGm.SetGlobalBuffer(x, 512)
        self.zGm.SetGlobalBuffer(z, 512)
        self.pipe.InitBuffer(self.inQueueX, 2, 256)
        self.pipe.InitBuffer(self.outQueueZ, 2, 256)

    def Process(self):
        for i in range(8):
            self.CopyIn(i)
            self.Compute()
            self.CopyOut(i)

    def CopyIn(self, i):
        x = self.inQueueX.AllocTensor(float_)
        DataCopy(x, self.xGm[i * 64], 64)
        if i != self.skip:
            self.inQueueX.EnQue(x)

    def Compute(self):
        x = self.inQueueX.DeQue(float_)
        z = self.outQueueZ.AllocTensor(float_)
        Muls(z, x, np.float32(2.0), 64)
        if self.inQueueX.deques - 1 != self.skip_out:
            self.outQueueZ.EnQue(z)
        if self.free:
            self.inQueueX.FreeTensor(x)

    def CopyOut(self, i):
        z = self.outQueueZ.DeQue(float_)
        DataCopy(self.zGm[i * 64], z, 64)
        self.outQueueZ.FreeTensor(z)


def k_forgets_enque(x, y, z, workspace, tiling, *, skip: int | None = 3, skip_out: int | None = None,
                    free: bool = True):
    op = KernelForgetsEnQue(skip, skip_out, free)
    op.Init(x, z)
    op.Process()


def test_a_missing_enque_names_the_tile_the_stage_and_the_block():
    e = expect_error("deque-empty", "DeQue", 0, 3, kernel=k_forgets_enque, block_dim=1, n=512)
    assert e.detail.startswith("tile 3: CopyIn allocated inQueueX[1] but never EnQue'd it before Compute's DeQue "
                               "on inQueueX"), e.detail
    assert "self.inQueueX.EnQue(...) at the end of CopyIn, after MTE2's copy-in" in e.detail, e.detail
    # the learner's line: the DeQue in Compute, in this file
    assert e.line is not None and e.line.function == "Compute" and "self.inQueueX.DeQue(float_)" in e.line.code
    assert e.line.place.startswith("tests/test_sanitizer.py, line ") or e.line.place.endswith(
        f"test_sanitizer.py, line {e.line.lineno}")
    assert str(e).endswith(f"at {e.line}")
    run(kernel=k_forgets_enque, block_dim=1, n=512, skip=None)      # the same kernel with its EnQue runs
    # the output side: Compute forgets the EnQue of tile 2's result, CopyOut's DeQue finds nothing
    e = expect_error("deque-empty", "DeQue", 0, 2, kernel=k_forgets_enque, block_dim=1, n=512, skip=None, skip_out=2)
    assert e.detail.startswith("tile 2: Compute allocated outQueueZ[0] but never EnQue'd it before CopyOut's DeQue "
                               "on outQueueZ"), e.detail
    assert "self.outQueueZ.EnQue(...) at the end of Compute, after the vector computation" in e.detail, e.detail
    assert e.line.function == "CopyOut"


def test_a_missing_freetensor_names_the_tile_and_the_stages():
    e = expect_error("alloc-exhausted", "AllocTensor", 0, 2, kernel=k_forgets_enque, block_dim=1, n=512, skip=None,
                     free=False)
    assert e.detail == ("AllocTensor on inQueueX for tile 2: all 2 blocks still hold earlier tiles (blocks "
                        "inQueueX[0], inQueueX[1]) -- a missing FreeTensor? On the device this spins forever; "
                        "CopyIn allocates, Compute DeQues: call self.inQueueX.FreeTensor(...) in Compute once it is "
                        "done with the tensor"), e.detail
    assert e.line.function == "CopyIn" and "AllocTensor" in e.line.code


def k_use_after_free(x, y, z, workspace, tiling, *, how: str):
    """Three tiles; on tile 1 of the last core a tensor is used after its FreeTensor: the input itself
    ("free-first"), the output in the copy-out ("copy-out"), or a tensor derived from the input before the
    FreeTensor by ``ReinterpretCast`` ("view") or ``operator[]`` ("slice")."""
    pipe = TPipe()
    qin, qout = TQue(VECIN, 1, name="inQueueX"), TQue(VECOUT, 1, name="outQueueZ")
    pipe.InitBuffer(qin, 2, 256)
    pipe.InitBuffer(qout, 2, 256)
    xg, zg = GlobalTensor(float_), GlobalTensor(float_)
    xg.SetGlobalBuffer(x, 256)
    zg.SetGlobalBuffer(z, 256)
    for i in range(3):
        bad = i == 1 and last_core()
        t = qin.AllocTensor(float_)
        DataCopy(t, xg[i * 64], 64)
        qin.EnQue(t)
        t = qin.DeQue(float_)
        o = qout.AllocTensor(float_)
        src = t
        if bad and how in ("free-first", "view", "slice"):
            src = {"free-first": t, "view": t.ReinterpretCast(np.float32), "slice": t[0]}[how]
            qin.FreeTensor(t)
        Muls(o, src, 2.0, 64)
        if not (bad and how in ("free-first", "view", "slice")):
            qin.FreeTensor(t)
        qout.EnQue(o)
        o = qout.DeQue(float_)
        if bad and how == "copy-out":
            qout.FreeTensor(o)
            DataCopy(zg[i * 64], o, 64)
            continue
        DataCopy(zg[i * 64], o, 64)
        qout.FreeTensor(o)


def test_use_after_free_in_a_vector_instruction():
    e = expect_error("use-after-free", "Muls", 1, 1, kernel=k_use_after_free, how="free-first")
    assert "inQueueX[1]" in str(e) and "FreeTensor" in str(e)


def test_use_after_free_in_a_copy_out():
    e = expect_error("use-after-free", "DataCopy", 1, 1, kernel=k_use_after_free, how="copy-out")
    assert "outQueueZ[1]" in str(e)


@pytest.mark.parametrize("how", ["view", "slice"])
def test_use_after_free_through_a_derived_tensor(how):
    """A tensor derived before FreeTensor (ReinterpretCast, operator[]) dies with it (regression: it used to
    keep its own alive flag)."""
    e = expect_error("use-after-free", "Muls", 1, 1, kernel=k_use_after_free, how=how)
    assert "inQueueX[1]" in str(e)


def k_enque(x, y, z, workspace, tiling, *, depth: int):
    pipe = TPipe()
    q = TQue(VECIN, depth, name="inQueueX")
    pipe.InitBuffer(q, 2, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 256)
    a = q.AllocTensor(float_)
    DataCopy(a, g, 64)
    q.EnQue(a)
    b = q.AllocTensor(float_)          # tile 1
    DataCopy(b, g[64], 64)
    q.EnQue(b)                         # a second EnQue without a DeQue
    for _ in range(2):
        q.FreeTensor(q.DeQue(float_))


def test_enque_beyond_queue_depth():
    # ascendc_facts §1.2: depth = consecutive EnQue's allowed without a DeQue (depth 1 here; 2 blocks)
    e = expect_error("enque-overflow", "EnQue", 0, 1, kernel=k_enque, block_dim=1, depth=1)
    assert "depth 1" in str(e)
    run(kernel=k_enque, block_dim=1, depth=2)                                # depth 2 allows it


def k_alloc(x, y, z, workspace, tiling, *, free: bool, tiles: int = 6):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 2, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 512)
    for i in range(tiles):
        t = q.AllocTensor(float_)
        DataCopy(t, g[(i % 8) * 64], 64)
        q.EnQue(t)
        t = q.DeQue(float_)
        if free or not last_core():
            q.FreeTensor(t)


def test_alloc_with_every_block_in_use_missing_freetensor():
    # two blocks (num=2): tiles 0 and 1 keep theirs, the AllocTensor of tile 2 finds none free (a device hang)
    e = expect_error("alloc-exhausted", "AllocTensor", 1, 2, kernel=k_alloc, n=512, free=False)
    assert "inQueueX" in str(e) and "FreeTensor" in str(e)
    run(kernel=k_alloc, n=512, free=True, tiles=10)


def k_free(x, y, z, workspace, tiling, *, how: str):
    pipe = TPipe()
    qa, qb = TQue(VECIN, 1, name="inQueueA"), TQue(VECIN, 1, name="inQueueB")
    pipe.InitBuffer(qa, 2, 256)
    pipe.InitBuffer(qb, 2, 256)
    for _ in range(2):
        t = qa.AllocTensor(float_)
        if last_core() and how == "double":
            qa.FreeTensor(t)
        (qb if last_core() and how == "wrong-queue" else qa).FreeTensor(t)


def test_double_free_and_free_on_the_wrong_queue():
    expect_error("double-free", "FreeTensor", 1, 0, kernel=k_free, how="double")
    e = expect_error("wrong-queue", "FreeTensor", 1, 0, kernel=k_free, how="wrong-queue")
    assert "inQueueA[0]" in str(e) and "inQueueB" in str(e)


def k_unaligned_ub(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 1, 512)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 256)
    t = q.AllocTensor(float_)
    DataCopy(t[3] if last_core() else t, g, 64)          # UB address 12: not 32-byte aligned (§1.4)
    q.FreeTensor(t)


def test_datacopy_to_an_unaligned_ub_address():
    e = expect_error("misaligned-copy", "DataCopy", 1, 0, kernel=k_unaligned_ub)
    assert "UB address 12" in str(e)


def k_gm_read(x, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 1, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 64)
    t = q.AllocTensor(float_)
    DataCopy(t, g, 64)
    q.FreeTensor(t)


def test_gm_access_after_aclrtfree():
    from ascend_lab.acl import runtime as rt
    with acl_session():
        ret, p = rt.aclrtMalloc(256, rt.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == 0 and rt.aclrtFree(p) == 0
        with pytest.raises(KernelError) as info:
            launch(k_gm_read, 1, [GmAddr(p, "x", arg_nbytes=256)], b"", get_soc("Ascend910B4"))
    e = info.value
    assert (e.kind, e.instruction, e.core, e.tile) == ("gm-freed", "DataCopy", 0, 0), str(e)
    assert "freed" in str(e) and "x" in str(e)


# --- vector writes past a buffer ----------------------------------------------------------------------------------

def k_overrun(x, y, z, workspace, tiling, *, layout: str, count: int):
    """``layout="neighbour"``: a VECOUT queue with 2 blocks of 256 B followed by a TBuf; the Duplicate into
    block 1 (tile 1) on the last core runs ``count`` floats. ``layout="free"``: the queue is the last buffer."""
    pipe = TPipe()
    q = TQue(VECOUT, 1, name="outQueueZ")
    pipe.InitBuffer(q, 2, 256)
    if layout == "neighbour":
        pipe.InitBuffer(TBuf(VECCALC, name="tmpBuf"), 1024)
    for i in range(2):
        o = q.AllocTensor(float_)
        Duplicate(o, 1.0, count if (i == 1 and last_core()) else 64)
        q.EnQue(o)
        q.FreeTensor(q.DeQue(float_))


def test_vector_write_overrunning_into_another_buffer_is_an_error():
    # block 1 of the queue ends at 512 B; 96 floats from its start at 256 B reach 640 B: 128 B into tmpBuf
    e = expect_error("ub-overrun", "Duplicate", 1, 1, kernel=k_overrun, layout="neighbour", count=96)
    assert e.detail == ("writes 96 elements (384 B) at UB [256, 640) of outQueueZ[1], which holds 64 elements at "
                        "[256, 512): 256 B inside it, 128 B past its end -- [512, 640) = 128 B of tmpBuf"), e.detail
    assert accounts_for_every_byte(e.detail) == (384, 256, [(512, 640, "tmpBuf")])


def test_vector_write_overrunning_into_free_ub_is_a_warning():
    kr, *_ = run(kernel=k_overrun, layout="free", count=96)
    w = [w for w in kr.trace.warnings if w.kind == "ub-overrun"]
    assert len(w) == 1, kr.trace.warnings
    assert (w[0].core, w[0].tile, w[0].instr) == (1, 1, "Duplicate")
    assert accounts_for_every_byte(w[0].message) == (384, 256, [(512, 640, "free UB")]), w[0].message
    assert w[0].message.startswith("writes 96 elements (384 B) at UB [256, 640) of outQueueZ[1]")


def k_copy_overrun(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 2, 256)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 256)
    t = q.AllocTensor(float_)
    DataCopy(t, g, 128 if last_core() else 64)        # 512 B into a 256-B block: block 1 is overwritten
    q.FreeTensor(t)


def test_copy_in_overrunning_its_block_into_the_next_is_an_error():
    e = expect_error("ub-overrun", "DataCopy", 1, 0, kernel=k_copy_overrun)
    assert accounts_for_every_byte(e.detail) == (512, 256, [(256, 512, "inQueueX[1]")]), e.detail
    assert e.detail.startswith("writes 128 elements (512 B) at UB [0, 512) of inQueueX[0], which holds 64 elements")


def k_enque_tbuf(x, y, z, workspace, tiling):
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    b = TBuf(VECCALC, name="tmpBuf")
    pipe.InitBuffer(q, 1, 256)
    pipe.InitBuffer(b, 256)
    q.EnQue(b.Get(float_))


def test_enque_of_a_tbuf_tensor_is_refused():
    """ascendc_facts §1.2: TBuf tensors cannot be EnQue'd (regression: it used to be accepted silently)."""
    e = expect_error("wrong-queue", "EnQue", 0, None, kernel=k_enque_tbuf, block_dim=1)
    assert "tmpBuf" in str(e) and "inQueueX" in str(e)


def k_read_overrun(x, y, z, workspace, tiling):
    pipe = TPipe()
    a = TBuf(VECCALC, name="srcBuf")
    b = TBuf(VECCALC, name="nextBuf")
    pipe.InitBuffer(a, 256)
    pipe.InitBuffer(b, 256)
    d = TBuf(VECCALC, name="dstBuf")
    pipe.InitBuffer(d, 1024)
    Muls(d.Get(float_), a.Get(float_), 2.0, 128 if last_core() else 64)   # reads 256 B past srcBuf


def test_vector_read_overrunning_into_another_buffer_is_only_a_warning():
    kr, *_ = run(kernel=k_read_overrun)
    w = [w for w in kr.trace.warnings if w.kind == "ub-overrun"]
    assert [(x.core, x.instr) for x in w] == [(1, "Muls")]
    assert accounts_for_every_byte(w[0].message) == (512, 256, [(256, 512, "nextBuf")]), w[0].message
    assert w[0].message.startswith("reads 128 elements (512 B) at UB [0, 512) of srcBuf")


# --- through the aclnn layer: status 361001, never an exception -------------------------------------------------

def broken_entry(*args, **template):
    """A kernel entry with the real signature whose copy-in is 28 bytes on core 0."""
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 1, 256)
    g = GlobalTensor(float_ if template.get("schMode", 0) == 0 else half)
    g.SetGlobalBuffer(args[0], 64)
    t = q.AllocTensor(g.dtype)
    DataCopy(t, g, 7 if g.dtype == F32 else 3)
    q.FreeTensor(t)


def _check_runtime_error(r) -> None:
    assert r.status == RUNTIME_ERROR, (r.status, r.messages)
    assert r.out is None
    errors = [m for m in r.messages if "misaligned-copy" in m]
    assert errors, r.messages
    assert "instruction DataCopy" in errors[0] and "core 0" in errors[0] and "tile 0" in errors[0], errors[0]
    assert errors[0].startswith("[ERROR]")


def test_kernel_error_in_phase2_of_hardsigmoid_backward_is_361001(monkeypatch):
    # the experimental HardSigmoidGrad, asked for where its op definition registers it (kernel_flavours §1)
    monkeypatch.setattr(hs_kernel, "hard_sigmoid_grad", broken_entry)
    g = np.ones(1000, np.float32)
    r = al.hardsigmoid_backward(g, g, soc="Ascend950PR", kernel="experimental")
    _check_runtime_error(r)
    assert any("aclnnHardsigmoidBackward:" in m for m in r.messages if "misaligned" in m)
    assert r.graph == ["Contiguous", "Contiguous", "HardSigmoidGrad", "ViewCopy"]     # phase 1 was fine


@pytest.mark.parametrize("threshold", [0.5, 0.0])          # ThresholdGradV2D, and ReluGrad (its own kernel)
def test_kernel_error_in_phase2_of_threshold_backward_is_361001(monkeypatch, threshold):
    # the experimental kernels, asked for on Ascend910B4, where their op definitions register them
    monkeypatch.setattr(th_kernel, "threshold_grad_v2_d", broken_entry)
    monkeypatch.setattr(rg_kernel, "relu_grad", broken_entry)
    g = np.ones(1000, np.float32)
    r = al.threshold_backward(g, g, threshold, soc="Ascend910B4", kernel="experimental")
    _check_runtime_error(r)
    assert ("ReluGrad" if threshold == 0 else "ThresholdGradV2D") in r.graph


def test_a_healthy_call_after_a_broken_one_still_works(monkeypatch):
    g = np.linspace(-4, 4, 1000, dtype=np.float32)
    with monkeypatch.context() as m:
        m.setattr(hs_kernel, "hard_sigmoid_grad", broken_entry)
        assert al.hardsigmoid_backward(g, g, soc="Ascend950PR", kernel="experimental").status == RUNTIME_ERROR
    r = al.hardsigmoid_backward(g, g, soc="Ascend950PR", kernel="experimental")
    assert r.status == 0 and r.kernel == "experimental"
    np.testing.assert_array_equal(r.out.view(np.uint32), golden.hard_sigmoid_grad(g, g).view(np.uint32))


# --- the real kernels ----------------------------------------------------------------------------------------------

def test_threshold_grad_v2d_fp32_n100_reads_and_writes_exactly_the_padding():
    # cann_facts §4.1 worked example: N=100 f32 -> one core, 128 elements processed (28 of padding = 112 B)
    rng = np.random.default_rng(1)
    g = rng.standard_normal(100).astype(np.float32)
    x = rng.standard_normal(100).astype(np.float32)
    r = al.threshold_backward(g, x, 0.25, soc="Ascend910B4", kernel="experimental", trace=True)
    assert r.status == 0, r.messages
    np.testing.assert_array_equal(r.out.view(np.uint32), np.where(x > np.float32(0.25), g, 0).view(np.uint32))
    pad = [w for w in r.trace.warnings if w.kind == "gm-padding"]
    got = sorted((w.instr, w.message.split(" past")[0], w.message.split("end of ")[1].split(" ")[0]) for w in pad)
    assert got == [("DataCopy", "reads 112 B", "input_feature"), ("DataCopy", "reads 112 B", "input_gradient"),
                   ("DataCopy", "writes 112 B", "output_backprops")], pad
    assert {(w.core, w.tile) for w in pad} == {(0, 0)}
    # and the copies really are 128 elements (512 B) long
    copies = [e for e in r.trace.events if e.instr == "DataCopy"]
    assert sorted(e.pipe for e in copies) == ["MTE2", "MTE2", "MTE3"]
    assert all(e.count == 128 and e.nbytes == 512 for e in copies)


@pytest.mark.parametrize("dtype,n", [("float32", 7000), ("float16", 1001), ("int32", 333), ("int8", 333333),
                                     ("uint8", 17), ("bfloat16", 4097)])
def test_threshold_grad_v2d_padding_warnings_only_on_the_last_core(dtype, n):
    rng = np.random.default_rng(2)
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    g = rng.integers(-50, 50, n).astype(dt)
    x = rng.integers(-50, 50, n).astype(dt)
    r = al.threshold_backward(g, x, 1.5, soc="Ascend910B4", kernel="experimental")
    assert r.status == 0, r.messages
    assert not r.kernel_runs[0].trace.events                 # tracing off: warnings are still kept
    kr = r.kernel_runs[0]
    pad_bytes = -(-n * dt.itemsize // 256) * 256 - n * dt.itemsize
    pad = [w for w in kr.warnings if w.kind == "gm-padding"]
    if pad_bytes == 0:
        assert not pad
    else:
        assert len(pad) == 3 and {w.core for w in pad} == {kr.block_dim - 1}, pad
        assert all(f" {pad_bytes} B past" in w.message for w in pad)
    assert not [w for w in kr.warnings if w.kind not in ("gm-padding", "ub-overrun")]


def test_threshold_grad_v2d_int8_full_tile_overruns_tmp2_into_free_ub():
    # cann_facts §4.1/§4.2: int8 on 910B4 -> tileBlockNum = (196352 // 256) // 14 = 54 (the tiling sees
    # GetCoreMemSize(UB) = 196608 - 256 B, kernel_flavours §6), tileDataNum = 13824;
    # tmp2 is declared tileDataNum * 2 B but used as float: a full tile writes tileDataNum * 4 B into it.
    tile = ((UB_910B4 - 256) // 256) // 14 * 256
    rng = np.random.default_rng(3)
    g = rng.integers(-128, 128, tile).astype(np.int8)
    x = rng.integers(-128, 128, tile).astype(np.int8)
    r = al.threshold_backward(g, x, 0.5, soc="Ascend910B4", kernel="experimental", trace=True)
    assert r.status == 0, r.messages
    assert r.tiling.tileDataNum == tile and r.tiling.blockDim == 1
    np.testing.assert_array_equal(r.out, golden.threshold_grad_v2_d(g, x, 0.5))
    over = [w for w in r.trace.warnings if w.kind == "ub-overrun"]
    assert over, r.trace.warnings
    writes = [w for w in over if w.message.startswith("writes")]
    tmp2 = r.trace.ub_layout[0][-1]
    end = tmp2.offset + tmp2.size
    assert writes and all(accounts_for_every_byte(w.message) == (tile * 4, tile * 2, [(end, end + tile * 2, "free UB")])
                          for w in writes), writes
    assert all("of tmpQueue2, which holds" in w.message for w in over)
    # and the plan: tmp2 really is the last buffer, and the overrun stays below the Select scratch at 184 KB
    # (kernel_flavours §4: about 179712 B), which this kernel's Select mode 1 writes
    layout = r.trace.ub_layout[0]
    assert layout[-1].name == "tmpQueue2" and layout[-1].size == tile * 2
    assert layout[-1].offset + tile * 4 <= TMP_UB_OFFSET_A2


def test_threshold_grad_v2d_int8_small_tile_does_not_overrun():
    g = np.arange(-50, 50, dtype=np.int8)
    r = al.threshold_backward(g, g, 0.5, soc="Ascend910B4", kernel="experimental", trace=True)
    assert r.status == 0 and r.kernel == "experimental"
    assert not [w for w in r.trace.warnings if w.kind == "ub-overrun"]


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend950PR"])
def test_hardsigmoid_grad_bf16_full_tile_compare_reads_past_tmp(soc):
    """cann_facts §2.4: the bf16 ubFactor (7008 on 910B4, 9056 on 950) is not a multiple of 64 floats, so the
    256-byte CompareScalar of a full tile reads 32 floats (128 B) past tmpBuf, into maskBuf: a read, so only a
    warning, and harmless (Select uses the first n bits only)."""
    s = get_soc(soc)
    uf = (s.ub_size // 4) // 7 // 32 * 32
    assert uf % 64 == 32
    n = 3 * uf + 10
    td = hs_host.tiling(n, "bfloat16", 1, s.ub_size)
    assert td.ubFactor == uf
    g = np.random.default_rng(9).uniform(-4, 4, n).astype(np.float32).astype(BF16)
    with device(g, g, np.zeros_like(g)) as args:
        kr = hs_kernel.launch(td, args[0][0], args[1][0], args[2][0], s, record=False)
        out = args[2][0].numpy().copy()
    over = [w for w in kr.warnings if w.kind == "ub-overrun"]
    assert len(over) == 2 * 3                                        # two compares per full tile
    layout = {b.name: b for b in kr.trace.ub_layout[0]}
    tmp_end, mask = layout["tmpBuf"].offset + layout["tmpBuf"].size, layout["maskBuf"]
    assert mask.offset == tmp_end and mask.size >= 128
    assert all(w.instr == "CompareScalar" and w.message.startswith("reads ") for w in over), over
    for w in over:                       # 128 B past tmpBuf, all of them in maskBuf
        total, inside, parts = accounts_for_every_byte(w.message)
        assert total - inside == 128 and inside == layout["tmpBuf"].size
        assert parts == [(tmp_end, tmp_end + 128, "maskBuf")]
    np.testing.assert_array_equal(out.view(np.uint16), golden.hard_sigmoid_grad(g, g).view(np.uint16))


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend950PR", "Ascend910A"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 31, 100, 6145, 100003])
def test_hardsigmoid_grad_datacopypad_never_touches_the_padding(soc, dtype, n):
    """The experimental kernel's DataCopyPad copies exactly n elements: through aclnn where its op definition
    registers it (Ascend950PR), as a direct what-if launch on Ascend910B4; on Ascend910A its AscendC calls do not
    exist (CompareScalar, kernel_flavours §6). The kernel a stock install runs there (main on 950, TBE
    elsewhere) touches no padding either, and matches its own oracle."""
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(n)
    g = rng.standard_normal(n).astype(np.float32).astype(dt)
    x = rng.uniform(-4, 4, n).astype(np.float32).astype(dt)
    ui = np.uint16 if dt.itemsize == 2 else np.uint32
    r = al.hardsigmoid_backward(g, x, soc=soc)
    if dtype == "bfloat16" and soc == "Ascend910A":
        assert r.status == 161002 and not r.kernel_runs      # not in the Ascend910 list (cann_facts §1.1)
        return
    assert r.status == 0 and r.kernel == ("main" if soc == "Ascend950PR" else "tbe"), r.messages
    ws = [w for kr in r.kernel_runs for w in kr.warnings]
    assert not [w for w in ws if w.kind.startswith("gm-")], ws
    assert (r.out.view(ui) == oracle_of(r)[1](g, x).view(ui)).all()
    if soc == "Ascend950PR":
        r = al.hardsigmoid_backward(g, x, soc=soc, kernel="experimental")
        assert r.status == 0 and r.kernel == "experimental", r.messages
        ws, out = [w for kr in r.kernel_runs for w in kr.warnings], r.out
    elif soc == "Ascend910A":
        with pytest.raises(KernelError) as info:
            standalone.run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="experimental")
        assert info.value.kind == "unsupported-on-soc" and info.value.instruction == "CompareScalar"
        return
    else:
        kr, out = standalone.run_kernel("hard_sigmoid_grad", g, x, soc=soc, kernel="experimental", record=False)
        ws = kr.warnings
    assert not [w for w in ws if w.kind.startswith("gm-")], ws
    assert (out.view(ui) == golden.hard_sigmoid_grad(g, x).view(ui)).all()


# --- small misuses: every remaining kind of the catalogue, each from one broken kernel ----------------------------

def k_misuse(x, y, z, workspace, tiling, *, how: str):
    pipe = TPipe()
    if how == "queue-uninitialised":
        TQue(VECIN, 1, name="inQueueX").AllocTensor(float_)
    elif how == "buffer-uninitialised":
        TBuf(VECCALC, name="tmpBuf").Get(float_)
    elif how == "tbuf-too-small":
        tmp = TBuf(VECCALC, name="tmpBuf")
        pipe.InitBuffer(tmp, 256)
        tmp.Get(float_, 65)                                        # 65 floats = 260 B > 256 B
    elif how == "bad-initbuffer":
        pipe.InitBuffer(TQue(VECIN, 1, name="inQueueX"), 0, 256)
    elif how == "gm-unset":
        q = TQue(VECIN, 1, name="inQueueX")
        pipe.InitBuffer(q, 1, 256)
        DataCopy(q.AllocTensor(float_), GlobalTensor(float_), 64)
    elif how == "ub-out-of-bounds":
        tmp = TBuf(VECCALC, name="tmpBuf")
        pipe.InitBuffer(tmp, 256)
        t = tmp.Get(float_)
        Duplicate(LocalTensor(t.ctx, float_, t.ctx.ub_capacity - 256, 64, "lastBytes"), 1.0, 128)


@pytest.mark.parametrize("kind, instruction", [
    ("queue-uninitialised", "AllocTensor"), ("buffer-uninitialised", "TBuf::Get"), ("tbuf-too-small", "TBuf::Get"),
    ("bad-initbuffer", "TPipe::InitBuffer"), ("gm-unset", "DataCopy"), ("ub-out-of-bounds", "Duplicate"),
])
def test_small_misuses_stop_with_their_kind(kind, instruction):
    tile = 0 if kind == "gm-unset" else None
    expect_error(kind, instruction, 0, tile, kernel=k_misuse, block_dim=1, how=kind)


def k_select_operand(x, y, z, workspace, tiling, *, mode: SELMODE, tensor_src1: bool):
    pipe, buf, mask_buf = TPipe(), TBuf(VECCALC, name="tmpBuf"), TBuf(VECCALC, name="maskBuf")
    pipe.InitBuffer(buf, 1024)
    pipe.InitBuffer(mask_buf, 256)
    a, b = buf.Get(float_), buf.Get(float_)[128]
    src1 = b if tensor_src1 else float_.type(0.0)
    Select(a, mask_buf.Get(np.uint8), a, src1, mode, 64)


@pytest.mark.parametrize("mode, tensor_src1, says", [
    (SELMODE.VSEL_TENSOR_SCALAR_MODE, True, "takes a scalar of T (static_cast<T>(...)) as src1, but src1 is the "
                                            "LocalTensor tmpBuf"),
    (SELMODE.VSEL_TENSOR_TENSOR_MODE, False, "takes a LocalTensor as src1, but src1 is the scalar float 0.0"),
    (SELMODE.VSEL_CMPMASK_SPR, False, "takes a LocalTensor as src1, but src1 is the scalar float 0.0"),
])
def test_select_mode_and_operand_that_disagree_are_a_finding_naming_both(mode, tensor_src1, says):
    """Issue 22 item 8: not a numpy ValueError or a TypeError from inside Select, but the mode and the operand."""
    e = expect_error("select-operand", "Select", 0, None, kernel=k_select_operand, block_dim=1, mode=mode,
                     tensor_src1=tensor_src1)
    assert f"Select in {mode.name} {says}" in str(e), str(e)


def test_launch_with_no_cores_is_refused():
    with pytest.raises(KernelError) as info:
        launch(k_misuse, 0, [], b"", get_soc("Ascend910B4"), how="none")
    assert info.value.kind == "bad-launch" and "got 0" in str(info.value)
    assert info.value.hint == sanitizer.explain("bad-launch").hint


# --- the catalogue against the code ------------------------------------------------------------------------------

SANITIZER = Path(sanitizer.__file__).parent     # the package: one module per family of findings
ASCENDC = SANITIZER.parent


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and (getattr(n.func, "id", None) == name or getattr(n.func, "attr", None) == name)]


def test_every_kind_the_sanitizer_reports_is_in_the_catalogue_and_every_listed_kind_is_reported():
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in sorted(SANITIZER.glob("*.py"))]
    stopped = {c.args[0].value for tree in trees for c in _calls(tree, "stop")
               if c.args and isinstance(c.args[0], ast.Constant)}
    warned = {c.args[3].value for tree in trees for c in _calls(tree, "warn")
              if len(c.args) > 3 and isinstance(c.args[3], ast.Constant)}
    findings = sanitizer.FINDINGS
    assert stopped == {k for k, f in findings.items() if f.stops}
    assert warned == {k for k, f in findings.items() if f.warns}
    assert set(findings) == stopped | warned
    for kind, f in findings.items():
        assert f.kind == kind and f.outcome in ("error", "warning", "error or warning")
        assert len(f.meaning) > 20 and len(f.hint) > 20, kind


def test_only_the_sanitizer_builds_findings():
    """No other module of the simulator constructs a KernelError, passes a kind= or records a Warning_."""
    for path in sorted(ASCENDC.glob("*.py")):
        if path.name == "errors.py":              # (the sanitizer is the package ascendc/sanitizer/, not globbed)
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not _calls(tree, "KernelError"), path.name
        assert not _calls(tree, "Warning_"), path.name
        assert not [c for c in ast.walk(tree) if isinstance(c, ast.keyword) and c.arg == "kind"
                    and isinstance(c.value, ast.Constant) and c.value.value in sanitizer.FINDINGS], path.name


def test_the_catalogue_explains_kinds_and_refuses_unknown_ones():
    f = sanitizer.explain("gm-padding")
    assert f.warns and not f.stops and "256" in f.meaning
    assert sanitizer.explain("ub-overrun").stops and sanitizer.explain("ub-overrun").warns
    with pytest.raises(ValueError, match="unknown sanitizer finding 'ub-out-of-range'"):
        sanitizer.explain("ub-out-of-range")
    with pytest.raises(ValueError, match="is a warning"):
        sanitizer.stop("partial-repeat", "x", instruction="Compare")
    # each warning of a real run is a catalogue kind
    kr, *_ = run(kernel=k_overrun, layout="free", count=96)
    assert {w.kind for w in kr.trace.warnings} <= {k for k, f in sanitizer.FINDINGS.items() if f.warns}


# --- issue 14 item 5: a tiling whose tile size is 0 ------------------------------------------------------------

def test_a_zero_ubfactor_stops_with_the_tiling_not_a_zerodivisionerror():
    """The experimental HardSigmoidGrad tiling does not check ubFactor > 0 (cann_facts §2.1): with a 1024-B UB on
    Ascend910B4 the tiling sees 1024 - 256 = 768 B (GetCoreMemSize, kernel_flavours §6) and fp32's 8 buffers of
    4 B give FloorAlign(768 // 4 // 8, 32) = FloorAlign(24, 32) = 0 elements per tile."""
    assert (1024 - 256) // 4 // 8 // 32 * 32 == 0
    g = np.ones(1000, np.float32)
    with pytest.raises(KernelError) as info:
        standalone.run_kernel("hard_sigmoid_grad", g, g, soc="Ascend910B4", ub_size=1024, kernel="experimental")
    e = info.value
    assert e.kind == "tiling-zero" and e.instruction == "TPipe::InitBuffer" and e.core == 0, str(e)
    assert "ubFactor" in str(e) and "ubFactor=0" in str(e) and "0 elements" in str(e), str(e)
    assert e.hint == sanitizer.explain("tiling-zero").hint and "ubFactor == 0" in e.hint


def k_tile_loop(x, y, z, workspace, tiling):
    """Core 1 works out its tile count from the tiling before laying out the UB (core 0 has nothing to do)."""
    td = GET_TILING_DATA(hs_host.HardSigmoidGradTilingData, tiling)
    if GetBlockIdx() == 0:
        return
    loops = -(-td.blockFactor // td.ubFactor)
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 1, max(td.ubFactor, 8) * 4)
    assert loops >= 0


@pytest.mark.parametrize("named", [True, False])
def test_kernel_code_dividing_by_a_zero_tiling_field_is_a_finding(named):
    td = hs_host.HardSigmoidGradTilingData(totalLength=512, blockFactor=256, ubFactor=0, alpha=0.5, beta=0.5,
                                           blockDim=2, tilingKey=0)
    with device(np.zeros(512, np.float32), np.zeros(512, np.float32), np.zeros(512, np.float32)) as args:
        with pytest.raises(KernelError) as info:
            launch(k_tile_loop, 2, [a for _, a in args], td.to_bytes(), get_soc("Ascend910B4"), outputs=(2,),
                   kernel_name="TileLoop", tiling_data=td if named else None)
    e = info.value
    assert e.kind == "tiling-zero" and e.core == 1 and e.instruction == "k_tile_loop", str(e)
    assert not isinstance(e, ZeroDivisionError) and e.__cause__ is None
    assert f"in k_tile_loop, line {e.line.lineno}: `" in e.detail and "td.ubFactor" in e.detail  # the line that divided
    assert ".py" not in e.detail and e.line.function == "k_tile_loop" and "td.ubFactor" in e.line.code
    assert str(e).endswith(f"\n  at {e.line}") and "test_sanitizer.py, line" in str(e)   # the file: the learner's
    if named:
        assert "TileLoop divides by ubFactor = 0 from its tiling" in str(e) and "blockFactor=256" in str(e)
    else:
        assert "TileLoop divides by zero" in str(e)


def test_a_zero_tile_through_the_threshold_kernel_names_its_field():
    """ThresholdGradV2D sizes every buffer by tileDataNum: a tiling with tileDataNum = 0 stops at InitBuffer."""
    from ascend_lab.ops.threshold_grad_v2_d import op_host as th_host
    td = th_host.tiling(1000, "float32", 8, UB_910B4 - 256, threshold=0.5).replace(tileDataNum=0)
    g = np.ones(1000, np.float32)
    with device(g, g, np.zeros_like(g)) as args:
        with pytest.raises(KernelError) as info:
            th_kernel.launch(td, args[0][0], args[1][0], args[2][0], get_soc("Ascend910B4"))
    assert info.value.kind == "tiling-zero" and "tileDataNum" in str(info.value), str(info.value)


# --- issue 14 item 6: the sanitizer gaps ------------------------------------------------------------------------

def k_scalar(x, y, z, workspace, tiling, *, how: str):
    """Three tiles through a VECIN queue; on tile 1 of the last core a scalar access misbehaves."""
    pipe = TPipe()
    q = TQue(VECIN, 1, name="inQueueX")
    pipe.InitBuffer(q, 2, 256)
    xg = GlobalTensor(float_)
    xg.SetGlobalBuffer(x, 256)
    for i in range(3):
        bad = i == 1 and last_core()
        t = q.AllocTensor(float_)
        DataCopy(t, xg[i * 64], 64)
        if bad and how == "set-after-enque":
            q.EnQue(t)
            t.SetValue(0, 1.0)
        else:
            q.EnQue(t)
        t = q.DeQue(float_)
        assert t.GetValue(3) == t.data[3]
        q.FreeTensor(t)
        if bad and how in ("get", "set"):
            t.GetValue(0) if how == "get" else t.SetValue(0, 2.0)
        if bad and how == "index":
            q.AllocTensor(float_).GetValue(64)


@pytest.mark.parametrize("how, instr", [("get", "GetValue"), ("set", "SetValue")])
def test_getvalue_and_setvalue_after_freetensor(how, instr):
    e = expect_error("scalar-after-free", instr, 1, 1, kernel=k_scalar, how=how)
    assert "inQueueX[1]" in str(e) and "after FreeTensor" in str(e)


def test_setvalue_after_enque_and_getvalue_out_of_range():
    expect_error("write-after-enque", "SetValue", 1, 1, kernel=k_scalar, how="set-after-enque")
    e = expect_error("ub-overrun", "GetValue", 1, 2, kernel=k_scalar, how="index")
    assert "GetValue(64)" in str(e) and "holds 64 elements" in str(e)


def k_enque_write(x, y, z, workspace, tiling, *, how: str):
    """Three tiles, copy in -> Muls -> copy out; on tile 1 of the last core a tensor is written after its EnQue."""
    pipe = TPipe()
    qin, qout = TQue(VECIN, 1, name="inQueueX"), TQue(VECOUT, 1, name="outQueueZ")
    pipe.InitBuffer(qin, 2, 256)
    pipe.InitBuffer(qout, 2, 256)
    xg, zg = GlobalTensor(float_), GlobalTensor(float_)
    xg.SetGlobalBuffer(x, 256)
    zg.SetGlobalBuffer(z, 256)
    for i in range(3):
        bad = i == 1 and last_core()
        t = qin.AllocTensor(float_)
        DataCopy(t, xg[i * 64], 64)
        qin.EnQue(t)
        if bad and how == "copy-in":
            DataCopy(t, xg[0], 64)                   # MTE2 refills the block V may already be reading
        t = qin.DeQue(float_)
        o = qout.AllocTensor(float_)
        Muls(o, t, 2.0, 64)
        qout.EnQue(o)
        if bad and how == "compute":
            Adds(o, o, 1.0, 64)                      # V changes the result MTE3 may already be copying out
        qin.FreeTensor(t)
        o = qout.DeQue(float_)
        DataCopy(zg[i * 64], o, 64)
        qout.FreeTensor(o)


@pytest.mark.parametrize("how, instr", [("compute", "Adds"), ("copy-in", "DataCopy")])
def test_writing_a_tensor_after_enque_before_the_consumers_deque_is_a_race(how, instr):
    e = expect_error("write-after-enque", instr, 1, 1, kernel=k_enque_write, how=how)
    queue = "outQueueZ" if how == "compute" else "inQueueX"
    assert f"{queue}[1] (tile 1) after its EnQue on {queue}" in str(e), str(e)
    kr, x, _, out = run(kernel=k_enque_write, how="none")                       # the same kernel, in order
    np.testing.assert_array_equal(out[:192], x[:192] * np.float32(2.0))
    assert not kr.trace.warnings


def test_enque_overflow_and_deque_empty_name_their_tiles():
    e = expect_error("enque-overflow", "EnQue", 0, 1, kernel=k_enque, block_dim=1, depth=1)
    assert "EnQue of tile 1 (inQueueX[1]) on inQueueX beyond its depth 1: it still holds tile 0" in str(e), str(e)


def k_shared_alloc(x, z, workspace, tiling, *, count: int, write: bool):
    """Copies ``count`` floats out to x (a tile V filled, through a VECOUT queue) or in from x."""
    pipe = TPipe()
    q = TQue(VECOUT if write else VECIN, 1, name="outQueueX" if write else "inQueueX")
    pipe.InitBuffer(q, 1, 1024)
    g = GlobalTensor(float_)
    g.SetGlobalBuffer(x, 100)
    t = q.AllocTensor(float_)
    if write:
        Duplicate(t, 7.0, 256)
        q.EnQue(t)
        t = q.DeQue(float_)
        DataCopy(g, t, count)
    else:
        DataCopy(t, g, count)
    q.FreeTensor(t)


@pytest.mark.parametrize("separate", [False, True])
def test_a_padding_write_into_another_arguments_bytes_names_both(separate):
    """x (100 floats = 400 B) and z (100 floats) in ONE allocation, z right after x: writing 128 floats to x runs
    112 B into x's 256-byte padding (cann_facts §4.1), which here are z's first 112 B. With separate allocations
    the same write is the usual gm-padding warning."""
    from ascend_lab.acl import runtime as rt
    with acl_session():
        ptrs = []
        try:
            if separate:
                for _ in range(2):
                    ptrs.append(rt.aclrtMalloc(512, rt.ACL_MEM_MALLOC_HUGE_FIRST)[1])
                args = [GmAddr(ptrs[0], "x", arg_nbytes=400), GmAddr(ptrs[1], "z", arg_nbytes=400)]
            else:
                ptrs.append(rt.aclrtMalloc(1024, rt.ACL_MEM_MALLOC_HUGE_FIRST)[1])
                args = [GmAddr(ptrs[0], "x", arg_nbytes=400), GmAddr(ptrs[0] + 400, "z", arg_nbytes=400)]
            soc = get_soc("Ascend910B4")
            if separate:
                kr = launch(k_shared_alloc, 1, args, b"", soc, outputs=(1,), count=128, write=True)
                assert [w.kind for w in kr.warnings] == ["gm-padding"]
                return
            with pytest.raises(KernelError) as info:
                launch(k_shared_alloc, 1, args, b"", soc, outputs=(1,), count=128, write=True)
            e = info.value
            assert (e.kind, e.instruction, e.core, e.tile) == ("gm-clobber", "DataCopy", 0, 0), str(e)
            assert "into the padding of x lands in z: 112 B at bytes [0, 112) of z" in str(e), str(e)
            assert e.hint == sanitizer.explain("gm-clobber").hint
            # a read of the same bytes is only the padding warning; a write inside x is fine
            kr = launch(k_shared_alloc, 1, args, b"", soc, outputs=(1,), count=128, write=False)
            assert [w.kind for w in kr.warnings] == ["gm-padding"]
            launch(k_shared_alloc, 1, args, b"", soc, outputs=(1,), count=96, write=True)
        finally:
            for p in ptrs:
                rt.aclrtFree(p)


def k_uninit(x, y, z, workspace, tiling, *, n_in: int, n_cmp: int, n_sel: int, n_out: int):
    """One tile: ``n_in`` floats copied in, CompareScalar over ``n_cmp``, Select over ``n_sel``, ``n_out`` out."""
    pipe = TPipe()
    qin, qout = TQue(VECIN, 1, name="inQueueX"), TQue(VECOUT, 1, name="outQueueZ")
    mask = TBuf(VECCALC, name="maskBuf")
    pipe.InitBuffer(qin, 1, 256 * 4)
    pipe.InitBuffer(qout, 1, 256 * 4)
    pipe.InitBuffer(mask, 64)
    xg, zg = GlobalTensor(float_), GlobalTensor(float_)
    xg.SetGlobalBuffer(x, 256)
    zg.SetGlobalBuffer(z, 256)
    t = qin.AllocTensor(float_)
    DataCopyPad(t, xg, DataCopyParams(1, n_in * 4, 0, 0), DataCopyPadParams(False, 0, 0, 0))
    qin.EnQue(t)
    t = qin.DeQue(float_)
    o = qout.AllocTensor(float_)
    m = mask.Get(np.uint8)
    CompareScalar(m, t, np.float32(0), CMPMODE.GT, n_cmp)
    Select(o, m, t, np.float32(0), SELMODE.VSEL_TENSOR_SCALAR_MODE, n_sel)
    qout.EnQue(o)
    qin.FreeTensor(t)
    o = qout.DeQue(float_)
    DataCopyPad(zg, o, DataCopyParams(1, n_out * 4, 0, 0))
    qout.FreeTensor(o)


def test_a_compare_over_whole_repeats_past_the_data_is_silent_while_the_result_stays_clean():
    """HardSigmoidGrad's pattern: 100 floats in, CompareScalar over roundUp(100, 64) = 128 (its last repeat reads 28
    never-written floats), Select and copy-out over the 100: nothing to report."""
    kr, x, _, out = run(kernel=k_uninit, block_dim=1, n_in=100, n_cmp=128, n_sel=100, n_out=100)
    assert not kr.trace.warnings
    np.testing.assert_array_equal(out[:100], np.where(x[:100] > 0, x[:100], np.float32(0)))


def test_uninitialised_ub_warns_when_read_and_stops_when_it_reaches_gm():
    # 40 floats in, compare over 128: its first repeat (64 floats) already holds 24 unwritten ones -> a warning
    kr, *_ = run(kernel=k_uninit, block_dim=1, n_in=40, n_cmp=128, n_sel=40, n_out=40)
    w = [(w.kind, w.instr, w.core, w.tile) for w in kr.trace.warnings]
    assert w == [("ub-uninit", "CompareScalar", 0, 0)], kr.trace.warnings
    assert kr.trace.warnings[0].message.startswith(f"reads {(128 - 40) * 4} B of inQueueX[0] that no instruction")
    # the Select over all 128 reads the poisoned mask bits, and the copy-out writes them into z: an error. (The
    # copy-in of 100 floats = 400 B filled its 32-byte block in UB: 104 floats are written, 24 are not.)
    e = expect_error("ub-uninit", "DataCopyPad", 0, 0, kernel=k_uninit, block_dim=1, n_in=100, n_cmp=128,
                     n_sel=128, n_out=128)
    assert f"with {24 * 4} B computed from UB bytes no instruction had written" in str(e), str(e)
    assert "reaches the result" in str(e)
    # copying out bytes no instruction wrote at all
    e = expect_error("ub-uninit", "DataCopyPad", 0, 0, kernel=k_uninit, block_dim=1, n_in=100, n_cmp=128,
                     n_sel=100, n_out=120)
    assert f"with {20 * 4} B no instruction has written" in str(e), str(e)


def k_race(x, y, z, workspace, tiling, *, how: str):
    """The last core moves data between pipes through a TBuf or skips a queue call."""
    pipe = TPipe()
    qin, qout = TQue(VECIN, 1, name="inQueueX"), TQue(VECOUT, 1, name="outQueueZ")
    buf = TBuf(VECCALC, name="tmpBuf")
    pipe.InitBuffer(qin, 1, 256)
    pipe.InitBuffer(qout, 1, 256)
    pipe.InitBuffer(buf, 256)
    xg, zg = GlobalTensor(float_), GlobalTensor(float_)
    xg.SetGlobalBuffer(x, 256)
    zg.SetGlobalBuffer(z, 256)
    bad = last_core()
    tmp = buf.Get(float_)
    t = qin.AllocTensor(float_)
    if how in ("tbuf", "barrier"):
        DataCopy(tmp, xg, 64)                                    # MTE2 fills a TBuf ...
        if how == "barrier" or not bad:
            PipeBarrier("PIPE_ALL")
        Muls(tmp, tmp, 2.0, 64)                                  # ... and V reads it
    DataCopy(t, xg, 64)
    qin.EnQue(t)
    if how == "no-deque" and bad:
        Muls(tmp, t, 2.0, 64)                                    # V reads before its DeQue
    t = qin.DeQue(float_)
    o = qout.AllocTensor(float_)
    Muls(o, t, 3.0, 64)
    if how == "no-enque" and bad:
        DataCopy(zg, o, 64)                                      # MTE3 copies what V wrote, without EnQue/DeQue
    qout.EnQue(o)
    o = qout.DeQue(float_)
    Muls(tmp, o, 1.0, 64)                                        # V reads what MTE3 reads: no conflict
    DataCopy(zg, o, 64)
    qin.FreeTensor(t)
    qout.FreeTensor(o)


@pytest.mark.parametrize("how, instr, pipes", [("tbuf", "Muls", ("V", "MTE2")), ("no-deque", "Muls", ("V", "MTE2")),
                                               ("no-enque", "DataCopy", ("MTE3", "V"))])
def test_two_pipes_on_one_buffer_without_a_hand_off_race(how, instr, pipes):
    e = expect_error("ub-race", instr, 1, 0 if how != "tbuf" else None, kernel=k_race, how=how)
    assert pipes[0] in str(e) and pipes[1] in str(e), str(e)
    assert ("before its DeQue" in str(e)) == (how == "no-deque"), str(e)


def test_a_pipe_barrier_orders_the_pipes_and_reads_do_not_conflict():
    kr, x, _, out = run(kernel=k_race, how="barrier")
    np.testing.assert_array_equal(out[:64], x[:64] * np.float32(3.0))
    assert not kr.trace.warnings
    with pytest.raises(ValueError, match="PIPE_S is not allowed"):
        PipeBarrier("PIPE_S")


def test_the_real_kernels_keep_clear_of_the_new_findings():
    """Every flavour of both operators on a few sizes through aclnn: no new warning kind at all (the compares
    over whole repeats past the data are the documented silent case), and the result is its oracle's."""
    new = {"ub-uninit", "ub-race", "write-after-enque", "scalar-after-free", "gm-clobber", "tiling-zero"}
    rng = np.random.default_rng(14)
    ran = 0
    for soc, kernel in (("Ascend950PR", "experimental"), ("Ascend950PR", None), ("Ascend910B4", None),
                        ("Ascend910B4", "experimental")):
        for n in (1, 100, 4097):
            g = rng.standard_normal(n).astype(np.float32)
            x = rng.uniform(-4, 4, n).astype(np.float32)
            for r in (al.hardsigmoid_backward(g, x, soc=soc, kernel=kernel),
                      al.threshold_backward(g, x, 0.5, soc=soc, kernel=kernel),
                      al.threshold_backward(g, x, 0.0, soc=soc, kernel=kernel)):
                if kernel is not None and r.status == 561103:      # no such flavour for this op on this SoC
                    continue
                ran += 1
                assert r.status == 0, (soc, kernel, n, r.messages)
                kinds = {w.kind for kr in r.kernel_runs for w in kr.warnings}
                assert not kinds & new, (soc, kernel, n, kinds)
                _, oracle = oracle_of(r)
                assert (r.out.view(np.uint32) == oracle(g, x).view(np.uint32)).all(), (soc, kernel, n)
    assert ran >= 24, ran


# --- issue 12 item 4: every kind its own hint; no library path in any message --------------------------------------
def _clauses(text: str) -> set[str]:
    """The clauses of a hint long enough to be a recipe (split at ; : ( ) and ', or' / ', and' / '. ')."""
    return {c.strip() for c in re.split(r"[;:()]|, (?:or|and) |\. ", text) if len(c.strip()) > 25}


def test_each_finding_kind_has_its_own_hint():
    hints = {kind: f.hint for kind, f in sanitizer.FINDINGS.items()}
    assert all(h and h.strip() for h in hints.values())
    assert len(set(hints.values())) == len(hints)
    for (a, ha), (b, hb) in itertools.combinations(hints.items(), 2):
        assert ha not in hb and hb not in ha, (a, b)
        assert not _clauses(ha) & _clauses(hb), (a, b, _clauses(ha) & _clauses(hb))
        assert ha != sanitizer.FINDINGS[b].meaning


#: (kind, message, hint, learner's line) of every finding made while this module's tests ran (the fixture below)
SEEN: list[tuple[str, str, str, object]] = []


class _RecordedError(KernelError):
    def __init__(self, message, **kw):
        super().__init__(message, **kw)
        SEEN.append((self.kind, self.detail, self.hint, self.line))


def _recorded_warning(*args):
    w = Warning_(*args)
    SEEN.append((w.kind, w.message, sanitizer.explain(w.kind).hint, w.line))
    return w


@pytest.fixture(autouse=True)
def _record_findings(monkeypatch):
    monkeypatch.setattr(sanitizer_report, "KernelError", _RecordedError)      # stop() and warn() build them
    monkeypatch.setattr(sanitizer_report, "Warning_", _recorded_warning)


def _package_files() -> set[str]:
    return {p.name for p in ASCENDC.parents[0].rglob("*.py")} - {"__init__.py"}


def test_no_message_or_hint_names_a_library_path():
    """A battery of provoked findings (this module's tests, run before this one, and a few more here: the package's
    own kernels with their warnings, a zero tile through ThresholdGradV2D, a learner's class missing an EnQue): no
    message or hint names the package's folder, site-packages or one of the package's .py files."""
    for provoke in (lambda: test_hardsigmoid_grad_bf16_full_tile_compare_reads_past_tmp("Ascend910B4"),
                    test_a_zero_tile_through_the_threshold_kernel_names_its_field,
                    test_a_missing_enque_names_the_tile_the_stage_and_the_block,
                    lambda: test_kernel_code_dividing_by_a_zero_tiling_field_is_a_finding(True),
                    test_vector_read_overrunning_into_another_buffer_is_only_a_warning,
                    lambda: test_gm_access_inside_the_padding_is_a_warning(True)):
        provoke()
    kinds = {k for k, *_ in SEEN}
    assert {"deque-empty", "tiling-zero", "ub-overrun", "gm-padding"} <= kinds, kinds
    package = str(ASCENDC.parents[0])
    files = _package_files()
    assert "catalogue.py" in files and "shadow.py" in files and "experimental.py" in files
    for kind, message, hint, _ in SEEN + [(k, "", f.hint, None) for k, f in sanitizer.FINDINGS.items()]:
        for text in (message, hint):
            assert "ascend_lab/" not in text and package not in text and "site-packages" not in text, (kind, text)
            assert not [f for f in files if f in text], (kind, text)
    # where a finding names a line, it is this file's (the learner's here) or a kernel's C++, never library Python
    lines = [line for *_, line in SEEN if line is not None]
    cxx_lines = [line for line in lines if line.filename.endswith((".h", ".cpp"))]
    assert lines and all(line.filename == __file__ or line in cxx_lines for line in lines), lines
    # the package's own kernels are C++: their findings name the C++ line (HardSigmoidGrad bf16's compare reading
    # past its temp), by the file's path in the repository, never a machine's folder
    assert any(line is not None and line.filename.endswith(".h") and kind == "ub-overrun" and line.code
               and line.place.startswith("ascend_lab/ops/") for kind, _, _, line in SEEN)


# --- issue 12 item 2 (package side): a finding names the learner's line, as a notebook names it -------------------
_CELL = """\
import numpy as np
from ascend_lab.ascendc import VECIN, VECOUT, DataCopy, GlobalTensor, Muls, TPipe, TQue, float_


class KernelInACell:
    def __init__(self, n):
        self.n = n
        self.pipe = TPipe()
        self.inQueueX = TQue(VECIN, 1)
        self.outQueueZ = TQue(VECOUT, 1)
        self.xGm = GlobalTensor(float_)

    def Run(self, x):
        self.xGm.SetGlobalBuffer(x, 256)
        self.pipe.InitBuffer(self.inQueueX, 1, 256)
        self.pipe.InitBuffer(self.outQueueZ, 1, 256)
        t = self.inQueueX.AllocTensor(float_)
        DataCopy(t, self.xGm, 64)
        self.inQueueX.EnQue(t)
        t = self.inQueueX.DeQue(float_)
        z = self.outQueueZ.AllocTensor(float_)
        Muls(t, t, np.float32(2.0), self.n)
        return z.Nope


def entry(x, y, z, workspace, tiling, *, count):
    KernelInACell(count).Run(x)
"""


def _cell(filename: str):
    linecache.cache[filename] = (len(_CELL), None, _CELL.splitlines(keepends=True), filename)
    ns: dict = {}
    exec(compile(_CELL, filename, "exec"), ns)
    return ns["entry"]


MULS = "Muls(t, t, np.float32(2.0), self.n)"           # 96 floats into a 64-float block: into outQueueZ[0]
MULS_LINE = _CELL.splitlines().index(f"        {MULS}") + 1


@pytest.mark.parametrize("filename, place", [
    ("/tmp/ipykernel_4242/2771517352.py", "your notebook cell"),
    ("<ipython-input-7-5c5f0e0a7e3b>", "your notebook cell"),
    ("<lab5.md cell 12>", "<lab5.md cell 12>"),
])
def test_a_finding_in_a_notebook_cell_names_the_cell_and_line(filename, place):
    e = expect_error("ub-overrun", "Muls", 0, 0, kernel=_cell(filename), count=96, block_dim=1)
    assert e.line == errors.SourceLine(filename, MULS_LINE, "Run", MULS)
    assert str(e.line) == f"{place}, line {MULS_LINE}, in Run: {MULS}"
    assert str(e).endswith(f"\n  at {place}, line {MULS_LINE}, in Run: {MULS}")
    assert "ipykernel" not in str(e) and "ipython-input" not in str(e)


def test_any_error_in_a_learners_kernel_names_their_line():
    """Not only findings: an AttributeError in the learner's kernel is traced to their line by learner_line(exc)."""
    with pytest.raises(AttributeError) as info:
        run(kernel=_cell("/tmp/ipykernel_4242/1.py"), count=64, block_dim=1)
    line = errors.learner_line(info.value)
    assert line is not None and line.function == "Run" and line.code == "return z.Nope"
    assert line.place == f"your notebook cell, line {MULS_LINE + 1}"


def test_a_registered_library_folder_names_no_line(tmp_path):
    """The labs' kit registers its folder: a finding in its own kernels names no line (and no path)."""
    folder = tmp_path / "kit"
    folder.mkdir()
    path = folder / "kernels.py"
    path.write_text(_CELL)
    entry = _cell(str(path))
    assert expect_error("ub-overrun", "Muls", 0, 0, kernel=entry, count=96, block_dim=1).line.filename == str(path)
    errors.add_library_dir(folder)
    try:
        e = expect_error("ub-overrun", "Muls", 0, 0, kernel=entry, count=96, block_dim=1)
        assert e.line is None and "\n  at" not in str(e) and "kernels.py" not in str(e)
    finally:
        errors._library_dirs.remove(str(folder.resolve()))
        errors._verdicts.clear()


def test_warnings_carry_the_learners_line():
    kr, *_ = run(kernel=k_read_overrun)
    (w,) = [w for w in kr.trace.warnings if w.kind == "ub-overrun"]
    assert w.line is not None and w.line.function == "k_read_overrun" and w.line.code.startswith("Muls(d.Get")


def test_messages_name_a_package_file_by_its_path_in_the_repository(tmp_path, monkeypatch):
    """A finding in a kernel the package ships names ``ascend_lab/...`` -- the same on every machine, and no build
    machine's folders on a published page -- from any working directory; a file of the learner's stays relative to
    the working directory, a cell's name stays as it is."""
    from ascend_lab.ascendc.errors import display_path
    kernel_h = ASCENDC.parent / "ops" / "relu_grad" / "op_kernel" / "experimental" / "relu_grad.h"
    monkeypatch.chdir(tmp_path)
    assert display_path(str(kernel_h)) == "ascend_lab/ops/relu_grad/op_kernel/experimental/relu_grad.h"
    mine = tmp_path / "k" / "my_kernel.cpp"
    assert display_path(str(mine)) == "k/my_kernel.cpp"
    assert display_path("<ascendc cell 3>") == "<ascendc cell 3>"

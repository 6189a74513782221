"""``Compare`` (tensor-tensor) and ``CompareScalar``: the bit-masks, bit for bit, against a numpy oracle.

Facts (shared/reference/ascendc_facts.md §1.5, API table): bit i of the little-endian byte stream of the
uint8 mask is ``src0[i] <mode> src1[i]`` (or ``<mode> scalar``), CMPMODE values LT=0, GT=1, EQ=2, LE=3, GE=4,
NE=5; only whole 256-byte repeats are computed, the mask bits of a trailing partial repeat keep their
stale values; a NaN operand makes every comparison false except NE (IEEE). The cost is the GE-ATT row of
the instruction (Part 2 §2.5), ``b + k * n``.

Each case runs a small kernel on one simulated core: copy both operands in, compare into a mask buffer
that was first filled with a stale pattern, copy the mask out with DataCopyPad.
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab.ascendc import (
    CMPMODE,
    VECCALC,
    VECIN,
    Compare,
    CompareScalar,
    DataCopy,
    DataCopyPad,
    DataCopyParams,
    Duplicate,
    GlobalTensor,
    PipeBarrier,
    TBuf,
    TPipe,
    TQue,
    launch,
    ub_banks,
    uint8_t,
)
from ascend_lab.ascendc.cost_model import VECTOR_COST, compare_row
from ascend_lab.base.platform import get_soc
from ascend_lab.ops.common.kernel_args import gm_from_array

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
STALE = 0xA5                                       # the mask buffer's bytes before the compare
RNG = np.random.default_rng(20260823)
ORACLE = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
          CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


def k_compare(a, b, out, workspace, tiling, *, dtype, n, count, mode, scalar):
    pipe = TPipe()
    qa, qb = TQue(VECIN, 1, name="inQueueA"), TQue(VECIN, 1, name="inQueueB")
    mask = TBuf(VECCALC, name="maskBuf")
    pipe.InitBuffer(qa, 1, n * dtype.itemsize)
    pipe.InitBuffer(qb, 1, n * dtype.itemsize)
    pipe.InitBuffer(mask, n // 8)
    ga, gb, go = GlobalTensor(dtype), GlobalTensor(dtype), GlobalTensor(uint8_t)
    ga.SetGlobalBuffer(a, n)
    gb.SetGlobalBuffer(b, n)
    go.SetGlobalBuffer(out, n // 8)
    ta, tb = qa.AllocTensor(dtype), qb.AllocTensor(dtype)
    DataCopy(ta, ga, n)
    DataCopy(tb, gb, n)
    qa.EnQue(ta)
    qb.EnQue(tb)
    ta, tb = qa.DeQue(dtype), qb.DeQue(dtype)
    m = mask.Get(uint8_t)
    Duplicate(m.ReinterpretCast(np.int16), np.int16(STALE * 0x0101 - 0x10000), n // 16)
    if scalar is None:
        Compare(m, ta, tb, mode, count)
    else:
        CompareScalar(m, ta, scalar, mode, count)
    PipeBarrier("PIPE_ALL")                 # the mask is a TBuf, not queued: order V's write before MTE3's copy
    DataCopyPad(go, m, DataCopyParams(1, n // 8, 0, 0))
    qa.FreeTensor(ta)
    qb.FreeTensor(tb)


def operands(dtype: np.dtype, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random values with many exact ties, plus NaN, +-0, +-inf and the extremes in both operands."""
    a = RNG.integers(-4, 5, n).astype(dtype)
    b = RNG.integers(-4, 5, n).astype(dtype)
    special = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, np.finfo(dtype).max, np.finfo(dtype).tiny, 1.5],
                       dtype)
    a[:64] = np.resize(special, 64)
    b[:64] = np.repeat(special, 8)            # every special against every special
    return a, b


def compare(a: np.ndarray, b: np.ndarray, mode: CMPMODE, count: int, scalar=None):
    n = a.size
    args = [gm_from_array(a, "a"), gm_from_array(b, "b"), gm_from_array(None, "out", nbytes=n // 8)]
    run = launch(k_compare, 1, args, b"", get_soc("Ascend910B4"), outputs=(2,), record=True,
                 dtype=a.dtype, n=n, count=count, mode=mode, scalar=scalar)
    mask = args[2].ptr.allocation.buffer[:n // 8].copy()
    return run, mask


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("mode", list(CMPMODE))
def test_compare_whole_repeats_bit_exact(dtype, mode):
    n = 3 * 256 // dtype.itemsize                       # three whole 256-byte repeats
    a, b = operands(dtype, n)
    run, mask = compare(a, b, mode, n)
    want = np.packbits(ORACLE[mode](a, b), bitorder="little")
    assert np.array_equal(mask, want), (mode, np.flatnonzero(mask != want))
    assert not run.warnings
    # NaN compares false except NE (IEEE); the kernel bits say the same
    bits = np.unpackbits(mask, bitorder="little").astype(bool)
    nan = np.isnan(a) | np.isnan(b)
    assert nan.any() and (bits[nan] == (mode == CMPMODE.NE)).all()
    ev = next(e for e in run.trace.events if e.instr == "Compare")
    row = VECTOR_COST[compare_row("Compare", int(mode), n, dtype.itemsize)]     # GE-ATT's row: mode and length
    k, b0 = row["float" if dtype.itemsize == 4 else "half"]
    # the k * n part scales by the beats per repeat the UB bank rules give this layout (A, B read, the mask written)
    at = {buf.name: buf.offset for buf in run.trace.ub_layout[0]}
    bits = dtype.itemsize * 8
    beats = ub_banks.count_form(get_soc("Ascend910B4").npu_arch, 256 // dtype.itemsize, n,
                                ((at["maskBuf"], 1, True), (at["inQueueA[0]"], bits, False),
                                 (at["inQueueB[0]"], bits, False)))
    assert ev.bank_conflicts == beats.conflicts
    assert ev.end - ev.start == pytest.approx(b0 + k * n * beats.per_repeat)
    assert ev.ub[1] - ev.ub[0] == n // 8 and ev.count == n


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("mode", list(CMPMODE))
def test_compare_scalar_whole_repeats_bit_exact(dtype, mode):
    n = 2 * 256 // dtype.itemsize
    a, b = operands(dtype, n)
    for s in (0.0, -0.0, 1.5, np.inf, np.nan):
        _, mask = compare(a, b, mode, n, scalar=s)
        want = np.packbits(ORACLE[mode](a, dtype.type(s)), bitorder="little")
        assert np.array_equal(mask, want), (mode, s)


@pytest.mark.parametrize("scalar", [None, 0.5])
def test_a_partial_repeat_leaves_its_mask_bits_stale(scalar):
    dtype = F32
    per = 256 // dtype.itemsize                          # 64 floats per repeat
    n = 3 * per
    a, b = operands(dtype, n)
    count = 2 * per + 10                                  # two whole repeats and 10 elements more
    run, mask = compare(a, b, CMPMODE.GT, count, scalar=scalar)
    other = b if scalar is None else dtype.type(scalar)
    done = 2 * per // 8
    assert np.array_equal(mask[:done], np.packbits(np.greater(a, other)[:2 * per], bitorder="little"))
    assert (mask[done:] == STALE).all()                  # the partial repeat was not computed
    [w] = run.warnings
    instr = "Compare" if scalar is None else "CompareScalar"
    assert (w.kind, w.instr) == ("partial-repeat", instr)
    assert f"count {count} covers {count * 4} B" in w.message and "the last 10 elements" in w.message

"""The vector mask register (``ascendc.mask``, issue 23 item 1): SetMaskCount / SetMaskNorm / SetVectorMask /
ResetMask, and the mask/repeat form of the instructions that read it.

Expected values are computed here with numpy in the instruction's dtype: which lanes a mask selects (Normal mode:
per repeat; Counter mode: the first n elements, repeats inferred, ``repeatTime`` ignored), where strided operands
live (8 blocks of 32 bytes per repeat, ``blkStride`` blocks apart, repeats ``repStride`` blocks apart), and that
lanes outside the mask keep dst's old value.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ascendc_math import A2, A950, P310, T910A, run_api, same
from test_cxx_frontend import API_KERNEL, PyApi, _events

from ascend_lab.ascendc import (
    CMPMODE,
    MASK_PLACEHOLDER,
    Add,
    BinaryRepeatParams,
    CompareScalar,
    CopyRepeatParams,
    Duplicate,
    KernelError,
    MaskMode,
    ResetMask,
    SetMaskCount,
    SetMaskNorm,
    SetVectorMask,
    UnaryRepeatParams,
    WholeReduceSum,
    cxx,
    launch,
)
from ascend_lab.ascendc import mask as mk
from ascend_lab.ascendc.instructions_reduce import BlockReduceMax
from ascend_lab.ops.common.kernel_args import gm_from_array

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _idx(repeats, per, itemsize, blk_stride, rep_stride):
    blk = 32 // itemsize
    r, lane = np.arange(repeats)[:, None], np.arange(per)[None, :]
    return (r * rep_stride + (lane // blk) * blk_stride) * blk + lane % blk


@pytest.mark.parametrize("dt", [F16, F32])
def test_normal_mode_continuous_mask_keeps_the_other_lanes(dt):
    """Adds, mask 40, 3 repeats: lanes 40.. of every repeat keep dst's old value (-7)."""
    per, repeat = 256 // dt.itemsize, 3
    x = np.random.default_rng(1).uniform(-4, 4, per * repeat).astype(dt)
    got, run = run_api(A2, lambda o, s: (Duplicate(o, -7.0, per * repeat),
                                         mk.with_scalar("Adds", o, s, 1.5, 40, repeat, UnaryRepeatParams())),
                       [x], dt, per * repeat)
    want = np.full(per * repeat, -7, dt).reshape(repeat, per)
    want[:, :40] = (x.reshape(repeat, per) + dt.type(1.5))[:, :40]
    same(got, want.reshape(-1))
    e = [e for e in run.trace.events if e.instr == "Adds"][0]
    assert e.count == repeat * per


def test_normal_mode_bit_mask_and_strided_sources():
    """Mul of half with a bit mask [low, high]; src0 reads every other 32-byte block (src0BlkStride 2), src1's
    repeats 16 blocks apart; dst contiguous."""
    dt, per, repeat = F16, 128, 2
    rng = np.random.default_rng(2)
    a = rng.uniform(-2, 2, 1024).astype(dt)
    b = rng.uniform(-2, 2, 1024).astype(dt)
    words = [0x5555_0000_FFFF_000F, 0x8000_0000_0000_0001]
    on = np.array([(words[i // 64] >> (i % 64)) & 1 for i in range(per)], bool)
    p = BinaryRepeatParams(1, 2, 1, 8, 16, 16)
    got, _ = run_api(A2, lambda o, s0, s1: (Duplicate(o, 0.0, per * repeat),
                                            mk.binary("Mul", o, s0, s1, words, repeat, p)),
                     [a, b], dt, per * repeat)
    ia, ib = _idx(repeat, per, 2, 2, 16), _idx(repeat, per, 2, 1, 16)
    want = np.where(on, a[ia] * b[ib], dt.type(0)).reshape(-1)
    same(got, want)


def test_counter_mode_with_the_register_ignores_repeat_time():
    """SetMaskCount; SetVectorMask<float, COUNTER>(130); Exp<float, false>(..., MASK_PLACEHOLDER, 1, ...): the first
    130 elements (3 repeats, the last partial) -- repeatTime 1 is ignored -- the rest untouched."""
    dt, n = F32, 256
    x = np.random.default_rng(3).uniform(-3, 3, n).astype(dt)

    def call(o, s):
        Duplicate(o, 5.0, n)
        SetMaskCount()
        SetVectorMask(130, dtype=dt, mode=MaskMode.COUNTER)
        mk.unary("Exp", o, s, MASK_PLACEHOLDER, 1, UnaryRepeatParams(), is_set_mask=False)
        SetMaskNorm()
        ResetMask()

    got, run = run_api(A2, call, [x], dt, n)
    want = np.full(n, 5, dt)
    want[:130] = np.exp(x[:130].astype(np.float64)).astype(dt)
    same(got, want)
    assert [e.count for e in run.trace.events if e.instr == "Exp"] == [192]
    assert [e.instr for e in run.trace.events if e.pipe == "S" and "Mask" in e.instr] == [
        "SetMaskCount", "SetVectorMask", "SetMaskNorm", "ResetMask"]


def test_normal_mode_register_mask_reused_by_several_instructions():
    """SetVectorMask(maskHigh, maskLow) once, then two isSetMask=false calls read it; ResetMask restores all lanes."""
    dt, per = F32, 64
    x = np.arange(per * 2, dtype=dt)

    def call(o, s):
        Duplicate(o, 0.0, per * 2)
        SetVectorMask(0, 0xF0F0, dtype=dt)
        mk.with_scalar("Muls", o, s, 2.0, MASK_PLACEHOLDER, 2, UnaryRepeatParams(), is_set_mask=False)
        mk.with_scalar("Adds", o, o, 1.0, MASK_PLACEHOLDER, 2, UnaryRepeatParams(), is_set_mask=False)
        ResetMask()
        mk.Copy(o[per], s, per, 1, CopyRepeatParams(), is_set_mask=True)    # the whole first repeat, to o[64:]

    got, _ = run_api(A2, call, [x], dt, per * 2)
    on = np.array([(0xF0F0 >> i) & 1 for i in range(per)], bool)
    want = np.concatenate((np.where(on, x[:per] * 2 + 1, 0), x[:per])).astype(dt)
    same(got, want)


def test_counter_mode_reductions_infer_their_repeats():
    """WholeReduceSum<float, false> with a count of 100 in Counter mode: two repeats (64 + 36 lanes), one sum each;
    BlockReduceMax<float, false> with 20: three 8-lane blocks, the third with 4 lanes."""
    dt = F32
    x = np.random.default_rng(4).uniform(-10, 10, 128).astype(dt)

    def call(o, s):
        Duplicate(o, -1.0, 16)
        SetMaskCount()
        SetVectorMask(0, 100, dtype=dt)
        WholeReduceSum(o, s, MASK_PLACEHOLDER, 1, 1, 1, 8, is_set_mask=False)
        SetVectorMask(0, 20, dtype=dt)
        BlockReduceMax(o[8], s, 1, MASK_PLACEHOLDER, 1, 1, 8, is_set_mask=False)
        SetMaskNorm()

    got, _ = run_api(A2, call, [x], dt, 16)

    def tree(v):
        v = v.astype(dt)
        while v.size > 1:
            v = v[0::2] + v[1::2]
        return v[0]

    assert got[0] == tree(x[:64]) and got[1] == tree(np.where(np.arange(64) < 36, x[64:128], 0))
    assert list(got[8:11]) == [x[0:8].max(), x[8:16].max(), x[16:20].max()]
    assert (got[11:16] == -1).all() and (got[2:8] == -1).all()       # empty blocks / repeats: nothing written


def test_set_mask_count_is_refused_on_atlas_training():
    with pytest.raises(KernelError) as info:
        run_api(T910A, lambda o, s: SetMaskCount(), [np.ones(64, F32)], F32, 64)
    assert info.value.kind == "unsupported-on-soc" and "SetMaskCount" in str(info.value)


def test_normal_mode_len_out_of_range_says_what_to_do():
    with pytest.raises(ValueError, match="Counter mode"):
        run_api(A2, lambda o, s: SetVectorMask(100, dtype=F32), [np.ones(64, F32)], F32, 64)


CXX_MASK = {
    "counter mode, Add<float, false>": (
        "Duplicate(y, 3.0f, 256);\n    SetMaskCount();\n    SetVectorMask<float, MaskMode::COUNTER>(130);\n"
        "    Add<float, false>(y, x, xb, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});\n    SetMaskNorm();\n"
        "    ResetMask();",
        lambda x, xb, y, t, m: (Duplicate(y, np.float32(3), 256), SetMaskCount(),
                                SetVectorMask(130, dtype=F32, mode=MaskMode.COUNTER),
                                mk.binary("Add", y, x, xb, 0, 1, BinaryRepeatParams(), is_set_mask=False),
                                SetMaskNorm(), ResetMask())),
    "normal mode, a declared UnaryRepeatParams": (
        "Duplicate(y, 0.0f, 256);\n    UnaryRepeatParams rp;\n    rp.srcBlkStride = 2;\n    rp.srcRepStride = 16;\n"
        "    Muls(y, x, 2.0f, 48, 2, rp);",
        lambda x, xb, y, t, m: (Duplicate(y, np.float32(0), 256),
                                mk.with_scalar("Muls", y, x, np.float32(2), 48, 2, UnaryRepeatParams(1, 2, 8, 16)))),
    "counter-mode reduction, Copy": (
        "Duplicate(y, 0.0f, 256);\n    SetMaskCount();\n    SetVectorMask<float>(0, 100);\n"
        "    WholeReduceSum<float, false>(y, x, MASK_PLACEHOLDER, 1, 1, 1, 8);\n"
        "    Copy<float, false>(y[64], xb, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});\n    SetMaskNorm();\n    ResetMask();",
        lambda x, xb, y, t, m: (Duplicate(y, np.float32(0), 256), SetMaskCount(), SetVectorMask(0, 100, dtype=F32),
                                WholeReduceSum(y, x, 0, 1, 1, 1, 8, is_set_mask=False),
                                mk.Copy(y[64], xb, 0, 1, CopyRepeatParams(), is_set_mask=False),
                                SetMaskNorm(), ResetMask())),
}


@pytest.mark.parametrize("name", list(CXX_MASK))
def test_mask_forms_from_cxx_equal_the_python_api(name):
    body, py = CXX_MASK[name]
    rng = np.random.default_rng(7)
    a, b = rng.uniform(-3, 3, 256).astype(np.float32), rng.uniform(-3, 3, 256).astype(np.float32)
    results = []
    for entry in (cxx.compile(API_KERNEL.format(BODY=body)), PyApi(py)):
        out = gm_from_array(None, "y", nbytes=1024)
        run = launch(entry, 1, [gm_from_array(a, "a"), gm_from_array(b, "b"), out], b"", A950, outputs=(2,),
                     record=True)
        results.append((bytes(out.ptr.allocation.buffer[:1024]), _events(run), run.cycles))
    assert results[0] == results[1]
    y = np.frombuffer(results[0][0], np.float32)
    if name.startswith("counter mode"):
        assert (y[:130] == a[:130] + b[:130]).all() and (y[130:] == 3).all()


# --- what a count-form instruction leaves in the register (asc-devkit impl/basic_api @ 82b89a15, see ascendc.mask) ---
#: (SoC, elements a later isSetMask=false Muls with repeatTime 2 computes after SetMaskCount; SetVectorMask(130);
#: count-form Add): A2/A3 and 310P's Add ends SetMaskNorm + all ones (2 full float repeats: 128); the 950's Add is a
#: register loop that never writes the mask register, so Counter mode with 130 is still there.
AFTER_COUNT_FORM = {"A2": (A2, 128), "310P": (P310, 128), "950": (A950, 130)}


@pytest.mark.parametrize("arch", list(AFTER_COUNT_FORM))
def test_count_form_leaves_the_register_as_the_library_does(arch):
    soc, lanes_after = AFTER_COUNT_FORM[arch]
    dt, n = F32, 256
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, n).astype(dt)

    def call(o, s):
        t = s[n]                                        # scratch in the input's second half
        Duplicate(o, 3.0, n)
        SetMaskCount()
        SetVectorMask(130, dtype=dt, mode=MaskMode.COUNTER)
        mk.binary("Add", t, s, s, MASK_PLACEHOLDER, 1, BinaryRepeatParams(), is_set_mask=False)  # mask form: 130
        Add(t, t, s, n)                                 # count form: all 256, then the library's end state
        mk.with_scalar("Muls", o, t, 2.0, MASK_PLACEHOLDER, 2, UnaryRepeatParams(), is_set_mask=False)
        SetMaskNorm()
        ResetMask()

    got, run = run_api(soc, call, [np.concatenate((x, np.zeros(n, dt)))], dt, n)
    t = np.where(np.arange(n) < 130, x + x, 0).astype(dt) + x
    want = np.full(n, 3, dt)
    want[:lanes_after] = t[:lanes_after] * dt.type(2)
    same(got, want)
    assert [e.count for e in run.trace.events if e.instr == "Muls"] == [-(-lanes_after // 64) * 64]


def test_mask_form_and_compare_count_form_leave_the_register_alone():
    """On A2 a mask-form instruction (isSetMask=false) and CompareScalar's count form (vcmpv, no mask write:
    dav_c220 kernel_operator_vec_cmp_impl.h:153-174) keep the kernel's Counter-mode count for the next one."""
    dt, n = F32, 256
    x = np.random.default_rng(12).uniform(-3, 3, n).astype(dt)

    def call(o, s):
        bits = s[n].ReinterpretCast(np.uint8)
        Duplicate(o, 3.0, n)
        SetMaskCount()
        SetVectorMask(0, 100, dtype=dt)
        mk.with_scalar("Adds", o, s, 1.0, MASK_PLACEHOLDER, 1, UnaryRepeatParams(), is_set_mask=False)
        CompareScalar(bits, s, np.float32(0), CMPMODE.GT, n)
        mk.with_scalar("Muls", o, o, 2.0, MASK_PLACEHOLDER, 1, UnaryRepeatParams(), is_set_mask=False)
        SetMaskNorm()
        ResetMask()

    got, _ = run_api(A2, call, [np.concatenate((x, np.zeros(n, dt)))], dt, n)
    want = np.full(n, 3, dt)
    want[:100] = (x[:100] + dt.type(1)) * dt.type(2)
    same(got, want)


CXX_AFTER_COUNT_FORM = (
    "Duplicate(y, 3.0f, 256);\n    SetMaskCount();\n    SetVectorMask<float, MaskMode::COUNTER>(130);\n"
    "    Add(tmp, x, xb, 256);\n    Muls<float, false>(y, tmp, 2.0f, MASK_PLACEHOLDER, 2, {1, 1, 8, 8});\n"
    "    SetMaskNorm();\n    ResetMask();")


@pytest.mark.parametrize("arch", list(AFTER_COUNT_FORM))
def test_count_form_then_register_mask_from_cxx(arch):
    """The same through the C++ front end: a count-form Add after SetMaskCount + SetVectorMask, then Muls<float,
    false> -- 128 elements on A2/A3 and 310P (the Add left Normal, all ones), 130 on the 950; equal to the Python
    API's run (bytes, events, cycles)."""
    soc, lanes_after = AFTER_COUNT_FORM[arch]
    rng = np.random.default_rng(13)
    a, b = rng.uniform(-3, 3, 256).astype(np.float32), rng.uniform(-3, 3, 256).astype(np.float32)
    py = PyApi(lambda x, xb, y, t, m: (
        Duplicate(y, np.float32(3), 256), SetMaskCount(), SetVectorMask(130, dtype=F32, mode=MaskMode.COUNTER),
        Add(t, x, xb, 256), mk.with_scalar("Muls", y, t, np.float32(2), 0, 2, UnaryRepeatParams(), is_set_mask=False),
        SetMaskNorm(), ResetMask()))
    results = []
    for entry in (cxx.compile(API_KERNEL.format(BODY=CXX_AFTER_COUNT_FORM)), py):
        out = gm_from_array(None, "y", nbytes=1024)
        run = launch(entry, 1, [gm_from_array(a, "a"), gm_from_array(b, "b"), out], b"", soc, outputs=(2,),
                     record=True)
        results.append((bytes(out.ptr.allocation.buffer[:1024]), _events(run), run.cycles))
    assert results[0] == results[1]
    want = np.full(256, 3, F32)
    want[:lanes_after] = (a + b)[:lanes_after] * np.float32(2)
    same(np.frombuffer(results[0][0], np.float32), want)

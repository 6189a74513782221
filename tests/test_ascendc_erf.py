"""The high-level ``Erf`` (issue 23 item 2): the library's composition -- a clipped rational function x P(x^2) / Q(x^2)
in float, run in Counter mode over chunks of its temporary buffer, half through a float copy -- against numpy step
by step (each step rounded in float32; the division correctly rounded, as the module doc of instructions_math states
it), against math.erf for accuracy, chunking, the 950's one loop, the 910A refusal, and from C++.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_ascendc_math import A2, A950, P310, T910A, edges, run_api, same
from test_cxx_frontend import API_KERNEL, PyApi, _events

from ascend_lab.ascendc import Erf, KernelError, LocalTensor, cxx, launch
from ascend_lab.ascendc import mask as mk
from ascend_lab.ops.common.kernel_args import gm_from_array

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
P = (0.29639384698e5, 0.50637915060e4, 0.13938061484e4, 0.10162808918e3, 0.75517016694e1, 0.053443748819)
Q = (0.26267224157e5, 0.13243365831e5, 0.30231248150e4, 0.39856963806e3, 0.31212858877e2)


def erf_in_f32(x):
    """erf_common_impl.h's steps in float32 (products and sums rounded by numpy in float32, the division rounded
    once from float64)."""
    f = np.float32
    x = np.clip(x.astype(f), f(-3.92), f(3.92))
    x2 = x * x
    p = x2 * f(P[5])
    for c in P[4:0:-1]:
        p = x2 * (p + f(c))
    p = x * (p + f(P[0]))
    q = x2 + f(Q[4])
    for c in Q[3::-1]:
        q = x2 * q + f(c)
    return (p.astype(np.float64) / q.astype(np.float64)).astype(f)


def round_half_away_f16(y):
    """float32 -> float16, ties away from zero (CAST_ROUND), from numpy's nearest-even and the exact halfway test."""
    a = y.astype(F16)
    up = np.nextafter(a, np.where(y > a.astype(np.float32), np.inf, -np.inf).astype(F16))
    mid = (a.astype(np.float64) + up.astype(np.float64)) / 2
    tie = (mid == y.astype(np.float64)) & (np.abs(up.astype(np.float64)) > np.abs(a.astype(np.float64)))
    return np.where(tie, up, a)


@pytest.mark.parametrize("dt", [F32, F16])
@pytest.mark.parametrize("soc", [A2, P310, A950], ids=["A2", "310P", "950"])
def test_erf_follows_its_composition(dt, soc):
    count = 200 if dt == F32 else 208
    x = edges(dt, count, np.random.default_rng(5), -5, 5)
    with np.errstate(all="ignore"):
        got, run = run_api(soc, lambda o, s: Erf(o, s, count), [x], dt, count)
        y = erf_in_f32(x)
    if dt == F16:
        want = round_half_away_f16(y) if soc is A2 else y.astype(F16)
    else:
        want = y
    same(got, want)
    v = [e.instr for e in run.trace.events if e.pipe == "V"]
    if soc is A950:
        assert v == ["Erf"]
    else:
        body = ["Mins", "Maxs", "Mul", "Muls"] + ["Adds", "Mul"] * 5 + ["Adds"] + ["Mul", "Adds"] * 4 + ["Div"]
        assert v == (["Cast"] + body + ["Cast"] if dt == F16 else body)
        s = [e.instr for e in run.trace.events if e.pipe == "S" and "Mask" in e.instr]
        assert s == ["SetMaskCount", "SetVectorMask", "SetMaskNorm", "ResetMask"]


def test_erf_is_accurate_to_a_few_float_ulps():
    """What the composition buys: against math.erf (float64) the float result is within 4e-7 absolute on [-5, 5]
    (measured here, not assumed: the bound is the assertion)."""
    x = np.linspace(-5, 5, 4096).astype(F32)
    got, _ = run_api(A2, lambda o, s: Erf(o, s, 4096), [x], F32, 4096)
    ref = np.array([math.erf(float(v)) for v in x])
    assert np.abs(got.astype(np.float64) - ref).max() < 4e-7


def test_erf_chunks_by_its_tmp_buffer_in_counter_mode():
    """A 1536-byte sharedTmpBuffer: 384 floats / 3 -> calSize 128; 1000 elements take 7 chunks of 128 and a tail of
    104, each Div over whole repeats of the chunk (Counter mode: 2 repeats of 64)."""
    n = 1000
    x = np.linspace(-4, 4, n).astype(F32)

    got, run = run_api(A2, lambda o, s: Erf(o, s, _tmp(o.ctx, 1536), n), [x], F32, n)
    same(got, erf_in_f32(x))
    divs = [e.count for e in run.trace.events if e.instr == "Div"]
    assert divs == [128] * 7 + [128]                   # the tail's 104 elements: 2 repeats of 64 lanes
    lanes = [e.detail for e in run.trace.events if e.instr == "Div"][-1]
    assert "104 lanes" in lanes


def _tmp(ctx, nbytes):
    """A sharedTmpBuffer of ``nbytes`` in the UB the kernel's TPipe left free (where the library's stack buffer is)."""
    start = -(-ctx.ub_top // 32) * 32
    return LocalTensor(ctx, np.uint8, start, nbytes, "tmp")


def test_erf_leaves_the_register_normal_and_full():
    """After Erf (Counter mode inside), an isSetMask=false Normal-mode instruction sees all lanes again."""
    x = np.linspace(-1, 1, 64).astype(F32)

    def call(o, s):
        Erf(o, s, 64)
        mk.with_scalar("Adds", o, o, 1.0, mk.MASK_PLACEHOLDER, 1, mk.UnaryRepeatParams(), is_set_mask=False)

    got, _ = run_api(A2, call, [x], F32, 64)
    same(got, erf_in_f32(x) + np.float32(1))


def test_erf_refused_on_atlas_training_and_with_a_tiny_buffer():
    x = np.ones(64, F32)
    with pytest.raises(KernelError) as info:
        run_api(T910A, lambda o, s: Erf(o, s, 64), [x], F32, 64)
    assert info.value.kind == "unsupported-on-soc" and "Erf" in str(info.value)
    with pytest.raises(ValueError, match="calSize == 0"):
        run_api(A2, lambda o, s: Erf(o, s, _tmp(o.ctx, 256), 64), [x], F32, 64)


@pytest.mark.parametrize("body, py", [
    ("Erf(y, x, 256);", lambda x, xb, y, t, m: Erf(y, x, 256)),
    ("Erf(y, x, tmp.ReinterpretCast<uint8_t>(), 256);", lambda x, xb, y, t, m: Erf(y, x, t.ReinterpretCast(np.uint8),
                                                                                     256)),
], ids=["stack buffer", "sharedTmpBuffer"])
def test_erf_from_cxx_equals_the_python_api(body, py):
    a = np.random.default_rng(9).uniform(-4, 4, 256).astype(np.float32)
    results = []
    for entry in (cxx.compile(API_KERNEL.format(BODY=body)), PyApi(py)):
        out = gm_from_array(None, "y", nbytes=1024)
        run = launch(entry, 1, [gm_from_array(a, "a"), gm_from_array(a, "b"), out], b"", A2, outputs=(2,),
                     record=True)
        results.append((bytes(out.ptr.allocation.buffer[:1024]), _events(run), run.cycles))
    assert results[0] == results[1]
    same(np.frombuffer(results[0][0], np.float32), erf_in_f32(a))

"""A complex64 ``out`` through the convenience layer: what each aclnn API does with it, and that a status code comes
back in the Run instead of an exception.

* aclnnHardsigmoidBackward checks out's dtype only with ``CanCast(PromoteType(gradOutput, self), out)``
  (ops-nn ``activation/hard_sigmoid_grad/op_api/aclnn_hardsigmoid_backward.cpp``, CheckDtypeValid); ``CanCast``
  refuses complex -> real, floating -> integral and non-bool -> bool only (opbase ``opdev/data_type_utils.h``;
  cann_facts §7), so FLOAT -> COMPLEX64 passes. The graph's final ``l0op::Cast`` finds the pair in the AI CPU list
  (in the AI Core list too on the 950 for f32/bf16; ops-math ``math/cast/op_api/cast.cpp``), and the AI CPU kernel
  writes ``static_cast<std::complex<float>>(value)``: the result with a +0 imaginary part
  (``op_kernel_aicpu/cast_aicpu.cpp``). Status 0.
* aclnnThresholdBackward wants out's dtype equal to self's (``OP_CHECK_DTYPE_NOT_MATCH``; cann_facts §3.2):
  161002, nothing launched, the caller's array untouched.

Expected values come from ``ascend_lab.golden`` (the kernel's oracle, then ``golden.cast`` to complex64).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_bits_equal, oracle_of

import ascend_lab as al
from ascend_lab import golden

C64 = np.dtype(np.complex64)
INVALID = 161002
SOCS = ["Ascend910A", "Ascend910B4", "Ascend310P3", "Ascend950PR"]
RNG = np.random.default_rng(2024)


def _inputs(dtype) -> tuple[np.ndarray, np.ndarray]:
    g = RNG.uniform(-5, 5, (4, 33)).astype(np.float32).astype(dtype)
    x = RNG.uniform(-5, 5, (4, 33)).astype(np.float32)
    x[:, :3] = (-3.0, 3.0, 0.0)                      # the band's edges and its middle
    return g, x.astype(dtype)


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_hardsigmoid_backward_writes_a_complex64_out(soc, dtype):
    g, x = _inputs(dtype)
    out = np.full(g.shape, 9 - 9j, C64)
    run = al.hardsigmoid_backward(g, x, soc=soc, out=out)
    assert isinstance(run, al.Run)
    assert (run.status, run.ok) == (0, True), run.explain()
    assert run.graph[-2:] == ["Cast", "ViewCopy"]
    assert run.out is not None and run.out.dtype == C64
    _, oracle = oracle_of(run)
    want = golden.cast(oracle(g, x), C64)
    assert_bits_equal(run.out, want)
    assert_bits_equal(out, want, "the caller's array")
    assert (out.imag == 0).all() and not np.signbit(out.imag).any()
    assert (out.real != 0).any() and (out.real == 0).any()   # inside and outside the band both met


def test_hardsigmoid_backward_out_dtype_complex64_allocates_one():
    g, x = _inputs(np.float32)
    run = al.hardsigmoid_backward(g, x, soc="Ascend910B4", out_dtype=np.complex64)
    assert run.status == 0 and run.out.dtype == C64
    _, oracle = oracle_of(run)
    assert_bits_equal(run.out, golden.cast(oracle(g, x), C64))


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("threshold", [0.0, 1.0])           # ReluGrad and ThresholdGradV2D alike
def test_threshold_backward_refuses_a_complex64_out_with_a_status(soc, threshold):
    g, x = _inputs(np.float32)
    out = np.full(g.shape, 9 - 9j, C64)
    run = al.threshold_backward(g, x, threshold, soc=soc, out=out)    # a status code, not an exception
    assert isinstance(run, al.Run)
    assert (run.status, run.ok) == (INVALID, False)
    assert run.graph == [] and run.kernel is None and run.cycles == 0
    assert any("out dtype COMPLEX64" in m and "self dtype FLOAT" in m for m in run.messages), run.messages
    assert "ACLNN_ERR_PARAM_INVALID (161002)" in run.explain()
    assert (out == 9 - 9j).all()                                      # nothing written


def test_golden_cast_to_complex_is_the_real_value_and_a_positive_zero():
    x = np.array([1.5, -0.0, np.inf, -np.inf, 2.0**-149, 65504.0], np.float32)
    for src, dst in ((np.float32, np.complex64), (np.float16, np.complex64), (np.float32, np.complex128)):
        y = golden.cast(x.astype(src), dst)
        assert y.dtype == np.dtype(dst)
        np.testing.assert_array_equal(y.real, x.astype(src).astype(y.real.dtype))
        assert np.signbit(y.real[1]) and not np.signbit(y.imag).any() and (y.imag == 0).all()
    nan = golden.cast(np.array([np.nan], np.float32), np.complex64)
    assert np.isnan(nan.real).all() and nan.imag[0] == 0
    assert golden.cast(np.array([0.1]), np.complex64).real[0] == np.float32(0.1)     # f64 -> f32: nearest even
    with pytest.raises(ValueError, match="CAST_NONE or CAST_RINT"):
        golden.cast(x, np.complex64, "CAST_TRUNC")
    with pytest.raises(TypeError, match="not modelled"):
        golden.cast(np.zeros(2, np.complex64), np.float32)                             # complex -> real: no

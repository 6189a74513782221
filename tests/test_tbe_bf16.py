"""TBE's bf16 wrapper (``register_operator_compute(..., support_bfp16=True)``) as one mechanism of the TBE model.

From CANN 8.1.RC1 ``python/site-packages/tbe/common/register/operation_func_mgr.py``: when the keyword is given,
``cast_in_to_fp32`` casts every bf16 tensor argument to fp32 if the SoC's ``tbe.dsl.vadd`` has no bfloat16 and its
``Intrinsic_vconv`` has ``bf162f32`` (910B, 910_93: ``DSL_CHECK_SUPPORT_MAP["vadd"]`` lists no bfloat16, the inis list
bf162f32), the compute runs on fp32, and ``cast_res_to_bf16`` rounds each result whose output dict says bfloat16 back
(``tbe.round``: half to even). ThresholdGradV2D and ReluGrad declare it; HardSigmoidGrad does not (its compute
casts bf16 itself). ReluGrad's compute then sees fp32 and, with ``tik.vcopy``, takes ``vsel(vcmp(x, 0, 'le'), 0, g)``.
The expected values below are written from those rules, not read from the simulator.
"""

from __future__ import annotations

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import golden
from ascend_lab.dtypes import bfloat16
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import tbe as hsg
from ascend_lab.ops.relu_grad.op_kernel import tbe as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import tbe as tg
from ascend_lab.standalone import run_kernel
from ascend_lab.tbe import dsl

BF16_SOCS = ("Ascend910B4", "Ascend910_9392")
GRAD = np.array([3.0, np.inf, -2.0, 3.0, 5.0], dtype=np.float32).astype(bfloat16)
X = np.array([np.nan, -1.0, -1.0, 1e-39, 2.0], dtype=np.float32).astype(bfloat16)
#: vsel(vcmp(x, 0, 'le'), 0, g) in fp32: NaN <= 0 is false (g), -1 <= 0 (the constant +0), the bf16 subnormal 1e-39
#: is > 0 (g), 2 (g); rounded back to bf16 exactly.
EXPECTED = np.array([3.0, 0.0, 0.0, 3.0, 5.0], dtype=np.float32).astype(bfloat16)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint16)


def test_the_example_bf16_is_a_subnormal():
    assert 0 < float(X[3]) < 2.0**-126                 # bf16 has fp32's exponent: 1e-39 stays a subnormal


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_relu_grad_bf16_takes_the_fp32_vsel_path(soc):
    r = al.threshold_backward(GRAD, X, 0.0, soc=soc)
    assert r.status == 0 and r.kernel == "tbe" and "ReluGrad" in r.graph
    np.testing.assert_array_equal(_bits(r.out), _bits(EXPECTED))          # +0, not -0; 3, not NaN or a fraction
    _, out = run_kernel("relu_grad", GRAD, X, soc=soc, kernel="tbe")
    np.testing.assert_array_equal(_bits(out), _bits(EXPECTED))


def test_golden_oracle_follows_the_wrapper():
    np.testing.assert_array_equal(_bits(golden.relu_grad_legacy_tbe(GRAD, X, vcopy=True)), _bits(EXPECTED))
    # without tik.vcopy the fp32 min/max/mul mask: NaN x -> NaN, inf * 0 -> NaN, -2 * 0 -> -0, 3 * 2^-126-ish mask
    out = golden.relu_grad_legacy_tbe(GRAD, X, vcopy=False).astype(np.float32)
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == 0 and np.signbit(out[2]) and 0 < out[3] < 3


@pytest.mark.parametrize("soc", BF16_SOCS)
def test_one_mechanism_for_every_op_that_declares_it(soc):
    with dsl.compile_for(soc):
        assert dsl.api_check_support("tbe.dsl.vadd", "bfloat16") is False
        assert dsl.intrinsic_check_support("Intrinsic_vconv", "bf162f32") is True
        rg_ops = [(t.op, t.dtype) for t in rg.describe("bfloat16").nodes]
        tg_ops = [(t.op, t.dtype) for t in tg.describe("bfloat16", threshold=0.5).nodes]
        hs_ops = [(t.op, t.dtype) for t in hsg.describe("bfloat16").nodes]
    wrapped = [("cast", "float32"), ("cast", "float32"), ("vcmp", "uint1"), ("vsel", "float32"), ("round", "bfloat16")]
    assert rg_ops[2:] == wrapped and tg_ops[2:] == wrapped
    assert rg.relu_grad_compute.support_bfp16 and tg.threshold_grad_v2_d_compute.support_bfp16
    assert not hasattr(hsg.hard_sigmoid_grad_compute, "support_bfp16")      # HSG casts bf16 in its own compute
    assert ("vcmpsel", "float32") in hs_ops and hs_ops[-1] == ("round", "bfloat16")


def test_no_wrapper_cast_without_a_bf16_vconv():
    """On 910A the ini's vconv has no bf162f32: the wrapper leaves bf16 alone, ReluGrad's own bf16 branch casts and,
    its dtype being bf16 (not fp16/fp32), takes the min/max/mul mask."""
    with dsl.compile_for("Ascend910A"):
        assert dsl.intrinsic_check_support("Intrinsic_vconv", "bf162f32") is False
        ops = [t.op for t in rg.describe("bfloat16").nodes]
    assert ops[2:4] == ["cast", "cast"] and "vmin" in ops and "vsel" not in ops and ops[-1] == "round"


def test_wrapper_rules():
    with dsl.compile_for("Ascend910B4"):
        @dsl.register_operator_compute("Probe", support_bfp16=False)       # the keyword's presence decides
        def probe(a, b, out=None):
            return dsl.vmul(a, b)

        @dsl.register_operator_compute("Plain")
        def plain(a, b, out):
            return dsl.vmul(a, b)

        a, b = dsl.placeholder((4,), "bfloat16", "a"), dsl.placeholder((4,), "bfloat16", "b")
        res = probe(a, b, {"dtype": "bfloat16"})
        assert (res.op, res.dtype) == ("round", "bfloat16") and res.inputs[0].op == "vmul"
        assert res.inputs[0].inputs[0].op == "cast" and res.inputs[0].dtype == "float32"
        # no output dict: nothing names the output, so the fp32 result is returned as it is
        assert probe(a, b).dtype == "float32"
        # an fp16 result whose output is bf16 goes through fp32 first
        h = dsl.placeholder((4,), "float16", "h")
        res16 = probe(h, h, {"dtype": "bfloat16"})
        assert [res16.op, res16.inputs[0].op, res16.inputs[0].dtype] == ["round", "cast", "float32"]
        assert plain is not None and not hasattr(plain, "support_bfp16")
        with pytest.raises(TypeError):                  # unwrapped: vmul has no bf16
            plain(a, b, {"dtype": "bfloat16"})

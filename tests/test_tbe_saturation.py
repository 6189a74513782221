"""Issue 24 item 2: the non-IEEE vector mode of Ascend910A and Ascend310P is flagged, not guessed.

The sources: ``util_soc_common.support_inf_nan()`` (CANN 8.1.RC1 ``impl/util/util_soc_common.py``) is False for
Short_SoC_version Ascend310, Ascend910, Ascend610, Ascend310P; the runtime docs (``aclrtFloatOverflowMode``) say those
products support only the saturation mode, which "converts the calculation result of Inf to a maximum value and the
calculation result of NaN to 0" -- a rule for results that overflow, silent on what the compares, selects, min/max and
multiplies produce for inf or NaN *operands*. So every run on those SoCs whose kernel inputs hold inf or NaN carries a
warning in ``run.messages`` saying the simulated result follows IEEE 754 and the device's is not documented; runs on
SoCs with the INF/NaN mode, and runs without inf/NaN, carry none.
"""

from __future__ import annotations

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab.base.platform import get_soc
from ascend_lab.dtypes import bfloat16

NO_INF_NAN = ("Ascend310", "Ascend910", "Ascend610", "Ascend310P")
SOCS = ("Ascend910A", "Ascend310P3", "Ascend910B4", "Ascend910_9392", "Ascend950PR")
#: the short SoC version each catalogue SoC has in its CANN 8.1.RC1 ini
SHORT = {"Ascend910A": "Ascend910", "Ascend310P3": "Ascend310P", "Ascend910B4": "Ascend910B",
         "Ascend910_9392": "Ascend910_93", "Ascend950PR": "Ascend910_95"}


def _warnings(run):
    return [m for m in run.messages if m.startswith("[WARNING]") and "saturation mode" in m]


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_warned_exactly_on_the_socs_without_inf_nan_mode(soc, dt):
    saturating = SHORT[soc] in NO_INF_NAN
    assert get_soc(soc).inf_nan_mode is not saturating
    finite = np.array([1.0, -2.0, 0.5], dt)
    for special in (np.nan, np.inf, -np.inf):
        x = np.array([special, 1.0, -1.0], dt)
        for run in (al.threshold_backward(finite, x, 0.5, soc=soc), al.threshold_backward(x, finite, 0.0, soc=soc),
                    al.hardsigmoid_backward(finite, x, soc=soc)):
            assert run.status == 0
            w = _warnings(run)
            assert len(w) == (1 if saturating else 0), (soc, special, run.messages)
            if saturating:
                assert soc in w[0] and "IEEE 754" in w[0] and "not documented" in w[0]
    for run in (al.threshold_backward(finite, finite, 0.5, soc=soc), al.hardsigmoid_backward(finite, finite, soc=soc)):
        assert _warnings(run) == []


def test_the_warning_names_the_inputs():
    g = np.array([np.inf, 1.0], np.float32)
    x = np.array([np.nan, 1.0], np.float32)
    (w,) = _warnings(al.threshold_backward(g, x, 0.5, soc="Ascend910A"))
    assert "input_gradient and input_feature hold inf or NaN" in w
    (w,) = _warnings(al.threshold_backward(np.ones(2, np.float32), x, 0.0, soc="Ascend310P3"))
    assert "features holds inf or NaN" in w and "Ascend310P" in w


def test_integers_and_bf16_socs():
    i = np.array([1, -2, 3], np.int32)
    assert _warnings(al.threshold_backward(i, i, 0.5, soc="Ascend910A")) == []
    b = np.array([np.nan, 1.0], np.float32).astype(bfloat16)
    assert _warnings(al.threshold_backward(b, b, 0.5, soc="Ascend910B4")) == []

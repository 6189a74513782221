"""The per-SoC platform facts the legacy TBE kernels branch on, against the CANN 8.1.RC1 toolkit (public copy:
github leideng/CANN-8.1.RC1, ``Ascend/ascend-toolkit/8.1.RC1/``), and what follows from them.

The expected values below are written from the sources, not read from the simulator:

* each ``data/platform_config/<SoC>.ini`` ([version] Short_SoC_version, [SoCInfo] ai_core_cnt / vector_core_cnt,
  [AICoreSpec] cube_freq / ub_size, [AICoreintrinsicDtypeMap] Intrinsic_vcopy and Intrinsic_vconv's bf162f32);
* ``opp/built-in/op_impl/ai_core/tbe/impl/util/util_soc_common.py`` ``support_inf_nan()``: False for
  Short_SoC_version in (Ascend310, Ascend910, Ascend610, Ascend310P);
* ``python/site-packages/tbe/dsl/compute/util.py`` ``DSL_CHECK_SUPPORT_MAP``: "vadd" has no bfloat16 on any of these
  SoCs, "vcmpsel" has float32 on all of them;
* the kernels (``impl/dynamic/threshold_grad_v2_d.py:95-99``, ``relu_grad.py:127-139``): with ``tik.vcopy``
  ``vsel(vcmp(x, thr, 'le'), 0, g)``, without it ThresholdGradV2D ``vcmpsel(x, thr, 'gt', g, 0)`` and ReluGrad the
  min/max/mul mask.
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab import golden
from ascend_lab.base.platform import get_soc
from ascend_lab.ops.relu_grad.op_kernel import tbe as rg
from ascend_lab.ops.threshold_grad_v2_d.op_kernel import tbe as tg
from ascend_lab.standalone import run_kernel
from ascend_lab.tbe import dsl

#: name: (ini, Short_SoC_version, cores the tilings use, cube_freq MHz, ub_size, Intrinsic_vcopy, vconv bf162f32)
INI = {
    "Ascend910A": ("Ascend910A.ini", "Ascend910", 32, 1000, 262144, False, False),
    "Ascend910B1": ("Ascend910B1.ini", "Ascend910B", 48, 1850, 196608, True, True),
    "Ascend910B2": ("Ascend910B2.ini", "Ascend910B", 48, 1800, 196608, True, True),
    "Ascend910B3": ("Ascend910B3.ini", "Ascend910B", 40, 1800, 196608, True, True),
    "Ascend910B4": ("Ascend910B4.ini", "Ascend910B", 40, 1500, 196608, True, True),
    "Ascend910_9392": ("Ascend910_9392.ini", "Ascend910_93", 48, 1850, 196608, True, True),
    "Ascend310P3": ("Ascend310P3.ini", "Ascend310P", 8, 1060, 262144, False, False),
    "Ascend950PR": ("Ascend910_95.ini", "Ascend910_95", 64, 1650, 253952, True, True),
}
#: util_soc_common.support_inf_nan(): the Short_SoC_versions without the INF/NaN mode.
NO_INF_NAN = ("Ascend310", "Ascend910", "Ascend610", "Ascend310P")
TBE_SOCS = [s for s in INI if s != "Ascend950PR"]


@pytest.mark.parametrize("name", list(INI))
def test_catalogue_cites_the_ini(name):
    ini, short, cores, freq, ub, vcopy, bf16_conv = INI[name]
    soc = get_soc(name)
    assert (soc.ini, soc.short_soc_version, soc.vector_core_num, soc.clock_mhz, soc.ub_size) == (
        ini, short, cores, freq, ub)
    assert soc.intrinsic_check_support("Intrinsic_vcopy") is vcopy
    assert soc.intrinsic_check_support("Intrinsic_vcopy", "float32") is vcopy
    assert soc.intrinsic_check_support("Intrinsic_vconv", "bf162f32") is bf16_conv
    assert soc.intrinsic_check_support("Intrinsic_vconv", "f162f32") is True      # every ini lists it
    assert soc.inf_nan_mode is (short not in NO_INF_NAN)
    with pytest.raises(ValueError, match="does not record"):
        soc.intrinsic_check_support("Intrinsic_vexp")


def test_310p3_clock_is_the_ini_cube_freq():
    assert get_soc("Ascend310P3").clock_mhz == 1060


@pytest.mark.parametrize("name", TBE_SOCS)
def test_api_check_support_per_soc(name):
    _, short, _, _, _, vcopy, bf16_conv = INI[name]
    with dsl.compile_for(name):
        assert dsl.api_check_support("tik.vcopy") is vcopy
        assert dsl.after_v200() is vcopy
        assert dsl.api_check_support("tbe.dsl.vcmpsel", "float32") is True
        assert dsl.api_check_support("tbe.dsl.vcmpsel", "float16") is True
        assert dsl.api_check_support("tbe.dsl.vadd", "bfloat16") is False
        assert dsl.api_check_support("tbe.dsl.vadd", "float32") is True
        assert dsl.intrinsic_check_support("Intrinsic_vconv", "bf162f32") is bf16_conv
        with pytest.raises(ValueError, match="not modelled"):
            dsl.api_check_support("tbe.dsl.vexp", "float32")
    assert dsl.has_vcopy(name) is vcopy


@pytest.mark.parametrize("name", TBE_SOCS)
def test_descriptions_follow_the_ini(name):
    vcopy = INI[name][5]
    with dsl.compile_for(name):
        tg_ops = {t.op for t in tg.describe("float32").nodes}
        for dt in ("float16", "float32"):
            rg_ops = {t.op for t in rg.describe(dt).nodes}
            assert ("vsel" in rg_ops) is vcopy and ("vmin" in rg_ops) is not vcopy
    assert ("vsel" in tg_ops) is vcopy and ("vcmpsel" in tg_ops) is not vcopy


def test_310p_takes_the_910a_paths():
    """310P has no Intrinsic_vcopy: a NaN feature gives 0 in ThresholdGradV2D (vcmpsel 'gt'), and ReluGrad fp16/fp32
    multiplies by the min/max mask (x <= 0 gives g * 0: NaN for an inf g, -0 for a negative g), as on 910A."""
    g = np.array([1.0, np.inf, -2.0, 5.0, 7.0], dtype=np.float32)
    x = np.array([np.nan, -1.0, -1.0, 3.0, 2.0**-127], dtype=np.float32)
    for dt in (np.float32, np.float16):
        gd, xd = g.astype(dt), x.astype(dt)
        _, a = run_kernel("threshold_grad_v2_d", gd, xd, soc="Ascend310P3", kernel="tbe", threshold=0.0)
        _, b = run_kernel("threshold_grad_v2_d", gd, xd, soc="Ascend910A", kernel="tbe", threshold=0.0)
        np.testing.assert_array_equal(a, b)
        assert a[0] == 0                                                     # NaN feature -> 0
        np.testing.assert_array_equal(a, golden.threshold_grad_v2_d_legacy_tbe(gd, xd, 0.0, vcopy=False))
        _, r = run_kernel("relu_grad", gd, xd, soc="Ascend310P3", kernel="tbe")
        _, r_a = run_kernel("relu_grad", gd, xd, soc="Ascend910A", kernel="tbe")
        np.testing.assert_array_equal(r.view(f"u{r.itemsize}"), r_a.view(f"u{r.itemsize}"))
        assert np.isnan(r[1]) and np.signbit(r[2]) and r[2] == 0
        ref = golden.relu_grad_legacy_tbe(gd, xd, vcopy=False)
        np.testing.assert_array_equal(np.isnan(r), np.isnan(ref))
        np.testing.assert_array_equal(r[~np.isnan(r)], ref[~np.isnan(ref)])
    # the 910B kernel on the same inputs: vsel passes the NaN feature's gradient and gives +0
    _, rb = run_kernel("relu_grad", g, x, soc="Ascend910B4", kernel="tbe")
    assert rb[0] == 1.0 and rb[1] == 0 and not np.signbit(rb[2])

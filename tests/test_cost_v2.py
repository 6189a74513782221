"""Issue 24 item 7: the Ascend950 is costed with GE-ATT's V2 table, every other SoC with V1.

The source figures are typed below from hicann/ge@3d7dd1d40a5e
``compiler/graph/optimize/autofuse/v35/att/api_perf_register/perf_param_v2.cpp`` (``kParamV2Info``, in GE-ATT's own
row and type names; the file is the same at 74573e24c43f), and its head constants: op head 0 (``GetOpHeadCost``),
MTE2 pipe head 1174.3 when the largest Load block is >= 256 bytes, else 775 (``GetMTE2PipeHead``), Load/Store
LoadStoreFunc ``h`` = 160. GE-ATT registers this table for platform "3510" (``v35/optimize/platformv2.cpp``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab import standalone as sa
from ascend_lab.ascendc import cost_model as cm
from ascend_lab.base.platform import get_soc, socs

#: kParamV2Info, GE-ATT row -> {type key: (k, b)}, for the rows the simulator's instructions use.
V2_SOURCE: dict[str, dict[str, tuple[float, float]]] = {
    "Muls": {"float16tofloat16": (0.0071, 23.1006), "float32tofloat32": (0.0142, 23.0966),
             "int32toint32": (0.0180, 20.7457)},
    "Adds": {"float16tofloat16": (0.0071, 22.0938), "float32tofloat32": (0.0141, 22.0936)},
    "Mul": {"float16tofloat16": (0.0110, 23.1243), "float32tofloat32": (0.0206, 23.2291)},
    "Add": {"float16tofloat16": (0.0103, 22.2173), "float32tofloat32": (0.0206, 23.2225)},
    "Maxs": {"float16tofloat16": (0.0071, 20.0912), "float32tofloat32": (0.0141, 20.0887)},
    "Mins": {"float16tofloat16": (0.0071, 20.0896), "float32tofloat32": (0.0142, 20.0876)},
    "Max": {"float16tofloat16": (0.0111, 20.1200), "float32tofloat32": (0.0215, 20.1333)},
    "Min": {"float16tofloat16": (0.0111, 20.1104), "float32tofloat32": (0.0215, 20.1271)},
    "Duplicate": {"float16tofloat16": (0.0078, 16.9993), "float32tofloat32": (0.0156, 16.9965)},
    "Select": {"float16tofloat16": (0.0118, 45.9656), "float32tofloat32": (0.0229, 43.9906)},
    "Ub2ub": {"float16tofloat16": (0.0076, 11.6372), "float32tofloat32": (0.0152, 11.6372)},
    "Copy": {"float16tofloat16": (0.0078, 13.0049), "float32tofloat32": (0.0157, 12.9966)},
    "CompareScalarEQ": {"float16tofloat16": (0.0084, 21.9204), "float32tofloat32": (0.0160, 21.9749)},
    "CompareScalarGE": {"float16tofloat16": (0.0086, 21.9025), "float32tofloat32": (0.0161, 21.9643)},
    "CompareScalarGT": {"float16tofloat16": (0.0084, 21.9200), "float32tofloat32": (0.0160, 21.9712)},
    "CompareScalarLE": {"float16tofloat16": (0.0084, 21.9210), "float32tofloat32": (0.0161, 21.9722)},
    "CompareScalarNE": {"float16tofloat16": (0.0084, 21.9114), "float32tofloat32": (0.0161, 22.9690)},
    "CompareScalarLT": {"float16tofloat16": (0.0084, 21.9381), "float32tofloat32": (0.0161, 22.9860)},
    "CompareEQAligned": {"float16tofloat16": (0.0155, 21.0340), "float32tofloat32": (0.0310, 21.0316)},
    "CompareEQUnaligned": {"float16tofloat16": (0.0081, 21.0340), "float32tofloat32": (0.0157, 21.0316)},
    "CompareGEAligned": {"float16tofloat16": (0.0155, 21.0279), "float32tofloat32": (0.0310, 21.0309)},
    "CompareGEUnaligned": {"float16tofloat16": (0.0079, 21.0279), "float32tofloat32": (0.0156, 21.0309)},
    "CompareGTAligned": {"float16tofloat16": (0.0160, 20.9711), "float32tofloat32": (0.0310, 21.0319)},
    "CompareGTUnaligned": {"float16tofloat16": (0.0114, 20.9711), "float32tofloat32": (0.0157, 21.0319)},
    "CompareLEAligned": {"float16tofloat16": (0.0155, 21.9556), "float32tofloat32": (0.0310, 21.0303)},
    "CompareLEUnaligned": {"float16tofloat16": (0.0080, 21.9556), "float32tofloat32": (0.0158, 21.0303)},
    "CompareLTAligned": {"float16tofloat16": (0.0155, 21.0297), "float32tofloat32": (0.0316, 20.9940)},
    "CompareLTUnaligned": {"float16tofloat16": (0.0079, 21.0297), "float32tofloat32": (0.0173, 20.9940)},
    "CompareNEAligned": {"float16tofloat16": (0.0164, 20.9123), "float32tofloat32": (0.0310, 21.0313)},
    "CompareNEUnaligned": {"float16tofloat16": (0.0115, 20.9123), "float32tofloat32": (0.0156, 21.0313)},
}
V2_CAST = {"float16tofloat32": (0.0147, 20.1204), "float32tofloat16": (0.0087, 20.4393),
           "float16touint8": (0.0083, 19.9408), "uint8tofloat16": (0.0102, 46.512), "int64toint32": (0.0332, 18.8690)}
#: the simulator's row -> GE-ATT's row name where they differ
SIM_TO_GE = {"Copy": "Ub2ub", "VecCopy": "Copy"}
KEY = {"half": "float16tofloat16", "float": "float32tofloat32", "int32": "int32toint32"}


@pytest.mark.parametrize("row", [r for r in cm.VECTOR_COST_V2 if r != "Cast"])
def test_every_v2_row_is_the_source_number(row):
    source = V2_SOURCE[SIM_TO_GE.get(row, row)]
    assert {KEY[c]: v for c, v in cm.VECTOR_COST_V2[row].items()} == source


def test_cast_rows():
    assert cm.VECTOR_COST_V2["Cast"] == {"half": V2_CAST["float16tofloat32"], "float": V2_CAST["float16tofloat32"]}
    assert {f"{s}to{d}": v for (s, d), v in cm.CAST_COST_V2.items()} == V2_CAST


def test_v2_vector_fits_are_v1s():
    """Measured from the two sources: for every instruction the simulator models, V2's fit is V1's to the digit."""
    assert cm.VECTOR_COST_V2 == cm.VECTOR_COST and cm.CAST_COST_V2 == cm.CAST_COST


def test_which_table():
    for name in socs():
        soc = get_soc(name)
        assert cm.ge_att_table(soc.npu_arch) == ("V2" if int(soc.npu_arch) == 3510 else "V1")
        model = cm.CostModel(soc, 8)
        assert model.table == cm.ge_att_table(soc.npu_arch)


def test_copy_latencies_and_heads():
    s950, b4 = get_soc("Ascend950PR"), get_soc("Ascend910B4")
    m950, mb4 = cm.CostModel(s950, 64, 2 / 3), cm.CostModel(b4, 40, 2 / 3)
    assert m950.copy_in(4096) == pytest.approx(160 + 4096 / m950.mte2_b_per_cycle)
    assert m950.copy_out(4096) == pytest.approx(160 + 4096 / m950.mte3_b_per_cycle)
    assert mb4.copy_in(4096) == pytest.approx(27 + 4096 / mb4.mte2_b_per_cycle)
    assert mb4.copy_out(4096) == pytest.approx(12 + 4096 / mb4.mte3_b_per_cycle)
    assert cm.kernel_head_cycles(64, s950, 256) == 1174.3 and cm.kernel_head_cycles(64, s950, 255) == 775.0
    assert cm.kernel_head_cycles(1, s950, 10**6) == 1174.3                       # no per-core term in V2
    assert cm.kernel_head_cycles(40, b4, 256) == 300 + 15.89 * 40 + 882


@pytest.mark.parametrize("op, n, head", [("threshold_grad_v2_d", 100_000, 1174.3), ("hard_sigmoid_grad", 40, 775.0)])
def test_a_950_run_takes_the_v2_head(op, n, head):
    g = np.linspace(-4, 4, n, dtype=np.float32)
    attrs = {"threshold": 0.5} if op == "threshold_grad_v2_d" else {}
    run, _ = sa.run_kernel(op, g, g, soc="Ascend950PR", record=True, **attrs)
    biggest = max(e.nbytes for e in run.trace.events if e.pipe == "MTE2")        # the largest copy-in block
    assert (biggest >= 256) is (head == 1174.3)
    assert run.trace.head_cycles == head


def test_a_changed_v2_row_moves_only_950_runs(monkeypatch):
    g = np.linspace(-4, 4, 5000, dtype=np.float32)

    def cycles(soc):
        run, _ = sa.run_kernel("hard_sigmoid_grad", g, g, soc=soc, record=False)
        return run.trace.microseconds

    before = {s: cycles(s) for s in ("Ascend950PR", "Ascend910B4")}
    rows = {**cm.VECTOR_COST_V2, "Muls": {**cm.VECTOR_COST_V2["Muls"], "float": (5.0, 5000.0)}}
    monkeypatch.setattr(cm, "VECTOR_COST_V2", rows)
    cm.clear_caches()
    try:
        after = {s: cycles(s) for s in before}
    finally:
        monkeypatch.undo()
        cm.clear_caches()
    assert after["Ascend950PR"] > before["Ascend950PR"] and after["Ascend910B4"] == before["Ascend910B4"]

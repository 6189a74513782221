"""Op definitions (op_host/*_def.cpp), infer-shape and per-core work maps (cann_facts §0, §2, §4, §5)."""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.opdev.op_def import Attr, Input, OpDef, Output, infer_shape_same_as_input, soc_family
from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg
from ascend_lab.ops.relu_grad import op_host as relu
from ascend_lab.ops.threshold_grad_v2_d import op_host as tgv2d

# ---------------------------------------------------------------------------------------------------------
# HardSigmoidGrad (§0 table, §1.3, §2.1)


def test_hsg_op_def():
    d = hsg.OP_DEF
    assert d.name == "HardSigmoidGrad"
    assert [i.name for i in d.inputs] == ["grad_output", "self"]
    assert [o.name for o in d.outputs] == ["grad_input"]
    for p in (*d.inputs, *d.outputs):
        assert set(p.dtypes) == {DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16}
        assert set(p.formats) == {"ND"} and len(p.formats) == len(p.dtypes)
        assert p.param_type == "REQUIRED"
    assert d.attr("alpha").default == float(np.float32(0.16666666)) == 0.1666666567325592
    assert d.attr("beta").default == 0.5
    assert d.attr_defaults() == {"alpha": 0.1666666567325592, "beta": 0.5}
    assert d.aicore_configs == ("ascend950",)
    assert d.auto_contiguous


@pytest.mark.parametrize("soc,expected", [
    ("ascend950", True), ("Ascend950PR", True), ("Ascend910_95", True), (3510, True), ("DAV_3510", True),
    ("ascend910b", False), ("Ascend910B4", False), ("Ascend910_9392", False), (2201, False),
    ("Ascend310P3", False), ("Ascend910A", False),
])
def test_hsg_registered_only_for_950(soc, expected):
    assert hsg.OP_DEF.registered_for(soc) is expected


def test_hsg_infer_shape():
    assert hsg.infer_shape((2, 3, 4)) == (2, 3, 4)
    assert hsg.infer_shape(()) == ()
    assert hsg.infer_shape([0, 5]) == (0, 5)
    with pytest.raises(ValueError):
        hsg.infer_shape((2, -1))


def test_hsg_core_ranges_example_65():
    # N=65 on 64 cores: blockFactor 2, 33 cores, the last one gets 1 element (§2.1 example)
    ranges = hsg.core_ranges(hsg.tiling(65, "float16", 64, 253952))
    assert len(ranges) == 33
    assert ranges[0] == {"core": 0, "kind": "big", "offset": 0, "data_num": 2, "tile_num": 1, "tail": 2,
                         "padded_end": 2, "padding": 0, "bytes": 4, "tiles": [(0, 0, 2)]}
    assert ranges[32]["offset"] == 64 and ranges[32]["data_num"] == 1 and ranges[32]["kind"] == "small"


# ---------------------------------------------------------------------------------------------------------
# ThresholdGradV2D (§0 table, §4.1, §4.2)


def test_tgv2d_op_def():
    d = tgv2d.OP_DEF
    assert d.name == "ThresholdGradV2D"
    assert [i.name for i in d.inputs] == ["input_gradient", "input_feature"]
    assert [o.name for o in d.outputs] == ["output_backprops"]
    assert d.dtypes == (DT.ACL_FLOAT16, DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_INT32, DT.ACL_INT8, DT.ACL_UINT8)
    assert d.attr("threshold").default == 1.0 and d.attr("threshold").type == "float"
    assert d.attr("threshold").optional
    assert d.aicore_configs == ("ascend910b",)
    assert d.precision_reduce
    assert d.registered_for("Ascend910B1") and d.registered_for("ascend910b") and d.registered_for(2201)
    assert not d.registered_for("Ascend910_9392")  # ascend910_93 is a separate AddConfig
    assert not d.registered_for("Ascend950PR") and not d.registered_for(3510)


def test_tgv2d_infer_shape():
    assert tgv2d.infer_shape((4, 5)) == (4, 5)
    assert tgv2d.infer_shape((4, 1), (1, 5)) == (4, 5)
    with pytest.raises(ValueError, match="broadcast"):
        tgv2d.infer_shape((4, 2), (3,))


def test_tgv2d_ub_data_number():
    # §4.1: f32/f16 7, int32 8, bf16 10, everything else 14
    dtypes = ("float32", "float16", "int32", "bfloat16", "int8", "uint8")
    assert [tgv2d.ub_data_number(d) for d in dtypes] == [7, 7, 8, 10, 14, 14]
    with pytest.raises(ValueError):
        tgv2d.ub_data_number("int64")


def test_tgv2d_core_ranges_kernel_offsets():
    # §4.1 row 1e6 f16 / 48 AIV: 37 big cores of 20864, then 11 small of 20736
    td = tgv2d.tiling(10**6, "float16", 48, 196608)
    ranges = tgv2d.core_ranges(td, "float16", 10**6)
    assert [r["kind"] for r in ranges] == ["big"] * 37 + ["small"] * 11
    # big: bigCoreDataNum * coreId
    assert ranges[36]["offset"] == 36 * 20864
    # small: big*id - (big - small)*(id - tailBlockNum)
    assert ranges[37]["offset"] == 37 * 20864 and ranges[40]["offset"] == 40 * 20864 - 128 * 3
    assert ranges[40]["tiles"] == [(0, ranges[40]["offset"], 13952), (1, ranges[40]["offset"] + 13952, 6784)]
    assert ranges[40]["bytes"] == 20736 * 2
    last = ranges[-1]
    assert last["padded_end"] == 1000064 and last["padding"] == 64
    assert all(r["padding"] == 0 for r in ranges[:-1])


def test_tgv2d_core_ranges_single_core_is_small():
    td = tgv2d.tiling(100, "float32", 48, 196608)
    (only,) = tgv2d.core_ranges(td, "float32", 100)
    assert only["kind"] == "small" and only["data_num"] == 128 and only["padding"] == 28
    assert "padding" not in tgv2d.core_ranges(td, "float32")[0]


# ---------------------------------------------------------------------------------------------------------
# ReluGrad (§0 table, §5)


def test_relu_op_def():
    d = relu.OP_DEF
    assert d.name == "ReluGrad"
    assert [i.name for i in d.inputs] == ["gradients", "features"]
    assert [o.name for o in d.outputs] == ["backprops"]
    assert set(d.dtypes) == {DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_UINT8,
                             DT.ACL_INT32, DT.ACL_INT64}
    assert d.attrs == ()
    assert set(d.aicore_configs) == {"ascend910b", "ascend950"}
    assert d.registered_for("Ascend910B4") and d.registered_for("Ascend950PR")
    assert not d.registered_for("Ascend310P3") and not d.registered_for("Ascend910A")
    assert relu.infer_shape((3, 1), (3, 7)) == (3, 7)


def test_relu_ub_table():
    # the experimental package's own numbers (kernel_flavours §4), which the simulator now uses
    assert {d.short: n for d, n in relu.UB_NUM.items()} == {
        "float32": 7, "float16": 7, "bfloat16": 10, "int8": 10, "uint8": 10, "int32": 6}
    assert relu.ub_num("uint8") == 10
    with pytest.raises(ValueError, match="int64"):          # the experimental op def has no int64
        relu.ub_num("int64")


# ---------------------------------------------------------------------------------------------------------
# the OpDef model itself


def test_soc_family_mapping():
    assert soc_family("Ascend910B4") == "ascend910b"
    assert soc_family("Ascend910_9392") == "ascend910_93"
    assert soc_family("Ascend950PR") == soc_family("Ascend910_95") == "ascend950"
    assert soc_family("Ascend310P3") == "ascend310p"
    assert soc_family("Ascend910A") == "ascend910"
    with pytest.raises(ValueError, match="unknown SoC"):
        soc_family("Kirin9000")


def test_registered_for_catalogue_entry():
    platform = pytest.importorskip("ascend_lab.base.platform")
    assert hsg.OP_DEF.registered_for(platform.get_soc("Ascend950PR"))
    assert not hsg.OP_DEF.registered_for(platform.get_soc("Ascend910B4"))
    assert relu.OP_DEF.registered_for(platform.NpuArch.DAV_3510)


def test_registered_for_bad_arguments():
    with pytest.raises(ValueError, match="NpuArch"):
        hsg.OP_DEF.registered_for(1234)
    with pytest.raises(TypeError):
        hsg.OP_DEF.registered_for(3.5)


def test_op_def_validation():
    with pytest.raises(ValueError, match="param_type"):
        Input("x", param_type="MAYBE", dtypes=("float32",))
    with pytest.raises(ValueError, match="formats"):
        Input("x", dtypes=("float32", "float16"), formats=("ND", "NCHW", "ND"))
    with pytest.raises(ValueError, match="type"):
        Attr("a", "complex", 1)
    with pytest.raises(ValueError, match="duplicate"):
        OpDef("Op", inputs=(Input("x", dtypes=("float32",)),), outputs=(Output("x", dtypes=("float32",)),))
    x = Input("x", dtypes=("fp16", np.float32), formats=("FORMAT_ND",))
    assert x.dtypes == (DT.ACL_FLOAT16, DT.ACL_FLOAT) and x.formats == ("ND", "ND")
    assert x.supports("half") and not x.supports("int8")
    with pytest.raises(KeyError, match="no attr"):
        hsg.OP_DEF.attr("gamma")


def test_require_dtype_message_lists_supported():
    with pytest.raises(ValueError, match="float16, float32, bfloat16, int32, int8, uint8"):
        tgv2d.OP_DEF.require_dtype("int64")
    assert hsg.OP_DEF.require_dtype("bf16") == DT.ACL_BF16


def test_infer_shape_same_as_input():
    assert infer_shape_same_as_input([np.int64(2), 3]) == (2, 3)
    with pytest.raises(ValueError):
        infer_shape_same_as_input((2.0,))

"""opdev: status codes (cann_facts §8), PromoteType / CanCast (§7), the platform catalogue (§6) and the
operator log. Tables below are transcribed from cann_facts.md, not read from the code under test."""

from __future__ import annotations

import itertools
import logging

import pytest

import ascend_lab as al
from ascend_lab import acl, aclnn
from ascend_lab.acl.types import aclDataType
from ascend_lab.base import log, platform
from ascend_lab.opdev import errno
from ascend_lab.opdev.data_type_utils import CanCast, PromoteType

DT = aclDataType

# --- §8 status codes -------------------------------------------------------------------------------------

#: name -> (value, a word the meaning in cann_facts §8 is about)
STATUS = {
    "ACLNN_SUCCESS": (0, "success"),
    "ACLNN_ERR_PARAM_NULLPTR": (161001, "null"),
    "ACLNN_ERR_PARAM_INVALID": (161002, "invalid"),
    "ACLNN_ERR_RUNTIME_ERROR": (361001, "runtime"),
    "ACLNN_ERR_INNER": (561000, "internal"),
    "ACLNN_ERR_INNER_INFERSHAPE_ERROR": (561001, "shape"),
    "ACLNN_ERR_INNER_TILING_ERROR": (561002, "tiling"),
    "ACLNN_ERR_INNER_FIND_KERNEL_ERROR": (561003, "kernel"),
    "ACLNN_ERR_INNER_CREATE_EXECUTOR": (561101, "executor"),
    "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR": (561102, "ReleaseTo"),
    "ACLNN_ERR_INNER_NULLPTR": (561103, "null"),
    "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE": (561104, "attr"),
    "ACLNN_ERR_INNER_KEY_CONFLICT": (561105, "key"),
    "ACLNN_ERR_INNER_INVALID_IMPL_MODE": (561106, "impl"),
    "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND": (561107, "ASCEND_OPP_PATH"),
    "ACLNN_ERR_INNER_LOAD_JSON_FAILED": (561108, "json"),
    "ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND": (561109, "json"),
    "ACLNN_ERR_INNER_JSON_FORMAT_INVALID": (561110, "format"),
    "ACLNN_ERR_INNER_JSON_DTYPE_INVALID": (561111, "dtype"),
    "ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND": (561112, "package"),
    "ACLNN_ERR_INNER_OP_FILE_INVALID": (561113, "json"),
    "ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND": (561114, "attr"),
    "ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH": (561115, "attr"),
    "ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE": (561116, "32"),
    "ACLNN_ERR_INNER_INPUT_JSON_IS_NULL": (561117, "json"),
    "ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID": (561118, "workspace"),
    "ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID": (561119, "block dim"),
}


@pytest.mark.parametrize("name", list(STATUS))
def test_status_code_exists_with_value_and_meaning(name):
    value, word = STATUS[name]
    assert int(getattr(errno, name)) == value                # module-level constant
    assert int(errno.AclnnStatus[name]) == value             # enum member
    assert errno.AclnnStatus(value).name == name
    text = errno.describe(value)
    assert name in text and str(value) in text
    meaning = text.split(":", 1)[1].strip()
    assert meaning and word.lower() in meaning.lower()
    assert aclnn.describe(value) == text


def test_status_set_is_exactly_the_table():
    assert {m.name for m in errno.AclnnStatus} == set(STATUS)
    assert set(errno.MEANING) == set(errno.AclnnStatus)


def test_old_key_conflict_spelling():
    assert int(errno.ACLNN_ERR_INNER_KEY_CONFILICT) == 561105


def test_describe_unknown_code():
    assert "unknown" in errno.describe(123456).lower()
    assert "123456" in errno.describe(123456)


# --- §7 PromoteType --------------------------------------------------------------------------------------

_A = {"f32": DT.ACL_FLOAT, "f16": DT.ACL_FLOAT16, "bf16": DT.ACL_BF16, "i8": DT.ACL_INT8, "u8": DT.ACL_UINT8,
      "i16": DT.ACL_INT16, "i32": DT.ACL_INT32, "i64": DT.ACL_INT64, "bool": DT.ACL_BOOL, "f64": DT.ACL_DOUBLE}
_COLS = "f32 f16 bf16 i8 u8 i16 i32 i64 bool f64".split()
# cann_facts §7, verbatim
_TABLE = """
f32  f32 f32 f32 f32 f32 f32 f32 f32 f32 f64
f16  f32 f16 f32 f16 f16 f16 f16 f16 f16 f64
bf16 f32 f32 bf16 bf16 bf16 bf16 bf16 bf16 bf16 f64
i8   f32 f16 bf16 i8 i16 i16 i32 i64 i8 f64
u8   f32 f16 bf16 i16 u8 i16 i32 i64 u8 f64
i32  f32 f16 bf16 i32 i32 i32 i32 i64 i32 f64
i64  f32 f16 bf16 i64 i64 i64 i64 i64 i64 f64
"""
PROMOTE_CELLS = [
    (_A[row], _A[col], _A[cell])
    for row, *cells in (line.split() for line in _TABLE.strip().splitlines())
    for col, cell in zip(_COLS, cells, strict=True)
]
assert len(PROMOTE_CELLS) == 70


@pytest.mark.parametrize("a, b, want", PROMOTE_CELLS, ids=lambda d: getattr(d, "name", str(d)))
def test_promote_type_table_cell(a, b, want):
    assert PromoteType(a, b) == want
    assert PromoteType(b, a) == want          # the table is symmetric for these rows/columns


def test_promote_type_symmetric_over_all_known_dtypes():
    dts = [d for d in DT if d != DT.ACL_DT_UNDEFINED]
    for a, b in itertools.product(dts, dts):
        assert PromoteType(a, b) == PromoteType(b, a), (a, b)


def test_promote_type_identity():
    for d in DT:
        if d != DT.ACL_DT_UNDEFINED:
            assert PromoteType(d, d) == d


def test_promote_fp16_bf16_is_fp32():
    assert PromoteType(DT.ACL_FLOAT16, DT.ACL_BF16) == DT.ACL_FLOAT
    assert PromoteType("bfloat16", "float16") == DT.ACL_FLOAT


@pytest.mark.parametrize("u", [DT.ACL_UINT16, DT.ACL_UINT32, DT.ACL_UINT64])
def test_unsigned_wide_promote_with_nothing_else(u):
    for other in DT:
        if other in (u, DT.ACL_DT_UNDEFINED):
            continue
        assert PromoteType(u, other) == DT.ACL_DT_UNDEFINED, other
        assert PromoteType(other, u) == DT.ACL_DT_UNDEFINED, other
    assert PromoteType(u, u) == u


def test_promote_accepts_other_spellings():
    import numpy as np
    assert PromoteType(np.float16, "float32") == DT.ACL_FLOAT
    assert PromoteType(1, 27) == DT.ACL_FLOAT            # ACL_FLOAT16 + ACL_BF16 by number


# --- §7 CanCast --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("src, dst, want", [
    (DT.ACL_INT32, DT.ACL_FLOAT, True),
    (DT.ACL_COMPLEX128, DT.ACL_COMPLEX64, True),
    (DT.ACL_FLOAT, DT.ACL_INT32, False),
    (DT.ACL_COMPLEX64, DT.ACL_INT32, False),
    (DT.ACL_FLOAT, DT.ACL_BOOL, False),
])
def test_can_cast_ut_cases(src, dst, want):
    assert CanCast(src, dst) is want


FLOATING = {DT.ACL_DOUBLE, DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_FLOAT16}
INTEGRAL = {DT.ACL_INT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64,
            DT.ACL_UINT8, DT.ACL_UINT16, DT.ACL_UINT32, DT.ACL_UINT64}
COMPLEX = {DT.ACL_COMPLEX32, DT.ACL_COMPLEX64, DT.ACL_COMPLEX128}
BOOL = {DT.ACL_BOOL}
CATEGORISED = sorted(FLOATING | INTEGRAL | COMPLEX | BOOL)


def _rank(d):
    return 0 if d in BOOL else 1 if d in INTEGRAL else 2 if d in FLOATING else 3


def test_can_cast_category_rules_all_pairs():
    """§7: never downwards in bool < integral < floating < complex; anything else is allowed
    (including narrowing within a category, e.g. f64 -> f16 or i64 -> i8)."""
    for src, dst in itertools.product(CATEGORISED, CATEGORISED):
        want = _rank(src) <= _rank(dst)
        assert CanCast(src, dst) is want, (src.name, dst.name)


def test_can_cast_out_dtypes_of_hardsigmoid():
    # cann_facts §1.2: out=INT32/BOOL fail, out=DOUBLE or COMPLEX64 pass
    for promote in (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16):
        assert not CanCast(promote, DT.ACL_INT32)
        assert not CanCast(promote, DT.ACL_BOOL)
        assert CanCast(promote, DT.ACL_DOUBLE)
        assert CanCast(promote, DT.ACL_COMPLEX64)
        for f in FLOATING:
            assert CanCast(promote, f)


# --- §6 platform catalogue ---------------------------------------------------------------------------------

NA, SV = platform.NpuArch, platform.SocVersion
#: name -> (NpuArch, SocVersion, allowed GetCoreNumAiv values, UB bytes)   (cann_facts §6)
SOCS = {
    "Ascend910A": (NA.DAV_1001, SV.ASCEND910, {32}, 262144),
    "Ascend910B1": (NA.DAV_2201, SV.ASCEND910B, {48}, 196608),
    "Ascend910B2": (NA.DAV_2201, SV.ASCEND910B, {48}, 196608),
    "Ascend910B3": (NA.DAV_2201, SV.ASCEND910B, {40}, 196608),
    "Ascend910B4": (NA.DAV_2201, SV.ASCEND910B, {40}, 196608),
    "Ascend910_9392": (NA.DAV_2201, SV.ASCEND910_93, {48}, 196608),
    "Ascend310P3": (NA.DAV_2002, SV.ASCEND310P, {8}, 262144),
    "Ascend950PR": (NA.DAV_3510, SV.ASCEND950, {56, 64}, 253952),
}


def test_npu_arch_values():
    want = {"DAV_1001": 1001, "DAV_2002": 2002, "DAV_2201": 2201, "DAV_3002": 3002, "DAV_3510": 3510}
    assert {m.name: int(m) for m in NA}.items() >= want.items()


def test_soc_version_enum_order():
    # §1.1: the order matters (HardsigmoidBackward tests ASCEND910B <= v <= ASCEND910E)
    order = ["ASCEND910", "ASCEND910B", "ASCEND910_93", "ASCEND950", "ASCEND910E", "ASCEND310", "ASCEND310P"]
    assert [int(SV[n]) for n in order] == list(range(7))


def test_required_socs_listed():
    names = platform.socs()
    assert set(SOCS) <= set(names)
    assert set(al.platform.socs()) == set(names)


@pytest.mark.parametrize("name", list(SOCS))
def test_soc_entry(name):
    arch, version, cores, ub = SOCS[name]
    info = platform.get_soc(name)
    assert info.name == name
    assert info.npu_arch == arch
    assert info.soc_version == version
    assert info.vector_core_num in cores
    assert info.ub_size == ub
    assert info.is_regbase() is (arch == NA.DAV_3510)
    assert info.note.strip()                       # every figure has a source note
    assert info.coupled is (name in ("Ascend910A", "Ascend310P3"))


def test_get_soc_is_case_insensitive():
    assert platform.get_soc("ascend910b4").name == "Ascend910B4"


def test_set_soc_unknown_name_lists_the_known_ones():
    before = platform.current_soc().name
    with pytest.raises(ValueError) as exc:
        acl.set_soc("Ascend911")
    msg = str(exc.value)
    assert "Ascend911" in msg
    for name in SOCS:
        assert name in msg
    assert platform.current_soc().name == before


def test_get_soc_wrong_type():
    with pytest.raises(TypeError):
        platform.get_soc(910)


def test_set_soc_and_context_manager_restore():
    start = platform.current_soc().name
    try:
        info = acl.set_soc("Ascend310P3")
        assert info.name == "Ascend310P3" == acl.current_soc().name
        assert platform.GetCurNpuArch() == NA.DAV_2002
        assert platform.GetCurrentSocVersion() == SV.ASCEND310P
        with acl.soc("Ascend950PR") as inner:
            assert inner.name == "Ascend950PR" == platform.current_soc().name
            assert platform.GetCurNpuArch() == NA.DAV_3510
            with acl.soc("Ascend910A"):
                assert platform.current_soc().name == "Ascend910A"
            assert platform.current_soc().name == "Ascend950PR"
        assert platform.current_soc().name == "Ascend310P3"
        with pytest.raises(RuntimeError), acl.soc("Ascend910B1"):
            raise RuntimeError("boom")
        assert platform.current_soc().name == "Ascend310P3"           # restored after an exception
        with pytest.raises(ValueError), acl.soc("nope"):
            pass
        assert platform.current_soc().name == "Ascend310P3"
    finally:
        acl.set_soc(start)
    assert platform.current_soc().name == start


def test_default_soc_in_catalogue():
    assert platform.DEFAULT_SOC in platform.socs()


# --- log -----------------------------------------------------------------------------------------------------

def test_log_capture_collects_only_inside():
    log.OP_LOGE("outside", "before")
    with log.capture() as recs:
        log.OP_LOGE("apiE", "an error")
        log.OP_LOGW("apiW", "a warning")
        log.OP_LOGI("apiI", "some info")
        log.OP_LOGD("apiD", "debug")
    log.OP_LOGE("outside", "after")
    assert [(r.level, r.api, r.message) for r in recs] == [
        ("ERROR", "apiE", "an error"), ("WARNING", "apiW", "a warning"),
        ("INFO", "apiI", "some info"), ("DEBUG", "apiD", "debug")]
    assert str(recs[0]) == "[ERROR] apiE: an error"
    kept = log.records()
    assert kept[-1].message == "after"


def test_log_capture_nests():
    with log.capture() as outer:
        log.OP_LOGE("a", "1")
        with log.capture() as inner:
            log.OP_LOGE("b", "2")
        log.OP_LOGE("c", "3")
    assert [r.message for r in outer] == ["1", "2", "3"]
    assert [r.message for r in inner] == ["2"]


def test_log_forwards_to_python_logging(caplog):
    with caplog.at_level(logging.ERROR, logger="ascend_lab.aclnn"):
        log.OP_LOGE("myApi", "went wrong")
    assert any("myApi" in r.getMessage() and "went wrong" in r.getMessage() for r in caplog.records)


def test_log_clear():
    log.OP_LOGE("x", "y")
    log.clear()
    assert log.records() == []


def test_failed_aclnn_call_is_logged_with_the_argument_name():
    with log.capture() as recs:
        ret, ws, exe = aclnn.aclnnHardsigmoidBackwardGetWorkspaceSize(None, None, None)
    assert ret == 161001 and exe is None
    assert any(r.level == "ERROR" and "gradOutput" in r.message for r in recs)

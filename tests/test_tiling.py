"""Tiling: the worked examples of cann_facts §2.1, §2.2, §4.1 and §5, edge cases, invariants, bytes.

Expected numbers come from cann_facts.md or are derived by hand in the comments next to them, never
from running the code under test.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_lab import tiling
from ascend_lab.opdev.tiling_data import (
    GET_TILING_DATA,
    TilingData,
    TilingError,
    ceil_div,
    float32,
    floor_align,
    int64,
    uint64,
)
from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg
from ascend_lab.ops.relu_grad import op_host as relu
from ascend_lab.ops.threshold_grad_v2_d import op_host as tgv2d

UB_950 = 253952  # Ascend950 GetCoreMemSize(UB), cann_facts §2.1 / §6
UB_A2 = 196608   # Atlas A2, cann_facts §4.1 / §6
ALPHA_F32 = float(np.float32(0.16666666))
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int8": 1, "uint8": 1, "int64": 8}


# ---------------------------------------------------------------------------------------------------------
# opbase math helpers (§2.1: CeilDiv(x, 0) = x, FloorAlign(x, 0) = 0)

def test_ceil_div_and_floor_align_semantics():
    assert ceil_div(7, 0) == 7
    assert ceil_div(0, 5) == 0
    assert ceil_div(10, 5) == 2 and ceil_div(11, 5) == 3
    assert floor_align(100, 0) == 0
    assert floor_align(9069, 32) == 9056 and floor_align(9069, 64) == 9024
    assert floor_align(31, 32) == 0


# ---------------------------------------------------------------------------------------------------------
# HardSigmoidGrad, experimental (§2.1)

@pytest.mark.parametrize("dtype,ub_factor,key",
                         [("float32", 7936, 0), ("float16", 15872, 1), ("bf16", 9056, 2)])
def test_hsg_worked_example_100000(dtype, ub_factor, key):
    td = tiling.hard_sigmoid_grad(100000, dtype, core_num=64, ub_size=UB_950)
    assert (td.totalLength, td.blockFactor, td.blockDim) == (100000, 1563, 64)
    assert td.ubFactor == ub_factor
    assert td.tilingKey == key
    assert td.alpha == ALPHA_F32 and td.beta == 0.5


def test_hsg_worked_example_65():
    td = tiling.hard_sigmoid_grad(65, "float32", core_num=64, ub_size=UB_950)
    assert (td.blockFactor, td.blockDim) == (2, 33)


def test_hsg_ub_factor_is_32_element_aligned_not_bytes():
    # bf16: (253952 // 4) // 7 = 9069 -> 9056 (multiple of 32 elements, not of 64)
    td = hsg.tiling(10, "bfloat16", 64, UB_950)
    assert td.ubFactor == 9056 and td.ubFactor % 32 == 0 and td.ubFactor % 64 != 0


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_hsg_empty_is_all_zero_block_dim_1_key_0(dtype):
    td = hsg.tiling(0, dtype, 64, UB_950)
    assert td.as_dict() == {"totalLength": 0, "blockFactor": 0, "ubFactor": 0, "alpha": 0.0, "beta": 0.0,
                            "blockDim": 1, "tilingKey": 0}
    assert hsg.core_ranges(td) == []


@pytest.mark.parametrize("n,block_factor,block_dim", [
    (1, 1, 1),
    (63, 1, 63),          # one below the core count: 63 cores of 1
    (64, 1, 64),          # exactly one element per core
    (65, 2, 33),          # one above: CeilDiv(65, 64) = 2, CeilDiv(65, 2) = 33
    (128, 2, 64),
    (129, 3, 43),         # CeilDiv(129, 64) = 3, CeilDiv(129, 3) = 43
    (2**40, 2**34, 64),   # huge: 2**40 / 64 = 2**34 exactly
])
def test_hsg_core_boundaries(n, block_factor, block_dim):
    td = hsg.tiling(n, "float32", 64, UB_950)
    assert (td.blockFactor, td.blockDim) == (block_factor, block_dim)


def test_hsg_tile_boundaries():
    # 64 cores x exactly one fp32 tile of 7936
    n = 64 * 7936
    ranges = hsg.core_ranges(hsg.tiling(n, "float32", 64, UB_950))
    assert len(ranges) == 64 and all(r["tiles"] == [(0, r["offset"], 7936)] for r in ranges)
    # one element more: blockFactor 7937 -> two tiles per core, the second of length 1;
    # the last core gets 507905 - 63 * 7937 = 7874 elements (one tile)
    ranges = hsg.core_ranges(hsg.tiling(n + 1, "float32", 64, UB_950))
    assert ranges[0]["tiles"] == [(0, 0, 7936), (1, 7936, 1)]
    assert ranges[-1]["core"] == 63 and ranges[-1]["data_num"] == 7874 and ranges[-1]["kind"] == "small"
    assert ranges[-1]["tiles"] == [(0, 63 * 7937, 7874)]
    # one element less: blockFactor 7936, last core 7935
    ranges = hsg.core_ranges(hsg.tiling(n - 1, "float32", 64, UB_950))
    assert ranges[0]["tiles"] == [(0, 0, 7936)] and ranges[-1]["tiles"] == [(0, 63 * 7936, 7935)]


def test_hsg_core_zero_is_a_tiling_error():
    with pytest.raises(TilingError, match="core_num is 0"):
        hsg.tiling(100, "float32", 0, UB_950)
    with pytest.raises(TilingError):  # checked before the empty short-cut, as CANN reads the platform first
        hsg.tiling(0, "float32", 0, UB_950)


def test_hsg_experimental_does_not_check_ub_factor_but_core_ranges_refuses():
    td = hsg.tiling(100, "float32", 8, 100)  # (100 // 4) // 8 = 3 -> FloorAlign(3, 32) = 0
    assert td.ubFactor == 0
    with pytest.raises(TilingError, match="ubFactor"):
        hsg.core_ranges(td)


def test_hsg_attrs_are_c_floats():
    td = tiling.hard_sigmoid_grad(10, "float16", core_num=4, ub_size=UB_950, alpha=0.1, beta=0.25)
    assert td.alpha == float(np.float32(0.1)) and td.alpha != 0.1
    assert td.beta == 0.25


# ---------------------------------------------------------------------------------------------------------
# HardSigmoidGrad, main tree (§2.2)

@pytest.mark.parametrize("dtype,ub_factor", [("float32", 7936), ("float16", 9024), ("bfloat16", 9024)])
def test_hsg_main950_ub_factor(dtype, ub_factor):
    td = hsg.tiling_main950(100000, dtype, 64, UB_950)
    assert td.ubFactor == ub_factor and td.ubFactor % 64 == 0
    assert (td.blockFactor, td.blockDim) == (1563, 64)
    assert td.alpha == float(np.float32(1.0) / np.float32(6.0))


def test_hsg_main950_small_inputs_use_one_core():
    assert hsg.tiling_main950(1023, "float32", 64, UB_950).blockDim == 1
    assert hsg.tiling_main950(1023, "float32", 64, UB_950).blockFactor == 1023
    td = hsg.tiling_main950(1024, "float32", 64, UB_950)
    assert (td.blockFactor, td.blockDim) == (16, 64)


def test_hsg_main950_empty_keeps_dtype_key_and_checks_attrs():
    assert hsg.tiling_main950(0, "bfloat16", 64, UB_950).tilingKey == 2
    for alpha, beta in [(0.0, 0.5), (float("inf"), 0.5), (float("nan"), 0.5), (0.2, float("inf"))]:
        with pytest.raises(TilingError, match="alpha"):
            hsg.tiling_main950(10, "float32", 64, UB_950, alpha=alpha, beta=beta)
    with pytest.raises(TilingError, match="ubFactor"):
        hsg.tiling_main950(10, "float32", 64, 1000)  # (1000 // 4) // 8 = 31 -> FloorAlign(31, 64) = 0


# ---------------------------------------------------------------------------------------------------------
# ThresholdGradV2D (§4.1 table, ub 196608)

TGV2D_TABLE = [
    # N, dtype, AIV, blockDim, tileDataNum, small, big, tiles small/big, tails small/big,
    # tailBlockNum, elements processed
    (100, "float32", 48, 1, 6976, 128, 192, 1, 1, 128, 192, 0, 128),
    (7000, "float32", 48, 48, 6976, 128, 192, 1, 1, 128, 192, 14, 7040),
    (100000, "float32", 48, 48, 6976, 2048, 2112, 1, 1, 2048, 2112, 27, 100032),
    (1000000, "float16", 48, 48, 13952, 20736, 20864, 2, 2, 6784, 6912, 37, 1000064),
    (4096, "bfloat16", 40, 1, 9728, 4096, 4224, 1, 1, 4096, 4224, 0, 4096),
    (333333, "int8", 48, 48, 13824, 6912, 7168, 1, 1, 6912, 7168, 7, 333568),
]


@pytest.mark.parametrize("row", TGV2D_TABLE, ids=lambda r: f"{r[0]}-{r[1]}")
def test_tgv2d_worked_examples(row):
    n, dtype, cores, block_dim, tile, small, big, t_small, t_big, tail_s, tail_b, tail_blocks, processed = row
    td = tiling.threshold_grad_v2_d(n, dtype, core_num=cores, ub_size=UB_A2)
    assert td.blockDim == block_dim and td.tilingKey == 0
    assert td.tileDataNum == tile
    assert (td.smallCoreDataNum, td.bigCoreDataNum) == (small, big)
    assert (td.finalSmallTileNum, td.finalBigTileNum) == (t_small, t_big)
    assert (td.smallTailDataNum, td.bigTailDataNum) == (tail_s, tail_b)
    assert td.tailBlockNum == tail_blocks
    assert td.threshold == 1.0
    ranges = tgv2d.core_ranges(td, dtype, n)
    assert sum(r["data_num"] for r in ranges) == processed
    assert ranges[-1]["padded_end"] == processed
    assert sum(r["padding"] for r in ranges) == processed - n


# tileDataNum = ((196608 // 256) // ubDataNumber) * 256 // sizeof(T); 768 blocks of UB
@pytest.mark.parametrize("dtype,tile", [
    ("float32", 109 * 64), ("float16", 109 * 128), ("bfloat16", 76 * 128),
    ("int32", 96 * 64), ("int8", 54 * 256), ("uint8", 54 * 256),
])
def test_tgv2d_tile_per_dtype(dtype, tile):
    assert tgv2d.tiling(10**6, dtype, 48, UB_A2).tileDataNum == tile


def test_tgv2d_single_core_boundary():
    # 6976 fp32 elements fit one tile -> one core; 6977 do not -> 110 blocks over 48 cores
    td = tgv2d.tiling(6976, "float32", 48, UB_A2)
    assert td.blockDim == 1 and td.smallCoreDataNum == 6976 and td.finalSmallTileNum == 1
    assert td.smallTailDataNum == 6976  # 109 blocks = exactly one tile: tail 0 -> tileDataNum
    td = tgv2d.tiling(6977, "float32", 48, UB_A2)
    assert td.blockDim == 48 and td.tailBlockNum == 110 - 2 * 48


def test_tgv2d_tile_boundary_inside_a_core():
    # 48 cores x 109 blocks (= one fp32 tile): N = 48 * 109 * 64 = 334848
    td = tgv2d.tiling(334848, "float32", 48, UB_A2)
    assert td.tailBlockNum == 0
    assert (td.smallCoreDataNum, td.finalSmallTileNum, td.smallTailDataNum) == (6976, 1, 6976)
    assert (td.bigCoreDataNum, td.finalBigTileNum, td.bigTailDataNum) == (7040, 2, 64)
    # one element more: 5233 blocks -> one big core
    td = tgv2d.tiling(334849, "float32", 48, UB_A2)
    assert td.tailBlockNum == 1
    ranges = tgv2d.core_ranges(td, "float32", 334849)
    assert ranges[0]["kind"] == "big" and ranges[0]["tiles"] == [(0, 0, 6976), (1, 6976, 64)]
    assert ranges[1]["kind"] == "small" and ranges[1]["offset"] == 7040


def test_tgv2d_more_cores_than_blocks():
    # 7000 fp32 = 110 blocks; 200 cores -> 110 cores of one block each
    td = tgv2d.tiling(7000, "float32", 200, UB_A2)
    assert td.blockDim == 110 and td.tailBlockNum == 0 and td.smallCoreDataNum == 64


def test_tgv2d_one_element():
    td = tgv2d.tiling(1, "int8", 48, UB_A2)
    assert td.blockDim == 1 and td.smallCoreDataNum == 256 and td.smallTailDataNum == 256
    (only,) = tgv2d.core_ranges(td, "int8", 1)
    assert only["padding"] == 255 and only["tiles"] == [(0, 0, 256)]


def test_tgv2d_huge_input():
    # 2**40 fp32 = 2**34 blocks; 2**34 = 48 * 357913941 + 16
    td = tgv2d.tiling(2**40, "float32", 48, UB_A2)
    assert td.blockDim == 48 and td.tailBlockNum == 16
    assert td.smallCoreDataNum == 357913941 * 64 and td.bigCoreDataNum == 357913942 * 64
    # 357913941 = 109 * 3283614 + 15 ; 357913942 = 109 * 3283614 + 16
    assert td.finalSmallTileNum == td.finalBigTileNum == 3283615
    assert (td.smallTailDataNum, td.bigTailDataNum) == (15 * 64, 16 * 64)


def test_tgv2d_errors():
    with pytest.raises(TilingError, match="inputNum is 0"):
        tgv2d.tiling(0, "float32", 48, UB_A2)
    with pytest.raises(TilingError, match="core_num is 0"):
        tgv2d.tiling(10, "float32", 0, UB_A2)
    with pytest.raises(TilingError, match="ub_size"):
        tgv2d.tiling(10, "int8", 48, 14 * 256 - 1)
    assert tgv2d.tiling(10, "int8", 48, 14 * 256).tileDataNum == 256


# ---------------------------------------------------------------------------------------------------------
# ReluGrad (the experimental package, kernel_flavours §4: UB_NUM f32/f16 7, bf16/int8/uint8 10, int32 6; no int64)

@pytest.mark.parametrize("dtype,tile", [
    ("float32", 109 * 64), ("float16", 109 * 128), ("bfloat16", 76 * 128), ("int8", 76 * 256),
    ("uint8", 76 * 256), ("int32", 128 * 64),
])
def test_relu_tile_per_dtype(dtype, tile):
    assert relu.tiling(10**6, dtype, 48, UB_A2).tileDataNum == tile


def test_relu_experimental_has_no_int64():
    with pytest.raises(ValueError, match="no kernel for int64"):
        relu.tiling(10**6, "int64", 48, UB_A2)


def test_relu_shares_the_split():
    # the §4.1 int8 row (1303 blocks over 48 cores), with ReluGrad's struct (no threshold field)
    td = tiling.relu_grad(333333, "int8", core_num=48, ub_size=UB_A2)
    assert (td.blockDim, td.tailBlockNum, td.smallCoreDataNum, td.bigCoreDataNum) == (48, 7, 6912, 7168)
    assert td.tileDataNum == 19456 and not hasattr(td, "threshold")
    assert relu.core_ranges(td, "int8")[7]["offset"] == 7 * 7168


# ---------------------------------------------------------------------------------------------------------
# invariants (hypothesis)

BLOCK_OPS = [("tgv2d", tgv2d, ["float32", "float16", "bfloat16", "int32", "int8", "uint8"]),
             ("relu", relu, ["float32", "float16", "bfloat16", "int32", "int8", "uint8"])]


@st.composite
def block_case(draw):
    _, mod, dtypes = draw(st.sampled_from(BLOCK_OPS))
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.integers(1, 3 * 10**6))
    cores = draw(st.integers(1, 80))
    ub = draw(st.integers(14 * 256, 300_000))
    return mod, dtype, n, cores, ub


@settings(max_examples=300, deadline=None)
@given(block_case())
def test_block_tiling_invariants(case):
    mod, dtype, n, cores, ub = case
    size = ITEMSIZE[dtype]
    td = mod.tiling(n, dtype, cores, ub)
    assert 1 <= td.blockDim <= cores
    assert td.tailBlockNum < td.blockDim
    assert td.tileDataNum * size % 256 == 0 and td.tileDataNum > 0
    ranges = mod.core_ranges(td, dtype, n)
    assert [r["core"] for r in ranges] == list(range(td.blockDim))
    expected_start = 0
    for r in ranges:
        assert r["offset"] == expected_start  # no gap, no overlap
        assert r["data_num"] > 0 and r["data_num"] * size % 256 == 0
        assert len(r["tiles"]) == r["tile_num"]
        start = r["offset"]
        for i, (idx, tile_start, length) in enumerate(r["tiles"]):
            assert idx == i and tile_start == start
            assert 0 < length <= td.tileDataNum and length * size % 256 == 0
            start += length
        assert start == r["padded_end"] == r["offset"] + r["data_num"]
        assert r["tail"] == r["tiles"][-1][2]
        expected_start = r["padded_end"]
    assert expected_start >= n  # covers [0, N)
    assert 0 <= (expected_start - n) * size < 256  # padding past the end is less than one 256-B block


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3 * 10**6), st.sampled_from(["float32", "float16", "bfloat16"]),
       st.integers(1, 80), st.integers(1024, 300_000))
def test_hsg_tiling_invariants(n, dtype, cores, ub):
    td = hsg.tiling(n, dtype, cores, ub)
    assert 1 <= td.blockDim <= cores
    assert td.ubFactor % 32 == 0
    ranges = hsg.core_ranges(td)
    if n == 0:
        assert ranges == []
        return
    assert td.ubFactor > 0 and len(ranges) == td.blockDim  # every launched core has work
    expected_start = 0
    for r in ranges:
        assert r["offset"] == expected_start and r["data_num"] <= td.blockFactor
        start = r["offset"]
        for _idx, tile_start, length in r["tiles"]:
            assert tile_start == start and 0 < length <= td.ubFactor
            start += length
        assert start == r["padded_end"]
        expected_start = start
    assert expected_start == n  # DataCopyPad: exact cover, no padding


# ---------------------------------------------------------------------------------------------------------
# TilingData bytes, repr, immutability

def test_struct_sizes_natural_alignment():
    assert hsg.HardSigmoidGradTilingData.SIZE == 32        # 3 x 8 + 2 x 4, already 8-aligned
    assert tgv2d.ThresholdGradV2DTilingData.SIZE == 72     # 8 x 8 + 4, padded to a multiple of 8
    assert relu.ReluGradTilingData.SIZE == 64              # 8 x 8


def test_hsg_bytes_layout():
    td = hsg.tiling(100000, "float32", 64, UB_950)
    assert td.to_bytes() == struct.pack("<qqqff", 100000, 1563, 7936, 0.16666666, 0.5)


def test_tgv2d_bytes_layout_and_padding():
    td = tgv2d.tiling(7000, "float32", 48, UB_A2, threshold=0.5)
    raw = td.to_bytes()
    assert raw == struct.pack("<8Qf4x", 128, 192, 1, 1, 6976, 128, 192, 14, 0.5)
    assert raw[68:] == b"\0\0\0\0"


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10**9), st.sampled_from(["float32", "float16", "bfloat16", "int8", "int32"]),
       st.integers(1, 64), st.floats(width=32, allow_nan=False))
def test_bytes_round_trip(n, dtype, cores, thr):
    td = tgv2d.tiling(n, dtype, cores, UB_A2, threshold=thr)
    back = tgv2d.ThresholdGradV2DTilingData.from_bytes(td.to_bytes(), blockDim=td.blockDim,
                                                      tilingKey=td.tilingKey)
    assert back == td and back.threshold == thr
    if dtype in ("float32", "float16", "bfloat16"):
        hs = hsg.tiling(n, dtype, cores, UB_950, alpha=thr)
        assert hsg.HardSigmoidGradTilingData.from_bytes(hs.to_bytes(), blockDim=hs.blockDim,
                                                        tilingKey=hs.tilingKey) == hs


def test_get_tiling_data_reads_prefix_of_a_larger_buffer():
    td = relu.tiling(12345, "int32", 40, UB_A2)
    got = GET_TILING_DATA(relu.ReluGradTilingData, td.to_bytes() + b"\xff" * 16)
    assert got.as_dict() == {**td.as_dict(), "blockDim": 1, "tilingKey": 0}
    with pytest.raises(ValueError, match="needs 64"):
        GET_TILING_DATA(relu.ReluGradTilingData, td.to_bytes()[:-1])
    with pytest.raises(ValueError):
        relu.ReluGradTilingData.from_bytes(td.to_bytes() + b"\0")


def test_as_dict_order_repr_and_immutability():
    td = hsg.tiling(65, "float16", 64, UB_950)
    assert list(td.as_dict()) == ["totalLength", "blockFactor", "ubFactor", "alpha", "beta", "blockDim",
                                  "tilingKey"]
    assert repr(td) == ("HardSigmoidGradTilingData(totalLength=65, blockFactor=2, ubFactor=15872, "
                        "alpha=0.16666666, beta=0.5, blockDim=33, tilingKey=1)")
    with pytest.raises(AttributeError):
        td.ubFactor = 1
    with pytest.raises(AttributeError):
        del td.alpha
    assert td.replace(ubFactor=32).ubFactor == 32 and td.ubFactor == 15872
    assert hash(td) == hash(hsg.tiling(65, "float16", 64, UB_950))


def test_tiling_data_field_checks():
    class Demo(TilingData):
        a: int64
        b: uint64
        c: float32

    assert Demo.field_names() == ("a", "b", "c") and Demo.SIZE == 24  # 8 + 8 + 4 + 4 padding
    with pytest.raises(ValueError, match="uint64_t"):
        Demo(a=0, b=-1, c=0.0)
    with pytest.raises(ValueError, match="int64_t"):
        Demo(a=2**63, b=0, c=0.0)
    with pytest.raises(TypeError, match="int"):
        Demo(a=1.5, b=0, c=0.0)
    with pytest.raises(TypeError, match="missing"):
        Demo(a=1, b=2)
    with pytest.raises(TypeError, match="C type"):
        class Bad(TilingData):
            x: int


# ---------------------------------------------------------------------------------------------------------
# facade arguments and platform lookup

@pytest.mark.parametrize("call,exc,msg", [
    (lambda: tiling.hard_sigmoid_grad(-1, "float32", 8, UB_950), ValueError, ">= 0"),
    (lambda: tiling.hard_sigmoid_grad(10.0, "float32", 8, UB_950), TypeError, "int"),
    (lambda: tiling.hard_sigmoid_grad(True, "float32", 8, UB_950), TypeError, "int"),
    (lambda: tiling.hard_sigmoid_grad(10, "float33", 8, UB_950), ValueError, "unknown dtype"),
    (lambda: tiling.hard_sigmoid_grad(10, "int8", 8, UB_950), ValueError, "no kernel for int8"),
    (lambda: tiling.hard_sigmoid_grad(10, "float32", 8, UB_950, gamma=1.0), TypeError, "gamma"),
    (lambda: tiling.hard_sigmoid_grad(10, "float32", 8, UB_950, alpha="x"), TypeError, "alpha"),
    (lambda: tiling.threshold_grad_v2_d(10, "int64", 8, UB_A2), ValueError, "no kernel for int64"),
    (lambda: tiling.threshold_grad_v2_d(10, "float32", -8, UB_A2), ValueError, "core_num"),
    (lambda: tiling.threshold_grad_v2_d(10, "float32", 8, UB_A2, threshold=None), TypeError, "threshold"),
    (lambda: tiling.relu_grad(10, "float64", 8, UB_A2), ValueError, "no kernel for float64"),
    (lambda: tiling.relu_grad(10, "float32", 8, 1.5), TypeError, "ub_size"),
])
def test_facade_bad_arguments(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_facade_dtype_spellings():
    ref = tiling.hard_sigmoid_grad(1000, "bfloat16", 8, UB_950)
    import ml_dtypes

    from ascend_lab.acl.types import aclDataType
    for spelling in ("bf16", "BF16", "DT_BF16", aclDataType.ACL_BF16, ml_dtypes.bfloat16, 27):
        assert tiling.hard_sigmoid_grad(1000, spelling, 8, UB_950) == ref
    assert tiling.threshold_grad_v2_d(1000, np.float16, 8, UB_A2) == tiling.threshold_grad_v2_d(
        1000, "half", 8, UB_A2)


def test_facade_soc_from_mapping_object_and_callable():
    class Entry:
        vector_core_num = 64
        ub_size = UB_950

    expected = hsg.tiling(100000, "float16", 64, UB_950)
    mapping = {"vector_core_num": 64, "ub_size": UB_950}
    assert tiling.hard_sigmoid_grad(100000, "float16", soc=mapping) == expected
    assert tiling.hard_sigmoid_grad(100000, "float16", soc=Entry()) == expected
    assert tiling.hard_sigmoid_grad(100000, "float16", soc=lambda: Entry()) == expected
    # an explicit core_num wins over the SoC's
    assert tiling.hard_sigmoid_grad(100000, "float16", core_num=8, soc=Entry()).blockDim == 8
    with pytest.raises(ValueError, match="vector_core_num"):
        tiling.relu_grad(10, "float32", soc={"ub_size": 1})


def test_facade_soc_from_catalogue():
    pytest.importorskip("ascend_lab.base.platform")
    td = tiling.threshold_grad_v2_d(100000, "float32", soc="Ascend910B1")  # 48 AIV, 192 KB (§6)
    assert td == tgv2d.tiling(100000, "float32", 48, UB_A2)
    td = tiling.hard_sigmoid_grad(100000, "float32", soc="Ascend950PR")   # 64 AIV, 248 KB (§6)
    assert (td.blockDim, td.ubFactor) == (64, 7936)
    with pytest.raises(ValueError, match="unknown SoC"):
        tiling.relu_grad(10, "float32", soc="Ascend999")

"""Host-visible numbers as CANN reports them (kernel_flavours §6): the UB a tiling sees, the workspace an
executor asks for, the engine of each Cast, and a graph without a broadcast node."""

from __future__ import annotations

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import tiling
from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.base import platform
from ascend_lab.base.platform import NpuArch
from ascend_lab.opdev.cast_engine import cast_engine

MiB = 1024 * 1024


def room(nbytes: int) -> int:
    """CANN's MaxAllocator size of one tensor: roundUp(bytes + 32, 512) (§6)."""
    return -(-(nbytes + 32) // 512) * 512


# --- UB as the tiling sees it ------------------------------------------------------------------------------
@pytest.mark.parametrize("soc, seen", [("Ascend910B1", 196352), ("Ascend910B4", 196352), ("Ascend910_9392", 196352),
                                       ("Ascend910A", 262144), ("Ascend310P3", 262144), ("Ascend950PR", 253952)])
def test_get_core_mem_size_ub(soc, seen):
    # 256 B (LOCAL_RESERV_SIZE) held back on ASCEND910B-class SoCs, which the string Ascend910_93 maps to
    info = platform.get_soc(soc)
    assert info.core_mem_size_ub == seen
    assert info.ub_size - info.core_mem_size_ub in (0, 256)


def test_threshold_grad_int32_1e6_on_910b4_sees_196352():
    # tileBlocks = (196352 / 256) / 8 = 95 (767 blocks / 8, floored); tileDataNum = 95 * 256 / 4 = 6080
    td = tiling.threshold_grad_v2_d(10**6, "int32", soc="Ascend910B4")
    assert td.tileDataNum == 6080
    assert tiling.threshold_grad_v2_d(10**6, "int32", core_num=40, ub_size=196608).tileDataNum == 6144
    g = np.ones(1000, np.int32)
    run = al.threshold_backward(g, g, 0.5, soc="Ascend910B4", kernel="experimental")
    assert run.status == 0 and run.tiling.tileDataNum == td.tileDataNum


# --- workspace -----------------------------------------------------------------------------------------------
def test_workspace_with_a_16_mib_kernel_workspace():
    g = np.ones(1000, np.float32)
    run = al.threshold_backward(g, g, 0.5, soc="Ascend910B4", kernel="experimental")
    # the kernel's output (4000 B) and GetLibApiWorkSpaceSize (16 MiB on DAV_2201) live at the same node: 2 buckets
    assert run.workspace_size == room(4000) + room(16 * MiB) == 4096 + 16777728
    node = next(n for n in run.nodes if n.op == "ThresholdGradV2D")
    assert node.attrs["workspace"] == 16 * MiB


def test_workspace_2_mib_outside_2201_and_3510():
    g = np.ones(1000, np.float32)
    run = al.threshold_backward(g, g, 0.5, soc="Ascend910A", kernel="tbe")
    assert run.status == 0
    assert platform.lib_api_workspace_size(platform.get_soc("Ascend910A")) == 2 * MiB
    assert platform.lib_api_workspace_size(platform.get_soc("Ascend950PR")) == 16 * MiB


def test_workspace_buckets_reuse_dead_tensors():
    # grad strided f32 -> Contiguous (A, 2000 B), self strided f16 -> Contiguous (B, 1000 B) -> Cast f32 (C),
    # kernel output (D). Lifetimes: A nodes 0-3, B 1-2, C 2-3, D 3-4. B and C overlap at node 2 and A overlaps
    # everything up to 3, so D can only join B's bucket: 3 buckets of 2048 B each.
    g = np.ones(1000, np.float32)[::2]
    x = np.ones(1000, np.float16)[::2]
    run = al.hardsigmoid_backward(g, x, soc="Ascend910B4")
    assert run.graph == ["Contiguous", "Contiguous", "Cast", "HardSigmoidGrad", "ViewCopy"]
    assert run.workspace_size == 3 * room(2000)


# --- Cast engines ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src, dst, engines", [
    # (src, dst, {arch: engine}) from kernel_flavours §6's table
    (DT.ACL_FLOAT16, DT.ACL_FLOAT, {1001: "AICORE", 2002: "AICORE", 2201: "AICORE", 3510: "AICORE"}),
    (DT.ACL_FLOAT, DT.ACL_BF16, {1001: "AICPU", 2002: "AICPU", 2201: "AICORE", 3510: "AICORE"}),
    (DT.ACL_FLOAT16, DT.ACL_BF16, {1001: "AICPU", 2002: "AICPU", 2201: "AICORE", 3510: "AICORE"}),
    (DT.ACL_FLOAT, DT.ACL_DOUBLE, {1001: "AICPU", 2002: "AICPU", 2201: "AICPU", 3510: "AICPU"}),
    (DT.ACL_FLOAT, DT.ACL_COMPLEX64, {1001: "AICPU", 2201: "AICPU", 3510: "AICORE"}),
    (DT.ACL_FLOAT16, DT.ACL_COMPLEX32, {1001: None, 2201: None, 3510: "AICORE"}),
    (DT.ACL_FLOAT, DT.ACL_COMPLEX32, {1001: None, 2201: None, 3510: None}),
])
def test_cast_engine_table(src, dst, engines):
    for arch, engine in engines.items():
        assert cast_engine(src, dst, NpuArch(arch)) == engine, (src.name, dst.name, arch)


def test_cast_nodes_carry_their_engine_and_a_missing_one_is_561103():
    g32, x16 = np.ones(8, np.float32), np.ones(8, np.float16)
    run = al.hardsigmoid_backward(g32, x16, soc="Ascend910A")
    cast = next(n for n in run.nodes if n.op == "Cast")
    assert cast.attrs["engine"] == "AICORE"
    bf = np.ones(8, al.dtypes.bfloat16)
    run = al.hardsigmoid_backward(g32, bf, soc="Ascend910B4", out_dtype="float16")
    assert {n.attrs["engine"] for n in run.nodes if n.op == "Cast"} == {"AICORE"}
    # float32 -> complex64 passes CanCast; on 910B no AI Core Cast takes the pair, so the AI CPU kernel does (§6)
    run = al.hardsigmoid_backward(g32, g32, soc="Ascend910B4", out_dtype="complex64")
    assert run.status == 0 and [n.attrs["engine"] for n in run.nodes if n.op == "Cast"] == ["AICPU"]


# --- no broadcast node ------------------------------------------------------------------------------------------
def test_a_broadcast_call_reaches_the_kernel_as_in_cann():
    g = np.linspace(-1, 1, 4, dtype=np.float32).reshape(4, 1)
    x = np.linspace(-2, 2, 4000, dtype=np.float32).reshape(4, 1000)
    run = al.threshold_backward(g, x, 0.5, soc="Ascend950PR")
    assert run.status == 0 and "BroadcastTo" not in run.graph
    node = next(n for n in run.nodes if n.op == "ThresholdGradV2D")
    assert [tuple(t.view_dims) for t in node.inputs] == [(4, 1), (4, 1000)]
    assert np.array_equal(run.out, np.where(x > np.float32(0.5), np.broadcast_to(g, x.shape), np.float32(0)))

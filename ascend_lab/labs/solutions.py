"""Reference solutions of the labs (spoilers!).

Each function has the name and signature of the skeleton in its lab notebook. They are written the way
the package's own operators are (``ops/*/op_api.py``, ``op_host.py``) -- procedural, in CANN's idiom --
while the checkers' oracles in the ``labN_*`` modules use other formulations (rule tables, runs of the
real package, searches and block-by-block simulations), so "the solution passes the checker" is a real
test. ``tests/test_labs.py`` runs every solution through its checker.
"""

from __future__ import annotations

from typing import Any

from ..acl.tensor import aclScalar, aclTensor
from ..acl.types import aclDataType as DT
from ..dtypes import as_acl_dtype, itemsize
from ..opdev.aclnn_common import OUT, ParamError, check_not_null
from ..opdev.data_type_utils import CanCast, PromoteType
from ..opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS
from ..opdev.l0_ops import broadcast_shape
from ..opdev.platform import NpuArch, SocVersion, current_soc, get_soc
from ..opdev.tiling_data import TilingError, ceil_div, floor_align
from ..ops.threshold_grad_v2_d.op_host import ThresholdGradV2DTilingData

__all__ = ["hardsigmoid_dtype_plan", "softplus_backward_checks", "softplus_grad_tiling",
           "threshold_grad_512_tiling"]


# ==================================================================================================
# Lab 1: the checks of aclnnSoftplusBackward
# ==================================================================================================
SOFTPLUS_910_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
SOFTPLUS_910B_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)
MAX_SUPPORT_DIMS_NUMS = 8


def softplus_backward_checks(gradOutput: aclTensor | None, self: aclTensor | None,  # noqa: N803
                             beta: aclScalar | None, threshold: aclScalar | None,
                             gradInput: aclTensor | None, workspaceSize: Any = OUT,  # noqa: N803
                             executor: Any = OUT) -> int:
    """Phase-1 checks of aclnnSoftplusBackward, in the spec's order; returns the status code."""
    # 1. out-pointers, before anything else (OP_CHECK_COMM_INPUT)
    if workspaceSize is None or executor is None:
        return ACLNN_ERR_PARAM_NULLPTR
    # 2. nulls, in parameter order
    check_not_null("gradOutput", gradOutput)
    check_not_null("self", self)
    check_not_null("beta", beta)
    check_not_null("threshold", threshold)
    check_not_null("gradInput", gradInput)
    # 3. dtypes in the list of this SoC's architecture
    arch = current_soc().npu_arch
    support = SOFTPLUS_910B_DTYPES if arch in (NpuArch.DAV_2201, NpuArch.DAV_3510) else SOFTPLUS_910_DTYPES
    for name, t in (("gradOutput", gradOutput), ("self", self)):
        if t.GetDataType() not in support:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} dtype {t.GetDataType().name} is not supported")
    # 4. the promoted dtype must be castable to gradInput
    promote = PromoteType(gradOutput.GetDataType(), self.GetDataType())
    if not CanCast(promote, gradInput.GetDataType()):
        raise ParamError(ACLNN_ERR_PARAM_INVALID,
                         f"promote dtype {promote.name} can't cast to gradInput {gradInput.GetDataType().name}")
    # 5. beta must not be zero as the kernel will see it (a float)
    if beta.ToFloat() == 0:
        raise ParamError(ACLNN_ERR_PARAM_INVALID, "beta must not be 0")
    # 6. ranks
    for name, t in (("gradOutput", gradOutput), ("self", self), ("gradInput", gradInput)):
        if len(t.GetViewShape()) > MAX_SUPPORT_DIMS_NUMS:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} has more than {MAX_SUPPORT_DIMS_NUMS} dims")
    # 7-8. broadcasting
    shape = broadcast_shape(gradOutput.GetViewShape(), self.GetViewShape())
    if shape is None:
        raise ParamError(ACLNN_ERR_PARAM_INVALID, "gradOutput and self can not broadcast")
    if tuple(shape) != tuple(gradInput.GetViewShape()):
        raise ParamError(ACLNN_ERR_PARAM_INVALID, f"gradInput shape should be {list(shape)}")
    # 9. empty tensors pass the checks; phase 1 would now return workspace 0 without a graph
    return ACLNN_SUCCESS


# ==================================================================================================
# Lab 2: the dtype plan of aclnnHardsigmoidBackward
# ==================================================================================================
def hardsigmoid_dtype_plan(grad_dtype: Any, self_dtype: Any, out_dtype: Any, soc: str) -> Any:
    """Predict status, promote dtype, kernel compute dtype and Cast nodes of aclnnHardsigmoidBackward."""
    from .lab2_dtypes import DtypePlan

    g, s, o = as_acl_dtype(grad_dtype), as_acl_dtype(self_dtype), as_acl_dtype(out_dtype)
    info = get_soc(soc)
    # GetDtypeSupportList: SocVersion in the enum range [ASCEND910B, ASCEND910E], or a regbase SoC
    version = info.soc_version
    wide = SocVersion.ASCEND910B <= version <= SocVersion.ASCEND910E or info.npu_arch == NpuArch.DAV_3510
    support = (DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_FLOAT16) if wide else (DT.ACL_FLOAT, DT.ACL_FLOAT16)
    if g not in support or s not in support:
        return DtypePlan(ACLNN_ERR_PARAM_INVALID)
    promote = PromoteType(g, s)
    if not CanCast(promote, o):
        return DtypePlan(ACLNN_ERR_PARAM_INVALID)
    # the bf16 kernel (schMode 2) works in fp32 buffers; fp32 and fp16 compute natively
    compute = DT.ACL_FLOAT if promote == DT.ACL_BF16 else promote
    casts = []
    if g != promote:
        casts.append(("gradOutput", g, promote))
    if s != promote:
        casts.append(("self", s, promote))
    if o != promote:
        casts.append(("out", promote, o))
    return DtypePlan(ACLNN_SUCCESS, promote, compute, tuple(casts))


# ==================================================================================================
# Lab 3: SoftplusGrad tiling (HardSigmoidGrad style)
# ==================================================================================================
#: (bufferNum, typeSize): everything computes in fp32; fp32 has 6 queue buffers + betaX + exp + mask,
#: fp16/bf16 have 3 queue pairs (two 2-byte buffers fill one fp32 slot) + grad32 + betaX + exp + res + mask.
SOFTPLUS_UB_SPLIT = {DT.ACL_FLOAT: (9, 4), DT.ACL_FLOAT16: (8, 4), DT.ACL_BF16: (8, 4)}
SOFTPLUS_SCH_MODE = {DT.ACL_FLOAT: 0, DT.ACL_FLOAT16: 1, DT.ACL_BF16: 2}
UB_REPEAT_ALIGN = 64      # elements: one 256-byte repeat of fp32
GM_BLOCK = 32             # bytes


def softplus_grad_tiling(total_length: int, dtype: Any, core_num: int, ub_size: int,
                         beta: float = 1.0, threshold: float = 20.0) -> Any:
    """SoftplusGrad host tiling: blockFactor / blockDim / ubFactor, as HardSigmoidGrad's arch35 tiling."""
    from .lab3_tiling import SoftplusGradTilingData

    dt = as_acl_dtype(dtype)
    if dt not in SOFTPLUS_UB_SPLIT:
        raise TilingError(f"SoftplusGrad has no kernel for {dt.short}")
    if core_num == 0:
        raise TilingError("core_num is 0")
    if total_length == 0:
        return SoftplusGradTilingData(totalLength=0, blockFactor=0, ubFactor=0, beta=0.0, threshold=0.0,
                                      blockDim=1, tilingKey=0)
    block_align = GM_BLOCK // itemsize(dt)
    block_factor = ceil_div(ceil_div(total_length, core_num), block_align) * block_align
    block_dim = ceil_div(total_length, block_factor)
    buffer_num, type_size = SOFTPLUS_UB_SPLIT[dt]
    ub_factor = floor_align((ub_size // type_size) // buffer_num, UB_REPEAT_ALIGN)
    if ub_factor == 0:
        raise TilingError(f"ub_size {ub_size} B is too small for {UB_REPEAT_ALIGN} elements")
    return SoftplusGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                  beta=beta, threshold=threshold, blockDim=block_dim,
                                  tilingKey=SOFTPLUS_SCH_MODE[dt])


# ==================================================================================================
# Lab 4: ThresholdGradV2D-style big/small-core tiling with 512-byte blocks
# ==================================================================================================
BLOCK_SIZE_512 = 512
TG512_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT32, DT.ACL_INT8, DT.ACL_UINT8)
UB_NUM_F32_F16, UB_NUM_INT32, UB_NUM_BF16, UB_NUM_INT8_UINT8 = 8, 9, 11, 16


def threshold_grad_512_tiling(input_num: int, dtype: Any, core_num: int, ub_size: int,
                              threshold: float = 1.0) -> ThresholdGradV2DTilingData:
    """ThresholdGradV2D's experimental tiling (cann_facts §4.1) with 512-byte blocks and new UB numbers."""
    dt = as_acl_dtype(dtype)
    if dt not in TG512_DTYPES:
        raise TilingError(f"no kernel for {dt.short}")
    if core_num == 0:
        raise TilingError("core_num is 0")
    if input_num == 0:
        raise TilingError("inputNum is 0")
    if dt in (DT.ACL_FLOAT, DT.ACL_FLOAT16):
        ub_data_number = UB_NUM_F32_F16
    elif dt == DT.ACL_INT32:
        ub_data_number = UB_NUM_INT32
    elif dt == DT.ACL_BF16:
        ub_data_number = UB_NUM_BF16
    else:
        ub_data_number = UB_NUM_INT8_UINT8
    input_bytes = itemsize(dt)
    tile_block_num = (ub_size // BLOCK_SIZE_512) // ub_data_number
    if tile_block_num == 0:
        raise TilingError(f"ub_size {ub_size} B gives no block per tile")
    tile_data_num = tile_block_num * BLOCK_SIZE_512 // input_bytes
    input_length_align = ceil_div(input_num * input_bytes, BLOCK_SIZE_512) * BLOCK_SIZE_512
    if tile_data_num >= input_num:
        core_num = 1
    else:
        core_num = min(core_num, input_length_align // BLOCK_SIZE_512)
    per_core_blocks, tail_block_num = divmod(input_length_align // BLOCK_SIZE_512, core_num)

    small_core_data_num = per_core_blocks * BLOCK_SIZE_512 // input_bytes
    small_tile_num = per_core_blocks // tile_block_num
    final_small_tile_num = small_tile_num + (1 if per_core_blocks % tile_block_num else 0)
    small_tail_data_num = small_core_data_num - tile_data_num * small_tile_num
    small_tail_data_num = small_tail_data_num or tile_data_num

    per_core_blocks += 1
    big_core_data_num = per_core_blocks * BLOCK_SIZE_512 // input_bytes
    big_tile_num = per_core_blocks // tile_block_num
    final_big_tile_num = big_tile_num + (1 if per_core_blocks % tile_block_num else 0)
    big_tail_data_num = big_core_data_num - tile_data_num * big_tile_num
    big_tail_data_num = big_tail_data_num or tile_data_num

    return ThresholdGradV2DTilingData(
        smallCoreDataNum=small_core_data_num, bigCoreDataNum=big_core_data_num,
        finalBigTileNum=final_big_tile_num, finalSmallTileNum=final_small_tile_num, tileDataNum=tile_data_num,
        smallTailDataNum=small_tail_data_num, bigTailDataNum=big_tail_data_num, tailBlockNum=tail_block_num,
        threshold=threshold, blockDim=core_num, tilingKey=0)

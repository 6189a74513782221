"""Reference solutions of the labs (spoilers!).

Each function has the name and signature of the skeleton in its lab notebook. They are written the way
the package's own operators are (``ops/*/op_api.py``, ``op_host.py``) -- procedural, in CANN's idiom --
while the checkers' oracles in the ``labN_*`` modules use other formulations (rule tables, runs of the
real package, searches and block-by-block simulations), so "the solution passes the checker" is a real
test. ``tests/test_labs.py`` runs every solution through its checker.
"""

from __future__ import annotations

from typing import Any

from ascend_lab import atvoss
from ascend_lab.acl.tensor import aclScalar, aclTensor
from ascend_lab.acl.types import aclDataType as DT
from ascend_lab.ascendc import (
    CMPMODE,
    launch,
    reserved_ub_bytes,
)
from ascend_lab.base.platform import NpuArch, SocVersion, current_soc, get_soc
from ascend_lab.dtypes import as_acl_dtype, itemsize
from ascend_lab.opdev import l0_ops
from ascend_lab.opdev.aclnn_common import OUT, CommonOpExecutorRun, ParamError, check_not_null, guard_phase1
from ascend_lab.opdev.data_type_utils import CanCast, PromoteType
from ascend_lab.opdev.errno import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS
from ascend_lab.opdev.executor import L0Node, aclOpExecutor
from ascend_lab.opdev.l0_ops import broadcast_shape
from ascend_lab.opdev.tiling_data import TilingData, TilingError, ceil_div, float32, floor_align, int64
from ascend_lab.ops.common.kernel_args import gm_arg
from ascend_lab.ops.threshold_grad_v2_d.op_host import ThresholdGradV2DTilingData

__all__ = ["KernelHardswishGrad",
           "KernelLeakyReluGrad", "KernelSoftshrinkGrad", "SoftshrinkGrad", "SoftshrinkGradTilingData",
           "aclnnSoftshrinkBackward", "aclnnSoftshrinkBackwardGetWorkspaceSize", "double_buffering", "fix_round",
           "hardsigmoid_dtype_plan", "hardswish_grad_tiling", "overlap", "prelu_grad_update_dag",
           "row_threshold", "row_threshold_tiling", "softplus_backward_checks", "softplus_grad_tiling",
           "softshrink_backward", "softshrink_grad", "softshrink_grad_tiling", "speedup", "threshold_grad_512_tiling"]


# ==================================================================================================
# Lab 1: the checks of aclnnSoftplusBackward
# ==================================================================================================
SOFTPLUS_910_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
SOFTPLUS_910B_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)
MAX_SUPPORT_DIMS_NUMS = 8


def softplus_backward_checks(gradOutput: aclTensor | None, self: aclTensor | None,
                             beta: aclScalar | None, threshold: aclScalar | None,
                             gradInput: aclTensor | None, workspaceSize: Any = OUT,
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
    # Which kernel runs: a stock CANN install runs the ops-nn main-tree AscendC kernel on Ascend950 (regbase)
    # and the built-in TBE kernel on 910A/910B/910_93/310P. The main kernel casts fp16 and bf16 tiles to
    # float and computes in fp32; TBE computes fp32 and fp16 natively (alpha converted to half) and only
    # takes bf16 through fp32.
    main_kernel = info.npu_arch == NpuArch.DAV_3510
    compute = DT.ACL_FLOAT if promote == DT.ACL_BF16 or main_kernel else promote
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


def variant_bytes_per_element(dt: DT) -> int:
    """The bytes the 512-byte variant's Init lays out per element of a tile of T (lab 4's page lists its
    InitBuffer calls): three queues of BUFFER_NUM = 2 tiles of T, two 1-byte masks, Select's staging tile of T,
    and the temporaries of the dtypes the vector unit cannot compare directly, at their own types' sizes."""
    size = itemsize(dt)
    queues = 3 * 2 * size
    masks = 2 * 1
    select = size
    temps = {DT.ACL_BF16: 4, DT.ACL_INT32: 4, DT.ACL_INT8: 2 + 4, DT.ACL_UINT8: 2 + 4}.get(dt, 0)
    return queues + masks + select + temps


def threshold_grad_512_tiling(input_num: int, dtype: Any, core_num: int, ub_size: int,
                              threshold: float = 1.0) -> ThresholdGradV2DTilingData:
    """ThresholdGradV2D's experimental tiling (cann_facts §4.1) with 512-byte blocks, and ubDataNumber worked
    out from the variant kernel's UB plan."""
    dt = as_acl_dtype(dtype)
    if dt not in TG512_DTYPES:
        raise TilingError(f"no kernel for {dt.short}")
    if core_num == 0:
        raise TilingError("core_num is 0")
    if input_num == 0:
        raise TilingError("inputNum is 0")
    input_bytes = itemsize(dt)
    # the fewest tile-sized slices (tileDataNum * sizeof(T) bytes each) that hold everything Init lays out
    ub_data_number = ceil_div(variant_bytes_per_element(dt), input_bytes)
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


# ==================================================================================================
# Lab 5: CopyIn / Compute / CopyOut of LeakyReluGrad
# ==================================================================================================
def _cxx_reference(name: str, file: str) -> Any:
    """A kernel lab's reference solution: its C++ (``labkit/reference/``), compiled as a learner's cell is."""
    from .lab5_copy_compute import REFERENCE_DIR, compile_kernel

    kernel = compile_kernel(REFERENCE_DIR / file)
    kernel.reference_name = name
    return kernel


BUFFER_NUM = 2
REPEAT_BYTES = 256
#: Lab 5's reference: labkit/reference/lab5_leaky_relu_grad.cpp (double-buffered; DataCopyPad of exactly n
#: elements; CompareScalar over n rounded up to whole 256-byte repeats; Muls, CompareScalar GT 0, Select mode 2).
KernelLeakyReluGrad = _cxx_reference("KernelLeakyReluGrad", "lab5_leaky_relu_grad.cpp")


# ==================================================================================================
# Lab 6: a reviewer's table -- what each bug of the family looks like in the kernel, and its fix.
# A round's report points at one row: ub-overflow at InitBuffer (bytes twice), misaligned-copy at DataCopy,
# alloc-exhausted at the third AllocTensor of a queue (its FreeTensor is missing), gm-out-of-bounds at the first
# copy of the last core (the GM offset counted in bytes), ub-overrun at CompareScalar on a large tile (the mask
# buffer has a fixed size), partial-repeat at CompareScalar (its count is not whole repeats); with the sanitizer
# off, the wrong elements and the tile's trace: x equal to a bound (GE/LE), everything 0 (a bound from the other
# attribute), a short last tile written at the wrong place (i * n), or a tail of stale mask bits (the count again).
# ==================================================================================================
_LAB6_FIXES = (
    (r"tileBytes \* sizeof\(T\)", "tileBytes"),                           # InitBuffer takes bytes: tileBytes is
    (r"DataCopy\((\w+), (\w+Gm\[i \* ubFactor\]), n\);", r"DataCopyPad(\1, \2, params, pad);"),
    (r"DataCopy\((gradInputGm\[i \* ubFactor\]), out, n\);", r"DataCopyPad(\1, out, params);"),
    (r"td\.blockFactor \* blockIdx \* sizeof\(T\)", "td.blockFactor * blockIdx"),   # GlobalTensor<T> counts in T
    (r"int64_t maskBytes = \d+;", "int64_t maskBytes = ((ubFactor + 7) / 8 + 31) / 32 * 32;"),
    (r"(CMPMODE::\w+), n\);", r"\1, nAligned);"),                           # CompareScalar: whole repeats
    (r"CMPMODE::GE", "CMPMODE::GT"), (r"CMPMODE::LE", "CMPMODE::LT"),         # the bounds give 0
    (r"maxVal = static_cast<T>\(td\.minVal\)", "maxVal = static_cast<T>(td.maxVal)"),
    (r"minVal = static_cast<T>\(td\.maxVal\)", "minVal = static_cast<T>(td.minVal)"),
    (r"gradInputGm\[i \* n\]", "gradInputGm[i * ubFactor]"),                # a tile starts at i * ubFactor
)
#: Every block a queue hands out goes back: the FreeTensor lines of Compute and CopyOut, after the line they follow.
_LAB6_FREES = (("inQueueGrad.FreeTensor(grad);", "outQueue.EnQue(out);"),
               ("inQueueSelf.FreeTensor(x);", "inQueueGrad.FreeTensor(grad);"),
               ("outQueue.FreeTensor(out);", "DataCopyPad(gradInputGm[i * ubFactor], out, params);"))


def fix_round(rnd: Any) -> Any:
    """Lab 6: the fixed kernel of round ``rnd`` -- its source with the bug's line fixed (or its missing FreeTensor
    put back), compiled. The fix keeps every other line, as the check asks."""
    import re

    from .lab5_copy_compute import REFERENCE_DIR, compile_kernel

    text = rnd.source
    for pattern, fixed in _LAB6_FIXES:
        text = re.sub(pattern, fixed, text)
    lines = text.split("\n")
    for line, after in _LAB6_FREES:
        if not any(x.strip() == line for x in lines):
            at = next(i for i, x in enumerate(lines) if x.strip() == after)
            lines.insert(at + 1, lines[at][: len(lines[at]) - len(lines[at].lstrip())] + line)
    kernel = compile_kernel("\n".join(lines), name=str(REFERENCE_DIR / f"lab6_round{rnd.number}_fixed.cpp"))
    kernel.reference_name = "fix_round"
    return kernel


# ==================================================================================================
# Lab 7: double buffering, measured
# ==================================================================================================
def _lab7() -> Any:
    from . import lab7_double_buffer
    return lab7_double_buffer


#: Lab 7's reference: labkit/reference/lab7_hardswish_grad.cpp, the single-buffered kernel with BUFFER_NUM = 2.
#: Nothing else changes -- the queues' flags already order MTE2, V and MTE3 for any number of blocks.
KernelHardswishGrad = _cxx_reference("KernelHardswishGrad", "lab7_hardswish_grad.cpp")


def hardswish_grad_tiling(total_length: int, dtype: Any, core_num: int, ub_size: int) -> Any:
    """HardswishGrad tiling for the double-buffered kernel: 3 queues x 2 blocks + tmpBuf + maskBuf."""
    lab7 = _lab7()
    dt = as_acl_dtype(dtype)
    size = itemsize(dt)
    ub_slots = 3 * 2 + 2                        # was 3 * 1 + 2 for one block per queue
    block_factor = ceil_div(total_length, core_num)
    ub_factor = floor_align((ub_size // size) // ub_slots, 256 // size)
    return lab7.HardswishGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                        blockDim=ceil_div(total_length, block_factor),
                                        tilingKey=0 if dt == DT.ACL_FLOAT else 1)


def speedup(trace_single: Any, trace_double: Any) -> float:
    """duration(single) / duration(double); a trace lasts until its last MTE2/V/MTE3 event ends."""
    def duration(trace: Any) -> float:
        return max((e.end for e in trace.events if e.pipe in ("MTE2", "V", "MTE3")), default=0.0)
    return duration(trace_single) / duration(trace_double)


def overlap(trace: Any) -> float:
    """Share of V busy time spent while MTE2 copies in another tile (of the same core)."""
    busy = overlapped = 0.0
    for core in sorted({e.core for e in trace.events}):
        vector, copy_in, last = [], [], None
        for e in trace.events:
            if e.core != core:
                continue
            if e.pipe == "V":
                tile = e.tile if e.tile is not None else last      # an untiled V event: the tile before it
                last = tile
                vector.append((e.start, e.end, tile))
            elif e.pipe == "MTE2":
                copy_in.append((e.start, e.end, e.tile))
        for v_start, v_end, v_tile in vector:
            busy += v_end - v_start
            for m_start, m_end, m_tile in copy_in:
                if m_tile != v_tile:
                    overlapped += max(0.0, min(v_end, m_end) - max(v_start, m_start))
    return overlapped / busy if busy else 0.0


def double_buffering() -> dict[str, Any]:
    """The pieces of lab 7, for ``lab7.check``."""
    return {"kernel": KernelHardswishGrad, "tiling": hardswish_grad_tiling, "speedup": speedup, "overlap": overlap}


# ==================================================================================================
# Lab 8: aclnnSoftshrinkBackward, end to end
# ==================================================================================================
SOFTSHRINK_API = "aclnnSoftshrinkBackwardGetWorkspaceSize"
SOFTSHRINK_API2 = "aclnnSoftshrinkBackward"
SOFTSHRINK_910B_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)
SOFTSHRINK_910_DTYPES = (DT.ACL_FLOAT, DT.ACL_FLOAT16)
#: (bufferNum, typeSize): 3 double-buffered queues + the mask; bf16 adds x in fp32 (typeSize 4).
SOFTSHRINK_UB_SPLIT = {DT.ACL_FLOAT: (7, 4), DT.ACL_FLOAT16: (7, 2), DT.ACL_BF16: (6, 4)}
SOFTSHRINK_SCH_MODE = {DT.ACL_FLOAT: 0, DT.ACL_FLOAT16: 1, DT.ACL_BF16: 2}


class SoftshrinkGradTilingData(TilingData):
    """``SoftshrinkGradTilingData`` (3 x int64 + 1 x float, padded to 32 bytes)."""

    totalLength: int64
    blockFactor: int64
    ubFactor: int64
    lambd: float32


def softshrink_grad_tiling(total_length: int, dtype: Any, core_num: int, ub_size: int,
                           lambd: float) -> SoftshrinkGradTilingData:
    """SoftshrinkGrad host tiling, HardSigmoidGrad's scheme; ``ub_size`` is the usable UB."""
    dt = as_acl_dtype(dtype)
    if dt not in SOFTSHRINK_UB_SPLIT:
        raise TilingError(f"SoftshrinkGrad has no {dt.short} kernel")
    if core_num <= 0:
        raise TilingError("core_num is 0")
    if total_length <= 0:
        raise TilingError("an empty input is never tiled")
    buffer_num, type_size = SOFTSHRINK_UB_SPLIT[dt]
    ub_factor = floor_align((ub_size // type_size) // buffer_num, 256 // type_size)
    if ub_factor <= 0:
        raise TilingError(f"ub_size {ub_size} B cannot hold one 256-byte repeat per buffer")
    block_factor = ceil_div(total_length, core_num)
    return SoftshrinkGradTilingData(totalLength=total_length, blockFactor=block_factor, ubFactor=ub_factor,
                                    lambd=lambd, blockDim=ceil_div(total_length, block_factor),
                                    tilingKey=SOFTSHRINK_SCH_MODE[dt])


#: Lab 8's kernel: labs/labkit/reference/lab8_softshrink_grad.cpp (template <uint32_t schMode> entry: 0 float, 1 half,
#: 2 bfloat16 compared in fp32 with grad's bits selected as half). The L0 op below launches it with schMode.
softshrink_grad = _cxx_reference("softshrink_grad", "lab8_softshrink_grad.cpp")
KernelSoftshrinkGrad = softshrink_grad


def SoftshrinkGrad(grad: aclTensor, x: aclTensor, lambd: Any, executor: aclOpExecutor) -> aclTensor:
    """``l0op::SoftshrinkGrad``: infer the output, tile now (phase 1), launch in phase 2."""
    out = executor.alloc_tensor(tuple(x.GetViewShape()), x.GetDataType(), name="grad_input")
    soc = current_soc()
    td = softshrink_grad_tiling(x.Size(), x.GetDataType(), soc.vector_core_num,
                                soc.ub_size - reserved_ub_bytes(soc), float(lambd))
    node = L0Node("SoftshrinkGrad", [grad, x], [out], {"lambd": float(lambd), "tiling": td, "soc": soc.name},
                  why="the AI Core kernel: out = |x| > lambd ? grad : 0")

    def run() -> None:
        args = [gm_arg(grad, "gradOutput"), gm_arg(x, "self"), gm_arg(out, "gradInput")]
        executor.kernel_runs.append(launch(softshrink_grad, td.blockDim, args, td.to_bytes(), soc, outputs=(2,),
                                           kernel_name="SoftshrinkGrad", tiling_data=td, schMode=td.tilingKey))

    node.run = run
    executor.add(node)
    return out


@guard_phase1(SOFTSHRINK_API)
def aclnnSoftshrinkBackwardGetWorkspaceSize(gradOutput: aclTensor | None, self: aclTensor | None,
                                            lambd: aclScalar | None, gradInput: aclTensor | None,
                                            workspaceSize: Any = OUT, executor: Any = OUT
                                            ) -> tuple[int, int, aclOpExecutor | None]:
    """Phase 1: the checks in the spec's order, then Contiguous -> Cast -> SoftshrinkGrad -> Cast -> ViewCopy."""
    if workspaceSize is None or executor is None:
        raise ParamError(ACLNN_ERR_PARAM_NULLPTR,
                         f"{'workspaceSize' if workspaceSize is None else 'executor'} should not be nullptr.")
    exe = aclOpExecutor(SOFTSHRINK_API2)
    check_not_null("gradOutput", gradOutput)
    check_not_null("self", self)
    check_not_null("lambd", lambd)
    check_not_null("gradInput", gradInput)
    arch = current_soc().npu_arch
    support = SOFTSHRINK_910B_DTYPES if arch in (NpuArch.DAV_2201, NpuArch.DAV_3510) else SOFTSHRINK_910_DTYPES
    for name, t in (("gradOutput", gradOutput), ("self", self)):
        if t.GetDataType() not in support:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} dtype {t.GetDataType().short} is not supported on "
                                                      f"{current_soc().name}")
    promote = PromoteType(gradOutput.GetDataType(), self.GetDataType())
    if not CanCast(promote, gradInput.GetDataType()):
        raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{promote.short} cannot be cast to gradInput's "
                                                  f"{gradInput.GetDataType().short}")
    lam = lambd.ToFloat()
    if lam < 0:
        raise ParamError(ACLNN_ERR_PARAM_INVALID, f"lambd should be >= 0, but got {lam}")
    for name, t in (("gradOutput", gradOutput), ("self", self), ("gradInput", gradInput)):
        if len(t.GetViewShape()) > MAX_SUPPORT_DIMS_NUMS:
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} has {len(t.GetViewShape())} dims, at most 8")
    for name, t in (("gradOutput", gradOutput), ("gradInput", gradInput)):
        if tuple(t.GetViewShape()) != tuple(self.GetViewShape()):
            raise ParamError(ACLNN_ERR_PARAM_INVALID, f"{name} shape {list(t.GetViewShape())} differs from self "
                                                      f"{list(self.GetViewShape())}")
    if gradOutput.IsEmpty() or self.IsEmpty() or gradInput.IsEmpty():
        return ACLNN_SUCCESS, 0, exe
    g = l0_ops.Cast(l0_ops.Contiguous(gradOutput, exe), promote, exe)
    s = l0_ops.Cast(l0_ops.Contiguous(self, exe), promote, exe)
    y = SoftshrinkGrad(g, s, lam, exe)
    y = l0_ops.Cast(y, gradInput.GetDataType(), exe)
    l0_ops.ViewCopy(y, gradInput, exe)
    return ACLNN_SUCCESS, exe.GetWorkspaceSize(), exe


def aclnnSoftshrinkBackward(workspace: Any, workspaceSize: int, executor: Any, stream: Any) -> int:
    """Phase 2: run the executor's graph on the stream."""
    return CommonOpExecutorRun(SOFTSHRINK_API2, workspace, workspaceSize, executor, stream)


def softshrink_backward() -> dict[str, Any]:
    """The operator's pieces, for ``lab8.check``."""
    return {"TilingData": SoftshrinkGradTilingData, "tiling": softshrink_grad_tiling, "kernel": softshrink_grad,
            "GetWorkspaceSize": aclnnSoftshrinkBackwardGetWorkspaceSize, "Run": aclnnSoftshrinkBackward}


# ==================================================================================================
# Lab 9: PReluGradUpdate as a DAG on the atvoss template
# ==================================================================================================
def prelu_grad_update_dag(T: Any) -> Any:
    """``PReluGradUpdateDAG<T>`` with the template's generic nodes, computed in T.

    dx = x > 0 ? grads : weights * grads; update = x > 0 ? 0 : x * grads. No Cast: each result is one product of
    two T values rounded once to T (or a copy), so float compute would change no bit and only cost UB. The mask
    and the zero tile are declared once and shared by both outputs; each Mul sits right before the Select that
    reads it, so at most three computed tiles are live (BufferNum 2*3 + 2*2 + 3 = 13)."""
    grads = atvoss.CopyInBrc(atvoss.In(0, T), name="CopyInBrc grads")
    x = atvoss.CopyInBrc(atvoss.In(1, T), name="CopyInBrc features")
    weights = atvoss.CopyInBrc(atvoss.In(2, T), name="CopyInBrc weights")
    zero = atvoss.Duplicate(T, 0.0, name="Duplicate 0")
    positive = atvoss.Compare(x, zero, CMPMODE.GT, name="Compare GT(features, 0)")
    dx = atvoss.Select(positive, grads, atvoss.Mul(weights, grads, name="weights * grads"), name="Select dx")
    update = atvoss.Select(positive, zero, atvoss.Mul(x, grads, name="features * grads"), name="Select update")
    return atvoss.Dag([atvoss.CopyOut(0, dx), atvoss.CopyOut(1, update)], f"PReluGradUpdateDag<{grads.dtype.name}>")



# ==================================================================================================
# Lab 10: the int8 ThresholdGradV2D kernel on Ascend910B4, from the tiling and the dtype rules
# ==================================================================================================
#: Lab 10's reference: labkit/reference/lab10_threshold_grad_int8.cpp (int8 widened to half, CompareScalar GT
#: against floor(threshold) clamped into [-129, 128] and held exactly in half, Select mode 1 with 0, Cast back).
KernelThresholdGradV2DInt8 = _cxx_reference("KernelThresholdGradV2DInt8", "lab10_threshold_grad_int8.cpp")


# ==================================================================================================
# Lab 11: BUFFER_NUM and the tile size of HardSigmoidGrad float16 on Ascend950PR
# ==================================================================================================
def choose_plan(n: int) -> tuple[int, int]:
    """(BUFFER_NUM, ubFactor) for HardSigmoidGrad float16 on Ascend950PR's 64 cores.

    BUFFER_NUM 2: with one block per queue the pipes take turns; two let MTE2 fetch tile i+1 while V computes
    tile i, and a third or fourth block overlaps nothing more (MTE2 is already busy all the time) but costs UB.
    The tile: a core's time is about share * k (the bottleneck pipe streaming its bytes) + tiles * c (fixed costs
    per tile) + u * a (the fill and drain: one tile's copy-in before V can start, its compute and copy-out after
    MTE2 ends), least at u = sqrt(c * share / a) -- in this cost model a few thousand halves for these shares, far
    below the 16 KB per transfer (8192 halves) the hardware guidance asks for. So the floor binds: the shortest
    legal tile, 8192 halves (a whole number of 256-byte repeats and 512-byte bursts). A share shorter than that is
    one tile whatever the plan says."""
    return 2, 8192



# ==================================================================================================
# Lab 12: a threshold broadcast along the rows (RowThresholdGrad), C++ kernel + host tiling
# ==================================================================================================
def _row_plan_bytes(tile_rows: int, cols: int, size: int) -> int:
    """The UB the reference kernel's Init lays out for a tile of ``tile_rows`` rows: grad, x and out queues of two
    blocks of tile_rows x cols elements, a threshold queue of two 32-byte-aligned blocks of tile_rows elements, and a
    mask of one bit per column."""
    rows_bytes = tile_rows * cols * size
    thr_bytes = ceil_div(tile_rows * size, 32) * 32
    mask_bytes = ceil_div(ceil_div(cols, 8), 32) * 32
    return 3 * 2 * rows_bytes + 2 * thr_bytes + mask_bytes


def row_threshold_tiling(rows: int, cols: int, dtype: Any, core_num: int, ub_size: int) -> Any:
    """Split the broadcast axis: whole rows per core, as even as the cores allow; per tile as many whole rows as the
    double-buffered plan fits in the UB (a core's last tile has the rows left)."""
    from .lab12_broadcast import RowThresholdTilingData

    size = itemsize(as_acl_dtype(dtype))
    rows_per_core = ceil_div(rows, min(core_num, rows))
    block_dim = ceil_div(rows, rows_per_core)
    tile_rows = max(1, (ub_size - 64) // (6 * cols * size + 2 * size))
    while tile_rows > 1 and _row_plan_bytes(tile_rows, cols, size) > ub_size:
        tile_rows -= 1
    return RowThresholdTilingData(rows=rows, cols=cols, rowsPerCore=rows_per_core,
                                  tileRows=min(tile_rows, rows_per_core), blockDim=block_dim, tilingKey=0)


#: Lab 12's kernel: labkit/reference/lab12_row_threshold.cpp.
KernelRowThreshold = _cxx_reference("KernelRowThreshold", "lab12_row_threshold.cpp")


def row_threshold() -> dict[str, Any]:
    """Lab 12's pieces for lab12.check."""
    return {"tiling": row_threshold_tiling, "kernel": KernelRowThreshold}



# Every function and method above is out of reach of a learner's code during a check (checker.guard_references).
from .checker import guard_references  # noqa: E402  (after the definitions it guards)

guard_references(globals())

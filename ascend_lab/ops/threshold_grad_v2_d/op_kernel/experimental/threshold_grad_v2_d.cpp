// ascend_lab -- the experimental ThresholdGradV2D AscendC kernel (custom package, registered for ascend910b).
//
// Written for ascend_lab after the structure of ops-nn
// experimental/activation/threshold_grad_v2_d/op_kernel/{threshold_grad_v2_d.cpp, .h, _tiling_data.h,
// _tiling_key.h} (cann_facts.md 4.2): the entry instantiates KernelThresholdGradV2D<DTYPE_INPUT_GRADIENT>
// (the build defines DTYPE_INPUT_GRADIENT from the op definition's input input_gradient). The first
// tailBlockNum cores are big (one 256-byte block more); each core runs tileNum tiles of tileDataNum
// elements, the last one tailDataNum long. Copies are plain DataCopy of whole 256-byte blocks, so the last
// core reads and writes up to 255 bytes past the logical end (gm-padding warnings in the trace).
// mask = CompareScalar(feature, threshold, GT); out = Select(mask ? grad : 0): float/half in T (half
// compares against half(threshold)); int32 and bf16 through fp32 and back with CAST_TRUNC / CAST_RINT;
// int8/uint8 through half and fp32 and back with CAST_TRUNC, the fp32 temp being a half-sized buffer
// (a ub-overrun warning, as in the source).
//
// It replaces, instruction for instruction, the Python kernel op_kernel/experimental.py
// (KernelThresholdGradV2D): same member names, UB plan, instructions, operands, scalars, counts, round modes
// and copies.
//
// Deviations from the ops-nn source, following the audited Python kernel and the C++ subset ascend_lab
// translates:
// * member names are the Python kernel's: outQueue (ops-nn outQueueout), maskBuf (ops-nn tmpQueueMask),
//   GM views gGm/fGm/outGm (ops-nn input_gradientGm/input_featureGm/output_backpropsGm);
// * BUFFER_NUM is a public static constexpr class member (ops-nn: a namespace-scope constexpr), so a launch
//   can override it;
// * Process runs tileNum tiles and shortens the last one inside the loop (the Python kernel's form); ops-nn
//   runs tileNum - 1 full tiles and then the tail after the loop. The same instructions whenever
//   tileNum >= 1, which the tiling guarantees for every launched core;
// * Compute dispatches with `if constexpr (std::is_same_v<...>)` over three groups (int32/bf16, int8/uint8,
//   float/half) with DeQue/AllocTensor/EnQue/FreeTensor once around them; ops-nn has six runtime
//   `if (std::is_same_v<...>)` branches, each with its own DeQue ... FreeTensor: the same calls in the
//   same order for every dtype;
// * the ASSERT(GetBlockNum() != 0) of Init is left out (the Python kernel has none; ASSERT is not in the
//   subset).

#include "threshold_grad_v2_d.h"

template <uint32_t schMode>
__global__ __aicore__ void threshold_grad_v2_d(GM_ADDR input_gradient, GM_ADDR input_feature,
                                               GM_ADDR output_backprops, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ThresholdGradV2DTilingData);
    GET_TILING_DATA_WITH_STRUCT(ThresholdGradV2DTilingData, tilingData, tiling);
    NsThresholdGradV2D::KernelThresholdGradV2D<DTYPE_INPUT_GRADIENT> op;
    op.Init(input_gradient, input_feature, output_backprops, tilingData.smallCoreDataNum, tilingData.bigCoreDataNum,
            tilingData.finalBigTileNum, tilingData.finalSmallTileNum, tilingData.tileDataNum,
            tilingData.smallTailDataNum, tilingData.bigTailDataNum, tilingData.tailBlockNum, tilingData.threshold);
    op.Process();
}

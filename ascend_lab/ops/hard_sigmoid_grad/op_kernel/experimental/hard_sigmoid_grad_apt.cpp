// ascend_lab -- the experimental HardSigmoidGrad AscendC kernel (arch35, registered for ascend950).
//
// Written for ascend_lab after the structure of ops-nn
// experimental/activation/hard_sigmoid_grad/op_kernel/{hard_sigmoid_grad_apt.cpp, arch35/*.h}
// (kernel_flavours.md section 1, cann_facts.md sections 2.3-2.4): a templated entry picks the class by the
// tiling key schMode (0 fp32, 1 fp16, 2 bf16); HardSigmoidGrad<T> computes float and half natively in T,
// HardSigmoidGradBf16 casts bf16 to fp32, computes there and casts back with CAST_ROUND. Each core takes
// min(blockFactor, totalLength - blockFactor * GetBlockIdx()) elements in tiles of ubFactor (a shorter
// last tile) through a double-buffered CopyIn -> Compute -> CopyOut pipeline with exact-length DataCopyPad.
//
// It replaces, instruction for instruction, the Python kernel op_kernel/experimental.py
// (KernelHardSigmoidGrad): same UB plan (InitBuffer order and sizes), same instructions, operands, scalars,
// counts (CompareScalar over whole 256-byte repeats), round modes and copies.
//
// Deviations from the ops-nn source, following the audited Python kernel:
// * queue/buffer members carry the Python kernel's names (inQueueGrad, inQueueSelf, outQueueGradInput,
//   tmpBuf, maskBuf, gradFp32Buf, selfFp32Buf; GM views gradGm, selfGm, gradInputGm) in both classes, since
//   the trace names each UB event after them; ops-nn names them gradOutputQueue/selfQueue/gradInputQueue
//   (float/half) and inQueueGradOutput/inQueueSelf/outQueueResult (bf16);
// * BUFFER_NUM is a public static constexpr member so a launch can override it (ops-nn: private, fixed 2);
// * DataCopyParams is brace-initialised and the pad params are a named local (ops-nn assigns the fields
//   one by one and passes {false, 0, 0, 0} inline): the same values.
// * the bf16 class takes its four TBuf tensors in another order (Get issues no instruction).

#include "arch35/hard_sigmoid_grad.h"
#include "arch35/hard_sigmoid_grad_bf16.h"

template <uint32_t schMode>
__global__ __aicore__ void hard_sigmoid_grad(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput, GM_ADDR workspace,
                                             GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(HardSigmoidGradTilingData);
    GET_TILING_DATA_WITH_STRUCT(HardSigmoidGradTilingData, tilingData, tiling);

    if constexpr (schMode == HARD_SIGMOID_GRAD_MODE_FLOAT32) {
        NsHardSigmoidGrad::HardSigmoidGrad<float> op;
        op.Init(gradOutput, self, gradInput, &tilingData);
        op.Process();
    } else if constexpr (schMode == HARD_SIGMOID_GRAD_MODE_FLOAT16) {
        NsHardSigmoidGrad::HardSigmoidGrad<half> op;
        op.Init(gradOutput, self, gradInput, &tilingData);
        op.Process();
    } else if constexpr (schMode == HARD_SIGMOID_GRAD_MODE_BFLOAT16) {
        NsHardSigmoidGrad::HardSigmoidGradBf16 op;
        op.Init(gradOutput, self, gradInput, &tilingData);
        op.Process();
    }
}

// ascend_lab -- the experimental ReluGrad AscendC kernel (custom package, registered for ascend910b).
//
// Written for ascend_lab after the structure of ops-nn
// experimental/activation/relu_grad/op_kernel/{relu_grad.cpp, relu_grad.h, relu_grad_tiling_data.h,
// relu_grad_tiling_key.h} (kernel_flavours.md 4): the entry instantiates KernelReluGrad<DTYPE_GRADIENTS>
// (the build defines DTYPE_GRADIENTS from the op definition's input gradients). The first tailBlockNum
// cores are big; each core runs tileNum - 1 full tiles, then the tail. Copies are plain DataCopy of whole
// 256-byte blocks, so the last core reads and writes up to 255 bytes past the logical end (gm-padding
// warnings). UB plan: the dtype's temporaries first, then the X, Y and Out queues. Compute per dtype:
// float/half CompareScalar(LE 0) + Duplicate(features, 0) + Select mode 2; bf16 a clamp-and-scale chain in
// fp32 whose scale constants wrap to 0 (a defect of the source, kept: output grad * 0); int8/uint8 the
// same chain in half with 2^-24 and 4096; int32 Min/Max/Mul, exact.
//
// It replaces, instruction for instruction, the Python kernel op_kernel/experimental.py (KernelReluGrad):
// same member names, UB plan, instructions, operands, scalars, counts, round modes and copies.
//
// Deviations from the ops-nn source, following the audited Python kernel and the C++ subset ascend_lab
// translates:
// * BUFFER_NUM and the scalar_* constants are static constexpr class members (ops-nn: namespace-scope /
//   global constexpr), renamed SCALAR_*; the two constants ops-nn declares `constexpr int x = 2^38 / 2^44`
//   are written static_cast<int32_t>(...) so the wrap to 0 is explicit; 2^-126 and 2^-24 are written as
//   float literals of the same value;
// * float and half share one branch, with the zero static_cast<T>(SCALAR_FLOAT or SCALAR_HALF) (both 0);
//   ops-nn has a float branch with its own DeQue ... FreeTensor and a half branch: the same calls in the
//   same order;
// * float32_t / float16_t are written float / half;
// * the ASSERT(GetBlockNum() != 0) of Init is left out (the Python kernel has none; ASSERT is not in the
//   subset).

#include "relu_grad.h"

template <uint32_t schMode>
__global__ __aicore__ void relu_grad(GM_ADDR gradients, GM_ADDR features, GM_ADDR backprops, GM_ADDR workspace,
                                     GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluGradTilingData);
    GET_TILING_DATA_WITH_STRUCT(ReluGradTilingData, tilingData, tiling);
    NsReluGrad::KernelReluGrad<DTYPE_GRADIENTS> op;
    op.Init(gradients, features, backprops, tilingData.smallCoreDataNum, tilingData.bigCoreDataNum,
            tilingData.finalBigTileNum, tilingData.finalSmallTileNum, tilingData.tileDataNum,
            tilingData.smallTailDataNum, tilingData.bigTailDataNum, tilingData.tailBlockNum);
    op.Process();
}

// ascend_lab -- the shipping HardSigmoidGrad AscendC kernel on Ascend950 (ops-nn main tree, arch35).
//
// Written for ascend_lab after the structure of ops-nn
// activation/hard_sigmoid_grad/op_kernel/{hard_sigmoid_grad_apt.cpp, arch35/*.h} (kernel_flavours.md 2.2):
// a templated entry picks HardSigmoidGrad<T> by the tiling key schMode (0 fp32, 1 fp16, 2 bf16). One class
// serves all three dtypes: float computes natively; half and bf16 are cast to fp32, computed there, and
// cast back once (half CAST_RINT, bf16 CAST_ROUND), with float alpha 1.0f / 6.0f from tiling_main950. The
// compare window is pre-filled with -1.0 (Duplicate) over the whole 256-byte-aligned count. Each core takes
// min(blockFactor, totalLength - blockFactor * GetBlockIdx()) elements (a core left with none returns
// before touching UB) in tiles of ubFactor, through a double-buffered CopyIn -> Compute -> CopyOut pipeline
// with exact-length DataCopyPad copies.
//
// It replaces, instruction for instruction, the Python kernel op_kernel/main.py (HardSigmoidGrad): same
// member names, UB plan (queues, tmp, gradFp32, selfFp32, mask), instructions, operands, scalars, counts,
// round modes and copies.
//
// Deviations from the ops-nn source, following the audited Python kernel and the C++ subset ascend_lab
// translates:
// * the per-core split (ComputePerCoreLength) and the tile loop (RunTileLoop<KernelT>(*this, ...)) are
//   written inline in Init and Process: free function templates and references are outside the subset;
// * the down-cast round mode is a static constexpr member chosen with std::is_same_v<T, half> instead of
//   the CastDownRound<T> struct specialisations (template specialisation is outside the subset);
// * kCastNeeded uses std::is_same_v<T, float> (ops-nn: std::is_same<T, float>::value);
// * BUFFER_NUM (and the new COMPARE_ALIGN) are public static constexpr members so a launch can override
//   BUFFER_NUM (ops-nn: private, fixed 2; COMPARE_ALIGN a constexpr local);
// * DataCopyParams is brace-initialised and the pad params are a named local (ops-nn assigns the fields
//   one by one and passes {false, 0, 0, 0} inline): the same values;
// * the fp32 path passes 0.0f / 1.0f / -1.0f where ops-nn writes static_cast<T>(...) with T = float: equal.

#include "arch35/hard_sigmoid_grad.h"

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
        NsHardSigmoidGrad::HardSigmoidGrad<bfloat16_t> op;
        op.Init(gradOutput, self, gradInput, &tilingData);
        op.Process();
    }
}

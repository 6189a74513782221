// ascend_lab -- HardSigmoidGradBf16 (experimental arch35 kernel, bfloat16).
//
// The bf16 inputs are cast to fp32 (CAST_NONE, exact), computed there with float alpha_/beta_, and the
// result is cast back once with CAST_ROUND (ties away from zero). Entry, provenance and deviations:
// ../hard_sigmoid_grad_apt.cpp.

#ifndef ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_BF16_H
#define ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_BF16_H

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "hard_sigmoid_grad_tiling_data.h"

namespace NsHardSigmoidGrad {

using namespace AscendC;

class HardSigmoidGradBf16 {
public:
    // Double buffering. A launch may override it (the book's 1-vs-2 buffer study).
    static constexpr int32_t BUFFER_NUM = 2;
    // Bytes of one vector repeat: CompareScalar's count is rounded up to whole repeats (64 floats).
    static constexpr int64_t REPEAT_BYTES = 256;

    __aicore__ inline HardSigmoidGradBf16() {}
    __aicore__ inline void Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput,
                                const HardSigmoidGradTilingData* tilingData);
    __aicore__ inline void Process();

private:
    __aicore__ inline void CopyIn(int64_t progress, int64_t currentNum);
    __aicore__ inline void Compute(int64_t currentNum);
    __aicore__ inline void CopyOut(int64_t progress, int64_t currentNum);

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueGrad;        // bf16
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueSelf;        // bf16
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueGradInput; // bf16
    TBuf<QuePosition::VECCALC> gradFp32Buf;  // grad in fp32
    TBuf<QuePosition::VECCALC> selfFp32Buf;  // self in fp32, then the fp32 result
    TBuf<QuePosition::VECCALC> tmpBuf;       // alpha * self + beta, fp32
    TBuf<QuePosition::VECCALC> maskBuf;      // CompareScalar's bit mask

    GlobalTensor<bfloat16_t> gradGm;
    GlobalTensor<bfloat16_t> selfGm;
    GlobalTensor<bfloat16_t> gradInputGm;

    int64_t blockLength_ = 0;
    int64_t ubFactor_ = 0;
    float alpha_ = 0.16666666f;
    float beta_ = 0.5f;
};

__aicore__ inline void HardSigmoidGradBf16::Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput,
                                                 const HardSigmoidGradTilingData* tilingData)
{
    int64_t remaining = tilingData->totalLength - tilingData->blockFactor * GetBlockIdx();
    blockLength_ = (remaining > tilingData->blockFactor) ? tilingData->blockFactor : remaining;
    if (blockLength_ <= 0) {
        return;
    }
    ubFactor_ = tilingData->ubFactor;
    alpha_ = tilingData->alpha;
    beta_ = tilingData->beta;

    int64_t start = tilingData->blockFactor * GetBlockIdx();
    gradGm.SetGlobalBuffer((__gm__ bfloat16_t*)gradOutput + start, blockLength_);
    selfGm.SetGlobalBuffer((__gm__ bfloat16_t*)self + start, blockLength_);
    gradInputGm.SetGlobalBuffer((__gm__ bfloat16_t*)gradInput + start, blockLength_);

    // UB plan, in this order: three bf16 queues, the two fp32 copies, tmp (fp32), mask.
    pipe.InitBuffer(inQueueGrad, BUFFER_NUM, ubFactor_ * sizeof(bfloat16_t));
    pipe.InitBuffer(inQueueSelf, BUFFER_NUM, ubFactor_ * sizeof(bfloat16_t));
    pipe.InitBuffer(outQueueGradInput, BUFFER_NUM, ubFactor_ * sizeof(bfloat16_t));
    pipe.InitBuffer(gradFp32Buf, ubFactor_ * sizeof(float));
    pipe.InitBuffer(selfFp32Buf, ubFactor_ * sizeof(float));
    pipe.InitBuffer(tmpBuf, ubFactor_ * sizeof(float));
    int64_t maskBytes = ((ubFactor_ + 7) / 8 + 31) / 32 * 32;
    if (maskBytes < 32) {
        maskBytes = 32;
    }
    pipe.InitBuffer(maskBuf, maskBytes);
}

__aicore__ inline void HardSigmoidGradBf16::Process()
{
    if (blockLength_ <= 0) {
        return;
    }
    int64_t loopCount = (blockLength_ + ubFactor_ - 1) / ubFactor_;
    for (int64_t i = 0; i < loopCount; i++) {
        int64_t currentNum = (i < loopCount - 1) ? ubFactor_ : (blockLength_ - ubFactor_ * i);
        CopyIn(i, currentNum);
        Compute(currentNum);
        CopyOut(i, currentNum);
    }
}

__aicore__ inline void HardSigmoidGradBf16::CopyIn(int64_t progress, int64_t currentNum)
{
    LocalTensor<bfloat16_t> gradLocal = inQueueGrad.AllocTensor<bfloat16_t>();
    LocalTensor<bfloat16_t> selfLocal = inQueueSelf.AllocTensor<bfloat16_t>();
    DataCopyParams copyParams{1, static_cast<uint16_t>(currentNum * sizeof(bfloat16_t)), 0, 0};
    DataCopyPadParams padParams{false, 0, 0, 0};
    DataCopyPad(gradLocal, gradGm[progress * ubFactor_], copyParams, padParams);
    DataCopyPad(selfLocal, selfGm[progress * ubFactor_], copyParams, padParams);
    inQueueGrad.EnQue(gradLocal);
    inQueueSelf.EnQue(selfLocal);
}

__aicore__ inline void HardSigmoidGradBf16::Compute(int64_t currentNum)
{
    LocalTensor<bfloat16_t> gradLocal = inQueueGrad.DeQue<bfloat16_t>();
    LocalTensor<bfloat16_t> selfLocal = inQueueSelf.DeQue<bfloat16_t>();
    LocalTensor<bfloat16_t> resultLocal = outQueueGradInput.AllocTensor<bfloat16_t>();
    LocalTensor<float> tmp = tmpBuf.Get<float>();
    LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
    LocalTensor<float> gradFp32 = gradFp32Buf.Get<float>();
    LocalTensor<float> selfFp32 = selfFp32Buf.Get<float>();

    constexpr int64_t COMPARE_ALIGN = static_cast<int64_t>(REPEAT_BYTES / sizeof(float));
    int64_t alignedCount = (currentNum + COMPARE_ALIGN - 1) / COMPARE_ALIGN * COMPARE_ALIGN;

    Cast(gradFp32, gradLocal, RoundMode::CAST_NONE, currentNum);  // bf16 -> fp32: exact
    Cast(selfFp32, selfLocal, RoundMode::CAST_NONE, currentNum);
    Muls(tmp, selfFp32, alpha_, currentNum);                      // tmp = self * alpha  (fp32)
    Adds(tmp, tmp, beta_, currentNum);                            // tmp = tmp + beta    (fp32)
    Muls(selfFp32, gradFp32, alpha_, currentNum);                 // the result reuses selfFp32Buf

    CompareScalar(mask, tmp, 0.0f, CMPMODE::GT, alignedCount);
    Select(selfFp32, mask, selfFp32, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);
    CompareScalar(mask, tmp, 1.0f, CMPMODE::LT, alignedCount);
    Select(selfFp32, mask, selfFp32, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);

    Cast(resultLocal, selfFp32, RoundMode::CAST_ROUND, currentNum);  // fp32 -> bf16, ties away from zero

    outQueueGradInput.EnQue(resultLocal);
    inQueueGrad.FreeTensor(gradLocal);
    inQueueSelf.FreeTensor(selfLocal);
}

__aicore__ inline void HardSigmoidGradBf16::CopyOut(int64_t progress, int64_t currentNum)
{
    LocalTensor<bfloat16_t> resultLocal = outQueueGradInput.DeQue<bfloat16_t>();
    DataCopyParams copyParams{1, static_cast<uint16_t>(currentNum * sizeof(bfloat16_t)), 0, 0};
    DataCopyPad(gradInputGm[progress * ubFactor_], resultLocal, copyParams);
    outQueueGradInput.FreeTensor(resultLocal);
}

}  // namespace NsHardSigmoidGrad

#endif  // ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_BF16_H

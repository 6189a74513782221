// ascend_lab -- HardSigmoidGrad<T> for T = float and half (experimental arch35 kernel).
//
// grad_input = grad_output * alpha where 0 < alpha * self + beta < 1, else 0. Every instruction runs in T,
// so half computes natively with static_cast<half>(alpha_). The bf16 kernel is HardSigmoidGradBf16
// (hard_sigmoid_grad_bf16.h). Entry, provenance and deviations: ../hard_sigmoid_grad_apt.cpp.

#ifndef ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_H
#define ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_H

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "hard_sigmoid_grad_tiling_data.h"
#include "hard_sigmoid_grad_tiling_key.h"

namespace NsHardSigmoidGrad {

using namespace AscendC;

template <typename T>
class HardSigmoidGrad {
public:
    // Double buffering. A launch may override it (the book's 1-vs-2 buffer study).
    static constexpr int32_t BUFFER_NUM = 2;
    // Bytes of one vector repeat: CompareScalar's count is rounded up to whole repeats.
    static constexpr int64_t REPEAT_BYTES = 256;

    __aicore__ inline HardSigmoidGrad() {}
    __aicore__ inline void Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput,
                                const HardSigmoidGradTilingData* tilingData);
    __aicore__ inline void Process();

private:
    __aicore__ inline void CopyIn(int64_t progress, int64_t currentNum);
    __aicore__ inline void Compute(int64_t currentNum);
    __aicore__ inline void CopyOut(int64_t progress, int64_t currentNum);

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueGrad;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueSelf;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueGradInput;
    TBuf<QuePosition::VECCALC> tmpBuf;   // alpha * self + beta, in T
    TBuf<QuePosition::VECCALC> maskBuf;  // CompareScalar's bit mask, one bit per element

    GlobalTensor<T> gradGm;
    GlobalTensor<T> selfGm;
    GlobalTensor<T> gradInputGm;

    int64_t blockLength_ = 0;
    int64_t ubFactor_ = 0;
    float alpha_ = 0.16666666f;
    float beta_ = 0.5f;
};

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput,
                                                const HardSigmoidGradTilingData* tilingData)
{
    // This core's share: blockFactor elements, fewer on the last core, none past the end.
    int64_t remaining = tilingData->totalLength - tilingData->blockFactor * GetBlockIdx();
    blockLength_ = (remaining > tilingData->blockFactor) ? tilingData->blockFactor : remaining;
    if (blockLength_ <= 0) {
        return;  // nothing to do: no GM view, no UB
    }
    ubFactor_ = tilingData->ubFactor;
    alpha_ = tilingData->alpha;
    beta_ = tilingData->beta;

    int64_t start = tilingData->blockFactor * GetBlockIdx();
    gradGm.SetGlobalBuffer((__gm__ T*)gradOutput + start, blockLength_);
    selfGm.SetGlobalBuffer((__gm__ T*)self + start, blockLength_);
    gradInputGm.SetGlobalBuffer((__gm__ T*)gradInput + start, blockLength_);

    // UB plan, in this order: three queues, tmp, mask.
    pipe.InitBuffer(inQueueGrad, BUFFER_NUM, ubFactor_ * sizeof(T));
    pipe.InitBuffer(inQueueSelf, BUFFER_NUM, ubFactor_ * sizeof(T));
    pipe.InitBuffer(outQueueGradInput, BUFFER_NUM, ubFactor_ * sizeof(T));
    pipe.InitBuffer(tmpBuf, ubFactor_ * sizeof(T));
    // One bit per element, whole 32-byte blocks, at least one block.
    int64_t maskBytes = ((ubFactor_ + 7) / 8 + 31) / 32 * 32;
    if (maskBytes < 32) {
        maskBytes = 32;
    }
    pipe.InitBuffer(maskBuf, maskBytes);
}

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::Process()
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

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::CopyIn(int64_t progress, int64_t currentNum)
{
    LocalTensor<T> gradLocal = inQueueGrad.template AllocTensor<T>();
    LocalTensor<T> selfLocal = inQueueSelf.template AllocTensor<T>();
    // Exact byte count: the last tile reads no byte past the tensor.
    DataCopyParams copyParams{1, static_cast<uint16_t>(currentNum * sizeof(T)), 0, 0};
    DataCopyPadParams padParams{false, 0, 0, 0};
    DataCopyPad(gradLocal, gradGm[progress * ubFactor_], copyParams, padParams);
    DataCopyPad(selfLocal, selfGm[progress * ubFactor_], copyParams, padParams);
    inQueueGrad.EnQue(gradLocal);
    inQueueSelf.EnQue(selfLocal);
}

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::Compute(int64_t currentNum)
{
    LocalTensor<T> gradLocal = inQueueGrad.template DeQue<T>();
    LocalTensor<T> selfLocal = inQueueSelf.template DeQue<T>();
    LocalTensor<T> resultLocal = outQueueGradInput.template AllocTensor<T>();
    LocalTensor<T> tmpLocal = tmpBuf.Get<T>();
    LocalTensor<uint8_t> maskLocal = maskBuf.Get<uint8_t>();

    // CompareScalar covers whole 256-byte repeats: 64 floats or 128 halves.
    constexpr int64_t COMPARE_ALIGN = static_cast<int64_t>(REPEAT_BYTES / sizeof(T));
    int64_t alignedCount = (currentNum + COMPARE_ALIGN - 1) / COMPARE_ALIGN * COMPARE_ALIGN;

    Muls(tmpLocal, selfLocal, static_cast<T>(alpha_), currentNum);     // tmp = self * alpha  (rounded to T)
    Adds(tmpLocal, tmpLocal, static_cast<T>(beta_), currentNum);       // tmp = tmp + beta    (rounded to T)
    Muls(resultLocal, gradLocal, static_cast<T>(alpha_), currentNum);  // result = grad * alpha

    CompareScalar(maskLocal, tmpLocal, static_cast<T>(0), CMPMODE::GT, alignedCount);
    Select(resultLocal, maskLocal, resultLocal, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);
    CompareScalar(maskLocal, tmpLocal, static_cast<T>(1), CMPMODE::LT, alignedCount);
    Select(resultLocal, maskLocal, resultLocal, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);

    outQueueGradInput.template EnQue<T>(resultLocal);
    inQueueGrad.FreeTensor(gradLocal);
    inQueueSelf.FreeTensor(selfLocal);
}

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::CopyOut(int64_t progress, int64_t currentNum)
{
    LocalTensor<T> resultLocal = outQueueGradInput.template DeQue<T>();
    DataCopyParams copyParams{1, static_cast<uint16_t>(currentNum * sizeof(T)), 0, 0};
    DataCopyPad(gradInputGm[progress * ubFactor_], resultLocal, copyParams);
    outQueueGradInput.FreeTensor(resultLocal);
}

}  // namespace NsHardSigmoidGrad

#endif  // ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_H

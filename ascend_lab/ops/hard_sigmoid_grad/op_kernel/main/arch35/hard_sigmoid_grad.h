// ascend_lab -- HardSigmoidGrad<T> for T = float, half and bfloat16_t (Ascend950 main-tree arch35 kernel).
//
// grad_input = grad_output * alpha where 0 < alpha * self + beta < 1, else 0. float computes natively;
// half and bfloat16_t are cast to fp32 (exact), computed there, and cast back once: half with CAST_RINT,
// bf16 with CAST_ROUND. The compare window is pre-filled with -1.0 so CompareScalar's bits past the tile's
// last element are 0 whatever tmp held. Entry, provenance and deviations: ../hard_sigmoid_grad_apt.cpp.

#ifndef ASCEND_LAB_MAIN_HARD_SIGMOID_GRAD_H
#define ASCEND_LAB_MAIN_HARD_SIGMOID_GRAD_H

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
    // half and bf16 compute in fp32; float computes in place.
    static constexpr bool kCastNeeded = !std::is_same_v<T, float>;
    // The one rounding back from fp32: half to nearest even, bf16 ties away from zero.
    static constexpr RoundMode CAST_DOWN_ROUND = std::is_same_v<T, half> ? RoundMode::CAST_RINT : RoundMode::CAST_ROUND;
    // CompareScalar's count is rounded up to whole 256-byte repeats of fp32: 64 elements. The tiling aligns
    // ubFactor to 64, so the rounded count stays inside tmpBuf.
    static constexpr int64_t COMPARE_ALIGN = 256 / 4;

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
    TQue<QuePosition::VECIN, BUFFER_NUM> gradOutputQueue;
    TQue<QuePosition::VECIN, BUFFER_NUM> selfQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> gradInputQueue;
    TBuf<QuePosition::VECCALC> tmpBuf;       // alpha * self + beta, fp32
    TBuf<QuePosition::VECCALC> maskBuf;      // CompareScalar's bit mask
    TBuf<QuePosition::VECCALC> gradFp32Buf;  // half/bf16 only: grad in fp32
    TBuf<QuePosition::VECCALC> selfFp32Buf;  // half/bf16 only: self in fp32, then the fp32 result

    GlobalTensor<T> gmGradOutput;
    GlobalTensor<T> gmSelf;
    GlobalTensor<T> gmGradInput;

    int64_t blockLength_ = 0;
    int64_t ubLength_ = 0;
    float alpha_ = 1.0f / 6.0f;
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
    ubLength_ = tilingData->ubFactor;
    alpha_ = tilingData->alpha;
    beta_ = tilingData->beta;

    int64_t start = tilingData->blockFactor * GetBlockIdx();
    gmGradOutput.SetGlobalBuffer((__gm__ T*)gradOutput + start, blockLength_);
    gmSelf.SetGlobalBuffer((__gm__ T*)self + start, blockLength_);
    gmGradInput.SetGlobalBuffer((__gm__ T*)gradInput + start, blockLength_);

    // UB plan, in this order: three queues, tmp, (gradFp32, selfFp32), mask.
    pipe.InitBuffer(gradOutputQueue, BUFFER_NUM, ubLength_ * sizeof(T));
    pipe.InitBuffer(selfQueue, BUFFER_NUM, ubLength_ * sizeof(T));
    pipe.InitBuffer(gradInputQueue, BUFFER_NUM, ubLength_ * sizeof(T));
    if constexpr (kCastNeeded) {
        pipe.InitBuffer(tmpBuf, ubLength_ * sizeof(float));
        pipe.InitBuffer(gradFp32Buf, ubLength_ * sizeof(float));
        pipe.InitBuffer(selfFp32Buf, ubLength_ * sizeof(float));
    } else {
        pipe.InitBuffer(tmpBuf, ubLength_ * sizeof(T));
    }
    // One bit per fp32 element, whole 32-byte blocks, at least one block.
    int64_t maskBytes = ((ubLength_ + 7) / 8 + 31) / 32 * 32;
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
    int64_t loopCount = (blockLength_ + ubLength_ - 1) / ubLength_;
    for (int64_t i = 0; i < loopCount; i++) {
        int64_t currentNum = (i == loopCount - 1) ? (blockLength_ - ubLength_ * i) : ubLength_;
        CopyIn(i, currentNum);
        Compute(currentNum);
        CopyOut(i, currentNum);
    }
}

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::CopyIn(int64_t progress, int64_t currentNum)
{
    LocalTensor<T> gradLocal = gradOutputQueue.template AllocTensor<T>();
    LocalTensor<T> selfLocal = selfQueue.template AllocTensor<T>();
    // Exact byte count: the last tile reads no byte past the tensor.
    DataCopyParams copyParams{1, static_cast<uint16_t>(currentNum * sizeof(T)), 0, 0};
    DataCopyPadParams padParams{false, 0, 0, 0};
    DataCopyPad(gradLocal, gmGradOutput[progress * ubLength_], copyParams, padParams);
    DataCopyPad(selfLocal, gmSelf[progress * ubLength_], copyParams, padParams);
    gradOutputQueue.EnQue(gradLocal);
    selfQueue.EnQue(selfLocal);
}

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::Compute(int64_t currentNum)
{
    LocalTensor<T> gradLocal = gradOutputQueue.template DeQue<T>();
    LocalTensor<T> selfLocal = selfQueue.template DeQue<T>();
    LocalTensor<T> resultLocal = gradInputQueue.template AllocTensor<T>();
    LocalTensor<uint8_t> maskLocal = maskBuf.Get<uint8_t>();
    int64_t alignedCount = (currentNum + COMPARE_ALIGN - 1) / COMPARE_ALIGN * COMPARE_ALIGN;
    LocalTensor<float> tmpLocal = tmpBuf.Get<float>();

    // The -1.0 fill makes the compare bits in [currentNum, alignedCount) 0: -1 is outside (0, 1).
    Duplicate(tmpLocal, -1.0f, alignedCount);
    if constexpr (kCastNeeded) {
        LocalTensor<float> gradFp32 = gradFp32Buf.Get<float>();
        LocalTensor<float> selfFp32 = selfFp32Buf.Get<float>();
        Cast(gradFp32, gradLocal, RoundMode::CAST_NONE, currentNum);  // half/bf16 -> fp32: exact
        Cast(selfFp32, selfLocal, RoundMode::CAST_NONE, currentNum);
        Muls(tmpLocal, selfFp32, alpha_, currentNum);                 // tmp = self * alpha  (fp32)
        Adds(tmpLocal, tmpLocal, beta_, currentNum);                  // tmp = tmp + beta    (fp32)
        Muls(selfFp32, gradFp32, alpha_, currentNum);                 // the result reuses selfFp32Buf
        CompareScalar(maskLocal, tmpLocal, 0.0f, CMPMODE::GT, alignedCount);
        Select(selfFp32, maskLocal, selfFp32, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);  // tmp > 0
        CompareScalar(maskLocal, tmpLocal, 1.0f, CMPMODE::LT, alignedCount);
        Select(selfFp32, maskLocal, selfFp32, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);  // tmp < 1
        Cast(resultLocal, selfFp32, CAST_DOWN_ROUND, currentNum);     // the only rounding of the result
    } else {
        Muls(tmpLocal, selfLocal, static_cast<T>(alpha_), currentNum);
        Adds(tmpLocal, tmpLocal, static_cast<T>(beta_), currentNum);
        Muls(resultLocal, gradLocal, static_cast<T>(alpha_), currentNum);
        CompareScalar(maskLocal, tmpLocal, 0.0f, CMPMODE::GT, alignedCount);
        Select(resultLocal, maskLocal, resultLocal, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);
        CompareScalar(maskLocal, tmpLocal, 1.0f, CMPMODE::LT, alignedCount);
        Select(resultLocal, maskLocal, resultLocal, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, currentNum);
    }

    gradInputQueue.template EnQue<T>(resultLocal);
    gradOutputQueue.FreeTensor(gradLocal);
    selfQueue.FreeTensor(selfLocal);
}

template <typename T>
__aicore__ inline void HardSigmoidGrad<T>::CopyOut(int64_t progress, int64_t currentNum)
{
    LocalTensor<T> resultLocal = gradInputQueue.template DeQue<T>();
    DataCopyParams copyParams{1, static_cast<uint16_t>(currentNum * sizeof(T)), 0, 0};
    DataCopyPad(gmGradInput[progress * ubLength_], resultLocal, copyParams);
    gradInputQueue.FreeTensor(resultLocal);
}

}  // namespace NsHardSigmoidGrad

#endif  // ASCEND_LAB_MAIN_HARD_SIGMOID_GRAD_H

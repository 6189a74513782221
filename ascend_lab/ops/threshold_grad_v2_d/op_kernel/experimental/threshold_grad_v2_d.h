// ascend_lab -- KernelThresholdGradV2D<T> (experimental kernel; T = float, half, bfloat16_t, int32_t,
// int8_t, uint8_t). output = input_gradient where input_feature > threshold, else 0.
// Entry, provenance and deviations: threshold_grad_v2_d.cpp.

#ifndef ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_H
#define ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_H

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "threshold_grad_v2_d_tiling_data.h"
#include "threshold_grad_v2_d_tiling_key.h"

namespace NsThresholdGradV2D {

using namespace AscendC;

template <typename T>
class KernelThresholdGradV2D {
public:
    // Double buffering. A launch may override it (the book's 1-vs-2 buffer study).
    static constexpr int32_t BUFFER_NUM = 2;
    // int32 and bf16 compare and select in fp32; int8 and uint8 go through half to fp32; float and half
    // work in T.
    static constexpr bool kViaFp32 = std::is_same_v<T, int32_t> || std::is_same_v<T, bfloat16_t>;
    static constexpr bool kViaHalf = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
    // a DTYPE_INPUT_GRADIENT the op definition does not list is refused here (ops-nn has no such line: its build
    // never instantiates one)
    static_assert(kViaFp32 || kViaHalf || std::is_same_v<T, float> || std::is_same_v<T, half>,
                  "ThresholdGradV2D has no kernel for this dtype");

    __aicore__ inline KernelThresholdGradV2D() {}
    __aicore__ inline void Init(GM_ADDR input_gradient, GM_ADDR input_feature, GM_ADDR output_backprops,
                                uint64_t smallCoreDataNum, uint64_t bigCoreDataNum, uint64_t finalBigTileNum,
                                uint64_t finalSmallTileNum, uint64_t tileDataNum, uint64_t smallTailDataNum,
                                uint64_t bigTailDataNum, uint64_t tailBlockNum, float threshold);
    __aicore__ inline void Process();

private:
    __aicore__ inline void CopyIn(int32_t progress);
    __aicore__ inline void Compute(int32_t progress);
    __aicore__ inline void CopyOut(int32_t progress);

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueG;   // input_gradient
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueF;   // input_feature
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;  // output_backprops
    TBuf<QuePosition::VECCALC> maskBuf;              // CompareScalar's bit mask (tileDataNum bytes)
    TBuf<QuePosition::VECCALC> tmpQueue1;            // int32/bf16: fp32 temp; int8/uint8: half temp
    TBuf<QuePosition::VECCALC> tmpQueue2;            // int8/uint8: half-sized, used as fp32

    GlobalTensor<T> gGm;
    GlobalTensor<T> fGm;
    GlobalTensor<T> outGm;

    uint64_t coreDataNum = 0;
    uint64_t tileNum = 0;
    uint64_t tileDataNum = 0;
    uint64_t tailDataNum = 0;
    uint64_t processDataNum = 0;
    float thresholdValue = 0.0f;
};

template <typename T>
__aicore__ inline void KernelThresholdGradV2D<T>::Init(
    GM_ADDR input_gradient, GM_ADDR input_feature, GM_ADDR output_backprops, uint64_t smallCoreDataNum,
    uint64_t bigCoreDataNum, uint64_t finalBigTileNum, uint64_t finalSmallTileNum, uint64_t tileDataNum,
    uint64_t smallTailDataNum, uint64_t bigTailDataNum, uint64_t tailBlockNum, float threshold)
{
    uint64_t coreId = GetBlockIdx();
    uint64_t globalBufferIndex = bigCoreDataNum * coreId;
    if (coreId < tailBlockNum) {  // the first tailBlockNum cores are big
        this->coreDataNum = bigCoreDataNum;
        this->tileNum = finalBigTileNum;
        this->tailDataNum = bigTailDataNum;
    } else {
        this->coreDataNum = smallCoreDataNum;
        this->tileNum = finalSmallTileNum;
        this->tailDataNum = smallTailDataNum;
        globalBufferIndex -= (bigCoreDataNum - smallCoreDataNum) * (coreId - tailBlockNum);
    }
    this->tileDataNum = tileDataNum;
    this->thresholdValue = threshold;

    gGm.SetGlobalBuffer((__gm__ T*)input_gradient + globalBufferIndex, this->coreDataNum);
    fGm.SetGlobalBuffer((__gm__ T*)input_feature + globalBufferIndex, this->coreDataNum);
    outGm.SetGlobalBuffer((__gm__ T*)output_backprops + globalBufferIndex, this->coreDataNum);

    // UB plan, in this order: three queues, the mask, then the temporaries the dtype needs.
    pipe.InitBuffer(inQueueG, BUFFER_NUM, this->tileDataNum * sizeof(T));
    pipe.InitBuffer(inQueueF, BUFFER_NUM, this->tileDataNum * sizeof(T));
    pipe.InitBuffer(outQueue, BUFFER_NUM, this->tileDataNum * sizeof(T));
    pipe.InitBuffer(maskBuf, this->tileDataNum * sizeof(uint8_t));
    if constexpr (kViaFp32) {
        pipe.InitBuffer(tmpQueue1, this->tileDataNum * sizeof(float));
    } else if constexpr (kViaHalf) {
        pipe.InitBuffer(tmpQueue1, this->tileDataNum * sizeof(half));
        pipe.InitBuffer(tmpQueue2, this->tileDataNum * sizeof(half));
    }
}

template <typename T>
__aicore__ inline void KernelThresholdGradV2D<T>::Process()
{
    int32_t loopCount = static_cast<int32_t>(this->tileNum);
    this->processDataNum = this->tileDataNum;
    for (int32_t i = 0; i < loopCount; i++) {
        if (i == loopCount - 1) {
            this->processDataNum = this->tailDataNum;  // the last tile
        }
        CopyIn(i);
        Compute(i);
        CopyOut(i);
    }
}

template <typename T>
__aicore__ inline void KernelThresholdGradV2D<T>::CopyIn(int32_t progress)
{
    LocalTensor<T> gLocal = inQueueG.template AllocTensor<T>();
    LocalTensor<T> fLocal = inQueueF.template AllocTensor<T>();
    // Whole 256-byte blocks: the last core may read up to 255 bytes past the tensors' end.
    DataCopy(gLocal, gGm[progress * this->tileDataNum], this->processDataNum);
    DataCopy(fLocal, fGm[progress * this->tileDataNum], this->processDataNum);
    inQueueG.EnQue(gLocal);
    inQueueF.EnQue(fLocal);
}

template <typename T>
__aicore__ inline void KernelThresholdGradV2D<T>::Compute(int32_t progress)
{
    LocalTensor<T> gLocal = inQueueG.template DeQue<T>();
    LocalTensor<T> fLocal = inQueueF.template DeQue<T>();
    LocalTensor<T> outLocal = outQueue.template AllocTensor<T>();
    LocalTensor<uint8_t> maskLocal = maskBuf.Get<uint8_t>();
    uint64_t n = this->processDataNum;

    if constexpr (kViaFp32) {
        // int32 back with CAST_TRUNC, bf16 back with CAST_RINT
        constexpr RoundMode backMode = std::is_same_v<T, int32_t> ? RoundMode::CAST_TRUNC : RoundMode::CAST_RINT;
        LocalTensor<float> tmp1Local = tmpQueue1.AllocTensor<float>();
        Cast(tmp1Local, fLocal, RoundMode::CAST_NONE, n);
        CompareScalar(maskLocal, tmp1Local, static_cast<float>(this->thresholdValue), CMPMODE::GT, n);
        Cast(tmp1Local, gLocal, RoundMode::CAST_NONE, n);
        Select(tmp1Local, maskLocal, tmp1Local, static_cast<float>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Cast(outLocal, tmp1Local, backMode, n);
    } else if constexpr (kViaHalf) {
        LocalTensor<half> tmp1Local = tmpQueue1.AllocTensor<half>();
        // A half-sized buffer used as fp32, as the source does: Casts past its end run into free UB
        // (the sanitizer reports a ub-overrun warning).
        LocalTensor<float> tmp2Local = tmpQueue2.AllocTensor<float>();
        Cast(tmp1Local, fLocal, RoundMode::CAST_NONE, n);
        Cast(tmp2Local, tmp1Local, RoundMode::CAST_NONE, n);
        CompareScalar(maskLocal, tmp2Local, static_cast<float>(this->thresholdValue), CMPMODE::GT, n);
        Cast(tmp1Local, gLocal, RoundMode::CAST_NONE, n);
        Cast(tmp2Local, tmp1Local, RoundMode::CAST_NONE, n);
        Select(tmp2Local, maskLocal, tmp2Local, static_cast<float>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Cast(tmp1Local, tmp2Local, RoundMode::CAST_NONE, n);
        Cast(outLocal, tmp1Local, RoundMode::CAST_TRUNC, n);
    } else {
        // float and half: compare against static_cast<T>(threshold) (half(threshold) for fp16)
        CompareScalar(maskLocal, fLocal, static_cast<T>(this->thresholdValue), CMPMODE::GT, n);
        Select(outLocal, maskLocal, gLocal, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    }

    outQueue.template EnQue<T>(outLocal);
    inQueueG.FreeTensor(gLocal);
    inQueueF.FreeTensor(fLocal);
}

template <typename T>
__aicore__ inline void KernelThresholdGradV2D<T>::CopyOut(int32_t progress)
{
    LocalTensor<T> outLocal = outQueue.template DeQue<T>();
    DataCopy(outGm[progress * this->tileDataNum], outLocal, this->processDataNum);
    outQueue.FreeTensor(outLocal);
}

}  // namespace NsThresholdGradV2D

#endif  // ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_H

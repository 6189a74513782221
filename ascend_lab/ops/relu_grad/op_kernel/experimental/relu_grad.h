// ascend_lab -- KernelReluGrad<T> (experimental kernel; T = float, half, bfloat16_t, int8_t, uint8_t,
// int32_t). backprops = gradients where features > 0, else 0; X = gradients, Y = features, Out = backprops.
// Entry, provenance and deviations: relu_grad.cpp.

#ifndef ASCEND_LAB_EXP_RELU_GRAD_H
#define ASCEND_LAB_EXP_RELU_GRAD_H

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "relu_grad_tiling_data.h"
#include "relu_grad_tiling_key.h"

namespace NsReluGrad {

using namespace AscendC;

template <typename T>
class KernelReluGrad {
public:
    // Double buffering. A launch may override it (the book's 1-vs-2 buffer study).
    static constexpr int32_t BUFFER_NUM = 2;

    // The source's constants, one set per dtype path.
    static constexpr float SCALAR_FLOAT = 0.0f;
    static constexpr float SCALAR_HALF = 0.0f;
    static constexpr float SCALAR_BF16_A = 1.1754943508222875e-38f;  // 2^-126 (FLT_MIN)
    static constexpr float SCALAR_BF16_B = 0.0f;
    // The source declares these two `constexpr int` with 2^38 and 2^44, which do not fit an int: the
    // conversion keeps the low 32 bits, so both are 0 and the bf16 mask is 0 (output grad * 0). A defect of
    // the source, kept on purpose (what the device computes is UNCONFIRMED).
    static constexpr int32_t SCALAR_BF16_C = static_cast<int32_t>(274877906944);    // 2^38 -> 0
    static constexpr int32_t SCALAR_BF16_D = static_cast<int32_t>(17592186044416);  // 2^44 -> 0
    static constexpr float SCALAR_UINT8ORINT8_A = 5.9604644775390625e-08f;  // 2^-24: the smallest half subnormal
    static constexpr float SCALAR_UINT8ORINT8_B = 0.0f;
    static constexpr int32_t SCALAR_UINT8ORINT8_C = 4096;
    static constexpr int32_t SCALAR_INT32_A = 0;
    static constexpr int32_t SCALAR_INT32_B = 1;

    static constexpr bool kIsFloat = std::is_same_v<T, float>;
    static constexpr bool kFloatHalf = std::is_same_v<T, float> || std::is_same_v<T, half>;
    static constexpr bool kBf16 = std::is_same_v<T, bfloat16_t>;
    static constexpr bool kInt8 = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
    // the experimental op definition builds no int64 (or other) binary: a DTYPE_GRADIENTS it does not list is
    // refused here (ops-nn has no such line: its build never instantiates one)
    static_assert(kFloatHalf || kBf16 || kInt8 || std::is_same_v<T, int32_t>,
                  "the experimental ReluGrad has no kernel for this dtype");

    __aicore__ inline KernelReluGrad() {}
    __aicore__ inline void Init(GM_ADDR gradients, GM_ADDR features, GM_ADDR backprops, uint64_t smallCoreDataNum,
                                uint64_t bigCoreDataNum, uint64_t finalBigTileNum, uint64_t finalSmallTileNum,
                                uint64_t tileDataNum, uint64_t smallTailDataNum, uint64_t bigTailDataNum,
                                uint64_t tailBlockNum);
    __aicore__ inline void Process();

private:
    __aicore__ inline void CopyIn(int32_t progress);
    __aicore__ inline void Compute(int32_t progress);
    __aicore__ inline void CopyOut(int32_t progress);

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;     // gradients
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueY;     // features
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueOut; // backprops
    TBuf<QuePosition::VECCALC> tmpQueue1;              // bf16: fp32 temp; int8/uint8: half temp
    TBuf<QuePosition::VECCALC> tmpQueue2;              // bf16: fp32 temp; int8/uint8: half temp
    TBuf<QuePosition::VECCALC> tmpQueueMask1;          // float/half: CompareScalar's bit mask

    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    GlobalTensor<T> outGm;

    uint64_t coreDataNum = 0;
    uint64_t tileNum = 0;
    uint64_t tileDataNum = 0;
    uint64_t tailDataNum = 0;
    uint64_t processDataNum = 0;
};

template <typename T>
__aicore__ inline void KernelReluGrad<T>::Init(GM_ADDR gradients, GM_ADDR features, GM_ADDR backprops,
                                               uint64_t smallCoreDataNum, uint64_t bigCoreDataNum,
                                               uint64_t finalBigTileNum, uint64_t finalSmallTileNum,
                                               uint64_t tileDataNum, uint64_t smallTailDataNum,
                                               uint64_t bigTailDataNum, uint64_t tailBlockNum)
{
    uint64_t coreId = GetBlockIdx();
    uint64_t globalBufferIndex = bigCoreDataNum * coreId;
    this->tileDataNum = tileDataNum;
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
    xGm.SetGlobalBuffer((__gm__ T*)gradients + globalBufferIndex, this->coreDataNum);
    yGm.SetGlobalBuffer((__gm__ T*)features + globalBufferIndex, this->coreDataNum);
    outGm.SetGlobalBuffer((__gm__ T*)backprops + globalBufferIndex, this->coreDataNum);

    // UB plan, in this order: the dtype's temporaries first, then the three queues.
    if constexpr (kFloatHalf) {
        pipe.InitBuffer(tmpQueueMask1, this->tileDataNum * sizeof(uint8_t));
    } else if constexpr (kBf16) {
        pipe.InitBuffer(tmpQueue1, this->tileDataNum * sizeof(float));
        pipe.InitBuffer(tmpQueue2, this->tileDataNum * sizeof(float));
    } else if constexpr (kInt8) {
        pipe.InitBuffer(tmpQueue1, this->tileDataNum * sizeof(half));
        pipe.InitBuffer(tmpQueue2, this->tileDataNum * sizeof(half));
    }
    pipe.InitBuffer(inQueueX, BUFFER_NUM, this->tileDataNum * sizeof(T));
    pipe.InitBuffer(inQueueY, BUFFER_NUM, this->tileDataNum * sizeof(T));
    pipe.InitBuffer(outQueueOut, BUFFER_NUM, this->tileDataNum * sizeof(T));
}

template <typename T>
__aicore__ inline void KernelReluGrad<T>::Process()
{
    int32_t loopCount = static_cast<int32_t>(this->tileNum);
    this->processDataNum = this->tileDataNum;
    for (int32_t i = 0; i < loopCount - 1; i++) {
        CopyIn(i);
        Compute(i);
        CopyOut(i);
    }
    this->processDataNum = this->tailDataNum;  // the last tile
    CopyIn(loopCount - 1);
    Compute(loopCount - 1);
    CopyOut(loopCount - 1);
}

template <typename T>
__aicore__ inline void KernelReluGrad<T>::CopyIn(int32_t progress)
{
    LocalTensor<T> xLocal = inQueueX.template AllocTensor<T>();
    LocalTensor<T> yLocal = inQueueY.template AllocTensor<T>();
    // Whole 256-byte blocks: the last core may read up to 255 bytes past the tensors' end.
    DataCopy(xLocal, xGm[progress * this->tileDataNum], this->processDataNum);
    DataCopy(yLocal, yGm[progress * this->tileDataNum], this->processDataNum);
    inQueueX.EnQue(xLocal);
    inQueueY.EnQue(yLocal);
}

template <typename T>
__aicore__ inline void KernelReluGrad<T>::CopyOut(int32_t progress)
{
    LocalTensor<T> outLocal = outQueueOut.template DeQue<T>();
    DataCopy(outGm[progress * this->tileDataNum], outLocal, this->processDataNum);
    outQueueOut.FreeTensor(outLocal);
}

template <typename T>
__aicore__ inline void KernelReluGrad<T>::Compute(int32_t progress)
{
    LocalTensor<T> xLocal = inQueueX.template DeQue<T>();     // gradients
    LocalTensor<T> yLocal = inQueueY.template DeQue<T>();     // features
    LocalTensor<T> outLocal = outQueueOut.template AllocTensor<T>();
    uint64_t n = this->processDataNum;

    if constexpr (kFloatHalf) {
        // x <= 0 -> +0, else grad (a NaN feature keeps grad)
        T zero = static_cast<T>(kIsFloat ? SCALAR_FLOAT : SCALAR_HALF);
        LocalTensor<uint8_t> mask1Local = tmpQueueMask1.AllocTensor<uint8_t>();
        CompareScalar(mask1Local, yLocal, zero, CMPMODE::LE, n);
        Duplicate(yLocal, zero, n);  // overwrites the features buffer with 0
        Select(outLocal, mask1Local, yLocal, xLocal, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    } else if constexpr (kBf16) {
        // in fp32: mask = clamp(feature, 0, 2^-126) * C * D * D, out = grad * mask, back with CAST_RINT
        LocalTensor<float> tmp1Local = tmpQueue1.AllocTensor<float>();
        LocalTensor<float> tmp2Local = tmpQueue2.AllocTensor<float>();
        Cast(tmp1Local, yLocal, RoundMode::CAST_NONE, n);
        Duplicate(tmp2Local, static_cast<float>(SCALAR_BF16_A), n);
        Min(tmp1Local, tmp1Local, tmp2Local, n);
        Duplicate(tmp2Local, static_cast<float>(SCALAR_BF16_B), n);
        Max(tmp2Local, tmp1Local, tmp2Local, n);
        Duplicate(tmp1Local, static_cast<float>(SCALAR_BF16_C), n);  // 0.0f: the wrapped 2^38
        Mul(tmp2Local, tmp2Local, tmp1Local, n);
        Duplicate(tmp1Local, static_cast<float>(SCALAR_BF16_D), n);  // 0.0f: the wrapped 2^44
        Mul(tmp2Local, tmp2Local, tmp1Local, n);
        Mul(tmp2Local, tmp2Local, tmp1Local, n);
        Cast(tmp1Local, xLocal, RoundMode::CAST_NONE, n);
        Mul(tmp2Local, tmp2Local, tmp1Local, n);
        Cast(outLocal, tmp2Local, RoundMode::CAST_RINT, n);
    } else if constexpr (kInt8) {
        // in half: mask = clamp(feature, 0, 2^-24) * 4096 * 4096, out = grad * mask, back with CAST_RINT
        LocalTensor<half> tmp1Local = tmpQueue1.AllocTensor<half>();
        LocalTensor<half> tmp2Local = tmpQueue2.AllocTensor<half>();
        Cast(tmp1Local, yLocal, RoundMode::CAST_NONE, n);
        Duplicate(tmp2Local, static_cast<half>(SCALAR_UINT8ORINT8_A), n);
        Min(tmp1Local, tmp1Local, tmp2Local, n);
        Duplicate(tmp2Local, static_cast<half>(SCALAR_UINT8ORINT8_B), n);
        Max(tmp2Local, tmp1Local, tmp2Local, n);
        Duplicate(tmp1Local, static_cast<half>(SCALAR_UINT8ORINT8_C), n);
        Mul(tmp2Local, tmp1Local, tmp2Local, n);
        Mul(tmp2Local, tmp2Local, tmp1Local, n);
        Cast(tmp1Local, xLocal, RoundMode::CAST_NONE, n);
        Mul(tmp2Local, tmp2Local, tmp1Local, n);
        Cast(outLocal, tmp2Local, RoundMode::CAST_RINT, n);
    } else {
        // int32: mask = max(min(feature, 1), 0) * 1 * 1, out = grad * mask (exact)
        Duplicate(outLocal, static_cast<int32_t>(SCALAR_INT32_B), n);
        Min(outLocal, yLocal, outLocal, n);
        Duplicate(yLocal, static_cast<int32_t>(SCALAR_INT32_A), n);
        Max(outLocal, outLocal, yLocal, n);
        Duplicate(yLocal, static_cast<int32_t>(SCALAR_INT32_B), n);
        Mul(outLocal, outLocal, yLocal, n);
        Mul(outLocal, outLocal, yLocal, n);
        Mul(outLocal, xLocal, outLocal, n);
    }

    outQueueOut.template EnQue<T>(outLocal);
    inQueueX.FreeTensor(xLocal);
    inQueueY.FreeTensor(yLocal);
}

}  // namespace NsReluGrad

#endif  // ASCEND_LAB_EXP_RELU_GRAD_H

// Lab 6's kernel without a bug (a spoiler: every round's kernel is this one with one bug put in).
// HardtanhGrad: gradInput = min_val < self < max_val ? gradOutput : 0, for T = float or half, double-buffered.
#include "kernel_operator.h"
#include "hardtanh_grad_tiling.h"

using namespace AscendC;

template <typename T>
class KernelHardtanhGrad {
public:
    static constexpr int32_t BUFFER_NUM = 2;
    static constexpr int32_t REPEAT_BYTES = 256;

    __aicore__ inline KernelHardtanhGrad() {}

    __aicore__ inline bool Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput,
                                const HardtanhGradTilingData& td)
    {
        int64_t blockIdx = GetBlockIdx();
        ubFactor = td.ubFactor;
        int64_t rest = td.totalLength - td.blockFactor * blockIdx;
        blockLength = rest < td.blockFactor ? rest : td.blockFactor;
        if (blockLength <= 0) {
            return false;
        }
        int64_t offset = td.blockFactor * blockIdx;
        gradGm.SetGlobalBuffer((__gm__ T*)gradOutput + offset, blockLength);
        selfGm.SetGlobalBuffer((__gm__ T*)self + offset, blockLength);
        gradInputGm.SetGlobalBuffer((__gm__ T*)gradInput + offset, blockLength);
        int64_t tileBytes = ubFactor * sizeof(T);
        pipe.InitBuffer(inQueueGrad, BUFFER_NUM, tileBytes);
        pipe.InitBuffer(inQueueSelf, BUFFER_NUM, tileBytes);
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileBytes);
        int64_t maskBytes = ((ubFactor + 7) / 8 + 31) / 32 * 32;
        pipe.InitBuffer(maskBuf, maskBytes);
        minVal = static_cast<T>(td.minVal);
        maxVal = static_cast<T>(td.maxVal);
        return true;
    }

    __aicore__ inline void Process()
    {
        int64_t loopCount = (blockLength + ubFactor - 1) / ubFactor;
        for (int64_t i = 0; i < loopCount; i++) {
            int64_t n = i < loopCount - 1 ? ubFactor : blockLength - ubFactor * i;
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(int64_t i, int64_t n)
    {
        LocalTensor<T> grad = inQueueGrad.template AllocTensor<T>();
        LocalTensor<T> x = inQueueSelf.template AllocTensor<T>();
        DataCopyParams params{1, static_cast<uint16_t>(n * sizeof(T)), 0, 0};
        DataCopyPadParams pad{false, 0, 0, 0};
        DataCopyPad(grad, gradGm[i * ubFactor], params, pad);
        DataCopyPad(x, selfGm[i * ubFactor], params, pad);
        inQueueGrad.EnQue(grad);
        inQueueSelf.EnQue(x);
    }

    __aicore__ inline void Compute(int64_t n)
    {
        LocalTensor<T> grad = inQueueGrad.template DeQue<T>();
        LocalTensor<T> x = inQueueSelf.template DeQue<T>();
        LocalTensor<T> out = outQueue.template AllocTensor<T>();
        LocalTensor<uint8_t> mask = maskBuf.template Get<uint8_t>();
        int64_t perRepeat = REPEAT_BYTES / sizeof(T);
        int64_t nAligned = (n + perRepeat - 1) / perRepeat * perRepeat;
        CompareScalar(mask, x, minVal, CMPMODE::GT, nAligned);
        Select(out, mask, grad, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        CompareScalar(mask, x, maxVal, CMPMODE::LT, nAligned);
        Select(out, mask, out, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        outQueue.EnQue(out);
        inQueueGrad.FreeTensor(grad);
        inQueueSelf.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(int64_t i, int64_t n)
    {
        LocalTensor<T> out = outQueue.template DeQue<T>();
        DataCopyParams params{1, static_cast<uint16_t>(n * sizeof(T)), 0, 0};
        DataCopyPad(gradInputGm[i * ubFactor], out, params);
        outQueue.FreeTensor(out);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueGrad;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueSelf;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<QuePosition::VECCALC> maskBuf;
    GlobalTensor<T> gradGm;
    GlobalTensor<T> selfGm;
    GlobalTensor<T> gradInputGm;
    int64_t ubFactor = 0;
    int64_t blockLength = 0;
    T minVal = 0;
    T maxVal = 0;
};

template <typename D_T>
__global__ __aicore__ void hardtanh_grad(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput, GM_ADDR workspace,
                                         GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(HardtanhGradTilingData, td, tiling);
    KernelHardtanhGrad<D_T> op;
    if (op.Init(gradOutput, self, gradInput, td)) {
        op.Process();
    }
}

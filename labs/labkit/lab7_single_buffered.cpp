// HardswishGrad for T = float or half: out = x < -3 ? 0 : x <= 3 ? grad * (x * T(1/3) + T(0.5)) : grad.
// Single-buffered: BUFFER_NUM blocks per queue (1). Lab 7 starts from this kernel.
#include "kernel_operator.h"
#include "hardswish_grad_tiling.h"

using namespace AscendC;

template <typename T>
class KernelHardswishGrad {
public:
    static constexpr int32_t BUFFER_NUM = 1;      // TODO: double buffering
    static constexpr int32_t REPEAT_BYTES = 256;

    __aicore__ inline KernelHardswishGrad() {}

    __aicore__ inline bool Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput, const HardswishGradTilingData& td)
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
        outGm.SetGlobalBuffer((__gm__ T*)gradInput + offset, blockLength);
        pipe.InitBuffer(inQueueGrad, BUFFER_NUM, ubFactor * sizeof(T));
        pipe.InitBuffer(inQueueSelf, BUFFER_NUM, ubFactor * sizeof(T));
        pipe.InitBuffer(outQueue, BUFFER_NUM, ubFactor * sizeof(T));
        pipe.InitBuffer(tmpBuf, ubFactor * sizeof(T));
        int64_t maskBytes = ((ubFactor + 7) / 8 + 31) / 32 * 32;
        pipe.InitBuffer(maskBuf, maskBytes < 32 ? 32 : maskBytes);
        return true;
    }

    __aicore__ inline void Process()
    {
        int64_t loops = (blockLength + ubFactor - 1) / ubFactor;
        for (int64_t i = 0; i < loops; i++) {
            int64_t n = i < loops - 1 ? ubFactor : blockLength - ubFactor * i;
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
        LocalTensor<T> tmp = tmpBuf.template Get<T>();
        LocalTensor<uint8_t> mask = maskBuf.template Get<uint8_t>();
        int64_t perRepeat = REPEAT_BYTES / sizeof(T);
        int64_t nAligned = (n + perRepeat - 1) / perRepeat * perRepeat;
        Muls(tmp, x, static_cast<T>(1.0 / 3.0), n);                               // x / 3
        Adds(tmp, tmp, static_cast<T>(0.5), n);                                   // x / 3 + 1/2
        Mul(tmp, tmp, grad, n);                                                   // grad * (x / 3 + 1/2)
        CompareScalar(mask, x, static_cast<T>(3), CMPMODE::LE, nAligned);
        Select(out, mask, tmp, grad, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);        // x <= 3 ? ... : grad
        CompareScalar(mask, x, static_cast<T>(-3), CMPMODE::GE, nAligned);
        Select(out, mask, out, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);   // x >= -3 ? ... : 0
        outQueue.EnQue(out);
        inQueueGrad.FreeTensor(grad);
        inQueueSelf.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(int64_t i, int64_t n)
    {
        LocalTensor<T> out = outQueue.template DeQue<T>();
        DataCopyParams params{1, static_cast<uint16_t>(n * sizeof(T)), 0, 0};
        DataCopyPad(outGm[i * ubFactor], out, params);
        outQueue.FreeTensor(out);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueGrad;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueSelf;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<QuePosition::VECCALC> tmpBuf;
    TBuf<QuePosition::VECCALC> maskBuf;
    GlobalTensor<T> gradGm;
    GlobalTensor<T> selfGm;
    GlobalTensor<T> outGm;
    int64_t ubFactor = 0;
    int64_t blockLength = 0;
};

template <typename D_T>
__global__ __aicore__ void hardswish_grad(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput, GM_ADDR workspace,
                                          GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(HardswishGradTilingData, td, tiling);
    KernelHardswishGrad<D_T> op;
    if (op.Init(gradOutput, self, gradInput, td)) {
        op.Process();
    }
}

// Lab 5's reference solution (a spoiler): LeakyReluGrad, out = x > 0 ? grad : grad * T(negative_slope), for
// T = float and half (the entry's D_T), double-buffered. The page shows it collapsed; the checker
// refuses it handed in as the learner's kernel.
#include "kernel_operator.h"
#include "leaky_relu_grad_tiling.h"

using namespace AscendC;

template <typename T>
class KernelLeakyReluGrad {
public:
    static constexpr int32_t BUFFER_NUM = 2;
    static constexpr int32_t REPEAT_BYTES = 256;

    __aicore__ inline KernelLeakyReluGrad() {}

    __aicore__ inline bool Init(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput,
                                const LeakyReluGradTilingData& td)
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
        pipe.InitBuffer(inQueueGrad, BUFFER_NUM, ubFactor * sizeof(T));
        pipe.InitBuffer(inQueueSelf, BUFFER_NUM, ubFactor * sizeof(T));
        pipe.InitBuffer(outQueueGradInput, BUFFER_NUM, ubFactor * sizeof(T));
        int64_t maskBytes = ((ubFactor + 7) / 8 + 31) / 32 * 32;       // one bit per element, whole 32 B
        pipe.InitBuffer(maskBuf, maskBytes < 32 ? 32 : maskBytes);
        slope = static_cast<T>(td.negativeSlope);                       // rounded to half for float16
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
        DataCopyParams params{1, static_cast<uint16_t>(n * sizeof(T)), 0, 0};   // blockLen in BYTES
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
        LocalTensor<T> out = outQueueGradInput.template AllocTensor<T>();
        LocalTensor<uint8_t> mask = maskBuf.template Get<uint8_t>();
        int64_t perRepeat = REPEAT_BYTES / sizeof(T);
        int64_t nAligned = (n + perRepeat - 1) / perRepeat * perRepeat;  // CompareScalar: whole repeats
        Muls(out, grad, slope, n);
        CompareScalar(mask, x, static_cast<T>(0), CMPMODE::GT, nAligned);
        Select(out, mask, grad, out, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        outQueueGradInput.EnQue(out);
        inQueueGrad.FreeTensor(grad);
        inQueueSelf.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(int64_t i, int64_t n)
    {
        LocalTensor<T> out = outQueueGradInput.template DeQue<T>();
        DataCopyParams params{1, static_cast<uint16_t>(n * sizeof(T)), 0, 0};
        DataCopyPad(gradInputGm[i * ubFactor], out, params);
        outQueueGradInput.FreeTensor(out);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueGrad;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueSelf;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueGradInput;
    TBuf<QuePosition::VECCALC> maskBuf;
    GlobalTensor<T> gradGm;
    GlobalTensor<T> selfGm;
    GlobalTensor<T> gradInputGm;
    int64_t ubFactor = 0;
    int64_t blockLength = 0;
    T slope = 0;
};

// The build instantiates the entry for the input's dtype (DTYPE_GRAD_OUTPUT in ops-nn; here the launch's D_T).
template <typename D_T>
__global__ __aicore__ void leaky_relu_grad(GM_ADDR gradOutput, GM_ADDR self, GM_ADDR gradInput, GM_ADDR workspace,
                                           GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(LeakyReluGradTilingData, td, tiling);
    KernelLeakyReluGrad<D_T> op;
    if (op.Init(gradOutput, self, gradInput, td)) {
        op.Process();
    }
}

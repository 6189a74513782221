// ascend_lab test fixture: ScaleShift, y = x * gain + bias, each step rounded in T (Muls, then Adds).
// One input; each core takes blockFactor elements from blockFactor * GetBlockIdx(), in tiles of ubFactor,
// copied with DataCopyPad (exact byte counts: no padding read or written).

#include "kernel_operator.h"

struct ScaleShiftTilingData {
    int64_t totalLength;
    int64_t blockFactor;
    int64_t ubFactor;
    float gain;
    float bias;
};

namespace NsScaleShift {
using namespace AscendC;

template <typename T>
class KernelScaleShift {
public:
    static constexpr int32_t BUFFER_NUM = 2;

    __aicore__ inline KernelScaleShift() {}

    __aicore__ inline bool Init(GM_ADDR x, GM_ADDR y, const ScaleShiftTilingData* td)
    {
        int64_t offset = td->blockFactor * GetBlockIdx();
        length_ = td->totalLength - offset;
        if (length_ > td->blockFactor) {
            length_ = td->blockFactor;
        }
        if (length_ <= 0) {
            return false;
        }
        ub_ = td->ubFactor;
        gain_ = td->gain;
        bias_ = td->bias;
        xGm.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe.InitBuffer(inQ, BUFFER_NUM, ub_ * sizeof(T));
        pipe.InitBuffer(outQ, BUFFER_NUM, ub_ * sizeof(T));
        return true;
    }

    __aicore__ inline void Process()
    {
        int64_t tiles = (length_ + ub_ - 1) / ub_;
        for (int64_t i = 0; i < tiles; ++i) {
            int64_t n = length_ - ub_ * i;
            if (n > ub_) {
                n = ub_;
            }
            DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            LocalTensor<T> xIn = inQ.template AllocTensor<T>();
            DataCopyPad(xIn, xGm[i * ub_], p, {false, 0, 0, 0});
            inQ.EnQue(xIn);
            LocalTensor<T> x = inQ.template DeQue<T>();
            LocalTensor<T> y = outQ.template AllocTensor<T>();
            Muls(y, x, static_cast<T>(gain_), static_cast<int32_t>(n));
            Adds(y, y, static_cast<T>(bias_), static_cast<int32_t>(n));
            outQ.EnQue(y);
            inQ.FreeTensor(x);
            LocalTensor<T> yOut = outQ.template DeQue<T>();
            DataCopyPad(yGm[i * ub_], yOut, p);
            outQ.FreeTensor(yOut);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQ;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQ;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    int64_t length_ = 0;
    int64_t ub_ = 0;
    float gain_ = 0.0f;
    float bias_ = 0.0f;
};
}  // namespace NsScaleShift

template <uint32_t schMode>
__global__ __aicore__ void scale_shift(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleShiftTilingData);
    GET_TILING_DATA_WITH_STRUCT(ScaleShiftTilingData, tilingData, tiling);
    NsScaleShift::KernelScaleShift<DTYPE_X> op;
    if (op.Init(x, y, &tilingData)) {
        op.Process();
    }
}

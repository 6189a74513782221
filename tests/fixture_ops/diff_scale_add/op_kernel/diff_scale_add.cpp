// ascend_lab test fixture: DiffScaleAdd, out = (x - y) * scale + z, each step rounded in T (Sub, Muls, Add).
// Three inputs; each core takes blockFactor elements from blockFactor * GetBlockIdx(), in tiles of ubFactor,
// copied with DataCopyPad (exact byte counts).

#include "kernel_operator.h"

struct DiffScaleAddTilingData {
    int64_t totalLength;
    int64_t blockFactor;
    int64_t ubFactor;
    float scale;
};

namespace NsDiffScaleAdd {
using namespace AscendC;

template <typename T>
class KernelDiffScaleAdd {
public:
    static constexpr int32_t BUFFER_NUM = 2;

    __aicore__ inline KernelDiffScaleAdd() {}

    __aicore__ inline bool Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR out, const DiffScaleAddTilingData* td)
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
        scale_ = td->scale;
        xGm.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        zGm.SetGlobalBuffer((__gm__ T*)z + offset, length_);
        outGm.SetGlobalBuffer((__gm__ T*)out + offset, length_);
        pipe.InitBuffer(xQ, BUFFER_NUM, ub_ * sizeof(T));
        pipe.InitBuffer(yQ, BUFFER_NUM, ub_ * sizeof(T));
        pipe.InitBuffer(zQ, BUFFER_NUM, ub_ * sizeof(T));
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
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(int64_t i, int64_t n)
    {
        DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        LocalTensor<T> xIn = xQ.template AllocTensor<T>();
        LocalTensor<T> yIn = yQ.template AllocTensor<T>();
        LocalTensor<T> zIn = zQ.template AllocTensor<T>();
        DataCopyPad(xIn, xGm[i * ub_], p, {false, 0, 0, 0});
        DataCopyPad(yIn, yGm[i * ub_], p, {false, 0, 0, 0});
        DataCopyPad(zIn, zGm[i * ub_], p, {false, 0, 0, 0});
        xQ.EnQue(xIn);
        yQ.EnQue(yIn);
        zQ.EnQue(zIn);
    }

    __aicore__ inline void Compute(int64_t n)
    {
        LocalTensor<T> x = xQ.template DeQue<T>();
        LocalTensor<T> y = yQ.template DeQue<T>();
        LocalTensor<T> z = zQ.template DeQue<T>();
        LocalTensor<T> out = outQ.template AllocTensor<T>();
        Sub(out, x, y, static_cast<int32_t>(n));
        Muls(out, out, static_cast<T>(scale_), static_cast<int32_t>(n));
        Add(out, out, z, static_cast<int32_t>(n));
        outQ.EnQue(out);
        xQ.FreeTensor(x);
        yQ.FreeTensor(y);
        zQ.FreeTensor(z);
    }

    __aicore__ inline void CopyOut(int64_t i, int64_t n)
    {
        DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        LocalTensor<T> out = outQ.template DeQue<T>();
        DataCopyPad(outGm[i * ub_], out, p);
        outQ.FreeTensor(out);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> xQ;
    TQue<QuePosition::VECIN, BUFFER_NUM> yQ;
    TQue<QuePosition::VECIN, BUFFER_NUM> zQ;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQ;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
    GlobalTensor<T> zGm;
    GlobalTensor<T> outGm;
    int64_t length_ = 0;
    int64_t ub_ = 0;
    float scale_ = 0.0f;
};
}  // namespace NsDiffScaleAdd

template <uint32_t schMode>
__global__ __aicore__ void diff_scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR out, GM_ADDR workspace,
                                          GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(DiffScaleAddTilingData);
    GET_TILING_DATA_WITH_STRUCT(DiffScaleAddTilingData, tilingData, tiling);
    NsDiffScaleAdd::KernelDiffScaleAdd<DTYPE_X> op;
    if (op.Init(x, y, z, out, &tilingData)) {
        op.Process();
    }
}

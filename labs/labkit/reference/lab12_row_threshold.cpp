// Lab 12's reference solution (a spoiler): out[r][c] = x[r][c] > threshold[r] ? grad[r][c] : 0, the threshold
// broadcast along the columns. Each tile is tileRows whole rows: the rows' grad and x, and their tileRows
// thresholds, come in on MTE2; per row, one CompareScalar against that row's threshold (read from UB as a scalar)
// and one Select with 0. A core's last tile has the rows that are left.
#include "kernel_operator.h"
#include "row_threshold_tiling.h"

using namespace AscendC;

template <typename T>
class KernelRowThreshold {
public:
    static constexpr int32_t BUFFER_NUM = 2;

    __aicore__ inline KernelRowThreshold() {}

    __aicore__ inline bool Init(GM_ADDR grad, GM_ADDR x, GM_ADDR threshold, GM_ADDR out,
                                const RowThresholdTilingData& td)
    {
        int64_t core = GetBlockIdx();
        cols = td.cols;
        tileRows = td.tileRows;
        int64_t first = td.rowsPerCore * core;
        int64_t rest = td.rows - first;
        coreRows = rest < td.rowsPerCore ? rest : td.rowsPerCore;
        if (coreRows <= 0) {
            return false;
        }
        gradGm.SetGlobalBuffer((__gm__ T*)grad + first * cols, coreRows * cols);
        xGm.SetGlobalBuffer((__gm__ T*)x + first * cols, coreRows * cols);
        outGm.SetGlobalBuffer((__gm__ T*)out + first * cols, coreRows * cols);
        thrGm.SetGlobalBuffer((__gm__ T*)threshold + first, coreRows);
        pipe.InitBuffer(inQueueGrad, BUFFER_NUM, tileRows * cols * sizeof(T));
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * cols * sizeof(T));
        int64_t thrBytes = (tileRows * sizeof(T) + 31) / 32 * 32;
        pipe.InitBuffer(inQueueThr, BUFFER_NUM, thrBytes);
        pipe.InitBuffer(outQueue, BUFFER_NUM, tileRows * cols * sizeof(T));
        int64_t maskBytes = (cols / 8 + 31) / 32 * 32;
        pipe.InitBuffer(maskBuf, maskBytes);
        return true;
    }

    __aicore__ inline void Process()
    {
        int64_t tiles = (coreRows + tileRows - 1) / tileRows;
        for (int64_t i = 0; i < tiles; i++) {
            int64_t rowsHere = i < tiles - 1 ? tileRows : coreRows - tileRows * i;
            CopyIn(i, rowsHere);
            Compute(rowsHere);
            CopyOut(i, rowsHere);
        }
    }

private:
    __aicore__ inline void CopyIn(int64_t i, int64_t rowsHere)
    {
        LocalTensor<T> g = inQueueGrad.template AllocTensor<T>();
        LocalTensor<T> xl = inQueueX.template AllocTensor<T>();
        LocalTensor<T> t = inQueueThr.template AllocTensor<T>();
        DataCopyParams rowsCopy{1, static_cast<uint16_t>(rowsHere * cols * sizeof(T)), 0, 0};
        DataCopyParams thrCopy{1, static_cast<uint16_t>(rowsHere * sizeof(T)), 0, 0};
        DataCopyPadParams pad{false, 0, 0, 0};
        DataCopyPad(g, gradGm[i * tileRows * cols], rowsCopy, pad);
        DataCopyPad(xl, xGm[i * tileRows * cols], rowsCopy, pad);
        DataCopyPad(t, thrGm[i * tileRows], thrCopy, pad);
        inQueueGrad.EnQue(g);
        inQueueX.EnQue(xl);
        inQueueThr.EnQue(t);
    }

    __aicore__ inline void Compute(int64_t rowsHere)
    {
        LocalTensor<T> g = inQueueGrad.template DeQue<T>();
        LocalTensor<T> xl = inQueueX.template DeQue<T>();
        LocalTensor<T> t = inQueueThr.template DeQue<T>();
        LocalTensor<T> o = outQueue.template AllocTensor<T>();
        LocalTensor<uint8_t> mask = maskBuf.template Get<uint8_t>();
        for (int64_t r = 0; r < rowsHere; r++) {
            T thr = t.GetValue(r);                                       // this row's threshold, a scalar
            CompareScalar(mask, xl[r * cols], thr, CMPMODE::GT, cols);   // cols: whole 256-byte repeats
            Select(o[r * cols], mask, g[r * cols], static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, cols);
        }
        outQueue.EnQue(o);
        inQueueGrad.FreeTensor(g);
        inQueueX.FreeTensor(xl);
        inQueueThr.FreeTensor(t);
    }

    __aicore__ inline void CopyOut(int64_t i, int64_t rowsHere)
    {
        LocalTensor<T> o = outQueue.template DeQue<T>();
        DataCopyParams rowsCopy{1, static_cast<uint16_t>(rowsHere * cols * sizeof(T)), 0, 0};
        DataCopyPad(outGm[i * tileRows * cols], o, rowsCopy);
        outQueue.FreeTensor(o);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueGrad;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueThr;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<QuePosition::VECCALC> maskBuf;
    GlobalTensor<T> gradGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> thrGm;
    GlobalTensor<T> outGm;
    int64_t cols = 0;
    int64_t tileRows = 0;
    int64_t coreRows = 0;
};

template <typename D_T>
__global__ __aicore__ void row_threshold_grad(GM_ADDR grad, GM_ADDR x, GM_ADDR threshold, GM_ADDR out,
                                              GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(RowThresholdTilingData, td, tiling);
    KernelRowThreshold<D_T> op;
    if (op.Init(grad, x, threshold, out, td)) {
        op.Process();
    }
}

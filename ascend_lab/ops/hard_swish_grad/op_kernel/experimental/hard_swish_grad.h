// ascend_lab gallery: HardSwishGrad, dx = dy * slope, slope = 0 for x < -3, x / 3 + 1/2 for -3 <= x <= 3, 1 above
// (PyTorch's hardswish_backward, boundaries included). No transcendental: two CompareScalar bit-masks and two
// Selects (tensor/scalar mode), over whole 256-byte repeats -- the work buffer is zeroed once so the tail of the
// last repeat is initialised.
// Written for the book in the style of the ops-nn experimental activation kernels: three double-buffered queues
// (dy, x in; dx out), float32 work in a TBuf (half and bfloat16 are cast up first and back with CAST_RINT last),
// x copied to float32 for the compares in every dtype.
#ifndef HARD_SWISH_GRAD_H
#define HARD_SWISH_GRAD_H

#include "kernel_operator.h"
#include "hard_swish_grad_tiling_data.h"

namespace NsHardSwishGrad {
using namespace AscendC;

template <typename T>
class KernelHardSwishGrad {
public:
    static constexpr int32_t BUFFER_NUM = 2;

    __aicore__ inline KernelHardSwishGrad() {}

    __aicore__ inline bool Init(GM_ADDR dy, GM_ADDR x, GM_ADDR dx, const HardSwishGradTilingData* td)
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
        dyGm.SetGlobalBuffer((__gm__ T*)dy + offset, length_);
        xGm.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        dxGm.SetGlobalBuffer((__gm__ T*)dx + offset, length_);
        pipe.InitBuffer(dyQ, BUFFER_NUM, ub_ * sizeof(T));
        pipe.InitBuffer(xQ, BUFFER_NUM, ub_ * sizeof(T));
        pipe.InitBuffer(dxQ, BUFFER_NUM, ub_ * sizeof(T));
        pipe.InitBuffer(workBuf, ub_ * sizeof(float) * 3);
        pipe.InitBuffer(maskBuf, ub_ / 4);              // two bit-masks of ub_ bits
        Duplicate(workBuf.Get<float>(), 0.0f, static_cast<int32_t>(ub_ * 3));
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 1001
        pipe.InitBuffer(boundBuf, 256 * sizeof(float));
        LocalTensor<float> bounds = boundBuf.Get<float>();
        Duplicate(bounds, -3.0f, 64);
        Duplicate(bounds[64], 3.0f, 64);
        Duplicate(bounds[128], 1.0f, 64);
        Duplicate(bounds[192], 0.0f, 64);
#endif
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
            CopyIn(i, static_cast<int32_t>(n));
            Compute(static_cast<int32_t>(n));
            CopyOut(i, static_cast<int32_t>(n));
        }
    }

private:
    __aicore__ inline void CopyIn(int64_t i, int32_t n)
    {
        DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        LocalTensor<T> dy = dyQ.template AllocTensor<T>();
        DataCopyPad(dy, dyGm[i * ub_], p, {false, 0, 0, 0});
        dyQ.EnQue(dy);
        LocalTensor<T> x = xQ.template AllocTensor<T>();
        DataCopyPad(x, xGm[i * ub_], p, {false, 0, 0, 0});
        xQ.EnQue(x);
    }

    __aicore__ inline void Compute(int32_t n)
    {
        LocalTensor<T> dy = dyQ.template DeQue<T>();
        LocalTensor<T> x = xQ.template DeQue<T>();
        LocalTensor<T> dx = dxQ.template AllocTensor<T>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> x32 = work;
        LocalTensor<float> dy32 = work[ub_];
        LocalTensor<float> t = work[ub_ * 2];
        LocalTensor<uint8_t> ge = maskBuf.Get<uint8_t>();
        LocalTensor<uint8_t> le = ge[ub_ / 8];
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 1001
        LocalTensor<float> bounds = boundBuf.Get<float>();     // -3, 3, 1, 0: 64 of each
#endif
        if constexpr (std::is_same_v<T, float>) {
            Adds(x32, x.template ReinterpretCast<float>(), 0.0f, n);   // into the zeroed buffer: whole repeats
            dy32 = dy.template ReinterpretCast<float>();
        } else {
            Cast(x32, x, RoundMode::CAST_NONE, n);
            Cast(dy32, dy, RoundMode::CAST_NONE, n);
        }
        int32_t whole = (n + 63) / 64 * 64;              // the compares work on whole 256-byte repeats
        Muls(t, x32, 0.333333343f, n);
        Adds(t, t, 0.5f, n);                            // x / 3 + 1 / 2
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 1001
        // Atlas training: no CompareScalar, Select in mode 0 only (one repeat's mask): repeat by repeat
        for (int32_t r = 0; r < whole; r += 64) {
            Compare(ge, x32[r], bounds, CMPMODE::GE, 64);
            Select(t[r], ge, t[r], bounds[192], SELMODE::VSEL_CMPMASK_SPR, 64);
            Compare(le, x32[r], bounds[64], CMPMODE::LE, 64);
            Select(t[r], le, t[r], bounds[128], SELMODE::VSEL_CMPMASK_SPR, 64);
        }
#else
        CompareScalar(ge, x32, -3.0f, CMPMODE::GE, whole);
        Select(t, ge, t, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        CompareScalar(le, x32, 3.0f, CMPMODE::LE, whole);
        Select(t, le, t, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
#endif
        if constexpr (std::is_same_v<T, float>) {
            Mul(dx.template ReinterpretCast<float>(), t, dy32, n);
        } else {
            Mul(t, t, dy32, n);
            Cast(dx, t, RoundMode::CAST_RINT, n);
        }
        dxQ.EnQue(dx);
        dyQ.FreeTensor(dy);
        xQ.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(int64_t i, int32_t n)
    {
        DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        LocalTensor<T> dx = dxQ.template DeQue<T>();
        DataCopyPad(dxGm[i * ub_], dx, p);
        dxQ.FreeTensor(dx);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> dyQ;
    TQue<QuePosition::VECIN, BUFFER_NUM> xQ;
    TQue<QuePosition::VECOUT, BUFFER_NUM> dxQ;
    TBuf<QuePosition::VECCALC> workBuf;
    TBuf<QuePosition::VECCALC> maskBuf;
    TBuf<QuePosition::VECCALC> boundBuf;
    GlobalTensor<T> dyGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> dxGm;
    int64_t length_ = 0;
    int64_t ub_ = 0;
};
}  // namespace NsHardSwishGrad

#endif  // HARD_SWISH_GRAD_H

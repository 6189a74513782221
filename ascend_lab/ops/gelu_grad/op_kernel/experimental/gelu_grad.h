// ascend_lab gallery: GeluGrad (exact, erf form), dx = dy * (cdf(x) + x * pdf(x)), cdf(x) = (1 + erf(x / sqrt 2)) / 2,
// pdf(x) = e^(-x^2 / 2) / sqrt(2 pi).
// Written for the book in the style of the ops-nn experimental activation kernels: three double-buffered queues
// (dy, x in; dx out), float32 work in a TBuf (half and bfloat16 are cast up first and back with CAST_RINT last),
// the high-level Erf with a sharedTmpBuffer of three floats per element (one Counter-mode chunk per tile), and Exp.
#ifndef GELU_GRAD_H
#define GELU_GRAD_H

#include "kernel_operator.h"
#include "gelu_grad_tiling_data.h"

namespace NsGeluGrad {
using namespace AscendC;

template <typename T>
class KernelGeluGrad {
public:
    static constexpr int32_t BUFFER_NUM = 2;

    __aicore__ inline KernelGeluGrad() {}

    __aicore__ inline bool Init(GM_ADDR dy, GM_ADDR x, GM_ADDR dx, const GeluGradTilingData* td)
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
        pipe.InitBuffer(workBuf, ub_ * sizeof(float) * 4);
        pipe.InitBuffer(tmpBuf, ub_ * sizeof(float) * 3);
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
        LocalTensor<float> cdf = work[ub_ * 2];
        LocalTensor<float> t = work[ub_ * 3];
        if constexpr (std::is_same_v<T, float>) {
            x32 = x.template ReinterpretCast<float>();
            dy32 = dy.template ReinterpretCast<float>();
        } else {
            Cast(x32, x, RoundMode::CAST_NONE, n);
            Cast(dy32, dy, RoundMode::CAST_NONE, n);
        }
        Muls(t, x32, 0.70710678f, n);                   // x / sqrt(2)
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 1001
        ErfByHand(cdf, t, tmpBuf.Get<float>(), n);      // Atlas training has no Erf: the same steps by hand
#else
        Erf(cdf, t, tmpBuf.Get<uint8_t>(), n);          // erf, a rational function on the mask register
#endif
        Adds(cdf, cdf, 1.0f, n);
        Muls(cdf, cdf, 0.5f, n);                        // cdf(x)
        Mul(t, x32, x32, n);
        Muls(t, t, -0.5f, n);
        Exp(t, t, n);                                   // e^(-x^2 / 2)
        Muls(t, t, 0.39894228f, n);                     // pdf(x)
        Mul(t, t, x32, n);
        Add(t, cdf, t, n);                              // cdf(x) + x pdf(x)
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

    // AscendC's Erf (erf_common_impl.h) as count-form instructions: x clipped to [-3.92, 3.92], x P(x^2) / Q(x^2).
    __aicore__ inline void ErfByHand(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                     const LocalTensor<float>& tmp, int32_t n)
    {
        LocalTensor<float> x = tmp;
        LocalTensor<float> x2 = tmp[ub_];
        LocalTensor<float> q = tmp[ub_ * 2];
        Mins(x, src, 3.92f, n);
        Maxs(x, x, -3.92f, n);
        Mul(x2, x, x, n);
        Muls(dst, x2, 0.053443748819f, n);
        Adds(dst, dst, 0.75517016694e1f, n);
        Mul(dst, dst, x2, n);
        Adds(dst, dst, 0.10162808918e3f, n);
        Mul(dst, dst, x2, n);
        Adds(dst, dst, 0.13938061484e4f, n);
        Mul(dst, dst, x2, n);
        Adds(dst, dst, 0.50637915060e4f, n);
        Mul(dst, dst, x2, n);
        Adds(dst, dst, 0.29639384698e5f, n);
        Mul(dst, dst, x, n);                            // x P(x^2)
        Adds(q, x2, 0.31212858877e2f, n);
        Mul(q, q, x2, n);
        Adds(q, q, 0.39856963806e3f, n);
        Mul(q, q, x2, n);
        Adds(q, q, 0.30231248150e4f, n);
        Mul(q, q, x2, n);
        Adds(q, q, 0.13243365831e5f, n);
        Mul(q, q, x2, n);
        Adds(q, q, 0.26267224157e5f, n);                // Q(x^2)
        Div(dst, dst, q, n);
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
    TBuf<QuePosition::VECCALC> tmpBuf;
    GlobalTensor<T> dyGm;
    GlobalTensor<T> xGm;
    GlobalTensor<T> dxGm;
    int64_t length_ = 0;
    int64_t ub_ = 0;
};
}  // namespace NsGeluGrad

#endif  // GELU_GRAD_H

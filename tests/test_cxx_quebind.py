"""TQueBind<VECIN, VECOUT, depth> from C++ (issue 23 item 5: the first gap of five ops-nn in-place activation kernels),
with the two constructs those kernels lean on: overloads told apart by parameter type, and the CRTP's
``static_cast<Derived&>(*this)``.

A kernel that copies in, computes in place and copies out through one bound queue gives max(x, 0) with no finding;
without the GM -> VECIN hand-over, V's read races MTE2's copy (``ub-race``), as on the device.
"""

from __future__ import annotations

import numpy as np
import pytest

from ascend_lab.ascendc import KernelError, TQueBind, cxx, launch
from ascend_lab.base.platform import get_soc
from ascend_lab.ops.common.kernel_args import gm_from_array

KERNEL = """
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
__aicore__ inline void Fill(TQue<TPosition::VECIN, 2>& q, GlobalTensor<T>& g, int32_t n) { }

template <typename T>
__aicore__ inline void Fill(TQueBind<TPosition::VECIN, TPosition::VECOUT, 1>& q, GlobalTensor<T>& g, int32_t n)
{
    LocalTensor<T> t = q.template AllocTensor<T>();
    DataCopy(t, g, n);
    HANDOVER_IN
}

template <typename Derived, typename T>
class Base {
public:
    __aicore__ inline void Run(GM_ADDR x, GM_ADDR y)
    {
        xGm.SetGlobalBuffer((__gm__ T*)x, 256);
        yGm.SetGlobalBuffer((__gm__ T*)y, 256);
        pipe.InitBuffer(q, 2, 1024);
        for (int32_t i = 0; i < 2; ++i) {
            Fill(q, xGm, 256);
            static_cast<Derived&>(*this).Compute();
            LocalTensor<T> t = q.template DeQue<QuePosition::VECOUT, QuePosition::GM, T>();
            DataCopy(yGm, t, 256);
            q.FreeTensor(t);
        }
    }
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
    GlobalTensor<T> xGm;
    GlobalTensor<T> yGm;
};

template <typename T>
class KernelRelu : public Base<KernelRelu<T>, T> {
public:
    __aicore__ inline void Compute()
    {
        LocalTensor<T> t = HANDOVER_TAKE;
        Relu(t, t, 256);
        this->q.template EnQue<QuePosition::VECOUT, QuePosition::GM, T>(t);
    }
};

extern "C" __global__ __aicore__ void relu_bind(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KernelRelu<float> op;
    op.Run(x, y);
}
"""
GOOD = {"HANDOVER_IN": "q.template EnQue<QuePosition::GM, QuePosition::VECIN, T>(t);",
        "HANDOVER_TAKE": "this->q.template DeQue<QuePosition::GM, QuePosition::VECIN, T>()"}
FLAT = """
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void relu_flat(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 256);
    yGm.SetGlobalBuffer((__gm__ float*)y, 256);
    pipe.InitBuffer(q, 1, 1024);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, xGm, 256);
    HANDOVER
    Relu(t, t, 256);
    q.EnQue<QuePosition::VECOUT, QuePosition::GM, float>(t);
    LocalTensor<float> o = q.DeQue<QuePosition::VECOUT, QuePosition::GM, float>();
    DataCopy(yGm, o, 256);
    q.FreeTensor(o);
}
"""
HANDOVER = ("q.EnQue<QuePosition::GM, QuePosition::VECIN, float>(t);\n"
            "    t = q.DeQue<QuePosition::GM, QuePosition::VECIN, float>();")


def _run(parts, src=KERNEL):
    for k, v in parts.items():
        src = src.replace(k, v)
    k = cxx.compile(src)
    x = np.random.default_rng(0).uniform(-2, 2, 256).astype(np.float32)
    out = gm_from_array(None, "y", nbytes=1024)
    run = launch(k, 1, [gm_from_array(x, "x"), out], b"", get_soc("Ascend910B4"), outputs=(1,), record=True)
    return x, out.ptr.allocation.buffer[:1024].view(np.float32), run


def test_a_bound_queue_copies_in_computes_in_place_and_copies_out():
    x, y, run = _run(GOOD)
    assert (y == np.maximum(x, 0)).all() and not run.trace.warnings
    pipes = [(e.pipe, e.instr) for e in run.trace.events if e.instr in ("DataCopy", "Relu")]
    assert pipes == [("MTE2", "DataCopy"), ("V", "Relu"), ("MTE3", "DataCopy")] * 2
    waits = [e for e in run.trace.events if e.instr == "DeQue"]
    assert len(waits) == 4                      # two hand-overs per tile


def test_without_the_copy_in_hand_over_the_read_races():
    x, y, _ = _run({"HANDOVER": HANDOVER}, FLAT)
    assert (y == np.maximum(x, 0)).all()
    with pytest.raises(KernelError) as info:
        _run({"HANDOVER": ""}, FLAT)
    assert info.value.kind == "ub-race" and "Relu" in str(info.value)


def test_other_binds_are_refused_by_name():
    with pytest.raises(ValueError, match="VECIN -> VECOUT"):
        TQueBind("VECOUT", "VECIN")

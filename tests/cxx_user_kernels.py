"""A user's own C++ kernel, as the ``%%ascendc`` magic and ``ascend-lab kernel`` tests write it (issue 20 item 6).

``ADD_KERNEL`` is the classic AscendC "add_custom" sample: z = x + y over ``totalLength`` float elements split
evenly over the cores, in tiles of ``tileLength`` through double-buffered queues. ``{tiling}`` is its tiling struct:
``TILING_STRUCT`` inline (a notebook cell) or ``#include "add_tiling.h"`` (a kernel file beside its header).
"""

from __future__ import annotations

TILING_STRUCT = """\
struct AddTilingData {
    uint32_t totalLength = 0;
    uint32_t tileLength = 256;
};"""

ADD_KERNEL = """\
#include "kernel_operator.h"
using namespace AscendC;
{tiling}

class KernelAdd {{
public:
    __aicore__ inline KernelAdd() {{}}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTilingData* td)
    {{
        blockLength = td->totalLength / GetBlockNum();
        tileLength = td->tileLength;
        xGm.SetGlobalBuffer((__gm__ float*)x + blockLength * GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + blockLength * GetBlockIdx(), blockLength);
        zGm.SetGlobalBuffer((__gm__ float*)z + blockLength * GetBlockIdx(), blockLength);
        pipe.InitBuffer(inX, 2, tileLength * sizeof(float));
        pipe.InitBuffer(inY, 2, tileLength * sizeof(float));
        pipe.InitBuffer(outZ, 2, tileLength * sizeof(float));
    }}
    __aicore__ inline void Process()
    {{
        for (uint32_t i = 0; i < blockLength / tileLength; i++) {{
            LocalTensor<float> x = inX.AllocTensor<float>();
            LocalTensor<float> y = inY.AllocTensor<float>();
            DataCopy(x, xGm[i * tileLength], tileLength);
            DataCopy(y, yGm[i * tileLength], tileLength);
            inX.EnQue(x);
            inY.EnQue(y);
            x = inX.DeQue<float>();
            y = inY.DeQue<float>();
            LocalTensor<float> z = outZ.AllocTensor<float>();
            Add(z, x, y, tileLength);
            outZ.EnQue(z);
            inX.FreeTensor(x);
            inY.FreeTensor(y);
            z = outZ.DeQue<float>();
            DataCopy(zGm[i * tileLength], z, tileLength);
            outZ.FreeTensor(z);
        }}
    }}
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inX, inY;
    TQue<QuePosition::VECOUT, 2> outZ;
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t blockLength = 0;
    uint32_t tileLength = 0;
}};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{{
    GET_TILING_DATA_WITH_STRUCT(AddTilingData, tilingData, tiling);
    KernelAdd op;
    op.Init(x, y, z, &tilingData);
    op.Process();
}}
"""

#: the line of the kernel that copies x in (a read past x's end is found there)
COPY_IN_X = "            DataCopy(x, xGm[i * tileLength], tileLength);"
#: the statement whose ';' the broken variants drop
ADD_CALL = "Add(z, x, y, tileLength);"


def add_kernel(inline: bool) -> str:
    """The kernel's text: the tiling struct inline, or included from ``add_tiling.h``."""
    return ADD_KERNEL.format(tiling=TILING_STRUCT if inline else '#include "add_tiling.h"')


def line_of(text: str, code: str) -> int:
    """1-based line of ``code`` (a whole line, or a part of one) in ``text``."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if code in ln)

// ascend_lab gallery: SiluGrad's kernel entry (one schedule; the element type from DTYPE_DY, as the build defines it).
#include "kernel_operator.h"
#include "silu_grad.h"

template <uint32_t schMode>
__global__ __aicore__ void silu_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR dx, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(SiluGradTilingData);
    GET_TILING_DATA_WITH_STRUCT(SiluGradTilingData, tilingData, tiling);
    NsSiluGrad::KernelSiluGrad<DTYPE_DY> op;
    if (op.Init(dy, x, dx, &tilingData)) {
        op.Process();
    }
}

// ascend_lab gallery: GeluGrad's kernel entry (one schedule; the element type from DTYPE_DY, as the build defines it).
#include "kernel_operator.h"
#include "gelu_grad.h"

template <uint32_t schMode>
__global__ __aicore__ void gelu_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR dx, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(GeluGradTilingData);
    GET_TILING_DATA_WITH_STRUCT(GeluGradTilingData, tilingData, tiling);
    NsGeluGrad::KernelGeluGrad<DTYPE_DY> op;
    if (op.Init(dy, x, dx, &tilingData)) {
        op.Process();
    }
}

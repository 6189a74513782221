// ascend_lab gallery: HardSwishGrad's kernel entry (one schedule; the element type from DTYPE_DY, as the build defines it).
#include "kernel_operator.h"
#include "hard_swish_grad.h"

template <uint32_t schMode>
__global__ __aicore__ void hard_swish_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR dx, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(HardSwishGradTilingData);
    GET_TILING_DATA_WITH_STRUCT(HardSwishGradTilingData, tilingData, tiling);
    NsHardSwishGrad::KernelHardSwishGrad<DTYPE_DY> op;
    if (op.Init(dy, x, dx, &tilingData)) {
        op.Process();
    }
}

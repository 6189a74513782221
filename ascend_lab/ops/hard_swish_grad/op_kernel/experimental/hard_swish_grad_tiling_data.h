// ascend_lab gallery: HardSwishGrad's tiling, as op_host.HardSwishGradTilingData packs it (three int64 fields).
#ifndef HARD_SWISH_GRAD_TILING_DATA_H
#define HARD_SWISH_GRAD_TILING_DATA_H

struct HardSwishGradTilingData {
    int64_t totalLength;
    int64_t blockFactor;
    int64_t ubFactor;
};

#endif  // HARD_SWISH_GRAD_TILING_DATA_H

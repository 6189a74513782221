// ascend_lab gallery: SiluGrad's tiling, as op_host.SiluGradTilingData packs it (three int64 fields).
#ifndef SILU_GRAD_TILING_DATA_H
#define SILU_GRAD_TILING_DATA_H

struct SiluGradTilingData {
    int64_t totalLength;
    int64_t blockFactor;
    int64_t ubFactor;
};

#endif  // SILU_GRAD_TILING_DATA_H

// ascend_lab gallery: GeluGrad's tiling, as op_host.GeluGradTilingData packs it (three int64 fields).
#ifndef GELU_GRAD_TILING_DATA_H
#define GELU_GRAD_TILING_DATA_H

struct GeluGradTilingData {
    int64_t totalLength;
    int64_t blockFactor;
    int64_t ubFactor;
};

#endif  // GELU_GRAD_TILING_DATA_H

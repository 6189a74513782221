// Lab 8 -- SoftshrinkGradTilingData as the kernel reads it: the struct your Python TilingData class packs
// (3 x int64_t + 1 x float, padded to 32 bytes). blockDim and the tiling key (schMode) travel beside it.
#ifndef LAB8_SOFTSHRINK_GRAD_TILING_H
#define LAB8_SOFTSHRINK_GRAD_TILING_H

struct SoftshrinkGradTilingData {
    int64_t totalLength;     // N
    int64_t blockFactor;     // elements per core (the last core may get fewer)
    int64_t ubFactor;        // elements per tile
    float lambd;             // the attribute, a C float
};

#endif  // LAB8_SOFTSHRINK_GRAD_TILING_H

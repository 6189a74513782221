// Lab 5 -- the LeakyReluGrad tiling data the host fills (labkit.lab5_copy_compute.LeakyReluGradTilingData):
// 3 x int64_t + 1 x float, padded to 32 bytes. blockDim and the tiling key (0 float, 1 half) travel beside it.
#ifndef LAB5_LEAKY_RELU_GRAD_TILING_H
#define LAB5_LEAKY_RELU_GRAD_TILING_H

struct LeakyReluGradTilingData {
    int64_t totalLength;     // N, the elements of the whole tensor
    int64_t blockFactor;     // elements per core (the last core may get fewer)
    int64_t ubFactor;        // elements per tile
    float negativeSlope;     // the attribute, a C float
};

#endif  // LAB5_LEAKY_RELU_GRAD_TILING_H

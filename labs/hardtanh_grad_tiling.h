// Lab 6 -- the HardtanhGrad tiling data the host fills (labkit.lab6_sanitizer.HardtanhGradTilingData):
// 3 x int64_t + 2 x float = 32 bytes. blockDim and the tiling key (0 float, 1 half) travel beside it.
#ifndef LAB6_HARDTANH_GRAD_TILING_H
#define LAB6_HARDTANH_GRAD_TILING_H

struct HardtanhGradTilingData {
    int64_t totalLength;     // N, the elements of the whole tensor
    int64_t blockFactor;     // elements per core (the last core may get fewer)
    int64_t ubFactor;        // elements per tile: 7 slots of T per element fit the usable UB
    float minVal;            // the attributes, C floats
    float maxVal;
};

#endif  // LAB6_HARDTANH_GRAD_TILING_H

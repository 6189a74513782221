// Lab 7 -- the HardswishGrad tiling data the host fills (labkit.lab7_double_buffer.HardswishGradTilingData):
// 3 x int64_t = 24 bytes. blockDim travels beside it.
#ifndef LAB7_HARDSWISH_GRAD_TILING_H
#define LAB7_HARDSWISH_GRAD_TILING_H

struct HardswishGradTilingData {
    int64_t totalLength;     // N
    int64_t blockFactor;     // elements per core (the last core may get fewer)
    int64_t ubFactor;        // elements per tile
};

#endif  // LAB7_HARDSWISH_GRAD_TILING_H

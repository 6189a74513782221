// ascend_lab -- HardSigmoidGrad tiling data (Ascend950 main-tree arch35 kernel).
//
// The struct the host tiling (ascend_lab/ops/hard_sigmoid_grad/op_host.py, tiling_main950)
// fills and the kernel reads with GET_TILING_DATA_WITH_STRUCT. Fields, order and C types equal the Python
// class: 3 x int64_t + 2 x float = 32 bytes, no padding. blockDim and the tiling key travel beside it.
// The default initialisers are the main tree's (alpha 1.0f / 6.0f, beta 0.5f).

#ifndef ASCEND_LAB_MAIN_HARD_SIGMOID_GRAD_TILING_DATA_H
#define ASCEND_LAB_MAIN_HARD_SIGMOID_GRAD_TILING_DATA_H

struct HardSigmoidGradTilingData {
    int64_t totalLength = 0;    // elements of the whole tensor
    int64_t blockFactor = 0;    // elements per core (the last core may get fewer)
    int64_t ubFactor = 0;       // elements per UB tile (a multiple of 64)
    float alpha = 1.0f / 6.0f;  // slope
    float beta = 0.5f;          // offset
};

#endif  // ASCEND_LAB_MAIN_HARD_SIGMOID_GRAD_TILING_DATA_H

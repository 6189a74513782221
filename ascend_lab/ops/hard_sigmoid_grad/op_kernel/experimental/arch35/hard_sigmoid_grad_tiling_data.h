// ascend_lab -- HardSigmoidGrad tiling data (experimental arch35 kernel).
//
// The struct the host tiling (ascend_lab/ops/hard_sigmoid_grad/op_host.py, HardSigmoidGradTilingData.tiling)
// fills and the kernel reads with GET_TILING_DATA_WITH_STRUCT. Fields, order and C types equal the Python
// class: 3 x int64_t + 2 x float = 32 bytes, no padding. blockDim and the tiling key travel beside it.
// The default initialisers are the op definition's attribute defaults (alpha 0.16666666f, beta 0.5f).

#ifndef ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_TILING_DATA_H
#define ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_TILING_DATA_H

struct HardSigmoidGradTilingData {
    int64_t totalLength = 0;    // elements of the whole tensor
    int64_t blockFactor = 0;    // elements per core (the last core may get fewer)
    int64_t ubFactor = 0;       // elements per UB tile (a multiple of 32)
    float alpha = 0.16666666f;  // slope
    float beta = 0.5f;          // offset
};

#endif  // ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_TILING_DATA_H

// ascend_lab -- ReluGrad tiling data (experimental kernel, 256-byte-block tiling).
//
// The struct the host tiling (ascend_lab/ops/relu_grad/op_host.py, ReluGradTilingData) fills and the kernel
// reads with GET_TILING_DATA_WITH_STRUCT. Fields, order and C types equal the Python class: 8 x uint64_t =
// 64 bytes. blockDim and the tiling key (0) travel beside it.

#ifndef ASCEND_LAB_EXP_RELU_GRAD_TILING_DATA_H
#define ASCEND_LAB_EXP_RELU_GRAD_TILING_DATA_H

struct ReluGradTilingData {
    uint64_t smallCoreDataNum;   // elements of a small core
    uint64_t bigCoreDataNum;     // elements of a big core (one 256-byte block more)
    uint64_t finalBigTileNum;    // tiles of a big core
    uint64_t finalSmallTileNum;  // tiles of a small core
    uint64_t tileDataNum;        // elements of a full tile
    uint64_t smallTailDataNum;   // elements of a small core's last tile
    uint64_t bigTailDataNum;     // elements of a big core's last tile
    uint64_t tailBlockNum;       // how many cores (the first ones) are big
};

#endif  // ASCEND_LAB_EXP_RELU_GRAD_TILING_DATA_H

// ascend_lab -- ThresholdGradV2D tiling data (experimental kernel, 256-byte-block tiling).
//
// The struct the host tiling (ascend_lab/ops/threshold_grad_v2_d/op_host.py, ThresholdGradV2DTilingData)
// fills and the kernel reads with GET_TILING_DATA_WITH_STRUCT. Fields, order and C types equal the Python
// class: 8 x uint64_t + float, then 4 bytes of tail padding = 72 bytes. blockDim and the tiling key (0)
// travel beside it.

#ifndef ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_TILING_DATA_H
#define ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_TILING_DATA_H

struct ThresholdGradV2DTilingData {
    uint64_t smallCoreDataNum;   // elements of a small core
    uint64_t bigCoreDataNum;     // elements of a big core (one 256-byte block more)
    uint64_t finalBigTileNum;    // tiles of a big core
    uint64_t finalSmallTileNum;  // tiles of a small core
    uint64_t tileDataNum;        // elements of a full tile
    uint64_t smallTailDataNum;   // elements of a small core's last tile
    uint64_t bigTailDataNum;     // elements of a big core's last tile
    uint64_t tailBlockNum;       // how many cores (the first ones) are big
    float threshold;             // the attribute
};

#endif  // ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_TILING_DATA_H

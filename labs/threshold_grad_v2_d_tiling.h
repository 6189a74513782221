// Lab 10 -- the TilingData of ThresholdGradV2D's experimental host tiling (ascend_lab/ops/threshold_grad_v2_d/
// op_host.py): 8 x uint64_t + float, padded to 72 bytes. The first tailBlockNum cores are big (one 256-byte block
// more); each core runs its tiles of tileDataNum elements, the last one *TailDataNum long.
#ifndef LAB10_THRESHOLD_GRAD_V2D_TILING_H
#define LAB10_THRESHOLD_GRAD_V2D_TILING_H

struct ThresholdGradV2DTilingData {
    uint64_t smallCoreDataNum;   // elements of a small core
    uint64_t bigCoreDataNum;     // elements of a big core (one 256-byte block more)
    uint64_t finalBigTileNum;    // tiles of a big core
    uint64_t finalSmallTileNum;  // tiles of a small core
    uint64_t tileDataNum;        // elements of a full tile
    uint64_t smallTailDataNum;   // elements of a small core's last tile
    uint64_t bigTailDataNum;     // elements of a big core's last tile
    uint64_t tailBlockNum;       // how many cores (the first ones) are big
    float threshold;             // the attribute, a C float
};

#endif  // LAB10_THRESHOLD_GRAD_V2D_TILING_H

// Lab 12 -- the RowThresholdGrad tiling data the host fills (labkit.lab12_broadcast.RowThresholdTilingData):
// 4 x int64_t = 32 bytes. grad and x are [rows, cols]; threshold is [rows], broadcast along the columns.
#ifndef LAB12_ROW_THRESHOLD_TILING_H
#define LAB12_ROW_THRESHOLD_TILING_H

struct RowThresholdTilingData {
    int64_t rows;          // R: the length of the broadcast axis (threshold has R elements)
    int64_t cols;          // C: elements per row (a whole number of 256-byte repeats)
    int64_t rowsPerCore;   // rows of each core (the last core may get fewer)
    int64_t tileRows;      // rows per tile (the last tile of a core may have fewer)
};

#endif  // LAB12_ROW_THRESHOLD_TILING_H

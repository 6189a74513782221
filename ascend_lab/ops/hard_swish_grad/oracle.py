"""HardSwishGrad's test oracle (numpy and ml_dtypes only): slope = x * float32(1/3) + 0.5 in float32 (each step
rounded), 0 where x < -3 and 1 where x > 3 or x is NaN (the compares are false), times dy in float32, then one
rounding to T (RINT) for half and bfloat16."""

import ml_dtypes
import numpy as np

_F = np.float32


def hard_swish_grad(dy: np.ndarray, x: np.ndarray) -> np.ndarray:
    dt = dy.dtype
    x32, dy32 = x.astype(_F), dy.astype(_F)
    with np.errstate(all="ignore"):
        slope = x32 * _F(0.333333343) + _F(0.5)
        slope = np.where(x32 >= _F(-3), slope, _F(0))
        slope = np.where(x32 <= _F(3), slope, _F(1))
        out = slope * dy32
    if dt == np.float32:
        return out.astype(_F)
    return out.astype(ml_dtypes.bfloat16 if dt == ml_dtypes.bfloat16 else dt)

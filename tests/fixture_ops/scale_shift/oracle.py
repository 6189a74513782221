"""ScaleShift's test oracle (numpy only): ``x * gain`` rounded in the dtype, then ``+ bias`` rounded again --
Muls and Adds, each in T. numpy's float16 arithmetic rounds through float32, which is exact for one product or
sum of two halves (24 >= 2 * 11 + 2 bits), so each step rounds once."""

import numpy as np


def scale_shift(x: np.ndarray, *, gain: float, bias: float) -> np.ndarray:
    dt = x.dtype.type
    return x * dt(np.float32(gain)) + dt(np.float32(bias))

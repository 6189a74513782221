"""DiffScaleAdd's test oracle (numpy only): ``x - y``, ``* scale``, ``+ z``, each rounded in the dtype (Sub, Muls,
Add in T; numpy's float16 steps round through float32, exact for one operation on halves)."""

import numpy as np


def diff_scale_add(x: np.ndarray, y: np.ndarray, z: np.ndarray, *, scale: float) -> np.ndarray:
    return (x - y) * x.dtype.type(np.float32(scale)) + z

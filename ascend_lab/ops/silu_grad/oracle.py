"""SiluGrad's test oracle (numpy and ml_dtypes only): the kernel's steps in float32, each rounded there -- the
sigmoid as the library's composition computes it in float (Muls -1, Exp, Adds 1, Div; Exp and Div correctly
rounded, the simulator's stated model) -- then one rounding to T (RINT) for half and bfloat16."""

import ml_dtypes
import numpy as np

_F = np.float32


def _r(x64: np.ndarray) -> np.ndarray:
    return np.asarray(x64, np.float64).astype(_F)


def silu_grad(dy: np.ndarray, x: np.ndarray) -> np.ndarray:
    dt = dy.dtype
    x32, dy32 = x.astype(_F), dy.astype(_F)
    with np.errstate(all="ignore"):
        e = _r(np.exp((x32 * _F(-1)).astype(np.float64)))
        s = _r(1.0 / (e + _F(1)).astype(np.float64))
        t = (s * _F(-1) + _F(1)) * x32 + _F(1)
        out = (t * s) * dy32
    if dt == np.float32:
        return out.astype(_F)
    return out.astype(ml_dtypes.bfloat16 if dt == ml_dtypes.bfloat16 else dt)

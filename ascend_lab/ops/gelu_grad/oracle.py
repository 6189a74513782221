"""GeluGrad's test oracle (numpy and ml_dtypes only): the kernel's steps in float32, each rounded there -- erf as the
library's Erf composes it (x clipped to [-3.92, 3.92], x P(x^2) / Q(x^2) with its constants, the division correctly
rounded), Exp correctly rounded (the simulator's stated model) -- then one rounding to T (RINT) for half and
bfloat16."""

import ml_dtypes
import numpy as np

_F = np.float32
_P = (0.29639384698e5, 0.50637915060e4, 0.13938061484e4, 0.10162808918e3, 0.75517016694e1, 0.053443748819)
_Q = (0.26267224157e5, 0.13243365831e5, 0.30231248150e4, 0.39856963806e3, 0.31212858877e2)


def _erf(v: np.ndarray) -> np.ndarray:
    x = np.clip(v, _F(-3.92), _F(3.92))
    x2 = x * x
    p = x2 * _F(_P[5])
    for c in _P[4:0:-1]:
        p = x2 * (p + _F(c))
    p = x * (p + _F(_P[0]))
    q = x2 + _F(_Q[4])
    for c in _Q[3::-1]:
        q = x2 * q + _F(c)
    return (p.astype(np.float64) / q.astype(np.float64)).astype(_F)


def gelu_grad(dy: np.ndarray, x: np.ndarray) -> np.ndarray:
    dt = dy.dtype
    x32, dy32 = x.astype(_F), dy.astype(_F)
    with np.errstate(all="ignore"):
        cdf = (_erf(x32 * _F(0.70710678)) + _F(1)) * _F(0.5)
        e = np.exp(((x32 * x32) * _F(-0.5)).astype(np.float64)).astype(_F)
        t = cdf + (e * _F(0.39894228)) * x32
        out = t * dy32
    if dt == np.float32:
        return out
    return out.astype(ml_dtypes.bfloat16 if dt == ml_dtypes.bfloat16 else dt)

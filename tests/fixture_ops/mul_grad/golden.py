"""The oracle of the test op: a product rounded once in the inputs' dtype (numpy does exactly that)."""

import numpy as np


def mul_grad(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.multiply(grad, x, dtype=grad.dtype)

"""The cases that pin the C++ AscendC kernels to the Python kernels they replaced (``data/cxx_kernel_digests.json``).

Before the book's four AscendC kernels were rewritten in C++, each case below was run through the Python kernel and
its output bytes, every trace event (core, pipe, instruction, tile, bytes, UB range, buffer, detail) and every
warning were hashed. ``tests/test_cxx_kernels.py`` runs the C++ kernels on the same cases and requires the same
digests: same bits, same events. (Cycles were equal too when the kernels were swapped; they are not pinned here.)
"""

from __future__ import annotations

import hashlib

import ml_dtypes
import numpy as np

SIZES = (1, 100, 7937, 40000, 123457)
KERNELS = (("hard_sigmoid_grad", "experimental", "Ascend950PR", ("float32", "float16", "bfloat16")),
           ("hard_sigmoid_grad", "main", "Ascend950PR", ("float32", "float16", "bfloat16")),
           ("threshold_grad_v2_d", "experimental", "Ascend910B4",
            ("float32", "float16", "bfloat16", "int32", "int8", "uint8")),
           ("relu_grad", "experimental", "Ascend910B4", ("float32", "float16", "bfloat16", "int32", "int8", "uint8")))
CASES = [(op, flavour, soc, d, n, bn) for op, flavour, soc, dts in KERNELS for d in dts for n in SIZES
         for bn in ((1, 2) if n == 40000 else (2,))]
_DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int32": np.int32,
           "int8": np.int8, "uint8": np.uint8}


def inputs(dname: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded inputs: floats in [-5, 5) with -3, 3, 0, NaN, inf up front; integers over their whole range."""
    rng = np.random.default_rng(n)
    dt = _DTYPES[dname]
    if dname in ("int32", "int8", "uint8"):
        info = np.iinfo(dt)
        return (rng.integers(info.min, info.max, n, endpoint=True).astype(dt),
                rng.integers(info.min, info.max, n, endpoint=True).astype(dt))
    g = rng.uniform(-5, 5, n).astype(dt)
    x = rng.uniform(-5, 5, n).astype(dt)
    x[:5] = np.array([-3, 3, 0, np.nan, np.inf])[:n]
    return g, x


def digest(run, out_bytes: bytes) -> str:
    """sha256 of the output bytes, every event's fields but its cycles, and the warnings of a launch.

    Cycles are left out on purpose: the cost model is pinned to its sources by its own tests and may change (a new
    row for a SoC); what a kernel *does* must not. At the swap the cycles were compared too (equal on every case)."""
    h = hashlib.sha256(out_bytes)
    for e in run.trace.events:
        h.update(repr((e.core, e.pipe, e.instr, e.tile, e.nbytes, e.count, e.ub, e.buffer, e.detail)).encode())
    for w in run.warnings:
        h.update(repr((w.core, w.tile, w.instr, w.kind, w.message)).encode())
    return h.hexdigest()

"""The gallery's three activation-backward operators (issue 23 item 4): SiluGrad, GeluGrad (erf form) and
HardSwishGrad, each a folder of its own (``ascend_lab/ops/<op>/``) with a C++ kernel in the ops-nn style.

Each runs through its aclnn API on the Ascend910B4 (40 cores) for float32, float16 and bfloat16, sizes from 1 element
to several tiles per core, with edge values (±0, ±inf, NaN, the hard-swish boundaries ±3) and is equal bit for bit to
its own ``oracle.py`` (numpy + ml_dtypes), with no sanitizer finding or warning; phase 1 refuses mixed dtypes, a
dtype the op does not list and a shape mismatch with 161002; an empty tensor is a success with nothing launched.
The operators are registered here if the registry does not list them yet (``registry.register``).
"""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

import ascend_lab as al
from ascend_lab.ops import registry

OPS = ("silu_grad", "gelu_grad", "hard_swish_grad")
DTYPES = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


@pytest.fixture(scope="module", autouse=True)
def _registered():
    added = []
    for op in OPS:
        try:
            registry.get(op)
        except (KeyError, ValueError):
            registry.register(f"ascend_lab.ops.{op}")
            added.append(op)
    yield
    for op in added:
        registry.unregister(op)


def _inputs(n, dt, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-6, 6, n).astype(np.float32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -3.0, 3.0, 1e-30, -1e30, 2.5], np.float32)
    x[:min(n, edges.size)] = edges[:min(n, edges.size)]
    dy = rng.uniform(-2, 2, n).astype(np.float32)
    with np.errstate(over="ignore"):                 # -1e30 overflows half: -inf, one more edge
        return dy.astype(dt), x.astype(dt)


def _same_bits(got, want):
    assert got.dtype == want.dtype
    g, w = got.astype(np.float32), want.astype(np.float32)
    nan = np.isnan(w)
    assert (np.isnan(g) == nan).all()
    ui = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
    bad = np.flatnonzero((got.view(ui) != want.view(ui)) & ~nan)
    assert not bad.size, [(i, g[i], w[i]) for i in bad[:5]]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("n", [1, 77, 4096, 200_003])
def test_the_kernel_equals_its_oracle(op, dt, n):
    spec = registry.get(op)
    oracle = getattr(importlib.import_module(f"ascend_lab.ops.{op}.oracle"), op)
    dy, x = _inputs(n, dt, n)
    run = al.call(spec.aclnn.convenience, dy, x, soc="Ascend910B4")
    assert run.ok and run.kernel == "experimental", run
    assert run.kernel_runs and not [w for k in run.kernel_runs for w in k.warnings]
    _same_bits(np.asarray(run.out), oracle(dy, x))


@pytest.mark.parametrize("op", OPS)
def test_a_big_input_spreads_over_the_cores_in_whole_tiles(op):
    spec = registry.get(op)
    kernel = spec.kernels["experimental"]
    td = kernel.tiling(200_003, "float16", 40, 192 * 1024)
    rows = kernel.core_ranges(td)
    assert td.blockDim == len(rows) == 40 and sum(r["data_num"] for r in rows) == 200_003
    assert td.blockFactor % 64 == 0 and td.ubFactor % 64 == 0


@pytest.mark.parametrize("op", OPS)
def test_phase_one_refuses_bad_input_with_a_status(op):
    conv = registry.get(op).aclnn.convenience
    x = np.ones(64, np.float32)
    assert al.call(conv, x.astype(np.float16), x, soc="Ascend910B4").status == 161002          # mixed dtypes
    assert al.call(conv, x.astype(np.int32), x.astype(np.int32), soc="Ascend910B4").status == 161002
    assert al.call(conv, x[:32], x, soc="Ascend910B4").status == 161002                        # shapes differ
    empty = al.call(conv, x[:0], x[:0], soc="Ascend910B4")
    assert empty.ok and empty.out.size == 0


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3", "Ascend950PR"])
def test_every_soc_runs_it_with_the_same_bits(op, soc):
    """Atlas training (910A) has no Erf and no CompareScalar / Select modes 1-2: GeluGrad composes erf by hand and
    HardSwishGrad compares repeat by repeat there (``#if __NPU_ARCH__ == 1001``, the build's -D per architecture);
    310P and the 950 run the library's APIs (the 950's Sigmoid and Erf: one float32 loop, the same bits)."""
    spec = registry.get(op)
    oracle = getattr(importlib.import_module(f"ascend_lab.ops.{op}.oracle"), op)
    dy, x = _inputs(5000, np.dtype(np.float16), 3)
    run = al.call(spec.aclnn.convenience, dy, x, soc=soc)
    assert run.ok, run.messages
    _same_bits(np.asarray(run.out), oracle(dy, x))

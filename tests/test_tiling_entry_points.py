"""Issue 26 item 7: what the live tiling page exposed, fixed in the package.

* Every tiling entry point reports the attribute values the kernel will use: ``tiling.<op>()`` without an
  attribute takes the chosen kernel's own default, as ``tiling.compute()``, ``ops.live_tiling.compute()`` and an
  aclnn run do (HardSigmoidGrad's TBE and main kernels: alpha = float32(1/6) = 0.1666666717; the experimental
  kernel: float32(0.16666666) = 0.1666666567).
* A UB smaller than one 32-byte block is refused with a message in bytes, by every front door; the TBE tiling
  refuses a UB that leaves a coexisting tensor less than one block, or a tile of no element (ubFactor 0).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import tiling
from ascend_lab.ops import live_tiling, registry
from ascend_lab.ops.hard_sigmoid_grad import op_host

FACTS = json.loads(json.dumps(live_tiling.build_facts()))


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend950PR"])
@pytest.mark.parametrize("kernel", ["tbe", "main", "experimental"])
def test_front_door_alpha_is_the_kernels(kernel, soc):
    spec = registry.get("hard_sigmoid_grad")
    want = spec.check_attrs({}, kernel)["alpha"]
    front = tiling.hard_sigmoid_grad(1000, "float16", soc=soc, kernel=kernel)
    assert front.alpha == tiling.compute("hard_sigmoid_grad", 1000, "float16", soc=soc, kernel=kernel).alpha == want
    live = live_tiling.compute(FACTS, "hard_sigmoid_grad", 1000, "float16", soc, kernel=kernel)
    assert live["fields"]["alpha"] == want
    assert want == (op_host.ALPHA_EXPERIMENTAL if kernel == "experimental" else op_host.ALPHA_MAIN)
    # an attribute given still wins
    assert tiling.hard_sigmoid_grad(1000, "float16", soc=soc, kernel=kernel, alpha=0.25).alpha == 0.25


def test_front_door_alpha_matches_the_run():
    x = np.linspace(-4, 4, 64, dtype=np.float32)
    run = al.hardsigmoid_backward(x, x, soc="Ascend910B4")
    assert run.status == 0
    front = tiling.hard_sigmoid_grad(x.size, "float32", soc="Ascend910B4", kernel=run.kernel)
    assert front.alpha == run.tiling.alpha


def test_front_door_signature_names_the_kernel_default():
    import inspect

    sig = inspect.signature(tiling.hard_sigmoid_grad)
    assert sig.parameters["alpha"].default is tiling.KERNEL_DEFAULT
    assert "0.1666666716337204" in tiling.hard_sigmoid_grad.__doc__
    with pytest.raises(TypeError, match="alpha"):
        tiling.hard_sigmoid_grad(10, "float32", soc="Ascend910B4", alpha=None)


@pytest.mark.parametrize("op", ["hard_sigmoid_grad", "threshold_grad_v2_d", "relu_grad"])
@pytest.mark.parametrize("ub", [1, 16, 31])
def test_ub_below_one_block_refused_everywhere(op, ub):
    for kernel in registry.get(op).kernels:
        with pytest.raises(ValueError, match=rf"ub_size {ub} B is smaller than one 32-byte block"):
            tiling.compute(op, 100_000, "float32", ub_size=ub, soc="Ascend950PR", kernel=kernel)
        with pytest.raises(ValueError, match=rf"ub_size {ub} B is smaller than one 32-byte block"):
            live_tiling.compute(FACTS, op, 100_000, "float32", "Ascend950PR", None, ub, kernel)


@pytest.mark.parametrize("n", [10, 100_000])
def test_tbe_ub_below_one_block_per_tensor(n):
    with pytest.raises(tiling.TilingError, match=r"a UB of 100 B gives each of the 4 tensors .* 25 B, less than "
                                                 r"one 32-byte block; it needs at least 128 B"):
        tiling.compute("hard_sigmoid_grad", n, "float32", ub_size=100, soc="Ascend910B4", kernel="tbe")


def test_tbe_never_returns_ubfactor_zero():
    for ub in (128, 1000, 4000, 4095):
        with pytest.raises(tiling.TilingError, match=r"fewer than the 128 a tile is cut in; it needs at least 4096 B"):
            tiling.compute("hard_sigmoid_grad", 100_000, "float32", ub_size=ub, soc="Ascend910B4", kernel="tbe")
    td = tiling.compute("hard_sigmoid_grad", 100_000, "float32", ub_size=4096, soc="Ascend910B4", kernel="tbe")
    assert td.ubFactor == 128
    for ub in range(32, 9000, 97):
        for n in (1, 500, 100_000):
            try:
                td = tiling.compute("relu_grad", n, "float16", ub_size=ub, soc="Ascend910B4", kernel="tbe")
            except tiling.TilingError:
                continue
            assert td.ubFactor > 0, (ub, n, td)

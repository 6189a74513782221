"""Issue 26 item 7: what the live tiling page exposed, fixed in the package.

* Every tiling entry point reports the attribute values the kernel will use: ``tiling.<op>()`` without an
  attribute takes the chosen kernel's own default, as ``tiling.compute()``, ``live.live_tiling.compute()`` and an
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
from ascend_lab.live import live_tiling
from ascend_lab.ops import registry
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


@pytest.mark.parametrize("op", [spec.key for spec in registry.ops()])
@pytest.mark.parametrize("ub", [1, 16, 31])
def test_ub_below_one_block_refused_everywhere(op, ub):
    for kernel in registry.get(op).kernels:
        with pytest.raises(ValueError, match=rf"ub_size {ub} B is smaller than one 32-byte block"):
            tiling.compute(op, 100_000, "float32", ub_size=ub, soc="Ascend950PR", kernel=kernel)
        with pytest.raises(ValueError, match=rf"ub_size {ub} B is smaller than one 32-byte block"):
            live_tiling.compute(FACTS, op, 100_000, "float32", "Ascend950PR", None, ub, kernel)


# HardSigmoidGrad fp32 compiled for 910B4 (tests/test_tbe_storage_bound.py example 1): 5 tensors coexist, the
# schedule takes 2 x 96 B of temporaries off the ini's UB, which is ub_size + 256 (GetCoreMemSize keeps 256 B).
HSG_COEXIST, HSG_EXTRA, RESERVE = 5, 96, 256


@pytest.mark.parametrize("n", [10, 100_000])
def test_tbe_ub_below_one_block_per_tensor(n):
    # ub_size 64: (64 + 256 - 192) // 5 = 25 B per tensor; one block each needs 5 * 32 + 192 - 256 = 96 B
    with pytest.raises(tiling.TilingError, match=r"a UB of 320 B, less 192 B of temporaries, gives each of the 5 "
                                                 r"tensors .* 25 B, less than one 32-byte block; it needs "
                                                 r"ub_size >= 96 B"):
        tiling.compute("hard_sigmoid_grad", n, "float32", ub_size=64, soc="Ascend910B4", kernel="tbe")


def test_tbe_never_returns_ubfactor_zero():
    # 100000 elements on 40 cores: blockFactor 2560, double-buffered; a tile of 128 fp32 per buffer per tensor
    need = 128 * 4 * HSG_COEXIST * 2 + 2 * HSG_EXTRA - RESERVE
    for ub in (128, 1000, 4000, need - 1):
        with pytest.raises(tiling.TilingError, match=rf"fewer than the 128 a tile is cut in; it needs "
                                                     rf"ub_size >= {need} B"):
            tiling.compute("hard_sigmoid_grad", 100_000, "float32", ub_size=ub, soc="Ascend910B4", kernel="tbe")
    td = tiling.compute("hard_sigmoid_grad", 100_000, "float32", ub_size=need, soc="Ascend910B4", kernel="tbe")
    assert td.ubFactor == 128
    for ub in range(32, 9000, 97):
        for n in (1, 500, 100_000):
            try:
                td = tiling.compute("relu_grad", n, "float16", ub_size=ub, soc="Ascend910B4", kernel="tbe")
            except tiling.TilingError:
                continue
            assert td.ubFactor > 0, (ub, n, td)

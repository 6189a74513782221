"""What runs where (kernel_flavours §1): every (op, SoC, flavour) through the aclnn path.

A flavour whose kernel is registered for the SoC runs and matches that kernel's own oracle bit for bit; any other
flavour fails phase 1 with 561103 and a log line naming op, flavour and SoC. With no flavour asked for, a stock
install runs TBE on 910A/910B/910_93/310P and the main-tree kernel on 950; with the experimental custom package
installed, the experimental kernel runs where its op definition registers it.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_bits_equal, oracle_of

import ascend_lab as al
from ascend_lab.base import platform
from ascend_lab.ops import registry
from ascend_lab.ops.common.l0_kernel import stock_flavour
from ascend_lab.ops.spec import FLAVOURS

#: Scalars that steer an aclnn API to one of its L0 ops (ReluGrad: ThresholdBackward with threshold 0); an op not
#: listed is reached with its API's default scalars.
STEER = {"ThresholdGradV2D": {"threshold": 0.5}, "ReluGrad": {"threshold": 0.0}}


def _reach() -> dict[str, tuple[str, tuple[float, ...]]]:
    """op type -> (the aclnn API that reaches it, its scalars), for every registered op an API lists in l0_ops."""
    reach = {}
    for _, api in registry.aclnn_apis():
        for op_type in api.l0_ops:
            steer = STEER.get(op_type, {})
            reach.setdefault(op_type, (api.convenience, tuple(steer.get(sc.name, sc.default) for sc in api.scalars)))
    return reach


REACH = _reach()
G = np.linspace(-3.5, 3.5, 3001, dtype=np.float32)
X = np.linspace(-4.0, 4.0, 3001, dtype=np.float32)[::-1].copy()


def _inputs(op_type: str) -> tuple[np.ndarray, ...]:
    """G, X (and X reversed for a third tensor): one array per tensor of the API that reaches ``op_type``."""
    return (G, X, X[::-1].copy())[:len(registry.aclnn_api(REACH[op_type][0])[1].tensors)]


def call(op_type: str, soc: str, kernel: str | None) -> al.Run:
    api, scalars = REACH[op_type]
    return al.call(api, *_inputs(op_type), *scalars, soc=soc, kernel=kernel)


def _expected(run: al.Run, op_type: str) -> np.ndarray:
    return oracle_of(run)[1](*_inputs(op_type))


def test_every_registered_op_is_reachable():
    assert set(STEER) <= {s.op_type for s in registry.ops()}
    assert {s.op_type for s in registry.ops() if s.aclnn is not None} <= set(REACH)
    assert all(registry.get(op).op_type == op for op in REACH)


@pytest.mark.parametrize("soc", platform.socs())
@pytest.mark.parametrize("op_type", sorted(REACH))
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_asked_flavour_runs_where_registered_else_561103(op_type, soc, flavour):
    spec = registry.get(op_type)
    info = platform.get_soc(soc)
    kernel = spec.kernels.get(flavour)
    run = call(op_type, soc, flavour)
    if kernel is not None and kernel.registered_for(info):
        assert run.status == 0, run.messages
        assert run.kernel == flavour and op_type in run.graph
        assert_bits_equal(run.out, _expected(run, op_type), f"{op_type} {flavour} on {soc} vs {oracle_of(run)[0]}")
        assert run.kernel_runs[0].trace.meta["kernel_flavour"] == flavour
    else:
        assert run.status == 561103, (run.status, run.messages)
        log = " ".join(run.messages)
        assert op_type in log and flavour in log and soc in log, log


@pytest.mark.parametrize("soc", platform.socs())
@pytest.mark.parametrize("op_type", sorted(REACH))
def test_default_is_what_a_stock_install_runs(op_type, soc):
    spec = registry.get(op_type)
    info = platform.get_soc(soc)
    stock = stock_flavour(info)
    assert stock == ("main" if soc.startswith("Ascend950") else "tbe")
    run = call(op_type, soc, None)
    assert run.status == 0, run.messages
    # an op the simulator has no stock kernel of (a new op with only an experimental kernel) runs its first one
    has_stock = stock in spec.kernels and spec.kernels[stock].registered_for(info)
    want = stock if has_stock else spec.kernel().flavour
    assert run.kernel == want, f"{op_type} on {soc}: ran {run.kernel}, a stock install runs {stock}"
    node = next(n for n in run.nodes if n.op == op_type)
    assert node.attrs["kernel"] == want and stock in node.why


@pytest.mark.parametrize("soc", platform.socs())
@pytest.mark.parametrize("op_type", sorted(REACH))
def test_custom_package_runs_the_experimental_kernel_where_registered(op_type, soc):
    spec = registry.get(op_type)
    info = platform.get_soc(soc)
    with al.acl.custom_package("experimental"):
        run = call(op_type, soc, None)
    assert run.status == 0, run.messages
    experimental = spec.kernels.get("experimental")
    if experimental is not None and experimental.registered_for(info):
        assert run.kernel == "experimental"
    else:
        stock = stock_flavour(info)
        assert run.kernel == (stock if stock in spec.kernels else spec.kernel().flavour)
    assert al.acl.custom_packages() == ()


def test_unknown_flavour_is_a_value_error():
    with pytest.raises(ValueError, match="kernel must be one of tbe, main, experimental"):
        al.hardsigmoid_backward(G, X, kernel="cuda")

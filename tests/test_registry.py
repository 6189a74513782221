"""The operator registry: every tool lists operators from it, and a new op is one folder plus one line."""

from __future__ import annotations

import dataclasses
import inspect

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import cli, tiling
from ascend_lab import explore as E
from ascend_lab import standalone as sa
from ascend_lab.ops import registry
from ascend_lab.ops.spec import FLAVOURS, LIVE_KINDS, KernelSpec, LiveTiling


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture
def mul_grad():
    """The test-only operator of tests/fixture_ops/mul_grad, registered with its one line."""
    spec = registry.register("tests.fixture_ops.mul_grad")
    yield spec
    registry.unregister("mul_grad")


def test_builtin_specs_are_complete():
    keys = [s.key for s in registry.ops()]
    assert [f"ascend_lab.ops.{key}" for key in keys[:len(registry.OPERATOR_PACKAGES)]] == \
        list(registry.OPERATOR_PACKAGES)      # built-in ones first, in the order of their registry lines
    for spec in registry.ops():
        assert spec.op_def.name == spec.op_type
        assert set(spec.kernels) <= set(FLAVOURS)
        for flavour, kernel in spec.kernels.items():
            assert isinstance(kernel, KernelSpec) and kernel.flavour == flavour
            assert set(kernel.socs) <= {"ascend910", "ascend910b", "ascend910_93", "ascend310p", "ascend950"}
            assert len(kernel.args) == 3 and kernel.tile_field in kernel.tiling_data.field_names()
        # the oracle: in golden, or in the op's own folder (oracle.py)
        assert spec.oracle.startswith(("ascend_lab.golden:", f"ascend_lab.ops.{spec.key}.oracle:"))
    apis = [a.convenience for _, a in registry.aclnn_apis()]
    assert {"hardsigmoid_backward", "threshold_backward"} <= set(apis) and len(set(apis)) == len(apis)


def test_lookup_by_any_spelling():
    assert registry.get("HardSigmoidGrad") is registry.get("hard-sigmoid-grad") is registry.get("hard_sigmoid_grad")
    assert registry.aclnn_api("aclnnThresholdBackward")[1] is registry.aclnn_api("threshold_backward")[1]
    with pytest.raises(ValueError, match="unknown op 'Softplus'.*hard_sigmoid_grad"):
        registry.get("Softplus")
    with pytest.raises(ValueError, match="built-in"):
        registry.unregister("relu_grad")


def test_tiling_facade_and_aclnn_come_from_the_registry():
    for spec in registry.ops():
        front = getattr(tiling, spec.key)
        params = inspect.signature(front).parameters
        assert list(params)[:2] == [spec.n_name, "dtype"] and set(spec.attrs) <= set(params)
        assert getattr(tiling, spec.kernel().tiling_data.__name__) is spec.kernel().tiling_data
    for _, api in registry.aclnn_apis():
        assert getattr(al.aclnn, api.get_workspace_size.__name__) is api.get_workspace_size
        assert getattr(al, api.convenience).__name__ == api.convenience
    with pytest.raises(TypeError, match="tiling attributes: alpha, beta"):
        tiling.hard_sigmoid_grad(10, "float32", threshold=1.0)


def test_convenience_defaults_to_the_soc_in_force():
    g = np.ones(8, np.float32)
    with al.platform.soc("Ascend950PR"):
        assert al.hardsigmoid_backward(g, g).soc == "Ascend950PR"
    assert al.hardsigmoid_backward(g, g).soc == al.platform.current_soc().name


def test_new_operator_is_one_folder_plus_one_line(mul_grad, capsys):
    # ascend-lab tiling
    code, out, err = run_cli(capsys, "tiling", "MulGrad", "--n", "100000", "--dtype", "float16")
    assert code == 0 and err == "" and "MulGrad tiling: 100000 x float16" in out
    ub_factor = tiling.mul_grad(100000, 'float16', soc='Ascend910B4').ubFactor
    assert any(line.split()[:2] == ['ubFactor', str(ub_factor)] for line in out.splitlines())
    # ascend-lab run: the aclnn API, the kernel on the simulated cores, checked against the op's own oracle
    code, out, err = run_cli(capsys, "run", "mul_grad_test", "--shape", "3,1000", "--dtype", "float16")
    assert code == 0, err
    assert "L0 graph: Contiguous -> Contiguous -> MulGrad -> ViewCopy" in out
    assert "bit-exact vs golden: yes" in out and "golden.mul_grad" in out
    # the convenience layer, the tiling explorer and a tile map
    g = np.linspace(-2, 2, 5000, dtype=np.float32)
    run = al.call("mul_grad_test", g, g[::-1].copy())
    assert run.status == 0 and np.array_equal(run.out, g * g[::-1])
    assert ("MulGrad", "mul_grad") in [(v, k) for k, v in E.op_names().items()]
    state = E.TilingView().update(op="mul_grad", dtype="float32", soc="Ascend910B4", n=50_000, max_tiles=2)
    assert "error" not in state and state["tiling"].blockDim == 40 and state["lanes"].bars
    tm = E.tile_map(run)
    assert tm.op == "MulGrad" and tm.n == 5000 and sum(s.length for s in tm.segments) == 5000


def test_standalone_launch_of_a_registered_op(mul_grad):
    g = (np.arange(1000) % 50).astype(np.float16)
    kr, out = sa.run_kernel("MulGrad", g, g, soc="Ascend950PR")
    assert kr.kernel == "MulGrad" and np.array_equal(out, g * g)


def test_the_spec_declares_inputs_attrs_flavours_and_live_tiling():
    """What tools once guessed (two inputs, alpha/threshold, a TBE and a main kernel, the live tiling's kind from a
    module name) each spec now says."""
    for spec in registry.ops():
        assert spec.inputs == tuple(p.name for p in spec.op_def.inputs) and len(spec.outputs) == 1
        assert spec.flavours == tuple(spec.kernels)
        for kernel in spec.kernels.values():
            assert len(kernel.args) == len(spec.inputs) + len(spec.outputs)
            assert kernel.live is None or kernel.live.kind in LIVE_KINDS
    relu = registry.get("relu_grad")
    assert relu.inputs == ("gradients", "features") and relu.attrs == {}
    assert [relu.kernel(f).live.kind for f in ("experimental", "main", "tbe")] == ["host", "template", "tbe"]
    with pytest.raises(ValueError, match="must name the 3 GM tensors"):
        dataclasses.replace(relu, kernels={"main": dataclasses.replace(relu.kernel("main"), args=("a", "b"))})
    with pytest.raises(ValueError, match="tbe/template need one"):
        LiveTiling("tbe")


def test_run_kernel_node_and_the_bound_oracle():
    g = np.linspace(-5, 5, 3000, dtype=np.float32)
    run = al.threshold_backward(g, g[::-1].copy(), 0.5, soc="Ascend910B4", kernel="experimental")
    node = run.kernel_node
    assert node.op == "ThresholdGradV2D" and node.attrs["kernel"] == run.kernel == "experimental"
    assert node.attrs["tiling"] is run.tiling
    oracle = registry.oracle(node)
    assert oracle.keywords == {"threshold": node.attrs["threshold"]}
    assert np.array_equal(oracle(g, g[::-1].copy()), run.out)
    empty = al.threshold_backward(np.zeros(0, np.float32), np.zeros(0, np.float32), 0.5)
    assert empty.kernel_node is None and empty.kernel is None
    with pytest.raises(ValueError, match="takes a kernel node"):
        registry.oracle(empty.kernel_node)


def test_generic_helpers_take_the_ops_attrs():
    info = sa.make_soc("Ascend910B4")
    by_map = sa.tiling_for("threshold_grad_v2_d", 5000, "float32", info, "experimental", {"threshold": 0.25})
    by_kw = sa.tiling_for("threshold_grad_v2_d", 5000, "float32", info, "experimental", threshold=0.25)
    assert by_map == by_kw and by_map.threshold == np.float32(0.25)
    # one explorer's controls serve every op: another op's attribute is dropped, a name no op has is refused
    assert sa.op_attrs("relu_grad", {"threshold": 0.25, "alpha": 0.5}) == {}
    with pytest.raises(TypeError, match="unknown tiling attributes \\['treshold'\\]"):
        sa.tiling_for("relu_grad", 10, "float32", info, treshold=0.3)
    x = np.linspace(-4, 4, 2048, dtype=np.float16)
    _, a = sa.run_kernel("hard_sigmoid_grad", x, x, attrs={"alpha": 0.25, "beta": 0.5}, kernel="experimental")
    _, b = sa.run_kernel("hard_sigmoid_grad", x, x, alpha=0.25, beta=0.5, kernel="experimental")
    assert np.array_equal(a, b) and not np.array_equal(a, sa.run_kernel("hard_sigmoid_grad", x, x)[1])
    with pytest.raises(TypeError, match="takes 2 input arrays"):
        sa.run_kernel("relu_grad", x)

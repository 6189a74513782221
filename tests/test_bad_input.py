"""Bad input gets a clear answer before any device work (issue 14 items 3-5): the convenience layer, the CLI
and the tiling front door."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import cli, cli_run, tiling
from ascend_lab.ops import registry

G = np.linspace(-4, 4, 16, dtype=np.float32)


# --- the convenience layer --------------------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype", [(300, "int8"), (-1, "uint8"), (2**40, "int32")])
def test_threshold_the_scalar_dtype_cannot_hold(value, dtype):
    with pytest.raises(ValueError, match=rf"threshold {value!r} cannot be held by a \w+ scalar"):
        al.threshold_backward(G, G, value, threshold_dtype=dtype)


def test_ragged_input_is_refused():
    with pytest.raises(ValueError, match="grad_output is ragged"):
        al.hardsigmoid_backward([[1.0, 2.0], [3.0]], G)


def test_read_only_and_broadcast_out_are_refused_up_front():
    out = np.zeros(16, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        al.hardsigmoid_backward(G, G, out=out)
    base = np.zeros(1, np.float32)
    aliased = np.lib.stride_tricks.as_strided(base, shape=(16,), strides=(0,))   # writeable, every element one
    assert aliased.flags.writeable
    with pytest.raises(ValueError, match="broadcast view"):
        al.hardsigmoid_backward(G, G, out=aliased)
    assert al.acl.is_initialized() is False        # refused before aclInit


# --- the tiling front door --------------------------------------------------------------------------------
def test_unknown_soc_is_refused_even_with_numbers():
    with pytest.raises(ValueError, match="unknown SoC 'Ascend999'"):
        tiling.hard_sigmoid_grad(10, "float32", core_num=4, ub_size=196608, soc="Ascend999")


def test_ub_beyond_every_catalogued_soc_is_refused():
    biggest = max(al.platform.get_soc(s).ub_size for s in al.platform.socs())
    assert tiling.relu_grad(10, "float32", core_num=4, ub_size=biggest).blockDim == 1
    with pytest.raises(ValueError, match="larger than any catalogued SoC"):
        tiling.relu_grad(10, "float32", core_num=4, ub_size=biggest + 1)


@pytest.mark.parametrize("op", [spec.key for spec in registry.ops()])
def test_every_op_takes_the_int64_range(op):
    dtype = registry.get(op).dtypes[0]
    assert tiling.compute(op, 2**63 - 1, dtype, soc="Ascend910B4").blockDim >= 1
    with pytest.raises(ValueError, match="int64"):
        tiling.compute(op, 2**63, dtype, soc="Ascend910B4")


# --- the CLI ----------------------------------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("argv, needle", [
    (["--trace", ""], "empty path"),
    (["--trace", "/"], "is a folder"),
    (["--trace", "/no/such/folder/t.json"], "does not exist"),
    (["--shape", ",".join(["1"] * 65)], "at most 64"),
    (["--shape", str(2**63)], "int64"),
])
def test_cli_bad_run_arguments_exit_2_with_one_line(capsys, argv, needle):
    args = ["run", "hardsigmoid_backward", "--shape", "4"] + argv
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_refuses_a_run_larger_than_memory(capsys, monkeypatch):
    monkeypatch.setattr(cli_run, "_available_memory", lambda: 10 * 2**20)
    code, _, err = run_cli(capsys, "run", "hardsigmoid_backward", "--shape", "1000000")
    assert code == 2 and "GiB of host memory" in err


def test_cli_refuses_an_unwritable_trace_folder(capsys, tmp_path, monkeypatch):
    # the test machine runs as root, whom file modes cannot stop: the permission answer is simulated
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    code, _, err = run_cli(capsys, "run", "hardsigmoid_backward", "--shape", "4", "--trace", str(tmp_path / "t.json"))
    assert code == 2 and "no permission" in err


def test_cli_trace_that_cannot_be_written_exits_1(capsys):
    assert os.path.exists("/dev/full")        # Linux's always-full device: every write fails with ENOSPC
    code, _, err = run_cli(capsys, "run", "hardsigmoid_backward", "--shape", "4", "--trace", "/dev/full")
    assert code == 1 and "could not write the trace" in err and "No space left" in err

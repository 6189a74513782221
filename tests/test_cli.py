"""The ``ascend-lab`` command (``ascend_lab.cli``) and the ``python -m benchmarks`` smoke run.

Numbers printed by the CLI are checked against ``ascend_lab.tiling`` / ``core_ranges`` / the convenience
layer, except the cann_facts worked examples (§2.1, §4.1), which are hard-coded as the reference gives them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascend_lab as al
from ascend_lab import cli, tiling
from ascend_lab.base import platform
from ascend_lab.dtypes import as_acl_dtype
from ascend_lab.ops import registry
from ascend_lab.ops.hard_sigmoid_grad import op_host as hsg
from ascend_lab.ops.relu_grad import op_host as relu
from ascend_lab.ops.threshold_grad_v2_d import op_host as tgv2d

ROOT = Path(__file__).resolve().parents[1]


def call(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def field(out: str, name: str) -> str:
    """The value printed on a TilingData field line ``  name  value``."""
    m = re.search(rf"^  {name}\s+(\S+)", out, re.MULTILINE)
    assert m, f"no field {name} in:\n{out}"
    return m.group(1)


def table_rows(out: str) -> dict[int, tuple[str, ...]]:
    """Per-core table rows: core -> (kind, offset, elements, tiles, tail, padding)."""
    rows = {}
    for m in re.finditer(r"^\s+(\d+)\s+(big|small)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", out, re.MULTILINE):
        rows[int(m.group(1))] = m.groups()[1:]
    return rows


def line_with(out: str, prefix: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith(prefix)]
    assert lines, f"no line starting {prefix!r} in:\n{out}"
    return lines[0]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# --------------------------------------------------------------------------------------------------
# tiling
# --------------------------------------------------------------------------------------------------

def test_tiling_hsg_worked_example(capsys):
    # cann_facts §2.1: UB 253952 B, 64 AIV, N=100000 -> blockFactor 1563, blockDim 64, ubFactor fp32 7936
    code, out, err = call(capsys, "tiling", "hard_sigmoid_grad", "--n", "100000", "--dtype", "float32",
                          "--cores", "64", "--ub-size", "253952")
    assert code == 0 and err == ""
    assert field(out, "blockFactor") == "1563"
    assert field(out, "blockDim") == "64"
    assert field(out, "ubFactor") == "7936"
    td = tiling.hard_sigmoid_grad(100000, "float32", core_num=64, ub_size=253952)
    for name, value in td.as_dict().items():
        assert field(out, name) == cli.fmt_value(value)
    assert f"hex: {td.to_bytes().hex()}" in out
    # 64 cores: head, an ellipsis line, tail, then a summary
    rows = table_rows(out)
    assert 0 in rows and 63 in rows and 30 not in rows
    assert re.search(r"^\s+\.\.\.\s+\(\d+ more cores\)", out, re.MULTILINE)
    expected = {r["core"]: r for r in hsg.core_ranges(td)}
    for core, (kind, offset, elements, tiles, tail, padding) in rows.items():
        e = expected[core]
        assert (kind, int(offset), int(elements), int(tiles), int(tail), int(padding)) == \
            (e["kind"], e["offset"], e["data_num"], e["tile_num"], e["tail"], 0)
    assert rows[63][:3] == ("small", str(1563 * 63), str(100000 - 1563 * 63))
    summary = line_with(out, "summary:")
    assert "64 cores" in summary and "100000 elements touched = 100000 + 0 padding" in summary


@pytest.mark.parametrize("dtype, ub_factor", [("float16", 15872), ("bfloat16", 9056)])
def test_tiling_hsg_worked_example_other_dtypes(capsys, dtype, ub_factor):
    code, out, _ = call(capsys, "tiling", "HardSigmoidGrad", "--n", "100000", "--dtype", dtype,
                        "--cores", "64", "--ub-size", "253952")
    assert code == 0
    assert field(out, "ubFactor") == str(ub_factor)   # cann_facts §2.1
    td = tiling.hard_sigmoid_grad(100000, dtype, core_num=64, ub_size=253952)
    assert field(out, "tilingKey") == str(td.tilingKey)


def test_tiling_packed_bytes_layout(capsys):
    code, out, _ = call(capsys, "tiling", "threshold_grad_v2_d", "--n", "100", "--cores", "48", "--ub-size",
                        "196608", "--threshold", "0.5")
    assert code == 0
    td = tiling.threshold_grad_v2_d(100, "float32", core_num=48, ub_size=196608, threshold=0.5)
    assert f"hex: {td.to_bytes().hex()}" in out
    assert "(72 bytes)" in out
    raw = td.to_bytes()
    assert re.search(rf"^\s+\+64\s+float\s+threshold\s+{raw[64:68].hex(' ')}$", out, re.MULTILINE)
    assert re.search(r"^\s+\+68\s+\(padding\)\s+00 00 00 00$", out, re.MULTILINE)
    assert field(out, "threshold") == "0.5"


@pytest.mark.parametrize("n, dtype, cores, block_dim, tile, tail_blocks, touched", [
    # cann_facts §4.1 worked examples (ub = 196608 B)
    (100, "float32", 48, 1, 6976, 0, 128),
    (7000, "float32", 48, 48, 6976, 14, 7040),
    (100000, "float32", 48, 48, 6976, 27, 100032),
    (1000000, "float16", 48, 48, 13952, 37, 1000064),
    (333333, "int8", 48, 48, 13824, 7, 333568),
])
def test_tiling_tgv2d_worked_examples(capsys, n, dtype, cores, block_dim, tile, tail_blocks, touched):
    code, out, _ = call(capsys, "tiling", "ThresholdGradV2D", "--n", str(n), "--dtype", dtype,
                        "--cores", str(cores), "--ub-size", "196608")
    assert code == 0
    assert field(out, "blockDim") == str(block_dim)
    assert field(out, "tileDataNum") == str(tile)
    assert field(out, "tailBlockNum") == str(tail_blocks)
    assert f"{touched} elements touched = {n} + {touched - n} padding" in line_with(out, "summary:")


@pytest.mark.parametrize("op, dtype", [("threshold_grad_v2_d", "float16"), ("relu_grad", "int32"),
                                       ("ReluGrad", "bfloat16"), ("hard_sigmoid_grad", "bfloat16")])
@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend950PR", "Ascend310P3"])
def test_tiling_matches_facade_and_core_ranges(capsys, op, dtype, soc):
    n = 123457
    code, out, err = call(capsys, "tiling", op, "--n", str(n), "--dtype", dtype, "--soc", soc, "--all")
    assert code == 0 and err == ""
    spec = registry.get(op)
    td = getattr(tiling, spec.key)(n, dtype, soc=soc)
    for name, value in td.as_dict().items():
        assert field(out, name) == cli.fmt_value(value)
    host = {"hard_sigmoid_grad": hsg, "relu_grad": relu, "threshold_grad_v2_d": tgv2d}[spec.key]
    ranges = host.core_ranges(td, dtype, n)
    rows = table_rows(out)
    assert sorted(rows) == [r["core"] for r in ranges]       # --all: every core listed
    for r in ranges:
        kind, offset, elements, tiles, tail, padding = rows[r["core"]]
        assert (kind, int(offset), int(elements), int(tiles), int(tail)) == \
            (r["kind"], r["offset"], r["data_num"], r["tile_num"], r["tail"])
        assert int(padding) == r.get("padding", 0)
    assert "..." not in out


def test_tiling_defaults_come_from_soc(capsys):
    code, out, _ = call(capsys, "tiling", "hard_sigmoid_grad", "--n", "4096", "--soc", "ascend950pr")
    assert code == 0
    info = platform.get_soc("Ascend950PR")
    assert f"on {info.vector_core_num} vector cores, UB {info.ub_size} B" in out
    assert field(out, "blockDim") == str(tiling.hard_sigmoid_grad(4096, "float32", soc="Ascend950PR").blockDim)


def test_tiling_empty_hsg(capsys):
    code, out, _ = call(capsys, "tiling", "hard_sigmoid_grad", "--n", "0", "--dtype", "float16")
    assert code == 0
    assert field(out, "blockDim") == "1" and field(out, "totalLength") == "0"
    assert "no core has any work" in out


def test_tiling_unusable_ub_factor_exits_1(capsys):
    code, out, err = call(capsys, "tiling", "hard_sigmoid_grad", "--n", "10", "--ub-size", "100")
    assert code == 1 and err == ""
    assert field(out, "ubFactor") == "0"
    assert "the kernel cannot run this tiling" in out


@pytest.mark.parametrize("op, n, dtype, cores", [
    ("hard_sigmoid_grad", 10_000_003, "float16", 7), ("hard_sigmoid_grad", 65, "float32", 64),
    ("threshold_grad_v2_d", 1_000_001, "int8", 48), ("relu_grad", 77_777, "int32", 5),
])
def test_light_rows_agree_with_core_ranges(op, n, dtype, cores):
    """The rows without tile lists (for inputs with millions of tiles) agree with the full core_ranges."""
    td = getattr(tiling, op)(n, dtype, core_num=cores, ub_size=196608)
    light = registry.get(op).kernel().core_ranges(td, as_acl_dtype(dtype), n, tiles=False)
    full = cli.core_rows(op, td, as_acl_dtype(dtype), n)
    assert all("tiles" not in r for r in light) and all("tiles" in r for r in full)
    keys = ("core", "kind", "offset", "data_num", "tile_num", "tail", "padded_end", "padding")
    assert [{k: r.get(k, 0) for k in keys} for r in light] == [{k: r[k] for k in keys} for r in full]


def test_tiling_huge_n_is_fast(capsys):
    n = 10**13
    code, out, _ = call(capsys, "tiling", "threshold_grad_v2_d", "--n", str(n), "--dtype", "int8")
    assert code == 0
    td = tiling.threshold_grad_v2_d(n, "int8")
    assert field(out, "smallCoreDataNum") == str(td.smallCoreDataNum)
    assert f"= {n} + " in line_with(out, "summary:")


# --------------------------------------------------------------------------------------------------
# run
# --------------------------------------------------------------------------------------------------

def test_run_hardsigmoid(capsys):
    code, out, err = call(capsys, "run", "hardsigmoid_backward", "--shape", "4,2", "--dtype", "float32",
                          "--soc", "Ascend910B4", "--seed", "3")
    assert code == 0 and err == ""
    g, x = cli.random_inputs((4, 2), as_acl_dtype("float32"), 3)
    run = al.hardsigmoid_backward(g, x, soc="Ascend910B4")
    assert line_with(out, "status:") == "status: ACLNN_SUCCESS (0): success"
    assert line_with(out, "L0 graph:") == "L0 graph: " + " -> ".join(run.graph)
    for name, value in run.tiling.as_dict().items():
        assert f"{name}={cli.fmt_value(value)}" in line_with(out, "tiling:")
    k = run.kernel_runs[0]
    assert f"{k.trace.cycles:.1f} cycles" in line_with(out, "kernel:")
    assert f"{k.trace.microseconds:.3f} us" in line_with(out, "kernel:")
    assert line_with(out, "warnings:") == f"warnings: {len(k.trace.warnings)}"
    assert line_with(out, "max abs diff").endswith(": 0")
    assert "bit-exact vs golden: yes" in out


def test_run_inputs_are_seeded():
    dt = as_acl_dtype("float16")
    a = cli.random_inputs((5, 3), dt, 7)
    b = cli.random_inputs((5, 3), dt, 7)
    c = cli.random_inputs((5, 3), dt, 8)
    assert all(np.array_equal(p, q) for p, q in zip(a, b, strict=True))
    assert not np.array_equal(a[1], c[1])
    assert a[0].dtype == np.float16


@pytest.mark.parametrize("argv, kernel", [
    (["aclnnThresholdBackward", "--shape", "300,7", "--dtype", "float16", "--threshold", "0.25"], "ThresholdGradV2D"),
    (["threshold_backward", "--shape", "1000,37", "--dtype", "int8", "--threshold", "0"], "ReluGrad"),
    (["threshold_backward", "--shape", "2,3,4", "--dtype", "bfloat16"], "ThresholdGradV2D"),
    (["threshold_backward", "--shape", "129", "--dtype", "uint8", "--soc", "Ascend950PR"], "ThresholdGradV2D"),
    (["aclnnHardsigmoidBackward", "--shape", "5000", "--dtype", "bf16"], "HardSigmoidGrad"),
    (["hardsigmoid_backward", "--shape", "33,3", "--dtype", "float16", "--soc", "Ascend910A"], "HardSigmoidGrad"),
])
def test_run_bit_exact(capsys, argv, kernel):
    code, out, err = call(capsys, "run", *argv)
    assert code == 0, out + err
    assert kernel in line_with(out, "L0 graph:")
    assert "bit-exact vs golden: yes" in out


def test_run_warnings_by_kind(capsys):
    code, out, _ = call(capsys, "run", "threshold_backward", "--shape", "1000,37", "--dtype", "int8",
                        "--threshold", "0")
    assert code == 0
    g, x = cli.random_inputs((1000, 37), as_acl_dtype("int8"), 0)
    run = al.threshold_backward(g, x, 0.0)
    kinds: dict[str, int] = {}
    for w in run.kernel_runs[0].trace.warnings:
        kinds[w.kind] = kinds.get(w.kind, 0) + 1
    want = f"warnings: {sum(kinds.values())}"
    if kinds:
        want += " (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")"
    assert line_with(out, "warnings:") == want


def test_run_empty_tensor(capsys):
    code, out, err = call(capsys, "run", "hardsigmoid_backward", "--shape", "0,3")
    assert code == 0 and err == ""
    assert "status: ACLNN_SUCCESS (0)" in out
    assert "L0 graph: (none" in out
    assert "bit-exact vs golden: yes" in out


def test_run_trace_file(capsys, tmp_path):
    path = tmp_path / "trace.json"
    code, out, _ = call(capsys, "run", "threshold_backward", "--shape", "64,3", "--threshold", "0.5",
                        "--trace", str(path))
    assert code == 0
    assert str(path) in line_with(out, "trace:")
    data = json.loads(path.read_text())
    assert isinstance(data["traceEvents"], list) and data["traceEvents"]
    assert any(e.get("ph") == "X" for e in data["traceEvents"])


def test_run_trace_file_empty_tensor(capsys, tmp_path):
    path = tmp_path / "empty.json"
    code, _, _ = call(capsys, "run", "threshold_backward", "--shape", "0", "--trace", str(path))
    assert code == 0
    assert json.loads(path.read_text())["traceEvents"] == []


#: BUFFER_NUM is an AscendC kernel's queue depth: the experimental HardSigmoidGrad, where its package registers it
#: (kernel_flavours §1). (The TBE schedule and the atvoss template decide double buffering themselves.)
EXP_HSG = ("--soc", "Ascend950PR", "--kernel", "experimental")


def test_run_buffer_num(capsys):
    from ascend_lab.ops.hard_sigmoid_grad import op_kernel
    before = op_kernel.launch
    # 1000000 elements on Ascend950PR's 64 cores: 15625 per core, 2 fp32 tiles of <= 7936 (cann_facts §2.1:
    # FloorAlign(253952 / 4 / 8, 32)), so double buffering can overlap
    code, out, _ = call(capsys, "run", "hardsigmoid_backward", "--shape", "1000000", "--buffer-num", "1", *EXP_HSG)
    assert code == 0 and "bit-exact vs golden: yes" in out and "BUFFER_NUM 1" in out
    assert "ubFactor=7936" in line_with(out, "tiling:") and "blockFactor=15625" in line_with(out, "tiling:")
    assert op_kernel.launch is before   # the knob is undone after the run
    code2, out2, _ = call(capsys, "run", "hardsigmoid_backward", "--shape", "1000000", *EXP_HSG)
    assert code2 == 0

    def cycles(text: str) -> float:
        return float(re.search(r"([\d.]+) cycles", line_with(text, "kernel:")).group(1))
    assert cycles(out) > cycles(out2)   # single buffering cannot overlap copy-in with compute


def test_run_buffer_num_too_many_is_a_runtime_error(capsys):
    code, out, _ = call(capsys, "run", "hardsigmoid_backward", "--shape", "100000", "--buffer-num", "3", *EXP_HSG)
    assert code == 1
    assert "361001" in line_with(out, "status:")
    assert "UB" in out


def test_run_nonzero_status_exits_1(capsys):
    # bf16 is in the op's dtype list, but not on Ascend910A: aclnn answers 161002
    code, out, err = call(capsys, "run", "hardsigmoid_backward", "--shape", "4,2", "--dtype", "bfloat16",
                          "--soc", "Ascend910A")
    assert code == 1 and err == ""
    assert "status: ACLNN_ERR_PARAM_INVALID (161002)" in out
    assert re.search(r"log: \[ERROR\] aclnnHardsigmoidBackwardGetWorkspaceSize: .*BF16", out)


def test_run_rank_9_is_an_aclnn_error(capsys):
    code, out, _ = call(capsys, "run", "threshold_backward", "--shape", "1,1,1,1,1,1,1,1,2")
    assert code == 1
    assert "161002" in line_with(out, "status:")


# --------------------------------------------------------------------------------------------------
# socs
# --------------------------------------------------------------------------------------------------

def test_socs(capsys):
    code, out, err = call(capsys, "socs")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["name", "NpuArch"]
    for name in platform.socs():
        info = platform.get_soc(name)
        row = next(ln for ln in lines if ln.split()[0] == name)
        assert info.npu_arch.name in row
        assert f" {info.vector_core_num} " in row
        assert str(info.ub_size) in row and str(info.clock_mhz) in row


def test_socs_notes(capsys):
    code, out, _ = call(capsys, "socs", "--notes")
    assert code == 0
    assert platform.get_soc("Ascend950PR").note in out


def test_python_m_ascend_lab_socs():
    proc = subprocess.run([sys.executable, "-m", "ascend_lab", "socs"], capture_output=True, text=True,
                          timeout=60, env=_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "Ascend910B4" in proc.stdout and proc.stderr == ""


def test_console_script_if_installed():
    exe = shutil.which("ascend-lab", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("console script not installed (pip install -e . creates it)")
    proc = subprocess.run([exe, "tiling", "relu_grad", "--n", "1000"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "ReluGradTilingData" in proc.stdout


# --------------------------------------------------------------------------------------------------
# bad arguments: one line on stderr, exit 2
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, needle", [
    ([], "required"),
    (["frobnicate"], "invalid choice"),
    (["tiling", "sigmoid_grad", "--n", "5"], "unknown op"),
    (["run", "hardsigmoid", "--shape", "4"], "unknown op"),
    (["tiling", "relu_grad", "--n", "5", "--dtype", "float99"], "unknown dtype"),
    (["run", "hardsigmoid_backward", "--shape", "4", "--dtype", "nope"], "unknown dtype"),
    (["tiling", "relu_grad", "--n", "5", "--soc", "Ascend999"], "unknown SoC"),
    (["run", "threshold_backward", "--shape", "4", "--soc", "TPUv4"], "unknown SoC"),
    (["run", "hardsigmoid_backward", "--shape", "4,,2"], "malformed shape"),
    (["run", "hardsigmoid_backward", "--shape", "4,x"], "malformed shape"),
    (["run", "hardsigmoid_backward", "--shape=-1,2"], "malformed shape"),
    (["run", "hardsigmoid_backward", "--shape", "2.5"], "malformed shape"),
    (["tiling", "hard_sigmoid_grad", "--n", "-5"], ">= 0"),
    (["tiling", "hard_sigmoid_grad", "--n", "lots"], "integer"),
    (["tiling", "hard_sigmoid_grad", "--n", "5", "--cores", "0"], ">= 1"),
    (["tiling", "hard_sigmoid_grad", "--n", "5", "--dtype", "int8"], "no kernel for int8"),
    (["tiling", "threshold_grad_v2_d", "--n", "5", "--dtype", "int64"], "no kernel for int64"),
    (["tiling", "threshold_grad_v2_d", "--n", "0"], "inputNum is 0"),
    (["tiling", "relu_grad", "--n", "5", "--threshold", "1"], "--threshold"),
    (["run", "hardsigmoid_backward", "--shape", "4", "--dtype", "int32"], "does not support int32"),
    (["run", "threshold_backward", "--shape", "4", "--dtype", "int16"], "does not support int16"),
    (["run", "threshold_backward", "--shape", "4", "--dtype", "float64"], "does not support float64"),
    (["run", "hardsigmoid_backward", "--shape", "4", "--threshold", "2"], "--threshold"),
    (["run", "hardsigmoid_backward"], "--shape"),
    (["run", "hardsigmoid_backward", "--shape", "4", "--buffer-num", "0"], ">= 1"),
    (["run", "hardsigmoid_backward", "--shape", "100000,100000"], "elements"),
    (["run", "hardsigmoid_backward", "--shape", "4", "--trace", "/no/such/folder/t.json"], "does not exist"),
    (["socs", "--bogus"], "unrecognized arguments"),
])
def test_bad_arguments(capsys, argv, needle):
    code, out, err = call(capsys, *argv)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ascend-lab: error: ")
    assert needle in lines[0]


def test_bad_arguments_subprocess_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "ascend_lab", "tiling", "relu_grad", "--n", "-1"],
                          capture_output=True, text=True, timeout=60, env=_env(), cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("ascend-lab: error: ")


def test_help_exits_0(capsys):
    assert cli.main(["--help"]) == 0
    assert "tiling" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------------
# benchmarks smoke run (the real benchmark is `make bench`, not part of the suite)
# --------------------------------------------------------------------------------------------------

def test_benchmarks_quick(tmp_path):
    """The benchmark harness end to end on 2**20 elements. The live tiling start-up row is pointed at a site that
    does not exist: it drives Chromium over the built book, which `make test` is building beside the unit tests
    (a race, and ~16 s of two pyodide start-ups); `make bench` measures it, the browser tests test the page."""
    out_json = tmp_path / "latest.json"
    env = {**_env(), "ASCEND_LAB_SITE": str(tmp_path / "no-site")}
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--k", "1", "--output", str(out_json)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the simulator benchmark, then one section per other flavour: TBE, then the atvoss template (two ops)
    simulator, rest = proc.stdout.split("\nTBE flavour:")
    tbe, atvoss = rest.split("\natvoss template")

    def ratio_lines(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if "ratio sim/numpy" in ln]
    rows = ratio_lines(simulator)
    assert len(rows) == 4
    assert any("tracing off" in ln and "target <= 2x" in ln for ln in rows)
    assert any("tracing on" in ln and "target <= 4x" in ln for ln in rows)
    assert "peak memory" in simulator
    assert "bit-identical to the numpy formula: yes" in simulator
    assert len(ratio_lines(tbe)) == 1 and "tracing off" in tbe and "target <= 2x" in tbe
    assert "bit-identical to the numpy formula: yes" in tbe
    assert len(ratio_lines(atvoss)) == 4 and "ThresholdGradV2D" in atvoss and "ReluGrad" in atvoss
    assert atvoss.count("output bit-identical to the numpy formula: yes") == 2
    # the C++ front end's compile rows (benchmarks.bench_cxx): absolute targets, in the summary too
    assert "C++ kernel compile, cold" in atvoss and "target < 500 ms" in atvoss
    assert "C++ kernel cached compile (ms)" in atvoss.split("summary")[-1]
    data = json.loads(out_json.read_text())
    assert data["config"]["n"] == 2**20 and data["config"]["quick"] is True
    assert {"python", "numpy", "cpu_count"} <= set(data["machine"])
    assert set(data["simulator"]) == {"whole_call_trace_off", "kernel_phase_trace_off", "whole_call_trace_on",
                                      "kernel_phase_trace_on"}
    assert "live tiling start-up: NOT MEASURED -- no built site at" in proc.stdout

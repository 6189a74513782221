"""``ascend-lab kernel run|show``: a C++ kernel file run from the shell with the sanitizer on (issue 20 item 6).

The CLI runs in-process (``cli.main(argv)``, output captured); one subprocess smoke test runs the console command.
The kernel is the add_custom sample of :mod:`cxx_user_kernels`, written next to its tiling header in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cxx_user_kernels import ADD_CALL, COPY_IN_X, TILING_STRUCT, add_kernel, line_of

from ascend_lab import cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def kernel_file(tmp_path: Path) -> Path:
    (tmp_path / "add_tiling.h").write_text("#pragma once\n" + TILING_STRUCT + "\n", encoding="utf-8")
    path = tmp_path / "add_custom.cpp"
    path.write_text(add_kernel(inline=False), encoding="utf-8")
    return path


def call(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_good_kernel_prints_cycles_ub_and_no_findings(capsys, kernel_file):
    code, out, err = call(capsys, "kernel", "run", kernel_file, "--tiling", "totalLength=4096", "tileLength=512",
                          "--block-dim", "4", "--seed", "3")
    assert code == 0 and err == "", out + err
    assert "add_custom from add_custom.cpp on Ascend910B4, blockDim 4, seed 3" in out
    assert "GM: x float32[4096] (random), y float32[4096] (random), z float32[4096] (output)" in out
    assert "tiling: AddTilingData (8 B) totalLength=4096 tileLength=512" in out
    assert "findings: none" in out
    assert "cycles: " in out and " us at 1500 MHz" in out
    # six queue buffers of 512 floats on every core
    assert "UB per core, every core (4): 12288 of 196608 B (6.2%) in 6 buffers: inX[0] 2048, inX[1] 2048" in out
    # the output summary is x + y, from the same seeded inputs the runner drew
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4096, dtype=np.float32) * np.float32(2)).astype(np.float32)
    y = (rng.standard_normal(4096, dtype=np.float32) * np.float32(2)).astype(np.float32)
    z = x + y
    assert f"output z: float32[4096]: min {z.min():.6g}, max {z.max():.6g}" in out
    assert "never written" not in out


def test_reading_past_an_input_prints_the_gm_finding_at_its_cxx_line(capsys, kernel_file):
    code, out, err = call(capsys, "kernel", "run", kernel_file, "--tiling", "totalLength=2048",
                          "--input", "x=1024:float32")
    assert code == 1, out + err
    line = line_of(kernel_file.read_text(), COPY_IN_X)
    assert "findings: the kernel stopped" in out
    assert f"add_custom.cpp:{line}: [gm-out-of-bounds] GM read of 1024 B at byte 4096 of x" in out
    assert COPY_IN_X.strip() in out and "hint: " in out
    assert "Traceback" not in out + err


def test_a_read_into_the_gm_padding_is_a_warning_at_its_line(capsys, kernel_file):
    # x holds 2040 floats: the last tile reads 32 bytes into the 256-byte padding -- tolerated, reported
    code, out, err = call(capsys, "kernel", "run", kernel_file, "--tiling", "totalLength=2048",
                          "--input", "x=2040")
    assert code == 0, out + err
    line = line_of(kernel_file.read_text(), COPY_IN_X)
    assert "findings: 1 warning (gm-padding 1)" in out
    assert re.search(rf"^  warning: \S*add_custom\.cpp:{line}: \[gm-padding\] .*\(instruction DataCopy\) \(core 0\)$",
                     out, re.MULTILINE), out


def test_a_compile_error_exits_2_with_the_caret_message(capsys, kernel_file):
    text = kernel_file.read_text()
    bad = kernel_file.with_name("broken.cpp")
    bad.write_text(text.replace(ADD_CALL, "Addz(z, x, y, tileLength);"), encoding="utf-8")
    code, out, err = call(capsys, "kernel", "run", bad, "--tiling", "totalLength=2048")
    assert code == 2
    line = line_of(text, ADD_CALL)
    col = text.splitlines()[line - 1].index("Add") + 1
    assert f"broken.cpp:{line}:{col}: error: unknown function 'Addz'" in err
    pad = " " * (4 + col - 1)                    # the message indents the source line by 4
    assert f"\n{pad}Addz(z, x, y, tileLength);\n{pad}^~~~\n" in err
    assert "Traceback" not in out + err and out == ""


def test_trace_writes_a_chrome_trace(capsys, kernel_file, tmp_path):
    trace = tmp_path / "out.json"
    code, out, err = call(capsys, "kernel", "run", kernel_file, "--tiling", "totalLength=1024", "--trace", trace)
    assert code == 0, out + err
    data = json.loads(trace.read_text())
    names = {e.get("name") for e in data["traceEvents"]}
    assert {"DataCopy", "Add"} <= names
    assert "trace: wrote " in out and f"events to {trace}" in out


@pytest.mark.parametrize("argv, message", [
    (["--tiling", "totalLength=64", "size=3"], "the tiling struct has no field size; its fields are totalLength, "
                                               "tileLength"),
    (["--tiling", "totalLength=-1"], "does not fit its type uint32_t"),
    (["--tiling", "totalLength"], "--tiling takes key=value"),
    (["--tiling", "totalLength=64", "--input", "w=64"], "--input w: the kernel's GM arguments are x, y, z"),
    (["--tiling", "totalLength=64", "--template", "schMode=1"], "has no template parameter schMode"),
    (["--n", "64", "--dtype", "float7"], "unknown dtype 'float7'"),
    (["--tiling", "totalLength=64", "--trace", "/no/such/folder/t.json"], "does not exist"),
])
def test_bad_requests_exit_2_with_one_line(capsys, kernel_file, argv, message):
    code, out, err = call(capsys, "kernel", "run", kernel_file, *argv)
    assert code == 2 and message in err, err
    assert err.startswith("ascend-lab: error: ") and err.count("\n") == 1


def test_a_templated_kernel_needs_its_template_argument(capsys, tmp_path):
    src = add_kernel(inline=True).replace(
        'extern "C" __global__ __aicore__ void add_custom(',
        'template <uint32_t mode>\n__global__ __aicore__ void add_custom(')
    path = tmp_path / "templ.cpp"
    path.write_text(src, encoding="utf-8")
    code, _out, err = call(capsys, "kernel", "run", path, "--tiling", "totalLength=512")
    assert code == 2 and "needs --template mode=V" in err
    code, out, err = call(capsys, "kernel", "run", path, "--tiling", "totalLength=512", "--template", "mode=1")
    assert code == 0 and "add_custom<mode=1> from templ.cpp" in out and "findings: none" in out, out + err


def test_show_prints_what_the_simulator_executes_and_the_tiling_fields(capsys, kernel_file):
    code, out, err = call(capsys, "kernel", "show", kernel_file)
    assert code == 0 and err == "", err
    assert out.startswith("# add_custom from add_custom.cpp: what the simulator executes")
    assert "class KernelAdd" in out and "def Process(this):" in out
    assert f"# add_custom.cpp:{line_of(kernel_file.read_text(), COPY_IN_X)}" in out
    assert "entry: add_custom(x, y, z, workspace, tiling)" in out
    assert "tiling struct AddTilingData (8 bytes;" in out
    assert "  uint32_t totalLength = 0\n  uint32_t tileLength  = 256" in out


def test_defines_reach_the_preprocessor(capsys, tmp_path):
    src = add_kernel(inline=True).replace("Add(z, x, y, tileLength);",
                                          "#ifdef DOUBLE_IT\n            Add(z, x, x, tileLength);\n#else\n"
                                          "            Add(z, x, y, tileLength);\n#endif")
    path = tmp_path / "defs.cpp"
    path.write_text(src, encoding="utf-8")
    code, out, _ = call(capsys, "kernel", "show", path, "-D", "DOUBLE_IT")
    assert code == 0 and "Add(z, x, x, " in out
    code, out, _ = call(capsys, "kernel", "show", path)
    assert code == 0 and "Add(z, x, y, " in out


def test_a_missing_file_exits_2(capsys, tmp_path):
    code, _out, err = call(capsys, "kernel", "run", tmp_path / "nope.cpp")
    assert code == 2 and "no kernel file" in err


def test_console_command_smoke(kernel_file):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "ascend_lab", "kernel", "run", str(kernel_file), "--tiling",
                           "totalLength=1024"], capture_output=True, text=True, timeout=180, env=env,
                          cwd=kernel_file.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "findings: none" in proc.stdout and "cycles: " in proc.stdout


def test_inputs_from_npy_files_and_a_named_output(capsys, kernel_file, tmp_path):
    x = np.linspace(-1, 1, 512, dtype=np.float32)
    y = np.full(512, 3, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    code, out, err = call(capsys, "kernel", "run", kernel_file, "--tiling", "totalLength=512", "--input",
                          f"x={tmp_path / 'x.npy'}", f"y={tmp_path / 'y.npy'}", "--output", "z")
    assert code == 0, out + err
    assert f"x float32[512] (file {tmp_path / 'x.npy'})" in out
    assert "output z: float32[512]: min 2, max 4, mean 3; first [2, 2.00391, 2.00783" in out


TYPED_ENTRY = """
#include "scale.h"
template <typename D_T>
__global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(ScaleTilingData, td, tiling);
    KernelScale<D_T> op;
    op.Run(x, y, td.totalLength);
}
"""
TYPED_HEADER = """
#pragma once
#include "kernel_operator.h"
using namespace AscendC;
struct ScaleTilingData { int64_t totalLength = 0; };
template <typename T>
class KernelScale {
public:
    __aicore__ inline void Run(GM_ADDR x, GM_ADDR y, int64_t n)
    {
        xGm.SetGlobalBuffer((__gm__ T*)x, n);
        yGm.SetGlobalBuffer((__gm__ T*)y, n);
        pipe.InitBuffer(q, 1, n * sizeof(T));
        LocalTensor<T> t = q.template AllocTensor<T>();
        DataCopy(t, xGm, n);
        q.EnQue(t);
        t = q.template DeQue<T>();
        Muls(t, t, static_cast<T>(3.0f), n);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm, t, n);
        q.FreeTensor(t);
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    GlobalTensor<T> xGm, yGm;
};
"""


def test_a_kernel_folder_runs_its_entry_and_a_type_parameter_takes_the_run_dtype(capsys, tmp_path):
    """An ops-nn-style op_kernel/ folder: the CLI finds the .cpp with the __global__ entry; the entry's type
    template parameter follows --dtype unless --template names it."""
    folder = tmp_path / "op_kernel"
    folder.mkdir()
    (folder / "scale.cpp").write_text(TYPED_ENTRY)
    (folder / "scale.h").write_text(TYPED_HEADER)
    code, out, err = call(capsys, "kernel", "run", str(folder), "--tiling", "totalLength=256", "--dtype", "float16")
    assert code == 0, err
    assert out.splitlines()[0].startswith("scale<D_T=float16> from scale.cpp") and "findings: none" in out
    (folder / "other.cpp").write_text(TYPED_ENTRY.replace("void scale(", "void scale2("))
    code, out, err = call(capsys, "kernel", "run", str(folder), "--tiling", "totalLength=256")
    assert code == 2 and "2 kernel entries (other.cpp, scale.cpp): name the .cpp to run" in err

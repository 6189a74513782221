"""``%%ascendc``: a notebook cell of AscendC C++ compiled into a kernel (issue 20 item 6), in IPython's
InteractiveShell.

The magic is registered when ``ascend_lab`` is imported inside IPython, without importing IPython (outside it) or the
C++ front end (inside it) at import time; a cell binds a CxxKernel that ``launch`` runs; a kernel the front end
refuses prints the compiler-style message naming the cell and its line, and no traceback; ``--run`` prints the
report of ``ascend-lab kernel run``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cxx_user_kernels import ADD_CALL, COPY_IN_X, add_kernel, line_of

import ascend_lab
from ascend_lab.ascendc import launch
from ascend_lab.ascendc.cxx import CxxKernel
from ascend_lab.base.platform import get_soc
from ascend_lab.ops.common.kernel_args import gm_from_array

IPython = pytest.importorskip("IPython")
ROOT = Path(__file__).resolve().parents[1]
KERNEL = add_kernel(inline=True)


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ascend_lab.load_ipython_extension(ip)       # what importing ascend_lab in IPython does (tested below)
    yield ip


def cell(shell, capsys, line: str, body: str = KERNEL) -> tuple[str, str, str]:
    """Run ``%%ascendc line`` over ``body``: (the cell's file name, stdout, stderr); the cell itself never fails."""
    capsys.readouterr()
    result = shell.run_cell(f"%%ascendc {line}\n{body}", store_history=True)
    name = f"<ascendc cell {result.execution_count}>"       # the cell's In [N]
    out = capsys.readouterr()
    assert result.error_in_exec is None and result.error_before_exec is None, out
    return name, out.out, out.err


def test_importing_ascend_lab_in_ipython_registers_the_magic_lazily():
    code = ("import sys\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "ip = InteractiveShell.instance()\n"
            "import ascend_lab\n"
            "print('ascendc' in ip.magics_manager.magics['cell'])\n"
            "print('ascend_lab.magic' in sys.modules)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]      # registered; the magic's module waits for its first cell


def test_outside_ipython_importing_checks_for_a_shell_without_importing_ipython(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert ascend_lab._in_ipython() is None
    assert "IPython" not in sys.modules


def test_a_cell_binds_a_kernel_that_launches(shell, capsys):
    _, out, err = cell(shell, capsys, "my_add")
    assert err == ""
    assert out == ("my_add: add_custom(x, y, z, workspace, tiling); tiling AddTilingData (8 B): totalLength, "
                   "tileLength\n")
    kernel = shell.user_ns["my_add"]
    assert isinstance(kernel, CxxKernel) and kernel.entry_name == "add_custom"
    assert kernel.main.startswith("<ascendc cell ")
    n = 1024
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, np.float32)
    gm = [gm_from_array(x, "x"), gm_from_array(y, "y"), gm_from_array(None, "z", nbytes=x.nbytes)]
    tiling = kernel.pack_tiling({"totalLength": n, "tileLength": 128})
    run = launch(kernel, 2, gm, tiling, get_soc("Ascend910B4"), outputs=(2,), record=True)
    z = gm[2].ptr.allocation.buffer[:x.nbytes].view(np.float32)
    assert np.array_equal(z, x + y)
    adds = [e for e in run.trace.events if e.instr == "Add"]
    assert len(adds) == 2 * (n // 2 // 128)
    # the cell's own line, counted as the notebook counts it (the %%ascendc line is line 1)
    assert adds[0].line == (kernel.main, line_of(KERNEL, ADD_CALL) + 1)


def test_the_default_name_is_the_entrys(shell, capsys):
    shell.user_ns.pop("add_custom", None)
    _, out, _ = cell(shell, capsys, "")
    assert out.startswith("add_custom: add_custom(")
    assert isinstance(shell.user_ns["add_custom"], CxxKernel)


def test_a_bad_cell_prints_the_compiler_message_and_no_traceback(shell, capsys):
    cell(shell, capsys, "good_one")
    before = shell.user_ns["good_one"]
    body = KERNEL.replace(ADD_CALL, "Addz(z, x, y, tileLength);")
    name, out, err = cell(shell, capsys, "good_one", body)
    line = line_of(body, "Addz(") + 1
    col = body.splitlines()[line - 2].index("Addz") + 1
    assert f"{name}:{line}:{col}: error: unknown function 'Addz'" in err
    assert "Addz(z, x, y, tileLength);\n" in err and "^~~~" in err and "hint: " in err
    assert "note: good_one is unchanged" in err
    assert "Traceback" not in out + err and out == ""
    assert shell.user_ns["good_one"] is before


def test_a_syntax_error_names_the_cell(shell, capsys):
    body = KERNEL.replace(ADD_CALL, ADD_CALL[:-1])
    _, out, err = cell(shell, capsys, "broken", body)
    assert "<ascendc cell " in err and ": error: " in err and "Traceback" not in out + err
    assert "broken" not in shell.user_ns


def test_defines_and_knobs(shell, capsys):
    body = KERNEL.replace(ADD_CALL, "#if SCALE_Y\n            Muls(y, y, 2.0f, tileLength);\n#endif\n"
                                    "            " + ADD_CALL)
    _, out, err = cell(shell, capsys, "scaled -D SCALE_Y=1", body)
    assert err == "" and "Muls(" in shell.user_ns["scaled"].python_source()
    _, out, err = cell(shell, capsys, "plain -D SCALE_Y=0", body)
    assert err == "" and "Muls(" not in shell.user_ns["plain"].python_source()


def test_run_launches_on_random_inputs_and_prints_the_report(shell, capsys):
    _, out, err = cell(shell, capsys, "ran --run --tiling totalLength=2048 tileLength=256 --block-dim 2")
    assert err == "", err
    assert "add_custom from <ascendc cell" in out and "blockDim 2, seed 0" in out
    assert "findings: none" in out and "cycles: " in out
    assert "UB per core, every core (2): 6144 of 196608 B" in out
    assert "output z: float32[2048]: " in out


def test_run_names_a_finding_at_the_cells_line(shell, capsys):
    name, out, err = cell(shell, capsys, "--run --tiling totalLength=2048 --input x=1024")
    line = line_of(KERNEL, COPY_IN_X) + 1
    assert f"{name}:{line}: [gm-out-of-bounds]" in out
    assert "Traceback" not in out + err


@pytest.mark.parametrize("line, message", [
    ("--bogus", "%%ascendc: error: unrecognized arguments: --bogus"),
    ("1abc", "is not a Python name"),
    ("--run --tiling size=3", "%%ascendc --run: error: the tiling struct has no field size"),
    ("-D =3", "-D takes key=value"),
])
def test_bad_options_print_one_message(shell, capsys, line, message):
    _, out, err = cell(shell, capsys, line)
    assert message in err and "Traceback" not in out + err


def test_a_cell_includes_headers_from_the_working_folder(shell, capsys, tmp_path, monkeypatch):
    from cxx_user_kernels import TILING_STRUCT
    (tmp_path / "add_tiling.h").write_text("#pragma once\n" + TILING_STRUCT + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    _, out, err = cell(shell, capsys, "with_header", add_kernel(inline=False))
    assert err == "" and "tiling AddTilingData (8 B)" in out
    assert str(tmp_path / "add_tiling.h") in shell.user_ns["with_header"].files


def test_a_cell_whose_entry_branches_on_the_tiling_key_compiles_and_runs_with_its_key(shell, capsys):
    """TILING_KEY_IS needs the launch's key: the cell compiles (nothing translated that needs it) and the kernel
    runs once a launch gives tilingKey."""
    _name, _out, err = cell(shell, capsys, "keyed", KEYED)
    assert "error" not in err, err
    k = shell.user_ns["keyed"]
    out = gm_from_array(None, "y", nbytes=64 * 4)
    launch(k, 1, [out], b"", get_soc("Ascend950PR"), outputs=(0,), tilingKey=2)
    assert (out.ptr.allocation.buffer[:256].view(np.float32) == 2).all()


KEYED = """
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void keyed(GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> q;
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)y, 64);
    pipe.InitBuffer(q, 1, 256);
    LocalTensor<float> t = q.AllocTensor<float>();
    if (TILING_KEY_IS(1)) {
        Duplicate(t, 1.0f, 64);
    } else if (TILING_KEY_IS(2)) {
        Duplicate(t, 2.0f, 64);
    }
    q.EnQue(t);
    t = q.DeQue<float>();
    DataCopy(g, t, 64);
    q.FreeTensor(t);
}
"""

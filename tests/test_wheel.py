"""A plain (non-editable) install works: the wheel carries the package data and runs outside the repository.

The wheel is built from this checkout and installed into a fresh virtual environment in a temporary folder.
Its dependencies (numpy, ml_dtypes, ...) are borrowed from the test's own environment by a path entry, so the
test needs no network; the editable install of this checkout is not visible there (a path entry does not run
the ``.pth`` hooks of the folder it adds), so ``import ascend_lab`` can only find the installed wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy, so setuptools' build/ folder never lands in the checkout; the copy leaves out what git
    # ignores (.gitignore: the venv, the build, the vendored assets -- _vendor_pyodide alone is 19 MB of the 28 MB a
    # checkout holds beside .git/.venv/_build/_vendor -- caches), which no wheel takes either
    src = tmp / "src"
    skip = shutil.ignore_patterns(".git", ".venv", "_build", "_vendor", "_vendor.new.*", "_vendor_pyodide",
                                  "_vendor_pyodide.new.*", "build", "*.egg-info", "__pycache__", "*.pyc",
                                  ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", ".jupyter_cache",
                                  ".ruff_cache")
    shutil.copytree(ROOT, src, ignore=skip)
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src), cwd=tmp)
    wheel = next((tmp / "dist").glob("ascend_lab-*.whl"))
    base = getattr(sys, "_base_executable", sys.executable)
    _run(base, "-m", "venv", "--without-pip", str(tmp / "env"), cwd=tmp)
    env_python = tmp / "env" / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", str(env_python), "install", "-q", "--no-deps", str(wheel), cwd=tmp)
    site = Path(_run(str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=tmp).strip())
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {"tmp": tmp, "wheel": wheel, "python": env_python, "bin": tmp / "env" / "bin", "env": env}


def test_wheel_holds_the_package_data_and_no_course_material(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    assert "ascend_lab/data/platforms.ini" in names and "ascend_lab/data/pytorch_reference.json" in names
    assert not [n for n in names if "solution" in n or n.startswith(("labs/", "labkit/", "tests/"))]
    # the AscendC kernels' C++ sources ship beside their flavour modules (op_kernel/<flavour>/, no __init__.py)
    kernel = "ascend_lab/ops/hard_sigmoid_grad/op_kernel/"
    assert {kernel + "experimental/hard_sigmoid_grad_apt.cpp", kernel + "experimental/arch35/hard_sigmoid_grad.h",
            kernel + "main/hard_sigmoid_grad_apt.cpp", "ascend_lab/ops/relu_grad/op_kernel/experimental/relu_grad.h",
            "ascend_lab/ops/threshold_grad_v2_d/op_kernel/experimental/threshold_grad_v2_d.cpp"} <= set(names)
    assert not [n for n in names if n.startswith("ascend_lab/ops/") and "/op_kernel/" in n
                and n.endswith("/__init__.py") and n.count("/") > 4]


def test_installed_package_runs_outside_the_repository(installed):
    code = (
        "import numpy as np, ascend_lab as al, pathlib\n"
        "assert 'site-packages' in al.__file__, al.__file__\n"
        "g = np.linspace(-4, 4, 1000, dtype=np.float32)\n"
        "r = al.hardsigmoid_backward(g, g, soc='Ascend950PR'); assert r.status == 0, r.messages\n"
        "t = al.threshold_backward(g, g, 0.5); assert t.status == 0, t.messages\n"
        "assert np.array_equal(t.out, np.where(g > 0.5, g, 0).astype(np.float32))\n"
        "print(len(al.platform.socs()), r.graph)\n"
    )
    out = _run(str(installed["python"]), "-c", code, cwd=installed["tmp"], env=installed["env"])
    assert out.startswith("8 ") and "HardSigmoidGrad" in out
    socs = _run(str(installed["bin"] / "ascend-lab"), "socs", cwd=installed["tmp"], env=installed["env"])
    assert "Ascend910B4" in socs and "Ascend950PR" in socs

"""The notebook kernels ``make test`` forks from a zygote (tests/forked_kernels.py) are the kernels
``python -m ipykernel_launcher`` starts, but for the libraries they find imported; the package, imported in the
kernel, hooks into its IPython shell as always; a kernel is never left behind.

Each kernel here is launched by jupyter_client as nbval launches one (its kernel spec's argv, a working folder, the
kernel's stderr thrown away), and asked what a notebook could see of how it was started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import forked_kernels
import pytest
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager

FORKED = Path(forked_kernels.__file__).resolve()
USUAL = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]

PROBE = """
import json as _j, os as _o, sys as _s, threading as _t, signal as _sig
_pre = "matplotlib.figure" in _s.modules
import matplotlib as _m
from ascend_lab.viz import style as _style
_ip = get_ipython()
print(_j.dumps({"preloaded": _pre, "magic": _ip.find_cell_magic("ascendc") is not None,
                "alt_text": _style.BookFigure in _ip.display_formatter.formatters["image/png"].type_printers,
                "path": _s.path, "argv": _s.argv[1:2],
                "launcher": _o.path.basename(_s.argv[0]), "cwd": _o.getcwd(), "backend": _m.get_backend(),
                "MPLBACKEND": _o.environ.get("MPLBACKEND"), "threads": sorted(t.name for t in _t.enumerate()),
                "watches_parent": _o.environ.get("JPY_PARENT_PID") == str(_o.getppid()),
                "own_session": _o.getsid(0) == _o.getpid(), "sigint": repr(_sig.getsignal(_sig.SIGINT)),
                "pid": _o.getpid()}))
"""


class _Specs(KernelSpecManager):
    """One kernel spec, whatever the name asked for: the argv under test."""

    argv: list[str] = []

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(argv=self.argv, display_name="probe", language="python", resource_dir="")


def _start(argv: list[str], cwd: Path) -> tuple[KernelManager, object]:
    specs = _Specs()
    specs.argv = argv
    km = KernelManager(kernel_name="probe", kernel_spec_manager=specs)
    km.start_kernel(cwd=str(cwd), stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def _ask(kc) -> dict:
    out: list[str] = []

    def hook(msg: dict) -> None:
        content = msg["content"]
        error = f"{content['ename']}: {content['evalue']}" if "ename" in content else ""
        out.append(content.get("text", "") or error)

    kc.execute_interactive(PROBE, timeout=60, output_hook=hook)
    try:
        return json.loads("".join(out))
    except ValueError:
        raise AssertionError(f"the probe did not run: {''.join(out)}") from None


def _probe(argv: list[str], cwd: Path) -> dict:
    km, kc = _start(argv, cwd)
    try:
        return _ask(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel()


@pytest.fixture
def zygote(tmp_path):
    path = tmp_path / "zygote"
    proc = subprocess.Popen([sys.executable, str(FORKED), "serve", str(path)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL)
    yield proc, [sys.executable, str(FORKED), "kernel", str(path), "-f", "{connection_file}"]
    proc.terminate()
    proc.wait(timeout=30)


def _gone(pid: int, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_forked_kernel_is_started_as_the_usual_one(zygote, tmp_path):
    usual = _probe(USUAL, tmp_path)
    forked = _probe(zygote[1], tmp_path)
    assert (usual.pop("preloaded"), forked.pop("preloaded")) == (False, True)
    usual.pop("pid"), forked.pop("pid")
    assert forked == usual
    assert usual["cwd"] == str(tmp_path) and usual["watches_parent"] and "Thread-1" in usual["threads"], usual
    assert usual["magic"] and usual["alt_text"], usual


def test_without_a_zygote_the_kernel_starts_the_usual_way(tmp_path):
    argv = [sys.executable, str(FORKED), "kernel", str(tmp_path / "none"), "-f", "{connection_file}"]
    got = _probe(argv, tmp_path)
    assert got["preloaded"] is False and got["cwd"] == str(tmp_path)


def test_imports_that_warn_are_not_served(tmp_path, monkeypatch):
    (tmp_path / "noisy_module_for_the_zygote.py").write_text("import warnings\nwarnings.warn('loud')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(forked_kernels, "PREIMPORTED", ("noisy_module_for_the_zygote",))
    assert "UserWarning: loud" in forked_kernels._import_silently()


def test_no_kernel_outlives_its_stand_in_or_the_zygote(zygote, tmp_path):
    proc, argv = zygote
    km, kc = _start(argv, tmp_path)
    pid = _ask(kc)["pid"]
    kc.stop_channels()
    km.shutdown_kernel(now=True)                        # SIGKILL to the stand-in: what a stuck kernel gets
    assert _gone(pid), "the fork outlived its stand-in"
    km, kc = _start(argv, tmp_path)
    pid = _ask(kc)["pid"]
    kc.stop_channels()
    os.kill(proc.pid, signal.SIGKILL)                   # the zygote gone without a word: ipykernel sees its parent go
    assert _gone(pid), "the fork outlived the zygote"
    km.shutdown_kernel(now=True)

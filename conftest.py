"""Let nbval collect the book's MyST Markdown notebooks (chapters/*.md) by reading them with jupytext,
and let the tests import the lab kit (``labs/labkit``).

nbval 0.11 reads notebooks with ``nbformat.read``; it is handed a shim module whose ``read`` understands
MyST ``.md`` files. ``tests/test_book_collect.py`` checks that the shim still collects, since it patches
a module global of nbval (pinned to 0.11.* for that reason).

The lab kit is course material, not part of the installed ``ascend_lab`` package: the lab notebooks
import it from their own folder (Jupyter's working directory), and the tests find it through
``labs/`` on ``sys.path``.

With ``--nbval-book-cache DIR`` (``make test``) the notebooks nbval ran are handed to the book build (below).
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import jupytext
import nbformat
import nbval.plugin as _nbval
import pytest

LABS_DIR = str(Path(__file__).resolve().parent / "labs")
if LABS_DIR not in sys.path:
    sys.path.insert(0, LABS_DIR)

# Under PYTHONDONTWRITEBYTECODE (set in some shells and CI images), with the venv installed --no-compile (Makefile),
# no module is ever byte-compiled to disk: every Python process the tests start -- the xdist workers, a kernel per
# notebook, the subprocess tests -- compiled numpy, matplotlib, jupyter and ascend_lab from source again, ~1.5-2 CPU s
# each. The processes started from here write their bytecode under _build/pycache instead (PYTHONPYCACHEPREFIX,
# nothing beside the sources; `make clean` removes it) and read it back. Measured on test_memory_safety.py,
# test_book_collect.py and chapter 01 (-n 0, 5 processes) from no bytecode at all, as a fresh clone's venv has:
# 24.4 CPU s -> 20.2 s (the first process compiles, the others read), 15.6 s once _build/pycache is filled.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(__file__).resolve().parent / "_build" / "pycache"))

# The cyclic garbage collector, set for a test process (issue 19). A unit-test worker holds 0.5-0.9 million objects
# (the collected tests, numpy, matplotlib, jupyter, the package's caches), and the many short-lived ones the simulator
# makes survived Python's default young collections (every 700 allocations) often enough to set off ~45 full
# collections over that heap: ~20 CPU s of the unit tests' ~230 went to the collector (timed with gc.callbacks).
# A young collection every 20,000 allocations lets them die before it, and gc.freeze() after collection takes what
# the session keeps (modules, collected tests) out of every later collection. Collector time, timed the same way:
# unit tests 20 -> 7-8 CPU s; test_labs*, viz_render, explorer_attrs, trace_cost and golden 8.4-9.0 -> 2.3-2.8 s
# (three alternating pairs; thresholds alone: 3.4 s). Garbage in a cycle waits a little longer for its collection
# (tests that need it gone call gc.collect()); only what is alive once pytest has collected the tests is frozen. The
# processes the tests start (kernels, fuzz subprocesses, the CLI) keep Python's defaults.
gc.set_threshold(20_000, 10, 10)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()          # what the session keeps, out of every later collection (see above)


#: Test modules and notebooks that take longest, run first: with --dist loadscope a module runs on one worker, and one
#: of these scheduled last leaves the other core idle at the end. Only the order changes; a module missing from this
#: list runs in its usual place. The Makefile passes --no-loadscope-reorder: pytest-xdist otherwise orders the modules
#: by their number of tests, which put the fuzz modules and test_wheel last (unit tests, -n 2, quiet: the workers
#: ended at 109 and 120 s). The order is the worker seconds of each module in that run (test_labs_integrity 28.6 s,
#: test_fuzz_front 19.0, ... test_fixture_ops 3.4) and each notebook's execution time (chapter 13 first).
SLOW_FIRST = ("tests/test_labs_integrity.py", "tests/test_fuzz_front.py", "tests/test_labs.py",
              "tests/test_viz_render.py", "tests/test_fuzz_capi.py", "tests/test_nbval_book_cache.py",
              "tests/test_explorer_attrs.py", "tests/test_wheel.py", "tests/test_threads.py",
              "tests/test_properties.py", "tests/test_viz_dag.py", "tests/test_cli.py", "tests/test_limits.py",
              "tests/test_kernels_exhaustive.py", "tests/test_golden.py", "tests/test_layers.py",
              "tests/test_tiling_no_numpy.py", "tests/test_trace_cost.py", "tests/test_fixture_ops.py",
              "chapters/13_performance.md", "chapters/99_figures_demo.md", "chapters/08_kernel.md",
              "chapters/11_tiling_tgv2d.md", "chapters/09_masks.md", "chapters/14_differences.md",
              "chapters/07_tiling_hsg.md", "chapters/01_cann_stack.md", "chapters/05_dtypes.md")


def pytest_collection_modifyitems(config, items):
    root = Path(__file__).resolve().parent
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}

    def key(item) -> int:
        path = Path(str(item.fspath)).resolve()
        return rank.get(path.relative_to(root).as_posix(), len(rank)) if path.is_relative_to(root) else len(rank)

    items.sort(key=key)      # stable: the order inside a module (a notebook's cells) is kept


def _read(path, as_version=4, **kw):
    if str(path).endswith(".md"):
        return jupytext.read(path, fmt="md:myst")
    return nbformat.read(path, as_version=as_version, **kw)


_nbval.nbformat = types.SimpleNamespace(**{k: getattr(nbformat, k) for k in dir(nbformat) if not k.startswith("__")})
_nbval.nbformat.read = _read


def _is_myst_notebook(path) -> bool:
    if path.suffix != ".md":
        return False
    head = path.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and "kernelspec:" in head


def pytest_collect_file(file_path, parent):
    opt = parent.config.option
    if (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)) and _is_myst_notebook(file_path):
        return _nbval.IPyNbFile.from_parent(parent, path=file_path)
    return None


# ---------------------------------------------------------------------------------------------------------------------
# One execution of each notebook for nbval and the book build (`make test`).
#
# With --nbval-book-cache DIR, each notebook nbval ran from its first cell to its last without a failure is rebuilt
# from its kernel's iopub messages by nbclient's own message handling (NotebookClient.process_message: outputs,
# display updates, clear_output, widget state), which is how myst-nb's execution builds it, on the notebook as
# myst-nb reads it for the book; and stored in the jupyter-cache DIR (emptied first by this run). The book build then
# reads each notebook's outputs from there (execute_notebooks: cache) instead of executing it a second time. A
# notebook that cannot be rebuilt faithfully (a failed or deselected cell, code that differs between jupytext's and
# myst-nb's reading, a cell one of them skips and the other runs, an Output widget, whose frontend nbclient mimics
# by talking back to the kernel) is left out, and the book build executes it itself.

_HANDED = pytest.StashKey[str]()  # the summary line
_STAGED = "nbval-staged"  # DIR/nbval-staged/*.ipynb: one executed notebook per file, written by the process that ran it


def pytest_addoption(parser):
    parser.addoption("--nbval-book-cache", metavar="DIR", default=None,
                     help="store every notebook nbval ran cleanly, with its outputs, in the jupyter-cache DIR "
                          "(replaced) for the book build (execute_notebooks: cache)")


def pytest_configure(config):
    cache = config.getoption("nbval_book_cache")
    if cache and not hasattr(config, "workerinput"):  # the controller, before any (xdist) worker runs a notebook
        shutil.rmtree(cache, ignore_errors=True)


_nbval_setup, _nbval_teardown = _nbval.IPyNbFile.setup, _nbval.IPyNbFile.teardown
_nbval_get_message, _nbval_runtest = _nbval.IPyNbFile.get_kernel_message, _nbval.IPyNbCell.runtest


def _setup(self):
    _fork_kernels(self.config)
    _nbval_setup(self)
    if self.config.getoption("nbval_book_cache"):
        kc = self.kernel.kc
        info = kc.kernel_info(reply=True, timeout=60)["content"]  # what nbclient asks for, too
        # nbval sends each cell with store_history=False; nbclient with True, which numbers the cells (In[n] in a
        # traceback, Out[n]) and keeps `_`: run them as nbclient does
        self.kernel.execute_cell_input = lambda source, allow_stdin=None: kc.execute(
            source, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)
        self._book = types.SimpleNamespace(iopub=[], cells={}, language_info=info["language_info"], t0=time.time())


def _get_kernel_message(self, timeout=None, stream="iopub"):
    msg = _nbval_get_message(self, timeout=timeout, stream=stream)
    if stream == "iopub" and getattr(self, "_book", None) is not None:
        self._book.iopub.append(msg)
    return msg


def _runtest(self):
    book = getattr(self.parent, "_book", None)
    if book is None:
        return _nbval_runtest(self)
    start, outcome = len(book.iopub), "failed"
    try:
        _nbval_runtest(self)
        outcome = "passed"
    except pytest.skip.Exception:
        outcome = "skipped"
        raise
    finally:
        book.cells[self.cell_num] = (outcome, book.iopub[start:])


def _teardown(self):
    _nbval_teardown(self)
    book, self._book = getattr(self, "_book", None), None
    if book is None:
        return
    nb = _book_notebook(Path(self.fspath), book)
    if nb is not None:
        nb.metadata["nbval_execution_seconds"] = round(time.time() - book.t0, 2)
        rel = Path(self.fspath).resolve().relative_to(Path(self.config.rootpath).resolve())
        staged = Path(self.config.getoption("nbval_book_cache")) / _STAGED / ("__".join(rel.parts) + ".ipynb")
        staged.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, staged)


def _book_notebook(path: Path, book):
    """The notebook as myst-nb reads `path`, its code cells filled from nbval's run as nbclient fills them, or None."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionComplete

    nb = read_myst_markdown_notebook(path.read_text(encoding="utf-8"), MdParserConfig(), add_source_map=True,
                                     path=str(path))
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    if len(code) != len(book.cells):
        return None  # a cell was deselected, or the two readers disagree on the cells
    client, count = NotebookClient(nb, record_timing=False), 0  # as myst-nb (jupyter-cache) runs it
    for k, (index, cell) in enumerate(code):
        outcome, msgs = book.cells[k]
        if outcome == "failed":
            return None
        if not cell.source.strip():
            continue  # nbclient never runs a blank cell; it has no output either way
        executes = client.skip_cells_with_tag not in cell.metadata.get("tags", [])
        if (outcome == "passed") != executes:
            return None  # nbval skipped a cell the book runs, or ran one the book skips
        if not executes:
            continue
        started = [m for m in msgs if m["msg_type"] == "execute_input"]
        if len(started) != 1 or started[0]["content"]["code"] != cell.source:
            return None  # not the code the book runs
        msg_id, count = started[0]["parent_header"]["msg_id"], count + 1
        cell.outputs, client.clear_before_next_output = [], False  # what NotebookClient.execute_cell resets
        for msg in msgs:
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            state = msg["content"].get("data", {}).get("state", {}) if msg["msg_type"] == "comm_open" else {}
            if state.get("_model_name") == "OutputModel":
                return None
            try:
                client.process_message(msg, cell, index)
            except CellExecutionComplete:
                break
        cell.execution_count = count  # nbclient numbers the cells it runs itself (code_cells_executed + 1)
    client.set_widgets_metadata()
    nb.metadata["language_info"] = book.language_info
    return nb


_nbval.IPyNbFile.setup, _nbval.IPyNbFile.teardown = _setup, _teardown
_nbval.IPyNbFile.get_kernel_message, _nbval.IPyNbCell.runtest = _get_kernel_message, _runtest


# ---------------------------------------------------------------------------------------------------------------------
# Kernels forked from one process (per pytest process) that has imported what the notebooks import
# (tests/forked_kernels.py, issue 19): nbval's current-environment kernel is started through it, from the first
# notebook on. ASCEND_LAB_FORKED_KERNELS=0: the usual kernels.

_FORKED_KERNELS = Path(__file__).resolve().parent / "tests" / "forked_kernels.py"
_zygote: list = []     # [the zygote process, its folder] once this process has started it


def _fork_kernels(config) -> None:
    if _zygote or not config.option.nbval_current_env or os.environ.get("ASCEND_LAB_FORKED_KERNELS") == "0":
        return                                  # (only the current-environment kernel is forked)
    import nbval.kernel

    folder = tempfile.mkdtemp(prefix="ascend-lab-kernels-")
    path = os.path.join(folder, "zygote")
    _zygote[:] = [subprocess.Popen([sys.executable, str(_FORKED_KERNELS), "serve", path], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL), folder]
    argv = [sys.executable, str(_FORKED_KERNELS), "kernel", path, "-f", "{connection_file}"]
    usual = nbval.kernel.NbvalKernelspecManager.get_kernel_spec

    def get_kernel_spec(self, kernel_name):
        spec = usual(self, kernel_name)
        if kernel_name == nbval.kernel.CURRENT_ENV_KERNEL_NAME:
            spec.argv = argv
        return spec

    nbval.kernel.NbvalKernelspecManager.get_kernel_spec = get_kernel_spec


def pytest_unconfigure(config):
    if _zygote:
        zygote, folder = _zygote
        zygote.terminate()
        zygote.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


def pytest_sessionfinish(session):
    cache = session.config.getoption("nbval_book_cache")
    if not cache or hasattr(session.config, "workerinput"):
        return
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    staged = sorted((Path(cache) / _STAGED).glob("*.ipynb"))
    store = get_cache(cache)
    for path in staged:
        nb = nbformat.read(path, as_version=4)
        seconds = nb.metadata.pop("nbval_execution_seconds", None)
        store.cache_notebook_bundle(CacheBundleIn(nb, str(path), data={"execution_seconds": seconds}),
                                    check_validity=False, overwrite=True)
    session.config.stash[_HANDED] = f"nbval-book-cache: {len(staged)} notebooks executed by nbval stored in {cache}"


def pytest_terminal_summary(terminalreporter, config):
    if _HANDED in config.stash:
        terminalreporter.write_line(config.stash[_HANDED])

"""The live path as a reader meets it (issue 26 item 10): the JupyterLab `make lab` installs, driven in Chromium.

`make test-lab` runs this file (it installs the ``lab`` extra from requirements.lock first, as `make lab` does).
Its name does not start with ``test_``, so `make test`'s unit stage (``pytest ... tests``) and `make check` do not
collect it; pytest runs a file named on its command line whatever its name.

The server is the venv's ``jupyter lab`` with the settings `make lab` installs (scripts/jupyterlab-overrides.json:
jupytext opens a MyST ``.md`` as a notebook on a double-click), headless (``--no-browser``) on a free loopback port
with a token. It serves a copy of ``chapters/`` and ``labs/`` in a temporary folder, so that nothing the test types
(or JupyterLab's autosave) reaches the working tree; Jupyter's config, data, runtime, settings and workspace folders
are temporary too, so the reader's own ~/.jupyter plays no part. The only setting the test adds is JupyterLab's
"fetch news?" question answered no (its toast would cover the notebook's corner).

- A chapter with an explorer (chapter 7's tiling explorer) opens as a notebook from the file browser; Run All Cells
  runs every code cell without an error; moving each slider of the explorer (keyboard, as on the published page)
  changes the figure it shows.
- A lab (lab 1) opens the same way; after Run All Cells the checker reports the untouched skeleton as failing; the
  exercise cell is edited (select all, type a correct answer -- the book's reference solution, as text), run, and the
  checker run again reports a pass.
Every wait is on a state of the page (a kernel status, a prompt, an output), never a fixed sleep.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from test_site import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
OVERRIDES = ROOT / "scripts" / "jupyterlab-overrides.json"
CHAPTER = "chapters/07_tiling_hsg.md"         # the tiling explorer: two sliders over a Stack of figures
LAB = "labs/01_checks.md"
EXERCISE = "def softplus_backward_checks"     # the first line of lab 1's exercise cell
CHECKER = "lab1.check(softplus_backward_checks)"
RUN_TIMEOUT_MS = 300_000                      # a notebook's Run All (`make test` gives a cell 300 s)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _installed_overrides() -> Path:
    return Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    """JupyterLab serving a copy of the chapters and labs; yields its base URL and token."""
    if not (VENV_BIN / "jupyter-lab").exists() or not _installed_overrides().is_file():
        pytest.fail("JupyterLab is not installed as `make lab` installs it: run `make test-lab` (pip install "
                    "-c requirements.lock -e '.[dev,lab]' and scripts/jupyterlab-overrides.json)")
    assert _installed_overrides().read_text() == OVERRIDES.read_text(), "stale overrides.json: run `make lab` once"
    tmp = tmp_path_factory.mktemp("jupyterlab")
    served = tmp / "root"
    skip = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
    for folder in ("chapters", "labs"):
        shutil.copytree(ROOT / folder, served / folder, ignore=skip)
    dirs = {name: tmp / name for name in ("config", "data", "runtime", "settings", "workspaces", "ipython")}
    news = dirs["settings"] / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false"}')
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_DATA_DIR=str(dirs["data"]),
               JUPYTER_RUNTIME_DIR=str(dirs["runtime"]), JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]), IPYTHONDIR=str(dirs["ipython"]))
    port, token = _free_port(), os.urandom(12).hex()
    cmd = [str(VENV_BIN / "jupyter-lab"), "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={served}",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")                # as `make lab` does for root
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(server, f"{base}/api/status?token={token}", tmp / "server.log")
        yield base, token
    finally:
        server.send_signal(signal.SIGTERM)      # jupyter-server stops its kernels on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def _wait_for_server(server: subprocess.Popen, status_url: str, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"jupyter lab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(status_url, timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)                         # polling the server's status endpoint until it answers
    pytest.fail(f"jupyter lab did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture
def page(lab_url):
    """A fresh Chromium page (a new profile per test) that blocks and records any request off the loopback server."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: `make test` installs Debian's chromium (scripts/ensure_chromium.sh).")
    from playwright.sync_api import sync_playwright

    base, _ = lab_url
    external: list[str] = []

    def route(r):
        if r.request.url.startswith((base, "data:", "blob:")):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            tab = context.new_page()
            tab.route("**/*", route)
            yield tab
        finally:
            browser.close()
    assert not external, f"JupyterLab requested other hosts: {external}"


def _open_from_file_browser(page, lab_url, path: str) -> None:
    """Open the folder of ``path`` in JupyterLab's file browser (a fresh workspace) and double-click the file; it must
    open as a notebook (jupytext's viewer, the default `make lab` sets for Markdown) with its kernel idle."""
    base, token = lab_url
    folder, name = path.rsplit("/", 1)
    page.goto(f"{base}/lab/tree/{folder}?reset&token={token}")
    page.locator(".jp-DirListing-item", has=page.locator(".jp-DirListing-itemText", has_text=re.compile(
        rf"^{re.escape(name)}$"))).dblclick()
    panel = page.locator(".jp-NotebookPanel", has=page.locator(".jp-Cell")).first
    panel.wait_for(timeout=60_000)
    # the status bar's kernel item reads "Python 3 (ipykernel) | Idle" once the kernel is up (the notebook's own
    # execution indicator says idle before a kernel is even started)
    page.wait_for_function("(name) => [...document.querySelectorAll('#jp-main-statusbar [title]')].some(e => e.title "
                           "=== 'Change kernel for ' + name && /^Python 3 .*\\| Idle$/.test(e.textContent.trim()))",
                           arg=name, timeout=120_000)
    assert page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel").text_content() == name


#: The state of the open notebook's run: kernel status, every code cell's prompt, error outputs.
_RUN_STATE = """() => {
    const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    return {status: nb.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status,
            prompts: [...nb.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim()),
            errors: [...nb.querySelectorAll('[data-mime-type="application/vnd.jupyter.error"]')]
                    .map(e => e.textContent.slice(0, 400))};
}"""

_RUN_FINISHED = f"""() => {{
    const s = ({_RUN_STATE})();
    return s.status === 'idle' && s.prompts.length > 0 && !s.prompts.some(p => p.includes('*'));
}}"""


def _run_all(page) -> dict:
    """Run > Run All Cells, as a reader would; wait until no cell is queued or running and the kernel is idle."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    page.wait_for_function(f"() => ({_RUN_STATE})().prompts.some(p => /[*\\d]/.test(p))", timeout=60_000)
    page.wait_for_function(_RUN_FINISHED, timeout=RUN_TIMEOUT_MS, polling=500)
    return page.evaluate(_RUN_STATE)


def _assert_ran_cleanly(state: dict, path: str) -> None:
    assert not state["errors"], f"{path}: errors in JupyterLab: {state['errors']}"
    unrun = [i for i, p in enumerate(state["prompts"]) if not re.fullmatch(r"\[\d+\]:", p)]
    assert not unrun, f"{path}: code cells {unrun} did not run: {state['prompts']}"


#: The explorer's figure: the image its Stack shows now (ipywidgets renders only the selected child).
_FIGURE = """(box) => { const img = box.querySelector('img.widget-image');
                        return img && img.complete && img.naturalWidth ? img.getAttribute('src') : null; }"""


def test_chapter_explorer_runs_live(page, lab_url):
    """Chapter 7 opened as a notebook runs top to bottom; each slider of its explorer changes the figure."""
    _open_from_file_browser(page, lab_url, CHAPTER)
    _assert_ran_cleanly(_run_all(page), CHAPTER)
    explorer = page.locator(".jp-OutputArea-output .jupyter-widgets.widget-container",
                            has=page.locator(".widget-slider"))
    explorer = explorer.filter(has=page.locator("img.widget-image")).last
    explorer.scroll_into_view_if_needed()
    handles = explorer.locator(".widget-slider .noUi-handle")
    assert handles.count() == 2, f"the tiling explorer has sliders N and BUFFER_NUM, found {handles.count()}"
    box = explorer.element_handle()
    for k in range(handles.count()):
        before = page.wait_for_function(_FIGURE, arg=box, timeout=30_000).json_value()
        before_shot = explorer.locator("img.widget-image").screenshot()
        handle = handles.nth(k)
        at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        handle.focus()
        page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
        page.wait_for_function(f"([box, before]) => {{ const s = ({_FIGURE})(box); return s && s !== before; }}",
                               arg=[box, before], timeout=30_000)
        after_shot = explorer.locator("img.widget-image").screenshot()
        assert after_shot != before_shot, f"slider {k} changed the image source but not what it shows"


def _answer() -> str:
    """Lab 1's reference solution as a learner would type it into the exercise cell: the solution module's lab-1
    section (its constants and the function), with the two imports its annotations need."""
    text = (ROOT / "labs" / "labkit" / "solutions.py").read_text(encoding="utf-8")
    section = re.search(r"# Lab 1:.*?\n# =+\n(.*?)\n# =+\n# Lab 2:", text, re.S)
    assert section, "labs/labkit/solutions.py has no lab-1 section"
    return ("from typing import Any\n\nfrom ascend_lab.acl.tensor import aclScalar, aclTensor\n\n"
            + section.group(1).strip() + "\n")


def _code_cell(page, first_line: str):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").filter(
        has=page.locator(".cm-content", has_text=first_line))


def _report(page):
    return _code_cell(page, CHECKER).locator(".jp-OutputArea-output .lab-report")


def test_lab_exercise_edited_and_checked_live(page, lab_url):
    """Lab 1 opened as a notebook: the checker fails the skeleton; the exercise cell edited to a correct answer and
    run, the checker run again passes it."""
    _open_from_file_browser(page, lab_url, LAB)
    _assert_ran_cleanly(_run_all(page), LAB)
    report = _report(page)
    report.wait_for(timeout=30_000)
    assert report.count() == 1 and report.text_content().lstrip().startswith("\u2717"), report.text_content()

    exercise = _code_cell(page, EXERCISE)
    assert exercise.count() == 1
    editor = exercise.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(_answer())
    typed = editor.inner_text()
    assert "check_not_null(\"beta\", beta)" in typed and "TODO" not in typed, typed[:400]
    prompt = exercise.locator(".jp-InputPrompt").text_content()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("([cell, before]) => { const p = cell.querySelector('.jp-InputPrompt').textContent;"
                           " return /\\[\\d+\\]/.test(p) && p !== before; }",
                           arg=[exercise.element_handle(), prompt], timeout=60_000)

    checker = _code_cell(page, CHECKER)
    prompt = checker.locator(".jp-InputPrompt").text_content()
    checker.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("([cell, before]) => { const p = cell.querySelector('.jp-InputPrompt').textContent;"
                           " return /\\[\\d+\\]/.test(p) && p !== before; }",
                           arg=[checker.element_handle(), prompt], timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(_RUN_FINISHED, timeout=60_000, polling=500)
    _assert_ran_cleanly(page.evaluate(_RUN_STATE), LAB)
    assert report.count() == 1, "the checker cell shows no report"
    text = report.text_content().strip()
    assert text.startswith("\u2713") and "PASSED" in text, text

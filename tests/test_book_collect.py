"""The nbval adapter (root conftest.py) must keep collecting the book's MyST notebooks: it patches a
module global of nbval 0.11, so a changed nbval would silently collect nothing. Covers the chapters and
the labs (``labs/*.md``, the book's "Labs" part)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK_FOLDERS = ("chapters", "labs")


def _notebooks(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("*.md"))


@pytest.fixture(scope="module")
def collected() -> subprocess.CompletedProcess:
    """One ``pytest --collect-only`` of every folder's notebooks (a pytest start costs ~3.5 CPU s of the ~4.5 s a
    collection takes: one run for both folders instead of one each)."""
    notebooks = [nb for folder in BOOK_FOLDERS for nb in _notebooks(folder)]
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax", "-p",
                           "no:cacheprovider", *map(str, notebooks)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("folder", BOOK_FOLDERS)
def test_every_notebook_is_collected(folder, collected):
    notebooks = _notebooks(folder)
    assert notebooks, f"no notebooks found in {folder}/"
    out = collected
    assert out.returncode == 0, out.stdout + out.stderr
    for nb in notebooks:
        assert f"{nb.relative_to(ROOT)}::Cell 0" in out.stdout, f"{nb.name} collected no cells:\n{out.stdout}"


@pytest.mark.parametrize("folder", BOOK_FOLDERS)
def test_notebooks_are_listed_in_the_toc(folder):
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for nb in (ROOT / folder).glob("*.md"):
        assert f"{folder}/{nb.stem}" in toc, f"{folder}/{nb.name} is not in _toc.yml"


@pytest.mark.parametrize("folder", BOOK_FOLDERS)
def test_notebooks_open_as_notebooks_in_jupyterlab(folder):
    """jupytext (``make lab``) reads a file as a MyST notebook only when its front matter names the format
    in full; without ``extension: .md`` the header shows as a raw cell and code cells as Markdown."""
    import jupytext
    for nb in sorted((ROOT / folder).glob("*.md")):
        head = nb.read_text(encoding="utf-8").split("---", 2)[1]
        assert "extension: .md" in head and "format_name: myst" in head, f"{nb.name}: incomplete jupytext header"
        cells = jupytext.read(nb).cells          # no fmt: as JupyterLab's contents manager reads it
        assert cells[0].cell_type != "raw", f"{nb.name}: the front matter became a raw cell"
        assert any(c.cell_type == "code" for c in cells), f"{nb.name}: no code cell recognised"

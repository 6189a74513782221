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


@pytest.mark.parametrize("folder", BOOK_FOLDERS)
def test_every_notebook_is_collected(folder):
    notebooks = sorted(p for p in (ROOT / folder).glob("*.md"))
    assert notebooks, f"no notebooks found in {folder}/"
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax", "-p",
                          "no:cacheprovider", *map(str, notebooks)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    for nb in notebooks:
        assert f"{nb.relative_to(ROOT)}::Cell 0" in out.stdout, f"{nb.name} collected no cells:\n{out.stdout}"


@pytest.mark.parametrize("folder", BOOK_FOLDERS)
def test_notebooks_are_listed_in_the_toc(folder):
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for nb in (ROOT / folder).glob("*.md"):
        assert f"{folder}/{nb.stem}" in toc, f"{folder}/{nb.name} is not in _toc.yml"

"""The nbval adapter (root conftest.py) must keep collecting the book's MyST notebooks: it patches a
module global of nbval 0.11, so a changed nbval would silently collect nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_chapter_is_collected_as_a_notebook():
    chapters = sorted(p for p in (ROOT / "chapters").glob("*.md"))
    assert chapters, "no chapters found"
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax", "-p",
                          "no:cacheprovider", *map(str, chapters)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    for ch in chapters:
        assert f"{ch.relative_to(ROOT)}::Cell 0" in out.stdout, f"{ch.name} collected no cells:\n{out.stdout}"


def test_chapters_are_listed_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for ch in (ROOT / "chapters").glob("*.md"):
        assert f"chapters/{ch.stem}" in toc, f"{ch.name} is not in _toc.yml"

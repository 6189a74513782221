"""Issue 24 item 5: where the CANN 8.1.RC1 toolkit answers a question about the legacy TBE kernels, chapter 12.6,
chapter 14 and the TBE model's docstrings cite it instead of calling the answer "UNCONFIRMED" or "not public"."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "chapters" / "126_tbe.md", ROOT / "chapters" / "14_differences.md",
         *sorted((ROOT / "ascend_lab" / "tbe").glob("*.py")),
         *sorted((ROOT / "ascend_lab" / "ops").glob("*/op_kernel/tbe.py"))]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_unconfirmed_or_not_public(path):
    text = path.read_text(encoding="utf-8")
    for phrase in ("UNCONFIRMED", "is not public", "are not public", "not public)"):
        assert phrase not in text, f"{path.name} still says {phrase!r}"


def test_chapter_126_cites_the_toolkit():
    text = (ROOT / "chapters" / "126_tbe.md").read_text(encoding="utf-8")
    for cited in ("CANN 8.1.RC1", "elewise_schedule.py", "operation_func_mgr.py", "Ascend310P3.ini",
                  '"value": null'):
        assert cited in text, cited

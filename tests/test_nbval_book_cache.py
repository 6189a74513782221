"""`make test` executes each notebook once: nbval runs it, and the root conftest.py's --nbval-book-cache hands what it
printed and drew to the book build through a jupyter-cache. These tests check the hand-over: the two readers agree
on the code, the rebuilt notebook is the one myst-nb's own execution makes, and only a clean run is handed over."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for folder in ("chapters", "labs") for p in (ROOT / folder).glob("*.md")
                   if "kernelspec:" in p.read_text(encoding="utf-8")[:2000])

HEADER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A notebook
"""


def _myst_nb_read(path: Path):
    """The notebook as the book build reads it (myst-nb's reader, with the book's MyST extensions)."""
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    text = path.read_text(encoding="utf-8")
    md = MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "linkify", "substitution", "tasklist"})
    return create_nb_reader(str(path), md, NbParserConfig(), text).read(text)


def _code(nb) -> list[tuple[str, list[str]]]:
    return [(c.source, c.metadata.get("tags", [])) for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nbval_and_the_book_read_the_same_code(path):
    """nbval (jupytext) and the book (myst-nb) see the same code cells with the same tags, so a notebook nbval ran
    is the notebook the book shows."""
    assert _code(jupytext.read(path, fmt="md:myst")) == _code(_myst_nb_read(path))


def _cell(source: str, *tags: str) -> str:
    opts = f":tags: [{', '.join(tags)}]\n" if tags else ""
    return f"\n```{{code-cell}} ipython3\n{opts}{textwrap.dedent(source).strip()}\n```\n"


GOOD = HEADER + "".join([
    _cell("print('one'); print('two')\nimport sys; sys.stderr.write('three\\n')"),
    _cell("from IPython.display import display, clear_output, HTML\n"
          "h = display(HTML('<b>first</b>'), display_id=True)\nh.update(HTML('<b>updated</b>'))"),
    _cell("print('gone'); clear_output(wait=True); print('kept')"),
    _cell("import ipywidgets as w\na, b = w.IntSlider(value=3), w.IntText()\nw.jslink((a, 'value'), (b, 'value'))\n"
          "w.VBox([a, b])"),
    _cell("undefined_name", "raises-exception"),
    _cell("skeleton = 1", "skip-execution", "nbval-skip"),
    _cell("print(sorted(n for n in ('a', 'skeleton') if n in globals()))\n6 * 7"),
])
BAD = HEADER + _cell("print('before')") + _cell("assert 1 == 2") + _cell("print('after')")


def _merged_streams(outputs):
    """Consecutive stream outputs of one name as one: how ipykernel splits a print into messages depends on when
    its flush timer fires (under load ``print(x)`` can arrive as "x" then "\\n"), in either execution alike."""
    merged = []
    for out in outputs or []:
        if merged and out.get("output_type") == "stream" == merged[-1].get("output_type") \
                and out.get("name") == merged[-1].get("name"):
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + out["text"]}
        else:
            merged.append(dict(out))
    return merged


def _normal(obj) -> str:
    """JSON with the random parts (widget model ids, uuid hex, addresses) blanked out, streams merged."""
    if isinstance(obj, list):
        obj = _merged_streams(obj)
    return re.sub(r"[0-9a-f]{32}|\b0x[0-9a-f]{6,16}\b", "ID", json.dumps(obj, sort_keys=True))


def test_the_book_gets_the_notebook_myst_nb_would_have_executed(tmp_path):
    from jupyter_cache import get_cache
    from jupyter_cache.executors.utils import single_nb_execution

    (tmp_path / "good.md").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.md").write_text(BAD, encoding="utf-8")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "stale").write_text("from an earlier run")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
                          "--nbval-lax", "--nbval-current-env", f"--nbval-book-cache={cache}", "good.md", "bad.md"],
                         cwd=tmp_path, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "1 failed" in run.stdout, run.stdout + run.stderr  # bad.md's assert
    assert "nbval-book-cache: 1 notebooks" in run.stdout, run.stdout
    assert not (cache / "stale").exists(), "the cache is replaced by each run"

    store = get_cache(str(cache))
    good, bad = _myst_nb_read(tmp_path / "good.md"), _myst_nb_read(tmp_path / "bad.md")
    with pytest.raises(KeyError):
        store.match_cache_notebook(bad)  # a failed notebook is left for the book build to execute
    handed = store.merge_match_into_notebook(good)[1]  # what the book build reads (myst-nb's cache mode)

    assert single_nb_execution(good, cwd=str(tmp_path), timeout=120, allow_errors=False).err is None
    assert [c.get("execution_count") for c in handed.cells] == [c.get("execution_count") for c in good.cells]
    assert [_normal(c.get("outputs")) for c in handed.cells] == [_normal(c.get("outputs")) for c in good.cells]
    texts = [o.get("text", "") + json.dumps(o.get("data", {})) for c in handed.cells for o in c.get("outputs", [])]
    assert any("updated" in t for t in texts) and not any("first" in t or "gone" in t for t in texts)
    assert any("['a']" in t for t in texts)  # the skeleton cell ran in neither
    widgets = [sorted(_normal(s) for s in nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]
                      ["state"].values()) for nb in (handed, good)]
    assert widgets[0] == widgets[1] and any("LinkModel" in s for s in widgets[0])
    assert handed.metadata.language_info == good.metadata.language_info

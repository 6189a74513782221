"""ascend_lab.book.sphinx_site (issue 26 item 5): a figure's alt text travels in its PNG and back out; a page lists
each script once; the search scorer is found wherever the build runs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from ascend_lab import viz
from ascend_lab.book.sphinx_site import SEARCH_SCORER, dedupe_scripts, png_description, use_search_scorer
from ascend_lab.viz.style import figure_alt, new_figure


def test_alt_text_round_trips_through_the_png(tmp_path):
    fig = viz.plot_dtype_tables()
    png, metadata = fig._repr_png_()
    (tmp_path / "f.png").write_bytes(png)
    assert png_description(tmp_path / "f.png") == metadata["alt"] == figure_alt(fig)
    assert "PromoteType" in metadata["alt"]


def test_alt_text_of_a_non_latin1_title_and_an_explicit_one(tmp_path):
    fig = new_figure()
    fig.add_subplot().set_title("tiling → tile é", loc="center")
    png, metadata = fig._repr_png_()
    (tmp_path / "f.png").write_bytes(png)
    assert png_description(tmp_path / "f.png") == metadata["alt"] == "Figure: tiling → tile é"
    fig.alt_text = "tile map of 8 elements on 1 core"
    assert figure_alt(fig) == "tile map of 8 elements on 1 core"
    assert png_description(tmp_path / "missing.png") is None


def test_each_script_once():
    def js(filename, **attributes):
        return SimpleNamespace(filename=filename, attributes=attributes)

    scripts = [js("a.js"), js(None, body="const X = 1"), js("", body="const X = 1"), js("a.js"), js("b.js")]
    context = {"script_files": scripts}
    dedupe_scripts(None, "page", "page.html", context, None)
    assert [s.filename for s in context["script_files"]] == ["a.js", None, "b.js"]


def test_search_scorer_is_the_books_own_by_full_path(tmp_path):
    """Sphinx opens html_search_scorer from the build's working directory: the extension names the book's file in full,
    and leaves a scorer the configuration chose alone."""
    root = Path(__file__).resolve().parents[1]
    config = SimpleNamespace(html_search_scorer="")
    use_search_scorer(SimpleNamespace(srcdir=str(root)), config)
    assert Path(config.html_search_scorer).is_absolute() and Path(config.html_search_scorer).is_file()
    assert "Scorer.score" in Path(config.html_search_scorer).read_text(encoding="utf-8")
    chosen = SimpleNamespace(html_search_scorer="other.js")
    use_search_scorer(SimpleNamespace(srcdir=str(tmp_path)), chosen)
    assert chosen.html_search_scorer == "other.js"


def test_a_build_inlines_the_scorer_into_language_data(tmp_path):
    """A Sphinx build with the extension (a two-page project holding the book's scorer where the book holds it)
    writes the scorer into _static/language_data.js, which every page of the theme loads after searchtools.js."""
    from sphinx.application import Sphinx

    root = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"
    (src / SEARCH_SCORER).parent.mkdir(parents=True)
    (src / SEARCH_SCORER).write_text((root / SEARCH_SCORER).read_text(encoding="utf-8"), encoding="utf-8")
    (src / "conf.py").write_text('extensions = ["ascend_lab.book.sphinx_site"]\n', encoding="utf-8")
    (src / "index.rst").write_text("Tiling\n======\n\n.. toctree::\n\n   other\n", encoding="utf-8")
    (src / "other.rst").write_text("Other\n=====\n\nThe tiling of a kernel.\n", encoding="utf-8")
    app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html", status=None,
                 warning=None, freshenv=True)
    app.build()
    data = (tmp_path / "out" / "_static" / "language_data.js").read_text(encoding="utf-8")
    assert "Scorer.score = (function ()" in data and data.index("var Stemmer") < data.index("Scorer.score")

"""ascend_lab.book.sphinx_site (issue 26 item 5): a figure's alt text travels in its PNG and back out; a page lists
each script once."""

from __future__ import annotations

from types import SimpleNamespace

from ascend_lab import viz
from ascend_lab.book.sphinx_site import dedupe_scripts, png_description
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

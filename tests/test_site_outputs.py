"""No stray outputs in the built site (issue 12 item 7): no code cell of any page shows a bare ``0``, ``None``,
``[]``, ``<Figure size ...>`` or another repr that only says a cell's last line returned something nobody meant to
show (a status code, the result of ``ax.set_xlim``, an empty list of handles); and no lab page shows a passing
checker report (issue 22: a lab is passed only by doing its work).

It reads the built HTML (``SITE`` from tests/test_site.py: ``_build/html``, or ``ASCEND_LAB_SITE`` for a private
build) and, like the browser tests, FAILS when there is no built site. A cell that means to show such a value
says what it is (``print(f"status {ret}")``) or ends with ``;``.
"""

from __future__ import annotations

import html
import re

import pytest
from test_site import SITE, site  # noqa: F401  (the fixture is used by name)

#: The text of an output cell as myst-nb writes it: the execute_result (``text_plain``) or printed (``stream``) text.
_OUTPUT = re.compile(
    r'<div class="output (?P<kind>text_plain|stream)[^"]*">\s*<div class="highlight">\s*<pre>(?:<span></span>)?'
    r"(?P<text>.*?)</pre>", re.S)
_TAG = re.compile(r"<[^>]+>")

#: Outputs that are never meant: an empty or null value, or the repr of a plotting object.
_STRAY = re.compile(
    r"""(?x)
    -?0 | None | \[\] | \{\} | \(\) | '' | "" | set\(\) | True | False
    | <Figure\ size\ [^>]*>                      # a matplotlib Figure's repr (the picture is elsewhere or nowhere)
    | <(?:matplotlib|Axes|AxesSubplot)[^>]*>    # an Axes, an artist, a Line2D ...
    | \[<matplotlib[^\]]*\]                     # the list plt.plot returns
    | Text\(.*\) | (?:Text|Line2D)\b.*         # ax.set_title(...), ax.text(...)
    | <[\w.]+\ object\ at\ 0x[0-9a-f]+>         # a default object repr
    """)


def stray_outputs(page_html: str) -> list[str]:
    """The output texts of a page that are stray values (each as shown, unescaped)."""
    found = []
    for m in _OUTPUT.finditer(page_html):
        text = html.unescape(_TAG.sub("", m.group("text"))).strip()
        if m.group("kind") == "stream" and text not in ("None", "[]", "{}"):
            continue                              # printed text is meant, unless it prints nothing of use
        if _STRAY.fullmatch(text):
            found.append(text)
    return found


def _cell(text: str, kind: str = "text_plain") -> str:
    return (f'<div class="cell_output docutils container"><div class="output {kind} highlight-myst-ansi notranslate">'
            f'<div class="highlight"><pre><span></span>{html.escape(text)}\n</pre></div></div></div>')


@pytest.mark.parametrize("text", ["0", "None", "[]", "{}", "<Figure size 640x480 with 1 Axes>",
                                  "[<matplotlib.lines.Line2D at 0x7f>]", "Text(0.5, 1.0, 'x')",
                                  "<ascend_lab.viz.Thing object at 0x7f3a2c>"])
def test_the_detector_finds_stray_outputs(text):
    assert stray_outputs("<p>x</p>" + _cell(text)) == [text]


@pytest.mark.parametrize("text", ["161002", "status 0", "KernelSteps(core 0)", "0.5", "[1, 2]",
                                  "array([0, 0])", "aclnnStatus 0 (ACLNN_SUCCESS)"])
def test_the_detector_leaves_meant_outputs(text):
    assert stray_outputs(_cell(text)) == [] and stray_outputs(_cell(text, "stream")) == []


def test_no_stray_outputs_in_the_site(site):  # noqa: F811  (pytest fixture)
    pages = [p for p in site.pages if "cell_output" in site.html[p]]
    assert pages, f"no page of {SITE} has an output cell: is it the built book?"
    stray = {p: found for p in site.pages if (found := stray_outputs(site.html[p]))}
    assert not stray, ("stray output cells (end the cell with ';' or show the value with a label): "
                       + "; ".join(f"{p}: {found}" for p, found in stray.items()))


#: What an intended error must not show a learner (issue 26 item 6): a traceback, or a path of the build machine.
_TRACEBACK = re.compile(r'<div class="output traceback')
#: (An absolute path to a file of the repository itself -- the C++ front end's kernel sources named in sanitizer
#: messages, chapters 8, 10, 12 -- is left to that front end: it should print them relative to the repository.)
_MACHINE_PATH = re.compile(r"(?:/home/\w+|site-packages|/usr/lib/python|\.venv/|ipykernel_\d+)")


def test_no_traceback_or_machine_path_in_outputs(site):  # noqa: F811  (pytest fixture)
    """An error a page means to show is the message a learner needs (``ValueError: ...``), not a traceback that
    prints the build machine's paths and the library's internals."""
    found = {}
    for p in site.pages:
        page = site.html[p]
        outputs = [html.unescape(_TAG.sub("", m.group("text"))) for m in _OUTPUT.finditer(page)]
        bad = (["a traceback"] if _TRACEBACK.search(page) else []) + sorted(
            {m.group(0) for text in outputs for m in _MACHINE_PATH.finditer(text)})
        if bad:
            found[p] = bad
    assert not found, "outputs that show a traceback or a machine path: " + "; ".join(
        f"{p}: {bad}" for p, bad in found.items())


def test_built_lab_pages_show_no_passing_report(site):  # noqa: F811  (pytest fixture)
    """A lab page shows the checker's report on the untouched skeleton, a failing one, never a pass nor the
    reference's report (issue 22; tests/test_labs_integrity.py runs every lab page's cells in process too)."""
    labs = [p for p in site.pages if p.startswith("labs/") and "cell_output" in site.html[p]]
    assert labs, f"no lab page of {SITE} has an output cell: is it the built book?"
    for page in labs:
        assert "this checked the reference solution" not in site.html[page], page
        assert "\u2014 PASSED:" not in site.html[page], f"{page} shows a passing report"

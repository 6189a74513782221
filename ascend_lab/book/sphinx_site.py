"""A small Sphinx extension for the book's site (issue 26), loaded by ``sphinx.extra_extensions`` in _config.yml
(a module of the package, so that a copy of _config.yml elsewhere -- `make test` builds with one under _build --
finds it too).

Jupyter Book 1.0.4 + sphinx-thebe 0.3.1 add thebe's inline configuration script to every page twice, and the second
copy threw "Identifier 'THEBE_JS_URL' has already been declared" in every page's console. The book never launches
thebe (``launch_buttons.thebe: false``), so this keeps the first copy of each script a page lists and drops repeats.

It also gives each figure an output cell shows its alt text: ``ascend_lab.viz`` writes what a figure shows into its
PNG (the ``Description`` text chunk, from the figure's own titles and labels: ``viz.style.figure_alt``), and myst-nb,
which keeps only an output's width and height, would otherwise leave the image's file path as its alt text.

And it ranks a page whose title matches a search first: Sphinx's ``html_search_scorer`` is opened relative to the
working directory of the build, so this sets it to the book's own scripts/site/search-scorer.js by its full path.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any


def _key(js: Any) -> tuple:
    attributes = getattr(js, "attributes", None) or {}
    filename = getattr(js, "filename", js) or ""            # an inline script's is None or "", by who added it
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def dedupe_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    seen: set[tuple] = set()
    kept = []
    for js in context.get("script_files", []):
        key = _key(js)
        if key not in seen:
            seen.add(key)
            kept.append(js)
    context["script_files"] = kept


def png_description(path: str | Path) -> str | None:
    """The ``Description`` text of a PNG file (tEXt, zTXt or iTXt chunk), or None."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IDAT" or kind == b"IEND":
            break
        key, _, rest = body.partition(b"\0")
        if key != b"Description":
            continue
        try:
            if kind == b"tEXt":
                return rest.decode("latin-1")
            if kind == b"zTXt":
                return zlib.decompress(rest[1:]).decode("latin-1")
            if kind == b"iTXt":                  # flag, method, language\0, translated keyword\0, text
                flag, text = rest[0], rest[2:].split(b"\0", 2)[-1]
                return (zlib.decompress(text) if flag else text).decode("utf-8")
        except (zlib.error, UnicodeDecodeError, IndexError):
            return None
    return None


def figure_alt_text(app: Any, doctree: Any, docname: str) -> None:
    """An image with no alt text of its own (docutils would print its path) takes its PNG's Description."""
    from docutils import nodes  # deferred: docutils comes with Sphinx, only the book build has it

    for node in doctree.findall(nodes.image):
        uri = node.get("uri", "")
        if node.get("alt") or not uri.lower().endswith(".png") or "://" in uri:
            continue
        # after Sphinx's image collector the uri is relative to the source directory; before, to the document
        candidates = [Path(app.srcdir) / node.get("candidates", {}).get("*", uri), Path(app.srcdir) / uri,
                      Path(app.env.relfn2path(uri, docname)[1])]
        text = next((t for path in candidates if path.is_file() and (t := png_description(path))), None)
        if text:
            node["alt"] = text


#: The search scorer (a JavaScript file Sphinx inlines into language_data.js), relative to the book's root.
SEARCH_SCORER = Path("scripts") / "site" / "search-scorer.js"


def use_search_scorer(app: Any, config: Any) -> None:
    """Point ``html_search_scorer`` at the book's scorer, unless the configuration names another one."""
    if not config.html_search_scorer:
        config.html_search_scorer = str(Path(app.srcdir) / SEARCH_SCORER)


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", use_search_scorer)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("doctree-resolved", figure_alt_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

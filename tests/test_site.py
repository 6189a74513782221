"""Browser test of the built site, ``_build/html``, in Debian's Chromium driven by Playwright: the fixtures and the
plumbing every tests/test_site*.py shares, and the checks of single features.

What the browser tests prove, page by page (every page the toc produces, plus genindex and search), over file://
and over http://127.0.0.1 (the site served as the README says) -- tests/test_site_pages.py opens each page once per
scheme and checks everything a page must be there:
- the site is offline-clean: every request that is not local is blocked and reported, and there must be none;
  nothing local is missing (no 404 / file-not-found);
- no console error or uncaught page error (``CONSOLE_ALLOW`` is empty);
- MathJax (served from the site) has typeset every formula;
and, here:
- a ``to_jshtml`` animation plays (the shown frame changes after a click on Play);
- every static explorer (ipywidgets Stack + jslink) works without a kernel: each of its sliders changes the
  image (or HTML) it shows.
It also saves screenshots of three key pages under ``_build/screenshots/``.

It does not build the site itself: ``make test`` builds it first, and if ``_build/html`` is missing this test
FAILS (it is never skipped). Playwright drives a system browser installed with apt by ``scripts/ensure_chromium.sh``;
``playwright install`` is never run. The browser is Debian's ``chromium-headless-shell`` (the same Chromium build as
``/usr/bin/chromium``, without the desktop browser around its engine: what Playwright itself runs for headless tests),
which loads the pages with about a fifth less CPU (issue 19: 191 instead of 237 CPU-seconds for these tests, on
the same site); where it is not installed, ``/usr/bin/chromium``. ``CHROMIUM`` chooses another.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
# ASCEND_LAB_SITE points the browser tests at another build (an engineer's private --path-output build).
SITE = Path(os.environ.get("ASCEND_LAB_SITE", ROOT / "_build" / "html"))
SHOTS = ROOT / "_build" / "screenshots"
#: The site's browser: Debian's headless shell when it is installed, else Debian's chromium (see the docstring).
BROWSERS = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
CHROMIUM = os.environ.get("CHROMIUM") or next((b for b in BROWSERS if os.access(b, os.X_OK)), BROWSERS[-1])
# Once this chapter is in the toc, the site must contain at least one animation and one static explorer.
DEMO_CHAPTER = "chapters/99_figures_demo"

# Flags for Chromium on this closed network (see /work/.library/env/machines/python.md); Playwright adds
# --user-data-dir itself from the fresh temporary directory handed to launch_persistent_context.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Console messages a page may log. Empty since issue 26: the doubled thebe config script ("Identifier
# 'THEBE_JS_URL' has already been declared") is dropped by ascend_lab.book.sphinx_site, and the theme's "Got
# invalid theme mode" (a fresh profile) no longer happens (scripts/site/book.js starts the mode at auto).
CONSOLE_ALLOW: tuple[str, ...] = ()

LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
#: The desktop window every page opens in.
VIEWPORT = {"width": 1280, "height": 900}
_EXTERNAL_RESOURCE = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data)\s*=\s*[\"']"
    r"(?:https?:)?//[^\"']*",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------------------------------------------------------
# The site and its pages


def _toc_docs() -> list[str]:
    """Every document named in _toc.yml (root first), in reading order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                docs.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return [re.sub(r"\.(md|ipynb|rst)$", "", d) for d in docs]


@dataclass
class Site:
    root: Path
    toc_docs: list[str]
    pages: list[str]  # paths relative to root, posix, toc pages first
    html: dict[str, str] = field(default_factory=dict)

    def with_marker(self, pattern: str) -> list[str]:
        return [p for p in self.pages if re.search(pattern, self.html[p])]


def site_pages() -> list[str]:
    """Every page of the site: the toc's pages in reading order, then the other pages the build wrote (genindex,
    search, ...). Without a built site, the toc's pages (so that a test parametrized by page still FAILS there)."""
    docs = [f"{d}.html" for d in _toc_docs()]
    others = sorted(
        p.relative_to(SITE).as_posix()
        for p in SITE.rglob("*.html")
        if not any(part.startswith("_") for part in p.relative_to(SITE).parts)
    ) if SITE.is_dir() else []
    return docs + [p for p in others if p not in set(docs)]


@pytest.fixture(scope="module")
def site() -> Site:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"{SITE} has no built site: run `make book` first (`make test` builds it before this test).")
    docs = _toc_docs()
    missing = [d for d in docs if not (SITE / f"{d}.html").is_file()]
    assert not missing, f"toc pages missing from {SITE}: {missing}"
    pages = site_pages()
    html = {p: (SITE / p).read_text(encoding="utf-8") for p in pages}
    return Site(SITE, docs, pages, html)


# ---------------------------------------------------------------------------------------------------------------------
# Browser plumbing


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: `make test` installs Debian's chromium (scripts/ensure_chromium.sh).")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="site-test-profile-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile,  # a fresh --user-data-dir
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def http_base(site):
    """The site served on loopback, as `python -m http.server -d _build/html` would (README)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site.root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class PageLog:
    external: list[str] = field(default_factory=list)  # blocked requests to anything not local
    broken: list[str] = field(default_factory=list)  # local requests that failed or returned >= 400
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions, minus the allow-list

    def problems(self) -> list[str]:
        return (
            [f"external request: {u}" for u in self.external]
            + [f"broken local request: {u}" for u in self.broken]
            + [f"console error: {e}" for e in self.errors]
        )


class Tab:
    """A browser tab that blocks and records every non-local request, reused for one page after another.

    Each page a test opens in a fresh tab costs Chromium a new renderer process; a tab that navigates from page to
    page of the same scheme keeps its renderer (issue 19: 8 pages over file:// and http in one browser, 1.60-1.73 ->
    1.37-1.45 CPU-s a page; tests/test_site_pages.py in four alternating pairs 71 -> 65 s, its CPU within the
    noise). ``open`` starts every page as a fresh tab would: a new log, light mode, 1280 px."""

    def __init__(self, context, local_prefixes: tuple[str, ...] = ()):
        self.page = context.new_page()
        self.log = PageLog()

        def log() -> PageLog:  # the listeners write to the log of the page open now
            return self.log

        def is_local(u: str) -> bool:
            return u.startswith(LOCAL_SCHEMES + local_prefixes)

        def block(r):
            if r.request.url not in log().external:
                log().external.append(r.request.url)
            r.abort()

        def on_request(req):  # also catches anything the router does not see
            if not is_local(req.url) and req.url not in log().external:
                log().external.append(req.url)

        def on_failed(req):
            if is_local(req.url):
                log().broken.append(f"{req.url} ({req.failure})")

        def on_response(resp):
            if resp.status >= 400:
                log().broken.append(f"{resp.url} (HTTP {resp.status})")

        def on_console(msg):
            if msg.type == "error" and not any(a in msg.text for a in CONSOLE_ALLOW):
                log().errors.append(msg.text)

        def on_pageerror(exc):
            text = str(exc)
            if not any(a in text for a in CONSOLE_ALLOW):
                log().errors.append(f"uncaught: {text}")

        # Only what is not local is routed (to be blocked): Playwright matches a regular expression in the browser's
        # driver, so a local request never makes the round trip to this process (~40 of them per page).
        not_local = re.compile("^(?!" + "|".join(re.escape(p) for p in LOCAL_SCHEMES + local_prefixes) + ")")
        self.page.route(not_local, block)
        self.page.on("request", on_request)
        self.page.on("requestfailed", on_failed)
        self.page.on("response", on_response)
        self.page.on("console", on_console)
        self.page.on("pageerror", on_pageerror)

    def open(self, url: str) -> PageLog:
        """Load url (to its load event) as a fresh tab would show it; the log of what it requests and reports."""
        self.log = PageLog()
        self.page.emulate_media(color_scheme="light")
        self.page.set_viewport_size(VIEWPORT)
        self.page.goto(url, wait_until="load")
        return self.log


def _open(context, url: str, local_prefixes: tuple[str, ...]):
    """Open url in a new tab that blocks and records every non-local request (the tests that open one page)."""
    tab = Tab(context, local_prefixes)
    return tab.page, tab.open(url)


#: Everything a page draws after it loads is there: each ipywidgets view rendered into the area the html-manager gives
#: it (a ``div.widget-subarea`` just before the view's script), every image decoded, the fonts loaded.
_DRAWN = """() => document.readyState === 'complete'
    && [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')].every(s => {
           const area = s.previousElementSibling;
           return area && area.classList.contains('widget-subarea') && area.childElementCount > 0; })
    && [...document.images].every(i => i.complete) && document.fonts.status === 'loaded'"""


def _settle(page, html: str) -> None:
    """Wait until what the page draws in JS (MathJax, widgets, the live panel) is there: DOM states, not network idle
    (which costs 0.5 s of quiet per page, and over file:// Chromium now and then never reports it)."""
    if 'class="math' in html:
        page.wait_for_selector("mjx-container", state="attached", timeout=20_000)
        page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    if 'id="lt-panel"' in html:             # the live tiling panel: pyodide started (http) or the file:// notice
        page.wait_for_selector('#lt-panel[data-state="ready"], #lt-panel[data-state="failed"], '
                               '#lt-panel[data-state="file"]', state="attached", timeout=60_000)
    page.wait_for_function(_DRAWN, timeout=20_000)


def _next_frame(page) -> None:
    """Wait for the page to have drawn twice (what a resize, a colour scheme or a mutation observer changes is done)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _file_url(rel: str) -> str:
    return (SITE / rel).as_uri()


# ---------------------------------------------------------------------------------------------------------------------
# Tests


def test_built_html_references_nothing_external(site):
    """Static check of every page: no script/stylesheet/image/frame is loaded from another host."""
    found = {p: sorted(set(_EXTERNAL_RESOURCE.findall(site.html[p]))) for p in site.pages}
    found = {p: refs for p, refs in found.items() if refs}
    assert not found, f"pages that load resources from the network: {found}"


def test_the_book_has_math(site):
    """MathJax is proved on every page with math (tests/test_site_pages.py); there must be such pages."""
    assert site.with_marker(r'class="math notranslate'), (
        "no page of the book has math ($...$, $$...$$ or {math}): nothing proves MathJax works")


def test_animation_plays(site, browser):
    """Click Play on the first to_jshtml animation of each page that has one: the shown frame must change."""
    pages = site.with_marker(r'<div class="animation">')
    if not pages:
        assert DEMO_CHAPTER not in site.toc_docs, (
            f"{DEMO_CHAPTER} is in _toc.yml but no page contains a div.animation (to_jshtml animation)"
        )
        return  # no animation in the book yet, and the demo chapter is not in the toc: nothing to check
    for rel in pages:
        page, log = _open(browser, _file_url(rel), ())
        try:
            _settle(page, site.html[rel])
            anim = page.locator("div.animation").first
            anim.scroll_into_view_if_needed()
            anim.locator('button[title="Pause"]').click()
            anim.locator('button[title="First frame"]').click()
            img = anim.locator("img").first
            slider = anim.locator("input.anim-slider")
            before_src, before_shot = img.get_attribute("src"), img.screenshot()
            anim.locator('button[title="Play"]').click()
            page.wait_for_function("el => el.value !== '0'", arg=slider.element_handle(), timeout=10_000)
            page.wait_for_timeout(300)
            anim.locator('button[title="Pause"]').click()
            after_src, after_shot = img.get_attribute("src"), img.screenshot()
            frame = slider.input_value()
        finally:
            page.close()
        assert after_src != before_src, f"{rel}: the animation's img src did not change after Play"
        assert after_shot != before_shot, f"{rel}: the animation looks the same after Play (frame {frame})"
        assert not log.problems(), f"{rel}: {log.problems()}"


# What an explorer shows: the image (or, for text explorers, the HTML) that its Stack currently displays.
_SHOWN = "img.widget-image, .widget-html"

_MARK_EXPLORERS = """(shown) => {
    // A static explorer: sliders and a shown image/HTML inside the same ipywidgets box (Stack + jslink).
    // Each such box gets data-explorer-box=<b>; each of its sliders data-explorer=<b> and data-slider=<k>.
    // Returns [[b, k], ...] for every slider of every explorer.
    const out = [];
    let boxes = 0;
    document.querySelectorAll('.widget-slider').forEach((slider, k) => {
        let box = slider.parentElement;
        while (box && box.classList.contains('jupyter-widgets') && !box.querySelector(shown)) {
            box = box.parentElement;
        }
        if (!box || !box.querySelector(shown)) return;
        if (!box.hasAttribute('data-explorer-box')) box.setAttribute('data-explorer-box', boxes++);
        slider.setAttribute('data-explorer', box.getAttribute('data-explorer-box'));
        slider.setAttribute('data-slider', k);
        out.push([box.getAttribute('data-explorer-box'), String(k)]);
    });
    return out;
}"""

_SIGNATURE = """([box, shown]) => {
    const el = document.querySelector(`[data-explorer-box="${box}"]`).querySelector(shown);
    if (!el || (el.tagName === 'IMG' && !el.complete)) return null;
    return el.tagName === 'IMG' ? 'img:' + el.getAttribute('src') : 'html:' + el.innerHTML;
}"""


def _move_explorer(page, box: str, slider: str) -> str | None:
    """Move one slider of explorer `box` one step; return a problem, or None if what it shows changed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    shown = page.locator(f'[data-explorer-box="{box}"]').locator(_SHOWN).first
    shown.scroll_into_view_if_needed()
    before, before_shot = page.evaluate(_SIGNATURE, [box, _SHOWN]), shown.screenshot()
    handle = page.locator(f'[data-slider="{slider}"] .noUi-handle').first
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    handle.focus()
    page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
    try:
        page.wait_for_function(
            f"([box, shown, before]) => {{ const s = ({_SIGNATURE})([box, shown]); return s && s !== before; }}",
            arg=[box, _SHOWN, before],
            timeout=10_000,
        )
    except PlaywrightTimeout:
        return "what it shows did not change within 10 s of moving the slider"
    after_shot = page.locator(f'[data-explorer-box="{box}"]').locator(_SHOWN).first.screenshot()
    return "it looks the same after moving the slider" if after_shot == before_shot else None


def test_static_explorer_slider_changes_image(site, browser):
    """Move every slider of every static explorer (Stack + jslink, no kernel): the shown image must change."""
    pages = [
        p
        for p in site.with_marker(r'"_model_name": "StackModel"')
        if '"_model_name": "LinkModel"' in site.html[p]
    ]
    if not pages:
        assert DEMO_CHAPTER not in site.toc_docs, (
            f"{DEMO_CHAPTER} is in _toc.yml but no page contains a static explorer (ipywidgets Stack + jslink)"
        )
        return
    tested, failures, with_image = [], [], 0
    for rel in pages:
        page, log = _open(browser, _file_url(rel), ())
        try:
            _settle(page, site.html[rel])
            page.wait_for_selector(".widget-slider .noUi-handle", timeout=20_000)
            page.wait_for_selector(_SHOWN, timeout=20_000)
            marked = page.evaluate(_MARK_EXPLORERS, _SHOWN)
            with_image += page.locator("[data-explorer-box] img.widget-image").count()
            for box, slider in marked:
                label = f"{rel} explorer {box} slider {slider}"
                tested.append(label)
                if problem := _move_explorer(page, box, slider):
                    failures.append(f"{label}: {problem}")
        finally:
            page.close()
        failures += [f"{rel}: {p}" for p in log.problems()]
    assert tested, f"pages {pages} hold Stack + jslink widget state, but no slider sits next to what a Stack shows"
    assert with_image, "no static explorer shows an image (only HTML)"
    assert not failures, "\n".join(failures)
    print(f"{len(tested)} explorer sliders change what their explorer shows: {tested}")


def test_screenshots_of_key_pages(site, browser):
    """Full-page screenshots of three key pages: the start page, a page with an animation, one with an explorer."""
    picks = [site.pages[0]]
    for candidates in (site.with_marker(r'<div class="animation">'), site.with_marker(r'"_model_name": "StackModel"')):
        picks += [p for p in candidates if p not in picks][:1]
    picks += [p for p in site.pages if p not in picks][: 3 - len(picks)]
    SHOTS.mkdir(parents=True, exist_ok=True)
    for rel in picks:
        page, _ = _open(browser, _file_url(rel), ())
        try:
            _settle(page, site.html[rel])
            out = SHOTS / (rel.replace("/", "__").removesuffix(".html") + ".png")
            page.screenshot(path=str(out), full_page=True)
        finally:
            page.close()
        assert out.stat().st_size > 10_000, f"{out} looks empty"

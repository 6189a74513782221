"""Every page of the built site, opened once over file:// and once over http://127.0.0.1, and checked there for all a
page must be (issues 12, 13, 26). One test per page, so that pytest-xdist shares the pages between its workers, and
one load per page and scheme for all the checks (they used to load each page seven times, once per check; issue 19),
in one tab per scheme that goes from page to page (test_site.Tab). A redirect page (index.html) must land on its target.

From disk (file://), at 1280 px in light mode, then in dark mode, then at 390 px:
- offline-clean, nothing local missing, no console error (tests/test_site's request log, ``CONSOLE_ALLOW`` empty);
- MathJax has typeset every formula of a page with math;
- every figure has alt text saying what it shows (not its file path), and every control an accessible name
  (issue 26 item 5);
- every text in the page's outputs (cell outputs, HTML tables, checker reports, widget labels) reaches WCAG AA,
  4.5:1, against what it is drawn on, in light and in dark mode (item 3);
- at 1280 px and at 390 px the page does not scroll sideways and shows exactly one search control (items 2, 4);
- at 390 px every figure shrunk to the column opens at full size on a tap (item 4; a tap itself is tried in
  tests/test_site_reading.py).
Over http: offline-clean, nothing missing, no console error.

Like tests/test_site.py (whose fixtures it uses), it FAILS when there is no built site.
"""

from __future__ import annotations

import posixpath
import re

import pytest
from test_site import Tab, _file_url, _next_frame, _settle, browser, http_base, site, site_pages  # noqa: F401

#: The search controls a reader can see: the theme's search field (a button that opens the search dialog), its
#: header icon button, and the search page's own form. The dialog's form is hidden until opened.
_VISIBLE_SEARCH = """() => [...document.querySelectorAll(
        '.search-button-field, button.search-button, form.bd-search:not(.search-button__wrapper form)')]
    .filter(e => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
                   return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && !e.closest('[hidden]'); })
    .map(e => e.className)"""

#: Elements wider than the viewport that nothing clips (an ancestor with overflow other than visible inside the
#: viewport is a box that scrolls on its own, which is allowed).
_SIDEWAYS = """() => {
    const W = document.documentElement.clientWidth, out = [];
    for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        if (!(r.width && r.right > W + 1) || getComputedStyle(el).position === 'fixed') continue;
        let p = el.parentElement, clipped = false;
        while (p && p !== document.body) {
            const q = p.getBoundingClientRect(), s = getComputedStyle(p);
            if ((s.overflowX !== 'visible' && q.right <= W + 1) || s.position === 'fixed') { clipped = true; break; }
            p = p.parentElement;
        }
        const name = `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`;
        if (!clipped) out.push(`${name} to ${Math.round(r.right)} px`);
    }
    return {scroll: document.documentElement.scrollWidth, width: W, wide: out.slice(0, 3)};
}"""

#: WCAG 2 contrast of every piece of text in ``scope`` against the background it is drawn on (the first ancestor with
#: an opaque-enough background colour, alpha-blended down to the page's). Returns the worst few below ``minimum``.
CONTRAST = """([scope, minimum]) => {
    const parse = (c) => {
        const m = c.match(/rgba?\\(([^)]+)\\)/);
        if (!m) return null;
        const v = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
        return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
    };
    const lum = ([r, g, b]) => {
        const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
    function background(el) {
        const layers = [];
        for (let p = el; p; p = p.parentElement) {
            const c = parse(getComputedStyle(p).backgroundColor);
            if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
        }
        let bg = [255, 255, 255, 1];
        if (!layers.length || layers[layers.length - 1][3] < 1) {
            const page = parse(getComputedStyle(document.body).backgroundColor);
            if (page && page[3] > 0) bg = over(page, bg);
        }
        for (const c of layers.reverse()) bg = over(c, bg);
        return bg;
    }
    const found = [];
    let checked = 0;
    for (const el of document.querySelectorAll(scope)) {
        const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!own) continue;
        const r = el.getBoundingClientRect(), s = getComputedStyle(el);
        if (!r.width || !r.height || s.visibility === 'hidden' || +s.opacity === 0) continue;
        const svg = el instanceof SVGElement;
        let fg = parse(svg ? s.fill : s.color);
        if (!fg) continue;
        const bg = background(el);
        fg = over(fg, bg);
        const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        const ratio = (a + 0.05) / (b + 0.05);
        checked++;
        if (ratio < minimum) found.push([Math.round(ratio * 100) / 100, el.tagName.toLowerCase() + '.' +
            [...el.classList].join('.'), el.textContent.trim().slice(0, 40)]);
    }
    found.sort((x, y) => x[0] - y[0]);
    return {checked, found: found.slice(0, 5), failing: found.length};
}"""

_OUTPUT_TEXT = (".cell_output *, #lt-panel *, .bd-article table *, .widget-html-content *, .widget-label, "
                ".widget-readout, .ascend-search-note")

#: Every image and control of a page and the name a reader's assistive technology gets for it (alt for images;
#: aria-label, aria-labelledby, a <label>, the title or the text for controls).
_NAMES = """() => {
    const name = (el) => {
        if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
        const by = el.getAttribute('aria-labelledby');
        if (by) return by.split(/\\s+/).map(id => document.getElementById(id)?.textContent || '').join(' ').trim();
        if (el.labels && el.labels.length) return [...el.labels].map(l => l.textContent).join(' ').trim();
        return (el.getAttribute('title') || el.textContent || el.getAttribute('placeholder') || '').trim();
    };
    const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const images = [...document.querySelectorAll('.bd-article img')]
        .map(i => [i.getAttribute('alt'), i.src.slice(-40)]);
    const controls = [...document.querySelectorAll(['button', 'input', 'select', '[role=slider]', '[role=button]']
        .map(s => '.bd-article ' + s).join(', '))]
        .filter(shown).map(c => [name(c), c.tagName.toLowerCase() + '.' + [...c.classList].join('.')]);
    return {images, controls};
}"""

#: Formulas MathJax left as raw TeX.
_MATH = """() => { const math = [...document.querySelectorAll('.math')];
                   return {raw: math.filter(el => !el.querySelector('mjx-container')).length,
                           mjx: document.querySelectorAll('mjx-container').length}; }"""

#: Figures shrunk to the column that a tap does not open at full size.
_NOT_ZOOMABLE = """() => [...document.querySelectorAll('.bd-article img')]
    .filter(i => i.complete && i.naturalWidth > i.clientWidth + 1 && !i.closest('a')
                 && !i.classList.contains('ascend-zoomable'))
    .map(i => (i.getAttribute('alt') || i.src).slice(0, 60))"""


def _at_once(**scripts: str) -> str:
    """One page.evaluate for several measurements: ``{name: (script)(), ...}`` (the contrast one takes its args)."""
    calls = ", ".join(f"{name}: ({js})({'args' if name == 'contrast' else ''})" for name, js in scripts.items())
    return f"(args) => ({{{calls}}})"


_DESKTOP = _at_once(fit=_SIDEWAYS, search=_VISIBLE_SEARCH, names=_NAMES, contrast=CONTRAST, math=_MATH)
_DARK = _at_once(contrast=CONTRAST)
_PHONE = _at_once(fit=_SIDEWAYS, search=_VISIBLE_SEARCH, unzoomable=_NOT_ZOOMABLE)


def _article_images(html: str) -> int:
    """How many <img> the page's article holds as built (explorers and animations add theirs when drawn)."""
    article = re.search(r'<article class="bd-article".*?</article>', html, re.S)
    return article.group(0).count("<img") if article else 0


def _reading_problems(found: dict, width: int) -> list[str]:
    problems = []
    if found["fit"]["scroll"] > found["fit"]["width"]:
        problems.append(f"scrolls sideways at {width} px: {found['fit']}")
    if len(found["search"]) != 1:
        problems.append(f"{len(found['search'])} search controls at {width} px, not one: {found['search']}")
    return problems


def _name_problems(names: dict, html: str) -> list[str]:
    problems = [f"img {src}: alt {alt!r}" for alt, src in names["images"]
                if not alt or alt.strip().endswith((".png", ".jpg", ".svg")) or "_images/" in alt]
    problems += [f"{what} has no accessible name" for label, what in names["controls"] if not label]
    if len(names["images"]) < _article_images(html):
        problems.append(f"{len(names['images'])} images measured, the page has {_article_images(html)}")
    return problems


def _contrast_problems(contrast: dict, html: str, mode: str) -> list[str]:
    problems = [f"{contrast['failing']} texts below 4.5:1 in {mode} mode, the worst: {contrast['found']}"
                ] if contrast["failing"] else []
    if "cell_output" in html and 'class="output text_' in html and not contrast["checked"]:
        problems.append(f"no output text measured in {mode} mode")
    return problems


def _from_disk(tab: Tab, rel: str, html: str) -> list[str]:
    log, page = tab.open(_file_url(rel)), tab.page
    problems = []
    try:
        _settle(page, html)                                # Tab.open has put it in light mode at 1280 px
        _next_frame(page)                                  # book.js names the controls drawn last
        desktop = page.evaluate(_DESKTOP, [_OUTPUT_TEXT, 4.5])
        problems += _reading_problems(desktop, 1280) + _name_problems(desktop["names"], html)
        problems += _contrast_problems(desktop["contrast"], html, "light")
        if 'class="math' in html and (desktop["math"]["raw"] or not desktop["math"]["mjx"]):
            problems.append(f"MathJax did not typeset everything: {desktop['math']}")
        page.emulate_media(color_scheme="dark")
        page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'", timeout=10_000)
        _next_frame(page)
        problems += _contrast_problems(page.evaluate(_DARK, [_OUTPUT_TEXT, 4.5])["contrast"], html, "dark")
        page.set_viewport_size({"width": 390, "height": 900})
        _next_frame(page)
        phone = page.evaluate(_PHONE)
        problems += _reading_problems(phone, 390)
        if phone["unzoomable"]:
            problems.append(f"figures shrunk at 390 px that a tap does not open: {phone['unzoomable']}")
    except Exception as exc:  # a timeout waiting for MathJax/widgets is a finding, not a crash
        problems.append(f"page did not settle: {exc}")
    return problems + log.problems()


def _over_http(tab: Tab, base: str, rel: str, html: str) -> list[str]:
    log = tab.open(base + rel)
    problems = []
    try:
        _settle(tab.page, html)
    except Exception as exc:
        problems.append(f"page did not settle: {exc}")
    return problems + log.problems()


@pytest.fixture(scope="module")
def disk_tab(browser):  # noqa: F811
    """The tab every page is opened in from disk, one after another (see test_site.Tab)."""
    tab = Tab(browser)
    yield tab
    tab.page.close()


@pytest.fixture(scope="module")
def http_tab(browser, http_base):  # noqa: F811
    """The tab every page is opened in over http."""
    tab = Tab(browser, (http_base,))
    yield tab
    tab.page.close()


#: A page that only sends the reader on (the book's index.html: jupyter-book's 58-byte redirect to the first chapter).
_REDIRECT = re.compile(r'^\s*<meta http-equiv="Refresh" content="0; url=([^"]+)"\s*/?>\s*$', re.I)


def _redirect_problems(tab: Tab, url: str, target: str) -> list[str]:
    """Open a redirect page: the browser must land on the target, with nothing blocked, missing or in error."""
    log = tab.open(url)
    try:
        tab.page.wait_for_url(target, timeout=10_000)
    except Exception as exc:
        return [f"did not land on {target}: {exc}"] + log.problems()
    return log.problems()


@pytest.mark.parametrize("rel", site_pages())
def test_page(site, disk_tab, http_tab, http_base, rel):  # noqa: F811
    """One page, from disk (every check above) and over http (offline, nothing missing, no console error). A
    redirect page must land, from disk and over http, on a page of the site, which is checked by its own test."""
    assert rel in site.pages, f"{rel} is not in the built site"
    html = site.html[rel]
    if redirect := _REDIRECT.match(html):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), redirect.group(1)))
        assert target in site.pages, f"{rel} redirects to {target}, which is not a page of the site"
        problems = [f"file: {p}" for p in _redirect_problems(disk_tab, _file_url(rel), _file_url(target))]
        problems += [f"http: {p}" for p in _redirect_problems(http_tab, http_base + rel, http_base + target)]
    else:
        problems = [f"file: {p}" for p in _from_disk(disk_tab, rel, html)]
        problems += [f"http: {p}" for p in _over_http(http_tab, http_base, rel, html)]
    assert not problems, f"{rel}:\n  " + "\n  ".join(problems)

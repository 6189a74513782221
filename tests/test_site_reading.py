"""Browser tests of how the built site reads (issue 26), the parts that are not one check per page: search (from disk
and over http, title matches first), a figure opened at full size on a phone and the timeline's full-window view,
the live panel's contrast over http, and the glossary's Chinese terms. tests/test_site_pages.py checks every page
(width, one search field, contrast, names, zoomable figures).

Like tests/test_site.py (whose fixtures it uses: the built site, Debian's Chromium, the loopback server, the
request log), it FAILS when there is no built site.
"""

from __future__ import annotations

import json
import re

import pytest
from test_site import SITE, _file_url, _open, _settle, browser, http_base, site  # noqa: F401  (fixtures)
from test_site_pages import CONTRAST


def _search(page) -> dict:
    """Wait for the search page to have listed its results (and, where it fetches them, every excerpt)."""
    page.wait_for_function("() => /Search finished/.test(document.querySelector('#search-results')?.textContent)",
                           timeout=30_000)
    page.wait_for_function("() => !DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY || [...document.querySelectorAll("
                           "'#search-results li')].every(li => li.querySelector('p.context, span'))", timeout=30_000)
    return page.evaluate("""() => ({
        results: document.querySelectorAll('#search-results li').length,
        excerpts: document.querySelectorAll('#search-results li p.context').length,
        links: [...document.querySelectorAll('#search-results li > a')].map(a => a.getAttribute('href')),
        note: document.querySelector('.ascend-search-note')?.textContent || ''})""")


def test_search_over_http_and_from_disk(site, browser, http_base):  # noqa: F811
    """Issue 26 item 2: search works over http with an excerpt per result; from disk (file://) it lists the results
    without a console error (browsers refuse the page fetches excerpts need there) and says so."""
    page, log = _open(browser, http_base + "search.html?q=tiling", (http_base,))
    try:
        over_http = _search(page)
    finally:
        page.close()
    assert not log.problems(), log.problems()
    assert over_http["results"] >= 5 and over_http["excerpts"] == over_http["results"], over_http
    assert not over_http["note"]
    page, log = _open(browser, _file_url("search.html") + "?q=tiling", ())
    try:
        from_disk = _search(page)
    finally:
        page.close()
    assert not log.problems(), log.problems()
    assert from_disk["results"] == over_http["results"], (from_disk, over_http)
    assert "file://" in from_disk["note"] and "excerpt" in from_disk["note"], from_disk


def _titles_with(word: str) -> set[str]:
    """The pages (``chapters/x.html``) whose title holds ``word`` as Sphinx's search reads words (stemmed: "tiling"
    and "tile" are one word), from the site's own search index."""
    from sphinx.search.en import SearchEnglish

    stem = SearchEnglish({}).stem
    text = (SITE / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    return {f"{doc}.html" for doc, title in zip(index["docnames"], index["titles"], strict=True)
            if stem(word.lower()) in {stem(w.lower()) for w in re.findall(r"\w+", title)}}


@pytest.mark.parametrize("word", ["tiling", "glossary"])
def test_search_ranks_title_matches_first(site, browser, http_base, word):  # noqa: F811
    """Issue 26 item 2: the pages whose title holds the query come first ("Tiling HardSigmoidGrad" was 16th of 32 for
    "tiling": Sphinx scores a title match by how much of the title the query covers)."""
    titled = _titles_with(word)
    assert titled, f"no page title holds {word!r}"
    page, log = _open(browser, http_base + f"search.html?q={word}", (http_base,))
    try:
        found = _search(page)
    finally:
        page.close()
    assert not log.problems(), log.problems()
    first = found["links"][:len(titled)]
    assert set(first) == titled, f"for {word!r} the first results are {first}; the pages titled so: {sorted(titled)}"
    assert len(found["links"]) > len(titled), found["links"]       # and the other matches follow


def _tap_a_shrunk_figure(page, selector: str) -> None:
    """Tap the first figure matching ``selector`` that is shown smaller than it is: it opens at full size in a layer,
    which Escape closes."""
    shrunk = page.evaluate("""(sel) => [...document.querySelectorAll(sel)]
                              .findIndex(i => i.complete && i.naturalWidth > i.clientWidth + 1)""", selector)
    assert shrunk >= 0, f"no figure {selector} is shrunk at 390 px"
    img = page.locator(selector).nth(shrunk)
    img.scroll_into_view_if_needed()
    img.click()
    zoomed = page.locator(".ascend-zoom img")
    assert zoomed.count() == 1 and zoomed.get_attribute("src") == img.get_attribute("src")
    assert zoomed.evaluate("i => i.getBoundingClientRect().width") >= zoomed.evaluate("i => i.naturalWidth") - 1
    page.keyboard.press("Escape")
    assert page.locator(".ascend-zoom").count() == 0


def test_phone_figures_and_timeline_open_full_size(site, browser):  # noqa: F811
    """Issue 26 item 4: on a 390 px phone a figure shrunk to the column opens at full size on a tap (Escape closes
    it) -- a figure of a page, and the frame an explorer draws after the page loads --, and the timeline viewer has a
    button that gives it the whole window."""
    rel = next(p for p in site.pages if 'class="ascend-lab-timeline-figure"' in site.html[p])
    page, log = _open(browser, _file_url(rel), ())
    try:
        page.set_viewport_size({"width": 390, "height": 800})
        _settle(page, site.html[rel])
        _tap_a_shrunk_figure(page, ".bd-article .cell_output img.ascend-zoomable")
        button = page.locator(".ascend-timeline-full-button").first
        button.scroll_into_view_if_needed()
        before = page.locator("iframe.ascend-lab-timeline").first.bounding_box()
        button.click()
        after = page.locator("iframe.ascend-lab-timeline").first.bounding_box()
        assert after["height"] > before["height"] and after["width"] > before["width"] >= 300, (before, after)
        assert after["height"] >= 700 and after["y"] >= 0, after
        assert button.get_attribute("aria-pressed") == "true"
        page.keyboard.press("Escape")
        assert page.locator("iframe.ascend-lab-timeline").first.bounding_box()["height"] == before["height"]
    finally:
        page.close()
    assert not log.problems(), log.problems()
    rel = next(p for p in site.with_marker(r'"_model_name": "StackModel"')
               if '"_model_name": "ImageModel"' in site.html[p])
    page, log = _open(browser, _file_url(rel), ())
    try:
        page.set_viewport_size({"width": 390, "height": 800})
        _settle(page, site.html[rel])
        _tap_a_shrunk_figure(page, ".bd-article img.widget-image.ascend-zoomable")
    finally:
        page.close()
    assert not log.problems(), log.problems()


def test_live_panel_contrast_over_http(site, browser, http_base):  # noqa: F811
    """Issue 26 item 3: the live tiling panel, drawn over http once pyodide runs, reaches WCAG AA (4.5:1) in light and
    in dark mode (tests/test_site_pages.py measures every page's outputs from disk)."""
    rel = "chapters/075_live_tiling.html"
    page, log = _open(browser, http_base + rel, (http_base,))
    measured = {}
    try:
        for mode in ("light", "dark"):
            page.emulate_media(color_scheme=mode)
            page.wait_for_function("(mode) => document.documentElement.dataset.theme === mode", arg=mode)
            _settle(page, site.html[rel])
            assert page.get_attribute("#lt-panel", "data-state") == "ready", page.inner_text("#lt-status")
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            measured[mode] = page.evaluate(CONTRAST, ["#lt-panel *", 4.5])
    finally:
        page.close()
    assert not log.problems(), log.problems()
    assert all(m["checked"] > 20 for m in measured.values()), measured
    assert not any(m["failing"] for m in measured.values()), f"live panel text below 4.5:1: {measured}"


def test_chinese_terms_marked_and_font(site, browser):  # noqa: F811
    """Issue 26 item 8: the glossary's Chinese terms carry lang="zh-Hans", and the CSS font stack names a CJK font
    the site can rely on (fonts-wqy-zenhei, which `make test` installs with Chromium), which renders them."""
    rel = "chapters/90_glossary.html"
    assert site.html[rel].count('lang="zh-Hans"') >= 30
    page, log = _open(browser, _file_url(rel), ())
    try:
        _settle(page, site.html[rel])
        info = page.evaluate("""() => {
            const terms = [...document.querySelectorAll('.bd-article [lang="zh-Hans"]')];
            return {count: terms.length, family: getComputedStyle(terms[0]).fontFamily,
                    body: getComputedStyle(document.body).fontFamily,
                    unmarked: [...document.querySelectorAll('.bd-article td')].filter(td =>
                        /[\\u3400-\\u9fff]/.test(td.textContent) && !td.querySelector('[lang="zh-Hans"]')
                        && !td.closest('[lang="zh-Hans"]')).length};
        }""")
        rendered = page.evaluate("() => document.fonts.check('16px \"WenQuanYi Zen Hei\"', '算子')")
    finally:
        page.close()
    assert not log.problems(), log.problems()
    assert info["count"] >= 30 and info["unmarked"] == 0, info
    assert info["family"].startswith('"WenQuanYi Zen Hei"') and "WenQuanYi Zen Hei" in info["body"], info
    assert rendered

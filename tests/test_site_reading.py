"""Browser tests of how the built site reads (issue 26): one search field per page and search that works from disk
and over http; no page scrolls sideways at a desktop or a phone width.

Like tests/test_site.py (whose fixtures it uses: the built site, Debian's Chromium, the loopback server, the
request log), it FAILS when there is no built site.
"""

from __future__ import annotations

import pytest
from test_site import _file_url, _open, _settle, browser, http_base, site  # noqa: F401  (pytest fixtures)

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


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_fits_and_has_one_search_field(site, browser, width):  # noqa: F811
    """Issue 26 items 2 and 4: at 1280 px and at 390 px no page scrolls sideways (wide tables and code scroll in their
    own box, long inline code wraps), and every page shows exactly one search control."""
    sideways, searches = {}, {}
    for rel in site.pages:
        page, log = _open(browser, _file_url(rel), ())
        try:
            page.set_viewport_size({"width": width, "height": 900})
            _settle(page, site.html[rel])
            page.wait_for_timeout(200)
            fit = page.evaluate(_SIDEWAYS)
            shown = page.evaluate(_VISIBLE_SEARCH)
        finally:
            page.close()
        if fit["scroll"] > fit["width"]:
            sideways[rel] = fit
        if len(shown) != 1:
            searches[rel] = shown
    assert not sideways, f"{len(sideways)} of {len(site.pages)} pages scroll sideways at {width} px: {sideways}"
    assert not searches, f"pages without exactly one search control at {width} px: {searches}"
    print(f"{len(site.pages)} pages at {width} px: none scrolls sideways, one search control each")


def _search(page) -> dict:
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0 && "
                           "!document.querySelector('#search-progress')?.textContent.includes('Preparing')",
                           timeout=30_000)
    page.wait_for_timeout(1500)                 # excerpts arrive after the list
    return page.evaluate("""() => ({
        results: document.querySelectorAll('#search-results li').length,
        excerpts: document.querySelectorAll('#search-results li p.context').length,
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


def test_phone_figures_and_timeline_open_full_size(site, browser):  # noqa: F811
    """Issue 26 item 4: on a 390 px phone a figure shrunk to the column opens at full size on a tap (Escape closes
    it), and the timeline viewer has a button that gives it the whole window."""
    rel = next(p for p in site.pages if 'class="ascend-lab-timeline-figure"' in site.html[p])
    page, log = _open(browser, _file_url(rel), ())
    try:
        page.set_viewport_size({"width": 390, "height": 800})
        _settle(page, site.html[rel])
        shrunk = page.evaluate("""() => [...document.querySelectorAll('.bd-article img.ascend-zoomable')]
                                  .findIndex(i => i.complete && i.naturalWidth > i.clientWidth + 1)""")
        assert shrunk >= 0, f"{rel}: no figure is shrunk at 390 px"
        img = page.locator(".bd-article img.ascend-zoomable").nth(shrunk)
        img.scroll_into_view_if_needed()
        img.click()
        zoomed = page.locator(".ascend-zoom img")
        assert zoomed.count() == 1
        assert zoomed.evaluate("i => i.getBoundingClientRect().width") >= zoomed.evaluate("i => i.naturalWidth") - 1
        page.keyboard.press("Escape")
        assert page.locator(".ascend-zoom").count() == 0
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

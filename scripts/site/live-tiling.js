// Live tiling (chapter "Live tiling"): ascend_lab's own host tiling, run in the reader's browser by pyodide.
//
// The page has <div id="lt-panel"> with the controls; this script (a classic script, so that nothing is
// fetched over file://, where Chromium refuses WebAssembly modules) loads the vendored pyodide core from
// _static/pyodide/, unpacks _static/live-tiling/ascend_lab_live.zip (the package's numpy-free tiling modules,
// built from the source at book build) and calls ascend_lab.live.live_tiling.compute on every change of an input.
// Nothing is requested from another host. Over file:// it only says why the live panel is off.
(function () {
  "use strict";
  const root = document.getElementById("lt-panel");
  if (!root) return;
  const script = document.currentScript;
  const staticBase = new URL(".", script ? script.src : document.baseURI);
  const $ = (sel) => root.querySelector(sel);
  const status = $("#lt-status");
  const t0 = performance.now();

  function say(text, cls) {
    status.textContent = text;
    status.className = "lt-status " + (cls || "");
  }

  if (location.protocol === "file:") {
    root.dataset.state = "file";
    say("The live panel is off: this page was opened from disk (file://). It runs Python compiled to " +
        "WebAssembly (pyodide) in your browser, and browsers load WebAssembly and module scripts only from a " +
        "web server. Serve the site (for example `python -m http.server -d _build/html`, then open " +
        "http://127.0.0.1:8000/chapters/075_live_tiling.html) and reload; meanwhile the precomputed explorer " +
        "below shows the same tilings for a few fixed inputs.", "lt-off");
    return;
  }

  const PY_SETUP = `
import json, runpy
runpy.run_path("/home/pyodide/live/ascend_lab/live/live_boot.py")["install"]("/home/pyodide/live")
from ascend_lab.live import live_tiling
FACTS = json.loads(FACTS_TEXT)

def _count(text, what):
    text = str(text).strip().replace("_", "").replace(",", "")
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be a whole number, got {text!r}") from None

SAFE = 2**53 - 1          # JavaScript numbers hold integers exactly up to here; larger ones cross as strings

def _exact(v):
    if isinstance(v, bool) or v is None or isinstance(v, (float, str)):
        return v
    if isinstance(v, int):
        return v if -SAFE <= v <= SAFE else str(v)
    if isinstance(v, dict):
        return {k: _exact(x) for k, x in v.items()}
    return [_exact(x) for x in v]

def live(args_json):
    a = json.loads(args_json)
    try:
        n = _count(a["n"], "the element count")
        if n is None:
            raise ValueError("type an element count")
        r = live_tiling.compute(FACTS, a["op"], n, a["dtype"], a["soc"], _count(a["core_num"], "the core count"),
                                _count(a["ub_size"], "the UB size"), a["kernel"] or None)
        r["fields"] = {k: (repr(v) if isinstance(v, float) else v) for k, v in r["fields"].items()}
        return json.dumps({"ok": _exact(r)})
    except Exception as exc:
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"})
`;

  let facts = null;
  let live = null;

  function option(sel, value, text) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    sel.appendChild(o);
  }

  function fillMenus() {
    const opSel = $("#lt-op"), socSel = $("#lt-soc"), dtSel = $("#lt-dtype");
    for (const op of facts.ops) option(opSel, op.key, `${op.op_type} (${op.key})`);
    for (const s of facts.socs) option(socSel, s.name, `${s.name} (${s.vector_core_num} vector cores, ` +
                                                       `UB ${s.ub_size} B)`);
    for (const d of facts.dtypes) option(dtSel, d, d);
    socSel.value = "Ascend910B4";
    dtSel.value = "float16";
    fillKernels();
  }

  function fillKernels() {
    const op = facts.ops.find((o) => o.key === $("#lt-op").value);
    const kSel = $("#lt-kernel");
    const keep = kSel.value;
    kSel.textContent = "";
    option(kSel, "", "the one a stock CANN runs on this SoC");
    for (const k of op.kernels) option(kSel, k.flavour, `${k.flavour} (registered for ${k.socs.join(", ")})`);
    kSel.value = op.kernels.some((k) => k.flavour === keep) ? keep : "";
  }

  function cell(tr, text, attrs) {
    const td = document.createElement("td");
    td.textContent = text;
    for (const [k, v] of Object.entries(attrs || {})) td.setAttribute(k, v);
    tr.appendChild(td);
  }

  // Every piece of the result is built off-page and put in with one replaceChildren: the theme's Font Awesome
  // script watches the document and rescans the parent of every inserted node, so appending a chart node by
  // node costs O(n^2) (minutes for a large core count); one insertion costs one scan.
  function renderFields(r) {
    const rows = document.createDocumentFragment();
    for (const [name, value] of Object.entries(r.fields)) {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.textContent = name;
      th.scope = "row";
      tr.appendChild(th);
      cell(tr, String(value), {"data-field": name});
      rows.appendChild(tr);
    }
    $("#lt-fields tbody").replaceChildren(rows);
    $("#lt-struct").textContent = `${r.struct} (${r.size} bytes), blockDim and tilingKey beside it`;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  // Integers past 2^53 arrive as strings (PY_SETUP's _exact): BigInt for exact text, Number for geometry.
  const big = (v) => BigInt(v);
  const exact = (v) => big(v).toLocaleString("en");

  function renderCores(r) {
    const box = $("#lt-cores");
    const rows = r.rows;
    const totalBig = rows.reduce((m, c) => { const e = big(c.offset) + big(c.data_num); return e > m ? e : m; }, 1n);
    const total = Number(totalBig);
    const width = 760, left = 64, barH = rows.length > 40 ? 6 : 14, gap = rows.length > 40 ? 2 : 4;
    const height = rows.length * (barH + gap) + 24;
    const kinds = new Set(rows.map((c) => c.kind));
    const svg = el("svg", {width: width, height: height, viewBox: `0 0 ${width} ${height}`, role: "img",
                           id: "lt-svg",
                           "aria-label": `per-core assignment: ${exact(r.n)} ${r.dtype} elements on ${rows.length} ` +
                                         `core${rows.length === 1 ? "" : "s"} (${[...kinds].join(" and ")}), ` +
                                         `${r.kernel} kernel`});
    const scale = (x) => left + (width - left - 8) * Number(x) / total;
    const segs = r.segments || [];
    rows.forEach((c, i) => {
      const y = 4 + i * (barH + gap);
      const g = el("g", {"data-core": c.core, "data-offset": c.offset, "data-count": c.data_num,
                         "data-tiles": c.tile_num}, svg);
      if (barH >= 10 || i % 8 === 0) {
        const t = el("text", {x: left - 6, y: y + barH - 2, "text-anchor": "end", class: "lt-label"}, g);
        t.textContent = `core ${c.core}`;
      }
      const rect = el("rect", {x: scale(c.offset), y: y, height: barH,
                               width: Math.max(1, scale(c.offset + c.data_num) - scale(c.offset)),
                               class: c.kind === "big" ? "lt-big" : "lt-small"}, g);
      const tip = el("title", {}, rect);
      tip.textContent = `core ${c.core} (${c.kind}): elements [${c.offset}, ${big(c.offset) + big(c.data_num)}), ` +
                        `${c.tile_num} tile(s), last ${c.tail}, ${c.bytes} B`;
    });
    // tile boundaries and tail tiles from the tile map's segments (live.tile_map, as the matplotlib figure)
    if (segs.length && segs.length <= 4000) {
      const byCore = new Map(rows.map((c, i) => [c.core, i]));
      for (const [core, , start, end, tail] of segs) {
        const i = byCore.get(core);
        if (i === undefined) continue;
        const y = 4 + i * (barH + gap);
        if (tail) el("rect", {x: scale(start), y: y, height: barH, width: Math.max(1, scale(end) - scale(start)),
                             class: "lt-tail"}, svg);
        el("line", {x1: scale(start), x2: scale(start), y1: y, y2: y + barH, class: "lt-tile"}, svg);
      }
    }
    const axis = el("text", {x: left, y: height - 4, class: "lt-label"}, svg);
    axis.textContent = `element 0 … ${totalBig.toLocaleString("en")}`;
    box.replaceChildren(svg);                        // the one insertion into the page
    $("#lt-title").textContent = r.title || `${rows.length} cores (too many tiles to list each one)`;
    const items = document.createDocumentFragment();
    for (const key of ["big", "small", "tail", "padding"]) {
      const text = r.labels && r.labels[key];
      if (!text) continue;
      const li = document.createElement("li");
      li.className = "lt-key-" + key;
      li.textContent = text;
      items.appendChild(li);
    }
    $("#lt-legend").replaceChildren(items);
  }

  // The form's own check, before Python: at most facts.max_cores cores (the notebook explorer's cap), so that
  // every chart the panel draws stays small. Returns the message, or "".
  function formError(args) {
    const cores = String(args.core_num).trim().replace(/[_,]/g, "");
    const cap = facts.max_cores;
    if (cap && /^\d+$/.test(cores) && BigInt(cores) > BigInt(cap)) {
      return `ValueError: the core count is at most ${cap} here (the cap of the notebook explorer); got ${cores}`;
    }
    return "";
  }

  function showError(text) {
    root.dataset.error = text;
    $("#lt-error").textContent = text;
    $("#lt-cores-n").setAttribute("aria-invalid", String(text.includes("core count")));
    $("#lt-result").hidden = true;
  }

  function update() {
    if (!live) return;
    const args = {op: $("#lt-op").value, kernel: $("#lt-kernel").value, dtype: $("#lt-dtype").value,
                  soc: $("#lt-soc").value, n: $("#lt-n").value, core_num: $("#lt-cores-n").value,
                  ub_size: $("#lt-ub").value};
    const t = performance.now();
    const refused = formError(args);
    const out = refused ? {error: refused} : JSON.parse(live(JSON.stringify(args)));
    const ms = performance.now() - t;
    if (out.error) {
      showError(out.error);
      root.dataset.updateMs = (performance.now() - t).toFixed(1);
      root.dataset.updates = String(Number(root.dataset.updates || 0) + 1);
      return;
    }
    $("#lt-cores-n").setAttribute("aria-invalid", "false");
    delete root.dataset.error;
    $("#lt-error").textContent = "";
    $("#lt-result").hidden = false;
    const r = out.ok;
    const why = r.kernel === r.default_kernel ? "the one a stock CANN runs here" : "chosen in the menu";
    $("#lt-which").textContent = `${r.op}, ${r.kernel} kernel (${why}${r.registered ? "" :
      "; its op definition does NOT register it for this SoC: a what-if"}), ${r.core_num} cores, ` +
      `UB ${r.ub_size} B — computed in ${ms.toFixed(1)} ms by ascend_lab.live.live_tiling in this page`;
    renderFields(r);
    renderCores(r);
    root.dataset.updateMs = (performance.now() - t).toFixed(1);
    root.dataset.updates = String(Number(root.dataset.updates || 0) + 1);
  }

  // pyodide from the memory snapshot scripts/vendor_pyodide.sh made (CPython already initialised: a fraction of
  // the start-up time), or, should that fail, started the ordinary way.
  async function startPyodide() {
    const indexURL = new URL("pyodide/", staticBase).href;
    try {
      const resp = await fetch(new URL("pyodide/snapshot.bin.gz", staticBase));
      if (!resp.ok) throw new Error(`snapshot: HTTP ${resp.status}`);
      const snapshot = new Response(resp.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
      const py = await window.loadPyodide({indexURL, _loadSnapshot: snapshot});
      root.dataset.snapshot = "1";
      return py;
    } catch (exc) {
      console.warn(`live tiling: starting pyodide without its snapshot (${exc})`);
      return window.loadPyodide({indexURL});
    }
  }

  async function start() {
    root.dataset.state = "loading";
    say("Starting Python in this page (pyodide) …", "lt-loading");
    try {
      const [py, zip, factsText] = await Promise.all([
        startPyodide(),
        fetch(new URL("live-tiling/ascend_lab_live.zip", staticBase)).then((r) => r.arrayBuffer()),
        fetch(new URL("live-tiling/facts.json", staticBase)).then((r) => r.text()),
      ]);
      py.unpackArchive(zip, "zip", {extractDir: "/home/pyodide/live"});
      py.globals.set("FACTS_TEXT", factsText);
      py.runPython(PY_SETUP);
      live = py.globals.get("live");
      facts = JSON.parse(factsText);
      fillMenus();
      for (const id of ["#lt-n", "#lt-cores-n", "#lt-ub"]) $(id).addEventListener("input", update);
      for (const id of ["#lt-dtype", "#lt-soc", "#lt-kernel"]) $(id).addEventListener("change", update);
      $("#lt-op").addEventListener("change", () => { fillKernels(); update(); });
      $("#lt-controls").hidden = false;
      update();
      const ms = performance.now() - t0;
      root.dataset.startupMs = ms.toFixed(0);
      root.dataset.state = "ready";
      say(`Python ${py.version ? "(pyodide " + py.version + ") " : ""}started in ${(ms / 1000).toFixed(1)} s; ` +
          "every change below runs the package's tiling code again.", "lt-ready");
    } catch (exc) {
      root.dataset.state = "failed";
      say(`The live panel could not start (${exc}); the precomputed explorer below still works.`, "lt-off");
    }
  }

  const loader = document.createElement("script");
  loader.src = new URL("pyodide/pyodide.js", staticBase).href;
  loader.onload = start;
  loader.onerror = () => say("The live panel could not load pyodide; the precomputed explorer below still works.",
                             "lt-off");
  document.head.appendChild(loader);
})();

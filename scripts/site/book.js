// Site-wide script for the book (issue 26), added to every page by html_js_files in _config.yml (served from
// scripts/site). A classic script in <head>: it runs before the theme's deferred scripts and Sphinx's search.
(function () {
  "use strict";
  const html = document.documentElement;

  // The theme reads the reader's mode from localStorage; a fresh browser has none, and the theme logged
  // "Got invalid theme mode" on every page. Start from "auto" (follow the system), as the theme's button does.
  if (!["light", "dark", "auto"].includes(html.dataset.mode)) html.dataset.mode = "auto";

  // Search opened from disk: Sphinx fetches each result page for its excerpt, which browsers refuse over file://
  // (one console error per result). Show titles only there, and say so on the search page.
  const fromDisk = location.protocol === "file:";
  // (documentation_options.js declares it with const: a global binding, not a property of window)
  // eslint-disable-next-line no-undef
  if (fromDisk && typeof DOCUMENTATION_OPTIONS !== "undefined") DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;

  function whenReady(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else fn();
  }

  // Accessible names the widgets and buttons do not bring themselves: an explorer's frame image takes its title
  // (viz.static_slider: "precomputed frame for N = ..."), a slider handle the label of its slider, the copy button
  // of a code cell "Copy the code". The widgets are drawn after the page loads, so this runs again as they appear.
  function nameControls(root) {
    root.querySelectorAll("img.widget-image").forEach(function (img) {
      // an explorer's frame: what its sliders say now (the hidden frames of a Stack are not read out)
      let box = img.parentElement;
      while (box && !box.querySelector(".widget-slider") && box !== document.body) box = box.parentElement;
      const sliders = box && box !== document.body ? [...box.querySelectorAll(".widget-slider")] : [];
      const state = sliders.map(function (s) {
        const label = s.querySelector(".widget-label"), value = s.querySelector(".widget-readout");
        return `${label ? label.textContent.trim() : "value"} = ${value ? value.textContent.trim() : "?"}`;
      }).join(", ");
      const alt = state ? `Precomputed explorer frame for ${state}` : "Precomputed frame of an explorer";
      if (img.alt !== alt) img.alt = alt;
    });
    root.querySelectorAll(".widget-slider .noUi-handle:not([aria-label])").forEach(function (handle) {
      const slider = handle.closest(".widget-slider");
      const label = slider && slider.querySelector(".widget-label");
      const text = label ? label.textContent.trim() : "";
      handle.setAttribute("aria-label", text || "slider");
    });
    root.querySelectorAll(".animation input.anim-slider:not([aria-label])").forEach(function (input) {
      input.setAttribute("aria-label", "Frame of the animation");
    });
    root.querySelectorAll("button.copybtn:not([aria-label])").forEach(function (b) {
      b.setAttribute("aria-label", "Copy the code");
    });
    // every figure of the article opens at full size on a tap (a linked image keeps its link)
    root.querySelectorAll(".bd-article img:not(.ascend-zoomable)").forEach(function (img) {
      if (!img.closest("a, .ascend-zoom")) img.classList.add("ascend-zoomable");
    });
  }
  let pending = false;
  // (readouts change as a slider moves: characterData; the watcher stays on, each round runs once per frame)
  const watcher = new MutationObserver(function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; nameControls(document); });
  });

  whenReady(function () {
    nameControls(document);
    watcher.observe(document.body, {childList: true, subtree: true, characterData: true});
    const results = document.getElementById("search-results");
    if (fromDisk && results) {
      const note = document.createElement("p");
      note.className = "ascend-search-note";
      note.textContent = "Opened from disk (file://): the results list page titles only. Serve the site " +
        "(python -m http.server -d _build/html) to see an excerpt of each page.";
      results.parentNode.insertBefore(note, results);
    }
    // The timeline viewer: a button that gives it the whole window (its tracks get ~70 px on a phone otherwise).
    document.querySelectorAll(".ascend-lab-timeline-figure").forEach(function (fig) {
      const frame = fig.querySelector("iframe.ascend-lab-timeline");
      if (!frame) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "ascend-timeline-full-button";
      const label = function () {
        const full = fig.classList.contains("ascend-timeline-full");
        button.textContent = full ? "Close the full-window view (Esc)" : "Full-window view";
        button.setAttribute("aria-pressed", String(full));
      };
      const toggle = function (on) { fig.classList.toggle("ascend-timeline-full", on); label(); };
      button.addEventListener("click", function () { toggle(!fig.classList.contains("ascend-timeline-full")); });
      document.addEventListener("keydown", function (e) { if (e.key === "Escape") toggle(false); });
      label();
      fig.insertBefore(button, fig.firstChild);
    });
    // Figures on a narrow screen: a tap opens the picture at full size; another tap (or Escape) closes it. One
    // listener for the whole article, so the figures of explorers and animations, drawn after the page loads, open
    // too (nameControls marks them zoomable as they appear).
    document.addEventListener("click", function (event) {
      const img = event.target instanceof HTMLImageElement ? event.target : null;
      if (!img || !img.classList.contains("ascend-zoomable")) return;
      if (img.naturalWidth <= img.clientWidth + 1) return;        // already shown at full size
      const layer = document.createElement("div");
      layer.className = "ascend-zoom";
      layer.setAttribute("role", "dialog");
      layer.setAttribute("aria-label", (img.alt || "figure") + " (full size; tap or press Escape to close)");
      layer.tabIndex = -1;
      const big = img.cloneNode(false);
      big.classList.remove("ascend-zoomable");
      layer.appendChild(big);
      const close = function () { layer.remove(); document.removeEventListener("keydown", onKey); };
      const onKey = function (e) { if (e.key === "Escape") close(); };
      layer.addEventListener("click", close);
      document.addEventListener("keydown", onKey);
      document.body.appendChild(layer);
      layer.focus();
    });
  });
})();

/* Let the ipywidgets html-manager typeset widget labels with MathJax 3.
 *
 * @jupyter-widgets/html-manager 1.0.x (ipywidgets 8) still calls the MathJax 2 API,
 * `MathJax.Hub.Queue(["Typeset", MathJax.Hub, element])`, whenever window.MathJax exists. The site serves
 * MathJax 3, which has no `Hub`, so every widget with a description threw
 * "Cannot read properties of undefined (reading 'Queue')". This maps that call onto MathJax 3's
 * typesetPromise. Served from the site (html_static_path), added to every page by html_js_files in _config.yml.
 */
(function () {
  "use strict";
  function typeset(element) {
    var MJ = window.MathJax;
    var ready = MJ.startup && MJ.startup.promise ? MJ.startup.promise : Promise.resolve();
    ready
      .then(function () {
        return MJ.typesetPromise ? MJ.typesetPromise(element ? [element] : undefined) : null;
      })
      .catch(function (err) {
        console.warn("MathJax typeset of a widget failed:", err);
      });
  }
  function install() {
    var MJ = window.MathJax;
    if (!MJ || MJ.Hub || !MJ.version || String(MJ.version).charAt(0) !== "3") return;
    MJ.Hub = {
      Queue: function () {
        for (var i = 0; i < arguments.length; i++) {
          var cmd = arguments[i];
          if (Array.isArray(cmd) && cmd[0] === "Typeset") typeset(cmd[2]);
        }
      },
    };
  }
  // MathJax is loaded with `defer`; deferred scripts have all run by DOMContentLoaded, and the widget
  // manager renders on window "load", which comes later.
  install();
  document.addEventListener("DOMContentLoaded", install);
})();

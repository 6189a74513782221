// Search ranking for the book (issue 26 item 2): a page whose title holds every word of the query comes first.
// Sphinx inlines this file into language_data.js (html_search_scorer, set by ascend_lab.book.sphinx_site), which
// every page loads after searchtools.js, so Sphinx's own Scorer (its weights untouched) is there to extend.
// Sphinx ranks a title match by how much of the title the query covers: "tiling" against "Tiling HardSigmoidGrad"
// scored below a dozen API entries and section titles (16th of 32 results).
// (A statement that starts with a keyword: Sphinx puts this file right after the stemmer's code, with or without a
// semicolon, where a leading "(" would call whatever that code ended with.)
if (typeof Scorer !== "undefined" && typeof Search !== "undefined") {
  Scorer.score = (function () {
    "use strict";
    // above any score Sphinx gives (an object's best is about 26); among themselves title matches keep Sphinx's order
    const TITLE_BOOST = 100;
    // the words of a text as Sphinx's search reads a query (Search._parseQuery, which would also overwrite the
    // terms a result page highlights): split, lower case, stop words and numbers dropped, stemmed
    const stems = function (text) {
      const stemmer = new Stemmer(), out = new Set();
      splitQuery(text.trim()).forEach(function (term) {
        const lower = term.toLowerCase();
        if (stopwords.indexOf(lower) !== -1 || /^\d+$/.test(lower)) return;
        const word = stemmer.stemWord(lower);
        if (word[0] !== "-") out.add(word);
      });
      return out;
    };
    const pageStems = new Map();
    let query = null, queryStems = new Set();

    return function (result) {
      const [docname, , anchor, , score] = result;
      if (anchor) return score;              // a section or an API entry: ranked as Sphinx ranks it
      const q = new URLSearchParams(window.location.search).get("q") || "";
      if (q !== query) { query = q; queryStems = stems(q); }
      const i = Search._index.docnames.indexOf(docname);
      if (i < 0 || queryStems.size === 0) return score;
      if (!pageStems.has(i)) pageStems.set(i, stems(Search._index.titles[i]));
      const title = pageStems.get(i);
      return [...queryStems].every(function (s) { return title.has(s); }) ? score + TITLE_BOOST : score;
    };
  })();
}

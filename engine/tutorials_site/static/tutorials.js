// Small behaviours of every page; deferred, so the page is parsed when this runs.

// Opened from disk (file://), a browser refuses the request Sphinx's search makes for each result's summary
// (an error in the console each): results show titles alone there; served (`make serve`), with summaries.
if (location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}

// Remember the language a reader picks in the switcher; the site's root index.html reads it.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-language]");
  if (link) {
    try { localStorage.setItem("tutorials-language", link.dataset.language); } catch (e) { /* storage off */ }
  }
});

// A code or output block larger than its box (wider than the screen, or an output longer than
// sphinx-gallery's maximum height) scrolls inside itself; a keyboard reader reaches it, and scrolls
// it with the arrow keys, only if it can take the focus.
for (const pre of document.querySelectorAll(".rst-content pre, [role=main] pre")) {
  if (pre.scrollWidth > pre.clientWidth || pre.scrollHeight > pre.clientHeight) pre.tabIndex = 0;
}

// Remember the language a reader picks in the switcher; the site's root index.html reads it.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-language]");
  if (link) {
    try { localStorage.setItem("tutorials-language", link.dataset.language); } catch (e) { /* storage off */ }
  }
});

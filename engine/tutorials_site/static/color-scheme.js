// The colour scheme picker in the footer. Auto follows the system; Light and Dark are remembered
// for every page (the script in _templates/layout.html applies them before a page's first paint)
// by data-color-scheme on <html>, which _static/tutorials.css reads.
(function () {
  const KEY = "tutorials-color-scheme";
  const root = document.documentElement;
  const picker = document.getElementById("color-scheme");

  function stored() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }  // storage off
  }

  function apply(choice) {
    if (choice === "light" || choice === "dark") root.dataset.colorScheme = choice;
    else delete root.dataset.colorScheme;
    picker.value = root.dataset.colorScheme || "auto";
  }

  picker.addEventListener("change", () => {
    try {
      if (picker.value === "auto") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, picker.value);
    } catch (e) { /* not remembered; this page changes all the same */ }
    apply(picker.value);
  });
  // A choice made in another tab, or after this page went into the back/forward cache.
  window.addEventListener("storage", (event) => { if (event.key === KEY || event.key === null) apply(stored()); });
  window.addEventListener("pageshow", (event) => { if (event.persisted) apply(stored()); });

  picker.value = root.dataset.colorScheme || "auto";
  picker.parentElement.hidden = false;
})();

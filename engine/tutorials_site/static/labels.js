// Labels that other packages' scripts write in English, in the page's language: the build passes
// them, from the `sphinx` catalog, in this script's data-labels.
(() => {
  const labels = JSON.parse(document.currentScript.dataset.labels);

  // sphinx-copybutton 0.5.2 looks its labels up by <html lang> in a global table (`messages`) that has
  // no Korean or Japanese, and writes them into its icons (`iconCopy`, `iconCheck`) as it loads. Put
  // this page's labels in the table and the icons, and on the buttons it may already have made (it
  // makes them as it loads when the page is parsed by then, as with deferred scripts).
  // A label is text, never markup: copybutton splices the table's labels and its icons into HTML, so
  // they go there escaped (the build refuses labels with these characters: escaping changes none it
  // accepts); on the buttons already made, they are set as an attribute's value and as text.
  const escape = (text) => String(text).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
  if (typeof messages === "object" && typeof iconCopy === "string" && typeof iconCheck === "string") {
    const before = messages[locale];
    const now = labels.copybutton;
    messages[document.documentElement.lang] = Object.fromEntries(
      Object.entries(now).map(([key, text]) => [key, escape(text)]));
    locale = document.documentElement.lang;
    iconCopy = iconCopy.replace(before.copy_to_clipboard, () => escape(now.copy_to_clipboard));
    iconCheck = iconCheck.replace(before.copy_success, () => escape(now.copy_success));
    for (const button of document.querySelectorAll("button.copybtn")) {
      button.dataset.tooltip = now.copy;
      const title = button.querySelector("svg title");
      if (title) title.textContent = now.copy_to_clipboard;
    }
  }

  // sphinx-rtd-theme's script adds the navigation's expand buttons, titled in English, once jQuery is ready.
  const relabel = () => {
    const buttons = document.querySelectorAll("button.toctree-expand");
    for (const button of buttons) button.title = labels.expand;
    return buttons.length > 0;
  };
  if (!relabel()) {
    new MutationObserver((records, observer) => relabel() && observer.disconnect())
      .observe(document.documentElement, { childList: true, subtree: true });
  }
})();

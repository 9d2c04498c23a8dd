// The version list (the rtd flyout's, or the one at the top of the page with another theme) and
// the "not the stable version" banner, decided when the page is viewed: over http(s) from versions.json at the site root, so that old pages learn of new
// releases; opened from disk, from the list embedded when the page was built (no request).
(function () {
  const script = document.currentScript;
  const { version, root, page, lang } = script.dataset;
  const messages = JSON.parse(script.dataset.messages);
  const embedded = JSON.parse(document.getElementById("embedded-versions").textContent);
  const served = location.protocol === "http:" || location.protocol === "https:";

  async function manifest() {
    if (served) {
      try {
        const response = await fetch(root + "versions.json", { cache: "no-cache" });
        if (response.ok) return await response.json();
      } catch (e) { /* not published yet: fall back to the embedded list */ }
    }
    return embedded;
  }

  // The same page in another version, or that version's landing page when it has no such page.
  async function target(entry) {
    const samePage = root + entry.path + lang + "/" + page;
    if (!served) return samePage;
    try {
      const response = await fetch(samePage, { method: "HEAD" });
      if (response.ok) return samePage;
    } catch (e) { /* fall through */ }
    return root + entry.path + lang + "/index.html";  // that version's landing page, same language
  }

  function banner(data) {
    if (!data.stable || data.stable === version) return;
    const current = data.versions.find((v) => v.name === version);
    const template = current && !current.release ? messages.unreleased : messages.older;
    const box = document.createElement("div");
    box.className = "admonition warning version-warning";
    const text = document.createElement("p");
    text.textContent = template.replace("{current}", version).replace("{stable}", data.stable) + " ";
    const link = document.createElement("a");
    link.href = root + "stable/" + lang + "/" + page;
    link.textContent = messages.go;
    text.appendChild(link);
    box.appendChild(text);
    // The text's box: sphinx_rtd_theme's, or any theme's main landmark.
    const body = document.querySelector("[itemprop=articleBody]") || document.querySelector(".rst-content")
      || document.querySelector("[role=main]");
    if (body) body.prepend(box);
  }

  function flyout(data) {
    const list = document.querySelector("dl.site-versions");
    if (!list) return;
    list.querySelectorAll("dd").forEach((dd) => dd.remove());
    for (const entry of data.versions) {
      const dd = document.createElement("dd");
      if (entry.name === version) dd.className = "rtd-current-item";
      const link = document.createElement("a");
      link.href = root + entry.path + lang + "/" + page;
      link.textContent = entry.label + (entry.name === data.stable ? " ★" : "");
      link.dataset.version = entry.name;
      link.addEventListener("click", async (event) => {
        event.preventDefault();
        location.href = await target(entry);
      });
      dd.appendChild(link);
      list.appendChild(dd);
    }
  }

  manifest().then((data) => { flyout(data); banner(data); });
})();

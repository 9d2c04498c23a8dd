"""The built site in Debian's Chromium, served over http on 127.0.0.1 and opened from disk."""

import html
import json
import os
import re
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import sync_playwright

from conftest import ENGINE, FIXTURE_TUTORIALS, FIXTURES, TUTORIAL_PAGE, contrast, luminance, tutorials_site
from tutorials_site.commands.audit import BROWSER_FLAGS, axe_violations, serve, watch
from tutorials_site.core import languages
from tutorials_site.core.project import Project, current
from tutorials_site.core.site import versions
from tutorials_site.core.site.publish import site_url

pytestmark = pytest.mark.site  # every test here builds a site or drives a browser

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def server(site):
    with serve(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser(builds_site):
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_FLAGS)
        yield chromium
        chromium.close()


def assert_clean(page):
    """No console error, nothing that failed to load."""
    assert page.problems == []


@pytest.fixture(params=["http", "file"])
def base_url(request, site, server):
    return server if request.param == "http" else site.as_uri()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.problems = watch(page)
    yield page
    context.close()


def test_tutorial_page_has_downloads_colab_and_no_console_errors(page, base_url):
    page.goto(f"{base_url}/{TUTORIAL_PAGE.as_posix()}")
    page.wait_for_load_state("load")
    downloads = page.locator(".sphx-glr-download a.download").evaluate_all("els => els.map(e => e.href)")
    assert sorted(href.rsplit(".", 1)[1] for href in downloads) == ["ipynb", "py", "zip"]
    colab = page.locator("a.colab-link")
    assert colab.inner_text() == "Open in Colab"
    assert colab.get_attribute("href").startswith("https://colab.research.google.com/github/")
    assert page.locator(".tutorial-provenance").inner_text().startswith("Output captured on")
    assert_clean(page)


def test_copy_button_copies_the_code(page, base_url):
    page.goto(f"{base_url}/{TUTORIAL_PAGE.as_posix()}")
    block = page.locator("div.highlight-Python", has_text="import torch").first
    block.hover()
    block.locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "import torch" in copied
    assert copied.strip() == block.locator("pre").inner_text().strip()
    assert_clean(page)


def test_root_index_leads_to_english(page, base_url):
    page.goto(f"{base_url}/index.html")
    page.wait_for_url("**/en/index.html")
    assert page.locator("h1").first.inner_text().startswith("PyTorch Tutorials")
    assert_clean(page)


# --- languages ---------------------------------------------------------------------------------


@pytest.mark.parametrize("tutorial", ["data_parallel_tutorial", "ddp_tutorial"])
def test_language_switcher_goes_to_the_same_page_and_is_remembered(page, base_url, tutorial):
    page.goto(f"{base_url}/en/beginner/{tutorial}.html")
    page.locator(".rst-versions .rst-current-version").click()
    for lang in ("ko", "ja", "zh-cn", "en"):
        page.locator(f'.rst-versions a[data-language="{lang}"]').click()
        page.wait_for_url(f"**/{lang}/beginner/{tutorial}.html")
        assert page.locator("html").get_attribute("lang") == languages.BY_SEG[lang].hreflang
        page.locator(".rst-versions .rst-current-version").click()
    page.locator('.rst-versions a[data-language="ja"]').click()
    page.wait_for_url(f"**/ja/beginner/{tutorial}.html")
    # The click's write reaches the browser's storage from the page it left; the next page can
    # ask before it lands (seen once in CI), so wait until this page sees the choice.
    page.wait_for_function("localStorage.getItem('tutorials-language') === 'ja'", timeout=5000)
    # From disk, the write can still reach the next document late (seen in CI and here, a root that went to
    # English): the root is visited again until it sees the choice, five times at most. Landing on a language's
    # index writes nothing, so a visit that came too early changes nothing for the next.
    landed = re.compile(r"/(" + "|".join(lang.seg for lang in languages.ALL) + r")/index\.html$")
    for _ in range(5):
        page.goto(f"{base_url}/index.html")
        page.wait_for_url(landed)
        if page.url.endswith("/ja/index.html"):
            break
        page.wait_for_timeout(500)
    assert page.url.endswith("/ja/index.html")  # the remembered choice beats the browser's English
    assert_clean(page)


@pytest.mark.parametrize("locale, seg", [("ko-KR", "ko"), ("ja-JP", "ja"), ("zh-CN", "zh-cn"), ("fr-FR", "en")])
def test_root_index_honours_the_browser_language(browser, base_url, locale, seg):
    context = browser.new_context(locale=locale)
    page = context.new_page()
    page.goto(f"{base_url}/index.html")
    page.wait_for_url(f"**/{seg}/index.html")
    context.close()


SEARCHES = {
    "en": ["DataParallel", "scatter"],
    "ko": ["데이터 병렬", "DataParallel"],
    "ja": ["データ並列", "DataParallel"],
    "zh-cn": ["数据并行", "DataParallel"],
}


def body_only_word(site, seg):
    """A word of the tutorial's body that no title contains, read from the built page."""
    page = (site / seg / TUTORIAL_PAGE.relative_to("en")).read_text()
    titles = " ".join(re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", page, re.S))
    body = re.sub(r"<[^>]+>", " ", " ".join(re.findall(r"<p>(.*?)</p>", page, re.S)))
    words = [w for w in re.findall(r"[가-힣]{2,}|[\u3040-\u30ff\u4e00-\u9fff]{2,}|[A-Za-z]{8,}", body)
             if w not in titles and w.lower() not in titles.lower()]
    return words[len(words) // 2]


def found_pages(page, server, seg, query):
    """The links of a search's results, once they are shown (SERVER: a URL, http or file)."""
    page.goto(f"{server}/{seg}/search.html?q={query}")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=10_000)
    return results.evaluate_all("links => links.map(a => a.getAttribute('href'))")


@pytest.mark.parametrize("seg", list(SEARCHES))
def test_search_finds_the_tutorial_in_every_language(page, site, server, seg):
    for query in SEARCHES[seg] + [body_only_word(site, seg)]:
        hrefs = found_pages(page, server, seg, query)
        assert any("beginner/data_parallel_tutorial.html" in href for href in hrefs), (seg, query)
    assert_clean(page)


DDP_SEARCHES = {"en": "DistributedDataParallel", "ko": "분산", "ja": "分散", "zh-cn": "分布式"}


@pytest.mark.parametrize("seg", list(DDP_SEARCHES))
def test_search_finds_the_ddp_tutorial_in_every_language_served_or_from_disk(page, base_url, seg):
    hrefs = found_pages(page, base_url, seg, DDP_SEARCHES[seg])
    assert any("beginner/ddp_tutorial.html" in href for href in hrefs), (seg, hrefs)
    summaries = page.locator("#search-results ul.search li p.context")
    if base_url.startswith("http"):  # served: each result's summary, fetched from its page
        summaries.first.wait_for(timeout=10_000)
    else:  # from disk a browser refuses those requests: titles alone, and no error
        page.wait_for_timeout(500)
        assert summaries.count() == 0
    assert_clean(page)


def allowed_latin(seg):
    """The names the language's glossary keeps in Latin script (its section on them), and each language's name."""
    glossary = (FIXTURES / "locales" / languages.BY_SEG[seg].code / "glossary.md").read_text()
    section = re.search(r"^## [^\n]*(?:Latin|ラテン|라틴)[^\n]*\n(.*?)(?=^## |\Z)", glossary, re.S | re.M)[1]
    names = set()
    for line in section.splitlines():
        if line.startswith("|"):
            cells = line.split("|")
            if "---" in line or "term" in cells[1].lower():
                continue
            line = cells[2]
        names |= {w.rstrip(".") for w in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", re.sub(r"`[^`]*`", "", line))}
    # A term whose translation keeps its English (zh-CN's "store（存储）") is Latin on the page too.
    kept = {word for line in glossary.splitlines() if line.startswith("| ") and "---" not in line
            for word in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", re.sub(r"`[^`]*`", "", line.split("|")[2]))}
    return (names | kept | {lang.name for lang in languages.ALL}
            | {versions.current(ENGINE, os.environ.get('VERSION', ''))})


def without_glosses(text, seg):
    """TEXT less the English glosses its glossary asks for: a glossary term's English in brackets right after its
    translation ("스토어(store)", "store（存储）" keeps the English itself as its translation's first word)."""
    glossary = (FIXTURES / "locales" / languages.BY_SEG[seg].code / "glossary.md").read_text()
    terms = {word.lower() for line in glossary.splitlines() if line.startswith("| ") and "---" not in line
             for word in re.findall(r"[A-Za-z][A-Za-z-]*", re.sub(r"`[^`]*`", "", line.split("|")[1] + line.split("|")[2]))}

    def gloss(match):
        return "" if all(word.lower() in terms for word in re.findall(r"[A-Za-z][A-Za-z-]*", match[1])) else match[0]
    text = re.sub(r"(?<=[^\x00-\x7f])\s?[(（]([A-Za-z][A-Za-z -]*)[)）]", gloss, text)
    return re.sub(r"\b([A-Za-z]+)(?=[(（][^\x00-\x7f])", lambda m: "" if m[1].lower() in terms else m[0], text)


VISIBLE_TEXT = """() => {
  // Search results quote the page, code included: the pages themselves are checked.
  const skip = "pre, code, .highlight, .sphx-glr-script-out, script, style, .headerlink, ul.search p.context";
  // Search highlighting wraps the query inside words ("Distributed<span>DataParallel</span>"): unwrap it.
  document.querySelectorAll("span.highlighted").forEach(span => span.replaceWith(span.textContent));
  document.body.normalize();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (el.closest(skip) || !el.checkVisibility()) continue;
    out.push(walker.currentNode.textContent);
  }
  return out.join(" ");
}"""


@pytest.mark.parametrize("seg", ["ko", "ja", "zh-cn"])
@pytest.mark.parametrize("path", ["index.html", "beginner/index.html", "beginner/data_parallel_tutorial.html",
                                  "beginner/ddp_tutorial.html", "search.html?q=DataParallel"])
def test_no_english_left_on_translated_pages(page, server, seg, path):
    page.goto(f"{server}/{seg}/{path}")
    if path.startswith("search"):
        page.locator("#search-results ul.search li").first.wait_for(timeout=10_000)
    page.locator(".rst-versions .rst-current-version").click()  # the language list is visible text too
    words = re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", without_glosses(page.evaluate(VISIBLE_TEXT), seg))
    english = sorted({w.rstrip(".") for w in words} - allowed_latin(seg) - {""})
    assert english == [], f"{seg}/{path}: {english}"
    assert_clean(page)


LABELS = """() => {
  // What is read out or shown besides the text: labels in attributes (sphinx-gallery's thumbnails
  // and sphinx-copybutton draw their tooltips from `tooltip` and `data-tooltip`), icons' SVG titles,
  // and text drawn by CSS (sphinx-gallery's output label).
  const names = ["title", "aria-label", "placeholder", "alt", "tooltip", "data-tooltip"];
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("pre, code, script, style")) continue;
    for (const name of names) if (el.getAttribute(name)) out.push(el.getAttribute(name));
    if (el.closest("svg") && el.tagName === "title") out.push(el.textContent);
    for (const pseudo of ["::before", "::after"]) {
      const content = getComputedStyle(el, pseudo).content;
      if (content.startsWith('"')) out.push(content);
    }
  }
  return out.join(" ");
}"""


def figure_titles(site, path):
    """The alt texts of the English page's figures: a titled figure's alt text is its titles, text the code
    drew into the image (as sphinx-gallery makes it), the same on every page like the code's output."""
    english = site / "en" / path.split("?")[0]
    tags = re.findall(r"<img [^>]*sphx-glr-(?:single|multi)-img[^>]*>", english.read_text()) if english.exists() else []
    return [html.unescape(alt) for tag in tags for alt in re.findall(r'alt="([^"]*)"', tag)]


@pytest.mark.parametrize("seg", ["ko", "ja", "zh-cn"])
@pytest.mark.parametrize("path", ["index.html", "beginner/index.html", "beginner/data_parallel_tutorial.html",
                                  "search.html?q=DataParallel"])
def test_no_english_label_left_on_translated_pages(page, server, site, seg, path):
    page.goto(f"{server}/{seg}/{path}")
    if path.startswith("search"):
        page.locator("#search-results ul.search li").first.wait_for(timeout=10_000)
    if path.startswith("beginner/"):  # the theme adds the menu's expand buttons once the page is ready
        page.locator("button.toctree-expand").first.wait_for(state="attached")
    labels = page.evaluate(LABELS)
    if path.endswith("_tutorial.html"):  # the copy button's tooltip and icon, before and after copying
        block = page.locator("div.highlight-Python", has_text="import torch").first
        block.hover()
        assert block.locator("button.copybtn").get_attribute("data-tooltip") not in (None, "Copy")
        block.locator("button.copybtn").click()
        page.wait_for_function("button => button.classList.contains('success')",
                               arg=block.locator("button.copybtn").element_handle())
        labels += " " + page.evaluate(LABELS)
    for title in figure_titles(site, path):
        labels = labels.replace(title, " ")
    # A thumbnail's tooltip quotes the tutorial's intro, code names too: a dotted name is code, as on the page.
    words = re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", re.sub(r"\b[a-z_]\w*(?:\.\w+)+", " ", labels))
    english = sorted({w.rstrip(".") for w in words} - allowed_latin(seg) - {""})
    assert english == [], f"{seg}/{path}: {english}"
    assert_clean(page)


# --- versions ----------------------------------------------------------------------------------


PAGE = "beginner/data_parallel_tutorial.html"


def open_flyout(page):
    page.locator(".rst-versions .rst-current-version").click()


def test_version_and_language_switchers_move_between_published_versions(page, published):
    with serve(published / "docs") as url:
        page.goto(f"{url}/main/ko/{PAGE}")
        open_flyout(page)
        listed = page.locator(".rst-versions dl.site-versions a").all_inner_texts()
        assert [text.split()[0] for text in listed] == ["1.0", "main"]
        page.locator('.rst-versions a[data-version="1.0"]').click()
        page.wait_for_url(f"**/1.0/ko/{PAGE}")
        open_flyout(page)
        page.locator('.rst-versions a[data-language="ja"]').click()
        page.wait_for_url(f"**/1.0/ja/{PAGE}")
        open_flyout(page)
        page.locator('.rst-versions a[data-version="main"]').click()
        page.wait_for_url(f"**/main/ja/{PAGE}")
        assert_clean(page)


def test_unreleased_and_older_pages_say_so_when_viewed(page, published, gh_pages, tmp_path):
    with serve(gh_pages) as url:
        page.goto(f"{url}/main/en/{PAGE}")
        warning = page.locator(".version-warning")
        assert "unreleased version (main)" in warning.inner_text() and "stable version is 1.0" in warning.inner_text()
        assert warning.locator("a").get_attribute("href") == f"../../../stable/en/{PAGE}"
        page.goto(f"{url}/1.0/ko/{PAGE}")
        page.wait_for_timeout(300)
        assert page.locator(".version-warning").count() == 0
    # A release published later: the 1.0 pages, built before it, learn of it.
    assert tutorials_site(published, "html", VERSION="2.0", BUILDDIR=str(tmp_path / "b")).returncode == 0
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "publish", str(tmp_path / "b" / "html")],
                            cwd=published, capture_output=True, text=True, env={**os.environ, "PAGES": str(gh_pages)})
    assert result.returncode == 0, result.stderr
    with serve(gh_pages) as url:
        page.goto(f"{url}/1.0/ko/{PAGE}")
        assert "2.0" in page.locator(".version-warning").inner_text()
        open_flyout(page)
        assert page.locator('.rst-versions a[data-version="2.0"]').count() == 1
        page.goto(f"{url}/index.html")
        page.wait_for_url("**/stable/en/index.html")
    assert_clean(page)


def test_a_page_missing_in_the_other_version_leads_to_its_landing_page(page, gh_pages):
    (gh_pages / "main" / "ko" / "beginner" / "index.html").unlink()
    with serve(gh_pages) as url:
        page.goto(f"{url}/1.0/ko/beginner/index.html")
        open_flyout(page)
        page.locator('.rst-versions a[data-version="main"]').click()
        page.wait_for_url("**/main/ko/index.html")  # the landing page of main, in the same language


def test_from_disk_the_version_list_is_the_embedded_one_and_nothing_is_requested(page, published):
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto((published / "docs" / "main" / "en" / PAGE).as_uri())
    open_flyout(page)
    assert page.locator('.rst-versions a[data-version="1.0"]').count() == 1  # published before main was built
    assert not [u for u in requested if "versions.json" in u]
    assert_clean(page)


@pytest.mark.parametrize("locale, seg", [("ko-KR", "ko"), ("ja", "ja"), ("zh-CN", "zh-cn"), ("de-DE", "en")])
def test_published_root_sends_readers_to_the_stable_version_in_their_language(browser, published, locale, seg):
    context = browser.new_context(locale=locale)
    page = context.new_page()
    with serve(published / "docs") as url:
        page.goto(f"{url}/index.html")
        page.wait_for_url(f"**/stable/{seg}/index.html")
    context.close()


def test_the_404_page_works_at_any_depth(page, published):
    with serve(published / "docs") as url:
        page.goto(f"{url}/1.0/ko/no/such/deep/page.html")
        link = page.locator('#links a[hreflang="ko"]')
        link.wait_for()
        link.click()
        page.wait_for_url("**/stable/ko/index.html")


# --- colour schemes ----------------------------------------------------------------------------

# An element's text colour and the colour behind it: its own background, else the nearest ancestor's.
COLOURS = """(selector) => {
  const rgba = (value) => value.match(/[\\d.]+/g).map(Number);
  const element = document.querySelector(selector);
  let behind = element;
  while (behind.parentElement && rgba(getComputedStyle(behind).backgroundColor)[3] === 0) behind = behind.parentElement;
  return [rgba(getComputedStyle(element).color), rgba(getComputedStyle(behind).backgroundColor)];
}"""
# The page's background at its first frame: requestAnimationFrame's callbacks run before each paint.
FIRST_FRAME = """requestAnimationFrame(() => {
  window.firstFrame = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g).map(Number);
});"""
PICKER = "#color-scheme"


def is_dark(rgb):
    return luminance(rgb) < 0.05  # #3a3a3a and darker; the light scheme's backgrounds are above 0.8


def body_background(page):
    return page.evaluate(COLOURS, "body")[1]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_system_scheme_colours_the_page_its_code_and_its_output(page, server, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{server}/{TUTORIAL_PAGE.as_posix()}")
    for selector in ("body", "div.highlight-Python pre", ".sphx-glr-script-out pre", "code.literal"):
        text, background = page.evaluate(COLOURS, selector)
        assert is_dark(background) == (scheme == "dark"), (selector, background)
        assert contrast(text, background) >= 4.5, (selector, text, background)
    assert_clean(page)


def axe_report(violations):
    return "\n".join(f"{v['id']} ({v['impact']}): {node['target']} {node['failureSummary']}"
                     for v in violations for node in v["nodes"])


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_axe_finds_nothing_on_the_tutorial_page_in_either_scheme(page, server, seg, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{server}/{seg}/{TUTORIAL_PAGE.relative_to('en').as_posix()}")
    violations = axe_violations(page)
    assert violations == [], f"{seg}, {scheme} scheme:\n{axe_report(violations)}"


@pytest.mark.parametrize("path", ["beginner/index.html", "search.html?q=DataParallel", "genindex.html"])
def test_axe_finds_nothing_on_the_other_pages_in_the_dark_scheme(page, server, path):
    page.emulate_media(color_scheme="dark")
    page.goto(f"{server}/en/{path}")
    if path.startswith("search"):
        page.locator("#search-results ul.search li").first.wait_for(timeout=10_000)
    violations = axe_violations(page)
    assert violations == [], f"{path}:\n{axe_report(violations)}"


def assert_dark_from_the_first_frame(page):
    assert is_dark(page.evaluate("window.firstFrame"))  # nothing light was ever painted
    assert page.locator(PICKER).input_value() == "dark"


def test_a_picked_scheme_holds_from_the_next_pages_first_frame_and_after_a_reload(page, base_url):
    page.add_init_script(FIRST_FRAME)
    page.emulate_media(color_scheme="light")
    page.goto(f"{base_url}/{TUTORIAL_PAGE.as_posix()}")
    assert page.locator(PICKER).input_value() == "auto" and not is_dark(body_background(page))
    page.get_by_label("Color scheme").select_option("dark")
    assert is_dark(body_background(page))  # at once, without a reload
    page.goto(f"{base_url}/ko/beginner/index.html")  # another page, in another language
    assert_dark_from_the_first_frame(page)
    page.reload()
    assert_dark_from_the_first_frame(page)
    assert_clean(page)


def test_auto_follows_the_system_scheme_and_light_overrides_it(page, base_url):
    page.emulate_media(color_scheme="dark")
    page.goto(f"{base_url}/{TUTORIAL_PAGE.as_posix()}")
    assert is_dark(body_background(page))
    page.select_option(PICKER, "light")
    assert not is_dark(body_background(page))
    page.reload()
    assert not is_dark(body_background(page)) and page.locator(PICKER).input_value() == "light"
    page.select_option(PICKER, "auto")
    assert is_dark(body_background(page))
    page.emulate_media(color_scheme="light")
    assert not is_dark(body_background(page))
    page.reload()
    assert not is_dark(body_background(page)) and page.locator(PICKER).input_value() == "auto"
    assert_clean(page)


# --- what search engines and link previews see --------------------------------------------------


IN_LANGUAGE = {"en": r"^[^\u3040-\u30ff\u4e00-\u9fff가-힣]+$", "ko": r"[가-힣]", "ja": r"[\u3040-\u30ff]",
               "zh-cn": r"^[^\u3040-\u30ff가-힣]*[\u4e00-\u9fff]"}
HEAD_TAGS = """() => ({
  alternates: [...document.querySelectorAll("link[rel=alternate][hreflang]")].map(l => [l.hreflang, l.getAttribute("href")]),
  meta: [...document.querySelectorAll("meta[name=description], meta[property^='og:']")]
    .map(m => [m.getAttribute("name") || m.getAttribute("property"), m.content]),
})"""


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_published_pages_have_absolute_alternates_and_tags_in_their_language(page, published, seg):
    site = site_url(current(FIXTURES))  # the published tree's address, from conf.py
    with serve(published / "docs") as url:
        for folder in ("stable", "main"):  # a release's alternates are its stable pages'; main's are its own
            page.goto(f"{url}/{folder}/{seg}/{PAGE}")
            tags = page.evaluate(HEAD_TAGS)
            expected = {lang.hreflang: f"{site}{folder}/{lang.seg}/{PAGE}" for lang in languages.ALL}
            assert dict(tags["alternates"]) == {**expected, "x-default": expected["en"]}
            meta = {}
            for name, content in tags["meta"]:
                meta.setdefault(name, []).append(content)
            assert re.search(IN_LANGUAGE[seg], meta["description"][0]) and meta["og:description"] == meta["description"]
            assert meta["og:title"] == [page.title().split(" — ")[0]] and meta["og:type"] == ["article"]
            assert meta["og:url"] == [f"{site}{folder}/{seg}/{PAGE}"]  # the page's canonical address, as its alternates
            # The thumbnail, in the page's own version folder: there in the published tree.
            image = meta["og:image"][0]
            assert image.startswith(f"{site}{'1.0' if folder == 'stable' else 'main'}/{seg}/_images/")
            response = page.request.get(url + "/" + image.removeprefix(site))
            assert response.ok and response.headers["content-type"] == "image/png"
    assert_clean(page)


# --- fonts, icons, phones ----------------------------------------------------------------------

PAGE_KINDS = ["index.html", "beginner/index.html", "beginner/data_parallel_tutorial.html",
              "beginner/ddp_tutorial.html", "search.html?q=torch"]
# Every element and pseudo-element of the page: its font, and for an icon its drawing.
FONTS_AND_ICONS = """() => {
  const found = {fonts: new Set(), privateUse: [], undrawn: []};
  for (const el of document.querySelectorAll("body, body *")) {
    if (el instanceof SVGElement) continue;  // drawn already, and no pseudo-element of its own
    found.fonts.add(getComputedStyle(el).fontFamily);
    for (const pseudo of ["::before", "::after"]) {
      const style = getComputedStyle(el, pseudo);
      if (style.content === "none" || style.content === "normal") continue;
      found.fonts.add(style.fontFamily);
      const where = el.tagName.toLowerCase() + "." + el.className + pseudo;
      if (/[\\ue000-\\uf8ff]/.test(style.content)) found.privateUse.push(where);
      const icon = el.matches(".fa, .icon, .admonition-title, code.download span:first-child, button.toctree-expand");
      if (icon && pseudo === "::before" && style.maskImage === "none") found.undrawn.push(where);
    }
  }
  return {fonts: [...found.fonts], privateUse: found.privateUse, undrawn: found.undrawn};
}"""


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_pages_download_no_font_and_draw_every_icon(page, server, seg):
    fonts = []
    page.on("request", lambda request: request.resource_type == "font" and fonts.append(request.url))
    for path in PAGE_KINDS:
        page.goto(f"{server}/{seg}/{path}")
        page.wait_for_load_state("load")
        page.locator(".rst-versions .rst-current-version").click()  # the flyout's icons and list shown too
        found = page.evaluate(FONTS_AND_ICONS)
        web_fonts = [f for f in found["fonts"] if re.search(r"Lato|Roboto Slab|FontAwesome", f)]
        assert web_fonts == [], f"{seg}/{path}"
        assert found["privateUse"] == [], f"{seg}/{path}: drawn from the icon font's code points"
        assert found["undrawn"] == [], f"{seg}/{path}: icons without a drawing"
    assert fonts == []
    assert_clean(page)


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_phone_width_scrolls_blocks_not_the_page_and_reaches_the_switchers(browser, server, seg):
    context = browser.new_context(viewport={"width": 375, "height": 667})
    page = context.new_page()
    wide_blocks = 0
    for path in PAGE_KINDS:
        page.goto(f"{server}/{seg}/{path}")
        page.wait_for_load_state("load")
        width = page.evaluate("document.documentElement.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{seg}/{path} scrolls sideways"
        wide = page.evaluate("""() => [...document.querySelectorAll(".rst-content pre")]
            .filter((pre) => pre.scrollWidth > pre.clientWidth)
            .map((pre) => [getComputedStyle(pre).overflowX, pre.tabIndex])""")
        assert all(overflow in ("auto", "scroll") and tab == 0 for overflow, tab in wide), wide
        wide_blocks += len(wide)
    assert wide_blocks, "no code block wider than a phone: the check above checked nothing"
    # On a phone the theme shows the flyout with the menu: open the menu, then the flyout; every
    # language and version in it is on the screen and can be followed.
    page.goto(f"{server}/{seg}/beginner/ddp_tutorial.html")
    page.locator('[data-toggle="wy-nav-top"]').click()
    page.locator(".rst-versions .rst-current-version").click()
    links = page.locator(".rst-versions .rst-other-versions a")
    assert links.count() > len(languages.ALL)  # the languages and at least this version
    for i in range(links.count()):
        box = links.nth(i).bounding_box()
        assert box and box["x"] >= 0 and box["y"] >= 0, box
        assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= 667, box
    target = next(lang.seg for lang in languages.ALL if lang.seg != seg)
    page.locator(f'.rst-versions a[data-language="{target}"]').click()
    page.wait_for_url(f"**/{target}/beginner/ddp_tutorial.html")
    context.close()



GALLERY_INDEXES = sorted({g.gallery_dir + "/index.html" for g in Project.read(FIXTURES).galleries})


@pytest.mark.parametrize("width", [320, 768, 1280, 1920])
def test_card_titles_wrap_inside_their_cards_in_every_language(browser, server, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    overflowing = []
    for lang in languages.ALL:
        for index in GALLERY_INDEXES:
            page.goto(f"{server}/{lang.seg}/{index}")
            overflowing += page.evaluate("""() => [...document.querySelectorAll('.sphx-glr-thumbcontainer')]
                .flatMap(card => [...card.querySelectorAll('.sphx-glr-thumbnail-title')].map(title => {
                    // The card's content box: inside its border and padding.
                    const box = card.getBoundingClientRect(), style = getComputedStyle(card);
                    const left = box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft);
                    const right = box.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
                    const range = document.createRange();
                    range.selectNodeContents(title);  // the text itself, wherever it runs
                    const text = range.getBoundingClientRect();
                    const out = title.scrollWidth > title.clientWidth + 1 || text.left < left - 0.5
                        || text.right > right + 0.5;
                    return out ? `${location.pathname}: ${title.textContent}` : null;
                })).filter(Boolean)""")
    context.close()
    assert overflowing == []


# --- what a tutorial page leads with (sphinxext/page.py, cards.py) ---------------------------------------------

DDP_PAGE = "beginner/ddp_tutorial.html"
BUTTON_STYLE = """(els) => els.map(e => { const s = getComputedStyle(e); const r = e.getBoundingClientRect();
  return [s.fontFamily, s.fontWeight, s.fontSize, s.paddingTop, s.borderTopWidth, s.borderRadius, s.backgroundImage,
          Math.round(r.height)].join("|"); })"""


def box(page, selector):
    return page.locator(selector).first.bounding_box()


def test_the_buttons_stand_under_the_title_all_of_one_style(page, server, site_project):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{server}/en/{DDP_PAGE}")
    title, actions, first_code = box(page, "h1"), box(page, ".tutorial-actions"), box(page, "div.highlight")
    assert title["y"] + title["height"] <= actions["y"] and actions["y"] + actions["height"] <= first_code["y"]
    links = page.locator(".tutorial-actions a")
    hrefs = links.evaluate_all("els => els.map(e => e.href)")
    assert sorted(href.rsplit(".", 1)[1] for href in hrefs if href.startswith(server)) == ["ipynb", "py", "zip"]
    repo = current(FIXTURES).conf["tutorials_github_repo"]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=site_project, capture_output=True, text=True).stdout.strip()
    assert f"https://github.com/{repo}/blob/{commit}/beginner_source/ddp_tutorial.py" in hrefs
    assert any(href.startswith("https://colab.research.google.com/github/") for href in hrefs) and len(hrefs) == 5
    assert len(set(links.evaluate_all(BUTTON_STYLE))) == 1  # one style: face, weight, size, padding, border, height
    assert page.locator("#sphx-glr-download-beginner-ddp-tutorial-py").count() == 1
    assert page.get_by_text("Go to the end").count() == 0
    assert_clean(page)


def test_on_this_page_lists_the_sections_right_of_a_text_that_uses_the_width(page, server):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{server}/en/{DDP_PAGE}")
    toc, text = page.locator(".tutorials-toc"), box(page, ".rst-content")
    assert toc.is_visible() and toc.locator(".tutorials-toc-title").inner_text() == "On this page"
    assert box(page, ".tutorials-toc")["x"] >= text["x"] + text["width"]
    sections = page.locator("[itemprop=articleBody] h2").evaluate_all("els => els.map(e => e.textContent)")
    listed = toc.locator("a").evaluate_all("els => els.filter(e => e.offsetParent).map(e => e.textContent)")
    assert sections and listed[:len(sections)] == [s.replace("\uf0c1", "").strip() for s in sections]  # less the ¶ link
    assert text["width"] >= 700  # the theme's column was 696 px at this width
    # A code block scrolls sideways only where a line is longer than the column holds (about 95 characters).
    scrolling = page.locator("div.highlight pre").evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth)"
        ".map(e => Math.max(...e.textContent.split('\\n').map(l => l.length)))")
    assert all(longest > 95 for longest in scrolling), scrolling
    page.set_viewport_size({"width": 1000, "height": 900})
    assert not toc.is_visible()


def test_report_a_problem_opens_an_issue_filled_with_the_page_language_version_and_commit(page, server, site, site_project):
    page.goto(f"{server}/ko/{DDP_PAGE}")
    link = page.locator(".tutorials-report a")
    assert link.inner_text() != "Report a problem with this page"  # in the page's language
    url = urlsplit(link.get_attribute("href"))
    assert url.netloc == "github.com" and url.path == f"/{current(FIXTURES).conf['tutorials_github_repo']}/issues/new"
    body = parse_qs(url.query)["body"][0].splitlines()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=site_project, capture_output=True, text=True).stdout.strip()
    assert body[0].startswith("Page: ") and body[0].endswith(f"/ko/{DDP_PAGE}") and body[1:4] == [
        "Language: ko", f"Version: {json.loads((site / 'build.json').read_text())['name']}", f"Commit: {commit}"]


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_the_landing_page_has_a_card_per_tutorial_with_thumbnail_text_time_and_hardware(page, server, seg):
    page.goto(f"{server}/{seg}/index.html")
    cards = page.locator(".tutorials-card")
    assert cards.count() == len(FIXTURE_TUTORIALS)  # the tests' own, which `site` builds
    for card in cards.all():
        assert card.locator("img").evaluate("img => img.complete && img.naturalWidth > 0")
        assert card.locator(".tutorials-card-title a").get_attribute("href").startswith("beginner/")
        assert card.locator(".tutorials-card-text").inner_text().strip()
        assert re.search(r"\d", card.locator(".tutorials-card-facts").inner_text())
    assert_clean(page)

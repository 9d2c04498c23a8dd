"""The built site in Debian's Chromium, served over http on 127.0.0.1 and opened from disk."""

import contextlib
import functools
import os
import re
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from conftest import TUTORIAL_PAGE, make
from tutorials_site.core import languages, versions
from tutorials_site.core.layout import ROOT

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run", "--no-sandbox"]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def assert_clean(page, published=False):
    """No console error; nothing failed to load but, before publishing, the versions.json a page looks for."""
    assert page.errors == []
    expected = [] if published else [url for url in page.failed if url.endswith("/versions.json")]
    assert page.failed == expected


@pytest.fixture(params=["http", "file"])
def base_url(request, site, server):
    return server if request.param == "http" else site.as_uri()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.errors, page.failed = [], []
    # A failed request is logged as "Failed to load resource" without its URL: keep the URL instead.
    page.on("console", lambda message: message.type == "error" and not message.text.startswith(
        "Failed to load resource") and page.errors.append(message.text))
    page.on("response", lambda response: response.status >= 400 and page.failed.append(response.url))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
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
    page.goto(f"{base_url}/index.html")
    page.wait_for_url("**/ja/index.html")  # the remembered choice beats the browser's English
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
    """The links of a search's results, once they are shown."""
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
def test_search_finds_the_ddp_tutorial_in_every_language(page, server, seg):
    hrefs = found_pages(page, server, seg, DDP_SEARCHES[seg])
    assert any("beginner/ddp_tutorial.html" in href for href in hrefs), (seg, hrefs)
    assert_clean(page)


def allowed_latin(seg):
    """The names the language's glossary keeps in Latin script (its section on them), and each language's name."""
    glossary = (ROOT / "locales" / languages.BY_SEG[seg].code / "glossary.md").read_text()
    section = re.search(r"^## [^\n]*(?:Latin|ラテン|라틴)[^\n]*\n(.*?)(?=^## |\Z)", glossary, re.S | re.M)[1]
    names = set()
    for line in section.splitlines():
        if line.startswith("|"):
            cells = line.split("|")
            if "---" in line or "term" in cells[1].lower():
                continue
            line = cells[2]
        names |= {w.rstrip(".") for w in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", re.sub(r"`[^`]*`", "", line))}
    return names | {lang.name for lang in languages.ALL} | {versions.current(os.environ.get('VERSION', ''))}


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
    words = re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", page.evaluate(VISIBLE_TEXT))
    english = sorted({w.rstrip(".") for w in words} - allowed_latin(seg) - {""})
    assert english == [], f"{seg}/{path}: {english}"
    assert_clean(page)


# --- versions ----------------------------------------------------------------------------------


class PagesHandler(QuietHandler):
    """Like GitHub Pages: a missing path gets the site's 404.html, whatever its depth."""

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.exists():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@contextlib.contextmanager
def serve(folder):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(PagesHandler, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


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
        assert_clean(page, published=True)


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
    assert make(published, "html", VERSION="2.0", BUILDDIR=str(tmp_path / "b")).returncode == 0
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
    assert_clean(page, published=True)


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
    assert_clean(page, published=True)


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

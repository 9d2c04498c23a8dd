"""The built site in Debian's Chromium, served over http on 127.0.0.1 and opened from disk."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import sync_playwright

from conftest import TUTORIAL_PAGE

CHROMIUM = "/usr/bin/chromium"
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


@pytest.fixture(params=["http", "file"])
def base_url(request, site, server):
    return server if request.param == "http" else site.as_uri()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.errors = []
    page.on("console", lambda message: message.type == "error" and page.errors.append(message.text))
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
    assert page.errors == []


def test_copy_button_copies_the_code(page, base_url):
    page.goto(f"{base_url}/{TUTORIAL_PAGE.as_posix()}")
    block = page.locator("div.highlight-Python", has_text="import torch").first
    block.hover()
    block.locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "import torch" in copied
    assert copied.strip() == block.locator("pre").inner_text().strip()
    assert page.errors == []


def test_root_index_leads_to_english(page, base_url):
    page.goto(f"{base_url}/index.html")
    page.wait_for_url("**/en/index.html")
    assert page.locator("h1").first.inner_text().startswith("PyTorch Tutorials")
    assert page.errors == []

"""The engine at the old end of its ranges (pyproject.toml): Sphinx 7.2.6, sphinx-gallery 0.19 and docutils 0.19, in an
environment of their own (tests/oldest/requirements.lock, installed with hashes; the engine from its wheel).

There, the engine's Sphinx side's unit tests and the tests of its doors to sphinx-gallery pass, and a small site with
PyTorch's own theme (pytorch-sphinx-theme2, which requires Sphinx 7.2.6 and pydata-sphinx-theme 0.15.4) is built by
`tutorials-site html` in English and Korean: its pages carry the engine's parts in that theme (the language and
version lists, the version banner, the provenance line, the downloads and Colab link, the head's tags). The suite
itself runs on the newest pair (the site's lock)."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

from conftest import ENGINE, git, git_repository, made_once
from tutorials_site.core.runs.stamps import STAMP_META

pytestmark = pytest.mark.site  # every test here makes the environment and builds in it

OLDEST = ENGINE / "tests" / "oldest"
LOCK = OLDEST / "requirements.lock"
REPO = "someone/small-site"
TITLE_KO = "세어 보기"
# The small site: what a site using PyTorch's theme writes in its conf.py (the theme's templates folder, its
# variables), the engine's extension after sphinx-gallery's, and one tutorial that needs no torch.
SITE = {
    "conf.py": (
        "import os\nimport pytorch_sphinx_theme2\n\n"
        "project = 'Small'\n"
        "extensions = ['sphinx_gallery.gen_gallery', 'tutorials_site.sphinxext']\n"
        "sphinx_gallery_conf = {'examples_dirs': ['tutorials_source'], 'gallery_dirs': ['tutorials'],"
        " 'filename_pattern': r'\\.py$'}\n"
        "language = 'en'\ntutorials_languages = ['en', 'ko']\n"
        f"tutorials_github_repo = {REPO!r}\n"
        "exclude_patterns = ['tutorials_source', '_build']\n"
        "html_theme = 'pytorch_sphinx_theme2'\n"
        "html_theme_options = {'pytorch_project': 'tutorials', 'canonical_url': 'https://small.example.org/'}\n"
        "templates_path = [os.path.join(os.path.dirname(pytorch_sphinx_theme2.__file__), 'templates')]\n"
        "html_context = {'theme_variables': pytorch_sphinx_theme2.get_theme_variables(), 'library_links': [],\n"
        "                'github_user': 'someone', 'github_repo': 'small-site', 'github_version': 'main'}\n"),
    "index.rst": "Small\n=====\n\nA paragraph.\n\n.. toctree::\n\n   tutorials/index\n",
    "tutorials_source/README.txt": "Tutorials\n=========\n",
    "tutorials_source/counting.py": (
        '"""\nCounting\n========\n\nIt counts, and draws what it counted.\n"""\n\n'
        "import matplotlib.pyplot as plt\n\nprint('counted', sum(range(10)))\nplt.plot([1, 2, 3])\n"),
    "locales/ko/LC_MESSAGES/tutorials_source/counting.po": (
        'msgid ""\nmsgstr ""\n"Language: ko\\n"\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        f'msgid "Counting"\nmsgstr "{TITLE_KO}"\n'),
    ".gitignore": "_build/\n",
    # what an earlier plain build wrote and the site committed (tutorials-kr has one): sphinx-gallery 0.19 writes it
    # again, in place, where the build's staged tree has it, never through to the site's file
    "sg_execution_times.rst": ":orphan:\n\nComputation times, as an earlier build wrote them.\n",
}


@pytest.fixture(scope="session")
def oldest(builds_site, engine_wheel, tmp_path_factory):
    """The environment of LOCK with the engine's wheel, made once per session; its bin/ folder."""

    def make(venv):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "--require-hashes", "--no-deps", "-r", str(LOCK)], check=True, capture_output=True)
        subprocess.run([*pip, "--no-deps", "--no-index", str(engine_wheel)], check=True, capture_output=True)

    return made_once(tmp_path_factory, "oldest", make) / "bin"


def in_oldest(oldest, *args, cwd, **env):
    """A command of the oldest environment, which sees nothing of this one."""
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(oldest / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True,
                          env={**clean, "PATH": f"{oldest}{os.pathsep}{clean.get('PATH', '')}", **env})


def test_the_environment_holds_the_oldest_pair_and_the_engine_from_its_wheel(oldest):
    probe = ("import sphinx, sphinx_gallery, docutils, tutorials_site, pathlib; "
             "print(sphinx.__version__, sphinx_gallery.__version__, docutils.__version__, "
             "pathlib.Path(tutorials_site.__file__).parent)")
    found = in_oldest(oldest, "python", "-c", probe, cwd=oldest).stdout.split()
    pins = dict(re.findall(r"^([a-z][\w.-]*)==(\S+)", (OLDEST / "requirements.txt").read_text(), re.M))
    assert found[:3] == [pins["sphinx"], pins["sphinx-gallery"], pins["docutils"]]
    assert Path(found[3]).is_relative_to(oldest.parent)  # installed, not this checkout
    # every dependency's lower end in pyproject.toml is the release tested here
    declared = tomllib.loads((ENGINE / "pyproject.toml").read_text())["project"]["dependencies"]
    lower = dict(re.fullmatch(r"([\w-]+)>=([\d.]+)", requirement).groups() for requirement in declared)
    assert {name: Version(pins[name]) for name in lower} == {name: Version(at) for name, at in lower.items()}


def test_the_sphinx_side_and_the_doors_to_sphinx_gallery_pass_there(oldest, tmp_path):
    tests = sorted(str(p.relative_to(ENGINE)) for p in (ENGINE / "tests").glob("test_sphinxext*.py"))
    result = in_oldest(oldest, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path}",
                       "-m", "not site and not tutorial and not lint", "tests/test_sphinx_gallery_api.py", *tests,
                       cwd=ENGINE)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    # pytest's last line: passed alone (no failed, error or skipped count)
    assert re.fullmatch(r"\d+ passed in [\d.]+s", result.stdout.strip().splitlines()[-1]), result.stdout[-2000:]


@pytest.fixture(scope="module")
def themed(oldest, tmp_path_factory):
    """The small site, in its own git repository, built by the oldest environment's `tutorials-site html` in English
    and Korean as version `main`, beside a published 2.0 (its PAGES' versions.json); its HTML folder."""
    root = git_repository(tmp_path_factory.mktemp("themed") / "site", SITE)
    pages = root.parent / "gh-pages"
    pages.mkdir()
    stable = {"name": "2.0", "label": "2.0", "release": True, "path": "2.0/", "languages": ["en", "ko"],
              "torch": "", "built": ""}
    (pages / "versions.json").write_text(json.dumps({"stable": "2.0", "versions": [stable]}))
    result = in_oldest(oldest, "tutorials-site", "html", cwd=root, LANGUAGES="en ko", VERSION="main", PAGES=str(pages))
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(root, "status", "--porcelain") == ""
    return root / "_build" / "html"


def _page(html, seg, name="tutorials/counting"):
    return (html / seg / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("seg", ["en", "ko"])
def test_a_tutorial_page_in_pytorch_s_theme_carries_the_engine_s_parts(themed, seg):
    page = _page(themed, seg)
    assert 'class="pytorch-body"' in page and "bd-article" in page  # PyTorch's theme, over pydata-sphinx-theme
    assert "counted 45" in page and (TITLE_KO in page) == (seg == "ko")  # the one run, in each language's page
    # the lists: both languages, each linking to this page in it; the versions' list and what versions.js reads
    links = dict((lang, url) for url, lang in re.findall(r'<a href="([^"]+)" hreflang="[^"]+" lang="[^"]+" '
                                                         r'data-language="([^"]+)">', page))
    assert links == {"en": "../../en/tutorials/counting.html", "ko": "../../ko/tutorials/counting.html"}
    assert page.count('<nav class="tutorials-switchers"') == 1 and '<dl class="site-versions">' in page
    embedded = json.loads(re.search(r'<script id="embedded-versions" type="application/json">(.*?)</script>', page)[1])
    assert embedded["stable"] == "2.0" and [v["name"] for v in embedded["versions"]] == ["2.0", "main"]
    assert 'src="../_static/versions.js" data-version="main"' in page and (themed / seg / "_static" / "versions.js").is_file()
    # the provenance line under the intro, and its stamp in the head
    assert page.index("It counts") < page.index('class="tutorial-provenance') < page.index("counted 45")
    assert f'<meta name="{STAMP_META}" content="' in page
    # under the title, the downloads (.ipynb, .py), the Colab link to this version's and language's notebook
    actions = page.index('tutorial-actions')
    assert page.index("</h1>") < actions < page.index('class="tutorial-provenance')
    notebook = re.search(r'href="(\.\./_downloads/[0-9a-f]+/counting\.ipynb)"', page)[1]
    script = re.search(r'href="(\.\./_downloads/[0-9a-f]+/counting\.py)"', page)[1]
    assert (themed / seg / "tutorials" / notebook).is_file() and (themed / seg / "tutorials" / script).is_file()
    colab = f"https://colab.research.google.com/github/{REPO}/blob/gh-pages/main/{seg}/_downloads/{notebook.removeprefix('../_downloads/')}"
    assert f'href="{colab}"' in page
    assert page.count('id="sphx-glr-download-') == 1 and "sphx-glr-download-link-note" not in page
    # the gallery's computation times show the run's (sphinx-gallery 0.19 reports none for an example it skips)
    times = (themed / seg / "tutorials" / "sg_execution_times.html").read_text(encoding="utf-8")
    assert re.search(r"counting\.py.*?(\d\d:\d\d\.\d{3})", times, re.S)[1] != "00:00.000"
    # the head: the alternates, the description and the Open Graph tags, the engine's stylesheet and output label
    assert '<link rel="alternate" hreflang="ko" href="../../ko/tutorials/counting.html">' in page
    assert '<meta name="description" content="It counts, and draws what it counted.">' in page
    assert '<meta property="og:type" content="article">' in page and "tutorials-parts.css" in page
    assert "--tutorials-out-label" in page and '<meta name="robots" content="noindex">' in page  # main: no release


def test_in_a_browser_the_lists_the_banner_and_the_buttons_are_the_engine_s_alone(themed):
    from playwright.sync_api import sync_playwright

    from tutorials_site.commands.audit import BROWSER_FLAGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                             args=BROWSER_FLAGS)
        page = browser.new_page()
        page.route(re.compile(r"^https?://"), lambda route: route.abort())  # the theme's CDN scripts: not here
        page.goto((themed / "en" / "tutorials" / "counting.html").as_uri())
        banner = page.locator("[role=main] .version-warning")  # versions.js, from the list the page embeds
        banner.wait_for()
        assert "unreleased version (main)" in banner.inner_text() and "2.0" in banner.inner_text()
        listed = page.locator(".tutorials-switchers dl.site-versions a[data-version]").evaluate_all(
            "links => links.map(a => a.dataset.version)")
        assert listed == ["2.0", "main"]
        # each list on one line, over pydata-sphinx-theme's indented definition lists
        languages = page.locator(".tutorials-switchers dl.site-languages")
        assert languages.evaluate("dl => getComputedStyle(dl.querySelector('dd')).marginLeft") == "0px"
        boxes = languages.locator("dt, dd").evaluate_all("items => items.map(i => i.getBoundingClientRect().top)")
        assert len(set(boxes)) == 1
        # the engine's buttons under the title; the theme's own (filled by its script from sphinx-gallery's note,
        # which the engine removes) stay hidden: one set of buttons
        assert page.locator(".tutorial-actions .sphx-glr-download-colab a").is_visible()
        assert page.locator(".tutorial-actions .sphx-glr-download-python a").is_visible()
        assert not page.locator(".pytorch-call-to-action-links").is_visible()
        assert page.locator(".tutorial-provenance").is_visible()
        browser.close()

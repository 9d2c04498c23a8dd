"""The engine's parts come with its extension: a site with no templates and no catalogs of its own, built by
plain sphinx-build with sphinx_rtd_theme or furo, in English and in Korean, gets the language and version
lists, the engine's CSS and JS, its labels translated, the Colab link where the site's repository is set,
and the provenance box of a tutorial page."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from tutorials_site.core import assets, languages
from tutorials_site.core.project import current
from tutorials_site.core.runs.records import VersionEntry
from tutorials_site.core.site.build_values import BuildValues
from tutorials_site.core.text import catalogs

pytestmark = pytest.mark.site  # every test here runs sphinx-build

# Plain sphinx-build, as a site's own build would run it, in this environment (the engine installed in it).
SPHINX_ENV = {**os.environ, "MPLBACKEND": "agg"}
DEMO = "demo_tutorial"  # the small site's one tutorial, in conf.py's first gallery
SCRIPT = '"""\nA demo\n======\n\nWhat it shows.\n"""\n\nprint("hello")\n'


def sphinx_build(root: Path, *options: str) -> None:
    """Plain sphinx-build of the site at ROOT into _build/html (sphinx-gallery executing nothing: plot_gallery=0)."""
    result = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-D", "plot_gallery=0", *options,
                             ".", "_build/html"], cwd=root, capture_output=True, text=True, env=SPHINX_ENV)
    assert result.returncode == 0, result.stdout + result.stderr


def build_site(root: Path, theme: str, language: str, repo: str, *options: str) -> Path:
    """A small site (this project's gallery options, one tutorial in it, an index) built by plain sphinx-build;
    returns its HTML folder. (The extension knows a tutorial by this project's galleries for now.)"""
    gallery = current(FIXTURES).galleries[0]
    files = {
        "conf.py": ("project = 'Small'\n"
                    "extensions = ['sphinx_gallery.gen_gallery', 'tutorials_site.sphinxext']\n"
                    f"sphinx_gallery_conf = {dict(current(FIXTURES).options)!r}\n"
                    f"exclude_patterns = [{gallery.examples_dir!r}, '_build']\nhtml_theme = {theme!r}\n"
                    f"tutorials_github_repo = {repo!r}\n"),
        "index.rst": f"Small\n=====\n\nA paragraph.\n\n.. toctree::\n\n   {gallery.gallery_dir}/index\n",
        f"{gallery.examples_dir}/README.txt": "Demos\n=====\n",
        f"{gallery.examples_dir}/{DEMO}.py": SCRIPT,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    sphinx_build(root, "-D", f"language={language}", *options)
    assert not (root / "_locale").exists() and not list(assets.LOCALE.rglob("*.mo"))  # compiled in the build's folder
    return root / "_build" / "html"


def label(language: str, msgid: str) -> str:
    """The engine's translation of a label, as its catalog has it (English in English)."""
    if language == languages.ALL[0].code:
        return msgid
    translated = catalogs.translations(catalogs.load(assets.label_po(languages.BY_CODE[language])))[msgid]
    assert translated != msgid
    return translated


@pytest.mark.parametrize("theme", ["sphinx_rtd_theme", "furo"])
@pytest.mark.parametrize("language", ["en", "ko"])
def test_a_site_without_templates_or_catalogs_gets_the_engine_s_parts(tmp_path, theme, language):
    repo = "someone/small-site" if language == "ko" else ""  # set in one build of each theme, unset in the other
    html = build_site(tmp_path, theme, language, repo, *(["-D", "tutorials_commit=0123abc"] if repo else []))
    index = (html / "index.html").read_text(encoding="utf-8")
    page_name = f"{current(FIXTURES).galleries[0].gallery_dir}/{DEMO}"
    tutorial = (html / f"{page_name}.html").read_text(encoding="utf-8")
    for page, name in ((index, "index"), (tutorial, page_name)):
        # the lists: every language of the engine, linked to the same page in it; the version list for versions.js
        links = re.findall(r'<a href="([^"]+)" hreflang="[^"]+" lang="[^"]+" data-language="([^"]+)">', page)
        assert {seg for _, seg in links} == {lang.seg for lang in languages.ALL}
        assert "../" * (name.count("/") + 1) + f"ko/{name}.html" in {url for url, _ in links}
        assert '<dl class="site-versions">' in page and 'id="embedded-versions"' in page
        assert f"<dt>{label(language, 'Languages')}</dt>" in page
        place = '<div class="rst-versions"' if theme == "sphinx_rtd_theme" else '<nav class="tutorials-switchers"'
        assert page.count(place) == 1
        for asset in ("tutorials-parts.css", "versions.js", "tutorials.js"):
            assert f'_static/{asset}' in page and (html / "_static" / asset).is_file()
        for asset in ("tutorials.css", "pygments-dark.css"):  # the rtd look and its dark code, with rtd only
            assert (f"_static/{asset}" in page) == (theme == "sphinx_rtd_theme")
        assert "--tutorials-out-label" in page
    if language == "ko":
        assert 'labels.js' in tutorial  # other packages' labels set in the page's language
    # the tutorial's page: the Colab link where the site's repository is set, the box of a page built without a run
    assert ("colab.research.google.com/github/someone/small-site/" in tutorial) == bool(repo)
    assert label(language, "Open in Colab") in tutorial or not repo
    assert 'class="tutorial-not-executed admonition warning"' in tutorial
    # under the title, the buttons (the download boxes moved there, once), the source at the commit; the report link
    title_end = tutorial.index("</h1>")
    actions = tutorial.index('class="sphx-glr-footer sphx-glr-footer-example tutorial-actions')
    assert title_end < actions < tutorial.index("tutorial-not-executed") and "Go to the end" not in tutorial
    assert tutorial.count('id="sphx-glr-download-') == 1 and tutorial.count("sphx-glr-download-jupyter") == 1
    source = f"https://github.com/someone/small-site/blob/0123abc/{current(FIXTURES).galleries[0].examples_dir}/{DEMO}.py"
    assert (source in tutorial) == bool(repo) and (label(language, "View on GitHub") in tutorial) == bool(repo)
    assert ("github.com/someone/small-site/issues/new?" in tutorial) == bool(repo)
    assert (label(language, "Report a problem with this page") in tutorial) == bool(repo)
    # no font file a page cannot load: sphinx_rtd_theme's are all replaced by system fonts (tutorials.css)
    static = html / "_static"
    assert not any(p.suffix in assets.FONT_SUFFIXES for p in static.rglob("*"))
    assert not any("@font-face" in sheet.read_text() for sheet in static.rglob("*.css"))
    not_run = "This page was built without running the tutorial: its output is missing or out of date."
    assert label(language, not_run) in tutorial


def test_the_site_s_own_templates_and_static_files_win(tmp_path):
    (tmp_path / "_templates").mkdir()
    (tmp_path / "_templates" / "tutorials-lists.html").write_text('<p class="own-lists">ours</p>\n')
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "tutorials.js").write_text("// the site's own\n")
    html = build_site_with(tmp_path, "templates_path = ['_templates']\nhtml_static_path = ['_static']\n")
    page = (html / "index.html").read_text(encoding="utf-8")
    assert '<p class="own-lists">ours</p>' in page and '<dl class="site-languages">' not in page
    assert (html / "_static" / "tutorials.js").read_text() == "// the site's own\n"


def build_site_with(root: Path, conf: str) -> Path:
    """build_site's site in English with sphinx_rtd_theme and CONF appended to its conf.py."""
    html = build_site(root, "sphinx_rtd_theme", "en", "")
    with open(root / "conf.py", "a", encoding="utf-8") as f:
        f.write(conf)
    sphinx_build(root, "-E")
    return html


def test_with_furo_the_lists_and_the_version_banner_work_in_a_browser(tmp_path):
    from playwright.sync_api import sync_playwright

    from tutorials_site.commands.audit import BROWSER_FLAGS, watch

    stable = VersionEntry(name="2.0", label="2.0", release=True, path="2.0/", languages=(), torch="", built="")
    values = tmp_path / "values.json"  # what the build hands Sphinx (core.site.build_values)
    BuildValues(root="", versions=(stable,)).write(values)
    html = build_site(tmp_path, "furo", "en", "", "-D", "version=main", "-D", f"tutorials_build_values={values}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                             args=BROWSER_FLAGS)
        page = browser.new_page()
        problems = watch(page)
        page.goto((html / "index.html").as_uri())
        page.wait_for_load_state("load")
        banner = page.locator("[role=main] .version-warning")  # versions.js, from the list the page embeds
        banner.wait_for()
        assert "unreleased version (main)" in banner.inner_text() and "2.0" in banner.inner_text()
        listed = page.locator(".tutorials-switchers dl.site-versions a[data-version]").evaluate_all(
            "links => links.map(a => a.dataset.version)")
        assert sorted(listed) == ["2.0", "main"]
        assert page.locator('.tutorials-switchers a[data-language="ja"]').is_visible()
        assert problems == []
        browser.close()

"""`make check`: a page that was not executed from the current source and environment fails it."""

import html
import json
import re
import shutil

import pytest

from conftest import FIXTURE_TUTORIALS, TUTORIAL_PAGE, build
from tutorials_site.core import languages
from tutorials_site.core.project import Project
from tutorials_site.core.site import checks

ENGLISH = [languages.BY_SEG["en"]]
ALL = list(languages.ALL)


def test_the_built_site_passes(site, fixture_site):
    assert checks.check_stamps(fixture_site, site, ALL) == []
    assert checks.check_links(site) == []


def test_the_output_blocks_of_a_page_are_read_as_text_in_order(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        '<div class="highlight-Python notranslate"><div class="highlight"><pre><span></span>print(1)</pre></div></div>'
        '<div class="sphx-glr-script-out highlight-none notranslate"><div class="highlight"><pre><span></span>'
        '1 &lt; 2 &amp; <span class="go">ü</span>\n</pre></div></div><p>text</p>'
        '<div class="sphx-glr-script-out highlight-none notranslate"><div class="highlight"><pre><span></span>'
        'second\n</pre></div></div>', encoding="utf-8")
    assert checks.page_outputs(page) == ["1 < 2 & ü\n", "second\n"]


@pytest.mark.site
def test_a_build_without_execution_fails(project_copy, tmp_path):
    assert build(project_copy, tmp_path / "build", "--noplot", env={"LANGUAGES": "en"}).returncode == 0
    page = (tmp_path / "build" / "html" / TUTORIAL_PAGE).read_text()
    assert "This page was built without running the tutorial" in page
    problems = checks.check_stamps(Project.read(project_copy), tmp_path / "build" / "html", ENGLISH)
    assert len(problems) == len(FIXTURE_TUTORIALS)  # one per tutorial
    assert any("data_parallel_tutorial.py (en): no execution stamp" in problem for problem in problems)


def _with_stamp(site, tmp_path, **changes):
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    page = copy / TUTORIAL_PAGE
    text = page.read_text()
    raw = re.search(r'<meta name="tutorial-execution-stamp" content="([^"]+)"', text)[1]
    stamp = {**json.loads(html.unescape(raw)), **changes}
    page.write_text(text.replace(raw, html.escape(json.dumps(stamp))))
    return copy


@pytest.mark.parametrize(
    "change, message",
    [
        ({"seconds": 0}, "zero-time run"),
        ({"source": "0" * 64}, "output comes from another version of the source"),
        ({"environment": "0" * 64}, "executed in another environment"),
    ],
)
def test_a_stamp_that_does_not_match_fails(site, fixture_site, tmp_path, change, message):
    [problem] = checks.check_stamps(fixture_site, _with_stamp(site, tmp_path, **change), ENGLISH)
    assert message in problem


def test_broken_internal_links_and_anchors_are_reported_with_file_and_line(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text('<p id="top">x</p>\n<a href="sub/">ok</a>\n<a href="#top">ok</a>\n'
                                         '<a href="missing.html">x</a>\n<a href="sub/index.html#nowhere">x</a>\n'
                                         '<a href="https://pytorch.org/">external</a>\n')
    (tmp_path / "sub" / "index.html").write_text('<img src="../gone.png">\n')
    # a theme's template among the static files Sphinx copies (pydata-sphinx-theme's webpack-macros.html): no page
    (tmp_path / "en" / "_static").mkdir(parents=True)
    (tmp_path / "en" / "_static" / "macros.html").write_text("<link href=\"{{ pathto('x.css', 1) }}\">\n")
    assert checks.check_links(tmp_path) == [
        "index.html:4: missing.html: no such file",
        "index.html:5: sub/index.html#nowhere: no such anchor",
        "sub/index.html:1: ../gone.png: no such file",
    ]

"""What search engines and link previews read of the built pages: description, Open Graph tags, hreflang."""

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from docutils.utils import column_width

from conftest import ENGINE, FIXTURES, build
from tutorials_site.core import languages
from tutorials_site.core.project import current
from tutorials_site.core.site import versions
from tutorials_site.core.site.publish import site_url
from tutorials_site.core.site.site_pages import chooser_page, not_found_page
from tutorials_site.core.site.summaries import ELLIPSIS, LIMIT, plain_text

SITE_URL = site_url(current(FIXTURES)).rstrip("/")
SITE_DESCRIPTION = current(FIXTURES).conf["tutorials_site_description"]  # conf.py's
OG_LOCALES = {"en": "en_US", "ko": "ko_KR", "ja": "ja_JP", "zh-cn": "zh_CN"}
# A text in the language: Hangul, kana, or hanzi without kana or Hangul; English has none of them.
SCRIPTS = {"ko": r"[가-힣]", "ja": r"[\u3040-\u30ff]", "zh-cn": r"^[^\u3040-\u30ff가-힣]*[\u4e00-\u9fff]"}
CJK = r"[\u3040-\u30ff\u4e00-\u9fff가-힣]"


class Head(HTMLParser):
    """The <meta> and <link> tags of a page, its <title> and its first <h1>'s text."""

    def __init__(self, text):
        super().__init__()
        self.meta, self.alternates, self.links, self.h1, self.title, self._in = {}, {}, {}, None, "", None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "meta" and ("name" in attrs or "property" in attrs):
            self.meta.setdefault(attrs.get("name") or attrs["property"], []).append(attrs["content"])
        elif tag == "link" and attrs.get("rel") == "alternate" and "hreflang" in attrs:
            assert attrs["hreflang"] not in self.alternates, f"{attrs['hreflang']} listed twice"
            self.alternates[attrs["hreflang"]] = attrs["href"]
        elif tag == "link":
            self.links[attrs.get("rel")] = attrs.get("href")
        if tag == "title" or (tag == "h1" and self.h1 is None):
            self._in = tag

    def handle_data(self, data):
        if self._in == "title":
            self.title += data
        elif self._in == "h1":
            self.h1 = (self.h1 or "") + data

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None


def pages(site, seg):
    """Every page of a language: the landing page, gallery index, tutorials, search and index."""
    folder = site / seg
    found = [p.relative_to(folder).as_posix() for p in sorted(folder.rglob("*.html"))
             if not p.relative_to(folder).parts[0].startswith("_")]
    assert {"index.html", "beginner/index.html", "beginner/data_parallel_tutorial.html", "search.html"} <= set(found)
    return found


def head(site, seg, page):
    return Head((site / seg / page).read_text(encoding="utf-8"))


def in_language(text, seg):
    return not re.search(CJK, text) if seg == "en" else bool(re.search(SCRIPTS[seg], text))


def version_folder():
    name = versions.current(ENGINE, os.environ.get("VERSION", ""))  # what the `site` build is named
    return "stable" if versions.is_release(name) else name, name


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_every_page_has_a_description_and_open_graph_tags_in_its_language(site, seg):
    for page in pages(site, seg):
        tags = head(site, seg, page).meta
        description = tags["description"]
        assert len(description) == 1 and description == tags["og:description"], page
        assert column_width(description[0]) <= LIMIT and in_language(description[0], seg), (page, description)
        assert tags["og:locale"] == [OG_LOCALES[seg]]
        assert sorted(tags["og:locale:alternate"]) == sorted(v for k, v in OG_LOCALES.items() if k != seg)
        assert tags["og:type"] == ["article" if page.endswith("_tutorial.html") else "website"], page
        folder, _ = version_folder()  # its canonical address: its version's folder (stable/ for a release)
        assert tags["og:url"] == [f"{SITE_URL}/{folder}/{seg}/{page}"], page
        parsed = head(site, seg, page)
        assert tags["og:title"] == [parsed.title.split(" — ")[0]], page  # "<page> — <project>"
        assert tags["og:site_name"] == [parsed.title.split(" — ")[-1]] and in_language(tags["og:site_name"][0], seg)


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_a_description_is_the_pages_first_paragraph_else_the_sites(site, seg):
    for page in ["index.html", "beginner/index.html", "beginner/data_parallel_tutorial.html",
                 "beginner/ddp_tutorial.html"]:
        text = (site / seg / page).read_text(encoding="utf-8")
        description = head(site, seg, page).meta["description"][0]
        # The page's prose, in the order it reads: the first paragraph under the title, not a note, banner
        # or the provenance line (each of them in a <div> of its own, before it).
        body = re.search(r"<h1>.*?</h1>(.*)", text, re.S)[1]
        paragraphs = [plain_text(p) for p in re.findall(r"<p>(.*?)</p>", re.sub(r"<div.*?</div>", "", body, flags=re.S), re.S)]
        assert description.removesuffix(ELLIPSIS).rstrip() in paragraphs[0], (page, description, paragraphs[0])
    english = head(site, "en", "beginner/data_parallel_tutorial.html").meta["description"][0]
    assert english == ("A single machine often has more than one GPU. torch.nn.DataParallel is the quickest way to "
                       "let one model use all of them: you wrap the model once, and" + ELLIPSIS)
    for page in ["search.html", "genindex.html"]:
        description = head(site, seg, page).meta["description"][0]
        assert (description == SITE_DESCRIPTION) == (seg == "en"), page


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_the_title_and_a_tutorials_thumbnail_for_link_previews(site, seg):
    folder, name = version_folder()
    tutorial = head(site, seg, "beginner/data_parallel_tutorial.html")
    assert tutorial.meta["og:title"] == [re.sub(r"[\ue000-\uf8ff¶]", "", tutorial.h1).strip()]  # without the heading's link icon
    image = tutorial.meta["og:image"][0]
    # Where the thumbnail is in this build, in this version's folder of the published tree.
    assert image == f"{SITE_URL}/{name}/{seg}/_images/sphx_glr_data_parallel_tutorial_thumb.png"
    assert (site / seg / "_images" / "sphx_glr_data_parallel_tutorial_thumb.png").is_file()
    for page in ["index.html", "beginner/index.html", "search.html"]:
        assert "og:image" not in head(site, seg, page).meta, page


@pytest.mark.parametrize("seg", [lang.seg for lang in languages.ALL])
def test_hreflang_alternates_are_absolute_with_the_page_itself_and_english_as_default(site, seg):
    folder, _ = version_folder()
    for page in pages(site, seg):
        alternates = head(site, seg, page).alternates
        expected = {lang.hreflang: f"{SITE_URL}/{folder}/{lang.seg}/{page}" for lang in languages.ALL}
        assert alternates == {**expected, "x-default": expected["en"]}, page
    # The language switcher's links stay relative: they work from disk too.
    text = (site / seg / "beginner" / "ddp_tutorial.html").read_text(encoding="utf-8")
    assert re.findall(r'<a href="([^"]*)" hreflang="ja"', text) == ["../../ja/beginner/ddp_tutorial.html"]


def test_releases_alternates_point_at_stable_and_other_versions_at_their_folder():
    assert versions.published_url(SITE_URL + "/", "1.10", "ko", "index.html") == f"{SITE_URL}/stable/ko/index.html"
    assert versions.published_url(SITE_URL, "main", "ko", "index.html") == f"{SITE_URL}/main/ko/index.html"


@pytest.mark.site
def test_without_a_site_url_alternates_are_relative_and_absolute_tags_left_out(project_copy, tmp_path):
    conf = project_copy / "conf.py"
    conf.write_text(re.sub(r"(?m)^tutorials_site_url = .*$", 'tutorials_site_url = ""', conf.read_text()))
    result = build(project_copy, tmp_path / "b", "--noplot", env={"LANGUAGES": "en ja"})
    assert result.returncode == 0, result.stdout + result.stderr
    tags = head(tmp_path / "b" / "html", "ja", "beginner/data_parallel_tutorial.html")
    assert tags.alternates == {"en": "../../en/beginner/data_parallel_tutorial.html",
                               "ja": "../../ja/beginner/data_parallel_tutorial.html",
                               "x-default": "../../en/beginner/data_parallel_tutorial.html"}
    assert "og:url" not in tags.meta and "og:image" not in tags.meta and "canonical" not in tags.links
    assert in_language(tags.meta["description"][0], "ja")


def test_the_site_pages_describe_the_site_and_link_their_languages():
    langs = list(languages.ALL)
    published = Head(chooser_page(current(FIXTURES).conf, langs, langs[0], "stable/", canonical=f"{SITE_URL}/stable/en/index.html",
                                  site=f"{SITE_URL}/"))
    assert published.meta["description"] == [SITE_DESCRIPTION]
    assert published.alternates == {**{lang.hreflang: f"{SITE_URL}/stable/{lang.seg}/index.html" for lang in langs},
                                    "x-default": f"{SITE_URL}/stable/en/index.html"}
    local = Head(chooser_page(current(FIXTURES).conf, langs, langs[0]))  # a build's root, opened from disk
    assert local.alternates["ko"] == "ko/index.html" and local.alternates["x-default"] == "en/index.html"
    assert published.title == current(FIXTURES).conf["project"]  # the site's name, from its conf.py
    not_found = Head(not_found_page(current(FIXTURES).conf, f"{SITE_URL}/", langs))
    assert not_found.meta["description"] == [SITE_DESCRIPTION]
    assert not_found.title == f"Page not found · {current(FIXTURES).conf['project']}"


def test_the_site_pages_of_a_site_without_a_description_are_described_by_its_name():
    page = Head(chooser_page({"project": "Small"}, list(languages.ALL), languages.ALL[0]))
    assert (page.title, page.meta["description"]) == ("Small", ["Small"])


def test_the_chooser_sends_a_reader_of_none_of_the_languages_to_the_site_s_source_language():
    korean_first = [languages.BY_SEG["ko"], languages.BY_SEG["en"]]
    assert Head(chooser_page(current(FIXTURES).conf, korean_first, languages.BY_SEG["ko"])).alternates["x-default"] == "ko/index.html"
    assert Head(chooser_page(current(FIXTURES).conf, korean_first, languages.BY_SEG["en"])).alternates["x-default"] == "en/index.html"


def test_the_local_root_page_is_written_with_relative_alternates(site):
    root = Head((Path(site) / "index.html").read_text(encoding="utf-8"))
    assert root.alternates["zh-CN"] == "zh-cn/index.html" and root.meta["description"] == [SITE_DESCRIPTION]

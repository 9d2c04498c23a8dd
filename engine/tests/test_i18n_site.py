"""Every language a first-class site: translated pages and downloads, the English code and output."""

import ast
import html
import json
import re
import zipfile

import nbformat
import pytest
from markdown_it import MarkdownIt

from conftest import FIXTURE_TUTORIALS, FIXTURES
from tutorials_site.core import languages
from tutorials_site.core.site.checks import output_texts
from tutorials_site.core.text import translate

pytestmark = pytest.mark.site  # every test here builds a site

TRANSLATED = list(languages.TRANSLATED)
PAGE = "beginner/data_parallel_tutorial.html"
ENGLISH_SOURCE = FIXTURES / "beginner_source" / "data_parallel_tutorial.py"  # the tests' own: `site` builds site_project


outputs = output_texts


def downloads(site, lang):
    page = site / lang.seg / PAGE
    links = re.findall(r'<a class="reference download internal" download="" href="([^"]+)"', page.read_text())
    return {link.rsplit(".", 1)[1]: (page.parent / html.unescape(link)).resolve() for link in links}


def test_every_language_is_built_and_the_root_index_offers_them(site):
    for lang in languages.ALL:
        assert (site / lang.seg / PAGE).is_file()
    root = (site / "index.html").read_text()
    assert json.dumps([lang.seg for lang in languages.ALL]) in root


@pytest.mark.parametrize("lang", languages.ALL, ids=lambda lang: lang.seg)
def test_html_lang_and_the_switchers_relative_links(site, lang):
    """The language switcher links every language's page relatively (the head's alternates are absolute: test_meta)."""
    page = (site / lang.seg / PAGE).read_text()
    assert f'<html class="writer-html5" lang="{lang.hreflang}"' in page
    switcher = {hreflang: href for href, hreflang in re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', page)}
    assert switcher == {other.hreflang: f"../../{other.seg}/{PAGE}" for other in languages.ALL}
    for href in switcher.values():
        assert (site / lang.seg / "beginner" / href).resolve().is_file()


@pytest.mark.parametrize("lang", TRANSLATED, ids=lambda lang: lang.seg)
def test_page_and_downloads_are_translated_but_code_and_output_are_english(site, fixture_site, lang, monkeypatch):
    english_page = (site / "en" / PAGE).read_text()
    page = (site / lang.seg / PAGE).read_text()
    assert outputs(page) == outputs(english_page)

    [tutorial] = [t for t in fixture_site.tutorials if t.label == FIXTURE_TUTORIALS[0]]
    generated, report = translate.generate(fixture_site, lang, tutorial)  # the catalogs `site` was built with
    title = ast.get_docstring(ast.parse(generated)).splitlines()[0]
    assert title != "Optional: Data Parallelism" and title in page

    files = downloads(site, lang)
    script = files["py"].read_text()
    assert title in script and translate._code_tree(script, "x") == translate._code_tree(ENGLISH_SOURCE.read_text(), "x")
    notebook = nbformat.read(files["ipynb"], as_version=4)
    markdown = "".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert title in markdown and "Optional: Data Parallelism" not in markdown
    english_code = [c.source for c in nbformat.read(downloads(site, languages.ALL[0])["ipynb"], as_version=4).cells
                    if c.cell_type == "code"]
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert [re.sub(r"#.*", "", c) for c in code] == [re.sub(r"#.*", "", c) for c in english_code]
    with zipfile.ZipFile(files["zip"]) as archive:
        assert archive.read("data_parallel_tutorial.py").decode() == script


@pytest.mark.parametrize("lang", TRANSLATED, ids=lambda lang: lang.seg)
def test_gallery_strings_and_colab_link_are_in_the_pages_language(site, lang):
    page = (site / lang.seg / PAGE).read_text()
    for english in ("Download Jupyter notebook", "Download Python source code", "Download zipped",
                    "Go to the end", "Total running time of the script", "Open in Colab", "Output captured on",
                    "written for 2 GPUs"):
        assert english not in page, english
    colab = re.search(r'<a class="colab-link reference external" href="([^"]+)"', page)[1]
    assert f"/{lang.seg}/_downloads/" in colab


@pytest.mark.parametrize("lang", TRANSLATED, ids=lambda lang: lang.seg)
def test_a_fully_translated_page_has_no_banner(site, lang):
    for page in (PAGE, "index.html", "beginner/index.html"):
        assert "translation-incomplete" not in (site / lang.seg / page).read_text(), page


def tutorial_downloads(site, fixture_site):
    """(language, tutorial, {extension: file}) of every tutorial page of every language."""
    for lang in languages.ALL:
        for tutorial in fixture_site.tutorials:
            page = site / lang.seg / tutorial.gallery.gallery_dir / tutorial.rel.with_suffix(".html")
            links = re.findall(r'<a class="reference download internal" download="" href="([^"]+)"',
                               page.read_text())
            yield lang, tutorial, {link.rsplit(".", 1)[1]: (page.parent / html.unescape(link)).resolve()
                                   for link in links}


def reading_faults(markdown):
    """What a reader of the Markdown cell would see that no hand-written notebook shows: reST escapes and roles,
    unbalanced backticks, emphasis markers CommonMark left as text."""
    rendered = MarkdownIt("commonmark").render(markdown)
    code = "\N{OBJECT REPLACEMENT CHARACTER}"  # where a code span was: what a role's name would stand before
    text = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<code>.*?</code>", code, rendered, flags=re.S)))
    faults = [f"{what}: ...{text[max(0, m.start() - 20):m.end() + 20]}..."
              for what, pattern in (("reST escape", r"\\\s"), ("role", rf":[\w:-]+:[`{code}]"), ("backtick", "`"),
                                    ("emphasis marker", r"\*\*|(?<![\w*])\*(?=\S)"))
              for m in re.finditer(pattern, text)]
    return faults


def test_every_notebook_reads_as_markdown_written_by_hand(site, fixture_site):
    checked = 0
    for lang, tutorial, files in tutorial_downloads(site, fixture_site):
        notebook = nbformat.read(files["ipynb"], as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                assert not reading_faults(cell.source), (lang.seg, tutorial.label, reading_faults(cell.source))
                checked += 1
        if lang in TRANSLATED:  # and no line break the page does not show: none between two CJK characters
            markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
            assert lang.spaced or not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]\n[\u3040-\u30ff\u4e00-\u9fff]",
                                                markdown), lang.seg
    assert checked > 40


def test_the_reading_check_finds_what_sphinx_gallery_leaves_in_markdown():
    faults = reading_faults("``DataParallel``\\ 은 :class:`torch.nn.DataParallel` **(rank)**은 `x``")
    assert [fault.split(":")[0] for fault in faults] == ["reST escape", "role", *["backtick"] * 3,
                                                         *["emphasis marker"] * 2]
    assert reading_faults("``DataParallel``은 ``torch.nn.DataParallel`` <strong>(rank)</strong>은") == []


def test_every_downloaded_script_has_the_english_line_structure_and_no_doubled_escapes(site, fixture_site):
    english = {}
    for lang, tutorial, files in tutorial_downloads(site, fixture_site):
        lines = files["py"].read_text().splitlines()
        if lang == languages.ALL[0]:
            english[tutorial.key] = lines
            continue
        # The same lines, each blank of the English blank here: a paragraph's place is kept. A translation with
        # fewer places to break than the English's lines is padded with blank lines after its text (wrap).
        blank = [line.strip() in ("", "#") for line in lines]
        english_blank = [line.strip() in ("", "#") for line in english[tutorial.key]]
        assert len(blank) == len(english_blank), (lang.seg, tutorial.label)
        assert all(blank[row] for row, empty in enumerate(english_blank) if empty), (lang.seg, tutorial.label)
        docstring = ast.get_docstring(ast.parse("\n".join(lines)), clean=False)
        assert "\\\\" not in "\n".join(lines) and "\\ " in docstring, (lang.seg, tutorial.label)

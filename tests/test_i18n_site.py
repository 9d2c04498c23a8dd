"""Every language a first-class site: translated pages and downloads, the English code and output."""

import ast
import html
import json
import re
import zipfile

import nbformat
import pytest

from tutorials_site.core import languages, project, translate
from tutorials_site.core.checks import output_texts
from tutorials_site.core.layout import ROOT

pytestmark = pytest.mark.site  # every test here builds a site

TRANSLATED = list(languages.TRANSLATED)
PAGE = "beginner/data_parallel_tutorial.html"
ENGLISH_SOURCE = ROOT / "beginner_source" / "data_parallel_tutorial.py"


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
def test_page_and_downloads_are_translated_but_code_and_output_are_english(site, lang):
    english_page = (site / "en" / PAGE).read_text()
    page = (site / lang.seg / PAGE).read_text()
    assert outputs(page) == outputs(english_page)

    [tutorial] = [t for t in project.current().tutorials if t.path == ENGLISH_SOURCE]
    generated, report = translate.generate(lang, tutorial)
    title = ast.get_docstring(ast.parse(generated)).splitlines()[0]
    assert title != "Optional: Data Parallelism" and title in page

    files = downloads(site, lang)
    script = files["py"].read_text()
    assert title in script and translate._code_tree(script, "x") == translate._code_tree(ENGLISH_SOURCE.read_text(), "x")
    notebook = nbformat.read(files["ipynb"], as_version=4)
    markdown = "".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert title in markdown and "Optional: Data Parallelism" not in markdown
    english_code = [c.source for c in nbformat.read(downloads(site, languages.SOURCE)["ipynb"], as_version=4).cells
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

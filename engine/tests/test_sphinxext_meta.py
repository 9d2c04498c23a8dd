"""sphinxext.meta: a page's description and Open Graph tags, in its language."""

import html
import re

import pytest
from docutils import nodes
from sphinx_gallery.directives import imgsgnode

from conftest import FIXTURES
from tutorials_site.core.project import current
from tutorials_site.core.site.summaries import summary
from tutorials_site.sphinxext import meta

PAGE = "beginner/data_parallel_tutorial"
SITE_DESCRIPTION = current(FIXTURES).conf["tutorials_site_description"]  # conf.py's
THUMB = "beginner/images/thumb/sphx_glr_data_parallel_tutorial_thumb.png"


def page(*children):
    document = nodes.document(None, None)
    document += nodes.section("", nodes.title("", "A title"), *children)
    return document


def tags(context):
    """(attribute, name, content) of each tag the page's head gets."""
    return [(kind, name, html.unescape(content)) for kind, name, content in
            re.findall(r'\n<meta (name|property)="([^"]+)" content="([^"]*)">', context["metatags"])]


def context_of(app, pagename, doctree, title="Optional: <em>Data</em> Parallelism", templatename="page.html"):
    context = {"title": title, "metatags": ""}
    meta.add_page_context(app, pagename, templatename, context, doctree)
    return context


def test_the_description_is_the_first_paragraph_of_prose(untranslated):
    doctree = page(nodes.note("", nodes.paragraph("", "A note first.")),
                   nodes.container("", nodes.paragraph("", "Output captured on CPU"), classes=["tutorial-provenance"]),
                   nodes.paragraph("", "   "), nodes.paragraph("", "The first sentence of prose."),
                   nodes.paragraph("", "The second."))
    assert meta.first_paragraph(doctree) == "The first sentence of prose."
    assert meta.first_paragraph(page(nodes.note("", nodes.paragraph("", "Only a note.")))) is None


def test_a_tutorial_page_is_an_article_with_its_address_thumbnail_and_other_languages(fake_app):
    app = fake_app(language="en", version="main", tutorials_built_languages=("en", "ko", "ja"),
                   tutorials_site_url="https://example.org/site/")
    app.env.images[THUMB] = ({PAGE}, "sphx_glr_data_parallel_tutorial_thumb.png")
    long = "Learn to use DataParallel & friends " * 10
    found = tags(context_of(app, PAGE, page(nodes.paragraph("", long), imgsgnode())))
    assert found == [
        ("name", "description", summary(long, "en")),
        ("property", "og:title", "Optional: Data Parallelism"),
        ("property", "og:description", summary(long, "en")),
        ("property", "og:type", "article"),
        ("property", "og:site_name", "PyTorch Tutorials"),
        ("property", "og:locale", "en_US"),
        ("property", "og:locale:alternate", "ko_KR"),
        ("property", "og:locale:alternate", "ja_JP"),
        ("property", "og:url", "https://example.org/site/main/en/beginner/data_parallel_tutorial.html"),  # its canonical
        ("property", "og:image", "https://example.org/site/main/en/_images/sphx_glr_data_parallel_tutorial_thumb.png"),
    ]
    assert summary(long, "en") != long  # shortened


@pytest.mark.parametrize("drawn, registered", [(False, True), (True, False)])
def test_a_tutorial_without_a_figure_of_its_own_has_no_image(fake_app, drawn, registered):
    app = fake_app(tutorials_site_url="https://example.org/site/")
    if registered:  # sphinx-gallery's placeholder thumbnail
        app.env.images[THUMB] = ({PAGE}, "sphx_glr_data_parallel_tutorial_thumb.png")
    doctree = page(nodes.paragraph("", "Prose."), *([imgsgnode()] if drawn else []))
    assert "og:image" not in [name for _, name, _ in tags(context_of(app, PAGE, doctree))]


def test_a_site_page_is_a_website_described_by_the_site_and_without_a_url_none_is_absolute(fake_app, sphinx_catalog):
    sphinx_catalog("ko", {SITE_DESCRIPTION: "네 가지 언어의 파이토치 튜토리얼", "Search": "검색"})
    app = fake_app(language="ko", tutorials_built_languages=("ko",), tutorials_site_url="")
    found = tags(context_of(app, "search", None, title="", templatename="search.html"))
    assert found == [("name", "description", "네 가지 언어의 파이토치 튜토리얼"), ("property", "og:title", "검색"),
                     ("property", "og:description", "네 가지 언어의 파이토치 튜토리얼"), ("property", "og:type", "website"),
                     ("property", "og:site_name", "PyTorch Tutorials"), ("property", "og:locale", "ko_KR")]


def test_a_site_without_a_description_of_its_own_is_described_by_its_name(fake_app):
    app = fake_app(tutorials_site_description="", project="Small", tutorials_site_url="")
    found = dict((name, value) for _, name, value in tags(context_of(app, "search", None, title="", templatename="search.html")))
    assert found["description"] == found["og:description"] == "Small"

def test_tags_come_after_the_page_s_own_and_their_values_are_escaped(fake_app):
    context = {"title": "t", "metatags": '<meta charset="utf-8">'}
    meta.add_page_context(fake_app(tutorials_site_url=""), "index", "page.html", context,
                          page(nodes.paragraph("", 'Say "hi" <b>')))
    assert context["metatags"].startswith('<meta charset="utf-8">\n<meta name="description" '
                                          'content="Say &quot;hi&quot; &lt;b&gt;">')


def test_setup_connects_the_tags(fake_app):
    assert ("html-page-context", meta.add_page_context, 500) in fake_app().connected


def test_a_site_with_its_own_open_graph_extension_gets_no_second_set_of_tags(fake_app):
    app = fake_app(language="en")
    app.extensions = {"sphinxext.opengraph": object()}
    context = {"title": "A page", "metatags": ""}
    meta.add_page_context(app, "index", "page.html", context, None)
    assert 'name="description"' in context["metatags"] and "og:" not in context["metatags"]


@pytest.mark.parametrize("head", ['<meta name="description" content="The page\'s own">',
                                  "<meta content='An extension&#39;s' name='description' />"])
def test_a_page_with_a_description_of_its_own_gets_no_second(fake_app, head):
    context = {"title": "A page", "metatags": head}
    meta.add_page_context(fake_app(tutorials_site_url=""), "index", "page.html", context,
                          page(nodes.paragraph("", "Prose.")))
    assert context["metatags"].count("description") == 2 and 'property="og:description"' in context["metatags"]

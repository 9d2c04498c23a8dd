"""sphinxext.i18n: every string of a page in its language, and a banner where passages are still in English."""

import hashlib
import json
import logging
import re
from types import SimpleNamespace

import pytest
from docutils import nodes
from sphinx_gallery.directives import imgsgnode

from conftest import FIXTURES
from tutorials_site.core import assets, languages
from tutorials_site.core.runs.records import RecordError
from tutorials_site.core.site.staging import TranslationStatus
from tutorials_site.sphinxext import i18n

PAGE = "beginner/data_parallel_tutorial"


def page(title, *children):
    document = nodes.document(None, None)
    document += nodes.section("", nodes.title("", title), *children)
    return document


def prose(text, source="index.rst"):
    """A paragraph as Sphinx reads it from a file: a message to translate."""
    paragraph = nodes.paragraph(text, text)
    paragraph.source, paragraph.line = source, 3
    return paragraph


# --- sphinx-gallery's strings, figures and thumbnails ------------------------------------------------------

def test_sphinx_gallery_s_strings_are_translated_as_templates_keeping_values_and_spacing(fake_app, sphinx_catalog):
    sphinx_catalog("ko", {"Download Python source code: {filename}": "Python 소스 코드 다운로드: {filename}"})
    doctree = page("A title", nodes.paragraph("", " Download Python source code: demo.py "),
                   nodes.paragraph("", "Download the data first."))
    i18n.translate_gallery_strings(fake_app(language="ko"), doctree, PAGE)
    assert [p.astext() for p in doctree.findall(nodes.paragraph)] == [" Python 소스 코드 다운로드: demo.py ",
                                                                       "Download the data first."]
    english = page("A title", nodes.paragraph("", "Download Python source code: demo.py"))
    i18n.translate_gallery_strings(fake_app(language="en"), english, PAGE)
    assert english.next_node(nodes.paragraph).astext() == "Download Python source code: demo.py"


def figure(number, alt, srcset=None):
    return imgsgnode(uri=f"/beginner/images/sphx_glr_drawing_a_line_{number:03}.png", alt=alt, srcset=srcset)


def test_a_figure_named_after_its_file_is_labelled_with_its_number_and_the_page_s_title(fake_app, sphinx_catalog):
    sphinx_catalog("ja", {"Figure {number} of {title}": "{title} の図 {number}"})
    doctree = page("Drawing <a> line", figure(1, "drawing a line"), figure(2, "drawing a line", srcset="x 2x"),
                   figure(3, "What the author wrote"))
    i18n.label_figures(fake_app(language="ja"), doctree, PAGE)
    # With a srcset, sphinx-gallery writes the alt text into the page as it is: it gets it escaped.
    assert [image["alt"] for image in doctree.findall(imgsgnode)] == [
        "Drawing <a> line の図 1", "Drawing &lt;a&gt; line の図 2", "What the author wrote"]


def test_thumbnail_tooltips_lose_the_rest_of_their_rest(fake_app):
    app = fake_app()
    app.env.labels["sphx_glr_beginner_ddp_tutorial.py"] = ("beginner/ddp_tutorial", "", "Getting started with DDP")
    tooltip = r"PyTorch\ 를 배우기, \*stars\*, see sphx_glr_beginner_ddp_tutorial.py &amp; sphx_glr_gone.py"
    thumbnail = f'<div class="sphx-glr-thumbcontainer" tooltip="{tooltip}">'
    doctree = page("A gallery", nodes.raw("", thumbnail, format="html"), nodes.raw("", '<p tooltip="a\\ b">', format="html"))
    i18n.clean_thumbnail_tooltips(app, doctree, "beginner/index")
    assert [raw.astext() for raw in doctree.findall(nodes.raw)] == [
        '<div class="sphx-glr-thumbcontainer" tooltip="PyTorch를 배우기, *stars*, see Getting started with DDP '
        '&amp; sphx_glr_gone.py">', '<p tooltip="a\\ b">']


# --- labels other scripts write, and the templates ---------------------------------------------------------

def test_the_labels_of_other_packages_scripts_are_handed_over_translated(fake_app, sphinx_catalog):
    sphinx_catalog("zh_CN", {"Copy": "复制", "Open/close menu": "打开/关闭菜单"})
    app = fake_app(language="zh_CN")
    i18n.script_labels(app)
    [(name, priority, attributes)] = app.js_files
    assert (name, priority) == ("labels.js", 501)  # after copybutton.js
    labels = json.loads(attributes["data-labels"])
    assert labels["copybutton"]["copy"] == "复制" and labels["expand"] == "打开/关闭菜单"
    assert labels["copybutton"]["copy_success"] == "Copied!"  # not translated: as written
    english = fake_app(language="en")
    i18n.script_labels(english)
    assert english.js_files == []


def css_unescaped(quoted):
    assert quoted[0] == quoted[-1] == '"'
    return re.sub(r"\\([0-9a-f]+) ", lambda m: chr(int(m[1], 16)), quoted[1:-1])


@pytest.mark.parametrize("text", ["Plain words 한국어", 'a "quote" and \\ back', "</style><script>x</script>", "line\nbreak"])
def test_css_string_escapes_all_but_letters_digits_and_spaces(text):
    quoted = i18n.css_string(text)
    assert re.fullmatch(r'"[\w \\]*"', quoted) and css_unescaped(quoted) == text


def test_templates_get_the_css_string_filter(fake_app):
    app = fake_app()
    i18n.add_template_filters(app)
    assert app.builder.templates.environment.filters["css_string"] is i18n.css_string
    app.builder = object()  # a builder without templates
    i18n.add_template_filters(app)


# --- the languages of the site -----------------------------------------------------------------------------

def test_the_site_s_languages_are_those_built_all_by_default(fake_app):
    assert i18n.site_languages(fake_app()) == list(languages.ALL)
    assert [lang.code for lang in i18n.site_languages(fake_app(tutorials_built_languages=("zh-cn", "en")))] == ["zh_CN", "en"]


@pytest.mark.parametrize("pagename, expected", [("index", "../ja/index.html"),
                                                ("beginner/basics/demo", "../../../ja/beginner/basics/demo.html")])
def test_a_page_in_another_language_is_reached_relatively(pagename, expected):
    assert i18n.page_url(pagename, "ja", pagename) == expected


def test_the_page_context_has_the_switcher_alternates_and_translated_names(fake_app, sphinx_catalog):
    sphinx_catalog("ko", {"PyTorch Tutorials": "파이토치 튜토리얼"})
    app = fake_app(language="ko", version="1.0", tutorials_built_languages=("en", "ko"),
                   tutorials_site_url="https://example.org/site/")
    context = {"metatags": ""}
    i18n.add_page_context(app, PAGE, "page.html", context, None)
    assert context["site_languages"] == [
        {"seg": "en", "name": "English", "hreflang": "en", "url": "../../en/beginner/data_parallel_tutorial.html",
         "current": False},
        {"seg": "ko", "name": "한국어", "hreflang": "ko", "url": "../../ko/beginner/data_parallel_tutorial.html",
         "current": True}]
    assert context["current_language"] is languages.BY_CODE["ko"]
    assert context["project"] == context["docstitle"] == "파이토치 튜토리얼"
    assert context["copyright"] == app.config.copyright  # not in this catalog: as written
    url = "https://example.org/site/stable/{}/beginner/data_parallel_tutorial.html"  # a release's: its stable copy
    assert context["metatags"] == "".join(f'\n<link rel="alternate" hreflang="{hreflang}" href="{url.format(seg)}">'
                                          for hreflang, seg in [("en", "en"), ("ko", "ko"), ("x-default", "en")])
    relative = {"metatags": ""}
    i18n.add_page_context(fake_app(language="ko", tutorials_built_languages=("ko",), tutorials_site_url=""), "index",
                          "page.html", relative, None)
    assert relative["metatags"] == ('\n<link rel="alternate" hreflang="ko" href="../ko/index.html">'
                                    '\n<link rel="alternate" hreflang="x-default" href="../ko/index.html">')


# --- passages still in English -----------------------------------------------------------------------------

@pytest.fixture
def logged(monkeypatch):
    """What the i18n module logs in this test: each record's attributes and message, as it was emitted."""
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(SimpleNamespace(**vars(record), message=record.getMessage()))
    logger = logging.getLogger(f"sphinx.{i18n.__name__}")
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def test_a_site_page_with_untranslated_messages_gets_a_banner_under_its_title(fake_app, logged):
    app = fake_app(language="ja")
    app.env.docname = "index"
    translated = prose("Translated.")
    translated["translated"] = True
    doctree = page("A title", prose("Nobody translated this."), translated)
    i18n.mark_untranslated(app, doctree)
    section = doctree.next_node(nodes.section)
    banner = section.children[1]
    assert isinstance(banner, nodes.warning) and banner["classes"] == ["translation-incomplete"]
    assert banner.astext() == ("1 passage(s) of this page are not translated yet and are shown in 英語. "
                               "Read the page in 英語.")  # the name in the page's language, the sentence untranslated here
    assert banner.next_node(nodes.reference)["refuri"] == "../en/index.html"
    assert logged == []  # a warning under STRICT=1 only


def test_a_tutorial_page_counts_what_the_build_wrote_beside_its_script_and_depends_on_it(fake_app, logged):
    app = fake_app(language="ko", tutorials_strict=True)
    status = app.srcdir / "beginner_source" / "data_parallel_tutorial.i18n.json"
    status.parent.mkdir(parents=True)
    TranslationStatus(total=12, english=3).write(status)
    app.env.docname = PAGE
    doctree = page("A tutorial", prose("Nobody translated this either.", source=f"{PAGE}.rst"))
    i18n.mark_untranslated(app, doctree)
    assert doctree.next_node(nodes.warning).astext().startswith("3 passage(s) of this page")
    assert app.env.dependencies[PAGE] == {str(status)}
    status.write_text(status.read_text().replace('"format": 1', '"format": 0'))  # staged by another version
    with pytest.raises(RecordError, match=rf"^{status}: a translation status \(\.i18n\.json\) of format 0;"):
        i18n.mark_untranslated(app, doctree)
    [record] = logged
    assert (record.levelname, record.type, record.subtype, record.location) == ("WARNING", "tutorials",
                                                                                "untranslated", PAGE)
    assert record.message == "3 passage(s) not translated into ko, shown in English"


def test_an_english_or_fully_translated_page_is_left_alone(fake_app, logged):
    for language, paragraph in (("en", prose("English.")), ("ko", nodes.paragraph("", "Built-in, no source."))):
        app = fake_app(language=language, tutorials_strict=True)
        app.env.docname = "index"
        doctree = page("A title", paragraph)
        before = doctree.pformat()
        i18n.mark_untranslated(app, doctree)
        assert doctree.pformat() == before
    assert logged == []


def test_the_label_catalog_s_digest_is_a_value_pages_are_read_with(fake_app):
    app = fake_app(language="ko")
    app.config.locale_dirs = ["_locale", "missing"]
    engine = assets.label_po(languages.BY_CODE["ko"]).read_bytes()  # the engine's labels, always there
    i18n.note_label_catalog(app, app.config)
    assert app.config.tutorials_label_catalog == hashlib.sha256(engine).hexdigest()  # no site catalog yet
    mo = app.srcdir / "_locale" / "ko" / "LC_MESSAGES" / "sphinx.mo"
    mo.parent.mkdir(parents=True)
    mo.write_bytes(b"compiled labels")
    i18n.note_label_catalog(app, app.config)
    assert app.config.tutorials_label_catalog == hashlib.sha256(b"compiled labels" + engine).hexdigest()


def test_setup_connects_each_handler_to_its_event(fake_app):
    connected = {(event, handler) for event, handler, _ in fake_app().connected}
    assert {("config-inited", i18n.note_label_catalog), ("doctree-read", i18n.mark_untranslated),
            ("doctree-resolved", i18n.translate_gallery_strings), ("doctree-resolved", i18n.label_figures),
            ("doctree-resolved", i18n.clean_thumbnail_tooltips), ("builder-inited", i18n.script_labels),
            ("builder-inited", i18n.add_template_filters), ("html-page-context", i18n.add_page_context)} <= connected


@pytest.mark.parametrize("lang, translated, shown", [("ja", "（{minutes} 分 {seconds} 秒）", "（0 分 4.2 秒）"),
                                                    ("ko", "({minutes}분 {seconds}초)", " (0분 4.2초)")])
def test_full_width_punctuation_takes_no_space_before_it_in_japanese_and_chinese(fake_app, sphinx_catalog, lang,
                                                                                 translated, shown):
    sphinx_catalog(lang, {"({minutes} minutes {seconds} seconds)": translated})
    doctree = page("A title", nodes.paragraph("", "", nodes.strong("", "Total"), nodes.Text(" (0 minutes 4.2 seconds)")))
    i18n.translate_gallery_strings(fake_app(language=lang), doctree, PAGE)
    assert doctree.next_node(nodes.paragraph).astext() == "Total" + shown


def test_line_breaks_between_two_cjk_characters_go_from_japanese_and_chinese_prose_only(fake_app):
    def doctree():
        return page("A title", nodes.paragraph("", "1 台のマシンに搭載された複数の GPU\nに各バッチを分散させ\nました。"),
                    nodes.literal_block("", "x = 1  # 分散させ\nました"))

    japanese = doctree()
    i18n.join_wide_line_breaks(fake_app(language="ja"), japanese)
    assert japanese.next_node(nodes.paragraph).astext() == "1 台のマシンに搭載された複数の GPU\nに各バッチを分散させました。"
    assert japanese.next_node(nodes.literal_block).astext() == "x = 1  # 分散させ\nました"
    korean = doctree()
    i18n.join_wide_line_breaks(fake_app(language="ko"), korean)
    assert korean.next_node(nodes.paragraph).astext().count("\n") == 2


def test_a_build_of_another_language_reads_the_source_language_s_directive_names(sphinx_app):
    from tutorials_site.core.project import current

    options = current(FIXTURES).options
    conf = (f"language = 'ko'\nextensions = ['sphinx_gallery.gen_gallery', 'tutorials_site.sphinxext']\n"
            f"sphinx_gallery_conf = {options!r}\nexclude_patterns = {list(options['examples_dirs'])!r}\n")
    app, _, warnings = sphinx_app({"conf.py": conf, "index.rst": "제목\n====\n\n.. 경고::\n\n   조심하세요.\n"},
                                  language="en")
    app.build()
    page = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert "Unknown directive" not in warnings.getvalue() and 'class="admonition warning"' in page


def test_sphinx_s_own_directives_stay_in_a_build_of_another_language(sphinx_app):
    app, _, warnings = sphinx_app({"index.rst": "Title\n=====\n\n.. code-block:: python\n   :dedent: 4\n\n"
                                                "       x = 1\n"}, language="ko")
    app.build()
    assert "unknown option" not in warnings.getvalue(), warnings.getvalue()


@pytest.mark.parametrize("docname", ["sg_execution_times", "beginner/sg_execution_times"])
def test_sphinx_gallery_s_tables_of_timings_get_no_banner(fake_app, logged, docname):
    app = fake_app(language="ja", tutorials_strict=True)
    app.env.docname = docname
    doctree = page("Computation times", prose("00:01.234 total execution time for 2 files"))
    i18n.mark_untranslated(app, doctree)
    assert doctree.next_node(nodes.warning) is None and logged == []

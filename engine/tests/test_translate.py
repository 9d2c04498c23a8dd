"""Generated sources: only checked translations are used, and the code is always the English code."""

import pytest
from babel.messages.catalog import Catalog

from conftest import FIXTURE_TUTORIALS, FIXTURES
from tutorials_site.commands import catalogs as catalogs_command
from tutorials_site.core import languages
from tutorials_site.core.files import shown
from tutorials_site.core.project import Project, current
from tutorials_site.core.text import catalogs, translate, tutorial_text
from tutorials_site.core.text.translate import check_translation, generate
from tutorials_site.core.text.tutorial_text import Unit

PARAGRAPH = Unit("paragraph", "Wrap the model in :class:`torch.nn.DataParallel` first.", [0])


@pytest.mark.parametrize("msgstr", [
    "먼저 모델을 :class:`torch.nn.DataParallel`\\ 로 감쌉니다.",
    "``DataParallel``\\ 을 씁니다.",
    "`링크 <https://pytorch.org/docs/>`_\\ 를 보세요.",
    "**굵게** 그리고 *기울임*",
])
def test_valid_translations_are_accepted(msgstr):
    assert check_translation(PARAGRAPH, msgstr) is None


@pytest.mark.parametrize("msgstr, reason", [
    ("``DataParallel``을 씁니다.", "breaks reST: Inline literal start-string without end-string"),
    ("**굵게 끝이 없음", "breaks reST: Inline strong start-string without end-string"),
    (".. raw:: html\n\n   <script>alert(1)</script>", "breaks reST"),
    ("보기 :raw:`<b>x</b>` 끝", "breaks reST: raw (and derived) roles disabled"),
    (".. include:: /etc/passwd", 'breaks reST: "include" directive disabled'),
    ("`클릭 <javascript:alert(1)>`_", "only http, https and mailto links are allowed"),
    ("안녕 <script>alert(1)</script>", "contains an HTML tag"),
    ("<img src=x onerror=alert(1)>", "contains an HTML tag"),
    ("- 목록이 되어 버린 문단", "must stay one paragraph of text, became: bullet_list"),
    ("다음 코드::", "a paragraph introducing a literal block must keep its closing '::'"),
    ("알 수 없는 :foo:`역할`", 'Unknown interpreted text role "foo"'),
])
def test_breaking_or_unsafe_translations_are_refused(msgstr, reason):
    assert reason in check_translation(PARAGRAPH, msgstr)


@pytest.mark.parametrize("lang", languages.TRANSLATED, ids=lambda lang: lang.seg)
@pytest.mark.parametrize("tutorial", current(FIXTURES).tutorials, ids=lambda t: t.key)  # the shipped ones, however many
def test_every_generated_source_has_the_english_code_and_line_numbers(lang, tutorial):
    """About the shipped tutorials and their catalogs: each one's translated sources, whatever the repository holds."""
    text, report = generate(current(FIXTURES), lang, tutorial)
    path = tutorial.path
    english = path.read_text()
    assert translate._code_tree(text, "x") == translate._code_tree(english, "x")
    assert text.count("\n") == english.count("\n")
    assert report.total == len(tutorial_text.parse(path).units)


def _catalog_with(project, entries):
    """(the site at PROJECT, Korean, its data_parallel_tutorial) with a Korean catalog of ENTRIES alone."""
    site = Project.read(project)
    lang = languages.BY_SEG["ko"]
    [tutorial] = [t for t in site.tutorials if t.label == FIXTURE_TUTORIALS[0]]
    catalog = Catalog(locale="ko")
    for msgid, msgstr in entries.items():
        catalog.add(msgid, msgstr)
    catalogs.save(catalog, catalogs.tutorial_po(site, lang, tutorial))
    return site, lang, tutorial


def test_a_refused_translation_falls_back_to_english_naming_catalog_line_and_message(project_copy):
    title = "Optional: Data Parallelism"
    site, lang, tutorial = _catalog_with(project_copy, {
        title: "<b>데이터 병렬</b>",
        "Summary": "요약",
    })
    text, report = generate(site, lang, tutorial)
    assert title in text and "<b>" not in text and "\n# 요약\n" in text
    [problem] = report.problems
    assert problem.startswith(shown(catalogs.tutorial_po(site, lang, tutorial))) and ":" in problem
    assert f"msgid {title!r}: contains an HTML tag; shown in English" in problem
    assert report.english == report.total - 1


LITERAL = "Wrap the model in ``DataParallel``"


def test_one_rule_says_which_translations_are_used_and_which_stop_the_build():
    unit = Unit("heading", LITERAL, [0])
    assert translate.refusal(unit, "``DataParallel`` 로 모델 감싸기") is None
    assert translate.refusal(unit, "<b>모델</b> ``DataParallel``") == translate.Refusal("contains an HTML tag", False)
    changed = translate.refusal(unit, "``DistributedDataParallel`` 로 모델 감싸기")
    assert changed.stops_build and changed.reason.startswith(
        "the translation has the inline code ``DistributedDataParallel`` where the English has the inline code "
        "``DataParallel``")


def test_the_build_and_i18n_status_apply_the_same_rule(project_copy, capsys):
    title = "Optional: Data Parallelism"
    site, lang, tutorial = _catalog_with(project_copy, {title: "<b>데이터 병렬</b>", "Summary": "요약",
                                                        LITERAL: "``DistributedDataParallel`` 로 모델 감싸기"})
    with pytest.raises(translate.TranslationError, match=f"msgid {LITERAL!r}: the translation has the inline code"):
        generate(site, lang, tutorial)
    catalogs_command.status(site, [lang])
    total = len(tutorial_text.parse(tutorial.path).units)
    assert f"ko {tutorial.key} translated=1 fuzzy=0 untranslated={total - 1} " in capsys.readouterr().out


def test_a_source_whose_code_would_differ_is_refused(project_copy, monkeypatch):
    site, lang, tutorial = _catalog_with(project_copy, {})
    monkeypatch.setattr(tutorial_text, "render", lambda text, usable, spaced: tutorial.path.read_text() + "import os\n")
    with pytest.raises(translate.TranslationError, match="differs from .* in code or line numbers"):
        generate(site, lang, tutorial)


def message(msgid, where="index.md"):
    from babel.messages.catalog import Message

    return Message(msgid, locations=[(where, 1)])


@pytest.mark.parametrize("msgid, msgstr, where, reason", [
    ("Download any tutorial.", "튜토리얼을 받으세요. <script>alert(1)</script>", "index.md", "contains an HTML tag"),
    ("Download any tutorial.", "{doc}`index` 받으세요", "index.md", "adds a MyST role"),
    ("Download any tutorial.", "[여기](javascript:alert(1))", "index.md", "javascript:"),
    ("Beginner tutorials", ".. raw:: html\n\n   <script>", "beginner/index.rst", "breaks reST"),
])
def test_unsafe_page_translations_are_refused(msgid, msgstr, where, reason):
    assert reason in translate.check_page_translation(message(msgid, where), msgstr)


def test_page_translations_that_keep_to_text_are_accepted():
    assert translate.check_page_translation(message("Open it in **Colab**."), "**Colab**에서 여세요.") is None


@pytest.mark.parametrize("msgstr, reason", [
    ("&#169; <a href=\"%(path)s\">저작권</a>", None),
    ("&#169; 저작권", "placeholders differ"),
    ("&#169; <a href=\"%(path)s\" onclick=\"alert(1)\">저작권</a>", "HTML tags differ"),
    ("&#169; <a href=\"%(path)s\">저작권</a><script>alert(1)</script>", "HTML tags differ"),
])
def test_labels_keep_the_english_placeholders_and_tags(msgstr, reason):
    result = translate.check_label_translation(message('&#169; <a href="%(path)s">Copyright</a>', "t.html"), msgstr)
    assert result is None if reason is None else reason in result


@pytest.mark.site
def test_injected_markup_reaches_neither_the_page_nor_the_downloads(project_copy):
    from conftest import build

    ja = project_copy / "locales" / "ja" / "LC_MESSAGES"
    tutorial_po = ja / "beginner_source" / "data_parallel_tutorial.po"
    tutorial_po.write_text(tutorial_po.read_text().replace('msgstr "まとめ"', 'msgstr "まとめ <img src=x onerror=alert(1)>"'))
    site_po = ja / "beginner" / "index.po"  # the gallery's index: its header's text
    text = site_po.read_text()
    at = text.index('msgid "Beginner tutorials"')
    site_po.write_text(text[:at] + text[at:].replace('msgstr "', 'msgstr "<script>alert(2)</script>', 1))
    builddir = project_copy / "_build"
    result = build(project_copy, builddir, "--noplot", env={"LANGUAGES": "ja"})
    assert result.returncode == 0, result.stderr
    assert "locales/ja/LC_MESSAGES/beginner_source/data_parallel_tutorial.po:" in result.stdout
    assert "msgid 'Summary': contains an HTML tag; shown in English" in result.stdout
    assert "msgid 'Beginner tutorials': contains an HTML tag; shown in English" in result.stdout
    for path in (builddir / "html" / "ja").rglob("*"):
        if path.is_file() and path.suffix in {".html", ".py", ".ipynb", ".txt", ".js"}:
            text = path.read_text(errors="replace")
            assert "onerror=alert(1)" not in text and "alert(2)" not in text, path
    assert "Summary" in (builddir / "html" / "ja" / "beginner" / "data_parallel_tutorial.html").read_text()


@pytest.mark.parametrize("placeholder", ["{minutes:2000000}", "{minutes!r}", "{minutes.__class__}", "{minutes[0]}",
                                         "{minutes:>{seconds}}"])
def test_a_label_placeholder_with_a_format_width_or_conversion_is_refused_at_its_line(tmp_path, placeholder):
    from tutorials_site.core import assets, languages
    from tutorials_site.core.text import catalogs

    english = "({minutes} minutes {seconds} seconds)"
    text = assets.label_po(languages.of("ja")).read_text(encoding="utf-8")
    translated = "（{minutes} 分 {seconds} 秒）"
    assert f'msgstr "{translated}"' in text
    po = tmp_path / "sphinx.po"
    po.write_text(text.replace(translated, translated.replace("{minutes}", placeholder) + " {minutes}"),
                  encoding="utf-8")
    line = text.splitlines().index(f'msgid "{english}"') + 1
    with pytest.raises(catalogs.CatalogError) as raised:
        translate.usable_site_catalog("sphinx", po)
    assert str(raised.value).startswith(
        f"{po}:{line}: msgid {english!r}: the placeholder {placeholder} has a format width, conversion or attribute; "
        "write it as the English does, bare: {minutes} {seconds}")


@pytest.mark.parametrize("msgstr, reason", [
    ("&#169; <a href=\"%(path)999s\">저작권</a>", "the placeholder %(path)999s has a format width"),
    ("&#169; <a href=\"%(path)r\">저작권</a>", "the placeholder %(path)r has a format width"),
    ("&#169; <a href=\"%(path)s\">저작권</a> 100%", "the placeholder %"),
    ("&#169; <a href=\"%(path)s\">저작권</a> 100%%", None),
])
def test_a_percent_placeholder_is_written_bare(msgstr, reason):
    result = translate.check_label_translation(message('&#169; <a href="%(path)s">Copyright</a>', "t.html"), msgstr)
    assert result is None if reason is None else result.startswith(reason)


def test_a_paragraph_that_introduces_a_literal_block_may_be_translated() -> None:
    # Parsed alone, its '::' announces a block the unit does not hold: it is checked as the ':' a reader sees.
    unit = tutorial_text.Unit("paragraph", "The code that follows::", [0])
    assert translate.check_translation(unit, "다음 코드는 이렇습니다::") is None
    assert translate.check_translation(unit, "다음 코드는 이렇습니다:") is not None  # its '::' must stay


def test_a_heading_that_reads_as_a_list_may_stay_one() -> None:
    heading = tutorial_text.Unit("heading", "1. Install the dependencies", [0])
    assert translate.check_translation(heading, "1. 의존성 설치") is None
    paragraph = tutorial_text.Unit("paragraph", "Install the dependencies", [0])
    assert translate.check_translation(paragraph, "1. 의존성 설치").startswith("must stay one paragraph")

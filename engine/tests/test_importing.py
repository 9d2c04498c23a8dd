"""core.text.alignment and core.text.importing: a copy translated in place, paired with its English (issue #29).

The translations are the tests' own: the fixture site's catalogs written into the scripts as a translator working
in place would have them (tutorial_text.render), and a small tutorial of our own with its Korean copy
(tests/fixtures/import/), made with one paragraph the English lacks and one English paragraph left out.
"""

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from conftest import FIXTURE_TUTORIALS, FIXTURES
from tutorials_site.commands.import_translation import script_checks
from tutorials_site.core import languages
from tutorials_site.core.text import catalogs, importing, tutorial_text

IMPORT = Path(__file__).parent / "fixtures" / "import"
ENGLISH, KOREAN = IMPORT / "counting_tutorial.py", IMPORT / "counting_tutorial.ko.py"


def _pair(english_text: str, translated_text: str, spaced: bool = True) -> importing.Result:
    english = importing.script_pieces(tutorial_text.parse("en.py", english_text))
    translated = importing.script_pieces(tutorial_text.parse("copy.py", translated_text), spaced)
    return importing.pair_up(english, translated, "en.py", *script_checks({}))


def _in_place(label: str, code: str) -> tuple[str, str, dict[str, str]]:
    """(English script, the script translated in place from the fixture catalog, the catalog's translations)."""
    english = (FIXTURES / label).read_text(encoding="utf-8")
    po = FIXTURES / "locales" / code / "LC_MESSAGES" / Path(label).with_suffix(".po")
    with open(po, "rb") as f:
        translations = catalogs.translations(read_po(f))
    lang = languages.of(code)
    return english, tutorial_text.render(tutorial_text.parse(label, english), translations, lang.spaced), translations


def _wrong(result: importing.Result, translations: dict[str, str]) -> list[importing.Imported]:
    return [i for i in result.imported if " ".join(translations[i.msgid].split()) != i.msgstr]


@pytest.mark.parametrize("code", ["ko", "ja", "zh_CN"])
@pytest.mark.parametrize("label", FIXTURE_TUTORIALS)
def test_an_unchanged_translation_is_imported_nine_units_in_ten_and_none_wrongly(label: str, code: str) -> None:
    english, translated, translations = _in_place(label, code)
    result = _pair(english, translated, languages.of(code).spaced)
    assert result.units == len(translations)
    assert result.certain >= 0.9 * result.units, result.findings
    assert _wrong(result, translations) == []


def test_the_added_paragraph_is_reported_and_the_missing_one_left_in_english() -> None:
    result = _pair(ENGLISH.read_text(encoding="utf-8"), KOREAN.read_text(encoding="utf-8"))
    certain = {i.msgid: i.msgstr for i in result.imported if not i.fuzzy}
    assert certain["Counting words in a sentence"] == "문장의 단어 세기"  # the title
    assert certain["Splitting the text"] == "텍스트 나누기"
    assert certain["Counting each word"] == "단어마다 세기"
    assert certain["Cut the sentence into words."] == "문장을 단어로 자릅니다."
    assert certain["one more for this word"] == "이 단어를 하나 더 셉니다"
    assert certain["The ``split`` method cuts a string at every run of spaces and returns the pieces as a list."] \
        .startswith("``split`` 메서드는")
    assert not any(i.msgid.startswith("Words that were never seen") for i in result.imported)
    assert not any("역자 주" in i.msgstr for i in result.imported)
    assert importing.Finding(24, "not imported: a paragraph with no English counterpart") in result.findings
    assert any(f.text.startswith("left in English: a paragraph with no translation here (en.py:24:")
               for f in result.findings)


@pytest.mark.parametrize("label", FIXTURE_TUTORIALS)
def test_a_paragraph_dropped_or_added_anywhere_is_never_imported_as_certain(label: str) -> None:
    english, translated, translations = _in_place(label, "ko")
    lines = translated.split("\n")
    paragraphs = [u for u in tutorial_text.parse(label, english).units if u.kind == "paragraph"]
    note = ["#", "# 역자 주: 이 문단은 원문에 없는 설명으로, 처음 읽는 분을 위해 번역하면서 덧붙였습니다."]
    for k, dropped in enumerate(paragraphs):
        after = paragraphs[(k + 1) % len(paragraphs)]
        for drop, add in ((True, False), (False, True), (True, True)):
            copy = list(lines)
            if drop:  # first: the rows are the English's until a note is added
                for row in dropped.lines:
                    copy[row] = "#" if dropped.prefix.startswith("#") else ""
            if add and after.prefix.startswith("#"):
                copy[after.lines[-1] + 1:after.lines[-1] + 1] = note
            result = _pair(english, "\n".join(copy))
            wrong = [i for i in _wrong(result, translations) if not i.fuzzy]
            assert wrong == [], (k, drop, add)


def test_a_comment_on_changed_code_and_a_paragraph_left_in_english_are_not_imported() -> None:
    english = ENGLISH.read_text(encoding="utf-8")
    korean = KOREAN.read_text(encoding="utf-8")
    korean = korean.replace("words = sentence.split()", "words = sentence.lower().split()")
    korean = korean.replace("# 가장 많이 나온 단어는 횟수가 가장 큰 단어입니다. 딕셔너리로 할 수 있는\n"
                            "# 모든 것은 `파이썬 문서 <https://docs.python.org/3/library/stdtypes.html#dict>`_\\ 를\n"
                            "# 참고하세요.",
                            "# The most common word is the one with the highest count. See the\n"
                            "# `Python documentation <https://docs.python.org/3/library/stdtypes.html#dict>`_\n"
                            "# for everything a dictionary can do.")
    result = _pair(english, korean)
    imported = {i.msgid for i in result.imported}
    assert "Cut the sentence into words." not in imported
    assert importing.Finding(14, "not imported: a comment on code that differs from the English (changed since "
                                 "the translation)") in result.findings
    assert not any(m.startswith("The most common word") for m in imported)
    assert importing.Finding(32, "not imported: a paragraph left in English in the translation") in result.findings
    assert "one more for this word" in imported  # the code it stands on is unchanged


def test_a_translation_that_breaks_its_markup_is_refused_and_one_that_points_elsewhere_is_fuzzy() -> None:
    english = ENGLISH.read_text(encoding="utf-8")
    korean = KOREAN.read_text(encoding="utf-8")
    korean = korean.replace("공백이 이어진", "*공백이 이어진")
    korean = korean.replace("https://docs.python.org/3/library/stdtypes.html#dict", "https://example.org/ko/dict")
    result = _pair(english, korean)
    by_line = {f.line: f.text for f in result.findings}
    assert by_line[10].startswith("not imported: breaks reST")
    assert by_line[32].startswith("imported as fuzzy: changes a link target")
    assert [i.fuzzy for i in result.imported if i.msgid.startswith("The most common word")] == [True]


def test_a_catalog_keeps_its_translations_unless_overwritten() -> None:
    catalog = Catalog()
    catalog.add("kept", string="이미 번역됨")
    catalog.add("new")
    catalog.add("unsure")
    imports = [importing.Imported("kept", "새 번역", False), importing.Imported("new", "새 것", False),
               importing.Imported("unsure", "아마도", True), importing.Imported("absent", "없음", False)]
    assert importing.apply(catalog, imports, overwrite=False) == importing.Applied(written=2, kept=1)
    assert (catalog["kept"].string, catalog["new"].string, catalog["unsure"].fuzzy) == ("이미 번역됨", "새 것", True)
    assert importing.apply(catalog, imports, overwrite=True) == importing.Applied(written=3, kept=0)
    assert catalog["kept"].string == "새 번역" and not catalog["kept"].fuzzy


def test_a_docstring_s_escapes_are_read_as_the_string_holds_them() -> None:
    english = '''"""
Title
=====

The ``split`` method cuts a string.
"""
x = 1
'''
    korean = english.replace("Title\n=====", "제목\n====").replace(
        "The ``split`` method cuts a string.", "``split``\\\\ 메서드는 문자열을 자릅니다.")
    result = _pair(english, korean)
    assert {i.msgid: i.msgstr for i in result.imported}["The ``split`` method cuts a string."] == \
        "``split``\\ 메서드는 문자열을 자릅니다."


@pytest.mark.parametrize(("kind", "said"), [
    ("paragraph 0", "a paragraph"), ("title", "the title"), ("# at 4", "a code comment"),
    ("section/section/title", "a heading"), ("section/bullet_list/list_item/paragraph", "a paragraph"),
    ("section/figure/caption", "a caption"),
])
def test_the_report_names_each_kind_of_unit(kind: str, said: str) -> None:
    assert importing.name(kind) == said


def test_a_particle_written_against_a_literal_is_imported_with_the_escape_rest_needs() -> None:
    english = ENGLISH.read_text(encoding="utf-8")
    korean = KOREAN.read_text(encoding="utf-8").replace("``split`` 메서드는", "``split``은 메서드로서")
    result = _pair(english, korean)
    translated = {i.msgid: i.msgstr for i in result.imported if not i.fuzzy}
    assert translated["The ``split`` method cuts a string at every run of spaces and returns the pieces as a list."] \
        .startswith("``split``\\ 은 메서드로서")


def test_a_translated_message_in_the_code_leaves_its_comments_importable() -> None:
    english = ENGLISH.read_text(encoding="utf-8")
    korean = KOREAN.read_text(encoding="utf-8").replace('print(len(words), "words")', 'print(len(words), "단어")')
    imported = {i.msgid: i for i in _pair(english, korean).imported}
    assert not imported["Cut the sentence into words."].fuzzy


def test_text_beside_code_that_changed_is_imported_as_fuzzy() -> None:
    english = ENGLISH.read_text(encoding="utf-8")
    korean = KOREAN.read_text(encoding="utf-8").replace("counts = {}", "counts = dict()")
    result = _pair(english, korean)
    imported = {i.msgid: i for i in result.imported}
    assert imported["A dictionary maps each word to how many times it was seen so far."].fuzzy
    assert any("beside code that differs from the English" in f.text for f in result.findings)
    assert not imported["The most common word is the one with the highest count. See the `Python documentation "
                        "<https://docs.python.org/3/library/stdtypes.html#dict>`_ for everything a dictionary can do."
                        ].fuzzy


def test_a_particle_that_makes_two_literals_one_is_read_as_the_translator_meant() -> None:
    # ``a``은 ... ``b`` parses as one literal running from the first to the last backquotes: escaped, it is two.
    english = "x = 1\n# Compare ``first`` with ``second`` here.\ny = 2\n"
    korean = "x = 1\n# ``first``은 여기에서 ``second``와 비교합니다.\ny = 2\n"
    english_text = '"""\nTitle\n=====\n"""\n' + english.replace("# ", "#" * 30 + "\n# ", 1)
    korean_text = '"""\n제목\n====\n"""\n' + korean.replace("# ", "#" * 30 + "\n# ", 1)
    imported = {i.msgid: i for i in _pair(english_text, korean_text).imported}
    entry = imported["Compare ``first`` with ``second`` here."]
    assert (entry.msgstr, entry.fuzzy) == ("``first``\\ 은 여기에서 ``second``\\ 와 비교합니다.", False)

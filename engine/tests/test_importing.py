"""core.text.alignment and core.text.importing: a copy translated in place, paired with its English (issues #29, #35).

The translations are the tests' own: the fixture site's catalogs written into the scripts as a translator working
in place would have them (tutorial_text.render), and a small tutorial of our own with its Korean copy
(tests/fixtures/import/), made with one paragraph the English lacks and one English paragraph left out. Merged and
split paragraphs are made from the fixture catalogs too: two English paragraphs written as one, and their
translations joined; one written as two, cut at the end of a sentence in both languages.
"""

import re
import runpy
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from conftest import ENGINE, FIXTURE_TUTORIALS, FIXTURES
from tutorials_site.commands.import_translation import pair_script, script_checks, summary
from tutorials_site.core import languages
from tutorials_site.core.text import catalogs, importing, tutorial_text

IMPORT = Path(__file__).parent / "fixtures" / "import"
ENGLISH, KOREAN = IMPORT / "counting_tutorial.py", IMPORT / "counting_tutorial.ko.py"
LANGUAGES = ["ko", "ja", "zh_CN"]
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])(?=\S)")  # where a test cuts a paragraph in two


def _pair(english_text: str, translated_text: str, spaced: bool = True) -> importing.Result:
    english = importing.script_pieces(tutorial_text.parse("en.py", english_text))
    translated = importing.script_pieces(tutorial_text.parse("copy.py", translated_text), spaced)
    return importing.pair_up(english, translated, "en.py", *script_checks({}), spaced=spaced)


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
    assert importing.Finding(24, "not imported: a paragraph that matches none of the English units between the same "
                                 "lines of code (an addition of the translator's, or English that changed since the "
                                 "translation)") in result.findings
    assert importing.Finding(22, 'left in English: a paragraph of the English, en.py:24 "Words that were never seen '
                                 'start at zero, thanks to …", has no translation here: none of the translated units '
                                 "between the same lines of code matches it") in result.findings


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
    assert importing.Finding(14, "not imported: a code comment on code that differs from the English code (changed "
                                 "since the translation), which it may no longer describe") in result.findings
    assert not any(m.startswith("The most common word") for m in imported)
    assert importing.Finding(32, "not imported: a paragraph still in English, as the English has it: there is no "
                                 "translation to import") in result.findings
    assert "one more for this word" in imported  # the code it stands on is unchanged


def test_a_translation_that_breaks_its_markup_is_refused_and_one_that_points_elsewhere_is_fuzzy() -> None:
    english = ENGLISH.read_text(encoding="utf-8")
    korean = KOREAN.read_text(encoding="utf-8")
    korean = korean.replace("공백이 이어진", "*공백이 이어진")
    korean = korean.replace("https://docs.python.org/3/library/stdtypes.html#dict", "https://example.org/ko/dict")
    result = _pair(english, korean)
    by_line = {f.line: f.text for f in result.findings}
    assert by_line[10].startswith('not imported: read as the translation of en.py:10 "The ``split`` method cuts a '
                                  'string at every run of spaces …", but the build would refuse it: breaks reST')
    assert by_line[32].startswith('imported as fuzzy: read as the translation of en.py:32 "The most common word')
    assert by_line[32].endswith("the translation links to https://example.org/ko/dict where the English links to "
                                "https://docs.python.org/3/library/stdtypes.html#dict: a translation keeps the English's "
                                "inline code, links and references as they are")
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
    assert any(f.text.endswith("but the code beside it differs from the English code (changed since the translation): "
                               "check that it still translates it") for f in result.findings)
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


def _flat(text: str) -> str:
    return " ".join(text.split())


def _rewritten(english: str, first: tutorial_text.Unit, last: tutorial_text.Unit, paragraphs: list[str]) -> str:
    """ENGLISH with the rows of units FIRST to LAST written as PARAGRAPHS, one row each, a blank row between."""
    lines = english.split("\n")
    blank = "#" if first.prefix.startswith("#") else ""
    rows = [row for k, text in enumerate(paragraphs) for row in ([blank] if k else []) + [first.prefix + text]]
    lines[first.lines[0]:last.lines[-1] + 1] = rows
    return "\n".join(lines)


def _copy(english: str, translations: dict[str, str], code: str) -> str:
    """ENGLISH translated in place from TRANSLATIONS, as a translator would have it."""
    lang = languages.of(code)
    return tutorial_text.render(tutorial_text.parse("en.py", english), translations, lang.spaced)


def _paragraphs(label: str, code: str) -> tuple[str, dict[str, str], list[tutorial_text.Unit]]:
    english, _, translations = _in_place(label, code)
    units = [u for u in tutorial_text.parse(label, english).units
             if u.kind == "paragraph" and u.msgid in translations and not u.msgid.endswith("::")]
    return english, translations, units


def _joined(first: str, second: str, code: str) -> str:
    return f"{first} {second}" if languages.of(code).spaced else first + second


def _wrong(result: importing.Result, translations: dict[str, str]) -> list[importing.Imported]:
    return [i for i in result.imported if _flat(translations[i.msgid]) != i.msgstr]


def _merges(label: str, code: str) -> list[tuple[tutorial_text.Unit, tutorial_text.Unit]]:
    """Two paragraphs in a row, one blank row apart: a translator may write them as one."""
    _, _, units = _paragraphs(label, code)
    return [(a, b) for a, b in zip(units, units[1:]) if b.lines[0] - a.lines[-1] == 2 and a.prefix == b.prefix]


@pytest.mark.parametrize("code", LANGUAGES)
@pytest.mark.parametrize("label", FIXTURE_TUTORIALS)
def test_two_paragraphs_the_translator_merged_are_each_imported_or_both_named_in_one_line(label: str, code: str) -> None:
    english, translations, _ = _paragraphs(label, code)
    cut_in_two = 0
    for a, b in _merges(label, code):
        merged = _rewritten(english, a, b, [f"{a.msgid} {b.msgid}"])
        whole = _joined(translations[a.msgid], translations[b.msgid], code)
        result = _pair(english, _copy(merged, {**translations, f"{a.msgid} {b.msgid}": whole}, code),
                       languages.of(code).spaced)
        assert [i for i in _wrong(result, translations) if not i.fuzzy] == [], (a.lineno, b.lineno)
        imported = {i.msgid: i for i in result.imported}
        if all(u.msgid in imported and not imported[u.msgid].fuzzy for u in (a, b)):
            cut_in_two += 1  # the translation cut at the end of a sentence, each part its English's
        else:  # one line names both English paragraphs
            lines = [f.text for f in result.findings if f"en.py:{a.lineno} " in f.text and f"en.py:{b.lineno} " in f.text]
            assert len(lines) == 1 and lines[0].startswith("imported as fuzzy: read as the translation"), \
                (a.lineno, b.lineno, result.findings)
    assert cut_in_two >= 1


@pytest.mark.parametrize("code", LANGUAGES)
@pytest.mark.parametrize("label", FIXTURE_TUTORIALS)
def test_a_paragraph_the_translator_split_is_imported_joined_or_named_with_both_parts(label: str, code: str) -> None:
    english, translations, units = _paragraphs(label, code)
    joined = 0
    for unit in units:
        parts, translated = SENTENCE_END.split(unit.msgid, 1), SENTENCE_END.split(_flat(translations[unit.msgid]), 1)
        if len(parts) < 2 or len(translated) < 2:
            continue
        split = _rewritten(english, unit, unit, parts)
        result = _pair(english, _copy(split, {**translations, **dict(zip(parts, translated))}, code),
                       languages.of(code).spaced)
        assert [i for i in _wrong(result, translations) if not i.fuzzy] == [], unit.lineno
        imported = {i.msgid: i for i in result.imported}
        if unit.msgid in imported and not imported[unit.msgid].fuzzy:
            joined += 1  # the two translated paragraphs joined into one, as the catalog holds it
        else:
            lines = [f.text for f in result.findings if f"en.py:{unit.lineno} " in f.text]
            assert len(lines) == 1 and re.search(r"\(line \d+\)|the unit at line \d+", lines[0]), \
                (unit.lineno, result.findings)
    assert joined >= 1


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_merge_that_is_none_is_never_imported_as_certain(code: str) -> None:
    """Two paragraphs written as one where the second part translates another paragraph of the tutorial: the
    second English paragraph never gets it as certain."""
    label = FIXTURE_TUTORIALS[0]
    english, translations, units = _paragraphs(label, code)
    for a, b in _merges(label, code):
        other = max(units, key=lambda u: abs(u.lineno - b.lineno))
        merged = _rewritten(english, a, b, [f"{a.msgid} {b.msgid}"])
        whole = _joined(translations[a.msgid], translations[other.msgid], code)
        result = _pair(english, _copy(merged, {**translations, f"{a.msgid} {b.msgid}": whole}, code),
                       languages.of(code).spaced)
        assert [i for i in _wrong(result, translations) if not i.fuzzy] == [], (a.lineno, b.lineno)


def test_the_report_says_what_was_compared_in_plain_words() -> None:
    result = _pair(ENGLISH.read_text(encoding="utf-8"), KOREAN.read_text(encoding="utf-8"))
    english, translations, _ = _paragraphs(FIXTURE_TUTORIALS[0], "ko")
    a, b = _merges(FIXTURE_TUTORIALS[0], "ko")[-1]
    merged = _rewritten(english, a, b, [f"{a.msgid} {b.msgid}"])
    whole = _joined(translations[a.msgid], translations[b.msgid], "ko")
    merge = _pair(english, _copy(merged, {**translations, f"{a.msgid} {b.msgid}": whole}, "ko"))
    texts = [f.text for f in result.findings + merge.findings]
    assert not any(jargon in text for text in texts for jargon in ("nothing more", "by its place", "counterpart"))
    assert any(text.startswith("left in English: a paragraph of the English, en.py:") for text in texts)
    assert [f.text for f in merge.findings if f'en.py:{b.lineno} "' in f.text] == [  # one line, not two
        f'imported as fuzzy: read as the translation of en.py:{a.lineno} "{a.msgid[:60].rsplit(" ", 1)[0]} …", but '
        f'another way of pairing the units around it fits nearly as well; en.py:{b.lineno} "{b.msgid}", which has no '
        "translation here, may be translated in it too: check that it translates it"]


def test_the_translation_of_a_paragraph_and_its_literal_block_marker_is_cut_before_the_marker() -> None:
    english = '"""\nTitle\n=====\n\nInstall it with pip:\n\n::\n\n    pip install torch\n\nThen import it.\n"""\n'
    korean = '"""\n제목\n====\n\npip로 설치합니다: ::\n\n    pip install torch\n\n그다음 가져옵니다.\n"""\n'
    imported = {i.msgid: i for i in _pair(english, korean).imported}
    assert (imported["Install it with pip:"].msgstr, imported["Install it with pip:"].fuzzy) == ("pip로 설치합니다:", False)
    assert (imported["::"].msgstr, imported["::"].fuzzy) == ("::", False)


def test_a_file_that_cannot_be_read_is_skipped_and_counted_in_the_totals(tmp_path: Path) -> None:
    broken, latin = tmp_path / "broken.py", tmp_path / "latin.py"
    broken.write_text("def broken(:\n", encoding="utf-8")
    latin.write_bytes("# caf\xe9\nx = 1\n".encode("latin-1"))
    ko = languages.of("ko")
    good = pair_script(ENGLISH, KOREAN, "en.py", ko, {})
    skipped = pair_script(ENGLISH, broken, "en.py", ko, {})
    assert (skipped.skipped, skipped.units, skipped.imported) == (f"{broken}:1: invalid syntax", 10, ())
    assert pair_script(latin, KOREAN, "latin.py", ko, {}).skipped == f"{latin}: not UTF-8 text"
    assert summary(str(broken), skipped) == (f"import-translation: {broken}: skipped (it cannot be read as a tutorial): "
                                             "0 imported, 0 fuzzy, 10 left in English (of 10)")
    assert summary("2 file(s) into ko (1 skipped)", importing.total([good, skipped])) == (
        "import-translation: 2 file(s) into ko (1 skipped): 9 imported, 0 fuzzy, 11 left in English (of 20)")


def test_the_bench_reports_a_file_it_cannot_read_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    for side, good, bad in (("en", ENGLISH, ENGLISH), ("ko", KOREAN, None)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "a.py").write_text(good.read_text(encoding="utf-8"), encoding="utf-8")
        (tmp_path / side / "b.py").write_text(bad.read_text(encoding="utf-8") if bad else "def broken(:\n",
                                              encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["import_bench.py", str(tmp_path / "en"), str(tmp_path / "ko")])
    runpy.run_path(str(ENGINE / "benchmarks" / "import_bench.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert f"skipped: {tmp_path / 'ko' / 'b.py'}:1: invalid syntax" in out
    assert re.search(r"total \(2 files, 1 skipped\) +20 +9 +0 +11 ", out), out

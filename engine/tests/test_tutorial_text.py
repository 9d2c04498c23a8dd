"""Translation units of a tutorial script, and the script rebuilt around translated text."""

import ast

import pytest

from conftest import FIXTURES
from tutorials_site.core import languages
from tutorials_site.core.project import current
from tutorials_site.core.text import translate, tutorial_text
from tutorials_site.core.text.tutorial_text import display_width, parse, render

TUTORIALS = [t.path for t in current(FIXTURES).tutorials]  # the shipped ones, however many: each must parse and render
TRANSLATED_LANGUAGES = languages.TRANSLATED

SAMPLE = '''"""
A title
=======

A paragraph that
spans two lines.

- item one
- item two,
  continued
"""

# A comment that
# spans two lines.
x = 1  # a trailing comment

######################################################################
# A heading
# ---------
#
# .. note::
#    An admonition's text.
#
# Some code follows::
#
#    y = 2
#
# sphinx_gallery_thumbnail_number = 1

# %%
# Text after a cell marker.

print(x)  # noqa
'''


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample_tutorial.py"
    path.write_text(SAMPLE)
    return parse(path)


def test_units_are_the_text_without_markers(sample):
    assert [(u.kind, u.msgid) for u in sample.units] == [
        ("title", "A title"),
        ("paragraph", "A paragraph that spans two lines."),
        ("item", "item one"),
        ("item", "item two, continued"),
        ("comment", "A comment that spans two lines."),
        ("inline-comment", "a trailing comment"),
        ("heading", "A heading"),
        ("paragraph", "An admonition's text."),
        ("paragraph", "Some code follows::"),
        ("paragraph", "Text after a cell marker."),
    ]


def test_nothing_translated_gives_back_the_english_file(sample):
    assert render(sample, {}) == SAMPLE


def translated_everything(tutorial, text="번역된 문장입니다 데이터 병렬 처리"):
    return {u.msgid: text + ("::" if u.msgid.endswith("::") else "") for u in tutorial.units}


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_code_and_its_line_numbers_never_move(path):
    tutorial = parse(path)
    english = path.read_text()
    translated = render(tutorial, translated_everything(tutorial))
    assert translated.count("\n") == english.count("\n")

    def code(source):
        tree = ast.parse(source)
        tree.body[0].value.value = ""  # the docstring is text
        return ast.dump(tree, include_attributes=True)

    assert code(translated) == code(english)
    assert parse(path, translated).units  # and the result parses the same way


def test_heading_underlines_are_redrawn_at_display_width(sample):
    text = render(sample, {"A title": "데이터 병렬 처리", "A heading": "データ並列"})
    lines = text.splitlines()
    assert lines[1:3] == ["데이터 병렬 처리", "=" * display_width("데이터 병렬 처리")]
    assert "# データ並列" in lines and "# " + "-" * 10 in lines
    assert display_width("데이터 병렬 처리") == 16 and display_width("ab") == 2


def test_a_combining_mark_takes_no_column_of_the_underline(sample):
    decomposed = "Cafe\u0301 au lait"  # é written as e + a combining acute accent
    assert display_width(decomposed) == 12 and display_width("e\u0301") == 1 and display_width("\u0301") == 0
    lines = render(sample, {"A title": decomposed}).splitlines()
    assert lines[1:3] == [decomposed, "=" * 12]


def test_a_translation_cannot_escape_into_code(sample):
    attack = 'text\nimport os; os.system("echo owned")\n'
    text = render(sample, {
        "A paragraph that spans two lines.": 'pwned """\nimport os\n"""',
        "A comment that spans two lines.": attack,
        "a trailing comment": attack,
        "Text after a cell marker.": attack,
    })
    module = ast.parse(text)
    assert not any(isinstance(node, ast.Import) for node in module.body)
    assert [type(n).__name__ for n in module.body] == [type(n).__name__ for n in ast.parse(SAMPLE).body]
    docstring = " ".join(ast.get_docstring(module, clean=False).split())
    assert 'pwned """ import os """' in docstring.replace('\\"', '"')


# Docstrings whose text shares a line with their quotes, as sphinx-gallery takes them: (script, its units, what
# a translation of every unit gives).
SHARED_QUOTES = [
    ('"""A one-line docstring, no heading."""\nx = 1\n', [("paragraph", "A one-line docstring, no heading.")],
     'r"""번역 "따옴표" """\nx = 1\n'),
    ("r\'\'\'Title\n=====\n\nText on the line of the quotes.\'\'\'\nx = 1\n",
     [("title", "Title"), ("paragraph", "Text on the line of the quotes.")],
     "r\'\'\'번역 \"따옴표\"\n=============\n\n번역 \"따옴표\"\'\'\'\nx = 1\n"),
]


@pytest.mark.parametrize("script, units, translated", SHARED_QUOTES)
def test_a_docstring_sharing_lines_with_its_quotes_is_translated_in_place(tmp_path, script, units, translated):
    path = tmp_path / "shared_quotes.py"
    path.write_text(script)
    tutorial = parse(path)
    assert [(u.kind, u.msgid) for u in tutorial.units] == units
    rendered = render(tutorial, {msgid: '번역 "따옴표"' for _, msgid in units})
    assert rendered == translated
    assert translate._code_tree(rendered, "x") == translate._code_tree(script, "x")  # what the build requires
    assert ast.get_docstring(ast.parse(rendered), clean=False).rstrip().endswith('번역 "따옴표"')
    assert render(tutorial, {}) == script


def test_a_docstring_not_in_triple_quotes_is_an_error(tmp_path):
    path = tmp_path / "bad_tutorial.py"
    path.write_text('"Title"\nx = 1\n')
    with pytest.raises(tutorial_text.TutorialSyntaxError,
                       match=r"bad_tutorial\.py:1: the docstring must be in triple quotes"):
        parse(path)


def test_wrap_breaks_korean_at_spaces_into_the_lines_it_is_given():
    text = "모델을 한 번 감싸 두기만 하면 그 뒤로 이루어지는 모든 순전파가 사용 가능한 GPU들에 나뉘어 실행됩니다."
    lines = tutorial_text.wrap(text, 3)
    assert len(lines) == 3 and " ".join(lines) == text
    assert max(map(display_width, lines)) - min(map(display_width, lines)) < 20  # even, not one long and two short


def test_wrap_breaks_japanese_and_chinese_only_after_a_clause_s_punctuation_and_joining_restores_it():
    text = "ステップのたびにモデルを各GPUにコピーし、バッチを分配し、各レプリカをスレッドで実行して、出力を集めます。"
    lines = tutorial_text.wrap(text, 4, spaced=False)
    assert lines == ["ステップのたびにモデルを各GPUにコピーし、", "バッチを分配し、", "各レプリカをスレッドで実行して、",
                     "出力を集めます。"]
    assert tutorial_text.join_wide_breaks("\n   ".join(lines)) == text
    chinese = "每个进程加入进程组，运行给定的函数，然后离开进程组。"
    assert tutorial_text.wrap(chinese, 3, spaced=False) == ["每个进程加入进程组，", "运行给定的函数，", "然后离开进程组。"]
    # Fewer places to break than lines: fewer, longer lines, never a word cut in two.
    unbroken = "分散学習では各プロセスが勾配を平均します"
    assert tutorial_text.wrap(unbroken, 3, spaced=False) == [unbroken]
    assert tutorial_text.wrap(chinese, 8, spaced=False) == ["每个进程加入进程组，", "运行给定的函数，", "然后离开进程组。"]
    # After a closing bracket too, never before more closing punctuation, nor after an opening bracket.
    assert tutorial_text.wrap("「分散」と「集約」。）（注）", 4, spaced=False) == ["「分散」", "と「集約」。）", "（注）"]
    # Korean puts spaces between words: it breaks only at them, and its line breaks are never joined.
    assert tutorial_text.wrap("한국어 문장 하나 둘", 2) == ["한국어 문장", "하나 둘"]
    assert tutorial_text.wrap("한국어문장하나둘셋넷", 3) == ["한국어문장하나둘셋넷"]


def test_a_translated_script_breaks_japanese_and_chinese_lines_only_between_words():
    """Every line break inside a generated paragraph stands at a space or after a clause's punctuation; where
    the English has more lines than that, the paragraph ends early and its last lines are left blank."""
    source = '"""\nT\n=\n"""\n\n' + "#" * 70 + "\n# One paragraph\n# on four\n# lines of\n# text.\n\nx = 1\n"
    tutorial = tutorial_text.parse("t.py", source)
    (unit,) = [unit for unit in tutorial.units if unit.msgid.startswith("One paragraph")]
    translated = ("各プロセスは ``init_process_group`` を呼び出し、自分のランクとワールドサイズを渡します。"
                  "ストアは一時フォルダーの中のファイルです。")
    lines = tutorial_text.render(tutorial, {unit.msgid: translated}, spaced=False).splitlines()
    texts = [lines[row].removeprefix("#").strip() for row in unit.lines]
    # At the space before a Latin word (which the page shows as a space), after a clause's punctuation (which it
    # shows as nothing), never at the space before a Japanese character ("``x`` を" stays whole).
    assert texts == ["各プロセスは", "``init_process_group`` を呼び出し、", "自分のランクとワールドサイズを渡します。",
                     "ストアは一時フォルダーの中のファイルです。"]
    assert tutorial_text.join_wide_breaks(" ".join(texts[:2]) + "\n" + "\n".join(texts[2:])) == translated
    assert tutorial_text.wrap("大きすぎて 1 つのデバイスに収まらないモデル", 3, spaced=False) == [
        "大きすぎて", "1 つのデバイスに収まらないモデル"]
    short = tutorial_text.render(tutorial, {unit.msgid: "分散学習では各プロセスが勾配を平均します。"}, spaced=False)
    assert [short.splitlines()[row] for row in unit.lines] == ["# 分散学習では各プロセスが勾配を平均します。", "#", "#", "#"]


def test_wrap_never_breaks_inside_a_literal_or_next_to_an_escape():
    text = "各プロセスは ``torch.distributed.init_process_group``\\ を呼び出し、**ランク**\\ (0, 1, …) を渡します。"
    for count in range(2, 8):
        lines = tutorial_text.wrap(text, count, spaced=False)
        joined = tutorial_text.join_wide_breaks("\n".join(lines))
        assert joined.replace("\n", " ") == text, count
        for line in lines:
            assert line.count("``") % 2 == 0 and not line.startswith("\\") and not line.endswith("\\")


def test_a_reference_breaks_before_its_url_as_the_english_does():
    text = "`DistributedDataParallel API 参考 <https://pytorch.org/docs/stable/distributed.html>`_"
    assert tutorial_text.wrap(text, 2, spaced=False) == [
        "`DistributedDataParallel API 参考", "<https://pytorch.org/docs/stable/distributed.html>`_"]


LANGUAGE_SOURCES = [(lang, t) for lang in TRANSLATED_LANGUAGES for t in current(FIXTURES).tutorials]  # the shipped ones


def blank(line):
    return line.strip() in ("", "#")


@pytest.mark.parametrize("lang,tutorial", LANGUAGE_SOURCES,
                         ids=lambda v: getattr(v, "seg", None) or getattr(v, "label", ""))
def test_every_translated_script_has_the_english_line_structure(lang, tutorial):
    """Text where the English has text, blank lines where it has them: no padding a reader would see, but for
    the last lines of a Japanese or Chinese unit, which breaks only between clauses and may need fewer lines."""
    english = tutorial.path.read_text().splitlines()
    generated = translate.generate(current(FIXTURES), lang, tutorial)[0].splitlines()
    assert len(generated) == len(english)
    ends = set()  # rows left blank at the end of a unit, where its English had text
    for unit in ([] if lang.spaced else tutorial_text.parse(tutorial.path).units):
        left = [row for row in unit.lines if blank(generated[row])]
        if left == unit.lines[len(unit.lines) - len(left):]:
            ends.update(left)
    differ = [(n + 1, e, g) for n, (e, g) in enumerate(zip(english, generated))
              if blank(e) != blank(g) and n not in ends]
    assert not differ, differ[:5]


def test_a_translated_docstring_is_raw_so_its_rest_escapes_read_as_written(sample):
    text = render(sample, {"A paragraph that spans two lines.": "``DataParallel``\\ 은 모델을 감쌉니다."})
    assert text.startswith('r"""\n')
    assert "``DataParallel``\\ 은" in text and "\\\\" not in text
    assert "``DataParallel``\\ 은" in ast.get_docstring(ast.parse(text), clean=False)
    # Where the English docstring holds a backslash, it stays a plain string and translations are escaped.
    escaped = parse(sample.path, SAMPLE.replace("A paragraph that", "A path C:\\\\temp that"))
    text = render(escaped, {"A paragraph that spans two lines.": "``x``\\ 은"} |
                  {u.msgid: "``x``\\ 은" for u in escaped.units if u.kind == "paragraph"})
    assert text.startswith('"""\n') and "``x``\\\\ 은" in text


@pytest.mark.parametrize("docstring", [
    'Title\n=====\n\nThe intro, on\ntwo lines.\n\nMore.\n',
    'Title\n=====\n**Author**: someone\n\nThe intro, on\ntwo lines.\n',  # an author line under the title
    'Title\n=====\n\n.. note::\n   A note first.\n\nThe intro, on\ntwo lines.\n',
    '\n\nTitle\n=====\n\n\nThe intro, on\ntwo lines.\n',  # blank lines before, three newlines between
    'Title\n=====\n',  # no intro but the title: none to find
])
def test_the_intro_is_the_paragraph_sphinx_gallery_takes(docstring):
    from sphinx_gallery.gen_rst import extract_intro_and_title

    tutorial = tutorial_text.parse("t.py", f'"""\n{docstring}"""\nx = 1\n')
    intro, title = extract_intro_and_title("t.py", f"\n{docstring}")
    row = tutorial_text._intro_row(tutorial)
    if intro == title:
        assert row is None
    else:
        assert intro.strip().startswith(tutorial.lines[row].strip()), (intro, tutorial.lines[row])


def test_japanese_intro_under_an_author_line_breaks_only_at_spaces():
    source = '"""\nTitle\n=====\n**Author**: X\n\nThe intro, which is\nlong enough to break.\n"""\nx = 1\n'
    tutorial = tutorial_text.parse("t.py", source)
    intro = next(unit for unit in tutorial.units if "intro" in unit.msgid)
    text = tutorial_text.render(tutorial, {intro.msgid: "これは紹介の段落でありとても長い文章ですので二行に分けます"}, spaced=False)
    assert "これは紹介の段落でありとても長い文章ですので二行に分けます" in text  # one line: no break a tooltip shows


# Each explicit construct and the transition, in the docstring and in a text block; `----` as a heading's
# over- and underline stays a heading.
NOT_MESSAGES = '''"""
The title
=========

The intro.

----

.. _a-target:

__ https://pytorch.org/

.. |torch| replace:: PyTorch itself

.. A comment
   on two lines.

..
   A comment's block.

-------------
A heading too
-------------

A paragraph.
"""

# %%
# Some text.
#
# ----
#
# .. _another-target:
#
# .. |logo| image:: logo.png
#
# .. A comment in a text block.
#
# A section
# ---------
#
# The end.

x = 1
'''
MESSAGES = [("title", "The title"), ("paragraph", "The intro."), ("heading", "A heading too"),
            ("paragraph", "A paragraph."), ("paragraph", "Some text."), ("heading", "A section"),
            ("paragraph", "The end.")]


def test_a_transition_target_comment_or_substitution_definition_is_never_a_unit(tmp_path):
    from docutils import nodes
    from docutils.core import publish_doctree

    path = tmp_path / "plot_not_messages.py"
    path.write_text(NOT_MESSAGES, encoding="utf-8")
    assert [(u.kind, u.msgid) for u in parse(path).units] == MESSAGES
    # What docutils reads in each: every construct above is what its name says, in both regions.
    docstring = NOT_MESSAGES.split('"""')[1]
    block = "\n".join(line[2:] for line in NOT_MESSAGES.split("# %%\n")[1].splitlines() if line.startswith("#"))
    quiet = {"report_level": 5, "halt_level": 5, "warning_stream": False}
    for text, counts in ((docstring, (1, 2, 2, 1, 2)), (block, (1, 1, 1, 1, 1))):
        tree = publish_doctree(text, settings_overrides=quiet)
        found = tuple(len(list(tree.findall(kind))) for kind in (nodes.transition, nodes.target, nodes.comment,
                                                                 nodes.substitution_definition, nodes.title))
        assert found == counts, (text, found)


def test_a_script_with_a_transition_translates_whole_and_strict_clean(tmp_path, monkeypatch):
    from babel.messages.catalog import Catalog

    from tutorials_site.core.project import Project
    from tutorials_site.core.text import catalogs

    (tmp_path / "gallery").mkdir()
    (tmp_path / "gallery" / "README.txt").write_text("Gallery\n=======\n")
    (tmp_path / "gallery" / "plot_not_messages.py").write_text(NOT_MESSAGES, encoding="utf-8")
    site = Project(tmp_path, {"examples_dirs": ["gallery"], "gallery_dirs": ["g"]})
    [tutorial] = site.tutorials
    lang = languages.BY_SEG["ko"]
    catalog = Catalog(locale="ko")
    for _, msgid in MESSAGES:  # one message kept as its English, as a translator may
        catalog.add(msgid, msgid if msgid == "The end." else f"{msgid} (번역)")
    catalogs.save(catalog, catalogs.tutorial_po(site, lang, tutorial))
    generated, report = translate.generate(site, lang, tutorial)
    assert (report.total, report.english, report.problems) == (len(MESSAGES), 0, [])  # STRICT=1 passes it
    english, translated = NOT_MESSAGES.splitlines(), generated.splitlines()
    assert len(translated) == len(english)
    for row, line in enumerate(english):
        if line.strip("#").strip() in ("----", "..", "__ https://pytorch.org/") or ".. " in line or "   on two" in line:
            assert translated[row] == line, (row, line)  # as the English has it
    assert "The intro. (번역)" in generated and "# A section (번역)" in generated


def test_an_admonition_whose_text_starts_on_its_line_is_translated_whole() -> None:
    source = ('"""\nTitle\n=====\n\n.. note:: You can set the value of this\n   option in two places.\n\n'
              '   A second paragraph.\n\n.. versionadded:: 2.0\n   Added here.\n"""\nx = 1\n')
    tutorial = parse("x.py", source)
    units = {u.msgid: u for u in tutorial.units}
    assert set(units) == {"Title", "You can set the value of this option in two places.", "A second paragraph.",
                          "Added here."}  # a version is no text
    translated = render(tutorial, {"You can set the value of this option in two places.":
                                   "이 옵션의 값은 두 곳에서 정할 수 있는데 그 두 곳을 여기서 모두 설명합니다."})
    lines = translated.splitlines()
    assert lines[4].startswith(".. note:: 이 옵션의 값은") and lines[5].startswith("   ")
    assert parse("x.py", translated).units[1].msgid.startswith("이 옵션의 값은")

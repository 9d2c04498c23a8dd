"""Translation units of a tutorial script, and the script rebuilt around translated text."""

import ast

import pytest

from tutorials_site.core import tutorial_text
from tutorials_site.core.project import current
from tutorials_site.core.tutorial_text import display_width, parse, render

TUTORIALS = [t.path for t in current().tutorials]

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
    assert 'pwned """ import os """' in ast.get_docstring(module, clean=False).replace('\\"', '"')


def test_a_docstring_that_does_not_open_on_its_own_line_is_an_error(tmp_path):
    path = tmp_path / "bad_tutorial.py"
    path.write_text('"""Title\n=====\n"""\nx = 1\n')
    with pytest.raises(tutorial_text.TutorialSyntaxError, match=r"bad_tutorial\.py:1: the docstring"):
        parse(path)

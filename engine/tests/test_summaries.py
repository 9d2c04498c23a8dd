"""A page's description: its first paragraph as plain text, cut to what a search result shows."""

import re

import pytest
from docutils.utils import column_width

from tutorials_site.core.site.summaries import ELLIPSIS, LIMIT, plain_text, summary

ENGLISH = ("A single machine often has more than one GPU. torch.nn.DataParallel is the quickest way to let "
           "one model use all of them: you wrap the model once, and every forward pass after that is spread "
           "over the visible GPUs.")
JAPANESE = ("1 台のマシンに複数の GPU が搭載されていることはよくあります。torch.nn.DataParallel を使うと、"
            "1 つのモデルでそれらすべての GPU を最も手軽に活用できます。モデルを一度ラップするだけで、"
            "それ以降の順伝播はすべて、見えている GPU に分散されます。")


def test_short_text_is_kept_whole_on_one_line():
    assert summary("Short, complete scripts.\n  Every page   was executed.") == \
        "Short, complete scripts. Every page was executed."
    assert summary("数据并行。", "zh_CN") == "数据并行。"


def test_long_text_is_cut_at_a_word_boundary_with_an_ellipsis():
    cut = summary(ENGLISH)
    assert cut.endswith(ELLIPSIS) and len(cut) <= LIMIT
    kept = cut[: -len(ELLIPSIS)]
    assert ENGLISH.startswith(kept) and ENGLISH[len(kept)] == " "  # a whole word, then a space
    assert len(kept) > LIMIT - 20  # as much as fits, not the first sentence only
    assert kept == "A single machine often has more than one GPU. torch.nn.DataParallel is the quickest way to " \
                   "let one model use all of them: you wrap the model once, and"


def test_punctuation_at_the_cut_gives_way_to_the_ellipsis():
    text = "word " * 20 + "stop, " + "more " * 30
    assert summary(text, limit=len("word " * 20 + "stop,") + 1) == "word " * 19 + "word stop" + ELLIPSIS


def test_a_word_longer_than_the_limit_is_cut_inside():
    assert summary("x" * 300) == "x" * (LIMIT - 1) + ELLIPSIS


def test_columns_are_counted_as_docutils_counts_them():
    assert column_width("e\u0301") == 1 and column_width("데") == 2 and column_width("ｘ") == 2
    accented = "e\u0301" * 300  # a combining accent takes no column: the cut keeps as many letters as "x" * 300
    assert summary(accented) == "e\u0301" * (LIMIT - 1) + ELLIPSIS
    assert summary("데" * 300, "ja") == "데" * ((LIMIT - 1) // 2) + ELLIPSIS


def test_japanese_and_chinese_are_cut_between_characters_after_punctuation():
    cut = summary(JAPANESE, "ja")
    assert cut.endswith(ELLIPSIS) and column_width(cut) <= LIMIT
    assert len(cut) < 100  # full-width characters count two columns
    kept = cut[: -len(ELLIPSIS)]
    assert JAPANESE.startswith(kept) and JAPANESE[len(kept)] in "。、"  # the punctuation made way for "…"
    chinese = "页面上的每一段输出都是代码打印的结果" * 10
    assert summary(chinese, "zh_CN") == chinese[: (LIMIT - 1) // 2] + ELLIPSIS  # no punctuation: all that fit


def test_a_latin_word_in_japanese_text_is_not_split():
    text = "あ" * 70 + " DistributedDataParallel" + "い" * 40
    kept = summary(text, "ja")[: -len(ELLIPSIS)]
    assert kept == "あ" * 70


@pytest.mark.parametrize("language", ["en", "ko"])
def test_korean_is_cut_at_spaces_counting_full_width_characters(language):
    korean = "한 대의 머신에 GPU가 여러 개 있는 경우는 흔합니다. " * 8
    cut = summary(korean, language)
    assert column_width(cut) <= LIMIT and len(cut) < 100
    kept = cut[: -len(ELLIPSIS)]
    assert korean.startswith(kept) and re.match(r"\.? ", korean[len(kept):])  # a whole word (and its full stop)


def test_markup_is_stripped():
    assert plain_text("<code class='x'>nn.DataParallel</code> &amp;\n <em>DDP</em> &lt;3") == "nn.DataParallel & DDP <3"
    assert plain_text("(オプション) データ並列処理") == "(オプション) データ並列処理"

"""A page's description for search results and link previews, from its text.

Lengths are counted in display columns (docutils' column_width), a full-width
(CJK) character taking two and a combining mark none: a result shows about 155
Latin characters of a description, and about half as many Hangul, kana or hanzi.
"""

import html
import re

from docutils.utils import column_width

LIMIT = 155  # columns
ELLIPSIS = "…"
# Written without spaces between words: cut between characters, after punctuation where possible.
UNSPACED = {"ja", "zh_CN"}
_CJK_BREAKS = "。、，；：！？）」』】"
_TRAILING = ",;:.!?、，；：。！？ "
_TAG = re.compile(r"<[^>]*>")


def site_description(description: str, project: str) -> str:
    """What describes the site where a page has no text of its own (search, index) and on its pages outside
    Sphinx: conf.py's tutorials_site_description, else its project name."""
    return description or project


def plain_text(markup: str) -> str:
    """The text of an inline HTML fragment (a title, a paragraph), on one line."""
    return " ".join(html.unescape(_TAG.sub("", markup)).split())


def _fitting(text: str, room: int) -> int:
    """How many characters of `text` fit in `room` columns."""
    used = 0
    for i, c in enumerate(text):
        used += column_width(c)
        if used > room:
            return i
    return len(text)


def _word_cut(text: str, end: int) -> int:
    """The last word boundary at or before `end`; `end` itself if the first word is longer."""
    if end < len(text) and text[end].isspace():
        return end
    space = text.rfind(" ", 0, end)
    return space if space > 0 else end


def _latin(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _character_cut(text: str, end: int) -> int:
    """After the last punctuation in the last 40% before `end`, else between characters not inside a Latin word."""
    for i in range(end, int(end * 0.6), -1):
        if text[i - 1] in _CJK_BREAKS:
            return i
    cut = end
    while cut > end // 2 and _latin(text[cut - 1]) and _latin(text[cut]):
        cut -= 1
    return cut if cut > end // 2 else end


def summary(text: str, language: str = "en", limit: int = LIMIT) -> str:
    """`text` on one line, cut to `limit` columns with an ellipsis where it is longer.

    Cut at a word boundary, or between characters in languages written without
    spaces; the punctuation the cut leaves at the end gives way to the ellipsis.
    """
    text = " ".join(text.split())
    if column_width(text) <= limit:
        return text
    end = _fitting(text, limit - column_width(ELLIPSIS))
    cut = (_character_cut if language in UNSPACED else _word_cut)(text, end)
    return text[:cut].rstrip(_TRAILING) + ELLIPSIS

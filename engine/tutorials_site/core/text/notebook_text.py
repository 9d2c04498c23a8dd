r"""A tutorial's text blocks as the reST that sphinx-gallery's notebook conversion turns into plain Markdown.

sphinx-gallery's `rst2md` converts headings, math, notes, links and images, and passes the rest of reST
through: roles (``:class:`torch.nn.DataParallel` ``), a reference's label, and the escaped spaces a
translation writes between inline markup and the word it touches (``DataParallel``\ 은); CommonMark
shows them as typed. `for_markdown` gives each text block in the reST that reads the same on the page and
that `rst2md` leaves as Markdown a reader sees as intended, in every language:

- a role becomes what the page shows: code for Python objects (``~`` shortening honoured), the title for a
  reference (the target's title where the role gives none);
- escaped spaces go, as reST removes them;
- emphasis that CommonMark would not recognize where it touches a word (a delimiter after punctuation, before
  a letter) becomes inline HTML, which notebooks render;
- in a language written without spaces, the line breaks `tutorial_text.wrap` put between two of its
  characters go, as the page's do.

Literal blocks, code directives, comments (with their indented continuation) and inline literals are left as
they are: `tutorial_text.rst_blocks` says which lines are verbatim, as it does for translation.
"""

import re
import unicodedata
from collections.abc import Mapping
from itertools import groupby

from .tutorial_text import join_wide_breaks, rst_blocks

# Roles whose target is a Python object: the page shows it as code.
CODE_ROLES = {"class", "func", "meth", "mod", "attr", "obj", "data", "exc", "const", "any", "type"}
INLINE = re.compile(
    r"(?P<literal>``.+?``)"
    r"|(?::(?P<domain>[\w-]+))?:(?P<role>[\w-]+):`(?P<content>[^`]+)`"
    r"|(?P<escape>\\\s)",
    re.S,
)
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", re.S)
EMPHASIS = re.compile(r"(?<![*\\])(?P<mark>\*\*|\*)(?=[^\s*])(?P<text>.+?)(?<=[^\s*\\])(?P=mark)(?!\*)", re.S)
LITERAL = re.compile(r"(``.+?``)", re.S)  # captured: split keeps the literals, at the odd places


def _shown(role: str, content: str, titles: Mapping[str, str]) -> str:
    """What the page shows for a role: its explicit title, else its target as Sphinx writes it."""
    titled = TITLED.fullmatch(content)
    if titled:
        return titled["title"]
    target = content.lstrip("!")
    if role in CODE_ROLES and target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return titles.get(target, target)


def _inline(match: re.Match[str], titles: Mapping[str, str]) -> str:
    if match["literal"] or match["role"] == "math":
        return match.group()  # rst2md writes inline math as $…$
    if match["escape"]:
        return ""
    shown = " ".join(_shown(match["role"], match["content"], titles).split())
    return f"``{shown}``" if match["role"] in CODE_ROLES else shown


def _punctuation(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _flanking(before: str, after: str) -> bool:
    """CommonMark's left-flanking rule for a delimiter run between `before` and `after` ("" at either end of the
    text); the right-flanking rule is the same with the two swapped."""
    if not after or after.isspace():
        return False
    return not _punctuation(after) or not before or before.isspace() or _punctuation(before)


def _emphasis(text: str) -> str:
    """Emphasis that CommonMark would not take as such, as inline HTML."""
    def replace(match: re.Match[str]) -> str:
        start, end = match.start(), match.end()
        before, after = text[start - 1:start], text[end:end + 1]
        inner_first, inner_last = match["text"][0], match["text"][-1]
        if _flanking(before, inner_first) and _flanking(after, inner_last):
            return match.group()
        tag = "strong" if match["mark"] == "**" else "em"
        return f"<{tag}>{match['text']}</{tag}>"
    return EMPHASIS.sub(replace, text)


def _prose(text: str, spaced: bool, titles: Mapping[str, str]) -> str:
    text = INLINE.sub(lambda match: _inline(match, titles), text)
    text = "".join(part if i % 2 else _emphasis(part) for i, part in enumerate(LITERAL.split(text)))
    return text if spaced else join_wide_breaks(text)


def for_markdown(rst: str, spaced: bool = True, titles: Mapping[str, str] | None = None) -> str:
    """`rst`, a text block of a tutorial, as the reST that rst2md turns into plain Markdown (see above).

    `titles`: the title of each reference target (a label or a document) a role names without a title.
    """
    titles = titles or {}
    numbered = list(enumerate(rst.split("\n")))
    verbatim = {row for block in rst_blocks(numbered) if block.verbatim for row, _ in numbered[block.start:block.end]}
    out: list[str] = []
    # A paragraph's lines together (emphasis and roles never run from one paragraph to the next), verbatim and
    # blank lines as they are.
    for is_prose, group in groupby(numbered, lambda line: line[0] not in verbatim and bool(line[1].strip())):
        texts = [text for _, text in group]
        out += [_prose("\n".join(texts), spaced, titles)] if is_prose else texts
    return "\n".join(out)

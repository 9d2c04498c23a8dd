"""The translatable text of a tutorial script, and the script rebuilt around translated text.

A unit is one title, heading, paragraph or list item of the reST in the
docstring and the comment blocks, or one code comment (a run of full-line
comments, or a trailing comment). Its msgid is the text without comment
markers, continuation line breaks or heading underlines. A transition
(`----`), a target, a comment and a substitution definition are never units:
they have no text to translate, and stay as the English has them.

`render` writes a translation back line for line: every unit starts on the
line where the English one starts and the lines it no longer needs are left
blank, so the code keeps the English line numbers (tracebacks point to the
real line) and only text and comments differ. Translations are always written
on lines of their own with their comment marker, so no translation can leave
the docstring or a comment.
"""

import ast
import functools
import io
import re
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docutils.utils import column_width as display_width  # columns, as docutils measures a heading's underline

from ..errors import SiteError
from ..sphinx_gallery_formats import TEXT_BLOCK_HEADER, paragraph_starts
from ..tutorial_settings import SETTINGS

UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:._])\1{2,}\s*$")
DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::(.*)$")
EXPLICIT = re.compile(r"^(\s*)(\.\.|__)(\s|$)")  # comments, targets (anonymous ones too), substitution definitions
# A line of four or more of one punctuation character that is no heading's adornment: a transition.
TRANSITION = re.compile(r"^\s*([!-/:-@\[-`{-~])\1{3,}\s*$")
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+\.|#\.|\(\d+\))(\s+)(\S.*)$")
FIELD = re.compile(r"^\s*:[\w -]+:")
# Admonitions whose body is prose; every other directive (code, images, math) is kept as is.
# Those that take a version on their line, not text.
VERSIONED = {"versionadded", "versionchanged", "deprecated"}
ADMONITIONS = {"note", "warning", "tip", "important", "hint", "attention", "caution", "danger",
               "error", "seealso", "versionadded", "versionchanged", "deprecated"}
CONFIG_LINE = re.compile(r"^\s*sphinx_gallery_\w+\s*=")
# A docstring's opening: a prefix and triple quotes; text may follow on its line, as text may precede the closing.
DOCSTRING_OPENING = re.compile(r"^\s*[rRuU]?(\"\"\"|''')")
# Comments that are configuration, not text (sphinx-gallery's, ours: core.tutorial_settings).
NOT_TEXT_COMMENT = re.compile(rf"^#\s*(sphinx_gallery_|%%|!|-\*-|noqa|type:|pragma|fmt:|tutorials-({'|'.join(SETTINGS)}):)")


class TutorialSyntaxError(SiteError, ValueError):
    """The tutorial's text cannot be split into units: names the file and line."""


@dataclass
class Unit:
    """One translatable piece of a tutorial's text, and where and how its English is written."""

    kind: str  # title, heading, paragraph, item, comment, inline-comment
    msgid: str
    lines: list[int]  # 0-based indices of the source lines the English unit occupies
    prefix: str = ""  # what precedes the text on every line: "# ", indentation, or ""
    marker: str = ""  # list marker with its spacing, for items
    underline: str = ""  # adornment character, for headings
    overline: bool = False
    column: int = 0  # for trailing comments: where the '#' starts
    parts: tuple[str, ...] = ()  # the text of each of its lines, stripped, as the msgid joins them
    hanging: str | None = None  # what precedes the text on its lines after the first, where not the marker's width

    @property
    def lineno(self) -> int:
        """Its first line, counted from 1."""
        return self.lines[0] + 1

    @property
    def is_rst(self) -> bool:
        """Whether its text is reST (not a code comment's plain text)."""
        return self.kind in ("title", "heading", "paragraph", "item")


@dataclass
class Tutorial:
    """A tutorial script's lines and the units of its text."""

    path: str
    lines: list[str]  # with their line ends
    units: list[Unit] = field(default_factory=list)
    docstring_lines: range = range(0)  # from the line of its opening quotes to that of its closing ones
    # (row, text) of each of its lines without the quotes that open and close it, which may share a line with text
    docstring_text: list[tuple[int, str]] = field(default_factory=list)
    opening: str = ""  # what opens it: its prefix and quotes
    code_rows: frozenset[int] = frozenset()  # the 0-based rows outside the docstring and the text blocks


def _parts(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(t.strip() for t in texts)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _blank(numbered: Sequence[tuple[int, str]], i: int) -> bool:
    return not numbered[i][1].strip()


@dataclass(frozen=True)
class Block:
    """One piece of a reST text region, numbered[start:end] (see rst_blocks)."""

    # heading, transition, admonition (its line and options), item, paragraph, config (a sphinx_gallery_ line); and
    # the verbatim kinds: directive (code, images, math: its line and body), explicit (comment, target, substitution
    # definition: its line and indented continuation), literal (the block a paragraph's "::" opens)
    kind: str
    start: int
    end: int

    @property
    def verbatim(self) -> bool:
        """Whether its lines are kept as written: never a unit to translate, never rewritten for a notebook."""
        return self.kind in ("directive", "explicit", "literal")


def _heading_end(numbered: Sequence[tuple[int, str]], i: int) -> int | None:
    """The index after the heading (with or without an overline) that starts at numbered[i]; None if none does."""
    text, n = numbered[i][1], len(numbered)
    if (UNDERLINE.match(text) and i + 2 < n and not _blank(numbered, i + 1)
            and UNDERLINE.match(numbered[i + 2][1]) and numbered[i + 2][1][0] == text[0]):
        return i + 3
    if i + 1 < n and not _blank(numbered, i + 1) and UNDERLINE.match(numbered[i + 1][1]) and _indent(text) == 0:
        return i + 2
    return None


def _past_fields(numbered: Sequence[tuple[int, str]], i: int, indent: int) -> int:
    """The index after the option fields, from numbered[i] on, of a directive indented by INDENT."""
    while i < len(numbered) and FIELD.match(numbered[i][1]) and _indent(numbered[i][1]) > indent:
        i += 1
    return i


def _past_deeper(numbered: Sequence[tuple[int, str]], i: int, indent: int) -> int:
    """The index after the lines, from numbered[i] on, indented deeper than INDENT (blank lines within them)."""
    end = i
    while i < len(numbered) and (_blank(numbered, i) or _indent(numbered[i][1]) > indent):
        i += 1
        if not _blank(numbered, i - 1):
            end = i
    return end


def _item_end(numbered: Sequence[tuple[int, str]], i: int, item: re.Match[str]) -> int:
    """The index after the list item that starts at numbered[i] (ITEM: its first line's match)."""
    body_indent = len(item[1]) + len(item[2]) + len(item[3])
    j = i + 1
    while j < len(numbered) and not _blank(numbered, j) and _indent(numbered[j][1]) >= body_indent \
            and not LIST_ITEM.match(numbered[j][1]):
        j += 1
    return j


def _paragraph_end(numbered: Sequence[tuple[int, str]], i: int) -> int:
    """The index after the paragraph that starts at numbered[i] (on an admonition's line: its lines after it are
    indented as the admonition's body)."""
    on_directive = DIRECTIVE.match(numbered[i][1]) is not None
    indent = _indent(numbered[i + 1][1]) if on_directive and i + 1 < len(numbered) else _indent(numbered[i][1])
    if on_directive and indent <= _indent(numbered[i][1]):
        return i + 1
    j = i + 1
    while j < len(numbered) and not _blank(numbered, j) and _indent(numbered[j][1]) == indent \
            and not LIST_ITEM.match(numbered[j][1]) and not DIRECTIVE.match(numbered[j][1]):
        j += 1
    return j


def _block(numbered: Sequence[tuple[int, str]], i: int) -> Block:
    """The block that starts at numbered[i], a line with text; a verbatim one with the lines it keeps."""
    text, indent = numbered[i][1], _indent(numbered[i][1])
    if CONFIG_LINE.match(text):
        return Block("config", i, i + 1)
    heading_end = _heading_end(numbered, i)
    if heading_end is not None:
        return Block("heading", i, heading_end)
    if TRANSITION.match(text):
        return Block("transition", i, i + 1)
    directive = DIRECTIVE.match(text)
    if directive and directive[2] in ADMONITIONS and directive[2] not in VERSIONED and directive[3].strip():
        return Block("paragraph", i, _paragraph_end(numbered, i))  # its text starts on its line: ".. note:: Text"
    if directive and directive[2] in ADMONITIONS:  # its options stay; its body is prose, blocks like the rest
        return Block("admonition", i, _past_fields(numbered, i + 1, indent))
    if directive or EXPLICIT.match(text):
        return Block("directive" if directive else "explicit", i, _past_deeper(numbered, i + 1, indent))
    item = LIST_ITEM.match(text)
    return Block("item", i, _item_end(numbered, i, item)) if item else Block("paragraph", i, _paragraph_end(numbered, i))


def rst_blocks(numbered: Sequence[tuple[int, str]]) -> list[Block]:
    """The blocks of one reST text region, `numbered` being [(line index, text without comment marker)]: the one
    reading of which lines are verbatim, for translation (`parse`) and for notebooks (notebook_text) alike."""
    blocks: list[Block] = []
    i = 0
    while i < len(numbered):
        if _blank(numbered, i):
            i += 1
            continue
        block = _block(numbered, i)
        blocks.append(block)
        i = block.end
        if block.kind in ("item", "paragraph") and numbered[i - 1][1].rstrip().endswith("::"):
            literal_end = _past_deeper(numbered, i, _indent(numbered[block.start][1]))
            if literal_end > i:
                blocks.append(Block("literal", i, literal_end))
                i = literal_end
    return blocks


def _unit(numbered: Sequence[tuple[int, str]], block: Block, prefix: str, title: bool) -> Unit:
    """The unit of a heading, item or paragraph block."""
    rows, texts = [k for k, _ in numbered[block.start:block.end]], [t for _, t in numbered[block.start:block.end]]
    if block.kind == "heading":
        overline = len(rows) == 3
        return Unit("title" if title else "heading", texts[overline].strip(), rows, prefix=prefix,
                    underline=texts[-1].strip()[0], overline=overline)
    item = LIST_ITEM.match(texts[0])
    if block.kind == "item" and item:
        parts = _parts([item[4]] + texts[1:])
        return Unit("item", " ".join(parts), rows, prefix=prefix + item[1], marker=item[2] + item[3], parts=parts)
    directive = DIRECTIVE.match(texts[0])
    if directive:  # an admonition whose text starts on its line: the directive is its marker
        marker = texts[0][:len(texts[0]) - len(directive[3].lstrip())]
        parts = _parts([directive[3]] + texts[1:])
        hanging = prefix + " " * _indent(texts[1]) if len(texts) > 1 else None
        return Unit("paragraph", " ".join(parts), rows, prefix=prefix, marker=marker, parts=parts, hanging=hanging)
    parts = _parts(texts)
    return Unit("paragraph", " ".join(parts), rows, prefix=prefix + " " * _indent(texts[0]), parts=parts)


def _segment_rst(numbered: list[tuple[int, str]], prefix: str, kind_of_first_heading: bool) -> list[Unit]:
    """Units of one reST text region: `numbered` is [(line index, text without comment marker)]."""
    units: list[Unit] = []
    title_wanted = kind_of_first_heading  # a title: the first heading, in a region that has one (the docstring)
    for block in rst_blocks(numbered):
        if block.kind in ("heading", "item", "paragraph"):
            units.append(_unit(numbered, block, prefix, title_wanted and block.kind == "heading"))
            title_wanted = title_wanted and block.kind != "heading"
    return units


def _comment_units(tutorial: Tutorial, code_lines: set[int]) -> list[Unit]:
    """Code comments in the lines not part of the docstring or text blocks."""
    source = "".join(line if i in code_lines else "\n" for i, line in enumerate(tutorial.lines))
    comments = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and not NOT_TEXT_COMMENT.match(token.string):
            row, col = token.start[0] - 1, token.start[1]
            full_line = not tutorial.lines[row][:col].strip()
            comments.append((row, col, full_line, token.string))
    units: list[Unit] = []
    for row, col, full_line, string in comments:
        text = re.sub(r"^#\s?", "", string).strip()
        if not text:
            continue
        previous = units[-1] if units else None
        if (full_line and previous and previous.kind == "comment" and previous.lines[-1] == row - 1
                and previous.column == col):
            previous.lines.append(row)
            previous.parts += (text,)
            previous.msgid = " ".join(previous.parts)
            continue
        kind = "comment" if full_line else "inline-comment"
        units.append(Unit(kind, text, [row], prefix=" " * col + "# ", column=col, parts=(text,)))
    return units


def parse(path: Path | str, text: str | None = None) -> Tutorial:
    """Split a tutorial script into its units (in file order)."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    tutorial = Tutorial(str(path), text.splitlines(keepends=True))
    try:
        module = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise TutorialSyntaxError(f"{path}:{error.lineno}: {error.msg}") from None
    lines = [line.rstrip("\n") for line in tutorial.lines]
    units: list[Unit] = []
    text_lines: set[int] = set()

    docstring = ast.get_docstring(module, clean=False) is not None and module.body[0]
    if docstring:
        first, last = docstring.lineno - 1, (docstring.end_lineno or docstring.lineno) - 1
        opening, closed = DOCSTRING_OPENING.match(lines[first]), lines[last].rstrip()
        if not opening or not closed.endswith(opening[1]) or (first == last and len(closed) < opening.end() + 3):
            raise TutorialSyntaxError(f"{path}:{first + 1}: the docstring must be in triple quotes (\"\"\" or ''')")
        tutorial.docstring_lines, tutorial.opening = range(first, last + 1), opening[0]
        text_lines.update(tutorial.docstring_lines)
        rows = {k: lines[k] for k in tutorial.docstring_lines}
        rows[first], rows[last] = rows[first][opening.end():], rows[last].rstrip()[:-3]
        if first == last:
            rows[first] = closed[opening.end():-3]
        tutorial.docstring_text = list(rows.items())
        units += _segment_rst(tutorial.docstring_text, "", kind_of_first_heading=True)

    k = 0
    while k < len(lines):
        if k not in text_lines and TEXT_BLOCK_HEADER.match(lines[k]):
            text_lines.add(k)
            block, k = [], k + 1
            while k < len(lines) and lines[k].startswith("#"):
                text_lines.add(k)
                block.append((k, re.sub(r"^#\s?", "", lines[k])))
                k += 1
            units += _segment_rst(block, "# ", kind_of_first_heading=False)
        else:
            k += 1

    code_lines = set(range(len(lines))) - text_lines
    tutorial.code_rows = frozenset(code_lines)
    units += _comment_units(tutorial, code_lines)
    tutorial.units = sorted(units, key=lambda u: (u.lines[0], u.column))
    return tutorial


# Inline markup a line never breaks inside, nor next to: a line break there would add a space or break the markup.
INLINE_MARKUP = re.compile(
    r"``.+?``"  # inline literal
    r"|(?::[\w:.+-]+:)?`[^`]+`(?::[\w:.+-]+:)?_{0,2}"  # roles, interpreted text, references
    r"|\*\*\S(?:.*?\S)?\*\*|\*\S(?:.*?\S)?\*"  # strong, emphasis
    r"|\|\S(?:[^|]*\S)?\|_{0,2}"  # substitution references
    r"|\\."  # an escaped character; an escaped space joins what it separates
)
# Japanese and Chinese write words without spaces, and a line break between two of their characters may fall
# inside a word, which a reader of the downloaded script then reads cut in two. So a line breaks there only after
# the punctuation that ends a clause or closes a bracket, and never before more of it (kinsoku: no line starts
# with closing punctuation or a small kana); a paragraph without such a place stays on one long line.
BREAK_AFTER = set("、。，．：；？！）」』】〕〉》］｝〙〗")
NO_LINE_START = set("、。，．,.・：；？！?!）」』】〕〉》］｝〙〗’”ーゝゞ々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ…‥")


@functools.cache  # asked of every character of every translated paragraph at each build
def is_wide(ch: str) -> bool:
    """An East Asian wide or fullwidth character: two columns, and in Japanese and Chinese a letter of words
    written without spaces."""
    return display_width(ch) == 2


def _atoms(text: str) -> list[str]:
    """The text as atoms: a piece of inline markup, a single space, or any other single character.

    Emphasis, roles and references may break at their spaces as in reST (before a link's `<url>`, say);
    literals, substitutions and escapes never.
    """
    atoms, position = [], 0
    for markup in INLINE_MARKUP.finditer(text):
        atoms += list(text[position:markup.start()])
        piece = markup.group()
        atoms += [piece] if piece[:2] == "``" or piece[0] in "\\|" else [a for a in re.split("( )", piece) if a]
        position = markup.end()
    return atoms + list(text[position:])


def _breakable(before: str, after: str, spaced: bool) -> bool:
    """Whether a line may break between two atoms that touch (no space between them): in a language written
    without spaces, after its clause-ending or closing punctuation, before another of its characters."""
    return (not spaced and len(before) == len(after) == 1 and before in BREAK_AFTER and is_wide(after)
            and after not in NO_LINE_START)


def _words(text: str, spaced: bool) -> list[tuple[str, str]]:
    """(separator, word) pairs: a line may break before each word, the separator (" " or "") then dropped."""
    words: list[tuple[str, str]] = []
    separator, word = "", ""
    atoms = _atoms(text)
    for index, atom in enumerate(atoms):
        if atom == " ":
            before, after = word[-1:], (atoms[index + 1] if index + 1 < len(atoms) else "")[:1]
            if not spaced and before and after and is_wide(after):
                # Before a Japanese or Chinese character a space never breaks: between two of them a line break would
                # be read as no space at all, and after a number or a Latin word it would cut "1 つ" or "GPU に".
                word += atom
                continue
            if word:
                words.append((separator, word))
            separator, word = " ", ""
            continue
        if word and _breakable(word[-1], atom, spaced):
            words.append((separator, word))
            separator, word = "", ""
        word += atom
    if word:
        words.append((separator, word))
    return words


def _lines(words: list[tuple[str, str, int]], width: int) -> list[str]:
    """Greedy filling of (separator, word, its width) words: each line as long as it can be within `width`
    columns (a longer word alone). Widths add up: docutils counts them character by character."""
    lines: list[str] = []
    used = 0
    for separator, word, size in words:
        if lines and used + len(separator) + size <= width:
            lines[-1] += separator + word
            used += len(separator) + size
        else:
            lines.append(word)
            used = size
    return lines


def wrap(text: str, count: int, spaced: bool = True) -> list[str]:
    """`text` on at most `count` lines, as even as can be, broken only where a reader of the language sees
    the break as the space it replaces (at spaces) or as nothing (in Japanese and Chinese, `spaced` False,
    after a clause's punctuation: `join_wide_breaks` removes those line breaks where the text is shown); fewer
    lines where the text has fewer such places."""
    words = [(separator, word, display_width(word)) for separator, word in _words(text, spaced)]
    if count <= 1 or len(words) <= 1:
        return [text]
    low, high = max(size for _, _, size in words), display_width(text)
    while low < high:  # the narrowest width that needs no more than `count` lines
        middle = (low + high) // 2
        if len(_lines(words, middle)) <= count:
            high = middle
        else:
            low = middle + 1
    return _lines(words, low)


def join_wide_breaks(text: str) -> str:
    """The text without the line breaks (and the indentation after them) that stand between two wide
    characters, as `wrap` breaks Japanese and Chinese: a browser or a notebook would show each as a space."""
    def joined(match: re.Match[str]) -> str:
        inside = match.start() > 0 and match.end() < len(text)
        return "" if inside and is_wide(text[match.start() - 1]) and is_wide(text[match.end()]) else match.group()
    return re.sub(r"\n[ \t]*", joined, text)


def _raw_docstring(tutorial: Tutorial, texts: list[str]) -> bool:
    '''Whether the docstring is written raw (r"""), so the translated reST reads as written: it is where the
    English one is, and becomes so where the English has no prefix and no backslash and no translation holds
    three double quotes (in a plain string every reST escape would show doubled).'''
    opening = tutorial.opening.strip()
    if opening[:1] in "rR":
        return True
    body = "".join(text for _, text in tutorial.docstring_text)
    return opening in ('"""', "'''") and "\\" not in body and not any(opening in text for text in texts)


def _intro_row(tutorial: Tutorial) -> int | None:
    """The line where sphinx-gallery's intro starts (its docstring's second paragraph: paragraph_starts); None where
    there is no second one (the intro is then the title)."""
    rows = [row for row, _ in tutorial.docstring_text]
    text = "\n".join(line for _, line in tutorial.docstring_text)
    starts = paragraph_starts(text)
    return rows[text.count("\n", 0, starts[1])] if len(starts) > 1 else None


def _in_docstring(text: str, raw: bool, quote: str) -> str:
    """Text as the docstring holds it: it cannot end inside a translation (QUOTE: its quotes), raw or not."""
    return (text if raw else text.replace("\\", "\\\\")).replace(quote, quote[:2] + "\\" + quote[2])


def _with_quotes(tutorial: Tutorial, row: int, line: str) -> str:
    """LINE, written at ROW of the docstring, with the quotes the English has on that row (before its text, or
    after it: a space keeps a quote that ends the text from joining the closing ones)."""
    first, last, quote = tutorial.docstring_lines[0], tutorial.docstring_lines[-1], tutorial.opening[-1]
    if row == last:
        line += (" " if line.endswith(quote) else "") + quote * 3
    return tutorial.opening + line if row == first else line


def render(tutorial: Tutorial, translations: Mapping[str, str], spaced: bool = True) -> str:
    """The tutorial's source with each unit's text replaced by translations.get(msgid) when given.

    A unit's text fills the lines its English had (`wrap`), so the script keeps the English line structure;
    `spaced` False: the language writes words without spaces (Japanese, Chinese).
    """
    lines = [line.rstrip("\n") for line in tutorial.lines]
    texts = {unit.msgid: " ".join(translations[unit.msgid].split())  # no newline of any kind reaches the file
             for unit in tutorial.units if translations.get(unit.msgid)}
    docstring_texts = [texts[unit.msgid] for unit in tutorial.units
                       if unit.msgid in texts and unit.lines[0] in tutorial.docstring_lines]
    raw = bool(docstring_texts) and _raw_docstring(tutorial, docstring_texts)
    quote = tutorial.opening[-3:]
    # sphinx-gallery's intro (the thumbnail's tooltip) joins its lines with spaces: it breaks at spaces only.
    intro_row = _intro_row(tutorial)
    intro = next((unit for unit in tutorial.units if intro_row in unit.lines), None)
    for unit in tutorial.units:
        text = texts.get(unit.msgid)
        if not text:
            continue
        in_docstring = unit.lines[0] in tutorial.docstring_lines

        blank = "" if in_docstring else ("#" if unit.prefix.startswith("#") else unit.prefix.rstrip())
        if unit.kind == "inline-comment":
            row = unit.lines[0]
            lines[row] = lines[row][: unit.column] + "# " + text
            continue
        if unit.kind in ("title", "heading"):
            rule = unit.prefix + unit.underline * display_width(text)
            new = ([rule] if unit.overline else []) + [unit.prefix + (_in_docstring(text, raw, quote) if in_docstring
                                                                      else text), rule]
        else:
            parts = [_in_docstring(part, raw, quote) if in_docstring else part
                     for part in wrap(text, len(unit.lines), spaced or unit is intro)]
            lead = unit.prefix + unit.marker
            rest = unit.hanging if unit.hanging is not None else unit.prefix + " " * len(unit.marker)
            new = [lead + parts[0]] + [rest + part for part in parts[1:]]
        new += [blank] * (len(unit.lines) - len(new))
        for row, line in zip(unit.lines, new):
            line = line.rstrip() if line.strip() else blank
            # The English's quotes on the rows of the text (a docstring on one line, text beside its quotes).
            ends = (tutorial.docstring_lines[0], tutorial.docstring_lines[-1]) if in_docstring else ()
            lines[row] = _with_quotes(tutorial, row, line) if row in ends else line
    if raw:
        first = tutorial.docstring_lines[0]
        lines[first] = re.sub(r"""^(\s*)(\"\"\"|''')""", r"\1r\2", lines[first])
    return "\n".join(lines) + "\n"

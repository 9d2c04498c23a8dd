"""The translatable text of a tutorial script, and the script rebuilt around translated text.

A unit is one title, heading, paragraph or list item of the reST in the
docstring and the comment blocks, or one code comment (a run of full-line
comments, or a trailing comment). Its msgid is the text without comment
markers, continuation line breaks or heading underlines.

`render` writes a translation back line for line: every unit starts on the
line where the English one starts and the lines it no longer needs are left
blank, so the code keeps the English line numbers (tracebacks point to the
real line) and only text and comments differ. Translations are always written
on lines of their own with their comment marker, so no translation can leave
the docstring or a comment.
"""

import ast
import io
import math
import re
import textwrap
import tokenize
from dataclasses import dataclass, field

from docutils.utils import column_width as display_width  # columns, as docutils measures a heading's underline

from .errors import SiteError
from .runs import SETTINGS

# sphinx-gallery: a text block follows a line of 20+ '#' or a '# %%' line.
BLOCK_HEADER = re.compile(r"^(#{20,}.*|# ?%%.*)$")
UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:._])\1{2,}\s*$")
DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::(.*)$")
EXPLICIT = re.compile(r"^(\s*)\.\.(\s|$)")  # comments, targets, substitutions
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+\.|#\.|\(\d+\))(\s+)(\S.*)$")
FIELD = re.compile(r"^\s*:[\w -]+:")
# Admonitions whose body is prose; every other directive (code, images, math) is kept as is.
ADMONITIONS = {"note", "warning", "tip", "important", "hint", "attention", "caution", "danger",
               "error", "seealso", "versionadded", "versionchanged", "deprecated"}
CONFIG_LINE = re.compile(r"^\s*sphinx_gallery_\w+\s*=")
# Comments that are configuration, not text (sphinx-gallery's, ours: core.runs.SETTINGS).
NOT_TEXT_COMMENT = re.compile(rf"^#\s*(sphinx_gallery_|%%|!|-\*-|noqa|type:|pragma|fmt:|tutorials-({'|'.join(SETTINGS)}):)")


class TutorialSyntaxError(SiteError, ValueError):
    """The tutorial's text cannot be split into units: names the file and line."""


@dataclass
class Unit:
    kind: str  # title, heading, paragraph, item, comment, inline-comment
    msgid: str
    lines: list  # 0-based indices of the source lines the English unit occupies
    prefix: str = ""  # what precedes the text on every line: "# ", indentation, or ""
    marker: str = ""  # list marker with its spacing, for items
    underline: str = ""  # adornment character, for headings
    overline: bool = False
    column: int = 0  # for trailing comments: where the '#' starts

    @property
    def lineno(self):
        return self.lines[0] + 1

    @property
    def is_rst(self):
        return self.kind in ("title", "heading", "paragraph", "item")


@dataclass
class Tutorial:
    path: str
    lines: list
    units: list = field(default_factory=list)
    docstring_lines: range = range(0)


def _joined(texts):
    return " ".join(t.strip() for t in texts)


def _indent(text):
    return len(text) - len(text.lstrip(" "))


def _segment_rst(tutorial, numbered, prefix, kind_of_first_heading):
    """Units of one reST text region: `numbered` is [(line index, text without comment marker)]."""
    units, i, n = [], 0, len(numbered)
    verbatim_deeper_than = None  # indentation of a literal block or non-prose directive in progress

    def blank(j):
        return not numbered[j][1].strip()

    while i < n:
        index, text = numbered[i]
        if blank(i) or CONFIG_LINE.match(text):
            i += 1
            continue
        indent = _indent(text)
        if verbatim_deeper_than is not None:
            if indent > verbatim_deeper_than:
                i += 1
                continue
            verbatim_deeper_than = None
        # Headings, with or without an overline.
        if (UNDERLINE.match(text) and i + 2 < n and not blank(i + 1)
                and UNDERLINE.match(numbered[i + 2][1]) and numbered[i + 2][1][0] == text[0]):
            kind = "title" if kind_of_first_heading and not any(u.kind == "title" for u in units) else "heading"
            units.append(Unit(kind, numbered[i + 1][1].strip(), [index, numbered[i + 1][0], numbered[i + 2][0]],
                              prefix=prefix, underline=text[0], overline=True))
            i += 3
            continue
        if i + 1 < n and not blank(i + 1) and UNDERLINE.match(numbered[i + 1][1]) and indent == 0:
            kind = "title" if kind_of_first_heading and not any(u.kind == "title" for u in units) else "heading"
            units.append(Unit(kind, text.strip(), [index, numbered[i + 1][0]], prefix=prefix,
                              underline=numbered[i + 1][1].strip()[0]))
            i += 2
            continue
        directive = DIRECTIVE.match(text)
        if directive:
            i += 1
            if directive[2] not in ADMONITIONS:
                verbatim_deeper_than = indent
            else:  # its options stay; its body is prose, segmented like the rest
                while i < n and FIELD.match(numbered[i][1]) and _indent(numbered[i][1]) > indent:
                    i += 1
            continue
        if EXPLICIT.match(text):
            verbatim_deeper_than = indent
            i += 1
            continue
        item = LIST_ITEM.match(text)
        if item:
            body_indent = len(item[1]) + len(item[2]) + len(item[3])
            j = i + 1
            while j < n and not blank(j) and _indent(numbered[j][1]) >= body_indent \
                    and not LIST_ITEM.match(numbered[j][1]):
                j += 1
            msgid = _joined([item[4]] + [t for _, t in numbered[i + 1:j]])
            units.append(Unit("item", msgid, [k for k, _ in numbered[i:j]], prefix=prefix + item[1],
                              marker=item[2] + item[3]))
        else:
            j = i + 1
            while j < n and not blank(j) and _indent(numbered[j][1]) == indent \
                    and not LIST_ITEM.match(numbered[j][1]) and not DIRECTIVE.match(numbered[j][1]):
                j += 1
            msgid = _joined(t for _, t in numbered[i:j])
            units.append(Unit("paragraph", msgid, [k for k, _ in numbered[i:j]], prefix=prefix + " " * indent))
        if units[-1].msgid.endswith("::"):
            verbatim_deeper_than = indent
        i = j
    return units


def _comment_units(tutorial, code_lines):
    """Code comments in the lines not part of the docstring or text blocks."""
    source = "".join(line if i in code_lines else "\n" for i, line in enumerate(tutorial.lines))
    comments = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and not NOT_TEXT_COMMENT.match(token.string):
            row, col = token.start[0] - 1, token.start[1]
            full_line = not tutorial.lines[row][:col].strip()
            comments.append((row, col, full_line, token.string))
    units = []
    for row, col, full_line, string in comments:
        text = re.sub(r"^#\s?", "", string).strip()
        if not text:
            continue
        previous = units[-1] if units else None
        if (full_line and previous and previous.kind == "comment" and previous.lines[-1] == row - 1
                and previous.column == col):
            previous.lines.append(row)
            previous.msgid = _joined([previous.msgid, text])
            continue
        kind = "comment" if full_line else "inline-comment"
        units.append(Unit(kind, text, [row], prefix=" " * col + "# ", column=col))
    return units


def parse(path, text=None):
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
    units, text_lines = [], set()

    docstring = ast.get_docstring(module, clean=False) is not None and module.body[0]
    if docstring:
        first, last = docstring.lineno - 1, docstring.end_lineno - 1
        if not re.fullmatch(r'[rRuU]?"""', lines[first].strip()) or lines[last].strip() != '"""':
            raise TutorialSyntaxError(
                f'{path}:{first + 1}: the docstring must open and close with """ on lines of their own'
            )
        tutorial.docstring_lines = range(first, last + 1)
        text_lines.update(tutorial.docstring_lines)
        body = [(k, lines[k]) for k in range(first + 1, last)]
        units += _segment_rst(tutorial, body, "", kind_of_first_heading=True)

    k = 0
    while k < len(lines):
        if k not in text_lines and BLOCK_HEADER.match(lines[k]):
            text_lines.add(k)
            block, k = [], k + 1
            while k < len(lines) and lines[k].startswith("#"):
                text_lines.add(k)
                block.append((k, re.sub(r"^#\s?", "", lines[k])))
                k += 1
            units += _segment_rst(tutorial, block, "# ", kind_of_first_heading=False)
        else:
            k += 1

    code_lines = set(range(len(lines))) - text_lines
    units += _comment_units(tutorial, code_lines)
    tutorial.units = sorted(units, key=lambda u: (u.lines[0], u.column))
    return tutorial


def _fit(text, count, width):
    """Wrap `text` into at most `count` lines, widening them as needed."""
    if count == 1:
        return [text]
    width = max(width, math.ceil(display_width(text) / count))
    while True:
        wrapped = textwrap.wrap(text, width=width, break_long_words=True, break_on_hyphens=False)
        if len(wrapped) <= count:
            return wrapped
        width += 4


def render(tutorial, translations):
    """The tutorial's source with each unit's text replaced by translations.get(msgid) when given."""
    lines = [line.rstrip("\n") for line in tutorial.lines]
    for unit in tutorial.units:
        text = translations.get(unit.msgid)
        if not text:
            continue
        text = " ".join(text.split())  # one line: no newline of any kind can reach the file
        in_docstring = unit.lines[0] in tutorial.docstring_lines
        if in_docstring:
            text = text.replace("\\", "\\\\").replace('"""', '""\\"')
        blank = "" if in_docstring else ("#" if unit.prefix.startswith("#") else unit.prefix.rstrip())
        if unit.kind == "inline-comment":
            row = unit.lines[0]
            lines[row] = lines[row][: unit.column] + "# " + text
            continue
        if unit.kind == "comment":
            width = max(len(lines[row]) for row in unit.lines) - len(unit.prefix)
            new = [unit.prefix + part for part in _fit(text, len(unit.lines), width)]
        elif unit.kind in ("title", "heading"):
            rule = unit.prefix + unit.underline * display_width(text)
            new = ([rule] if unit.overline else []) + [unit.prefix + text, rule]
        elif unit.kind == "item":
            new = [unit.prefix + unit.marker + text]
        else:
            new = [unit.prefix + text]
        new += [blank] * (len(unit.lines) - len(new))
        for row, line in zip(unit.lines, new):
            lines[row] = line.rstrip() if line.strip() else blank
    return "\n".join(lines) + "\n"

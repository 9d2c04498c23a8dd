"""A copy translated in place, made into translations of a catalog's messages (`make import-translation`).

A tutorial script (or a page, whose pieces Sphinx reads: sphinxext.units) and its translated copy are read as
pieces (core.text.alignment) and paired. What a pair imports is checked as the build checks a catalog's translation:
one that breaks its markup is not imported, one that points elsewhere than the English (another link target,
inline literal or role: the English changed since, most likely) is imported as fuzzy, as is a pair that is
likely but not certain. Nothing else is imported: a unit that pairs with nothing, one left in English, a comment
on code that changed since the translation. Every unit not imported as it is becomes a line of the report.
"""

import ast
import io
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from babel.messages.catalog import Catalog

from . import tutorial_text
from .alignment import CODE, COMMENT, Pair, Piece, align, is_comment

# Why a translation may not replace its English (None: it may): (msgid, msgstr, the English piece's kind).
Check = Callable[[str, str, str], str | None]
NAMES = {"title": "the title", "heading": "a heading", "paragraph": "a paragraph", "item": "a list item",
         COMMENT: "a code comment"}


@dataclass(frozen=True)
class Imported:
    """A translation a catalog's message gets; FUZZY: kept for its translator, shown in English until reviewed."""

    msgid: str
    msgstr: str
    fuzzy: bool


@dataclass(frozen=True)
class Finding:
    """One line of the report: at LINE of the translated file, what became of a unit that was not imported as is."""

    line: int
    text: str


@dataclass(frozen=True)
class Result:
    """What one translated file gives: its imports, its report, and how many English units it has."""

    imported: tuple[Imported, ...]
    findings: tuple[Finding, ...]
    units: int
    as_is: int = 0  # English units the translation itself left in English: nothing to import there

    @property
    def certain(self) -> int:
        """How many translations it imports as they are."""
        return sum(not i.fuzzy for i in self.imported)

    @property
    def fuzzy(self) -> int:
        """How many it imports as fuzzy."""
        return sum(i.fuzzy for i in self.imported)


def name(kind: str) -> str:
    """A piece's kind as the report says it: "a paragraph", "a code comment", "a caption"; a page's kind is its
    place in the document tree (sphinxext.units), where a title is a section's: a heading."""
    if "/" in kind:
        last = kind.rsplit("/", 1)[-1]
        return "a heading" if last == "title" else NAMES.get(last, f"a {last.replace('_', ' ')}")
    return NAMES.get(COMMENT if is_comment(kind) else kind.split()[0], f"a {kind.split()[0]}")


def _kind(unit: tutorial_text.Unit) -> str:
    """A script unit's structure: what it is and where it stands, which its translation keeps."""
    indent = len(unit.prefix) - (2 if unit.prefix.startswith("# ") else 0)
    if unit.kind == "inline-comment":
        return f"{COMMENT} after code"
    if unit.kind == "comment":
        return f"{COMMENT} at {unit.column}"
    if unit.kind == "heading":
        return f"heading {unit.underline}{'/' if unit.overline else ''}"
    if unit.kind == "item":
        return f"item {re.sub(r'[0-9]+', '1', unit.marker.strip())} {indent}"
    marker = f" {unit.marker.strip()}" if unit.marker else ""  # an admonition whose text starts on its line
    return f"{unit.kind} {indent}{marker}{' ::' if unit.msgid.endswith('::') else ''}"


def _value(text: str) -> str:
    """A docstring's text as the string holds it (its escapes read), as a catalog's translation is written."""
    if "\\" not in text:
        return text
    try:
        value = ast.literal_eval('"""' + text.replace('"""', '\\"\\"\\"') + ' """')
    except (SyntaxError, ValueError):
        return text
    return " ".join(str(value).split())


def _code(tutorial: tutorial_text.Tutorial) -> dict[int, str]:
    """Each code row's tokens, comments aside, by row: the anchors. A string literal counts as any string: a
    translator may translate a docstring or a printed message, and the code is still the English code."""
    source = "".join(line if row in tutorial.code_rows else "\n" for row, line in enumerate(tutorial.lines))
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    rows: dict[int, list[str]] = {}
    for token in tokens:
        if token.type not in skipped:
            rows.setdefault(token.start[0] - 1, []).append("<string>" if token.type == tokenize.STRING else token.string)
    return {row: " ".join(parts) for row, parts in rows.items()}


def script_pieces(tutorial: tutorial_text.Tutorial, spaced: bool = True) -> list[Piece]:
    """A parsed script as pieces in reading order: its units' text (as a catalog holds it) and its code rows.
    SPACED False: its language writes words without spaces, and a line break between two of its characters is
    no space (tutorial_text.join_wide_breaks)."""
    raw = tutorial.opening.strip()[:1] in ("r", "R")
    pieces = [(row, -1, Piece(CODE, text, row + 1)) for row, text in _code(tutorial).items()]
    for unit in tutorial.units:
        in_docstring = unit.lines[0] in tutorial.docstring_lines
        text = unit.msgid if spaced or not unit.parts else " ".join(
            tutorial_text.join_wide_breaks("\n".join(unit.parts)).split())
        text = text if raw or not in_docstring else _value(text)
        pieces.append((unit.lines[0], unit.column, Piece(_kind(unit), text, unit.lineno)))
    return [piece for _, _, piece in sorted(pieces, key=lambda p: (p[0], p[1]))]


def _escaped(text: str) -> str:
    r"""TEXT with the escaped space reST needs between inline markup and a letter touching it (``x``\ 은), as
    TRANSLATING.md asks a translator to write it: a particle written straight after a literal is the commonest
    markup a translation made in place breaks."""
    pieces, position = [], 0
    for markup in tutorial_text.INLINE_MARKUP.finditer(text):
        if markup.group().startswith("\\"):
            continue
        start, end = markup.span()
        before = "\\ " if start and text[start - 1].isalnum() else ""
        after = "\\ " if end < len(text) and text[end].isalnum() else ""
        pieces += [text[position:start], before, markup.group(), after]
        position = end
    return "".join(pieces) + text[position:]


def _finding(pair: Pair, english: Sequence[Piece], translated: Sequence[Piece], english_file: str,
             near: int) -> Finding:
    """The report's line for a unit the pair does not import (NEAR: the translated line where a missing one goes)."""
    if pair.translated is None:
        assert pair.english is not None
        unit = english[pair.english]
        words = " ".join(unit.text.split()[:8])
        return Finding(near, f"left in English: {name(unit.kind)} with no translation here "
                             f"({english_file}:{unit.line}: {words!r})")
    piece = translated[pair.translated]
    why = {"extra": f"{name(piece.kind)} with no English counterpart",
           "same": f"{name(piece.kind)} left in English in the translation",
           "code changed": "a comment on code that differs from the English (changed since the translation)"}
    return Finding(piece.line, f"not imported: {why.get(pair.verdict, pair.verdict)}")


@dataclass(frozen=True)
class _Checked:
    """A translation as it would be imported, and what the build's checks say of it."""

    msgstr: str
    broken: str | None
    elsewhere: str | None


def _checked(unit: Piece, text: str, breaks: Check, points_elsewhere: Check) -> _Checked:
    """The translation checked as it is and, for reST, with the escapes a particle against inline markup needs
    (_escaped): the one the checks find least wrong with, as it is where both pass alike."""
    found = []
    for msgstr in dict.fromkeys([text] if is_comment(unit.kind) else [text, _escaped(text)]):
        broken = breaks(unit.text, msgstr, unit.kind)
        found.append(_Checked(msgstr, broken, None if broken else points_elsewhere(unit.text, msgstr, unit.kind)))
    return min(found, key=lambda c: (c.broken is not None, c.elsewhere is not None))


def _imported(pair: Pair, english: Sequence[Piece], translated: Sequence[Piece], english_file: str, breaks: Check,
              points_elsewhere: Check) -> tuple[Imported | None, Finding | None]:
    """What a pair the alignment made imports, and what the report says of it."""
    assert pair.english is not None and pair.translated is not None
    unit, piece = english[pair.english], translated[pair.translated]
    checked = _checked(unit, " ".join(piece.text.split()), breaks, points_elsewhere)
    msgstr = checked.msgstr
    if checked.broken:
        return None, Finding(piece.line, f"not imported: {checked.broken}")
    if checked.elsewhere:
        return Imported(unit.text, msgstr, True), Finding(piece.line, f"imported as fuzzy: {checked.elsewhere}")
    if pair.verdict == "near changed code":
        return Imported(unit.text, msgstr, True), Finding(
            piece.line, f"imported as fuzzy: {name(unit.kind)} beside code that differs from the English (changed "
                        "since the translation): check that it still translates it")
    if pair.verdict == "likely":
        return Imported(unit.text, msgstr, True), Finding(
            piece.line, f"imported as fuzzy: {name(unit.kind)} paired with {english_file}:{unit.line} by its "
                        "place more than by evidence: check that it translates it")
    return Imported(unit.text, msgstr, False), None


def pair_up(english: Sequence[Piece], translated: Sequence[Piece], english_file: str, breaks: Check,
            points_elsewhere: Check) -> Result:
    """Pair a document's pieces with its translated copy's: what is imported, and the report (ENGLISH_FILE: the
    English document as the report names it)."""
    imported: list[Imported] = []
    findings: list[Finding] = []
    near = 1
    pairs = align(english, translated)
    as_is = sum(pair.verdict == "same" for pair in pairs)
    for pair in pairs:
        if pair.translated is not None:
            near = translated[pair.translated].line
        if pair.verdict in ("certain", "likely", "near changed code"):
            result, finding = _imported(pair, english, translated, english_file, breaks, points_elsewhere)
            imported += [result] if result else []
            findings += [finding] if finding else []
        else:
            findings.append(_finding(pair, english, translated, english_file, near))
    units = sum(piece.kind != CODE for piece in english)
    return Result(tuple(imported), tuple(sorted(findings, key=lambda f: f.line)), units, as_is)


@dataclass(frozen=True)
class Applied:
    """What a catalog took of a file's imports: written, and kept (it had a translation already)."""

    written: int
    kept: int


def apply(catalog: Catalog, imported: Sequence[Imported], overwrite: bool) -> Applied:
    """Write the imports into CATALOG (merged with its template already): a message translated or fuzzy already
    keeps its translation unless OVERWRITE. A message two units share takes the first translation; a second
    that differs makes it fuzzy."""
    written = kept = 0
    first: dict[str, str] = {}
    for entry in imported:
        message = catalog.get(entry.msgid)
        if message is None:
            continue
        if entry.msgid in first:
            if first[entry.msgid] != entry.msgstr and message.string == first[entry.msgid]:
                message.flags.add("fuzzy")  # translated two ways: its translator chooses
            continue
        first[entry.msgid] = entry.msgstr
        if message.string and not overwrite:
            kept += 1
            continue
        message.string = entry.msgstr
        if entry.fuzzy:
            message.flags.add("fuzzy")
        else:
            message.flags.discard("fuzzy")
        written += 1
    return Applied(written, kept)

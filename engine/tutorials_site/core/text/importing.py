"""A copy translated in place, made into translations of a catalog's messages (`tutorials-site import-translation`).

A tutorial script (or a page, whose pieces Sphinx reads: sphinxext.units) and its translated copy are read as
pieces (core.text.alignment) and paired. What a pair imports is checked as the build checks a catalog's translation:
one that breaks its markup is not imported, one that points elsewhere than the English (another link target,
inline literal or role: the English changed since, most likely) is imported as fuzzy, as is a pair that is
likely but not certain. A paragraph the translator split in two is imported joined into one; two the translator
merged are imported each with its part of the translation where the alignment found where to cut it, else each
with the whole, as fuzzy. Nothing else is imported: a unit that pairs with nothing, one left in English, a comment
on code that changed since the translation. Every unit not imported as it is becomes a line of the report, which
says in a translator's words what was compared and what one side lacks (one line for a merge or a split).
"""

import ast
import dataclasses
import io
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from babel.messages.catalog import Catalog

from . import tutorial_text
from .alignment import CODE, COMMENT, Doubt, Pair, Piece, align, is_comment

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
    skipped: str = ""  # why the file was not read (its place and what is wrong), all its English units then left

    @property
    def certain(self) -> int:
        """How many translations it imports as they are."""
        return sum(not i.fuzzy for i in self.imported)

    @property
    def fuzzy(self) -> int:
        """How many it imports as fuzzy."""
        return sum(i.fuzzy for i in self.imported)


def skipped(english: Sequence[Piece], why: str) -> Result:
    """What a file gives that cannot be read (WHY: its place and what is wrong): its English units left in English."""
    return Result((), (), sum(piece.kind != CODE for piece in english), skipped=why)


def total(results: Sequence[Result]) -> Result:
    """What a set of files gives together (their reports aside)."""
    return Result(tuple(i for r in results for i in r.imported), (), sum(r.units for r in results),
                  sum(r.as_is for r in results))


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


@dataclass(frozen=True)
class _Sides:
    """The pieces of both documents, how the report names the English one (ENGLISH_FILE), whether the translation's
    language spaces its words (SPACED), and the build's checks of a translation."""

    english: Sequence[Piece]
    translated: Sequence[Piece]
    english_file: str
    spaced: bool
    breaks: Check
    points_elsewhere: Check

    def quote(self, index: int) -> str:
        """An English unit as the report shows it: where it is, and its first words."""
        unit = self.english[index]
        text = " ".join(unit.text.split())
        return f'{self.english_file}:{unit.line} "{text if len(text) <= 60 else text[:60].rsplit(" ", 1)[0] + " …"}"'


def _finding(pair: Pair, sides: _Sides, near: int) -> Finding:
    """The report's line for a unit the pair does not import (NEAR: the translated line where a missing one goes)."""
    if not pair.translated:
        unit = sides.english[pair.english[0]]
        return Finding(near, f"left in English: {name(unit.kind)} of the English, {sides.quote(pair.english[0])}, has no "
                             "translation here: none of the translated units between the same lines of code matches it")
    what = name(sides.translated[pair.translated[0]].kind)
    why = {"extra": f"{what} that matches none of the English units between the same lines of code (an addition of "
                    "the translator's, or English that changed since the translation)",
           "same": f"{what} still in English, as the English has it: there is no translation to import",
           "code changed": f"{what} on code that differs from the English code (changed since the translation), "
                           "which it may no longer describe"}
    return Finding(sides.translated[pair.translated[0]].line, f"not imported: {why[pair.verdict]}")


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


def _texts(pair: Pair, sides: _Sides) -> list[tuple[int, str]]:
    """The translation each English unit of a pair gets (its index, the text): a split paragraph's two parts joined
    into one paragraph as its language writes one; a merged paragraph's cut in two where the alignment found where,
    else the whole of it for each."""
    texts = [" ".join(sides.translated[j].text.split()) for j in pair.translated]
    if len(texts) == 2:  # a language without spaces puts none after a wide character ending the first ("。")
        glue = "" if not sides.spaced and tutorial_text.is_wide(texts[0][-1:] or " ") else " "
        return [(pair.english[0], glue.join(texts))]
    if len(pair.english) == 2 and pair.cut is not None:
        whole = sides.translated[pair.translated[0]].text
        return [(pair.english[0], " ".join(whole[:pair.cut].split())), (pair.english[1], " ".join(whole[pair.cut:].split()))]
    return [(i, texts[0]) for i in pair.english]


def _doubts(doubt: Doubt | None, sides: _Sides, references: bool) -> str:
    """Why a pair is only likely, in the report's words: what was compared, and what one side lacks (REFERENCES:
    whether to say which inline code and links differ, where the build's checks do not say it already)."""
    if doubt is None:
        return ""
    if not references:
        doubt = dataclasses.replace(doubt, lacks=(), adds=())
    said = [f"the translation does not write {', '.join(doubt.names)}, which the English writes" if doubt.names else "",
            f"the translation has words the English has not: {', '.join(doubt.added[:6])}" if doubt.added else "",
            f"the English has {', '.join(doubt.lacks[:6])}, which the translation has not" if doubt.lacks else "",
            f"the translation has {', '.join(doubt.adds[:6])}, which the English has not" if doubt.adds else "",
            f"the translation is {doubt.length:.1f} times as long as this file's translations of that much English"
            if doubt.length != 1.0 else "",
            f"{', '.join(doubt.misplaced)} is in a unit beside them rather than in both (the translator may have moved "
            "text between units)" if doubt.misplaced else "",
            "another way of pairing the units around it fits nearly as well" if doubt.near else "",
            *(f"{sides.quote(i)}, which has no translation here, may be translated in it too" for i in doubt.alone[0]),
            *(f"the unit at line {sides.translated[j].line}, which translates nothing here, may be part of its "
              "translation" for j in doubt.alone[1]),
            "they have no code, name, number, link or glossed term in common, nor as many sentences"
            if doubt.unsupported else ""]
    return "; ".join(s for s in said if s)


def _what(pair: Pair, sides: _Sides) -> str:
    """What the translated unit of a pair was read as: the translation of which English."""
    if len(pair.english) == 2:
        kinds = name(sides.english[pair.english[0]].kind).split(" ", 1)[1] + "s"
        return (f"read as the translation of two English {kinds} together, {sides.quote(pair.english[0])} and "
                f"{sides.quote(pair.english[1])}")
    if len(pair.translated) == 2:
        line = sides.translated[pair.translated[1]].line
        return f"read, with the next unit (line {line}), as the translation of {sides.quote(pair.english[0])}"
    return f"read as the translation of {sides.quote(pair.english[0])}"


def _why_fuzzy(pair: Pair, sides: _Sides, references: bool) -> str:
    """Why the alignment left a pair uncertain, in the report's words ("" where it did not; REFERENCES: _doubts)."""
    if pair.verdict == "near changed code":
        return ("the code beside it differs from the English code (changed since the translation): check that it "
                "still translates it")
    if pair.verdict == "likely" and len(pair.english) == 2:
        doubts = _doubts(pair.doubt, sides, references)
        return ((f"{doubts}: " if doubts else "its sentences do not divide clearly between them: ")
                + "each is given all of it, fuzzy, to keep only its own part")
    return f"{_doubts(pair.doubt, sides, references)}: check that it translates it" if pair.verdict == "likely" else ""


def _imported(pair: Pair, sides: _Sides) -> tuple[list[Imported], Finding | None]:
    """What a pair the alignment made imports, and the report's line for it (None: imported as it is)."""
    imported, refused, elsewhere = [], [], []
    for index, text in _texts(pair, sides):
        unit = sides.english[index]
        checked = _checked(unit, text, sides.breaks, sides.points_elsewhere)
        which = f" (for {sides.quote(index)})" if len(pair.english) == 2 else ""
        if checked.broken:
            refused.append(f"the build would refuse it{which}: {checked.broken}")
            continue
        imported.append(Imported(unit.text, checked.msgstr, pair.verdict != "certain" or checked.elsewhere is not None))
        elsewhere += [f"{checked.elsewhere}{which}"] if checked.elsewhere else []
    said = [why for why in (_why_fuzzy(pair, sides, not elsewhere), *elsewhere, *refused) if why]
    if not said:
        return imported, None
    status = "imported as fuzzy" if imported else "not imported"
    return imported, Finding(sides.translated[pair.translated[0]].line,
                             f"{status}: {_what(pair, sides)}, but {'; '.join(said)}")


def pair_up(english: Sequence[Piece], translated: Sequence[Piece], english_file: str, breaks: Check,
            points_elsewhere: Check, spaced: bool = True) -> Result:
    """Pair a document's pieces with its translated copy's: what is imported, and the report (ENGLISH_FILE: the
    English document as the report names it; SPACED: whether the translation's language spaces its words)."""
    sides = _Sides(english, translated, english_file, spaced, breaks, points_elsewhere)
    imported: list[Imported] = []
    findings: list[Finding] = []
    near = 1
    pairs = align(english, translated)
    # A unit left alone that a pair's line names already (it may be part of that pair) has no line of its own.
    named = {(side, unit) for pair in pairs if pair.doubt for side in (0, 1) for unit in pair.doubt.alone[side]}
    for pair in pairs:
        if pair.translated:
            near = translated[pair.translated[0]].line
        if pair.verdict in ("certain", "likely", "near changed code"):
            more, finding = _imported(pair, sides)
            imported += more
            findings += [finding] if finding else []
        elif not ({(0, unit) for unit in pair.english} | {(1, unit) for unit in pair.translated}) & named:
            findings.append(_finding(pair, sides, near))
    units = sum(piece.kind != CODE for piece in english)
    as_is = sum(pair.verdict == "same" for pair in pairs)
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

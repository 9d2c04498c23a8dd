"""Pairing a document's English units with those of a copy translated in place (`make import-translation`).

Each side is read as pieces in reading order: units of text (a heading, a paragraph, a list item, a code
comment) and code (a script's code lines, a page's code blocks), comments taken out. Code is the anchor: a
translation made in place leaves it as it is, so the code both sides share (their longest common subsequence)
cuts the two documents into stretches, and a unit pairs only with one of the stretch between the same anchors.

Within a stretch, units pair as Gale and Church aligned sentences: a dynamic program over three moves (a pair,
an English unit the translation lacks, a translated unit the English lacks), where a pair's cost says how
unlikely it is: its kinds must be the same (a heading of one level, a list item of one kind, a comment at one
column), the length of its prose must be near the English length times the ratio of the two languages (learned
from the document itself), and the tokens a translator keeps (inline code, link targets, numbers, words in Latin
letters) must agree. A pair is certain only when the evidence is positive and no other alignment of its stretch
comes near; one the program chose without that is only likely (its translation is imported as fuzzy), and a
unit that pairs with nothing is never imported.
"""

import collections
import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

CODE = "code"
COMMENT = "#"  # what the kind of a code comment starts with
# The moves' costs: -log of their prior probabilities (a translator keeps a unit as one unit nearly always).
PAIR, SKIP = -math.log(0.89), -math.log(0.01)
# Gale and Church's variance of a translation's length per character of its original.
VARIANCE = 6.8
# A pair is certain when no alignment of its stretch without it costs less than this more, and its length is
# within this many deviations of the expected one (STRICT where nothing but structure and length support it).
MARGIN, DEVIATIONS, STRICT = 3.0, 2.5, 1.5
BAND = 12  # units a pair may stand from its place in a stretch, more where one side has more units
WINDOW = 8  # steps of the alignment on each side of a pair that its margin weighs

# What a translator copies as it is: inline code, the target of a role or link (its text when it names no other),
# a bare URL; and numbers, which a translation may add (a word for "one" written as a digit) but rarely drops.
KEPT = re.compile(r"``(?P<literal>.+?)``|`[^`<]*<(?P<target>[^<>`]+)>`|`(?P<text>[^`]+)`|(?P<url>https?://[^\s<>`]+)")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
LATIN_WORD = re.compile(r"[A-Za-z][\w.+-]*[A-Za-z0-9]|[A-Za-z]", re.ASCII)
NAME = re.compile(r"[A-Z][A-Z0-9]+|[A-Z]?[a-z]+(?:[A-Z][a-z0-9]*)+\d*|[A-Za-z]+\d+")  # GPU, PyTorch, ResNet18
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]")

Verdict = Literal["certain", "likely", "near changed code", "same", "missing", "extra", "code changed"]


@dataclass(frozen=True)
class Piece:
    """One piece of a document in reading order: a unit of text, or code (KIND "code")."""

    kind: str  # "code", or the unit's kind and place: "paragraph", "item 1.", "heading =", "comment 4", ...
    text: str  # a unit's text (its msgid, or the translation), or the code without its comments
    line: int  # where it starts in its file, from 1


@dataclass(frozen=True)
class Pair:
    """What became of one unit: paired (ENGLISH and TRANSLATED, indices of the pieces), or left alone."""

    english: int | None
    translated: int | None
    verdict: Verdict


@dataclass(frozen=True)
class _Tokens:
    kept: collections.Counter[str]  # what a translator copies (KEPT)
    shape: tuple[tuple[str, int], ...]  # how many of each kind of kept token: inline code, link targets, ...
    numbers: collections.Counter[str]
    words: frozenset[str]  # words in Latin letters outside what is kept, lower case, singular
    names: frozenset[str]  # those of them written as names (GPU, PyTorch, ResNet18), which a translation keeps
    length: int  # characters of prose: the text less what is kept, spaces collapsed
    sentences: int


def _words(word: str) -> set[str]:
    """A word as both languages may write it: "GPUs" in the English is "GPU" in a translation; and each part of a
    compound ("per-sample", "functional_call"), which a translation may gloss alone."""
    found = set()
    for part in {word, *re.split(r"[-_]", word)} - {""}:
        part = part.lower().rstrip(".")
        if part.endswith("'s"):
            part = part[:-2]
        elif part.endswith("ies") and len(part) > 4:
            part = part[:-3] + "y"
        elif part.endswith("s") and len(part) > 3:
            part = part[:-1]
        found.add(part)
    return found


def _tokens(text: str) -> _Tokens:
    matches = list(KEPT.finditer(text))
    kept = collections.Counter(next(group for group in match.groups() if group) for match in matches)
    shape = tuple(sorted(collections.Counter(str(match.lastgroup) for match in matches).items()))
    prose = " ".join(KEPT.sub(" ", text).split())
    numbers = collections.Counter(NUMBER.findall(prose))
    latin = LATIN_WORD.findall(prose)
    words = frozenset(part for word in latin for part in _words(word))
    names = frozenset(word.lower() for word in latin if NAME.fullmatch(word))
    return _Tokens(kept, shape, numbers, words, names, len(prose), len(SENTENCE_END.findall(prose)) or 1)


@dataclass(frozen=True)
class _Model:
    """The two languages' length ratio and its variance, per English character."""

    ratio: float
    variance: float

    def deviations(self, english: _Tokens, translated: _Tokens) -> float:
        return abs(translated.length - self.ratio * english.length) / math.sqrt(
            max(english.length, 10) * self.variance)


@dataclass(frozen=True)
class _Candidate:
    cost: float
    deviations: float
    shared: int  # kept tokens and Latin words both have
    # Kept tokens one has and the other lacks, and Latin words the translation has and the English unit lacks (half
    # as much where the English document has them elsewhere: a translator may gloss a term in English).
    conflicts: float
    names_missing: int  # names the English writes that the translation lacks (it may spell one in its own script)
    sentences_agree: bool


def _candidate(english: _Tokens, translated: _Tokens, model: _Model, vocabulary: frozenset[str]) -> _Candidate:
    deviations = model.deviations(english, translated)
    # Kept tokens of the same kinds, in the same numbers, count as one more shared: a link whose target the
    # English changed since the translation is still the same link.
    shared = (sum((english.kept & translated.kept).values()) + sum((english.numbers & translated.numbers).values())
              + len(translated.words & english.words) + (bool(english.shape) and english.shape == translated.shape))
    added = translated.words - english.words
    # A kept token one side lacks counts double: a translator who keeps code and links keeps them all.
    conflicts = (2 * (sum((english.kept - translated.kept).values()) + sum((translated.kept - english.kept).values()))
                 + sum((english.numbers - translated.numbers).values())
                 + len(added - vocabulary) + len(added & vocabulary) / 2)
    names_missing = len(english.names - translated.words)
    length_cost = -math.log(max(math.erfc(deviations / math.sqrt(2)), 1e-12))
    cost = PAIR + length_cost + 2 * min(conflicts + names_missing, 4) - min(shared, 3)
    return _Candidate(max(cost, 0.0), deviations, shared, conflicts, names_missing,
                      english.sentences == translated.sentences)


def is_comment(kind: str) -> bool:
    """Whether a piece of this kind is a code comment (plain text, not reST)."""
    return kind.startswith(COMMENT)


def _same(english: str, translated: str) -> bool:
    return " ".join(english.split()) == " ".join(translated.split())


Step = tuple[int | None, int | None]  # a move of the alignment: (English unit, translated unit), None where none


def _path(costs: list[list[float | None]], forbidden: tuple[int, int] | None = None) -> tuple[float, list[Step]]:
    """The cheapest alignment of a stretch (its cost and its moves) given each pair's cost (None: no pair)."""
    m, n = len(costs), len(costs[0]) if costs else 0
    best = [[0.0] * (n + 1) for _ in range(m + 1)]
    move = [[0] * (n + 1) for _ in range(m + 1)]  # 1: pair, 2: English only, 3: translation only
    for i in range(m + 1):
        for j in range(n + 1):
            if i == j == 0:
                continue
            options = []
            cost = costs[i - 1][j - 1] if i and j else None
            if cost is not None and (i - 1, j - 1) != forbidden:
                options.append((best[i - 1][j - 1] + cost, 1))
            if i:
                options.append((best[i - 1][j] + SKIP, 2))
            if j:
                options.append((best[i][j - 1] + SKIP, 3))
            best[i][j], move[i][j] = min(options)
    steps: list[Step] = []
    i, j = m, n
    while i or j:
        step = move[i][j]
        steps.append((i - 1 if step != 3 else None, j - 1 if step != 2 else None))
        i, j = i - (step != 3), j - (step != 2)
    return best[m][n], steps[::-1]


@dataclass(frozen=True)
class _Stretch:
    """The units between two shared pieces of code (indices into each side's pieces), and whether code between
    them differs."""

    english: tuple[int, ...]
    translated: tuple[int, ...]
    code_changed: bool


def _stretches(english: Sequence[Piece], translated: Sequence[Piece]) -> list[_Stretch]:
    """The two documents cut at the code they share (their longest common subsequence)."""
    e_code = [i for i, p in enumerate(english) if p.kind == CODE]
    t_code = [i for i, p in enumerate(translated) if p.kind == CODE]
    matcher = difflib.SequenceMatcher(None, [english[i].text for i in e_code], [translated[i].text for i in t_code],
                                      autojunk=False)
    anchors = [(e_code[b.a + k], t_code[b.b + k]) for b in matcher.get_matching_blocks() for k in range(b.size)]
    stretches = []
    previous = (-1, -1)
    for anchor in [*anchors, (len(english), len(translated))]:
        e_range, t_range = range(previous[0] + 1, anchor[0]), range(previous[1] + 1, anchor[1])
        changed = any(english[i].kind == CODE for i in e_range) or any(translated[j].kind == CODE for j in t_range)
        stretches.append(_Stretch(tuple(i for i in e_range if english[i].kind != CODE),
                                  tuple(j for j in t_range if translated[j].kind != CODE), changed))
        previous = anchor
    return stretches


@dataclass(frozen=True)
class _Document:
    """The pieces of one side, and the tokens of each unit of text, by index."""

    pieces: Sequence[Piece]
    tokens: Mapping[int, _Tokens]


def _document(pieces: Sequence[Piece]) -> _Document:
    return _Document(pieces, {i: _tokens(p.text) for i, p in enumerate(pieces) if p.kind != CODE})


def _model(english: _Document, translated: _Document, pairs: Sequence[tuple[int, int]]) -> _Model:
    """The length ratio of the two languages, from PAIRS (of units) where there are enough of them, else from the
    whole texts."""
    if len(pairs) < 3:
        total_e = sum(t.length for t in english.tokens.values())
        total_t = sum(t.length for t in translated.tokens.values())
        ratio = total_t / total_e if total_e and total_t else 1.0
        return _Model(ratio, VARIANCE * ratio)
    lengths = [(english.tokens[i].length, translated.tokens[j].length) for i, j in pairs]
    ratio = sum(t for _, t in lengths) / max(sum(e for e, _ in lengths), 1)
    spread = sum((t - ratio * e) ** 2 / max(e, 10) for e, t in lengths)
    default = VARIANCE * ratio
    return _Model(ratio, min(max(spread / len(pairs), default / 2), default * 4))


def _verdict(candidate: _Candidate, margin: float) -> Verdict | None:
    """Certain, likely (imported as fuzzy), or None: the evidence is against the pair, which is then no pair."""
    if candidate.conflicts and not candidate.shared:
        return None
    supported = candidate.shared > 0 or (candidate.sentences_agree and candidate.deviations <= STRICT)
    # A gloss in English here and there, against much shared; a name the translation lacks leaves the pair uncertain.
    agreeing = candidate.conflicts * 4 <= candidate.shared and not candidate.names_missing
    limit = DEVIATIONS + (1 if candidate.shared >= 3 else 0)
    if margin >= MARGIN and agreeing and candidate.deviations <= limit and supported:
        return "certain"
    return "likely"


@dataclass(frozen=True)
class _Move:
    """One move of a stretch's alignment: its units (indices into the pieces), a pair's candidate and margin (how
    much more the stretch's best alignment without it costs)."""

    english: int | None
    translated: int | None
    candidate: _Candidate | None = None
    margin: float = 0.0


def _align_stretch(english: _Document, translated: _Document, stretch: _Stretch, model: _Model,
                   vocabulary: frozenset[str]) -> list[_Move]:
    """The moves of one stretch's cheapest alignment."""
    m, n = len(stretch.english), len(stretch.translated)
    band = BAND + abs(m - n)  # a unit pairs only near its place: a long stretch costs linear time

    def near(x: int, y: int) -> bool:
        return abs(x * n / max(m, 1) - y) <= band

    candidates = [[_candidate(english.tokens[i], translated.tokens[j], model, vocabulary)
                   if near(x, y) and english.pieces[i].kind == translated.pieces[j].kind else None
                   for y, j in enumerate(stretch.translated)] for x, i in enumerate(stretch.english)]
    costs: list[list[float | None]] = [
        [0.0 if c is not None and _same(english.pieces[i].text, translated.pieces[j].text) else (c.cost if c else None)
         for c, j in zip(row, stretch.translated)] for row, i in zip(candidates, stretch.english)]
    _, steps = _path(costs)
    moves = []
    for k, (a, b) in enumerate(steps):
        if a is None or b is None:
            moves.append(_Move(None if a is None else stretch.english[a], None if b is None else stretch.translated[b]))
        else:
            moves.append(_Move(stretch.english[a], stretch.translated[b], candidates[a][b], _margin(costs, steps, k)))
    return moves


def _margin(costs: list[list[float | None]], steps: list[Step], k: int) -> float:
    """How much more the best alignment without the pair of step K costs, within WINDOW steps of it on each side:
    an alternative that strays further pays more moves than it saves (and a long stretch costs linear time)."""
    done = [(sum(a is not None for a, _ in steps[:n]), sum(b is not None for _, b in steps[:n]))
            for n in (max(k - WINDOW, 0), k, min(k + WINDOW + 1, len(steps)))]
    (i0, j0), (a, b), (i1, j1) = done
    window = [row[j0:j1] for row in costs[i0:i1]]
    return _path(window, forbidden=(a - i0, b - j0))[0] - _path(window)[0]


def _pairs(move: _Move, english: Sequence[Piece], translated: Sequence[Piece], code_changed: bool) -> list[Pair]:
    """What a move makes of its units (CODE_CHANGED: code between its stretch's anchors differs)."""
    a, b = move.english, move.translated
    if a is not None and b is not None and _same(english[a].text, translated[b].text):
        return [Pair(a, b, "same")]
    if code_changed and is_comment((english[a] if a is not None else translated[b or 0]).kind):
        return [Pair(a, b, "code changed")]
    if a is None or b is None or move.candidate is None:
        return [Pair(a, b, "missing" if b is None else "extra")]
    verdict = _verdict(move.candidate, move.margin)
    if verdict is None:
        return [Pair(a, None, "missing"), Pair(None, b, "extra")]
    # Where the code changed since the translation, the text around it may have changed with it.
    return [Pair(a, b, "near changed code" if code_changed else verdict)]


def align(english: Sequence[Piece], translated: Sequence[Piece]) -> list[Pair]:
    """What became of every unit of both documents, in reading order: each English unit in one Pair and each
    translated unit in one Pair."""
    stretches = _stretches(english, translated)
    e_doc, t_doc = _document(english), _document(translated)
    vocabulary = frozenset(word for tokens in e_doc.tokens.values() for word in tokens.words)
    model = _model(e_doc, t_doc, [])
    for _ in range(2):  # the second pass measures the ratio on the first's pairs
        moves = [_align_stretch(e_doc, t_doc, stretch, model, vocabulary) for stretch in stretches]
        model = _model(e_doc, t_doc, [(m.english, m.translated) for stretch in moves for m in stretch
                                      if m.english is not None and m.translated is not None and m.candidate
                                      and m.candidate.conflicts == 0])
    return [pair for stretch, stretch_moves in zip(stretches, moves) for move in stretch_moves
            for pair in _pairs(move, english, translated, stretch.code_changed)]

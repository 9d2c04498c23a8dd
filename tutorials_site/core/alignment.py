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
import math
import re
from collections.abc import Sequence
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

# What a translator copies as it is: inline code, the target of a role or link (its text when it names no other),
# a bare URL; and numbers, which a translation may add (a word for "one" written as a digit) but rarely drops.
KEPT = re.compile(r"``(?P<literal>.+?)``|`[^`<]*<(?P<target>[^<>`]+)>`|`(?P<text>[^`]+)`|(?P<url>https?://[^\s<>`]+)")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
LATIN_WORD = re.compile(r"[A-Za-z][\w.+-]*[A-Za-z0-9]|[A-Za-z]", re.ASCII)
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]")

Verdict = Literal["certain", "likely", "same", "missing", "extra", "code changed"]


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
    length: int  # characters of prose: the text less what is kept, spaces collapsed
    sentences: int


def _word(word: str) -> str:
    """A word as both languages may write it: "GPUs" in the English is "GPU" in a translation."""
    word = word.lower().rstrip(".")
    return word[:-2] if word.endswith("'s") else word[:-1] if word.endswith("s") and len(word) > 3 else word


def _tokens(text: str) -> _Tokens:
    matches = list(KEPT.finditer(text))
    kept = collections.Counter(next(group for group in match.groups() if group) for match in matches)
    shape = tuple(sorted(collections.Counter(str(match.lastgroup) for match in matches).items()))
    prose = " ".join(KEPT.sub(" ", text).split())
    numbers = collections.Counter(NUMBER.findall(prose))
    words = frozenset(_word(word) for word in LATIN_WORD.findall(prose))
    return _Tokens(kept, shape, numbers, words, len(prose), len(SENTENCE_END.findall(prose)) or 1)


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
    length_cost = -math.log(max(math.erfc(deviations / math.sqrt(2)), 1e-12))
    cost = PAIR + length_cost + 2 * min(conflicts, 4) - min(shared, 3)
    return _Candidate(max(cost, 0.0), deviations, shared, conflicts, english.sentences == translated.sentences)


def is_comment(kind: str) -> bool:
    """Whether a piece of this kind is a code comment (plain text, not reST)."""
    return kind.startswith(COMMENT)


def _same(english: str, translated: str) -> bool:
    return " ".join(english.split()) == " ".join(translated.split())


def _path(costs: list[list[float | None]], forbidden: tuple[int, int] | None = None) -> tuple[float, list[tuple[int | None, int | None]]]:
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
    moves: list[tuple[int | None, int | None]] = []
    i, j = m, n
    while i or j:
        step = move[i][j]
        moves.append((i - 1 if step != 3 else None, j - 1 if step != 2 else None))
        i, j = i - (step != 3), j - (step != 2)
    return best[m][n], moves[::-1]


def _stretches(english: Sequence[Piece], translated: Sequence[Piece]) -> list[tuple[list[int], list[int], bool]]:
    """The units of each stretch between two shared pieces of code: (English indices, translated indices, whether
    code between its anchors differs)."""
    import difflib  # only here: the one matcher of code the module needs

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
        stretches.append(([i for i in e_range if english[i].kind != CODE],
                          [j for j in t_range if translated[j].kind != CODE], changed))
        previous = anchor
    return stretches


def _model(english: Sequence[_Tokens], translated: Sequence[_Tokens], pairs: Sequence[tuple[int, int]]) -> _Model:
    """The length ratio of the two languages, from PAIRS where there are enough of them, else from the whole texts
    (ENGLISH and TRANSLATED: the tokens of the units)."""
    if len(pairs) < 3:
        total_e, total_t = sum(e.length for e in english), sum(t.length for t in translated)
        ratio = total_t / total_e if total_e and total_t else 1.0
        return _Model(ratio, VARIANCE * ratio)
    ratio = sum(translated[j].length for _, j in pairs) / max(sum(english[i].length for i, _ in pairs), 1)
    spread = sum((translated[j].length - ratio * english[i].length) ** 2 / max(english[i].length, 10)
                 for i, j in pairs)
    default = VARIANCE * ratio
    return _Model(ratio, min(max(spread / len(pairs), default / 2), default * 4))


def _verdict(candidate: _Candidate, margin: float) -> Verdict | None:
    """Certain, likely (imported as fuzzy), or None: the evidence is against the pair, which is then no pair."""
    if candidate.conflicts and not candidate.shared:
        return None
    supported = candidate.shared > 0 or (candidate.sentences_agree and candidate.deviations <= STRICT)
    agreeing = candidate.conflicts * 4 <= candidate.shared  # a gloss in English here and there, against much shared
    limit = DEVIATIONS + (1 if candidate.shared >= 3 else 0)
    if margin >= MARGIN and agreeing and candidate.deviations <= limit and supported:
        return "certain"
    return "likely"


@dataclass(frozen=True)
class _Document:
    """The pieces of one side, and the tokens of each (None for code)."""

    pieces: Sequence[Piece]
    tokens: Sequence[_Tokens | None]


def _document(pieces: Sequence[Piece]) -> _Document:
    return _Document(pieces, [None if p.kind == CODE else _tokens(p.text) for p in pieces])


def _align_stretch(english: _Document, translated: _Document, e_units: list[int], t_units: list[int],
                   model: _Model, vocabulary: frozenset[str]) -> list[tuple[int | None, int | None, _Candidate | None, float]]:
    """The moves of one stretch: (English index, translated index, the pair's candidate, its margin)."""
    candidates = [[_candidate(english.tokens[i], translated.tokens[j], model, vocabulary)  # type: ignore[arg-type]
                   if english.pieces[i].kind == translated.pieces[j].kind else None for j in t_units] for i in e_units]
    costs: list[list[float | None]] = [
        [0.0 if c is not None and _same(english.pieces[i].text, translated.pieces[j].text) else (c.cost if c else None)
         for c, j in zip(row, t_units)] for row, i in zip(candidates, e_units)]
    total, moves = _path(costs)
    result = []
    for a, b in moves:
        if a is None or b is None:
            result.append((None if a is None else e_units[a], None if b is None else t_units[b], None, 0.0))
            continue
        margin = _path(costs, forbidden=(a, b))[0] - total
        result.append((e_units[a], t_units[b], candidates[a][b], margin))
    return result


def align(english: Sequence[Piece], translated: Sequence[Piece]) -> list[Pair]:
    """What became of every unit of both documents, in the translation's reading order: each English unit in one
    Pair and each translated unit in one Pair."""
    stretches = _stretches(english, translated)
    e_doc, t_doc = _document(english), _document(translated)
    e_units, t_units = [t for t in e_doc.tokens if t], [t for t in t_doc.tokens if t]
    vocabulary = frozenset(word for tokens in e_units for word in tokens.words)
    model = _model(e_units, t_units, [])
    for _ in range(2):  # the second pass measures the ratio on the first's pairs
        moves = [move for e_range, t_range, _ in stretches
                 for move in _align_stretch(e_doc, t_doc, e_range, t_range, model, vocabulary)]
        model = _model(e_doc.tokens, t_doc.tokens, [(a, b) for a, b, c, _ in moves  # type: ignore[arg-type]
                                                    if a is not None and b is not None and c and c.conflicts == 0])
    changed_e = {i for e_units, _, changed in stretches if changed for i in e_units}
    changed_t = {j for _, t_units, changed in stretches if changed for j in t_units}
    pairs = []
    for a, b, candidate, margin in moves:
        if a is not None and b is not None and _same(english[a].text, translated[b].text):
            pairs.append(Pair(a, b, "same"))
        elif (a in changed_e and is_comment(english[a].kind)) or (b in changed_t and is_comment(translated[b].kind)):
            pairs.append(Pair(a, b, "code changed"))
        elif a is None or b is None or candidate is None:
            pairs.append(Pair(a, b, "missing" if b is None else "extra"))
        elif (verdict := _verdict(candidate, margin)) is not None:
            pairs.append(Pair(a, b, verdict))
        else:
            pairs += [Pair(a, None, "missing"), Pair(None, b, "extra")]
    return pairs

"""Pairing a document's English units with those of a copy translated in place (`tutorials-site import-translation`).

Each side is read as pieces in reading order: units of text (a heading, a paragraph, a list item, a code
comment) and code (a script's code lines, a page's code blocks), comments taken out. Code is the anchor: a
translation made in place leaves it as it is, so the code both sides share (their longest common subsequence)
cuts the two documents into stretches, and a unit pairs only with one of the stretch between the same anchors.

Within a stretch, units pair as Gale and Church aligned sentences: a dynamic program over five moves (a pair, an
English unit the translation lacks, a translated unit the English lacks, two English paragraphs the translator
merged into one, one the translator split into two), where a move's cost says how unlikely it is: its kinds
must be the same (a heading of one level, a list item of one kind, a comment at one column), the length of its
prose must be near the English length times the ratio of the two languages (learned from the document itself),
and the tokens a translator keeps (inline code, link targets, numbers, words in Latin letters, the terms the
translator glossed somewhere in the document) must agree. A move is certain only when the evidence is positive,
nothing beside it could be part of it, and no other alignment of its stretch comes near; one the program chose
without that is only likely (its translation is imported as fuzzy), and a unit that pairs with nothing is never
imported. A merge is certain only where its translation cuts in two at the end of a sentence, each part the
certain translation of one English paragraph.
"""

import collections
import difflib
import math
import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Literal

CODE = "code"
COMMENT = "#"  # what the kind of a code comment starts with
# The moves' costs: -log of their prior probabilities. A translator keeps a unit as one unit nearly always; a merge
# of two paragraphs into one, or a split of one into two, is taken rarer still than a unit left out, so that the
# alignment makes one only where the length and the tokens of the whole bear it out.
PAIR, SKIP, JOIN = -math.log(0.89), -math.log(0.01), -math.log(0.005)
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
# A number as a translation keeps it: not an ordinal (1st, 2nd), which a translation spells its own way, and with
# no separator of thousands ("40,000" may be written 40000).
NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?![\d.,]*(?:st|nd|rd|th)\b)")
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
LATIN_WORD = re.compile(r"[A-Za-z][\w.+-]*[A-Za-z0-9]|[A-Za-z]", re.ASCII)
NAME = re.compile(r"[A-Z][A-Z0-9]+|[A-Z]?[a-z]+(?:[A-Z][a-z0-9]*)+\d*|[A-Za-z]+\d+")  # GPU, PyTorch, ResNet18
# A gloss: the English term in parentheses right after its translation ("변화도(gradient)"), which repeats the English
# rather than translates it: it counts as shared words, not as length.
GLOSS = re.compile(r"(?<=[^\x00-\x7f]) ?[(（][A-Za-z][^()（）]*[)）]")
# A gloss with the term it glosses: a word of one script (Hangul, katakana, Chinese characters) right before it. The
# translator's glosses are a lexicon of the document: where the term comes again without its gloss, it still says
# the English word.
TERM = re.compile(r"([\uac00-\ud7a3]{2,}|[\u30a0-\u30ff]{2,}|[\u4e00-\u9fff]{2,}) ?[(（]([A-Za-z][^()（）]*)[)）]")
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]")
# Where a merged paragraph's translation may be cut in two: after the end of a sentence, or before the "::" that
# a paragraph of its own introduced a literal block with in the English.
CUT = re.compile(r"(?:[.!?]\s+|[。！？]\s*)(?=\S)|\s+(?=::$)")

Verdict = Literal["certain", "likely", "near changed code", "same", "missing", "extra", "code changed"]


@dataclass(frozen=True)
class Piece:
    """One piece of a document in reading order: a unit of text, or code (KIND "code")."""

    kind: str  # "code", or the unit's kind and place: "paragraph", "item 1.", "heading =", "comment 4", ...
    text: str  # a unit's text (its msgid, or the translation), or the code without its comments
    line: int  # where it starts in its file, from 1


@dataclass(frozen=True)
class Doubt:
    """Why a pair is only likely, as the two texts were compared: what one has and the other lacks."""

    names: tuple[str, ...] = ()  # names the English writes and the translation does not (it writes them elsewhere)
    added: tuple[str, ...] = ()  # words in Latin letters the translation has and the English unit has not
    lacks: tuple[str, ...] = ()  # inline code, link targets and numbers the English has and the translation lacks
    adds: tuple[str, ...] = ()  # those the translation has and the English lacks
    length: float = 1.0  # the translation's length over the length expected of a translation of the English
    misplaced: tuple[str, ...] = ()  # names or code one has and the other lacks, which a unit beside the other has
    # Units beside it (pieces of each side) that pair with nothing and may be part of its translation.
    alone: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    near: bool = False  # another alignment of the units around it costs nearly as little
    unsupported: bool = False  # they share nothing (code, names, numbers, links) and their sentences differ


@dataclass(frozen=True)
class Pair:
    """What became of units of both sides: ENGLISH and TRANSLATED, indices of the pieces, one each for a pair, two
    on one side where the translator merged two English paragraphs into one or split one into two, none on one
    side for a unit left alone. CUT: where a merge's translation is cut in two, a part for each English paragraph
    (None: both get the whole). DOUBT: why a likely pair is not certain."""

    english: tuple[int, ...]
    translated: tuple[int, ...]
    verdict: Verdict
    cut: int | None = None
    doubt: Doubt | None = None


@dataclass(frozen=True)
class _Tokens:
    kept: collections.Counter[str]  # what a translator copies (KEPT)
    shape: tuple[tuple[str, int], ...]  # how many of each kind of kept token: inline code, link targets, ...
    numbers: collections.Counter[str]
    words: frozenset[str]  # words in Latin letters outside what is kept, lower case, singular
    names: frozenset[str]  # those of them written as names (GPU, PyTorch, ResNet18), which a translation keeps
    length: int  # characters of prose: the text less what is kept and glosses, spaces collapsed
    sentences: int
    meanings: frozenset[str] = frozenset()  # English words its terms stand for, by the document's glosses (TERM)


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


Lexicon = Mapping[str, frozenset[str]]  # a term of the translation: the English words its glosses give it


def _lexicon(pieces: Sequence[Piece]) -> Lexicon:
    """The terms the translator glosses anywhere in the document, and the English words of their glosses."""
    found: dict[str, set[str]] = collections.defaultdict(set)
    for piece in pieces:
        for match in TERM.finditer(piece.text) if piece.kind != CODE else ():
            found[match[1]] |= {w for word in LATIN_WORD.findall(match[2]) for w in _words(word) if len(w) > 2}
    return {term: frozenset(words) for term, words in found.items()}


def _tokens(text: str, lexicon: Lexicon | None = None) -> _Tokens:
    matches = list(KEPT.finditer(text))
    kept = collections.Counter(next(group for group in match.groups() if group) for match in matches)
    shape = tuple(sorted(collections.Counter(str(match.lastgroup) for match in matches).items()))
    prose = " ".join(KEPT.sub(" ", text).split())
    numbers = collections.Counter(THOUSANDS.sub("", number) for number in NUMBER.findall(prose))
    latin = LATIN_WORD.findall(prose)
    words = frozenset(part for word in latin for part in _words(word))
    names = frozenset(word.lower() for word in latin if NAME.fullmatch(word))
    length = len(" ".join(GLOSS.sub(" ", prose).split()))
    meanings = frozenset(w for term, glossed in (lexicon or {}).items() if term in prose for w in glossed)
    return _Tokens(kept, shape, numbers, words, names, length, len(SENTENCE_END.findall(prose)) or 1, meanings)


@dataclass(frozen=True)
class _Context:
    """What a document tells of its translation: the two languages' length ratio and its variance per English
    character, the words in Latin letters the English writes anywhere, the names its translator keeps as the
    English writes them (in at least half as many units as the English: a name its translator writes otherwise,
    NN as 신경망, is no evidence where it is missing)."""

    ratio: float
    variance: float
    english_words: frozenset[str]
    kept_names: frozenset[str]
    lexicon: Lexicon  # the translation's (_Document.lexicon)

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
    # Names the English writes that the translation lacks, of those its translator keeps (_Context.kept_names).
    names_missing: int
    sentences_agree: bool


def _candidate(english: _Tokens, translated: _Tokens, context: _Context) -> _Candidate:
    deviations = context.deviations(english, translated)
    # Kept tokens of the same kinds, in the same numbers, count as one more shared: a link whose target the
    # English changed since the translation is still the same link.
    shared = (sum((english.kept & translated.kept).values()) + sum((english.numbers & translated.numbers).values())
              + len(translated.words & english.words) + (bool(english.shape) and english.shape == translated.shape)
              + len((translated.meanings - translated.words) & english.words))
    added = translated.words - english.words
    # A kept token one side lacks counts double: a translator who keeps code and links keeps them all.
    conflicts = (2 * (sum((english.kept - translated.kept).values()) + sum((translated.kept - english.kept).values()))
                 + sum((english.numbers - translated.numbers).values())
                 + len(added - context.english_words) + len(added & context.english_words) / 2)
    names_missing = len((english.names - translated.words) & context.kept_names)
    length_cost = -math.log(max(math.erfc(deviations / math.sqrt(2)), 1e-12))
    cost = PAIR + length_cost + 2 * min(conflicts + names_missing, 4) - min(shared, 3)
    return _Candidate(cost, deviations, shared, conflicts, names_missing,
                      english.sentences == translated.sentences)


def is_comment(kind: str) -> bool:
    """Whether a piece of this kind is a code comment (plain text, not reST)."""
    return kind.startswith(COMMENT)


def _same(english: str, translated: str) -> bool:
    return " ".join(english.split()) == " ".join(translated.split())


Step = tuple[tuple[int, ...], tuple[int, ...]]  # a move of a stretch's alignment: its units of each side, by place
MOVES = ((1, 1), (1, 0), (0, 1), (2, 1), (1, 2))  # units of each side a move takes; on a tie, the first listed wins


@dataclass(frozen=True)
class _Costs:
    """The cost of each move a stretch's alignment may make (None: it may not), by the place of its first units:
    PAIR[x][y] pairs English unit x with translated unit y, MERGE[x][y] English units x and x + 1 with translated
    unit y, SPLIT[x][y] English unit x with translated units y and y + 1."""

    pair: Sequence[Sequence[float | None]]
    merge: Sequence[Sequence[float | None]]
    split: Sequence[Sequence[float | None]]

    def window(self, i0: int, i1: int, j0: int, j1: int) -> "_Costs":
        """The costs of the moves within English units i0 to i1 and translated units j0 to j1 (excluded)."""
        return _Costs(*([row[j0:j1] for row in table[i0:i1]] for table in (self.pair, self.merge, self.split)))


def _path(costs: _Costs, forbidden: Step | None = None) -> tuple[float, list[Step]]:
    """The cheapest alignment of a stretch (its cost and its moves), without the move FORBIDDEN."""
    m, n = len(costs.pair), len(costs.pair[0]) if costs.pair else 0
    tables = {(1, 1): costs.pair, (2, 1): costs.merge, (1, 2): costs.split}
    moves = [(dx, dy, tables.get((dx, dy))) for dx, dy in MOVES]
    # the forbidden move as (its units of each side, where it starts)
    banned = (len(forbidden[0]), len(forbidden[1]), *(s[0] if s else -1 for s in forbidden)) if forbidden else None
    best = [[math.inf] * (n + 1) for _ in range(m + 1)]
    back = [[(0, 0)] * (n + 1) for _ in range(m + 1)]
    best[0][0] = 0.0
    for i in range(m + 1):
        for j in range(n + 1):
            here, came = best[i][j], back[i][j]
            for dx, dy, table in moves:
                if dx > i or dy > j:
                    continue
                cost = table[i - dx][j - dy] if table is not None else SKIP
                if cost is None or (banned and banned == (dx, dy, i - dx if dx else -1, j - dy if dy else -1)):
                    continue
                if best[i - dx][j - dy] + cost < here:
                    here, came = best[i - dx][j - dy] + cost, (dx, dy)
            best[i][j], back[i][j] = here, came
    steps: list[Step] = []
    i, j = m, n
    while i or j:
        dx, dy = back[i][j]
        steps.append((tuple(range(i - dx, i)), tuple(range(j - dy, j))))
        i, j = i - dx, j - dy
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
    """The pieces of one side, the tokens of each unit of text by index, and the lexicon its glosses make."""

    pieces: Sequence[Piece]
    tokens: Mapping[int, _Tokens]
    lexicon: Lexicon


def _document(pieces: Sequence[Piece], glossed: bool = False) -> _Document:
    """One side's pieces read; GLOSSED: the side whose glosses make a lexicon (the translation)."""
    lexicon = _lexicon(pieces) if glossed else {}
    return _Document(pieces, {i: _tokens(p.text, lexicon) for i, p in enumerate(pieces) if p.kind != CODE}, lexicon)


def _kept_names(english: _Document, translated: _Document) -> frozenset[str]:
    """The names of the English its translator keeps as they are (_Context.kept_names)."""
    in_english = collections.Counter(name for tokens in english.tokens.values() for name in tokens.names)
    in_translation = collections.Counter(word for tokens in translated.tokens.values() for word in tokens.words
                                         if word in in_english)
    return frozenset(name for name, count in in_english.items() if 2 * in_translation[name] >= count)


def _context(english: _Document, translated: _Document, pairs: Sequence[tuple[int, int]]) -> _Context:
    """What the documents tell of the translation, its length ratio measured on PAIRS (of units) where there are
    enough of them, else on the whole texts."""
    words = (frozenset(w for tokens in english.tokens.values() for w in tokens.words), _kept_names(english, translated),
             translated.lexicon)
    if len(pairs) < 3:
        total_e = sum(t.length for t in english.tokens.values())
        total_t = sum(t.length for t in translated.tokens.values())
        ratio = total_t / total_e if total_e and total_t else 1.0
        return _Context(ratio, VARIANCE * ratio, *words)
    lengths = [(english.tokens[i].length, translated.tokens[j].length) for i, j in pairs]
    ratio = sum(t for _, t in lengths) / max(sum(e for e, _ in lengths), 1)
    spread = sum((t - ratio * e) ** 2 / max(e, 10) for e, t in lengths)
    default = VARIANCE * ratio
    return _Context(ratio, min(max(spread / len(pairs), default / 2), default * 4), *words)


def _verdict(candidate: _Candidate, margin: float) -> Verdict | None:
    """Certain, likely (imported as fuzzy), or None: the evidence is against the pair, which is then no pair."""
    if candidate.conflicts and not candidate.shared:
        return None
    supported = _supported(candidate)
    # A name the translation lacks, of those its translator keeps (_Context.kept_names), leaves the pair uncertain.
    agreeing = _agreeing(candidate) and not candidate.names_missing
    if margin >= MARGIN and agreeing and candidate.deviations <= _limit(candidate) and supported:
        return "certain"
    return "likely"


def _spelled(words: Set[str], text: str) -> tuple[str, ...]:
    """WORDS (as _Tokens holds them: lower case, singular) as TEXT spells them."""
    return tuple(dict.fromkeys(word for word in LATIN_WORD.findall(text) if _words(word) & words or word.lower() in words))


def _shown(tokens: collections.Counter[str], text: str) -> tuple[str, ...]:
    """Kept tokens (and numbers) as TEXT writes them: inline code in double backquotes, a link target in angle
    brackets, other interpreted text in backquotes."""
    return tuple(next((form for form in (f"``{token}``", f"<{token}>", f"`{token}`") if form in text), token)
                 for token in sorted(tokens))


def _doubt(move: "_Move", texts: tuple[str, str], context: _Context) -> Doubt:
    """What leaves a likely move uncertain, of what _verdict weighs (TEXTS: its English and its translation)."""
    assert move.candidate is not None and move.compared is not None
    (english, translated), candidate = move.compared, move.candidate
    expected = context.ratio * english.length
    agreeing = _agreeing(candidate)
    return Doubt(
        names=_spelled((english.names - translated.words) & context.kept_names, texts[0]),
        added=() if agreeing else _spelled(translated.words - english.words, texts[1]),
        lacks=() if agreeing else _shown((english.kept - translated.kept) + (english.numbers - translated.numbers),
                                         texts[0]),
        adds=() if agreeing else _shown(translated.kept - english.kept, texts[1]),
        length=translated.length / expected if expected and candidate.deviations > _limit(candidate) else 1.0,
        misplaced=move.misplaced,
        alone=move.alone,
        near=move.margin < MARGIN,
        unsupported=not _supported(candidate))


def _agreeing(candidate: _Candidate) -> bool:
    """Whether what one unit has and the other lacks weighs little against what they share (a gloss in English here
    and there, a word the translator added)."""
    return candidate.conflicts * 2 <= candidate.shared


def _supported(candidate: _Candidate) -> bool:
    return candidate.shared > 0 or (candidate.sentences_agree and candidate.deviations <= STRICT)


def _limit(candidate: _Candidate) -> float:
    return DEVIATIONS + (1 if candidate.shared >= 3 else 0)


def _mergeable(first: str, second: str, whole: str) -> bool:
    """Whether units of kinds FIRST and SECOND may be one unit of kind WHOLE (a merge; a split read the other way):
    paragraphs (or comments) of one place, the first not introducing a literal block ("::"), which ends a whole
    only where it ends the second."""
    base = first.split(" ::")[0]
    kind = base.split()[0].rsplit("/", 1)[-1]
    return (first == base and second.split(" ::")[0] == base == whole.split(" ::")[0]
            and second.endswith("::") == whole.endswith("::") and (kind == "paragraph" or is_comment(base)))


@dataclass(frozen=True)
class _Move:
    """One move of a stretch's alignment: its units (indices into the pieces), its candidate and margin (how much
    more the stretch's best alignment without it costs) where it pairs units, and the tokens it compared."""

    english: tuple[int, ...]
    translated: tuple[int, ...]
    candidate: _Candidate | None = None
    margin: float = 0.0
    compared: tuple[_Tokens, _Tokens] | None = None
    misplaced: tuple[str, ...] = ()  # tokens of one side that the other lacks and a unit beside it has
    alone: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # units beside it that may be part of it (_alone)


def _joined(pieces: Sequence[Piece], lexicon: Lexicon) -> list[_Tokens | None]:
    """The tokens of each unit read with the next one, where the two may be one (a merge, or a split)."""
    return [_tokens(pieces[x].text + " " + pieces[x + 1].text, lexicon) if x + 1 < len(pieces)
            and _mergeable(pieces[x].kind, pieces[x + 1].kind, pieces[x + 1].kind) else None
            for x in range(len(pieces))]


def _compared(step: Step, e: Sequence[Piece], t: Sequence[Piece], e_tokens: Sequence[_Tokens],
              t_tokens: Sequence[_Tokens], joined: tuple[list[_Tokens | None], list[_Tokens | None]]
              ) -> tuple[_Tokens, _Tokens] | None:
    """What a move of one or two units of each side compares (None: their kinds cannot make the move)."""
    (x, *more_e), (y, *more_t) = step
    if not more_e and not more_t:  # a bare "::" says nothing: it is the translation of a bare "::" only
        same = e[x].kind == t[y].kind and (e[x].text == "::") == (t[y].text == "::")
        return (e_tokens[x], t_tokens[y]) if same else None
    if more_e:
        merged = joined[0][x]
        return (merged, t_tokens[y]) if merged and _mergeable(e[x].kind, e[x + 1].kind, t[y].kind) else None
    split = joined[1][y]
    return (e_tokens[x], split) if split and _mergeable(t[y].kind, t[y + 1].kind, e[x].kind) else None


def _candidates(e: Sequence[Piece], t: Sequence[Piece], e_tokens: Sequence[_Tokens], t_tokens: Sequence[_Tokens],
                context: _Context) -> dict[Step, tuple[tuple[_Tokens, _Tokens], _Candidate]]:
    """Every move of a stretch that pairs units (E and T: its units of each side), with what it compares and its
    candidate: units of the same kinds, near their place (a long stretch costs linear time)."""
    joined = (_joined(e, {}), _joined(t, context.lexicon))
    m, n = len(e), len(t)
    band = BAND + abs(m - n)
    found: dict[Step, tuple[tuple[_Tokens, _Tokens], _Candidate]] = {}
    for x in range(m):
        for y in range(n):
            if abs(x * n / max(m, 1) - y) > band:
                continue
            for step in (((x,), (y,)), ((x, x + 1), (y,)), ((x,), (y, y + 1))):
                compared = _compared(step, e, t, e_tokens, t_tokens, joined) if max(step[0]) < m and max(
                    step[1]) < n else None
                if compared:
                    found[step] = (compared, _candidate(*compared, context))
    return found


def _misplaced(step: Step, e_tokens: Sequence[_Tokens], t_tokens: Sequence[_Tokens], context: _Context
               ) -> tuple[str, ...]:
    """The names and kept tokens that one side of a move has, the other lacks and a unit beside the other has: a
    sign the translator moved text across the units, which leaves the move uncertain."""
    def strong(tokens: Sequence[_Tokens]) -> set[str]:
        return {x for t in tokens for x in (*t.kept, *(t.names & context.kept_names))}

    def every(tokens: Sequence[_Tokens]) -> set[str]:
        return {x for t in tokens for x in (*t.kept, *t.words)}

    found: set[str] = set()
    for units, tokens, others, other_tokens in ((step[0], e_tokens, step[1], t_tokens),
                                                (step[1], t_tokens, step[0], e_tokens)):
        beside = [other_tokens[k] for k in (min(others) - 1, max(others) + 1) if 0 <= k < len(other_tokens)]
        found |= (strong([tokens[k] for k in units]) - every([other_tokens[k] for k in others])) & every(beside)
    return tuple(sorted(found))


def _align_stretch(english: _Document, translated: _Document, stretch: _Stretch, context: _Context) -> list[_Move]:
    """The moves of one stretch's cheapest alignment."""
    e = [english.pieces[i] for i in stretch.english]
    t = [translated.pieces[j] for j in stretch.translated]
    e_tokens, t_tokens = [english.tokens[i] for i in stretch.english], [translated.tokens[j] for j in stretch.translated]
    candidates = _candidates(e, t, e_tokens, t_tokens, context)

    def cost(step: Step) -> float | None:
        if step not in candidates:
            return None
        candidate = candidates[step][1]
        if len(step[0]) + len(step[1]) > 2:
            return candidate.cost - PAIR + JOIN
        return 0.0 if _same(e[step[0][0]].text, t[step[1][0]].text) else candidate.cost

    m, n = len(e), len(t)
    costs = _Costs([[cost(((x,), (y,))) for y in range(n)] for x in range(m)],
                   [[cost(((x, x + 1), (y,))) for y in range(n)] for x in range(m)],
                   [[cost(((x,), (y, y + 1))) for y in range(n)] for x in range(m)])
    _, steps = _path(costs)
    moves = []
    for k, step in enumerate(steps):
        units = (tuple(stretch.english[x] for x in step[0]), tuple(stretch.translated[y] for y in step[1]))
        if step in candidates:
            compared, candidate = candidates[step]
            alone = _alone(steps, k, candidates, ([p.kind for p in e], [p.kind for p in t]))
            moves.append(_Move(*units, candidate, _margin(costs, steps, k), compared,
                               _misplaced(step, e_tokens, t_tokens, context),
                               (tuple(stretch.english[x] for x in alone[0]), tuple(stretch.translated[y] for y in alone[1]))))
        else:
            moves.append(_Move(*units))
    return moves


def _alone(steps: Sequence[Step], k: int, candidates: Mapping[Step, tuple[tuple[_Tokens, _Tokens], _Candidate]],
           kinds: tuple[Sequence[str], Sequence[str]]) -> Step:
    """The units beside the move of step K that pair with nothing and could be part of it: for a pair, a merge or a
    split with it that has no more against it than the pair; for a merge or a split, any unit of their kind (three
    units as one is no move the alignment makes). The translator may have merged or split there, and the move may
    then be only part of a translation (its units of each side, by place)."""
    step = steps[k]
    pair = candidates[step][1]
    found: tuple[list[int], list[int]] = ([], [])
    for near in (steps[k - 1] if k else None, steps[k + 1] if k + 1 < len(steps) else None):
        if not near or (near[0] and near[1]):
            continue
        side, unit = (0, near[0][0]) if near[0] else (1, near[1][0])
        if len(step[0]) + len(step[1]) > 2:
            if kinds[side][unit].split(" ::")[0] == kinds[side][step[side][0]].split(" ::")[0]:
                found[side].append(unit)
            continue
        (x,), (y,) = step
        joined = (tuple(sorted((x, unit))), (y,)) if side == 0 else ((x,), tuple(sorted((y, unit))))
        whole = candidates.get(joined)
        if whole and whole[1].conflicts <= pair.conflicts and whole[1].names_missing <= pair.names_missing:
            found[side].append(unit)
    return tuple(found[0]), tuple(found[1])


def _margin(costs: _Costs, steps: list[Step], k: int) -> float:
    """How much more the best alignment without the move of step K costs, within WINDOW steps of it on each side:
    an alternative that strays further pays more moves than it saves (and a long stretch costs linear time)."""
    done = [(sum(len(a) for a, _ in steps[:n]), sum(len(b) for _, b in steps[:n]))
            for n in (max(k - WINDOW, 0), min(k + WINDOW + 1, len(steps)))]
    (i0, j0), (i1, j1) = done
    window = costs.window(i0, i1, j0, j1)
    a, b = steps[k]
    forbidden = (tuple(x - i0 for x in a), tuple(y - j0 for y in b))
    return _path(window, forbidden)[0] - _path(window)[0]


def _cut(first: str, second: str, translated: str, context: _Context, margin: float) -> int | None:
    """Where a merged paragraph's translation cuts into the translations of FIRST and SECOND (the offset where the
    second's starts): at the end of a sentence, each part then a certain translation of its English, and no other
    cut near as good. None where there is no such cut."""
    english = (_tokens(first), _tokens(second))
    options = []
    for match in CUT.finditer(translated):
        parts = (translated[:match.end()].rstrip(), translated[match.end():])
        candidates = [_candidate(e, _tokens(part, context.lexicon), context) for e, part in zip(english, parts)]
        certain = all(_verdict(c, margin) == "certain" for c in candidates)
        options.append((sum(c.cost for c in candidates), certain, match.end()))
    options.sort()
    if not options or not options[0][1] or (len(options) > 1 and options[1][0] - options[0][0] < MARGIN):
        return None
    return options[0][2]


def _pairs(move: _Move, english: Sequence[Piece], translated: Sequence[Piece], code_changed: bool,
           context: _Context) -> list[Pair]:
    """What a move makes of its units (CODE_CHANGED: code between its stretch's anchors differs)."""
    a, b = move.english, move.translated
    if len(a) == len(b) == 1 and _same(english[a[0]].text, translated[b[0]].text):
        return [Pair(a, b, "same")]
    if code_changed and is_comment((english[a[0]] if a else translated[b[0]]).kind):
        return [Pair(a, b, "code changed")]
    if move.candidate is None or move.compared is None:
        return [Pair(a, b, "missing" if not b else "extra")]
    verdict = _verdict(move.candidate, move.margin)
    if verdict is None:
        return [Pair((i,), (), "missing") for i in a] + [Pair((), (j,), "extra") for j in b]
    if code_changed:  # where the code changed since the translation, the text around it may have changed with it
        return [Pair(a, b, "near changed code")]
    cut = None
    if verdict == "certain" and (move.misplaced or any(move.alone)):
        verdict = "likely"
    if len(a) == 2 and verdict == "certain":
        cut = _cut(english[a[0]].text, english[a[1]].text, translated[b[0]].text, context, move.margin)
        verdict = "certain" if cut is not None else "likely"
    texts = (" ".join(english[i].text for i in a), " ".join(translated[j].text for j in b))
    doubt = _doubt(move, texts, context) if verdict == "likely" else None
    return [Pair(a, b, verdict, cut, doubt)]


def align(english: Sequence[Piece], translated: Sequence[Piece]) -> list[Pair]:
    """What became of every unit of both documents, in reading order: each English unit in one Pair and each
    translated unit in one Pair."""
    stretches = _stretches(english, translated)
    e_doc, t_doc = _document(english), _document(translated, glossed=True)
    context = _context(e_doc, t_doc, [])
    for _ in range(2):  # the second pass measures the ratio on the first's pairs
        moves = [_align_stretch(e_doc, t_doc, stretch, context) for stretch in stretches]
        context = _context(e_doc, t_doc, [(m.english[0], m.translated[0]) for stretch in moves for m in stretch
                                          if len(m.english) == len(m.translated) == 1 and m.candidate
                                          and m.candidate.conflicts == 0])
    return [pair for stretch, stretch_moves in zip(stretches, moves) for move in stretch_moves
            for pair in _pairs(move, english, translated, stretch.code_changed, context)]

r"""A tutorial's output as a terminal shows it, and how much of it a page shows.

Programs write their output for a terminal: a progress bar returns to the
start of its line with `\r` and redraws it, `\b` steps back a column, escape
sequences colour text or set the window's title, and the terminal shows none
of these characters. A page shows the output as the terminal would have: the
last state of each line, no escape sequence, no control character. What is
left holds only characters that docutils, Pygments and HTML keep as they are
(line feeds and printable text: docutils splits lines wherever Python's
`str.splitlines` does and turns VT and FF into spaces, HTML has no use for
lone surrogates or noncharacters), so that the text of a page's output block
is exactly the text of the run (`tutorials-site check` compares the two).

Rendering is streamed: a run's output is read from disk in chunks, and at most
the limits (OutputLimits) are held in memory; what lies beyond them is
counted, and a marker in the shown text says how much was left out and which
limit left it out.
"""

import codecs
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Escape sequences: CSI (colours, cursor moves, erasing), the string ones (OSC: a title or a link;
# DCS, SOS, PM, APC) ended by BEL or ST or, where a terminal would hide all that follows, by the end
# of the line, and the other escapes (ESC, intermediates, a final character).
_CSI = r"\x1b\[(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])"
_STRING = r"\x1b[\]PX^_](?:[^\n\x07\x1b]|\x1b(?!\\))*(?:\x07|\x1b\\|(?=\n))"
_OTHER = r"\x1b[ -/]*[0-~]"
ESCAPE = re.compile(f"{_CSI}|{_STRING}|{_OTHER}")
# An escape sequence cut by the end of a chunk: held back until the next chunk completes it.
_PARTIAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|[\]PX^_](?:[^\n\x07\x1b]|\x1b(?!\\))*\x1b?|[ -/]*)\Z")
_LONGEST_PARTIAL = 4096  # past this, a sequence that never ends is shown as text (its ESC dropped)
# C0 and C1 controls, DEL, and U+2028/U+2029 (which docutils takes for line breaks): never shown as such.
_CONTROLS = "\x00-\x1f\x7f-\x9f\u2028\u2029"
_TOKEN = re.compile(f"(?P<text>[^{_CONTROLS}]+)|(?P<escape>{ESCAPE.pattern})|(?P<control>[{_CONTROLS}])")
# Lone surrogates and noncharacters, which HTML has no place for, are shown as U+FFFD.
_UNSHOWABLE = re.compile("[\ud800-\udfff\ufdd0-\ufdef" + "".join(
    chr(plane << 16 | 0xFFFE) + chr(plane << 16 | 0xFFFF) for plane in range(17)) + "]")
_TAB = 8
_CHUNK = 1 << 16

LIMIT_VARIABLE = "TUTORIAL_OUTPUT_LIMIT"
DEFAULT_BLOCK_LIMIT = 256 * 1024  # characters a page shows of one code block's output
RUN_BLOCKS = 8  # a tutorial's pages show at most this many blocks' worth of output in all
# Bytes of raw output kept on disk for each character shown: a progress bar redrawn with `\r` prints
# much more than the one line it shows.
RECORDED_PER_SHOWN = 8


@dataclass(frozen=True)
class OutputLimits:
    """How much of a tutorial's output is shown, and recorded on disk (which bounds the disk it fills)."""

    block: int = DEFAULT_BLOCK_LIMIT  # characters shown of one code block
    run: int = RUN_BLOCKS * DEFAULT_BLOCK_LIMIT  # characters shown of all its code blocks together

    @classmethod
    def of_block_limit(cls, block: int) -> "OutputLimits":
        """The limits of TUTORIAL_OUTPUT_LIMIT=BLOCK: a run shows RUN_BLOCKS times as much."""
        return cls(block, RUN_BLOCKS * block)

    @property
    def recorded_block(self) -> int:
        """Bytes of a code block's raw output kept on disk; the rest is counted and dropped."""
        return RECORDED_PER_SHOWN * self.block

    @property
    def recorded_run(self) -> int:
        """Bytes of a run's raw output kept on disk, all its code blocks together."""
        return RECORDED_PER_SHOWN * self.run

    def recorded_caps(self, sizes: list[int]) -> list[int]:
        """The bytes each block may keep on disk, given the sizes of the blocks' files, in order."""
        caps, total = [], 0
        for size in sizes:
            caps.append(max(0, min(self.recorded_block, self.recorded_run - total)))
            total += min(size, caps[-1])
        return caps


DEFAULT_LIMITS = OutputLimits()


def parse_size(value: str) -> int | None:
    """`262144`, `256K`, `2M` (binary multiples) as a number; None when it is not a positive size."""
    match = re.fullmatch(r"(\d+)\s*([kKmMgG]?)", value.strip())
    if match is None:
        return None
    size = int(match[1]) << {"": 0, "k": 10, "m": 20, "g": 30}[match[2].lower()]
    return size or None


def _partial_start(text: str) -> int:
    """Where an escape sequence cut by the end of TEXT starts (len(TEXT): none is)."""
    window = max(0, len(text) - _LONGEST_PARTIAL)
    last = text.rfind("\x1b", window)
    if last < 0:
        return len(text)
    # A string sequence may hold ESCs of its own: it starts at its introducer, before the last ESC.
    string = max(text.rfind("\x1b" + introducer, window) for introducer in "]PX^_")
    for start in sorted({string, last} - {-1}):
        if _PARTIAL.match(text, start):
            return start
    return len(text)


class _Screen:
    """The text a terminal would show of a stream, the first and last halves of it kept within `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_room = limit - limit // 2
        self.tail: deque[str] = deque()
        self.tail_size = 0
        self.dropped = self.dropped_lines = 0
        self.line: list[str] = []  # the line being written, one character a column
        self.col = 0
        self.overflow = 0  # columns of the current line past `limit`, never kept
        self.pending = ""

    def feed(self, text: str) -> None:
        """Take the next chunk of the stream; an escape sequence it cuts waits for the chunk that ends it."""
        text = self.pending + _UNSHOWABLE.sub("\ufffd", text)
        cut = _partial_start(text)
        self.pending = text[cut:]
        self._render(text[:cut])

    def _render(self, text: str) -> None:
        for token in _TOKEN.finditer(text):
            if token["text"] is not None:
                self._write(token["text"])
            elif token["escape"] is not None:
                if token["final"] == "K":
                    self._erase(token["params"])
            else:
                self._control(token["control"])

    def _write(self, run: str) -> None:
        col, end = self.col, self.col + len(run)
        self.col = end
        if end > self.limit:
            self.overflow = max(self.overflow, end - self.limit)
            run, end = run[:max(0, self.limit - col)], min(end, self.limit)
        if run:
            if col > len(self.line):
                self.line.extend(" " * (col - len(self.line)))
            self.line[col:end] = run

    def _erase(self, params: str) -> None:
        """CSI K: erase to the end of the line (0), from its start (1) or all of it (2)."""
        mode = params or "0"
        if mode == "0":
            del self.line[self.col:]
        elif mode == "1":
            self.line[:self.col + 1] = " " * min(self.col + 1, len(self.line))
        elif mode == "2":
            self.line = []

    def _control(self, char: str) -> None:
        if char in "\n\u2028\u2029":
            self._end_line()
            self.col = 0
        elif char in "\x0b\x0c":  # a terminal moves down a line and stays in its column
            self._end_line()
        elif char == "\r":
            self.col = 0
        elif char == "\b":
            self.col = max(0, self.col - 1)
        elif char == "\t":
            self.col = (self.col // _TAB + 1) * _TAB
        # every other control (NUL, BEL, a lone ESC, C1) does nothing visible

    def _end_line(self, newline: str = "\n") -> None:
        self._keep("".join(self.line) + newline)
        self.dropped += self.overflow
        self.line, self.overflow = [], 0

    def _keep(self, piece: str) -> None:
        if self.head_room:
            self.head.append(piece[:self.head_room])
            piece = piece[self.head_room:]
            self.head_room -= len(self.head[-1])
        if not piece:
            return
        self.tail.append(piece)
        self.tail_size += len(piece)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.limit // 2:
            self._drop(self.tail.popleft())

    def _drop(self, text: str) -> None:
        self.tail_size -= len(text)
        self._count_dropped(text)

    def _count_dropped(self, text: str) -> None:
        self.dropped += len(text)
        self.dropped_lines += text.count("\n")

    def close(self) -> tuple[str, str, int, int]:
        """(head, tail, characters and lines left out between them)."""
        self.pending = ""  # an escape sequence never finished: a terminal would show nothing of it
        if self.line:
            self._end_line("")
        head, tail = "".join(self.head), "".join(self.tail)
        excess = max(0, len(tail) - self.limit // 2)
        if self.dropped or excess:
            # What is left out ends a line and starts one: the parts shown around the marker are whole lines.
            if not head.endswith("\n") and "\n" in head:
                self._count_dropped(head[head.rindex("\n") + 1:])
                head = head[:head.rindex("\n") + 1]
            if "\n" in tail[excess:-1] and tail[excess - 1:excess] not in ("", "\n"):
                excess = tail.index("\n", excess) + 1
            self._count_dropped(tail[:excess])
            tail = tail[excess:]
        return head, tail, self.dropped, self.dropped_lines


def render(text: str, limit: int) -> str:
    """TEXT as a terminal shows it, at most LIMIT characters of it (with the marker, past that)."""
    return RunOutput(OutputLimits(limit, limit)).block().show_text(text)


def _count(number: int, unit: str) -> str:
    return f"{number:,} {unit}{'' if number == 1 else 's'}"


class RunOutput:
    """What the pages show of one run's output: each block's text, within the block's and the run's limits."""

    def __init__(self, limits: OutputLimits) -> None:
        self.limits = limits
        self.run_left = limits.run

    def block(self) -> "BlockOutput":
        """The share of the next code block."""
        return BlockOutput(self)


class BlockOutput:
    """One code block's share: each text shown takes from the block's limit and from the run's."""

    def __init__(self, run: RunOutput) -> None:
        self.run = run
        self.left = run.limits.block

    def show(self, chunks: Iterable[str]) -> str:
        """CHUNKS of one stream rendered as a terminal shows it; a marker says what was left out and why."""
        per_block = self.left <= self.run.run_left
        screen = _Screen(min(self.left, self.run.run_left))
        for chunk in chunks:
            screen.feed(chunk)
        head, tail, dropped, lines = screen.close()
        shown = head + tail
        self.left -= len(shown)
        self.run.run_left -= len(shown)
        if not dropped:
            return shown
        limit = (f"a code block shows at most {_count(self.run.limits.block, 'character')} of output" if per_block
                 else f"a tutorial shows at most {_count(self.run.limits.run, 'character')} of output in all")
        what = _count(dropped, "character") + (f" ({_count(lines, 'line')})" if lines else "")
        newline = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{newline}[output truncated: {what} left out here; {limit} ({LIMIT_VARIABLE})]\n{tail}"

    def show_text(self, text: str) -> str:
        """TEXT, one stream's whole output, as show() renders it."""
        return self.show([text])

    def show_file(self, path: Path, recorded: int, unrecorded: int) -> str:
        """The first RECORDED bytes of PATH (UTF-8, read in chunks); UNRECORDED bytes printed were not kept."""
        shown = self.show(_chunks(path, recorded))
        if not unrecorded:
            return shown
        newline = "" if not shown or shown.endswith("\n") else "\n"
        limits = self.run.limits
        # At least: the bytes written while output_guard.py cut the file back went uncounted.
        return (f"{shown}{newline}[output truncated: at least {_count(unrecorded, 'more byte')} printed and not "
                f"recorded; a code block records at most {_count(limits.recorded_block, 'byte')} of output and a "
                f"tutorial {_count(limits.recorded_run, 'byte')} ({LIMIT_VARIABLE})]\n")


def _chunks(path: Path, size: int) -> Iterable[str]:
    if size <= 0:
        return  # nothing recorded, or no file at all (a run that died before its block's file was made)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with open(path, "rb") as file:
        while size > 0 and (data := file.read(min(_CHUNK, size))):
            size -= len(data)
            yield decoder.decode(data)
    yield decoder.decode(b"", final=True)

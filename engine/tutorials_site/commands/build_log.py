"""What a build shows while it runs: a few lines a person reads; Sphinx's own output goes to files.

Each event is one plain line (`[execute] …`, `[build] …`). On a terminal (standard output a tty, TERM not
`dumb`), tqdm adds a live line under them while the tutorials execute (how many are done of how many, the
time so far, which one runs, for how long, in which code block, and how long it should still take, from
its last run or CI's: core.runs.shards) and while the languages render (which are rendering, how many are done);
the line is erased when its stage ends, and what it says needs no line of its own (a tutorial's start, a
language's). Elsewhere (CI, a pipe) nothing is redrawn and no escape sequence is written: while a tutorial
runs, a line says the same every PROGRESS_INTERVAL seconds (15 by default), so that a log is never silent
for longer.

Reports that repeat themselves are summed up: a failure of a run kept from before, or a warning, that the
last build told as it is (<builddir>/logs/failures.log, warnings.log hold what each build found, all of it)
is counted in one line naming that file instead of being told again in full (a build that reads no page again
prints a few lines, not every traceback and warning); VERBOSE=1 tells them all.

Sphinx's and sphinx-gallery's output of each language is in <builddir>/logs/<lang>.log; VERBOSE=1 shows
it on the screen too, whole, once the language is built (languages build at once: their logs would
interleave). Under GitHub Actions (GITHUB_ACTIONS=true) each log is shown folded in a group of its own,
indented, so that the problem matchers do not report its warnings at the generated files (the build
reports each at its author's file and line, once), and with workflow commands off, since a log quotes
the tutorials' text.
"""

import contextlib
import math
import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TextIO

from tqdm import tqdm

from ..core.files import shown, write_atomically
from ..core.runs.records import Record, RecordError
from ..core.runs.runs import Progress, read_progress
from ..core.runs.shards import Expected

_REFRESH_S = 0.5  # how often a live line shows the time passing
# No monitor thread: the build forks (each language's Sphinx, each tutorial's runner), and a live line is
# redrawn only from the build's own loops (tick()).
tqdm.monitor_interval = 0


def clock(seconds: float) -> str:
    """A duration as a clock shows it, to the second: 0:28, 1:52, 1:02:03."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def running(label: str, elapsed: float, expected: Expected | None, progress: Progress | None) -> str:
    """What the build says of the tutorial LABEL running for ELAPSED seconds, in the code block PROGRESS
    names (None: not known yet): how long it should still take by EXPECTED, or that it runs longer than
    that, or that nobody knows."""
    where = f" in block {progress.block + 1} (line {progress.line})" if progress else ""
    if expected is None:
        estimate = "time left unknown (never run here, no duration recorded by CI)"
    elif elapsed < expected.seconds:
        # Rounded up: never "0:00 left" while it should still run.
        estimate = f"about {clock(math.ceil(expected.seconds - elapsed))} left ({expected.source}: {clock(expected.seconds)})"
    else:
        estimate = f"longer than {expected.source} {clock(expected.seconds)}"
    return f"{label}: running {clock(elapsed)}{where}, {estimate}"


def expected_in_all(expected: Sequence[Expected | None]) -> str:
    """The time the tutorials EXPECTED should take together (`about 1:20 expected`), and how many of them were
    never timed."""
    known = [item.seconds for item in expected if item is not None]
    untimed = len(expected) - len(known)
    if not known:
        return "time unknown (none of them timed before)"
    return f"about {clock(sum(known))} expected" + (f", +{untimed} of unknown time" if untimed else "")


class _Live:
    """A tqdm line on the terminal, redrawn by tick() at most every _REFRESH_S while a stage runs."""

    def __init__(self, out: TextIO, total: int, bar_format: str, describe: Callable[[], str]) -> None:
        columns = os.get_terminal_size(out.fileno()).columns  # 0: a pseudo-terminal given no size
        # (delay: drawn first by redraw(), with its description)
        self.bar = tqdm(total=total, file=out, bar_format=bar_format, leave=False, delay=1,
                        dynamic_ncols=columns > 0, ncols=None if columns else 80)
        self._describe = describe
        self.redraw()

    def tick(self) -> None:
        if time.monotonic() - self._drawn >= _REFRESH_S:
            self.redraw()

    def redraw(self) -> None:
        self._drawn = time.monotonic()
        self.bar.set_description_str(self._describe(), refresh=False)
        self.bar.refresh()

    def advance(self) -> None:
        self.bar.set_description_str(self._describe(), refresh=False)
        self.bar.update()
        self.redraw()


class _Stage:
    """A stage of the build with its live line (None where none is drawn)."""

    _live: _Live | None

    def close(self) -> None:
        """End the stage's live line."""
        if self._live is not None:
            self._live.bar.close()


class Executing(_Stage):
    """The tutorials a build executes, one after another: each one's start and end, and how it goes: on the
    live line, else a line every INTERVAL seconds."""

    def __init__(self, log: "BuildLog", expected: Sequence[Expected | None], interval: float) -> None:
        self._log = log
        self._expected = list(expected)  # how long each tutorial should take, in the order they run
        self._interval = interval
        self._done = 0
        self._label = ""
        self._progress_file: Path | None = None  # the running tutorial's progress.json
        self._started = self._since = self._told = time.monotonic()
        # The running tutorial first: where a terminal is too narrow for the whole line, the end is cut.
        self._live = (_Live(log.out, len(expected), "[execute] {desc} |{bar:10}| {n_fmt}/{total_fmt} done",
                            self._describe) if log.terminal and expected else None)
        if self._live is None and expected:
            self._log.line(f"[execute] {len(expected)} tutorial(s) to run, {expected_in_all(expected)}")

    def start(self, label: str, timeout: float) -> None:
        """A tutorial starts: the live line names it, or a line says so where there is none."""
        self._label, self._since, self._progress_file = label, time.monotonic(), None
        if self._live is None:
            self._log.line(f"[execute] {label} (time limit {timeout:g} s)")
            self._told = self._since
        else:
            self._live.redraw()

    def tick(self, progress_file: Path) -> None:
        """Called often while the tutorial runs, with its progress.json: the live line shows the time passing,
        or, without one, a line says how it goes once INTERVAL seconds passed since the last."""
        self._progress_file = progress_file
        if self._live is not None:
            self._live.tick()
        elif self._label and time.monotonic() - self._told >= self._interval:
            self._told = time.monotonic()
            self._log.line(f"[execute] {self._running()}")

    def done(self) -> None:
        """The running tutorial ended: one more done."""
        self._done += 1
        self._label = ""
        if self._live is not None:
            self._live.advance()

    def _running(self) -> str:
        progress = read_progress(self._progress_file) if self._progress_file else None
        return running(self._label, time.monotonic() - self._since, self._expected[self._done], progress)

    def _describe(self) -> str:
        so_far = f"{clock(time.monotonic() - self._started)} in all"
        if not self._label:
            return so_far
        after = self._expected[self._done + 1:]
        return f"{self._running()}; {so_far}" + (f"; then {len(after)} more, {expected_in_all(after)}" if after else "")


class Rendering(_Stage):
    """The languages a build renders, JOBS at once: each one's start and end, and the live line."""

    def __init__(self, log: "BuildLog", langs: Sequence[str], jobs: int) -> None:
        self._log = log
        self._unfinished = list(langs)  # in the order they were handed to the JOBS processes
        self._jobs = jobs
        self._started = time.monotonic()
        self._live = (_Live(log.out, len(langs), "[build] {n_fmt}/{total_fmt} languages done |{bar:20}| {desc}",
                            self._describe) if log.terminal else None)

    def start(self, seg: str, log_file: Path, noplot: bool) -> None:
        """A language starts rendering, its Sphinx log in LOG_FILE."""
        if self._live is None:
            self._log.line(f"[build] {seg}: sphinx-build{' (no execution)' if noplot else ''} "
                           f"(log: {shown(log_file)})")

    def done(self, seg: str, line: str) -> None:
        """SEG is built (or failed): LINE says how."""
        self._unfinished.remove(seg)
        self._log.line(line)
        if self._live is not None:
            self._live.advance()

    def tick(self) -> None:
        """Called often while languages render: the live line shows the time passing."""
        if self._live is not None:
            self._live.tick()

    def _describe(self) -> str:
        # Each process takes the next language as it is free: the first JOBS unfinished are rendering.
        running, waiting = self._unfinished[:self._jobs], self._unfinished[self._jobs:]
        return (f"{tqdm.format_interval(time.monotonic() - self._started)}; rendering {', '.join(running)}"
                + (f"; next: {', '.join(waiting)}" if waiting else ""))


@dataclass(frozen=True, kw_only=True)
class Told(Record):
    """<builddir>/logs/<kind>.json: the reports (a failure's lines, a warning's) a build found, which the next
    build does not tell again in full (BuildLog.tell)."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "record of what a build told (logs/<kind>.json)"

    reports: tuple[str, ...]


class BuildLog:
    """Where a build's lines go, and how: see the module's docstring."""

    def __init__(self, out: TextIO, *, terminal: bool, actions: bool, verbose: bool, interval: float) -> None:
        self.out = out
        self.terminal = terminal  # a live line may be drawn
        self.actions = actions  # GitHub Actions: Sphinx's logs are shown folded
        self.verbose = verbose  # VERBOSE=1: Sphinx's logs are shown
        self.interval = interval  # PROGRESS_INTERVAL: without a live line, the most seconds a running tutorial goes untold
        self.started = time.monotonic()
        self.summed_up: dict[str, Path] = {}  # the first line of each report told by the last build: its file

    def tell(self, reports: Sequence[str], record: Path, told: Sequence[str] = ()) -> int:
        """Tell each of REPORTS in full, but those the last build told as they are (RECORD, <kind>.json, read and
        then written with REPORTS and TOLD, those told already), unless VERBOSE=1; <kind>.log beside it holds
        them all. Under GitHub Actions every report is told: its problem matcher makes each line an annotation of
        that run, which a line summing them up would not. Returns how many were left untold (summed_up names them)."""
        try:
            before = set((Told.read(record.with_suffix(".json")) or Told(reports=())).reports)
        except RecordError:
            before = set()  # another format: told again
        untold = [] if self.verbose or self.actions else [report for report in reports if report in before]
        for report in reports:
            if report not in untold:
                self.line(report)
        everything = (*told, *reports)
        record.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(record.with_suffix(".log"), "".join(f"{report}\n" for report in everything))
        Told(reports=everything).write(record.with_suffix(".json"))
        self.summed_up |= {report.split("\n", 1)[0]: record.with_suffix(".log") for report in untold}
        return len(untold)

    def summed(self, count: int, record: Path) -> str:
        """What a line that sums COUNT untold reports up adds: where they all are."""
        return (f"{count} told by the last build as they are, not again: {shown(record.with_suffix('.log'))} "
                "holds them all (VERBOSE=1 tells them)")

    @classmethod
    def here(cls, verbose: bool, interval: float) -> "BuildLog":
        """This process's standard output, as its environment shows it."""
        out = sys.stdout
        return cls(out, terminal=out.isatty() and os.environ.get("TERM") != "dumb",
                   actions=os.environ.get("GITHUB_ACTIONS") == "true", verbose=verbose, interval=interval)

    def line(self, text: str) -> None:
        """A line (or several) that stays, above the live line if one is drawn."""
        tqdm.write(text, file=self.out)
        self.out.flush()

    def executing(self, expected: Sequence[Expected | None]) -> contextlib.closing[Executing]:
        """While tutorials execute, EXPECTED: how long each should take (None: never timed)."""
        return contextlib.closing(Executing(self, expected, self.interval))

    def rendering(self, langs: Sequence[str], jobs: int) -> contextlib.closing[Rendering]:
        """While LANGS render, JOBS at once."""
        return contextlib.closing(Rendering(self, langs, jobs))

    def sphinx_log(self, seg: str, log_file: Path) -> None:
        """Sphinx's log of one language: shown with VERBOSE=1, folded under GitHub Actions, else not."""
        if not (self.verbose or self.actions):
            return
        text = log_file.read_text(encoding="utf-8", errors="replace").rstrip("\n")
        if self.actions:
            resume = secrets.token_hex(16)  # no line of the log can turn workflow commands back on
            indented = "\n".join(f"  {line}" for line in text.splitlines())
            self.line(f"::group::Sphinx's log of {seg} ({shown(log_file)})\n::stop-commands::{resume}\n"
                      f"{indented}\n::{resume}::\n::endgroup::")
        else:
            self.line(f"[build] {seg}: Sphinx's log ({shown(log_file)}):\n{text}")

    def elapsed(self) -> float:
        """Seconds since the build started."""
        return time.monotonic() - self.started

"""What a build shows while it runs: a few lines a person reads; Sphinx's own output goes to files.

Each event is one plain line (`[execute] …`, `[build] …`). On a terminal (standard output a tty, TERM not
`dumb`), tqdm adds a live line under them while the tutorials execute (which one runs, how many are done of
how many, the time so far and an estimate of the time left, from the durations known: core.shards) and
while the languages render (which are rendering, how many are done); the line is erased when its stage
ends, and what it says needs no line of its own (a tutorial's start, a language's). Elsewhere (CI, a pipe)
nothing is redrawn and no escape sequence is written.

Sphinx's and sphinx-gallery's output of each language is in <builddir>/logs/<lang>.log; VERBOSE=1 shows
it on the screen too, whole, once the language is built (languages build at once: their logs would
interleave). Under GitHub Actions (GITHUB_ACTIONS=true) each log is shown folded in a group of its own,
indented, so that the problem matchers do not report its warnings at the generated files (the build
reports each at its author's file and line, once), and with workflow commands off, since a log quotes
the tutorials' text.
"""

import contextlib
import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

_REFRESH_S = 0.5  # how often a live line shows the time passing
# No monitor thread: the build forks (each language's Sphinx, each tutorial's runner), and a live line is
# redrawn only from the build's own loops (tick()).
tqdm.monitor_interval = 0


def shown(path: Path) -> str:
    """PATH as a person at this working directory types it."""
    path = Path(path)
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def time_left(expected: Sequence[float | None], done: int, running_for: float) -> tuple[float, int]:
    """The seconds the tutorials from EXPECTED[DONE] on are still expected to take, the first of them running
    for RUNNING_FOR seconds already (one past its expected time counts 0), and how many were never timed."""
    rest = expected[done:]
    known = [seconds for seconds in rest if seconds is not None]
    left = sum(known) - (min(running_for, rest[0]) if rest and rest[0] is not None else 0)
    return left, len(rest) - len(known)


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

    def tick(self) -> None:
        """Called often while the stage runs: the live line shows the time passing."""
        if self._live is not None:
            self._live.tick()

    def close(self) -> None:
        """End the stage's live line."""
        if self._live is not None:
            self._live.bar.close()


class Executing(_Stage):
    """The tutorials a build executes, one after another: each one's start and end, and the live line."""

    def __init__(self, log: "BuildLog", expected: Sequence[float | None]) -> None:
        self._log = log
        self._expected = list(expected)  # each tutorial's expected seconds, in the order they run
        self._done = 0
        self._label = ""
        self._started = self._since = time.monotonic()
        self._live = (_Live(log.out, len(expected), "[execute] {n_fmt}/{total_fmt} done |{bar:20}| {desc}",
                            self._describe) if log.terminal and expected else None)
        if self._live is None and expected:
            self._log.line(f"[execute] {len(expected)} tutorial(s) to run, {self._estimate(0, 'expected')}")

    def start(self, label: str, timeout: float) -> None:
        """A tutorial starts: the live line names it, or a line says so where there is none."""
        self._label, self._since = label, time.monotonic()
        if self._live is None:
            self._log.line(f"[execute] {label} (time limit {timeout:g} s)")
        else:
            self._live.redraw()

    def done(self) -> None:
        """The running tutorial ended: one more done."""
        self._done += 1
        self._label = ""
        if self._live is not None:
            self._live.advance()

    def _estimate(self, running_for: float, word: str) -> str:
        """The time the tutorials not done yet are expected to take: `about 01:20 <word>`, and how many
        of them were never timed (.github/tutorial-durations.json, or an earlier run here)."""
        left, untimed = time_left(self._expected, self._done, running_for)
        return f"about {tqdm.format_interval(left)} {word}" + (f" (+{untimed} never timed)" if untimed else "")

    def _describe(self) -> str:
        now = time.monotonic()
        running = f"; running {self._label} for {tqdm.format_interval(now - self._since)}" if self._label else ""
        return f"{tqdm.format_interval(now - self._started)} in all, {self._estimate(now - self._since, 'left')}{running}"

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

    def _describe(self) -> str:
        # Each process takes the next language as it is free: the first JOBS unfinished are rendering.
        running, waiting = self._unfinished[:self._jobs], self._unfinished[self._jobs:]
        return (f"{tqdm.format_interval(time.monotonic() - self._started)}; rendering {', '.join(running)}"
                + (f"; next: {', '.join(waiting)}" if waiting else ""))


class BuildLog:
    """Where a build's lines go, and how: see the module's docstring."""

    def __init__(self, out: TextIO, *, terminal: bool, actions: bool, verbose: bool) -> None:
        self.out = out
        self.terminal = terminal  # a live line may be drawn
        self.actions = actions  # GitHub Actions: Sphinx's logs are shown folded
        self.verbose = verbose  # VERBOSE=1: Sphinx's logs are shown
        self.started = time.monotonic()

    @classmethod
    def here(cls, verbose: bool) -> "BuildLog":
        """This process's standard output, as its environment shows it."""
        out = sys.stdout
        return cls(out, terminal=out.isatty() and os.environ.get("TERM") != "dumb",
                   actions=os.environ.get("GITHUB_ACTIONS") == "true", verbose=verbose)

    def line(self, text: str) -> None:
        """A line (or several) that stays, above the live line if one is drawn."""
        tqdm.write(text, file=self.out)
        self.out.flush()

    def executing(self, expected: Sequence[float | None]) -> contextlib.closing[Executing]:
        """While tutorials execute, EXPECTED: the seconds each is expected to take (None: never timed)."""
        return contextlib.closing(Executing(self, expected))

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

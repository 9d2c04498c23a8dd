"""Runs: one execution of a tutorial's English source, shared by every language's page.

A run folder (BuildTree.run_dir) holds what the runner recorded, result.json
(each code block's output and figures, the error if any) and page/ (the
figures, where the page shows them), and,
after a run that ended, stamp.json: the digest of the source that ran, the
environment fingerprint, what the run cost, where it ran and whether it failed.
A failed run is kept like a successful one: its page shows its error, and the
build reports it again without running it. A run without a stamp, whose
files are not those its stamp sealed (core.runs.seal), or whose stamp does not match
the current source and environment, is not current (core.runs.currency): the build
runs the tutorial again (or `tutorials-site assemble` refuses).
"""

import os
import re
import shutil
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import ClassVar, Protocol

from ..files import open_regular
from ..project import Tutorial
from . import seal
from .records import Record, RecordError, RunError, RunFile, RunRecord, Stamp
from .run_folder import PAGE as PAGE  # runs.PAGE, ...: its names
from .run_folder import PROGRESS as PROGRESS
from .run_folder import RESULT as RESULT
from .run_folder import STAMP as STAMP
from .stamps import outputs_digest

_PROGRESS_MAX = 4096  # bytes of a progress.json read: the runner's is a few dozen
# The longest time limit the build accepts, from TUTORIAL_TIMEOUT or a tutorial's line: a limit is always set.
MAX_TIMEOUT = 24 * 3600
_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")  # 600, 90.5: no exponent, sign, inf, nan or other digits


def parse_timeout(value: str) -> float:
    """A time limit in seconds, as TUTORIAL_TIMEOUT and `# tutorials-timeout:` both write it.

    Raises ValueError saying what is accepted; the caller names where the value came from.
    """
    value = value.strip()
    if not _SECONDS.fullmatch(value) or not 0 < float(value) <= MAX_TIMEOUT:
        raise ValueError(f"{value!r} is not a number of seconds between 0 and {MAX_TIMEOUT} (24 h), "
                         "written like 600 or 90.5")
    return float(value)


class CodeBlock(Protocol):
    """A code block of a script as sphinx-gallery splits it (its `Block`): what first_code_line reads of it."""

    @property
    def content(self) -> str:
        """The block's lines, as the script has them."""

    @property
    def lineno(self) -> int:
        """The script line the block starts at."""


def first_code_line(block: CodeBlock) -> int:
    """Where a reader looks for a code block that hung or crashed: its first line that is not blank."""
    content = block.content
    return block.lineno + content.count("\n", 0, len(content) - len(content.lstrip()))


def unfinished_reason(returncode: int, timed_out_after: float | None) -> str:
    """How a tutorial's process that did not finish its run ended, as the build says it: its time limit ran
    out (TIMED_OUT_AFTER seconds), a signal killed it (RETURNCODE below 0), or it exited before the end."""
    if timed_out_after is not None:
        return f"tutorial timed out after {timed_out_after:g} s"
    if returncode < 0:
        message = f"tutorial died from signal {_signal_name(-returncode)}"
        return message + " (killed: out of memory?)" if -returncode == signal.SIGKILL else message
    return f"tutorial exited with status {returncode} (os._exit, or see runner.log)"


def error_line(label: str, error: RunError, raised: bool) -> str:
    """The build's one-line error for a run of LABEL that ended in ERROR: RAISED, or it did not finish (its
    message is then unfinished_reason's)."""
    return f"{label}:{error.line}: ERROR: " + (f"tutorial failed: {error.message}" if raised else error.message)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name of its own
        return str(number)


@dataclass(frozen=True, kw_only=True)
class Progress(Record):
    """progress.json: the code block a run is in, its index among the tutorial's code blocks, from 0, and its
    first line of code; the runner writes it as each block starts."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "run's progress (progress.json)"

    block: int
    line: int


def read_progress(path: Path | str) -> Progress | None:
    """The progress.json at PATH, also while its run goes on, in the output folder the tutorial may write
    too: read without following a link or waiting on a FIFO, at most a few KB; None for anything that is not
    what the runner writes."""
    try:
        with os.fdopen(open_regular(path), "rb") as file:
            progress = Progress.from_json(file.read(_PROGRESS_MAX), str(path))
    except (OSError, RecordError, RecursionError):  # gone, not a file, not the runner's (or JSON nested too deep)
        return None
    return progress if progress.block >= 0 and progress.line >= 0 else None


def outputs(run_dir: Path, result: RunRecord) -> str:
    """The outputs digest of a run: its blocks' text, its figures' bytes and its HTML reprs, in order."""
    images = [Path(run_dir, PAGE, name).read_bytes() for block in result.blocks for name in block.images]
    return outputs_digest([text for block in result.blocks for text in block.texts], images,
                          [block.html for block in result.blocks if block.html])


def figures_folder(tutorial: Tutorial) -> PurePosixPath:
    """Where TUTORIAL's figures go, relative to its run's page/ folder and to a staged tree alike."""
    return PurePosixPath(tutorial.gallery.gallery_dir, tutorial.section, "images")


def figures(files: Iterable[RunFile], tutorial: Tutorial) -> list[RunFile]:
    """Those of a run's FILES that TUTORIAL's page shows: the files of its figures folder."""
    folder = f"{PAGE}/{figures_folder(tutorial)}/"
    return [file for file in files if file.path.startswith(folder)]


def sealed(runs_root: Path, tutorial: Tutorial) -> tuple[RunFile, ...]:
    """The seal of TUTORIAL's run under RUNS_ROOT, for its stamp (core.runs.seal.seal). SealError where it holds
    a link, or where its page/ holds a file outside its figures folder: a run hands its page its figures only."""
    files = seal.seal(runs_root, tutorial.key)
    shown = set(figures(files, tutorial))
    foreign = [file.path for file in files if file.path.startswith(f"{PAGE}/") and file not in shown]
    if foreign:
        raise seal.SealError(f"{Path(runs_root, tutorial.key, foreign[0])}: outside {PAGE}/{figures_folder(tutorial)}/, "
                             "the one folder of a run its page takes files from (its figures)")
    return files


def unsealed(runs_root: Path, key: str) -> list[str]:
    """Why the stamped run KEY under RUNS_ROOT is not the one its stamp sealed (core.runs.seal.verify); nothing
    for a run without a stamp this build reads (never taken as current anyway)."""
    try:
        stamp = Stamp.read(Path(runs_root, key, STAMP))
    except RecordError:
        return []
    return seal.verify(Path(runs_root), key, stamp.files) if stamp else []


def clear(runs_root: Path, key: str) -> None:
    """Remove the run KEY under RUNS_ROOT, whatever it is: a link in its place (or in place of a folder of KEY)
    is removed itself, never followed, and nothing outside RUNS_ROOT is touched."""
    step = Path(runs_root)
    for part in PurePosixPath(key).parts:
        step = step / part
        if step.is_symlink() or (step.exists() and not step.is_dir()):
            step.unlink()
            return
    shutil.rmtree(step, ignore_errors=True)  # a link inside is removed, not followed


def restore(kept_runs: Path, runs_root: Path, key: str) -> None:
    """Put a copy of the run KEY in KEPT_RUNS (another build folder's runs) in place of RUNS_ROOT's; a link in
    it is copied as a link, never followed (the copy's seal check then refuses it).

    The stamp goes last: a copy cut short has none, so it is never taken for current.
    """
    kept, run_dir = Path(kept_runs, key), Path(runs_root, key)
    clear(runs_root, key)
    shutil.copytree(kept, run_dir, symlinks=True, ignore=lambda folder, names: [STAMP] if Path(folder) == kept else [])
    shutil.copy2(kept / STAMP, run_dir / STAMP, follow_symlinks=False)

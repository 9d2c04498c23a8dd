"""The build's side of execution stamps: the stamp a finished run gets, what the build says of it, and what
it reads back from the stamps of current runs.

Apart from core.runs.stamps on purpose: the runner's code imports that one, so any change to it changes the
environment fingerprint and runs every tutorial again (core.runs.fingerprint); no run depends on this one.
"""

import platform
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from .. import git
from ..layout import BuildTree
from ..project import Project, Tutorial
from . import runs
from .fingerprint import installed_version
from .needs import Machine, Needs, describe_gpus
from .records import Hardware, RecordError, RunFile, RunRecord, Stamp
from .used import SourceDigest

MB = 2**20
# A frame's first line in a Python traceback, as the runner records it (the tutorial's file relative to the project).
_FRAME = re.compile(r'  File "(.*)", line \d+')


def cites_lines(result: RunRecord, script: str) -> bool:
    """Whether the run recorded in RESULT shows line numbers of the script named SCRIPT (its file name): a traceback's
    frame (`x.py", line 12`), a warning or a log line (`x.py:12`), a debugger's (`x.py(12)`); or it failed, its
    error at a line. Its output then holds where the code stood, which a prose edit above it moves."""
    cited = re.compile(rf'(?<![\w.-]){re.escape(script)}(?:", line \d|:\d|\(\d)')
    shown = (text for block in result.blocks for text in (*block.texts, block.html or ""))  # an HTML repr too
    return result.error is not None or any(cited.search(text) for text in shown)


def run_stamp(result: RunRecord, *, hardware: Hardware, raised: bool, source: SourceDigest, script: str,
              environment: str, outputs: str, files: tuple[RunFile, ...], seconds: float, peak_rss_bytes: int,
              needs_gpus: int, origin: Mapping[str, str], sandboxed: bool = True, network: bool = False) -> Stamp:
    """The stamp of a run of the script named SCRIPT that ended and recorded RESULT: SOURCE (its source digest, and
    whether its output cites the lines of its code: cites_lines) run in ENVIRONMENT on
    HARDWARE showed OUTPUTS (its outputs digest) from FILES (its seal, core.runs.seal), at what cost, from ORIGIN
    (runs.origin), SANDBOXED or not (SANDBOX=off), with the NETWORK or not (its tutorials-needs line). A run
    that failed (RESULT's error) is stamped too, kept like a successful one; RAISED: it raised, else it did not
    finish. Sizes are in MB, to a tenth."""
    failed = result.error is not None
    return Stamp(source=source.code, code_lines=source.lines, cites_lines=cites_lines(result, script),
                 environment=environment, outputs=outputs, seconds=seconds, failed=failed,
                 unfinished=failed and not raised, peak_rss_mb=round(peak_rss_bytes / MB, 1),
                 gpu_peak_mb=tuple(round(b / MB, 1) for b in result.gpu_peak_bytes), hardware=hardware,
                 needs_gpus=needs_gpus, commit=origin["commit"], date=origin["date"], files=files,
                 sandboxed=sandboxed, network=network)


def expected(project: Project, tutorial: Tutorial, stamp: Stamp) -> bool:
    """Whether STAMP's failed run raised, as conf.py's expected_failing_examples expects of TUTORIAL (a run that
    timed out or died is never what it expects)."""
    return stamp.failed and not stamp.unfinished and project.expected_to_fail(tutorial)


def excused(project: Project, tutorial: Tutorial, stamp: Stamp) -> bool:
    """Whether STAMP's failed run fails neither the build nor `check`: conf.py expects it (expected), or allows
    TUTORIAL to fail however it does (tutorials_allowed_failures)."""
    return stamp.failed and (expected(project, tutorial, stamp) or project.allowed_to_fail(tutorial))


def own_frames(traceback: str, label: str) -> list[str]:
    """TRACEBACK (as a page shows it) with the frames of the tutorial's own file LABEL only, each run of other
    frames (installed packages, the standard library) said in one line: what the build prints of it."""
    lines: list[str] = []
    own, skipped = True, 0
    for line in traceback.rstrip("\n").splitlines():
        frame = _FRAME.match(line)
        if frame:
            own = frame[1] == label
        elif not line.startswith("    "):
            own = True  # the header, the exception's own lines, what joins a chained exception
        if not own:
            skipped += bool(frame)
            continue
        if skipped:
            lines.append(f"  ... {skipped} frame(s) outside the tutorial, on its page")
            skipped = 0
        lines.append(line)
    return lines


def unexpected_failure(run_dir: Path, project: Project, tutorial: Tutorial) -> list[str]:
    """What the build says of TUTORIAL's current run in RUN_DIR where it failed and conf.py does not expect it
    to (else nothing): its error line, the same as when it ran, then the tutorial's frames of the traceback its
    page shows (none for a run that did not finish), indented."""
    stamp = stamp_of(run_dir)
    if stamp is None or not stamp.failed or excused(project, tutorial, stamp):
        return []
    result = RunRecord.read(run_dir / runs.RESULT)
    assert result is not None and result.error is not None, "a current run's record agrees with its stamp (core.runs.currency)"
    error = result.error
    shown = [text for block in result.blocks if block.line == error.block_line for text in block.texts]
    traceback = own_frames(shown[-1], tutorial.label) if shown and not stamp.unfinished else []
    return [runs.error_line(tutorial.label, error, raised=not stamp.unfinished), *(f"  {line}" for line in traceback)]


def stamped_lines(label: str, stamp: Stamp, need: Needs) -> list[str]:
    """What the build says of LABEL's stamped run: its time and peak memory, and a note where it ran on
    fewer GPUs than NEED declares (NEEDS=lenient, the default: it ran anyway, and its page says so)."""
    lines = [f"[execute] {label}: {stamp.seconds:.1f} s, peak memory {stamp.peak_rss_mb:.0f} MB"
             + "".join(f", GPU {i}: {mb:.0f} MB" for i, mb in enumerate(stamp.gpu_peak_mb))]
    if stamp.hardware.gpus < need.gpus:
        lines.append(f"[execute] {label}: note: ran on {describe_gpus(stamp.hardware.gpus)}, written for "
                     f"{describe_gpus(need.gpus)} ({need.origin})")
    return lines


def stamp_of(run_dir: Path) -> Stamp | None:
    """The stamp of the run in RUN_DIR; None where it has none, or one of a format this build cannot read
    (core.runs.stamps.read_stamp is the same for a page's copy)."""
    try:
        return Stamp.read(run_dir / runs.STAMP)
    except RecordError:
        return None


def ran_on_fewer_gpus(run_dir: Path, gpus: int) -> bool:
    """Whether the current run in RUN_DIR saw fewer than GPUS GPUs (under NEEDS=strict it runs again); a run
    without a stamp this build can read is not current anyway."""
    stamp = stamp_of(run_dir)
    return stamp is None or stamp.hardware.gpus < gpus


def expectation_errors(tree: BuildTree, project: Project) -> list[str]:
    """Tutorials listed as expected to fail whose current run passed (sphinx-gallery fails those too)."""
    errors = []
    for tutorial in project.tutorials:
        stamp = stamp_of(tree.run_dir(tutorial.key))  # None: not a current run, never rendered as one
        if tutorial.executed and stamp and project.expected_to_fail(tutorial) and not stamp.failed:
            errors.append(f"{tutorial.label}:1: ERROR: listed in conf.py's expected_failing_examples, but ran "
                          "without error; remove it from the list")
    return errors


def now() -> str:
    """The time a run's stamp and a build's record are dated with: UTC, to the minute ("YYYY-MM-DD HH:MM UTC")."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def origin(root: Path) -> dict[str, str]:
    """The commit the run comes from (+changes when the work tree differs) and the date: {"commit", "date"}."""
    commit = git.run(root, "rev-parse", "--short=12", "HEAD") or "unknown"
    if git.run(root, "status", "--porcelain", "--untracked-files=no"):
        commit += "+changes"
    return {"commit": commit, "date": now()}


def hardware_here(machine: Machine) -> Hardware:
    """Where a run ran, as the build sees it (a run's own record is not believed): the GPUs torch sees here
    (MACHINE), torch's installed release and the CUDA release it was built for (its version.py, read, not
    imported)."""
    torch = installed_version("torch")
    return Hardware(device=machine.device or "CPU", gpus=machine.gpus, machine=platform.machine(),
                    torch=None if torch == "not installed" else torch, cuda=_torch_cuda())


_CUDA_LINE = re.compile(r"^cuda\b[^=\n]*=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)


def _torch_cuda() -> str | None:
    """The CUDA release the installed torch was built for (torch.version.cuda), None for a CPU build or none."""
    try:
        text = Path(str(metadata.distribution("torch").locate_file("torch/version.py"))).read_text(encoding="utf-8")
    except (metadata.PackageNotFoundError, OSError):
        return None
    found = _CUDA_LINE.search(text)
    return found[1] if found else None

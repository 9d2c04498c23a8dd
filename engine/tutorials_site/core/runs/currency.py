"""Whether a run is current: the one answer, for the build, REUSE, `tutorials-site assemble`, `tutorials-site check` and the
provenance directive alike (tests/test_currency.py holds the table of what makes a run stale).

A run is current while its stamp vouches for it: its folder holds the files its stamp sealed (core.runs.seal), its
record agrees with its stamp and shows what the stamp says it showed, it took time; its source digest is the
tutorial's now (its code, not its prose; where its output cites the script's line numbers, also the lines its
code stands on); it ran in the environment of now (core.runs.fingerprint: the engine's run code, Python, start-up
hooks, the accelerator pins, conf.py's run settings), and every file and distribution of its Used record
(core.runs.used) is as it was; and it was recorded under the output limits asked for now. A failed run is current
like one that passed: its page shows its failure (RETRY_FAILED is the build's choice, not staleness).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..terminal import OutputLimits
from . import runs, seal, signing
from .records import OPTIONS, RecordError, RunOptions, RunRecord, Stamp
from .used import Present, SourceDigest


@dataclass(frozen=True)
class _Seen:
    """What a caller sees of a run: its stamp, the outputs digest of what is shown and the output limits it
    was recorded under (None: not seen)."""

    stamp: Stamp
    shown: str | None
    limits: OutputLimits | None


def problems(source: SourceDigest, present: Present | None, *, run: tuple[Path, str] | None = None,
             stamp: Stamp | None = None, shown: str | None = None, limits: OutputLimits | None = None) -> list[str]:
    """Why a run does not stand for a tutorial whose source is SOURCE, in PRESENT (empty: it is current).

    The run is RUN, (runs root, key): its folder, of which the stamp, the seal, the record, the outputs and the
    output limits it was recorded under are read (a folder without a stamp is "not executed"); or STAMP, a page's
    copy of its stamp, with SHOWN, the outputs digest of what that page shows. A caller that cannot judge a part
    says so, and that part is left out:
    - PRESENT None: the source alone is judged. The provenance directive, inside Sphinx, has only the stamp the
      build put beside the page, which the build judged whole before putting it there: it asks only whether the
      page is of that source (a page rendered again from an older staging would not be).
    - SHOWN None with STAMP: what the page shows is not judged (a stamp alone, no page).
    - LIMITS None: the output limits are not judged: `tutorials-site check` of a page's stamp (a page does not say under
      which limits its run was recorded, so a STAMP given with LIMITS is stale). The build, REUSE and
      `tutorials-site assemble` give the limits of now.
    """
    seen = _read(*run) if run is not None else _Seen(stamp, shown, None) if stamp is not None else ["not executed"]
    if isinstance(seen, list):
        return seen
    found = _of_source(seen.stamp, source)
    if seen.shown is not None and seen.stamp.outputs != seen.shown:
        found.insert(0, "the output shown is not what the run produced (edited after the run?)")
    if present is not None:
        found += _of_environment(seen.stamp, present)
        if present.sandboxed and not seen.stamp.sandboxed:
            found.append("made without its sandbox (SANDBOX=off): never current for a sandboxed build")
        if present.runs_key and run is not None:
            found += [why for why in [signing.unsigned(present.runs_key, Path(*run), run[1])] if why]
    if not seen.stamp.seconds > 0:
        found.append("zero-time run")
    if limits is not None and seen.limits != limits:
        found.append("recorded under other output limits (TUTORIAL_OUTPUT_LIMIT) than this build's")
    return found


def _read(runs_root: Path, key: str) -> _Seen | list[str]:
    """What is seen of the run KEY under RUNS_ROOT; else why it cannot stand for anything: no stamp, files not
    those its stamp sealed (each problem naming the file), a record that disagrees with its stamp or that is
    damaged or of another format (the tutorial runs again)."""
    run_dir = Path(runs_root, key)
    try:
        stamp, result = Stamp.read(run_dir / runs.STAMP), RunRecord.read(run_dir / runs.RESULT)
        if stamp is None or result is None:
            return ["not executed"]
        unsealed = seal.verify(Path(runs_root), key, stamp.files)
        if unsealed:
            return unsealed
        if stamp.failed != (result.error is not None):
            return ["its record and its stamp disagree on whether it failed (edited after the run?)"]
        options = RunOptions.read(run_dir / OPTIONS)
        return _Seen(stamp, runs.outputs(run_dir, result), options.output_limits if options else None)
    except RecordError as error:
        return [f"its record cannot be used ({error})"]
    except OSError:
        return ["the run's record is damaged (a figure is missing)"]


def lines_ran_at(stamp: Stamp | None, lines: Sequence[int]) -> list[int]:
    """Where each code block of the current script, starting at LINES, started in the script whose run STAMP vouches
    for (its code is this script's, block for block, where the run is current; a prose edit may have moved it):
    LINES themselves without a stamp, or one of another script."""
    return list(stamp.code_lines) if stamp is not None and len(stamp.code_lines) == len(lines) else list(lines)


def _of_source(stamp: Stamp, source: SourceDigest) -> list[str]:
    """Why STAMP's run is not of the tutorial's current SOURCE: its code changed, or its output cites the
    script's line numbers (a traceback, a warning, its error) and its code moved to other lines. A prose edit
    alone changes neither: the kept output is rendered again, nothing runs."""
    if stamp.source != source.code:
        return ["output comes from another version of the source (its code, a setting comment or a file it "
                "declares it reads)"]
    if stamp.cites_lines and stamp.code_lines != source.lines:
        return ["its output cites the script's line numbers, and its code moved to other lines since (a text "
                "block above it changed length)"]
    return []


def _of_environment(stamp: Stamp, present: Present) -> list[str]:
    """Why STAMP's run no longer stands in PRESENT: another environment, or a file or distribution it used
    changed (no other file or distribution counts)."""
    found = []
    if stamp.environment != present.environment:
        found.append("executed in another environment (the run protocol, Python, start-up hooks, the accelerator "
                     "pins or conf.py's run settings changed since)")
    if stamp.used is None:
        return [*found, "ran before the build recorded what a run uses"]
    changed = [f.path for f in stamp.used.files if present.digest(f.path) != f.sha256]
    if changed:
        found.append(f"a project file it could read changed since: {', '.join(changed[:5])}"
                     + (f" and {len(changed) - 5} more" if len(changed) > 5 else ""))
    upgraded = [f"{d.name} {d.version} -> {present.version(d.name)}" for d in stamp.used.distributions
                if present.version(d.name) != d.version]
    if upgraded:
        found.append(f"a distribution it imported changed since: {', '.join(upgraded)}")
    return found

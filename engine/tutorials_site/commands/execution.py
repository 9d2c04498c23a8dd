"""A build's execution stage: each tutorial whose run is not current runs once, as `python tutorial.py`
would, in a process of its own (commands.execute), with a time limit, and its run is stamped (core.runs);
its run serves every language."""

import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core import project
from ..core.errors import Failed
from ..core.layout import BuildTree
from ..core.runs import currency, isolation, needs, runs, shards, signing, stamping
from ..core.runs.fingerprint import seen_by, tutorial_digest, used_by
from ..core.runs.records import RunFile, ShardRecord, Stamp
from ..core.runs.sandbox import Sandbox
from ..core.runs.seal import SealError
from ..core.runs.used import Present, SourceDigest
from ..core.site.settings import Settings
from ..core.site.staging import working_folder
from ..core.terminal import OutputLimits
from . import execute
from .build_log import BuildLog, Executing
from .prepare import Build, build_failed

FAILURES = "failures"  # <builddir>/logs/failures.log: every failure a build found (BuildLog.tell)


@dataclasses.dataclass(frozen=True)
class Executed:
    """What the execution stage did with the tutorials it was given."""

    ran: tuple[str, ...]  # the keys of those it executed
    failed: tuple[str, ...]  # the errors of those that failed (now or before) or could not run here, one line each
    taken: int  # how many got a copy of their current run in REUSE
    current: int  # how many had a current run already (a failed one included)
    # NEEDS=strict kept one from running here, or abort_on_example_error met a failure: no page is rendered.
    stops: bool = False


@dataclasses.dataclass(frozen=True)
class _Pending:
    """A tutorial whose run is not current: it runs, and its run is stamped with what was known before."""

    tutorial: project.Tutorial
    digest: SourceDigest  # its source digest
    need: needs.Needs


def _stamp(item: _Pending, outcome: execute.Outcome, present: Present, files: tuple[RunFile, ...], run_dir: Path,
           site: project.Project, machine: Callable[[], needs.Machine], log: BuildLog, sandboxed: bool) -> Stamp:
    """Stamp the run of ITEM that ended (OUTCOME), failed or not, SANDBOXED or not, sealing its FILES, with what
    it used (of SITE's project, what it could see); where it ran is what this build sees (MACHINE: the GPUs here;
    torch's release), never what the run says."""
    stamp = stamping.run_stamp(outcome.result, hardware=stamping.hardware_here(machine()),
                               raised=outcome.raised, source=item.digest, script=item.tutorial.path.name,
                               environment=present.environment,
                               outputs=runs.outputs(run_dir, outcome.result), files=files, seconds=outcome.seconds,
                               peak_rss_bytes=outcome.peak_rss_bytes, needs_gpus=item.need.gpus,
                               origin=stamping.origin(item.tutorial.root), sandboxed=sandboxed, network=item.need.network)
    stamp = dataclasses.replace(stamp, used=used_by(run_dir, site, item.tutorial))
    stamp.write(run_dir / runs.STAMP)
    if present.runs_key:
        signing.sign(present.runs_key, run_dir, item.tutorial.key)
    for line in stamping.stamped_lines(item.tutorial.label, stamp, item.need):
        log.line(line)
    return stamp



def _tutorial_env(site: project.Project) -> dict[str, str]:
    """The environment a tutorial runs in: this one, less what conf.py does not allow it (core.runs.isolation)."""
    return isolation.tutorial_environment(os.environ, isolation.allowed(site.conf))


def _sandbox(settings: Settings, log: BuildLog) -> Sandbox | None:
    """The sandbox the tutorials run in (None: SANDBOX=off, said once); where this machine cannot make one,
    the build stops before any runs, saying what to install or allow."""
    if not settings.sandboxed:
        log.line("[execute] SANDBOX=off: the tutorials run without a sandbox: each can read and write "
                 "whatever you can (their pages say so)")
        return None
    settings.tree.work.mkdir(parents=True, exist_ok=True)
    # The build folder, and REUSE's: a run sees no other run of any build.
    reused = [settings.reuse.root] if settings.reuse and settings.reuse.root.is_dir() else []
    found = execute.sandbox_here(settings.root, (settings.tree.root, *reused))
    if isinstance(found, str):
        raise Failed(found)
    return found


def _run_isolated(settings: Settings, site: project.Project, item: _Pending, run_dir: Path, timeout: float,
                  confined: Sandbox | None, tick: Callable[[Path], None]) -> execute.Outcome | str:
    """Run one tutorial in CONFINED's sandbox, from a fresh working folder (removed after), with the environment
    core.runs.isolation allows it: how it went, or the error of a run that is not stamped: one whose output folder
    held what no run records, or whose output shows the value of a secret withheld from it (its record
    redacted).
    """
    tutorial, env = item.tutorial, _tutorial_env(site)
    runs.clear(settings.tree.runs, tutorial.key)  # a link in its place is removed, never followed
    execute.remove_folder(settings.tree.work)  # what a killed build left
    try:
        outcome = execute.run_tutorial(tutorial.path, run_dir, working_folder(settings.tree.work, tutorial),
                                       execute.run_options(site, tutorial, settings.output_limits),
                                       timeout=timeout, label=tutorial.label, env=env, tick=tick, confined=confined,
                                       network=item.need.network, scratch=settings.tree.work,
                                       visible=seen_by(site, tutorial).binds)
    except execute.OutputRefused as error:
        return str(error)
    finally:
        execute.remove_folder(settings.tree.work)
    secrets = isolation.withheld(os.environ, env)
    leaks = isolation.leaks(outcome.result, secrets)
    if not leaks:
        return outcome
    isolation.redact(run_dir, secrets)
    names = ", ".join(dict.fromkeys(name for _, name in leaks))
    return (f"{tutorial.label}:{leaks[0][0]}: ERROR: its output shows the value of {names}, withheld from tutorials "
            "(its output is redacted, the run not stamped): print no secret; a variable that is none and that "
            f"tutorials need goes in conf.py's {isolation.SETTING}")


def _current(tree: BuildTree, tutorial: project.Tutorial, digest: SourceDigest, present: Present, output_limits: OutputLimits,
             log: BuildLog | None = None) -> bool:
    """Whether TUTORIAL's run in TREE is the one its stamp sealed, stands for source DIGEST in PRESENT and
    shows what OUTPUT_LIMITS ask for. LOG, where given, is told of a run whose files are not those sealed."""
    problems = currency.problems(digest, present, run=(tree.runs, tutorial.key), limits=output_limits)
    unsealed = [problem for problem in problems if problem.startswith(str(tree.runs))]  # core.runs.seal's: by path
    if log and unsealed:
        log.line(f"[execute] {tutorial.label}: its run is not the one its stamp sealed, not taken: " + "; ".join(unsealed))
    unsigned = [problem for problem in problems if "signature" in problem or "signed" in problem]
    if log and unsigned:
        log.line(f"[execute] {tutorial.label}: its run in {tree.runs} is not taken: " + "; ".join(unsigned))
    return not problems


def _usable(settings: Settings, tree: BuildTree, item: _Pending, present: Present, log: BuildLog | None = None) -> bool:
    """Whether ITEM's run in TREE is current for it, under NEEDS=strict ran on the GPUs it declares, and
    under RETRY_FAILED did not fail (a failed run is kept like a successful one, its failure told again)."""
    run_dir = tree.run_dir(item.tutorial.key)
    stamp = stamping.stamp_of(run_dir)
    return (stamp is not None and _current(tree, item.tutorial, item.digest, present, settings.output_limits, log)
            and not (settings.enforce_needs and stamping.ran_on_fewer_gpus(run_dir, item.need.gpus))
            and not (settings.retry_failed and stamp.failed))


def run_is_current(settings: Settings, site: project.Project, tutorial: project.Tutorial, present: Present) -> bool:
    """Whether TUTORIAL's recorded run stands for its current source, in this environment, under these limits."""
    return _current(settings.tree, tutorial, tutorial_digest(site, tutorial), present, settings.output_limits)


def _reuse(settings: Settings, log: BuildLog) -> BuildTree | None:
    """REUSE's build folder, where there is one to take runs from."""
    if settings.reuse and not settings.reuse.root.exists():
        log.line(f"[execute] REUSE={settings.reuse.root}: no such folder, no runs to take from it")
        return None
    return settings.reuse


def _pending(settings: Settings, site: project.Project, tutorials: Sequence[project.Tutorial], present: Present,
             reuse: BuildTree | None, log: BuildLog) -> tuple[list[_Pending], int]:
    """The tutorials whose run is not current, here or in REUSE, and how many current runs REUSE gave (copied
    here); LOG is told of a run whose files are not those its stamp sealed. What is run is known before
    anything runs: the live line counts it."""
    rerun = site.flag("run_stale_examples")
    pending, taken = [], 0
    for tutorial in tutorials:
        item = _Pending(tutorial, tutorial_digest(site, tutorial),
                        needs.of(site, tutorial))  # checked by refuse_unusable
        if not rerun and _usable(settings, settings.tree, item, present, log):
            continue
        if not rerun and reuse and _usable(settings, reuse, item, present, log):
            runs.restore(reuse.runs, settings.tree.runs, tutorial.key)
            if not present.runs_key:  # taken, but nothing here can tell who made it
                signing.mark_unverified(settings.tree.run_dir(tutorial.key), f"REUSE={reuse.root}")
            if _usable(settings, settings.tree, item, present, log):  # the copy, as sealed too
                taken += 1
                continue
        pending.append(item)
    return pending, taken


def _execute_one(settings: Settings, site: project.Project, item: _Pending, present: Present, progress: Executing,
                 machine: Callable[[], needs.Machine], log: BuildLog, confined: Sandbox | None) -> list[str]:
    """Run ITEM's tutorial in CONFINED's sandbox and stamp its run, failed or not: what the build says of a
    failure conf.py does not expect (its error line first), else nothing."""
    tutorial = item.tutorial
    timeout = execute.timeout_for(tutorial.path, settings.timeout, tutorial.label)  # checked by refuse_unusable
    progress.start(tutorial.label, timeout)
    run_dir = settings.tree.run_dir(tutorial.key)
    outcome = _run_isolated(settings, site, item, run_dir, timeout, confined, progress.tick)
    progress.done()
    if isinstance(outcome, str):
        return [outcome]
    try:
        files = runs.sealed(settings.tree.runs, tutorial)
    except SealError as error:
        return [f"{tutorial.label}:1: ERROR: its run cannot be sealed: {error}; the run is not stamped (the next "
                "build runs it again)"]
    stamp = _stamp(item, outcome, present, files, run_dir, site, machine, log, confined is not None)
    if stamping.expected(site, tutorial, stamp):
        log.line(f"[execute] {tutorial.label}: failed, as conf.py's expected_failing_examples expects")
    elif stamping.excused(site, tutorial, stamp):
        log.line(f"[execute] {tutorial.label}: failed, which conf.py's tutorials_allowed_failures allows")
    return stamping.unexpected_failure(run_dir, site, tutorial)


def _execute_pending(settings: Settings, site: project.Project, pending: Sequence[_Pending], present: Present,
                     log: BuildLog) -> tuple[list[str], list[str], list[str]]:
    """Run each of PENDING in turn: the keys of those that ran, the reports of those that failed (told here, the
    error line first), and the errors of the tutorials NEEDS=strict kept from running on this machine.
    abort_on_example_error stops at the first unexpected failure."""
    expected = shards.expected_seconds(site, settings.tree, [item.tutorial.key for item in pending])
    # The GPUs tutorials see here, asked once, when first needed.
    machine = functools.cache(lambda: execute.machine(_tutorial_env(site)))
    confined = _sandbox(settings, log) if pending else None
    ran, failed, unmet = [], [], []
    with log.executing([expected[item.tutorial.key] for item in pending]) as progress:
        for item in pending:
            error = item.need.unmet(item.tutorial.label, machine()) if settings.enforce_needs and item.need.gpus else None
            if error:
                log.line(error)
                unmet.append(error)
                progress.done()
                continue
            report = _execute_one(settings, site, item, present, progress, machine, log, confined)
            ran.append(item.tutorial.key)
            if report:
                log.line("\n".join(report))
                failed.append("\n".join(report))
                if site.flag("abort_on_example_error"):
                    log.line("[execute] abort_on_example_error: the remaining tutorials are not executed")
                    break
    return ran, failed, unmet


def kept_failures(tree: BuildTree, site: project.Project, tutorials: Sequence[project.Tutorial], log: BuildLog,
                  told: Sequence[str] = ()) -> tuple[list[str], int]:
    """Tell again each failure conf.py does not expect among the current runs of TUTORIALS (kept, not run
    again), as when it ran, but those the last build told as they are, which are summed up (BuildLog.tell;
    TOLD: the failures this build told already, as they ran). Returns their error lines and how many were
    summed up."""
    reports = [report for tutorial in tutorials
               if (report := stamping.unexpected_failure(tree.run_dir(tutorial.key), site, tutorial))]
    untold = log.tell(["\n".join(report) for report in reports], tree.logs / FAILURES, told)
    return [report[0] for report in reports], untold


def run_tutorials(settings: Settings, site: project.Project, tutorials: Sequence[project.Tutorial], present: Present,
                  log: BuildLog) -> Executed:
    """Run each tutorial whose run is not current, one at a time.

    A run not current here but current in REUSE's build folder is copied from there instead of run.
    A failed run is stamped and kept like a successful one (its page shows the traceback): it runs again
    when its source or the environment changes, or with RETRY_FAILED, and until then every build tells its
    failure again (counted in one line where the last build told it as it is: kept_failures). One listed in
    conf.py's expected_failing_examples is no error; `abort_on_example_error`
    stops at the first unexpected one, a kept one before anything runs. Under NEEDS=strict, a tutorial
    this machine has too few GPUs for is not run, and the build stops once the others ran (Executed.stops).
    """
    reuse = _reuse(settings, log)
    pending, taken = _pending(settings, site, tutorials, present, reuse, log)
    waiting = {item.tutorial.key for item in pending}
    kept_runs = [t for t in tutorials if t.key not in waiting]
    abort = site.flag("abort_on_example_error")
    if abort and any(stamping.unexpected_failure(settings.tree.run_dir(t.key), site, t) for t in kept_runs):
        log.line("[execute] abort_on_example_error: a tutorial's kept run failed; no tutorial is executed")
        pending = []
    ran, reports, unmet = _execute_pending(settings, site, pending, present, log)
    kept, untold = kept_failures(settings.tree, site, kept_runs, log, reports)
    log.line(f"[execute] executed {len(ran)} of {len(tutorials)} tutorial(s)"
             + (f"; took {taken} current run(s) from REUSE={reuse.root}" if reuse else "")
             + (f"; {len(kept)} failed in a run kept from before, not executed again (RETRY_FAILED=1 runs them)"
                if kept else "")
             + (f"; {log.summed(untold, settings.tree.logs / FAILURES)}" if untold else ""))
    failed = kept + [report.split("\n", 1)[0] for report in reports]
    # Never run here (unmet), or abort_on_example_error: no page to render, the build stops (the runs are kept).
    return Executed(ran=tuple(ran), failed=tuple(failed + unmet), taken=taken,
                    current=len(tutorials) - len(pending) - taken, stops=bool(unmet) or (bool(failed) and abort))


def tutorials_done(executed: Executed) -> str:
    """The tutorials' part of a build's last line: how many ran, were current, came from REUSE."""
    return (f"{len(executed.ran)} executed, {executed.current} current"
            + (f", {executed.taken} taken from REUSE" if executed.taken else ""))


def expectations(build: Build, failed: Sequence[str]) -> list[str]:
    """The failures that fail the build once its pages are written: FAILED, and the tutorials expected to fail
    that passed; none under only_warn_on_example_error, which shows them as a warning."""
    errors = list(failed)
    for error in stamping.expectation_errors(build.settings.tree, build.site):
        build.log.line(error)
        errors.append(error)
    if errors and build.site.flag("only_warn_on_example_error"):
        build.log.line("[build] WARNING: only_warn_on_example_error: building the pages of these failed tutorials "
                       "with their errors (tutorials-site check will refuse them):\n  " + "\n  ".join(errors))
        return []
    return errors


def execute_shard(build: Build, shard: shards.Shard) -> None:
    """SHARD=i/N: execute that shard's tutorials and record them for `tutorials-site assemble`, which renders the pages."""
    tutorials = shards.selection(build.site, shard)
    executed = run_tutorials(build.settings, build.site, tutorials, build.present, build.log)
    # Its tutorials' runs, executed or taken from REUSE, also when it stops; durations count the executed ones only.
    ShardRecord(shard=str(shard), tutorials=tuple(t.key for t in tutorials),
                executed=executed.ran).write(build.settings.tree.shard_record)
    if executed.failed:
        raise build_failed(executed.failed, build.log)
    build.log.line(f"[build] shard {shard}: done in {build.log.elapsed():.1f} s ({tutorials_done(executed)}); "
                   "`tutorials-site assemble` renders the pages")


def unstamped_keys(build: Build) -> list[str]:
    """The keys of the selected tutorials whose run the build refused to stamp (it left what no run records, showed
    a withheld secret, could not be sealed): their pages show no output, their errors are the build's."""
    return [t.key for t in build.selected if t.executed and stamping.stamp_of(build.settings.tree.run_dir(t.key)) is None]


def unrun_keys(build: Build) -> list[str]:
    """The keys of the tutorials a TUTORIALS build shows without output: not selected and without a current
    run (one that is current is shown, as a whole build would show it)."""
    unrun = [t for t in build.site.tutorials if t.executed and t not in build.selected
             and not run_is_current(build.settings, build.site, t, build.present)]
    if unrun:
        build.log.line(f"[build] TUTORIALS: {len(unrun)} other tutorial(s) without a current run, shown without output")
    return [t.key for t in unrun]


def from_shards(build: Build) -> list[str]:
    """`tutorials-site assemble`'s runs: those the shards left in this build folder, executing nothing (a tutorial without
    a current run is an error); the failures that fail the build once its pages are written (expectations)."""
    missing = [f"{t.key}: " + "; ".join(problems) for t in build.selected if t.executed
               for problems in [currency.problems(tutorial_digest(build.site, t), build.present,
                                                  run=(build.settings.tree.runs, t.key),
                                                  limits=build.settings.output_limits)]
               if problems]
    if missing:
        raise Failed("[assemble] refusing to execute anything here; no current shard output for:\n  "
                     + "\n  ".join(missing))
    failed, untold = kept_failures(build.settings.tree, build.site, [t for t in build.selected if t.executed], build.log)
    if untold:
        build.log.line(f"[assemble] {len(failed)} tutorial(s) failed in the shards' runs; "
                       + build.log.summed(untold, build.settings.tree.logs / FAILURES))
    return expectations(build, failed)

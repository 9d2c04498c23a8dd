"""`make html`, `make html-noplot`, `make assemble`: execute each tutorial once, then render every language.

1. Execution: each tutorial whose run is not current (core.runs.runs) runs once, as
   `python tutorial.py` would, in a process of its own (commands.execute), with
   a time limit; its run serves every language.
2. Rendering: each language gets its own Sphinx source tree under
   <builddir>/src/<seg>/ (core.site.staging) and its own output under
   <builddir>/html/<seg>/; sphinx-gallery renders the pages from the runs
   (sphinxext.gallery) and executes nothing itself.
"""

import dataclasses
import functools
import io
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TextIO, cast

from ..core import languages, project
from ..core.errors import Failed, SiteError, UsageError
from ..core.layout import ROOT, BuildTree
from ..core.runs import isolation, needs, runs, shards, stamping
from ..core.runs.fingerprint import declared_reads, installed_version, present, source_digest, used_by
from ..core.runs.records import BUILD_RECORD, BuildInfo, Hardware, RunFile, ShardRecord, Stamp
from ..core.runs.sandbox import Sandbox
from ..core.runs.seal import SealError
from ..core.runs.used import Present, SourceDigest
from ..core.site import checks, versions
from ..core.site.build_cache import UpToDate
from ..core.site.settings import Settings
from ..core.site.site_pages import chooser_page
from ..core.site.staging import LOCALE, stage, working_folder
from ..core.terminal import OutputLimits
from ..core.text import catalogs, sphinx_warnings, translate
from ..core.text.tutorial_text import TutorialSyntaxError
from ..core.text.tutorial_text import parse as parse_text
from . import execute
from .build_log import BuildLog, Executing, Rendering, shown

# The most lines a failed language's build shows of what Sphinx reported after its last warning.
FAILURE_LINES = 100
# What each language's log says first: sphinx-gallery's own summary would read as if nothing ran.
LOG_PREFACE = (
    "# Sphinx's and sphinx-gallery's output for one language. The build shows the warnings and errors below\n"
    "# at their authors' files and lines, and this whole log with VERBOSE=1. The tutorials ran before Sphinx\n"
    "# started, each once for every language (the build's [execute] lines; <builddir>/runs/); sphinx-gallery\n"
    "# renders those runs and executes nothing itself, so where it says that it executed no example\n"
    "# (plot_gallery was False, executed 0 out of 0 files) that is as it should be.\n"
)
# The tutorials' part of the last line of a build that executes nothing.
WITHOUT_OUTPUT = "none executed (pages without output)"
FROM_SHARDS = "none executed (the shards' runs)"


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


@dataclasses.dataclass(frozen=True)
class _Build:
    """What every build reads and checks before it executes or renders anything (_prepare)."""

    settings: Settings
    log: BuildLog
    site: project.Project
    selected: tuple[project.Tutorial, ...]  # those it may execute (TUTORIALS)
    present: Present  # the project and environment runs are compared with (the environment fingerprint)

    @property
    def without_output(self) -> bool:
        """conf.py asks for pages without output, as sphinx-gallery gives them (plot_gallery False)."""
        return "plot_gallery" in self.site.options and not self.site.flag("plot_gallery")


def _build_failed(errors: Sequence[str]) -> Failed:
    return Failed("[build] failed: " + "\n  ".join(errors))


# --- Execution ---

def _stamp(item: _Pending, outcome: execute.Outcome, present: Present, files: tuple[RunFile, ...], run_dir: Path,
           skip: Sequence[Path], machine: Callable[[], needs.Machine], log: BuildLog, sandboxed: bool) -> Stamp:
    """Stamp the run of ITEM that ended (OUTCOME), failed or not, SANDBOXED or not, sealing its FILES, with what
    it used (SKIP: the folders builds make and the venv, none of it the project's); MACHINE: the GPUs here,
    asked only for a run that did not finish, whose runner could not record them."""
    stamp = stamping.run_stamp(outcome.result, hardware=outcome.result.hardware or _hardware(machine()),
                               raised=outcome.raised, source=item.digest, script=item.tutorial.path.name,
                               environment=present.environment,
                               outputs=runs.outputs(run_dir, outcome.result), files=files, seconds=outcome.seconds,
                               peak_rss_bytes=outcome.peak_rss_bytes, needs_gpus=item.need.gpus,
                               origin=stamping.origin(ROOT), sandboxed=sandboxed, network=item.need.network)
    stamp = dataclasses.replace(stamp, used=used_by(run_dir, item.tutorial, skip))
    stamp.write(run_dir / runs.STAMP)
    for line in stamping.stamped_lines(item.tutorial.label, stamp, item.need):
        log.line(line)
    return stamp


def _hardware(machine: needs.Machine) -> Hardware:
    """Where a run the runner did not finish ran (the runner records it at its end): the GPUs torch sees here,
    torch's installed version; its CUDA version is not known without importing torch."""
    torch = installed_version("torch")
    return Hardware(device=machine.device or "CPU", gpus=machine.gpus, machine=platform.machine(),
                    torch=None if torch == "not installed" else torch, cuda=None)


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
    found = execute.sandbox_here(ROOT, (settings.tree.root, *reused))
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
                                       execute.RunOptions.of(site, tutorial, settings.output_limits),
                                       timeout=timeout, label=tutorial.label, env=env, tick=tick, confined=confined,
                                       network=item.need.network, scratch=settings.tree.work)
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
    problems = runs.problems(tree.runs, tutorial.key, digest, present)
    unsealed = [problem for problem in problems if problem.startswith(str(tree.runs))]  # core.runs.seal's: by path
    if log and unsealed:
        log.line(f"[execute] {tutorial.label}: its run is not the one its stamp sealed, not taken: " + "; ".join(unsealed))
    # A run recorded under other output limits shows more or less than they now ask for.
    return not problems and execute.recorded_limits(tree.run_dir(tutorial.key)) == output_limits


def _usable(settings: Settings, tree: BuildTree, item: _Pending, present: Present, log: BuildLog | None = None) -> bool:
    """Whether ITEM's run in TREE is current for it, under NEEDS=strict ran on the GPUs it declares, and
    under RETRY_FAILED did not fail (a failed run is kept like a successful one, its failure told again)."""
    run_dir = tree.run_dir(item.tutorial.key)
    stamp = stamping.stamp_of(run_dir)
    return (stamp is not None and _current(tree, item.tutorial, item.digest, present, settings.output_limits, log)
            and not (settings.enforce_needs and stamping.ran_on_fewer_gpus(run_dir, item.need.gpus))
            and not (settings.retry_failed and stamp.failed))


def run_is_current(settings: Settings, tutorial: project.Tutorial, present: Present) -> bool:
    """Whether TUTORIAL's recorded run stands for its current source, in this environment, under these limits."""
    return _current(settings.tree, tutorial, source_digest(tutorial.path, tutorial.label, tutorial.root), present,
                    settings.output_limits)


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
        item = _Pending(tutorial, source_digest(tutorial.path, tutorial.label, tutorial.root),
                        needs.of(site, tutorial))  # checked by refuse_unusable
        if not rerun and _usable(settings, settings.tree, item, present, log):
            continue
        if not rerun and reuse and _usable(settings, reuse, item, present, log):
            runs.restore(reuse.runs, settings.tree.runs, tutorial.key)
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
    if stamping.excused(site, tutorial, _stamp(item, outcome, present, files, run_dir, staging_skip(settings),
                                            machine, log, confined is not None)):
        log.line(f"[execute] {tutorial.label}: failed, as conf.py's expected_failing_examples expects")
    return stamping.unexpected_failure(run_dir, site, tutorial)


def _execute_pending(settings: Settings, site: project.Project, pending: Sequence[_Pending], present: Present,
                     log: BuildLog) -> tuple[list[str], list[str], list[str]]:
    """Run each of PENDING in turn: the keys of those that ran, the errors of those that failed, and those of
    the tutorials NEEDS=strict kept from running on this machine. abort_on_example_error stops at the first
    unexpected failure."""
    expected = shards.expected_seconds(settings.tree, [item.tutorial.key for item in pending])
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
                failed.append(report[0])
                if site.flag("abort_on_example_error"):
                    log.line("[execute] abort_on_example_error: the remaining tutorials are not executed")
                    break
    return ran, failed, unmet


def _kept_failures(tree: BuildTree, site: project.Project, tutorials: Sequence[project.Tutorial], log: BuildLog) -> list[str]:
    """Tell again each failure conf.py does not expect among the current runs of TUTORIALS (kept, not run
    again), as when it ran: their error lines."""
    errors = []
    for tutorial in tutorials:
        report = stamping.unexpected_failure(tree.run_dir(tutorial.key), site, tutorial)
        if report:
            log.line("\n".join(report))
            errors.append(report[0])
    return errors


def run_tutorials(settings: Settings, site: project.Project, tutorials: Sequence[project.Tutorial], present: Present,
                  log: BuildLog) -> Executed:
    """Run each tutorial whose run is not current, one at a time.

    A run not current here but current in REUSE's build folder is copied from there instead of run.
    A failed run is stamped and kept like a successful one (its page shows the traceback): it runs again
    when its source or the environment changes, or with RETRY_FAILED, and until then every build tells its
    failure again. One listed in conf.py's expected_failing_examples is no error; `abort_on_example_error`
    stops at the first unexpected one, a kept one before anything runs. Under NEEDS=strict, a tutorial
    this machine has too few GPUs for is not run, and the build stops once the others ran (Executed.stops).
    """
    reuse = _reuse(settings, log)
    pending, taken = _pending(settings, site, tutorials, present, reuse, log)
    waiting = {item.tutorial.key for item in pending}
    kept = _kept_failures(settings.tree, site, [t for t in tutorials if t.key not in waiting], log)
    abort = site.flag("abort_on_example_error")
    if kept and abort:
        log.line("[execute] abort_on_example_error: a tutorial's kept run failed; no tutorial is executed")
    ran, failed, unmet = _execute_pending(settings, site, [] if kept and abort else pending, present, log)
    log.line(f"[execute] executed {len(ran)} of {len(tutorials)} tutorial(s)"
             + (f"; took {taken} current run(s) from REUSE={reuse.root}" if reuse else "")
             + (f"; {len(kept)} failed in a run kept from before, not executed again (RETRY_FAILED=1 runs them)"
                if kept else ""))
    failed = kept + failed
    # Never run here (unmet), or abort_on_example_error: no page to render, the build stops (the runs are kept).
    return Executed(ran=tuple(ran), failed=tuple(failed + unmet), taken=taken,
                    current=len(tutorials) - len(pending) - taken, stops=bool(unmet) or (bool(failed) and abort))


def _tutorials_done(executed: Executed) -> str:
    return (f"{len(executed.ran)} executed, {executed.current} current"
            + (f", {executed.taken} taken from REUSE" if executed.taken else ""))


# --- Checks before anything runs ---

def refuse_unusable(site: project.Project) -> None:
    """Scripts sphinx-gallery cannot make a page of, or whose time limit or needs are wrong, refused before
    anything runs, naming the file and the fix.

    (sphinx-gallery itself would fail later, inside Sphinx, once per language, or name a generated file.)
    """
    from sphinx.errors import ExtensionError

    from ..sphinx_gallery_build import docstring_problem, extract_intro_and_title
    from ..sphinx_gallery_run import split_code_and_text_blocks

    for tutorial in site.tutorials:
        if tutorial.rel.stem == "index":
            raise SiteError(f"{tutorial.label}: a tutorial cannot be named index.py: its page would take the place "
                            "of the gallery's index; rename it")
        try:
            execute.timeout_for(tutorial.path, None, tutorial.label)
        except ValueError as error:
            raise SiteError(str(error)) from None
        needs.of(site, tutorial)
        declared_reads(tutorial.path, tutorial.label, tutorial.root)  # each `# tutorials-reads:` line names files that exist
        try:  # what sphinx-gallery refuses, as it refuses it: a script without a heading is no error
            _, blocks = split_code_and_text_blocks(str(tutorial.path))
            extract_intro_and_title(tutorial.path, blocks[0].content)
        except ExtensionError as error:
            raise SiteError(f"{tutorial.label}:1: {docstring_problem(error)}: a tutorial opens with a docstring whose "
                            "first paragraph, a heading or not, is its title (a helper module: match it with conf.py's "
                            "ignore_pattern)") from None
        try:  # what every language's script is made from: refused here, not once the tutorials ran
            parse_text(tutorial.label, tutorial.path.read_text(encoding="utf-8"))
        except TutorialSyntaxError as error:
            raise SiteError(str(error)) from None


# --- Rendering ---

def made_by_builds(settings: Settings) -> dict[Path, str]:
    """The folders builds make or change (resolved), with what they are: no gallery folder may overlap one."""
    return {settings.tree.root.resolve(): "the build folder, BUILDDIR, whose files builds delete and rewrite",
            settings.pages.resolve(): "the published tree, PAGES", Path(sys.prefix).resolve(): "the virtual environment"}


def staging_skip(settings: Settings) -> tuple[Path, ...]:
    """What a staged tree leaves out of the site besides the engine's files: what builds make (core.site_tree)."""
    return tuple(made_by_builds(settings))


def linked_languages(settings: Settings, site: project.Project) -> list[languages.Language]:
    """The languages a page links to: those of this build (LANGUAGES), and those an earlier build left in the
    build folder (`LANGUAGES=ko` after a build of every language keeps the others a click away)."""
    built = site.languages.built_in(settings.tree.html)
    return [lang for lang in site.languages.all if lang in settings.langs or lang in built]


def sphinx_args(settings: Settings, site: project.Project, lang: languages.Language, src: Path, noplot: bool,
                unrun: Sequence[str] = ()) -> list[str]:
    """The sphinx-build command line of one language; UNRUN: the keys of the tutorials whose pages show no output
    (a TUTORIALS build: the others, without a current run). The staged tree SRC holds the site's conf.py too:
    Sphinx evaluates it from there."""
    command = [
        "-b", "html", "--keep-going",
        "--no-color",  # the log is a file: no escape sequences (Sphinx colours where CI or FORCE_COLOR is set)
        "-d", str(settings.tree.doctrees(lang)),
        "-D", f"language={lang.code}",
        "-D", f"version={settings.version}", "-D", f"release={settings.version}",
        "-D", f"tutorials_built_languages={' '.join(lang.seg for lang in linked_languages(settings, site))}",
        "-D", f"tutorials_root={ROOT}",  # the sources' folder; the staged tree holds the translated scripts
        # A translated language's page and label catalogs, compiled where staging put them, one per page.
        "-D", f"locale_dirs={LOCALE}", "-D", "gettext_compact=0",
        "-D", f"tutorials_versions={json.dumps(settings.published, ensure_ascii=False, sort_keys=True)}",
        # sphinx-gallery executes nothing, ever: it renders what the runner recorded (sphinxext.gallery).
        "-D", "plot_gallery=0",
        "-D", f"tutorials_runs={'' if noplot else settings.tree.runs}",
        "-D", f"tutorials_unrun={json.dumps(sorted(unrun))}",
    ]
    if settings.strict:
        command += ["-W", "-D", "tutorials_strict=1"]
    return command + [str(src), str(settings.tree.html / lang.seg)]


def language_warnings(tree: BuildTree, site: project.Project, lang: languages.Language,
                      log: Path) -> list[sphinx_warnings.Warning]:
    """A language build's warnings and errors, located in the files their authors wrote."""
    galleries = {g.examples_dir: g.gallery_dir for g in site.galleries}
    code = None if lang == site.languages.source else lang.code
    locate = sphinx_warnings.locator(tree.src(lang), galleries, ROOT, code)
    return sphinx_warnings.rewrite(log.read_text(encoding="utf-8", errors="replace"), locate)


def write_root_index(htmldir: Path, langs: Sequence[languages.Language], source: languages.Language) -> None:
    """The site root's index.html, which sends a reader to a language's pages (core.site.site_pages)."""
    Path(htmldir).mkdir(parents=True, exist_ok=True)
    Path(htmldir, "index.html").write_text(chooser_page(langs, source), encoding="utf-8")


def _preload() -> None:
    """Import and warm up, once, what every language's build would otherwise do for itself.

    The builds are forked from this process, so each starts with Sphinx, its
    built-in extensions, the theme, sphinx-gallery with matplotlib, MyST, the
    search languages and the Python lexer's compiled rules already in memory.
    """
    import importlib

    import myst_parser.sphinx_ext.main  # noqa: F401
    import pygments.lexers.python
    import sphinx.application
    import sphinx.cmd.build  # noqa: F401
    import sphinx.search.ja  # noqa: F401
    import sphinx.search.zh  # noqa: F401
    import sphinx_rtd_theme  # noqa: F401

    from .. import sphinx_gallery_build

    sphinx_gallery_build.preload()
    for name in sphinx.application.builtin_extensions:
        importlib.import_module(name)
    pygments.lexers.python.PythonLexer()  # compiles its token rules on the class, for every fork


class _Copied(io.TextIOBase):
    """Standard error for Sphinx: written into the log, in order with the rest, and copied: Sphinx reports its
    warnings and, when it fails, what went wrong there."""

    def __init__(self, log: io.TextIOBase) -> None:
        self.log, self.copy = log, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.log.write(text)

    def flush(self) -> None:
        self.log.flush()

    # Sphinx writes what this encoding can take. A property, as in io (whose stubs call it an attribute).
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.log.encoding

    def fileno(self) -> int:
        return 2  # the log too (dup2 below)


# What one language's sphinx-build gives: its exit status, its seconds, and what it reported after its last warning.
_SphinxResult = tuple[int, float, list[str]]


class _Forked:
    """One language's sphinx-build in a fresh fork of this process (Sphinx keeps global state per process), which
    is no daemon: an extension or conf.py may start processes of its own, as under a plain sphinx-build (a pool's
    daemonic worker may not). Its result comes back through a pipe."""

    def __init__(self, command: list[str], log: Path) -> None:
        context = multiprocessing.get_context("fork")
        self._results, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_send_sphinx, args=(sending, command, log), daemon=False)
        self._process.start()
        sending.close()

    def ready(self, timeout: float = 0) -> bool:
        """Whether its result is there (or its process is gone), waiting at most TIMEOUT seconds."""
        return self._results.poll(timeout) or not self._process.is_alive()

    def get(self) -> _SphinxResult:
        """Its result; a process that died without one failed."""
        try:
            result: _SphinxResult = self._results.recv()
        except EOFError:
            result = (1, 0.0, [f"its process ended without a result (exit status {self._process.exitcode})"])
        self._process.join()
        return result


def _send_sphinx(sending: Connection, command: list[str], log: Path) -> None:
    sending.send(_sphinx(command, log))
    sending.close()
# A language to render: its sphinx-build command line, and whether its last build still stands.
_Todo = tuple[languages.Language, list[str], UpToDate]


def _sphinx(command: list[str], log: Path) -> _SphinxResult:
    """One language's sphinx-build, in a process forked for it alone; its output goes to `log`.
    Returns its exit status, how long it took and, when it failed, the end of what it reported after its
    last warning (an exception, for example; the warnings are shown at their authors' lines)."""
    from sphinx.cmd.build import build_main

    started = time.perf_counter()
    with open(log, "w") as out:
        out.write(LOG_PREFACE)
        out.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        stdout = open(1, "w", closefd=False)  # noqa: SIM115 (the process ends with the build)
        stderr = _Copied(stdout)
        sys.stdout, sys.stderr = stdout, cast(TextIO, stderr)  # a stream as far as Sphinx writes to it
        os.chdir(command[-2])  # the staged tree, which stands for the site root: as `sphinx-build . _build` there
        # Its progress lines too: they erase and redraw the line where CI or FORCE_COLOR is set, --no-color
        # or not (sphinx.util.display.status_iterator).
        os.environ["NO_COLOR"] = "1"
        status = build_main(command)
        report = sphinx_warnings.after_warnings(stderr.copy.getvalue(), FAILURE_LINES) if status else []
        return status, time.perf_counter() - started, report


def _finished(settings: Settings, lang: languages.Language, up_to_date: UpToDate, log_file: Path,
              result: _SphinxResult, warned: bool, rendering: Rendering) -> bool:
    """Say how LANG's build went (RESULT; WARNED: it reported warnings) and whether it succeeded; one that
    succeeded without a warning is remembered as current."""
    status, seconds, report = result
    if status or warned:
        # Sphinx re-reads only changed pages: a build of the same sources would say nothing of
        # these warnings. Without its environment, the next one reads every page and tells them.
        (settings.tree.doctrees(lang) / "environment.pickle").unlink(missing_ok=True)
    if status:
        why = ("; with STRICT=1 its warnings (below) are errors" if settings.strict and not report
               else "".join(f"\n  {line}" for line in report))
        rendering.done(lang.seg, f"[build] {lang.seg}: sphinx-build failed (exit status {status}) after "
                                 f"{seconds:.1f} s (log: {shown(log_file)}){why}")
        return False
    if not warned:
        up_to_date.remember()
    rendering.done(lang.seg, f"[build] {lang.seg}: done in {seconds:.1f} s")
    return True


def _render(settings: Settings, site: project.Project, todo: Sequence[_Todo], noplot: bool, log: BuildLog) -> list[str]:
    """Build each language of TODO, as many at once as settings.jobs; returns the URL segments of those that
    failed. Each language's lines come as it finishes, then every warning once, at the author's file and
    line (a translation's: at its catalog entry)."""
    tree = settings.tree
    _preload()
    tree.logs.mkdir(parents=True, exist_ok=True)
    failed, found = [], {}
    jobs = min(len(todo), settings.jobs)
    with log.rendering([lang.seg for lang, _, _ in todo], jobs) as rendering:
        waiting, builds = list(todo), dict[languages.Language, tuple[UpToDate, Path, _Forked]]()
        for lang, _, _ in todo:
            rendering.start(lang.seg, tree.logs / f"{lang.seg}.log", noplot)
        while waiting or builds:
            while waiting and len(builds) < jobs:  # as many at once as there are CPUs
                lang, command, up_to_date = waiting.pop(0)
                builds[lang] = (up_to_date, tree.logs / f"{lang.seg}.log", _Forked(command, tree.logs / f"{lang.seg}.log"))
            finished = [lang for lang, (_, _, build) in builds.items() if build.ready()]
            if not finished:
                next(iter(builds.values()))[2].ready(0.1)
                rendering.tick()
            for lang in finished:
                up_to_date, log_file, build = builds.pop(lang)
                result = build.get()
                found[lang.seg] = language_warnings(tree, site, lang, log_file)
                if not _finished(settings, lang, up_to_date, log_file, result, bool(found[lang.seg]), rendering):
                    failed.append(lang.seg)
                log.sphinx_log(lang.seg, log_file)
    for warning in sphinx_warnings.merge({lang.seg: found[lang.seg] for lang, _, _ in todo if lang.seg in found}):
        log.line(str(warning))
    return [lang.seg for lang, _, _ in todo if lang.seg in failed]


def _to_render(build: _Build, noplot: bool, unrun: Sequence[str]) -> tuple[list[_Todo], list[str], list[str]]:
    """Stage each selected language: those to render, those whose last build still stands, and those that fail
    before Sphinx (STRICT=1 and a passage that would be shown in English)."""
    settings, tree, log = build.settings, build.settings.tree, build.log
    todo: list[_Todo] = []
    current, failed = [], []
    for lang in settings.langs:
        src, reports = stage(tree, build.site, lang, staging_skip(settings))
        for problem in (p for report in reports for p in report.problems):
            log.line(f"warning: {problem}")
        english = sum(report.english for report in reports)
        if settings.strict and english:
            log.line(f"[build] {lang.seg}: STRICT=1 and {english} tutorial passage(s) would be shown in English")
            failed.append(lang.seg)
            continue
        command = sphinx_args(settings, build.site, lang, src, noplot, unrun)
        up_to_date = UpToDate.of(tree, build.site, lang, command, build.present.environment, staging_skip(settings))
        if up_to_date:
            log.line(f"[build] {lang.seg}: up to date")
            current.append(lang.seg)
            continue
        up_to_date.forget()
        todo.append((lang, command, up_to_date))
    return todo, current, failed


def _render_site(build: _Build, failed: Sequence[str], *, noplot: bool, what: str, unrun: Sequence[str] = ()) -> None:
    """Render the selected languages, then the site root's index and versions.json; FAILED (the tutorials'
    errors) and the languages that failed fail the build once those are written. NOPLOT: the pages show no
    output; UNRUN: the tutorials whose pages show none (sphinx_args); WHAT: the tutorials' part of the last line.
    """
    settings, tree, log = build.settings, build.settings.tree, build.log
    todo, current, unstaged = _to_render(build, noplot, unrun)
    # From the first page written until this build is done, nothing in its folder claims a site (build.json is
    # check's and publish's input): one that fails (STRICT=1 and a language that failed included) leaves none.
    Path(tree.html, BUILD_RECORD).unlink(missing_ok=True)
    failed = [*failed, *unstaged]
    if todo:
        failed += _render(settings, build.site, todo, noplot, log)
    write_root_index(tree.html, settings.langs, build.site.languages.source)
    # Pages ask the site root for versions.json; served from _build/html, this build is that root.
    local = versions.as_built(settings.published, settings.version)
    Path(tree.html, "versions.json").write_text(json.dumps(local, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    if failed:  # the tutorials' errors again, at the end, where they are seen; a language: its report above
        raise _build_failed(failed)
    write_build_info(tree.html, settings.version, settings.langs, executed=not noplot, partial=" ".join(settings.tutorials))
    rendered = ", ".join(lang.seg for lang, _, _ in todo) or "none"
    log.line(f"[build] done in {log.elapsed():.1f} s: rendered {rendered}"
             + (f" (up to date: {', '.join(current)})" if current else "") + f"; tutorials: {what}")
    where = f"served at {settings.served_at}" if settings.served_at else f"open {shown(tree.html / 'index.html')}"
    log.line(f"[build] {where}; Sphinx's logs are in {shown(tree.logs)}/")


# --- The commands ---

def _prepare(settings: Settings, executes_nothing: bool) -> _Build:
    """Read the project and refuse what would fail later, before anything runs; EXECUTES_NOTHING: the build
    renders from the runs there are (TUTORIALS is refused)."""
    log = BuildLog.here(settings.verbose, settings.progress_interval)
    site = project.current()
    site.refuse_overlaps(made_by_builds(settings))
    catalogs.check_layout(site)
    for merged in site.merged_headers:
        log.line(f"warning: {merged}")
    for folder in site.ignored_folders:
        log.line(f"warning: {folder}/: holds scripts but is no gallery section (a section is a gallery's "
                 "subfolder with a GALLERY_HEADER.rst or README.txt); its scripts get no page")
    selected = _selection(settings, site, executes_nothing, log)
    refuse_unusable(site)
    for lang in settings.langs:
        translate.check_labels(lang)
    return _Build(settings, log, site, selected, present(site.root))


def _expectations(build: _Build, failed: Sequence[str]) -> list[str]:
    """The failures that fail the build once its pages are written: FAILED, and the tutorials expected to fail
    that passed; none under only_warn_on_example_error, which shows them as a warning."""
    errors = list(failed)
    for error in stamping.expectation_errors(build.settings.tree, build.site):
        build.log.line(error)
        errors.append(error)
    if errors and build.site.flag("only_warn_on_example_error"):
        build.log.line("[build] WARNING: only_warn_on_example_error: building the pages of these failed tutorials "
                       "with their errors (make check will refuse them):\n  " + "\n  ".join(errors))
        return []
    return errors


def _execute_shard(build: _Build, shard: shards.Shard) -> None:
    """SHARD=i/N: execute that shard's tutorials and record them for `make assemble`, which renders the pages."""
    tutorials = shards.selection(shard)
    executed = run_tutorials(build.settings, build.site, tutorials, build.present, build.log)
    # Its tutorials' runs, executed or taken from REUSE, also when it stops; durations count the executed ones only.
    ShardRecord(shard=str(shard), tutorials=tuple(t.key for t in tutorials),
                executed=executed.ran).write(build.settings.tree.shard_record)
    if executed.failed:
        raise _build_failed(executed.failed)
    build.log.line(f"[build] shard {shard}: done in {build.log.elapsed():.1f} s ({_tutorials_done(executed)}); "
                   "`make assemble` renders the pages")


def _render_without_output(build: _Build) -> None:
    _render_site(build, [], noplot=True, what=WITHOUT_OUTPUT)


def html(settings: Settings) -> None:
    """`make html`: execute what is not current, then build the selected languages.

    With SHARD ("i/N"), only that shard's tutorials are executed, and nothing is rendered:
    `make assemble` renders the pages from the shards' runs. Where conf.py sets plot_gallery to False,
    nothing is executed: the pages show no output, as with `make html-noplot`.
    """
    build = _prepare(settings, executes_nothing=False)
    if build.without_output:
        _render_without_output(build)
    elif settings.shard:
        _execute_shard(build, settings.shard)
    else:
        executed = run_tutorials(settings, build.site, [t for t in build.selected if t.executed], build.present,
                                 build.log)
        if executed.stops:
            raise _build_failed(executed.failed)
        failed = _expectations(build, executed.failed)
        unrun = _unrun(build) if settings.tutorials else []
        _render_site(build, failed, noplot=False, what=_tutorials_done(executed), unrun=unrun)


def html_noplot(settings: Settings) -> None:
    """`make html-noplot`: build the selected languages, executing nothing: the pages show no output."""
    _render_without_output(_prepare(settings, executes_nothing=True))


def _render_assembled(settings: Settings) -> None:
    """Build the selected languages from the runs the shards left in this build folder, executing nothing:
    a tutorial without a current run is an error."""
    build = _prepare(settings, executes_nothing=True)
    if build.without_output:
        _render_without_output(build)
        return
    missing = [f"{t.key}: " + "; ".join(problems) for t in build.selected if t.executed
               for problems in [runs.problems(settings.tree.runs, t.key, source_digest(t.path, t.label, t.root),
                                                         build.present)]
               if problems]
    if missing:
        raise Failed("[assemble] refusing to execute anything here; no current shard output for:\n  "
                     + "\n  ".join(missing))
    failed = _kept_failures(settings.tree, build.site, [t for t in build.selected if t.executed], build.log)
    _render_site(build, _expectations(build, failed), noplot=False, what=FROM_SHARDS)


def assemble(settings: Settings, shard_builddirs: Sequence[Path]) -> None:
    """`make assemble`: render the site once from the shards' runs, executing nothing, and validate it."""
    if settings.shard:  # it renders what every shard ran
        raise UsageError("SHARD: `make assemble` renders the runs of every shard; leave SHARD out of it")
    merged = shards.merge(shard_builddirs, settings.tree)
    print(f"[assemble] {len(merged)} executed tutorial run(s) from {len(shard_builddirs)} shard(s)", flush=True)
    _render_assembled(settings)
    htmldir = settings.tree.html
    problems = checks.check_stamps(htmldir, settings.langs) + checks.check_links(htmldir)
    if problems:
        print("\n".join(problems))
        raise Failed(f"[assemble] the assembled site does not validate ({len(problems)} problem(s))")
    print(f"[assemble] {htmldir}: every tutorial executed, every language present, every link whole")


# --- TUTORIALS: a build that executes only the tutorials named (the author's fast loop) ---

def _selection(settings: Settings, site: project.Project, executes_nothing: bool,
               log: BuildLog) -> tuple[project.Tutorial, ...]:
    """The tutorials this build may execute: those TUTORIALS names (checked before anything runs), else all."""
    if not settings.tutorials:
        return site.tutorials
    if executes_nothing or settings.shard:
        raise UsageError("TUTORIALS: only `make html` executes a selection of tutorials; "
                         "leave TUTORIALS out of html-noplot, assemble and SHARD builds")
    selected = site.select(settings.tutorials)
    log.line(f"[build] TUTORIALS: selected {', '.join(t.label for t in selected)} (the build is partial: "
             "`make check` and `make publish` refuse it)")
    return selected


def _unrun(build: _Build) -> list[str]:
    """The keys of the tutorials a TUTORIALS build shows without output: not selected and without a current
    run (one that is current is shown, as a whole build would show it)."""
    unrun = [t for t in build.site.tutorials if t.executed and t not in build.selected
             and not run_is_current(build.settings, t, build.present)]
    if unrun:
        build.log.line(f"[build] TUTORIALS: {len(unrun)} other tutorial(s) without a current run, shown without output")
    return [t.key for t in unrun]


def write_build_info(htmldir: Path, name: str, langs: Sequence[languages.Language], executed: bool,
                     partial: str = "") -> None:
    """What the publish step needs to know about this build: its version entry; `partial`: the TUTORIALS
    it executed alone (`make check` and `make publish` refuse such a build)."""
    BuildInfo(name=name, label=name, release=versions.is_release(name), torch=installed_version("torch"),
              languages=tuple(lang.seg for lang in langs), built=stamping.now(),
              path=f"{name}/", executed=executed, partial=partial).write(Path(htmldir, BUILD_RECORD))

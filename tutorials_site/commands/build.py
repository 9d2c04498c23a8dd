"""`make html`, `make html-noplot`, `make assemble`: execute each tutorial once, then render every language.

1. Execution: each tutorial whose run is not current (core.runs) runs once, as
   `python tutorial.py` would, in a process of its own (commands.execute), with
   a time limit; its run serves every language.
2. Rendering: each language gets its own Sphinx source tree under
   <builddir>/src/<seg>/ (core.staging) and its own output under
   <builddir>/html/<seg>/; sphinx-gallery renders the pages from the runs
   (sphinxext.gallery) and executes nothing itself.
"""

import dataclasses
import hashlib
import io
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from ..core import catalogs, checks, isolation, languages, needs, project, runs, shards, sphinx_warnings, translate, versions
from ..core.errors import Failed, SiteError, UsageError
from ..core.fingerprint import declared_reads, environment_fingerprint, installed_version, source_digest
from ..core.layout import PAGES, ROOT
from ..core.records import BuildInfo, RecordError, RunRecord, ShardRecord, Stamp
from ..core.settings import Settings
from ..core.site_pages import chooser_page
from ..core.staging import stage, working_folder
from . import execute
from .build_log import BuildLog, shown

# Besides the staged sources, the runs, conf.py and the environment fingerprint, what a build reads from the
# project root.
CONF_INPUTS = ("_templates", "_static")
PACKAGE = Path(__file__).parents[1]
MB = 2**20
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


@dataclasses.dataclass(frozen=True)
class Executed:
    """What the execution stage did with the tutorials it was given."""

    ran: tuple[str, ...]  # the keys of those it executed
    failed: tuple[str, ...]  # the errors of those that failed, one line each
    taken: int  # how many got a copy of their current run in REUSE
    current: int  # how many had a current run already


def _stamp(tutorial, outcome, environment, digest, run_dir, need, log):
    result = outcome.result
    stamp = Stamp(source=digest, environment=environment, outputs=runs.outputs(run_dir, result),
                  seconds=outcome.seconds, failed=not outcome.ok, peak_rss_mb=round(outcome.peak_rss_bytes / MB, 1),
                  gpu_peak_mb=tuple(round(b / MB, 1) for b in result.gpu_peak_bytes),
                  hardware=result.hardware, needs_gpus=need.gpus,
                  **runs.origin(ROOT))  # a stamped run finished: it has its hardware
    stamp.write(run_dir / runs.STAMP)
    log.line(f"[execute] {tutorial.label}: {stamp.seconds:.1f} s, peak memory {stamp.peak_rss_mb:.0f} MB"
             + "".join(f", GPU {i}: {mb:.0f} MB" for i, mb in enumerate(stamp.gpu_peak_mb)))
    if stamp.hardware.gpus < need.gpus:  # NEEDS=lenient (the default): it ran anyway, and its page says so
        log.line(f"[execute] {tutorial.label}: note: ran on {needs.describe_gpus(stamp.hardware.gpus)}, written for "
                 f"{needs.describe_gpus(need.gpus)} ({need.origin})")


def _ran_on_less(run_dir, need):
    """Whether the current run in RUN_DIR saw fewer GPUs than NEED (under NEEDS=strict it runs again)."""
    try:
        stamp = Stamp.read(run_dir / runs.STAMP)
    except RecordError:
        return True  # of another format: not current anyway
    return stamp is None or stamp.hardware.gpus < need.gpus


def _refuse_changes(tree, project, tutorial, build_before, project_before):
    """Stop the build if TUTORIAL's run changed what is not its own: the build folder outside its run and the
    working folders (another tutorial's record, a page: discarded, never rendered), or the project and
    site-packages (which the build cannot restore: the user is told what changed)."""
    found = isolation.differences(build_before, _build_state(tree, tutorial))
    if found:
        runs.discard(tree, [t.key for t in project.tutorials], [path for _, path in found])
        raise SiteError(f"{tutorial.label}:1: its run changed the build folder outside its own run: "
                        f"{isolation.describe(found, tree.root)}; a tutorial writes only into its working folder "
                        "(its current directory) or a temporary folder; the build stopped and discarded what it changed "
                        "(the next build runs or renders that again)")
    changed = project_before.changes()
    if changed:
        raise SiteError(f"{tutorial.label}:1: its run changed files outside its working folder: {changed}; a "
                        "tutorial writes only into its working folder (its current directory) or a temporary folder: "
                        "restore or remove these files (git status lists the project's), fix the tutorial and build "
                        "again (or, if you changed them yourself meanwhile, just build again)")


def _build_state(tree, tutorial):
    # The working folders are shared by the tutorials of a folder; the run's own folder is its to write.
    return isolation.tree_state(tree.root, (tree.workdir(""), tree.run_dir(tutorial.key)))


def _run_isolated(settings, project, tutorial, run_dir, timeout, tick):
    """Run one tutorial with the environment core.isolation allows it, then check what it did.

    A run whose output shows the value of a secret withheld from it fails, its record redacted; one that
    changed what is not its own stops the build, unstamped: what follows would build on what it changed.
    """
    env = isolation.tutorial_environment(os.environ, isolation.allowed(project.conf))
    workdir = working_folder(settings.tree, tutorial)
    run_dir.mkdir(parents=True, exist_ok=True)  # its parents are no change of the run's
    project_before = isolation.Snapshot.take(project.root, (settings.tree.root, settings.pages))
    build_before = _build_state(settings.tree, tutorial)
    outcome = execute.run_tutorial(tutorial.path, run_dir, workdir,
                                   execute.RunOptions.of(project, tutorial, settings.output_limits),
                                   timeout=timeout, label=tutorial.label, env=env, tick=tick)
    _refuse_changes(settings.tree, project, tutorial, build_before, project_before)
    secrets = isolation.withheld(os.environ, env)
    leaks = isolation.leaks(outcome.result, secrets)
    if not leaks:
        return outcome
    isolation.redact(run_dir, secrets)
    names = ", ".join(dict.fromkeys(name for _, name in leaks))
    error = (f"{tutorial.label}:{leaks[0][0]}: ERROR: its output shows the value of {names}, withheld from tutorials "
             "(its output is redacted, the run not stamped): print no secret; a variable that is none and that "
             f"tutorials need goes in conf.py's {isolation.SETTING}")
    return dataclasses.replace(outcome, ok=False, raised=False, error=error, result=RunRecord.read(run_dir / runs.RESULT))


def _current(run_dir, digest, environment, output_limits):
    """Whether the run in RUN_DIR stands for source DIGEST in ENVIRONMENT and shows what OUTPUT_LIMITS ask for."""
    # A run recorded under other output limits shows more or less than they now ask for.
    return execute.recorded_limits(run_dir) == output_limits and not runs.problems(run_dir, digest, environment)


def _usable(settings, run_dir, digest, environment, need):
    """Whether the run in RUN_DIR is current and, under NEEDS=strict, ran on the GPUs NEED declares."""
    return (_current(run_dir, digest, environment, settings.output_limits)
            and not (settings.enforce_needs and _ran_on_less(run_dir, need)))


def run_is_current(settings: Settings, tutorial: project.Tutorial, environment: str) -> bool:
    """Whether TUTORIAL's recorded run stands for its current source, in this environment, under these limits."""
    return _current(settings.tree.run_dir(tutorial.key), source_digest(tutorial.path), environment,
                    settings.output_limits)


def run_tutorials(settings, project, tutorials, environment, log: BuildLog) -> Executed:
    """Run each tutorial whose run is not current, one at a time.

    A run not current here but current in REUSE's build folder is copied from there instead of run.
    A failure listed in conf.py's expected_failing_examples is stamped like a success (its page shows
    the traceback); `abort_on_example_error` stops at the first unexpected one. Under NEEDS=strict, a
    tutorial this machine has too few GPUs for is not run, and the build stops once the others ran.
    """
    rerun = project.flag("run_stale_examples")
    reuse = settings.reuse
    if reuse and not reuse.root.exists():
        log.line(f"[execute] REUSE={reuse.root}: no such folder, no runs to take from it")
        reuse = None
    todo, taken = [], 0  # what is run is known before anything runs: the live line counts it
    for tutorial in tutorials:
        run_dir = settings.tree.run_dir(tutorial.key)
        digest = source_digest(tutorial.path, tutorial.label)
        need = needs.of(project, tutorial)  # checked by refuse_unusable
        if not rerun and _usable(settings, run_dir, digest, environment, need):
            continue
        kept = reuse.run_dir(tutorial.key) if reuse else None
        if not rerun and kept and _usable(settings, kept, digest, environment, need):
            runs.restore(kept, run_dir)
            taken += 1
            continue
        todo.append((tutorial, digest, need))
    expected = shards.expected_seconds(settings.tree, [tutorial.key for tutorial, _, _ in todo])
    failed, unmet, ran = [], [], []
    machine = None  # the GPUs tutorials see here, asked once, when first needed
    with log.executing([expected[tutorial.key] for tutorial, _, _ in todo]) as progress:
        for tutorial, digest, need in todo:
            if settings.enforce_needs and need.gpus:
                if machine is None:
                    machine = execute.machine(isolation.tutorial_environment(os.environ,
                                                                             isolation.allowed(project.conf)))
                error = need.unmet(tutorial.label, machine)
                if error:
                    log.line(error)
                    unmet.append(error)
                    progress.done()
                    continue
            timeout = execute.timeout_for(tutorial.path, settings.timeout, tutorial.label)  # checked by refuse_unusable
            progress.start(tutorial.label, timeout)
            run_dir = settings.tree.run_dir(tutorial.key)
            outcome = _run_isolated(settings, project, tutorial, run_dir, timeout, progress.tick)
            progress.done()
            ran.append(tutorial.key)
            if outcome.ok or (outcome.raised and project.expected_to_fail(tutorial)):
                _stamp(tutorial, outcome, environment, digest, run_dir, need, log)
                if not outcome.ok:
                    log.line(f"[execute] {tutorial.label}: failed, as conf.py's expected_failing_examples expects")
                continue
            log.line(outcome.error)
            failed.append(outcome.error)
            if project.flag("abort_on_example_error"):
                log.line("[execute] abort_on_example_error: the remaining tutorials are not executed")
                break
    log.line(f"[execute] executed {len(ran)} of {len(tutorials)} tutorial(s)"
             + (f"; took {taken} current run(s) from REUSE={reuse.root}" if reuse else ""))
    if unmet:  # never run here, so no page to render: the build stops (the others' runs are kept)
        raise Failed("[build] failed: " + "\n  ".join(failed + unmet))
    return Executed(ran=tuple(ran), failed=tuple(failed), taken=taken, current=len(tutorials) - len(todo) - taken)


def _has_title(text):
    """Whether a text block holds a reST section title (a line underlined, or over- and underlined)."""
    from docutils import nodes
    from docutils.core import publish_doctree

    quiet = {"report_level": 5, "halt_level": 5, "warning_stream": False, "file_insertion_enabled": False}
    return publish_doctree(text, settings_overrides=quiet).next_node(nodes.title) is not None


def refuse_unusable(project):
    """Scripts sphinx-gallery cannot make a page of, or whose time limit or needs are wrong, refused before
    anything runs, naming the file and the fix.

    (sphinx-gallery itself would fail later, inside Sphinx, once per language, or name a generated file.)
    """
    from sphinx.errors import ExtensionError

    from ..sphinx_gallery_api import docstring_problem, extract_intro_and_title, split_code_and_text_blocks

    for tutorial in project.tutorials:
        if tutorial.rel.stem == "index":
            raise SiteError(f"{tutorial.label}: a tutorial cannot be named index.py: its page would take the place "
                            "of the gallery's index; rename it")
        try:
            execute.timeout_for(tutorial.path, None, tutorial.label)
        except ValueError as error:
            raise SiteError(str(error)) from None
        needs.of(project, tutorial)
        declared_reads(tutorial.path, tutorial.label)  # each `# tutorials-reads:` line names files that exist
        try:
            _, blocks = split_code_and_text_blocks(str(tutorial.path))
            extract_intro_and_title(tutorial.path, blocks[0].content)
            # sphinx-gallery takes the first paragraph for the gallery; the page's title is its first heading.
            if not any(_has_title(block.content) for block in blocks if block.type == "text"):
                raise ExtensionError("no title")
        except ExtensionError as error:
            raise SiteError(f"{tutorial.label}:1: {docstring_problem(error)}: a tutorial opens with a docstring whose "
                            "first paragraph is its reST title (a helper module: match it with conf.py's ignore_pattern)"
                            ) from None


def expectation_errors(tree, project):
    """Tutorials listed as expected to fail whose current run passed (sphinx-gallery fails those too)."""
    errors = []
    for tutorial in project.tutorials:
        try:
            stamp = Stamp.read(tree.run_dir(tutorial.key) / runs.STAMP)
        except RecordError:
            continue  # not a current run: never rendered as one
        if tutorial.executed and stamp and project.expected_to_fail(tutorial) and not stamp.failed:
            errors.append(f"{tutorial.label}:1: ERROR: listed in conf.py's expected_failing_examples, but ran "
                          "without error; remove it from the list")
    return errors


def sphinx_args(settings, lang, src, noplot, unrun: Sequence[str] = ()):
    """The sphinx-build command line of one language; UNRUN: the keys of the tutorials whose pages show no
    output (a TUTORIALS build: the others, without a current run)."""
    command = [
        "-b", "html", "--keep-going",
        "--no-color",  # the log is a file: no escape sequences (Sphinx colours where CI or FORCE_COLOR is set)
        "-c", str(ROOT),
        "-d", str(settings.tree.doctrees(lang)),
        "-D", f"language={lang.code}",
        "-D", f"version={settings.version}", "-D", f"release={settings.version}",
        "-D", f"tutorials_languages={' '.join(lang.seg for lang in settings.langs)}",
        "-D", f"tutorials_versions={json.dumps(settings.published, ensure_ascii=False, sort_keys=True)}",
        # sphinx-gallery executes nothing, ever: it renders what the runner recorded (sphinxext.gallery).
        "-D", "plot_gallery=0",
        "-D", f"tutorials_runs={'' if noplot else settings.tree.runs}",
        "-D", f"tutorials_unrun={json.dumps(sorted(unrun))}",
    ]
    if settings.strict:
        command += ["-W", "-D", "tutorials_strict=1"]
    return command + [str(src), str(settings.tree.html / lang.seg)]


def _files(path):
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.exists() else []


def inputs_digest(tree, project, command, lang, environment):
    """A digest of everything a language's build reads: when it is unchanged, so is the output."""
    digest = hashlib.sha256("\0".join(command).encode())
    digest.update(environment.encode())
    galleries = [g.examples_dir for g in project.galleries]
    inputs = [ROOT / name for name in (*PAGES, *galleries, *CONF_INPUTS, f"locales/{lang.code}")]
    inputs += [tree.run_dir(t.key) / name for t in project.tutorials for name in (runs.RESULT, runs.STAMP)]
    inputs.append(PACKAGE)  # the extensions and what they import: a change there changes the pages
    for name in inputs:
        for path in _files(name):
            if path.is_relative_to(PACKAGE) and path.suffix != ".py":
                continue  # bytecode
            digest.update(f"{path}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def outputs_snapshot(outdir):
    return sorted(
        f"{p.relative_to(outdir)} {p.stat().st_size} {p.stat().st_mtime_ns}" for p in _files(outdir)
    )


class UpToDate:
    """Skips sphinx-build when neither the inputs nor the outputs changed since the last success.

    A no-op sphinx-build still costs about a second per language (sphinx-gallery
    imports matplotlib while reading its configuration); this costs a few stats.
    """

    def __init__(self, tree, project, lang, command, environment):
        self.record = tree.doctrees(lang) / "inputs.sha256"
        self.outdir = Path(command[-1])
        self.digest = inputs_digest(tree, project, command, lang, environment)

    def __bool__(self):
        try:
            recorded = self.record.read_text().splitlines()
        except OSError:
            return False
        return recorded == [self.digest, *outputs_snapshot(self.outdir)]

    def forget(self):
        self.record.unlink(missing_ok=True)

    def remember(self):
        self.record.write_text("\n".join([self.digest, *outputs_snapshot(self.outdir)]))


def language_warnings(tree, site, lang, log):
    """A language build's warnings and errors, located in the files their authors wrote."""
    galleries = {g.examples_dir: g.gallery_dir for g in site.galleries}
    code = None if lang is languages.SOURCE else lang.code
    locate = sphinx_warnings.locator(tree.src(lang), galleries, ROOT, code)
    return sphinx_warnings.rewrite(log.read_text(encoding="utf-8", errors="replace"), locate)


def write_root_index(htmldir, langs):
    Path(htmldir).mkdir(parents=True, exist_ok=True)
    Path(htmldir, "index.html").write_text(chooser_page(langs), encoding="utf-8")


def _preload():
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

    from .. import sphinx_gallery_api

    sphinx_gallery_api.preload()
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

    @property
    def encoding(self) -> str:  # Sphinx writes what this encoding can take
        return self.log.encoding

    def fileno(self) -> int:
        return 2  # the log too (dup2 below)


def _sphinx(command, log):
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
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 (the process ends with the build)
        sys.stderr = _Copied(sys.stdout)
        os.chdir(ROOT)
        # Its progress lines too: they erase and redraw the line where CI or FORCE_COLOR is set, --no-color
        # or not (sphinx.util.display.status_iterator).
        os.environ["NO_COLOR"] = "1"
        status = build_main(command)
        report = sphinx_warnings.after_warnings(sys.stderr.copy.getvalue(), FAILURE_LINES) if status else []
        return status, time.perf_counter() - started, report


def _render(settings, site, todo, noplot, log):
    """Build each language of TODO ((lang, command, UpToDate) each), as many at once as settings.jobs; returns
    the URL segments of those that failed. Each language's lines come as it finishes, then every warning
    once, at the author's file and line (a translation's: at its catalog entry)."""
    tree = settings.tree
    _preload()
    tree.logs.mkdir(parents=True, exist_ok=True)
    failed, found = [], {}
    # A fresh fork per language (maxtasksperchild=1): Sphinx keeps global state per process.
    context = multiprocessing.get_context("fork")
    jobs = min(len(todo), settings.jobs)
    with (context.Pool(jobs, maxtasksperchild=1) as pool,
          log.rendering([lang.seg for lang, _, _ in todo], jobs) as rendering):
        builds = {}
        for lang, command, up_to_date in todo:
            log_file = tree.logs / f"{lang.seg}.log"
            rendering.start(lang.seg, log_file, noplot)
            builds[lang] = (up_to_date, log_file, pool.apply_async(_sphinx, (command, log_file)))
        while builds:
            finished = [lang for lang, (_, _, build) in builds.items() if build.ready()]
            if not finished:
                next(iter(builds.values()))[2].wait(0.1)
                rendering.tick()
            for lang in finished:
                up_to_date, log_file, build = builds.pop(lang)
                status, seconds, report = build.get()
                found[lang.seg] = language_warnings(tree, site, lang, log_file)
                if status or found[lang.seg]:
                    # Sphinx re-reads only changed pages: a build of the same sources would say nothing of
                    # these warnings. Without its environment, the next one reads every page and tells them.
                    (tree.doctrees(lang) / "environment.pickle").unlink(missing_ok=True)
                if status:
                    failed.append(lang.seg)
                    why = ("; with STRICT=1 its warnings (below) are errors" if settings.strict and not report
                           else "".join(f"\n  {line}" for line in report))
                    rendering.done(lang.seg, f"[build] {lang.seg}: sphinx-build failed (exit status {status}) after "
                                             f"{seconds:.1f} s (log: {shown(log_file)}){why}")
                else:
                    if not found[lang.seg]:
                        up_to_date.remember()
                    rendering.done(lang.seg, f"[build] {lang.seg}: done in {seconds:.1f} s")
                log.sphinx_log(lang.seg, log_file)
    for warning in sphinx_warnings.merge(found):
        log.line(str(warning))
    return [lang.seg for lang, _, _ in todo if lang.seg in failed]


def html(settings, noplot=False, assemble=False):
    """Execute what is not current (nothing with `noplot`), then build the selected languages.

    With SHARD ("i/N"), only that shard's tutorials are executed, and nothing is rendered:
    `make assemble` renders the pages from the shards' runs.
    With `assemble`, nothing is executed: a tutorial without a current run is an error.
    """
    tree, langs = settings.tree, settings.langs
    log = BuildLog.here(settings.verbose)
    site = project.current()
    catalogs.check_layout()
    for folder in site.ignored_folders:
        log.line(f"warning: {folder}/: holds scripts but is no gallery section (a section is a gallery's "
                 "subfolder with a GALLERY_HEADER.rst or README.txt); its scripts get no page")
    selected = _selection(settings, site, noplot or assemble)
    refuse_unusable(site)
    for lang in langs:
        translate.check_labels(lang)
    environment = environment_fingerprint()
    executed, failed = None, []
    if "plot_gallery" in site.options and not site.flag("plot_gallery"):
        noplot = True  # conf.py asks for pages without output, as sphinx-gallery gives them
    if not noplot:
        tutorials = shards.selection(settings.shard) if settings.shard else [t for t in selected if t.executed]
        if assemble:
            missing = [t.key for t in tutorials
                       if runs.problems(tree.run_dir(t.key), source_digest(t.path, t.label), environment)]
            if missing:
                raise Failed("[assemble] refusing to execute anything here; no current shard output for:\n  "
                             + "\n  ".join(missing))
        else:
            executed = run_tutorials(settings, site, tutorials, environment, log)
            failed = list(executed.failed)
            if failed and site.flag("abort_on_example_error"):
                raise Failed("[build] failed: " + "\n  ".join(failed))  # and nothing rendered
        if settings.shard:
            # Its tutorials' runs, executed or taken from REUSE; durations count the executed ones only.
            ShardRecord(shard=str(settings.shard), tutorials=tuple(t.key for t in tutorials),
                        executed=executed.ran).write(tree.shard_record)
            if failed:
                raise Failed("[build] failed: " + "\n  ".join(failed))
            log.line(f"[build] shard {settings.shard}: done in {log.elapsed():.1f} s ({_tutorials_done(executed)}); "
                     "`make assemble` renders the pages")
            return
        for error in expectation_errors(tree, site):
            log.line(error)
            failed.append(error)
        if failed and site.flag("only_warn_on_example_error"):
            log.line("[build] WARNING: only_warn_on_example_error: building the pages of these failed tutorials "
                     "with their errors (make check will refuse them):\n  " + "\n  ".join(failed))
            failed = []
    unrun = _unrun(settings, site, selected, environment) if settings.tutorials and not noplot else []
    if settings.tutorials:
        # Until this build is done, nothing in its folder claims a whole site (build.json is publish's input).
        Path(tree.html, "build.json").unlink(missing_ok=True)
    todo, current = [], []
    for lang in langs:
        src, reports = stage(tree, lang)
        for problem in (p for report in reports for p in report.problems):
            log.line(f"warning: {problem}")
        english = sum(report.english for report in reports)
        if settings.strict and english:
            log.line(f"[build] {lang.seg}: STRICT=1 and {english} tutorial passage(s) would be shown in English")
            failed.append(lang.seg)
            continue
        command = sphinx_args(settings, lang, src, noplot, unrun)
        up_to_date = UpToDate(tree, site, lang, command, environment)
        if up_to_date:
            log.line(f"[build] {lang.seg}: up to date")
            current.append(lang.seg)
            continue
        up_to_date.forget()
        todo.append((lang, command, up_to_date))
    if todo:
        failed += _render(settings, site, todo, noplot, log)
    write_root_index(tree.html, langs)
    # Pages ask the site root for versions.json; served from _build/html, this build is that root.
    local = versions.as_built(settings.published, settings.version)
    Path(tree.html, "versions.json").write_text(json.dumps(local, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    if failed:  # the tutorials' errors again, at the end, where they are seen; a language: its report above
        raise Failed("[build] failed: " + "\n  ".join(failed))
    write_build_info(tree.html, settings.version, langs, executed=not noplot, partial=" ".join(settings.tutorials))
    rendered = ", ".join(lang.seg for lang, _, _ in todo) or "none"
    what = ("none executed (pages without output)" if noplot else "none executed (the shards' runs)" if assemble
            else _tutorials_done(executed))
    log.line(f"[build] done in {log.elapsed():.1f} s: rendered {rendered}"
             + (f" (up to date: {', '.join(current)})" if current else "") + f"; tutorials: {what}")
    log.line(f"[build] open {shown(tree.html / 'index.html')}; Sphinx's logs are in {shown(tree.logs)}/")


def _tutorials_done(executed: Executed) -> str:
    return (f"{len(executed.ran)} executed, {executed.current} current"
            + (f", {executed.taken} taken from REUSE" if executed.taken else ""))


# --- TUTORIALS: a build that executes only the tutorials named (the author's fast loop) ---

def _selection(settings: Settings, site: project.Project, executes_nothing: bool) -> tuple[project.Tutorial, ...]:
    """The tutorials this build may execute: those TUTORIALS names (checked before anything runs), else all."""
    if not settings.tutorials:
        return site.tutorials
    if executes_nothing or settings.shard:
        raise UsageError("TUTORIALS: only `make html` executes a selection of tutorials; "
                         "leave TUTORIALS out of html-noplot, assemble and SHARD builds")
    selected = site.select(settings.tutorials)
    print(f"[build] TUTORIALS: selected {', '.join(t.label for t in selected)} (the build is partial: "
          "`make check` and `make publish` refuse it)", flush=True)
    return selected


def _unrun(settings: Settings, site: project.Project, selected: tuple[project.Tutorial, ...],
           environment: str) -> list[str]:
    """The keys of the tutorials a TUTORIALS build shows without output: not selected and without a current
    run (one that is current is shown, as a whole build would show it)."""
    unrun = [t for t in site.tutorials
             if t.executed and t not in selected and not run_is_current(settings, t, environment)]
    if unrun:
        print(f"[build] TUTORIALS: {len(unrun)} other tutorial(s) without a current run, shown without output",
              flush=True)
    return [t.key for t in unrun]


def assemble(settings, shard_builddirs):
    """Render the site once from the shards' runs, executing nothing, and validate it."""
    merged = shards.merge(shard_builddirs, settings.tree)
    print(f"[assemble] {len(merged)} executed tutorial run(s) from {len(shard_builddirs)} shard(s)", flush=True)
    html(settings, assemble=True)
    htmldir = settings.tree.html
    problems = checks.check_stamps(htmldir, settings.langs) + checks.check_links(htmldir)
    if problems:
        print("\n".join(problems))
        raise Failed(f"[assemble] the assembled site does not validate ({len(problems)} problem(s))")
    print(f"[assemble] {htmldir}: every tutorial executed, every language present, every link whole")


def write_build_info(htmldir, name, langs, executed, partial: str = ""):
    """What the publish step needs to know about this build: its version entry; `partial`: the TUTORIALS
    it executed alone (`make check` and `make publish` refuse such a build)."""
    BuildInfo(name=name, label=name, release=versions.is_release(name), torch=installed_version("torch"),
              languages=tuple(lang.seg for lang in langs), built=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
              path=f"{name}/", executed=executed, partial=partial).write(Path(htmldir, "build.json"))

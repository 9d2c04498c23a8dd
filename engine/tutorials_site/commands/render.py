"""A build's rendering stage: each language staged (core.site.staging) and built by Sphinx, as many at once
as JOBS, from the runs (sphinxext.gallery renders them, sphinx-gallery executes nothing); then the site
root's index, versions.json and build.json."""

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..core import languages, project
from ..core.files import shown
from ..core.layout import BuildTree
from ..core.runs.records import BUILD_RECORD
from ..core.site import build_values, site_pages, versions
from ..core.site.build_cache import UpToDate
from ..core.site.build_values import BuildValues
from ..core.site.settings import Settings
from ..core.site.staging import LOCALE, stage
from ..core.text import catalogs, sphinx_warnings
from .build_log import BuildLog, Rendering
from .prepare import Build, build_failed, staging_skip
from .sphinx_process import Forked, SphinxResult, preload

# <builddir>/logs/warnings.log: every warning a build found, located (BuildLog.tell).
WARNINGS = "warnings"
# A language to render: its sphinx-build command line, and whether its last build still stands.
_Todo = tuple[languages.Language, list[str], UpToDate]


def _finished(settings: Settings, lang: languages.Language, up_to_date: UpToDate, log_file: Path,
              result: SphinxResult, rendering: Rendering) -> bool:
    """Say how LANG's build went (RESULT) and whether it succeeded; one that succeeded is remembered as current,
    warnings or not: its log tells them all (sphinxext.kept_warnings tells those of pages it did not read again),
    and so does the next build's that finds it current."""
    status, seconds, report = result
    if status:
        why = ("; with STRICT=1 its warnings (below) are errors" if settings.strict and not report
               else "".join(f"\n  {line}" for line in report))
        rendering.done(lang.seg, f"[build] {lang.seg}: sphinx-build failed (exit status {status}) after "
                                 f"{seconds:.1f} s (log: {shown(log_file)}){why}")
        return False
    up_to_date.remember()
    rendering.done(lang.seg, f"[build] {lang.seg}: done in {seconds:.1f} s")
    return True


def _render(settings: Settings, site: project.Project, todo: Sequence[_Todo], noplot: bool,
            log: BuildLog) -> tuple[list[str], dict[str, list[sphinx_warnings.Warning]]]:
    """Build each language of TODO, as many at once as settings.jobs; returns the URL segments of those that
    failed, and each one's warnings and errors, at the author's file and line (a translation's: at its catalog
    entry). Each language's lines come as it finishes."""
    tree = settings.tree
    preload(site)
    tree.logs.mkdir(parents=True, exist_ok=True)
    failed, found = [], {}
    jobs = min(len(todo), settings.jobs)
    with log.rendering([lang.seg for lang, _, _ in todo], jobs) as rendering:
        waiting, builds = list(todo), dict[languages.Language, tuple[UpToDate, Path, Forked]]()
        for lang, _, _ in todo:
            rendering.start(lang.seg, tree.logs / f"{lang.seg}.log", noplot)
        while waiting or builds:
            while waiting and len(builds) < jobs:  # as many at once as there are CPUs
                lang, command, up_to_date = waiting.pop(0)
                builds[lang] = (up_to_date, tree.logs / f"{lang.seg}.log", Forked(command, tree.logs / f"{lang.seg}.log"))
            finished = [lang for lang, (_, _, build) in builds.items() if build.ready()]
            if not finished:
                next(iter(builds.values()))[2].ready(0.1)
                rendering.tick()
            for lang in finished:
                up_to_date, log_file, build = builds.pop(lang)
                found[lang.seg] = language_warnings(tree, site, lang, log_file)
                if not _finished(settings, lang, up_to_date, log_file, build.get(), rendering):
                    failed.append(lang.seg)
                log.sphinx_log(lang.seg, log_file)
    return [lang.seg for lang, _, _ in todo if lang.seg in failed], found


def tell_warnings(tree: BuildTree, found: Mapping[str, Sequence[sphinx_warnings.Warning]], log: BuildLog) -> None:
    """Every warning of the languages FOUND (by URL segment), once, naming the languages where several were
    built; those the last build told as they are, counted in one line (BuildLog.tell)."""
    merged = [str(warning) for warning in sphinx_warnings.merge(found)]
    untold = log.tell(merged, tree.logs / WARNINGS)
    if untold:
        log.line(f"[build] {len(merged)} warning(s) and error(s); {log.summed(untold, tree.logs / WARNINGS)}")


def _to_render(build: Build, noplot: bool, unrun: Sequence[str]) -> tuple[list[_Todo], list[str], list[str]]:
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
        up_to_date = UpToDate.of(tree, build.site, lang, command, build.present.environment, staging_skip(settings),
                                 log=tree.logs / f"{lang.seg}.log")
        if up_to_date:
            log.line(f"[build] {lang.seg}: up to date")
            current.append(lang.seg)
            continue
        up_to_date.forget()
        todo.append((lang, command, up_to_date))
    return todo, current, failed


def render_site(build: Build, failed: Sequence[str], *, noplot: bool, what: str, unrun: Sequence[str] = ()) -> None:
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
    unrendered, found = _render(settings, build.site, todo, noplot, log) if todo else ([], {})
    failed += unrendered
    # A current language's warnings: those its last log tells (of every page: sphinxext.kept_warnings).
    found |= {lang.seg: language_warnings(tree, build.site, lang, tree.logs / f"{lang.seg}.log")
              for lang in settings.langs if lang.seg in current}
    tell_warnings(tree, {lang.seg: found[lang.seg] for lang in settings.langs if lang.seg in found}, log)
    site_pages.write_root_index(build.site.conf, tree.html, settings.langs, build.site.languages.source)
    versions.write_as_built(tree.html, settings.published, settings.version)
    if failed:  # the tutorials' errors again, at the end, where they are seen; a language: its report above
        raise build_failed(failed, log)
    versions.write_build_info(tree.html, settings.version, settings.langs, executed=not noplot, partial=" ".join(settings.tutorials))
    rendered = ", ".join(lang.seg for lang, _, _ in todo) or "none"
    log.line(f"[build] done in {log.elapsed():.1f} s: rendered {rendered}"
             + (f" (up to date: {', '.join(current)})" if current else "") + f"; tutorials: {what}")
    where = f"served at {settings.served_at}" if settings.served_at else f"open {shown(tree.html / 'index.html')}"
    log.line(f"[build] {where}; Sphinx's logs are in {shown(tree.logs)}/")


def linked_languages(settings: Settings, site: project.Project) -> list[languages.Language]:
    """The languages a page links to: those of this build (LANGUAGES), and those an earlier build left in the
    build folder (`LANGUAGES=ko` after a build of every language keeps the others a click away)."""
    built = site.languages.built_in(settings.tree.html)
    return [lang for lang in site.languages.all if lang in settings.langs or lang in built]


def sphinx_args(settings: Settings, site: project.Project, lang: languages.Language, src: Path, noplot: bool,
                unrun: Sequence[str] = ()) -> list[str]:
    """The sphinx-build command line of one language, with the record of the engine's settings it names written
    (core.site.build_values); UNRUN: the keys of the tutorials whose pages show no output (a TUTORIALS build: the
    others, without a current run). The staged tree SRC holds the site's conf.py too: Sphinx evaluates it from
    there."""
    values = settings.tree.doctrees(lang) / build_values.FILE
    BuildValues(root=str(site.root), built_languages=tuple(lang.seg for lang in linked_languages(settings, site)),
                versions=settings.published,
                runs="" if noplot else str(settings.tree.runs), unrun=tuple(sorted(unrun)),
                strict=settings.strict).write(values)
    command = [
        "-b", "html", "--keep-going",
        "--no-color",  # the log is a file: no escape sequences (Sphinx colours where CI or FORCE_COLOR is set)
        "-d", str(settings.tree.doctrees(lang)),
        "-D", f"language={lang.code}",
        "-D", f"version={settings.version}", "-D", f"release={settings.version}",
        "-D", f"{build_values.SETTING}={values}",
        # A translated language's page and label catalogs, compiled where staging put them, one per page.
        "-D", f"locale_dirs={LOCALE}", "-D", "gettext_compact=0",
        # sphinx-gallery executes nothing, ever: it renders what the runner recorded (sphinxext.gallery).
        "-D", "plot_gallery=0",
    ]
    if settings.strict:
        command.append("-W")
    return command + [str(src), str(settings.tree.html / lang.seg)]


def language_warnings(tree: BuildTree, site: project.Project, lang: languages.Language,
                      log: Path) -> list[sphinx_warnings.Warning]:
    """A language build's warnings and errors, located in the files their authors wrote."""
    galleries = {g.examples_dir: g.gallery_dir for g in site.galleries}
    translated = None if lang == site.languages.source else catalogs.catalog_dir(site, lang)
    locate = sphinx_warnings.locator(tree.src(lang), galleries, site.root, translated)
    return sphinx_warnings.rewrite(log.read_text(encoding="utf-8", errors="replace"), locate)

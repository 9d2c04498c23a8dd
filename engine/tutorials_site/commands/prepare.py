"""A build's first stage, before anything runs: the project read, the selection made, and what would fail
later refused (scripts sphinx-gallery cannot render, time limits, needs, catalogs' layout, labels)."""

import dataclasses
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from .. import __version__
from ..core import project
from ..core.errors import Failed, SiteError, UsageError
from ..core.files import shown
from ..core.runs import needs
from ..core.runs.fingerprint import declared_reads, present
from ..core.runs.records import Record, RecordError
from ..core.runs.used import Present
from ..core.site.settings import Settings
from ..core.text import catalogs, translate
from ..core.text.tutorial_text import TutorialSyntaxError
from ..core.text.tutorial_text import parse as parse_text
from . import execute
from .build_log import BuildLog


@dataclasses.dataclass(frozen=True)
class Build:
    """What every build reads and checks before it executes or renders anything (prepare)."""

    settings: Settings
    log: BuildLog
    site: project.Project
    selected: tuple[project.Tutorial, ...]  # those it may execute (TUTORIALS)
    present: Present  # the project and environment runs are compared with (the environment fingerprint)

    @property
    def without_output(self) -> bool:
        """conf.py asks for pages without output, as sphinx-gallery gives them (plot_gallery False)."""
        return "plot_gallery" in self.site.options and not self.site.flag("plot_gallery")


def build_failed(errors: Sequence[str], log: BuildLog | None = None) -> Failed:
    """The error that fails a build, each of ERRORS on a line of its own, but those LOG summed up as the last
    build's (BuildLog.tell), counted in one line that names where they are."""
    summed = log.summed_up if log is not None else {}
    new = [error for error in errors if error not in summed]
    files = sorted({shown(summed[error]) for error in errors if error in summed})
    repeated = len(errors) - len(new)
    return Failed("[build] failed: " + "\n  ".join(
        new + ([f"{repeated} error(s) as the last build told them ({', '.join(files)})"] if repeated else [])))


def prepare(settings: Settings, executes_nothing: bool) -> Build:
    """Read the project and refuse what would fail later, before anything runs; EXECUTES_NOTHING: the build
    renders from the runs there are (TUTORIALS is refused)."""
    log = BuildLog.here(settings.verbose, settings.progress_interval)
    site = project.current(settings.root)
    site.refuse_overlaps(made_by_builds(settings))
    catalogs.check_layout(site)
    for merged in site.merged_headers:
        log.line(f"warning: {merged}")
    for folder in site.ignored_folders:
        log.line(f"warning: {folder}/: holds scripts but is no gallery section (a section is a gallery's "
                 "subfolder with a GALLERY_HEADER.rst or README.txt); its scripts get no page")
    selected = _selection(settings, site, executes_nothing, log)
    refuse_unusable(site, settings.tree.root / CHECKED)
    for lang in settings.langs:
        translate.check_labels(site, lang)
    return Build(settings, log, site, selected, present(site.root, settings.sandboxed, settings.runs_key,
                                                             settings.pythonpath))


def _selection(settings: Settings, site: project.Project, executes_nothing: bool,
               log: BuildLog) -> tuple[project.Tutorial, ...]:
    """The tutorials this build may execute: those TUTORIALS names (checked before anything runs), else all."""
    if not settings.tutorials:
        return site.tutorials
    if executes_nothing or settings.shard:
        raise UsageError("TUTORIALS: only `tutorials-site html` executes a selection of tutorials; "
                         "leave TUTORIALS out of html-noplot, assemble and SHARD builds")
    selected = site.select(settings.tutorials)
    log.line(f"[build] TUTORIALS: selected {', '.join(t.label for t in selected)} (the build is partial: "
             "`tutorials-site check` and `tutorials-site publish` refuse it)")
    return selected


@dataclasses.dataclass(frozen=True, kw_only=True)
class Checked(Record):
    """<builddir>/checked.json: the scripts refuse_unusable found usable, by digest (the script, conf.py's
    settings it reads, the engine): the same script again is not parsed again (a real site has hundreds)."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "record of the scripts checked (checked.json)"

    digests: tuple[str, ...]


CHECKED = "checked.json"


def _checked_digest(site: project.Project, tutorial: project.Tutorial) -> str:
    """What refuse_unusable's verdict on TUTORIAL depends on, digested (the files its reads name are checked
    again where its source digest is made, before it runs)."""
    settings = repr([site.conf.get(name) for name in ("tutorials_needs",)]).encode()
    return hashlib.sha256(tutorial.label.encode() + b"\0" + tutorial.path.read_bytes() + b"\0" + settings
                          + b"\0" + __version__.encode()).hexdigest()


def refuse_unusable(site: project.Project, record: Path | None = None) -> None:
    """Scripts sphinx-gallery cannot make a page of, or whose time limit or needs are wrong, refused before
    anything runs, naming the file and the fix; RECORD (Checked) keeps those found usable.

    (sphinx-gallery itself would fail later, inside Sphinx, once per language, or name a generated file.)
    """
    try:
        known = set((Checked.read(record) or Checked(digests=())).digests) if record else set()
    except RecordError:
        known = set()
    digests = {tutorial: _checked_digest(site, tutorial) for tutorial in site.tutorials}
    for tutorial in site.tutorials:
        if digests[tutorial] not in known:
            _refuse_if_unusable(site, tutorial)
    if record is not None and set(digests.values()) != known:
        record.parent.mkdir(parents=True, exist_ok=True)
        Checked(digests=tuple(sorted(digests.values()))).write(record)


def _refuse_if_unusable(site: project.Project, tutorial: project.Tutorial) -> None:
    """refuse_unusable, for one tutorial."""
    from sphinx.errors import ExtensionError

    from ..sphinx_gallery_build import docstring_problem, extract_intro_and_title
    from ..sphinx_gallery_run import split_code_and_text_blocks

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


def made_by_builds(settings: Settings) -> dict[Path, str]:
    """The folders builds make or change (resolved), with what they are: no gallery folder may overlap one."""
    return {settings.tree.root.resolve(): "the build folder, BUILDDIR, whose files builds delete and rewrite",
            settings.pages.resolve(): "the published tree, PAGES", Path(sys.prefix).resolve(): "the virtual environment"}


def staging_skip(settings: Settings) -> tuple[Path, ...]:
    """What a staged tree leaves out of the site besides the engine's files: what builds make (core.site_tree)."""
    return tuple(made_by_builds(settings))

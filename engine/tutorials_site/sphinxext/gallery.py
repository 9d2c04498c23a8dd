"""Sphinx-Gallery renders every language's page from the one run of each tutorial.

The build command runs each tutorial once, in a process of its own, before
Sphinx (core.runs.runs). Here, at `builder-inited` (after sphinx-gallery has filled
its configuration, before it generates the galleries), each tutorial's
outputs are handed to sphinx-gallery through the caches it keeps beside a page
(internal to it, see sphinx_gallery_build): the page's reST and thumbnail are
written with sphinx-gallery's own functions from this language's script and the
run's outputs (its notebook and zip by _write_downloads), and the `.md5` beside the copy of the script
tells sphinx-gallery the example is current, so it executes nothing and keeps
what it finds. The figures are the run's image files, copied byte for byte.
"""

import contextlib
import glob
import hashlib
import io
import os
import shutil
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.util import logging

from .. import __version__
from .. import sphinx_gallery_build as sg
from .. import sphinx_gallery_run as sg_run
from ..core import project, tutorial_settings
from ..core.files import read_regular, write_atomically
from ..core.runs import currency, runs, seal, shown, signing
from ..core.runs.fingerprint import canonical_json
from ..core.runs.records import BlockRecord, Record, RecordError, RunFile, RunRecord, Stamp
from ..core.runs.stamps import page_copy, stamp_path
from ..core.sphinx_gallery_formats import PLACEHOLDER_OPTION, figure_files, image_path_template, thumbnail_name
from ..core.text import notebook_text, tutorial_text
from ..sphinx_gallery_build import ExtensionMetadata
from .head import page_language

logger = logging.getLogger(__name__)


@dataclass
class SiteState:
    """What the extension knows of the site during one Sphinx application's build (on its configuration,
    STATE: never pickled, as Sphinx's Config leaves out names that start with "_"; one per application, found
    again the same by a process that reads in parallel): the project as discovered from the configuration's
    sphinx_gallery_conf, each tutorial's title, and the downloads sphinx-gallery is about to write over."""

    conf: Mapping[str, Any]  # the sphinx_gallery_conf the project was discovered from
    project: project.Project
    titles: dict[str, str] | None = None  # tutorial_titles, found once
    # The notebooks and zips as the build found them (note_downloads): {path: (digest, mtime)}.
    downloads_before: dict[Path, tuple[bytes, int]] = field(default_factory=dict)


STATE = "_tutorials_site"


def site_state(config: Config) -> SiteState:
    """This configuration's state of the site (discovered once per build, and again where sphinx_gallery_conf is
    another dictionary)."""
    conf = config.sphinx_gallery_conf
    state: SiteState | None = vars(config).get(STATE)
    if state is None or state.conf is not conf:
        state = SiteState(conf, project.Project(project_root(config), conf))
        setattr(config, STATE, state)
    return state


def site_project(config: Config) -> project.Project:
    """The project as this Sphinx run's configuration declares it."""
    return site_state(config).project


def project_root(config: Config) -> Path:
    """Where the site's sources are: the project root the build driver names (its staged trees hold translated
    scripts, never the source ones), else conf.py's own folder (a plain sphinx-build)."""
    if config.tutorials_root:
        return Path(config.tutorials_root)
    conf_file = sg.conf_py_value(config, "__file__")
    return Path(conf_file).parent if conf_file else Path.cwd()  # a conf.py without a file: Sphinx's own case


def example_of(config: Config, docname: str) -> project.Tutorial | None:
    """The tutorial a page renders; None for any other page (a gallery index, a hand-written page)."""
    return site_project(config).tutorial_of_page(docname)


def _from_runs(app: Sphinx) -> tuple[list[project.Tutorial], list[project.Tutorial]]:
    """The tutorials whose pages this build renders from their runs, and the others, whose pages sphinx-gallery
    writes."""
    unrun = set(app.config.tutorials_unrun)  # a TUTORIALS build left them unexecuted
    ours: list[project.Tutorial] = []
    theirs: list[project.Tutorial] = []
    for tutorial in site_project(app.config).tutorials:
        # html-noplot (no runs): sphinx-gallery shows the code without output
        rendered = bool(app.config.tutorials_runs) and tutorial.executed and tutorial.key not in unrun
        (ours if rendered else theirs).append(tutorial)
    return ours, theirs


def render_galleries(app: Sphinx) -> None:
    """Write every executed tutorial's page from its run, before sphinx-gallery generates the galleries."""
    if not app.config.tutorials_runs:
        return
    conf = app.config.sphinx_gallery_conf
    if app.config.tutorials_show_memory:
        conf = {**conf, "show_memory": True}
    runs_root = Path(app.config.tutorials_runs)
    settings = _rendering_settings(site_project(app.config).options, conf)
    from_runs, others = _from_runs(app)
    for tutorial in others:
        if tutorial.executed:
            _forget_rendering(Path(app.srcdir, tutorial.gallery.gallery_dir, tutorial.rel))  # shown without output
    for tutorial in from_runs:
        run_dir = runs_root / tutorial.key
        result, stamp, figures = _read_run(runs_root, tutorial)
        src_file = Path(app.srcdir, tutorial.gallery.examples_dir, tutorial.rel)
        render(src_file, Path(app.srcdir, tutorial.gallery.gallery_dir, tutorial.section), result, stamp, run_dir,
               figures, conf, settings)


def _read_run(runs_root: Path, tutorial: project.Tutorial) -> tuple[RunRecord, Stamp | None, list[RunFile]]:
    """The record, the stamp and the figures of TUTORIAL's run, which must be the run its stamp sealed (the build
    checked it is; checked again here, where its files are read into a page: core.runs.seal). A run without a stamp
    (one the build refused to stamp, and fails for) hands over its figures, never a link."""
    run_dir = runs_root / tutorial.key
    again = "build again with `python -m tutorials_site html`, which runs it again"
    try:
        result = RunRecord.read(run_dir / runs.RESULT)
        stamp = Stamp.read(run_dir / runs.STAMP)
        if result is None:
            raise ExtensionError(f"{tutorial.label}: no run in {run_dir}; "
                                 "tutorials are executed by `python -m tutorials_site html`, never inside Sphinx")
        problems = seal.verify(runs_root, tutorial.key, stamp.files) if stamp else []
        files = stamp.files if stamp else seal.seal(runs_root, tutorial.key)
    except (RecordError, seal.SealError) as error:
        raise ExtensionError(f"{tutorial.label}: {error}; {again}") from None
    if problems:
        raise ExtensionError(f"{tutorial.label}: its run is not the one its stamp sealed: {'; '.join(problems)}; {again}")
    figures = runs.figures(files, tutorial)
    names = frozenset(PurePosixPath(figure.path).relative_to(runs.PAGE).as_posix() for figure in figures)
    return shown.validated(result, names), stamp, figures


def _without_lines(block: Any, lines: set[int]) -> Any:
    """A code block without the given lines of its file (a code block's content starts at its lineno)."""
    if block.type != "code" or not lines:
        return block
    kept = [text for number, text in enumerate(block.content.splitlines(keepends=True), block.lineno)
            if number not in lines]
    return sg_run.Block(block.type, "".join(kept), block.lineno)


def _output_rst(record: BlockRecord | None, block: Any, file_conf: Mapping[str, Any], conf: Mapping[str, Any]) -> str:
    """The reST under a code block BLOCK of the script, written here from its run's RECORD (data validated by
    core.runs.shown; none: it did not run): its figures, its texts in literal blocks, its error as a traceback,
    its HTML repr sanitised; as sphinx-gallery lays them out."""
    if record is None:
        return ""
    if record.failed and record.texts:
        *printed, error = record.texts
        return (sg_run.output_rst(printed[0]) if printed else "") + sg_run.error_rst(error)
    multi = sg_run.extract_file_config(block.content).get("multi_image_block", file_conf.get("multi_image")) != "single"
    figures = sg.figures_rst([Path(conf["src_dir"], image) for image in record.images], record.alts,
                             Path(conf["src_dir"]), conf.get("image_srcset") or (), multi)
    return sg_run.output_rst(record.texts[0] if record.texts else "", figures,
                             "_repr_html_" if record.html else None, record.html)


def _outputs(blocks: Sequence[Any], result: RunRecord | None, stamp: Stamp | None, file_conf: Mapping[str, Any],
             conf: Mapping[str, Any]) -> list[str]:
    """The reST of each of BLOCKS' output (a text block's: none), each code block paired with the run's record of
    the same block by its identity: where its code started in the script that ran (BlockRecord.line). A current
    run's code is this script's, block for block, on the lines its stamp records (a prose edit may have moved
    them since); a block the run did not reach (it failed before) shows none."""
    recorded = {record.line: record for record in (result.blocks if result else ())}
    code = [block for block in blocks if block.type == "code"]
    ran_at = currency.lines_ran_at(stamp, [block.lineno for block in code])
    moved = {id(block): start - block.lineno for block, start in zip(code, ran_at)}
    return [_output_rst(recorded.get(runs.first_code_line(block) + moved[id(block)]), block, file_conf, conf)
            if block.type == "code" else "" for block in blocks]


def _shown_blocks(src_file: Path, conf: Mapping[str, Any], result: RunRecord | None,
                  stamp: Stamp | None = None) -> tuple[dict[str, Any], list[Any], list[str]]:
    """(file_conf, blocks, outputs) of what the page and the notebook show of a script and its run (_outputs), as
    sphinx-gallery cleans it, the run's own setting comments removed with sphinx-gallery's config comments."""
    file_conf, blocks = sg_run.split_code_and_text_blocks(str(src_file))
    outputs = _outputs(blocks, result, stamp, file_conf, conf)
    if conf["remove_config_comments"]:
        text = src_file.read_text(encoding="utf-8")
        setting_lines = {line for name in tutorial_settings.SETTINGS for line, _ in tutorial_settings.setting_comments(text, name)}
        blocks = [_without_lines(block, setting_lines) for block in blocks]
    blocks, outputs = sg.clean_blocks(conf, blocks, outputs)
    return file_conf, blocks, outputs


@dataclass(frozen=True, kw_only=True)
class Rendered(Record):
    """<tutorial>.run.json beside the reST of a page rendered from a run: which run and script it was rendered
    from (KEY), a digest of what sphinx-gallery then reads (_rendered) and of the settings it was rendered with;
    the same again: nothing to render."""

    FORMAT: ClassVar[int] = 2
    NAME: ClassVar[str] = "rendering marker (.run.json)"
    SUFFIX: ClassVar[str] = ".run.json"

    key: str
    rendered: str
    settings: str  # _rendering_settings of the build that rendered it


def _marked(marker: Path) -> Rendered | None:
    """The marker at MARKER; None where there is none, or one of another format (the page is rendered again)."""
    try:
        return Rendered.read(marker)
    except RecordError:
        return None


def _rendering_settings(options: Mapping[str, Any], conf: Mapping[str, Any]) -> str:
    """A digest of what conf.py tells sphinx-gallery about the pages it renders: its sphinx_gallery_conf as written
    (OPTIONS) and the placeholder thumbnail's bytes (CONF, the options sphinx-gallery filled); when it changes,
    every page is rendered again from its run (nothing is executed)."""
    digest = hashlib.sha256(canonical_json(options).encode())
    placeholder = conf.get(PLACEHOLDER_OPTION)
    if placeholder and Path(placeholder).is_file():
        digest.update(b"\0" + Path(placeholder).read_bytes())
    return digest.hexdigest()


def render(src_file: Path, target_dir: Path, result: RunRecord, stamp: Stamp | None, run_dir: Path,
           figures: Sequence[RunFile], conf: Mapping[str, Any], settings: str) -> None:
    """Write the page's reST and thumbnail of one tutorial from its run, with sphinx-gallery's functions; its
    FIGURES (runs.figures: the files of its figures folder) are copied where the reST wants them; SETTINGS is
    _rendering_settings."""
    target = target_dir / src_file.name
    shown_stamp = page_copy(stamp, signing.verified(run_dir)) if stamp else None
    key = hashlib.sha256(src_file.read_bytes() + b"\0" + result.to_json().encode() + b"\0"
                         + (shown_stamp.to_json() if shown_stamp else "").encode()).hexdigest()
    marker = target.with_name(f"{target.stem}{Rendered.SUFFIX}")
    before = _marked(marker)
    if before == Rendered(key=key, rendered=_rendered(target), settings=settings) and sg.md5_file(target).exists():
        return  # rendered from this run and this script, with these settings, and untouched since
    logger.info("[gallery] %s: rendering the run's output", target.name)
    images = target_dir / "images"
    images.mkdir(parents=True, exist_ok=True)
    for old in figure_files(images, target.stem):
        old.unlink()
    for figure in figures:  # with their srcset variants and animations; never read through a link nor written through one
        destination = Path(conf["src_dir"], PurePosixPath(figure.path).relative_to(runs.PAGE))
        write_atomically(destination, read_regular(run_dir / figure.path))
    shutil.copyfile(src_file, target)

    file_conf, blocks, outputs = _shown_blocks(src_file, conf, result, stamp)

    seconds = result.seconds
    memory = stamp.peak_rss_mb if stamp else 0.0
    sg.save_page(target, blocks, outputs, file_conf, conf, seconds, memory)
    template = image_path_template(images, target.stem)
    produced = sg_run.image_path_iterator(template)
    for _ in range(result.images_total):  # the run's figures, counted as it saved them
        next(produced)
    script_vars: dict[str, Any] = {"image_path_iterator": produced}
    if result.error:
        script_vars["formatted_exception"] = result.error.message
    if before is None or before.settings != settings:  # sphinx-gallery keeps a placeholder thumbnail it finds
        for old in (images / "thumb").glob(thumbnail_name(target.stem, ".*")):
            old.unlink()
    sg.save_thumbnail(template, src_file, script_vars, file_conf, conf)

    # sphinx-gallery's caches: the names for code links and backreferences, the cost it reports for a
    # skipped example, and the md5 that makes it skip.
    sg.write_code_objects(target, result.code_objects)
    sg.write_cost(target, seconds, memory)
    sg.write_md5(target)
    if shown_stamp is not None:
        shown_stamp.write(stamp_path(target))
    else:
        stamp_path(target).unlink(missing_ok=True)
    Rendered(key=key, rendered=_rendered(target), settings=settings).write(marker)


def write_run_downloads(app: Sphinx) -> None:
    """The notebooks and zips of the tutorials rendered from runs, before sphinx-gallery generates the
    galleries: the gallery pages and zips it writes then take them in."""
    _write_downloads(app, _from_runs(app)[0])


def write_generated_downloads(app: Sphinx) -> None:
    """The notebooks and zips of the pages sphinx-gallery generated itself (tutorials it does not execute)."""
    _write_downloads(app, _from_runs(app)[1])


def tutorial_titles(app: Sphinx) -> dict[str, str]:
    """Each tutorial's title in the build's language, by its reference label and its page (with and without "/"):
    what a role naming a tutorial without a title shows in a notebook. Found once per build, for both passes of
    _write_downloads."""
    state = site_state(app.config)
    if state.titles is None:
        titles: dict[str, str] = {}
        for tutorial in state.project.tutorials:
            source = Path(app.srcdir, tutorial.gallery.examples_dir, tutorial.rel)  # staged: this language's
            try:
                title = next((u.msgid for u in tutorial_text.parse(source).units if u.kind == "title"), None)
            except (OSError, tutorial_text.TutorialSyntaxError):
                title = None  # not staged, or sphinx-gallery reports it where it reads the page
            if title:
                titles |= {tutorial.ref_label: title, tutorial.page: title, f"/{tutorial.page}": title}
        state.titles = titles
    return state.titles


def _write_downloads(app: Sphinx, tutorials: list[project.Tutorial]) -> None:
    """TUTORIALS' notebooks and zips, the notebook in plain Markdown (core.text.notebook_text): sphinx-gallery
    writes a notebook with the reST its conversion leaves (roles, escapes)."""
    conf = app.config.sphinx_gallery_conf
    spaced = page_language(app.config).spaced
    before = site_state(app.config).downloads_before
    for tutorial in tutorials:
        source = Path(app.srcdir, tutorial.gallery.examples_dir, tutorial.rel)
        target = Path(app.srcdir, tutorial.gallery.gallery_dir, tutorial.rel)
        if target.suffix not in conf["notebook_extensions"] or not source.exists() or not target.exists():
            continue
        _, blocks, _ = _shown_blocks(source, conf, None)
        blocks = [block if block.type == "code" else
                  sg_run.Block(block.type, notebook_text.for_markdown(block.content, spaced, tutorial_titles(app)),
                           block.lineno)
                  for block in blocks]
        notebook, archive = target.with_suffix(".ipynb"), target.with_suffix(".zip")
        with _scratch(notebook) as fresh:
            sg.save_notebook(sg.notebook(blocks, conf, target.parent), fresh)
            _write_changed(notebook, fresh.read_bytes(), before)
        # The zip holds the script too, which may change where the notebook does not (a setting comment).
        with _scratch(archive) as fresh:
            sg.zip_files([target, notebook], fresh, target.parent)
            _write_changed(archive, _normalized_zip(fresh.read_bytes()), before)


@contextlib.contextmanager
def _scratch(path: Path) -> Iterator[Path]:
    """A file beside PATH for sphinx-gallery's functions, which write files only; gone afterwards."""
    fresh = path.with_name(f"{path.name}.new")
    try:
        yield fresh
    finally:
        fresh.unlink(missing_ok=True)


def _write_changed(path: Path, data: bytes, before: Mapping[Path, tuple[bytes, int]]) -> None:
    """PATH holds DATA, written only where it holds something else. Where sphinx-gallery wrote its own over
    what the build found (BEFORE), the file gets back the modification time it had then."""
    if path.exists() and path.read_bytes() == data:
        return
    write_atomically(path, data)
    digest, mtime = before.get(path, (None, 0))
    if digest == hashlib.sha256(data).digest():
        os.utime(path, ns=(mtime, mtime))


def note_downloads(app: Sphinx) -> None:
    """Note the notebook and zip of each page sphinx-gallery generates as they are, before it does: it writes
    its own again for every page it generates (each build, for a tutorial it does not execute), and
    write_generated_downloads puts ours back with their old mtimes, so that Sphinx, which reads a page again
    when a file it links to is newer, does not."""
    before = site_state(app.config).downloads_before
    before.clear()
    for tutorial in _from_runs(app)[1]:
        target = Path(app.srcdir, tutorial.gallery.gallery_dir, tutorial.rel)
        for path in (target.with_suffix(".ipynb"), target.with_suffix(".zip")):
            if path.exists():
                before[path] = (hashlib.sha256(path.read_bytes()).digest(), path.stat().st_mtime_ns)


def _forget_rendering(target: Path) -> None:
    """Make sphinx-gallery write TARGET's page again, without output, where it was rendered from a run (a page
    it wrote itself, without output, is kept: that is what it would write again)."""
    marker = target.with_name(f"{target.stem}{Rendered.SUFFIX}")
    if marker.exists():
        for path in (sg.md5_file(target), stamp_path(target), marker):
            path.unlink(missing_ok=True)


def take_show_memory(app: Sphinx, config: Config) -> None:
    """`show_memory` shows the peak memory the supervisor measured (the tutorial's whole process tree).

    sphinx-gallery would measure inside Sphinx with memory_profiler, and switch the option off (with a
    warning) where that is not installed; here it is ours to show.
    """
    conf = config.sphinx_gallery_conf
    config.tutorials_show_memory = bool(conf.get("show_memory")) and not callable(conf.get("show_memory"))
    if config.tutorials_show_memory:
        config.sphinx_gallery_conf = {**conf, "show_memory": False}


def drop_removed_pages(app: Sphinx, exception: Exception | None) -> None:
    """The HTML of a tutorial page that is gone (its script renamed or deleted): Sphinx leaves it behind. Only a
    page sphinx-gallery made is dropped: another extension's (a redirect stub) is no document either."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for gallery in site_project(app.config).galleries:
        for page in sorted((out / gallery.gallery_dir).rglob("*.html")):
            docname = page.relative_to(out).with_suffix("").as_posix()
            if docname not in app.env.found_docs and sg.EXAMPLE_PAGE_MARK in page.read_text(errors="replace"):
                page.unlink()
                for source in (out / "_sources").glob(f"{glob.escape(docname)}.*"):
                    source.unlink()


def refuse_own_execution(app: Sphinx, *event_args: object) -> None:
    """Fail the build if sphinx-gallery ever executed an example itself: only the runner may."""
    ran = sg.examples_it_ran(app.config.sphinx_gallery_conf)
    if ran:
        raise ExtensionError("sphinx-gallery executed " + ", ".join(ran) + " itself; tutorials must run only "
                             "through `python -m tutorials_site html` (a process of their own, stamped)")


def _rendered(target: Path) -> str:
    """A digest of the page sphinx-gallery will read: its reST and the figures it shows."""
    digest = hashlib.sha256()
    for path in [target.with_suffix(".rst"), *figure_files(target.parent / "images", target.stem)]:
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"missing"))
    return digest.hexdigest()


def _normalized_zip(data: bytes) -> bytes:
    """sphinx-gallery's zip with fixed entry dates, so equal sources give equal bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as old:
        entries = [(info.filename, old.read(info)) for info in old.infolist()]
    normalized = io.BytesIO()
    with zipfile.ZipFile(normalized, "w", zipfile.ZIP_DEFLATED) as new:
        for name, content in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            new.writestr(info, content)
    return normalized.getvalue()


def drop_unused_css(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                    doctree: nodes.document | None) -> None:
    """sphinx-gallery's stylesheets for HTML outputs and Binder badges: a run hands over text and figures only
    and no badge is configured, so they would style nothing and only hold back every page's first paint."""
    context["css_files"] = sg.without_stylesheets(context["css_files"], sg.OUTPUT_STYLESHEETS)


def setup(app: Sphinx) -> ExtensionMetadata:
    """Connect the handlers that render pages from runs and keep sphinx-gallery from executing (the run
    settings are registered with the others: core.config_values)."""
    sg.report_cached_examples()  # the run's cost and backreferences, with a sphinx-gallery before 0.22
    app.connect("html-page-context", drop_unused_css)
    # After sphinx-gallery's own builder-inited setup, before it generates the galleries.
    app.connect("builder-inited", render_galleries, priority=sg.GENERATES_GALLERIES - 100)
    app.connect("builder-inited", note_downloads, priority=sg.GENERATES_GALLERIES - 60)
    app.connect("builder-inited", write_run_downloads, priority=sg.GENERATES_GALLERIES - 50)
    app.connect("builder-inited", write_generated_downloads, priority=sg.GENERATES_GALLERIES + 100)
    app.connect("config-inited", take_show_memory, priority=sg.FILLS_CONF - 5)  # before sphinx-gallery fills its defaults
    # After sphinx-gallery generated the galleries, and again at the end.
    app.connect("builder-inited", refuse_own_execution, priority=sg.GENERATES_GALLERIES + 400)
    app.connect("build-finished", refuse_own_execution)
    app.connect("build-finished", drop_removed_pages)
    # Its config-inited, builder-inited and build-finished handlers run once, in the main process; at writing,
    # drop_unused_css edits only its page's context. SiteState is this application's, on its configuration: the
    # project discovered from conf.py and the files, which a process reading in parallel finds again the same.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

"""Staging: the Sphinx source tree of one language, under <builddir>/src/<seg>/.

Every language's tree stands for the whole site (core.site_tree: links to the
root's entries, conf.py copied, so Sphinx evaluates it from there); the
galleries' folders are staged on their own: in the source language the scripts
are linked, in a translated one they are generated from the source scripts and
the tutorials' catalogs (translate), with a translation report beside each. A
translated language's page and label catalogs are compiled into _locale/.
Unchanged files keep their mtimes, so Sphinx and sphinx-gallery see no change.
"""

import glob
import hashlib
import io
import shutil
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import ClassVar

from babel.messages.mofile import write_mo

from .. import languages, project, site_tree
from ..layout import BuildTree
from ..runs.records import Record, RecordError
from ..sphinx_gallery_formats import TIMES_PAGE, figure_files, thumbnail_name
from ..text import catalogs, translate

# Where a translated language's compiled catalogs are staged (the build passes it as Sphinx's locale_dirs).
LOCALE = "_locale"

# What a staged folder holds under each name: text (or bytes) to write, a file to link, or None: a folder
# synced on its own.
Content = str | bytes | Path | None


@dataclass(frozen=True, kw_only=True)
class TranslationStatus(Record):
    """<tutorial>.i18n.json, staged beside each translated script (sphinxext.i18n reads it): its units, and those
    its page shows in English."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "translation status (.i18n.json)"

    total: int
    english: int
    problems: tuple[str, ...] = ()  # the catalog's translations refused (translate.Report)
    inputs: str = ""  # what the script was generated from (_inputs): the same again, it is not generated again


def _inputs(site: project.Project, lang: languages.Language, tutorial: project.Tutorial, generator: str) -> str:
    """A digest of what translate.generate makes a language's script of: the script, its catalog, the language's
    link targets, and GENERATOR (the engine's code that does it)."""
    digest = hashlib.sha256(f"{generator}\0{lang.code}\0".encode())
    for path in (tutorial.path, catalogs.tutorial_po(site, lang, tutorial), site.locales / lang.code / translate.LINK_TARGETS):
        digest.update(path.read_bytes() if path.is_file() else b"-")
        digest.update(b"\0")
    return digest.hexdigest()


def _generator() -> str:
    """The engine's code that generates a translated script (its text processing), digested."""
    digest = hashlib.sha256()
    for path in sorted(Path(translate.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()

def _write_if_changed(path: Path, data: str | bytes) -> None:
    """Keeps mtimes (and sphinx-gallery's md5 cache) of unchanged generated files."""
    data = data.encode() if isinstance(data, str) else data
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def _sync_folder(folder: Path, wanted: Mapping[str, Content]) -> None:
    """Make `folder` hold exactly `wanted` ({name: text to write, a path to link, or None: a folder kept})."""
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for entry in folder.iterdir():
        if entry.name not in wanted or (wanted[entry.name] is None and entry.is_symlink()):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for name, content in wanted.items():
        if content is None:
            continue
        if isinstance(content, Path):
            site_tree.link(folder / name, content)
        else:
            _write_if_changed(folder / name, content)


def working_folder(base: Path, tutorial: project.Tutorial) -> Path:
    """Where a tutorial runs, made under BASE: links to its folder's files (data beside it is found), its writes
    stay there."""
    source = tutorial.path.parent
    folder = base / source.relative_to(tutorial.root)
    _mirror(source, folder)
    return folder


def _mirror(source: Path, folder: Path) -> None:
    """FOLDER (made here) links each file of SOURCE and mirrors each subfolder as a folder of its own, so that
    a file a run creates there (`data/model.pt`) is created in the build, never in the project."""
    folder.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_dir() and not path.is_symlink():
            if path.name != "__pycache__":
                _mirror(path, folder / path.name)
            continue
        site_tree.link(folder / path.name, path)


def _translated(site: project.Project, lang: languages.Language, tutorial: project.Tutorial, staged: Path,
                generator: str) -> tuple[str | bytes, TranslationStatus]:
    """TUTORIAL's script in LANG and its status: as staged at STAGED where it was generated from the same inputs
    (a build of a real site generates hundreds), else generated."""
    inputs = _inputs(site, lang, tutorial, generator)
    status_path = staged.with_name(f"{staged.stem}.i18n.json")
    try:
        kept = TranslationStatus.read(status_path) if staged.is_file() else None
    except RecordError:
        kept = None
    if kept is not None and kept.inputs == inputs:
        return staged.read_bytes(), kept
    text, report = translate.generate(site, lang, tutorial)
    return text, TranslationStatus(total=report.total, english=report.english, problems=tuple(report.problems),
                                   inputs=inputs)


def _gallery_files(site: project.Project, lang: languages.Language, folder: Path, staged: Path,
                   reports: list[translate.Report], sections: Collection[Path], generator: str) -> dict[str, Content]:
    """What a gallery folder or section (staged at STAGED) holds in a language: scripts translated, all else
    linked."""
    wanted: dict[str, Content] = {}
    tutorials = {t.path: t for t in site.tutorials}
    for path in sorted(folder.iterdir()):
        if path in sections:
            wanted[path.name] = None  # a section: synced on its own
        elif path in tutorials and lang != site.languages.source:
            text, status = _translated(site, lang, tutorials[path], staged / path.name, generator)
            wanted[path.name] = text
            wanted[f"{path.stem}.i18n.json"] = status.to_json()
            reports.append(translate.Report(total=status.total, english=status.english, problems=list(status.problems)))
        elif path.name != "__pycache__":
            wanted[path.name] = path  # the header (translated by Sphinx), helper modules, data: as they are
    return wanted


def _generated(folder: Path, stem: str) -> list[Path]:
    """What sphinx-gallery (and gallery.render) generated for the tutorial STEM in a gallery folder (its names:
    tests/test_sphinx_gallery_api.py checks they are those of the files sphinx-gallery's functions write)."""
    thumbnails = (folder / "images" / "thumb").glob(thumbnail_name(glob.escape(stem), ".*"))
    files = [path for path in folder.glob(f"{glob.escape(stem)}.*") if path.is_file()]
    return [*files, *figure_files(folder / "images", stem), *thumbnails]


def _drop_removed_pages(site: project.Project, gallery: project.Gallery, generated: Path) -> None:
    """sphinx-gallery never removes what it generated for a tutorial (or section) that is gone, and Sphinx
    would go on building its page: remove it once its script is gone."""
    if not generated.is_dir():
        return
    sections = {folder.relative_to(site.root / gallery.examples_dir) for folder in site.sections(gallery)}
    for folder in [generated, *(d for d in generated.iterdir() if (d / "index.rst").is_file())]:
        relative = folder.relative_to(generated)
        if relative not in sections:
            shutil.rmtree(folder)
            continue
        scripts = {path.stem for path in site.scripts(site.root / gallery.examples_dir / relative)}
        for page in folder.glob("*.rst"):
            if page.stem not in (*scripts, "index", TIMES_PAGE) and not site.copied(page.name):
                for path in _generated(folder, page.stem):
                    path.unlink()


def _claimed(site: project.Project) -> set[PurePosixPath]:
    """The paths of the staged tree that are not links to the site's: a gallery's source folder (staged by sync)
    and its pages' folder, and what sphinx-gallery writes beside them at the source root, the page of all the
    computation times (unless conf.py turns them off) and the backreferences' folder (where conf.py names one).
    sphinx-gallery writes them where it finds them, so that a link there would write into the site's own files
    (a times page a site committed, as PyTorch's Korean tutorials did)."""
    claimed = {PurePosixPath(path) for g in site.galleries for path in (g.examples_dir, g.gallery_dir)}
    if site.options.get("write_computation_times", True):
        claimed.add(PurePosixPath(f"{TIMES_PAGE}.rst"))
    backreferences = site.options.get("backreferences_dir")
    if isinstance(backreferences, str | Path) and str(backreferences) and not Path(backreferences).is_absolute():
        claimed.add(PurePosixPath(Path(backreferences).as_posix()))
    return claimed


def overlay(tree: BuildTree, site: project.Project, files: Mapping[PurePosixPath, Path],
            skip: Collection[Path] = ()) -> None:
    """Replace pages of the source language's staged tree with FILES (a translated copy's, by path from the site's
    root), each a file of its own there: never written through a link into the project."""
    src = tree.src(site.languages.source)
    site_tree.mirror(site.root, src, (tree.root, *skip), _claimed(site) | set(files))
    for relative, path in files.items():
        (src / relative).unlink(missing_ok=True)
        shutil.copyfile(path, src / relative)


def stage(tree: BuildTree, site: project.Project, lang: languages.Language,
          skip: Collection[Path] = ()) -> tuple[Path, list[translate.Report]]:
    """The Sphinx source tree of one language, standing for the whole site (core.site_tree; SKIP: the folders of
    the build, the published tree, the venv); returns (path, translation reports)."""
    src = tree.src(lang)
    site_tree.mirror(site.root, src, (tree.root, *skip), _claimed(site))
    reports: list[translate.Report] = []
    generator = _generator() if lang != site.languages.source else ""
    for gallery in site.galleries:
        sections = site.sections(gallery)
        for folder in sections:
            staged = src / folder.relative_to(site.root)
            _sync_folder(staged, _gallery_files(site, lang, folder, staged, reports, sections, generator))
        _drop_removed_pages(site, gallery, src / gallery.gallery_dir)
    mo_dir = src / LOCALE / lang.code / "LC_MESSAGES"
    if lang == site.languages.source:
        shutil.rmtree(src / LOCALE, ignore_errors=True)
        return src, reports
    wanted = {}
    for name, po in catalogs.site_catalogs(site, lang).items():
        catalog, problems = translate.usable_site_catalog(translate.domain_of(name), po)
        reports.append(translate.Report(problems=problems))
        buffer = io.BytesIO()
        write_mo(buffer, catalog, use_fuzzy=False)
        wanted[mo_dir / f"{name}.mo"] = buffer.getvalue()
    for old in mo_dir.rglob("*.mo") if mo_dir.is_dir() else ():
        if old not in wanted:
            old.unlink()  # its catalog is gone
    for path, data in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_if_changed(path, data)
    return src, reports

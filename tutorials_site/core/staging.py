"""Staging: the Sphinx source tree of one language, under <builddir>/src/<seg>/.

English links the repository's sources in; a translated language gets its
tutorial scripts generated from the English ones and its catalogs (translate),
with a translation report beside each, and its compiled site catalogs in _locale/.
Unchanged files keep their mtimes, so Sphinx and sphinx-gallery see no change.
"""

import glob
import io
import shutil
from collections.abc import Collection, Mapping
from pathlib import Path

from babel.messages.mofile import write_mo

from . import catalogs, languages, project, translate
from .layout import PAGES, ROOT, STATIC, BuildTree, figure_files

# What a staged folder holds under each name: text (or bytes) to write, a file to link, or None: a folder
# synced on its own.
Content = str | bytes | Path | None


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or link.is_file():
        link.unlink()
    link.symlink_to(target)


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
            _link(folder / name, content)
        else:
            _write_if_changed(folder / name, content)


def working_folder(tree: BuildTree, tutorial: project.Tutorial) -> Path:
    """Where a tutorial runs: links to its folder's files (data beside it is found), writes stay in the build."""
    source = tutorial.path.parent
    folder = tree.workdir(source.relative_to(tutorial.root).as_posix())
    _mirror(source, folder)
    return folder


def _mirror(source: Path, folder: Path) -> None:
    """FOLDER links each file of SOURCE and mirrors each subfolder as a folder of its own, so that a file a
    run creates there (`data/model.pt`) is created in the build, never in the project; what runs left
    there before stays."""
    if folder.is_symlink():
        folder.unlink()  # a subfolder linked whole by an earlier version of this function
    folder.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        mine = folder / path.name
        if path.is_dir() and not path.is_symlink():
            if path.name != "__pycache__":
                _mirror(path, mine)
            continue
        if mine.is_dir() and not mine.is_symlink():
            shutil.rmtree(mine)  # a run's folder where the project now has a file
        _link(mine, path)


def _gallery_files(site: project.Project, lang: languages.Language, folder: Path, reports: list[translate.Report],
                   sections: Collection[Path]) -> dict[str, Content]:
    """What a gallery folder or section holds in a language: scripts translated, all else linked."""
    wanted: dict[str, Content] = {}
    tutorials = {t.path: t for t in site.tutorials}
    for path in sorted(folder.iterdir()):
        if path in sections:
            wanted[path.name] = None  # a section: synced on its own
        elif path in tutorials and lang is not languages.SOURCE:
            text, report = translate.generate(lang, tutorials[path])
            wanted[path.name] = text
            wanted[f"{path.stem}.i18n.json"] = report.as_json()
            reports.append(report)
        elif path.name != "__pycache__":
            wanted[path.name] = path  # the header (translated by Sphinx), helper modules, data: as they are
    return wanted


def _generated(folder: Path, stem: str) -> list[Path]:
    """What sphinx-gallery (and gallery.render) generated for the tutorial STEM in a gallery folder (its names:
    tests/test_sphinx_gallery_api.py checks they are those of the files sphinx-gallery's functions write)."""
    thumbnails = (folder / "images" / "thumb").glob(f"sphx_glr_{glob.escape(stem)}_thumb.*")
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
            if page.stem not in (*scripts, "index", "sg_execution_times") and not site.copied(page.name):
                for path in _generated(folder, page.stem):
                    path.unlink()


def stage(tree: BuildTree, lang: languages.Language) -> tuple[Path, list[translate.Report]]:
    """The Sphinx source tree of one language; returns (path, translation reports)."""
    src = tree.src(lang)
    src.mkdir(parents=True, exist_ok=True)
    for name in (*PAGES, STATIC):
        if (ROOT / name).exists():
            _link(src / name, ROOT / name)  # pages refer to `/_static/img/...` from the source root
    reports: list[translate.Report] = []
    site = project.current()
    for gallery in site.galleries:
        sections = site.sections(gallery)
        for folder in sections:
            _sync_folder(src / folder.relative_to(ROOT), _gallery_files(site, lang, folder, reports, sections))
        _drop_removed_pages(site, gallery, src / gallery.gallery_dir)
    if lang is languages.SOURCE:
        return src, reports
    mo_dir = src / "_locale" / lang.code / "LC_MESSAGES"
    mo_dir.mkdir(parents=True, exist_ok=True)
    for domain in catalogs.SITE_DOMAINS:
        po = catalogs.catalog_dir(lang) / f"{domain}.po"
        if po.exists():
            catalog, problems = translate.usable_site_catalog(domain, po)
            reports.append(translate.Report(problems=problems))
            buffer = io.BytesIO()
            write_mo(buffer, catalog, use_fuzzy=False)
            _write_if_changed(mo_dir / f"{domain}.mo", buffer.getvalue())
    return src, reports

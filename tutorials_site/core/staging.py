"""Staging: the Sphinx source tree of one language, under <builddir>/src/<seg>/.

English links the repository's sources in; a translated language gets its
tutorial scripts generated from the English ones and its catalogs (translate),
with a translation report beside each, and its compiled site catalogs in _locale/.
Unchanged files keep their mtimes, so Sphinx and sphinx-gallery see no change.
"""

import io
import shutil
from pathlib import Path

from babel.messages.mofile import write_mo

from . import catalogs, languages, translate
from .layout import GALLERIES, PAGES, ROOT


def _link(link, target):
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or link.is_file():
        link.unlink()
    link.symlink_to(target)


def _write_if_changed(path, data):
    """Keeps mtimes (and sphinx-gallery's md5 cache) of unchanged generated files."""
    data = data.encode() if isinstance(data, str) else data
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def _sync_folder(folder, wanted):
    """Make `folder` hold exactly `wanted` ({name: text to write, or a path to link})."""
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for entry in folder.iterdir():
        if entry.name not in wanted:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for name, content in wanted.items():
        if isinstance(content, Path):
            _link(folder / name, content)
        else:
            _write_if_changed(folder / name, content)


def working_folder(tree, src_dir):
    """Where a folder's tutorials run: links to its files (data beside a tutorial is found), writes stay in the build."""
    folder = tree.workdir(src_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for path in (ROOT / src_dir).iterdir():
        _link(folder / path.name, path)
    return folder


def stage(tree, lang):
    """The Sphinx source tree of one language; returns (path, translation reports)."""
    src = tree.src(lang)
    src.mkdir(parents=True, exist_ok=True)
    for name in PAGES:
        _link(src / name, ROOT / name)
    reports = []
    for src_dir in GALLERIES:
        wanted = {}
        for path in sorted((ROOT / src_dir).iterdir()):
            if path.suffix != ".py":
                wanted[path.name] = path  # the gallery header: translated by Sphinx
            elif lang is languages.SOURCE:
                wanted[path.name] = path
            else:
                text, report = translate.generate(lang, src_dir, path)
                wanted[path.name] = text
                wanted[f"{path.stem}.i18n.json"] = report.as_json()
                reports.append(report)
        _sync_folder(src / src_dir, wanted)
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

"""The site at the project root, and the folders that stand for it: links to its entries.

Everything at the root is the site's, as it is to plain sphinx-build (its conf.py, pages, galleries, static
files, templates, local extensions, data, and its README, Makefile, tests and CI files, which conf.py's
exclude_patterns keep out of its pages), except what is no source of any site: git's folder, tools' caches,
virtual environments, and what a build makes (the build folder, the published tree). Sphinx reads a staged copy
of the site (core.site.staging) and conf.py is evaluated in one (core.project): a folder whose entries link to the
root's, so that conf.py's relative paths resolve as at the root while what it or a build writes stays out of the
project.
"""

import re
import shutil
from collections.abc import Collection, Iterator
from pathlib import Path, PurePosixPath

# Entries no site has as sources: git's folder and the caches of Python and its tools.
NOT_SOURCES = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox"})
CONF = "conf.py"
# Files an editor or a run writes beside what it saves, which change no page and no run: hidden files (Emacs' `.#x`
# lock, Vim's `.x.swp`), backups (`x~`), Emacs' `#x#`, Vim's write test `4913`, temporary files (`x.tmp`, JetBrains'
# `x___jb_tmp___`), compiled Python.
NOT_INPUTS = re.compile(r"(^\.|~$|^#.*#$|\.sw[a-p]$|\.py[cod]$|^4913$|\.tmp$|___jb_\w+___$)")


def link(path: Path, target: Path) -> None:
    """PATH becomes a symbolic link to TARGET (a file or a link in its way is replaced; a link already there kept)."""
    if path.is_symlink() and path.resolve() == target.resolve():
        return
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.symlink_to(target)


def made_by_builds(folder: Path) -> bool:
    """Whether FOLDER is what a build, a publish or a tool made: a build folder (another BUILDDIR: its staged
    sources, and its runs or, built without executing, its doctrees), a published tree, or a virtual environment."""
    return (((folder / "src").is_dir() and ((folder / "runs").is_dir() or (folder / "doctrees").is_dir()))
            or (folder / "versions.json").is_file() or (folder / "pyvenv.cfg").is_file())


def entries(root: Path, skip: Collection[Path] = ()) -> list[Path]:
    """The site's entries at ROOT, sorted: all but NOT_SOURCES, conf.py and the folders SKIP names (the build
    folder, the published tree) or that hold one of them, or that builds and tools made."""
    skipped = [Path(p).resolve() for p in skip]
    return sorted(entry for entry in Path(root).iterdir()
                  if entry.name not in NOT_SOURCES and entry.name != CONF and not made_by_builds(entry)
                  and not any(s == entry.resolve() or s.is_relative_to(entry.resolve()) for s in skipped))


def files(root: Path, skip: Collection[Path] = ()) -> Iterator[Path]:
    """Every file of the site, conf.py included, in a stable order (links followed, __pycache__ left out)."""
    yield Path(root) / CONF
    for entry in entries(root, skip):
        if entry.is_dir():
            yield from sorted(p for p in entry.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        elif entry.is_file():
            yield entry


def mirror(root: Path, folder: Path, skip: Collection[Path] = (), claimed: Collection[PurePosixPath] = ()) -> None:
    """Make FOLDER stand for the site at ROOT: a link to each of its entries, and a copy of conf.py (so that
    `__file__` resolves inside FOLDER). A CLAIMED path (a gallery's folders, staged on their own) is left
    alone, and each folder above one becomes a real folder mirrored the same way. Links to entries that are
    gone are removed; files a build or conf.py made in FOLDER are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    conf = Path(root) / CONF
    if conf.is_file():
        data = conf.read_bytes()
        target = folder / CONF
        if target.is_symlink() or not target.is_file() or target.read_bytes() != data:
            target.unlink(missing_ok=True)
            target.write_bytes(data)
    _mirror_entries(entries(root, skip), folder, claimed, PurePosixPath())


def _mirror_entries(sources: list[Path], folder: Path, claimed: Collection[PurePosixPath],
                    here: PurePosixPath) -> None:
    wanted = {source.name for source in sources}
    for entry in list(folder.iterdir()):
        if entry.is_symlink() and entry.name not in wanted:
            entry.unlink()  # its entry left the site
    for source in sources:
        relative = here / source.name
        if relative in claimed:
            if (folder / source.name).is_symlink():
                (folder / source.name).unlink()  # staged on its own: never written through a link into the project
            continue
        if any(path.is_relative_to(relative) for path in claimed):
            mine = folder / source.name
            if mine.is_symlink() or mine.is_file():
                mine.unlink()
            mine.mkdir(exist_ok=True)
            _mirror_entries(sorted(source.iterdir()), mine, claimed, relative)
        else:
            link(folder / source.name, source)

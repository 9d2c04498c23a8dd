"""What of the project a tutorial's run sees, which is what its fingerprint covers, whatever reads it.

Python's audit hooks see what Python opens, not what `cat`, C code or another program reads; a fingerprint made
of what a run was seen to read misses those. So the sandbox shows a run the project only in part, and the
fingerprint covers all of that part (Bazel's hermetic actions, which see their declared inputs only, are the
model; tracing reads below Python would need ptrace or seccomp notification in the supervisor, which the sandbox's
own filter refuses and which no C library call escapes less). A run sees, of the project:

- its own folder, all of it, but the other tutorials' scripts (a helper module, a data folder, a gallery header
  beside it are visible; another tutorial of the folder is not: changing it runs that one alone), and folders that
  builds and tools make (a build folder, a venv, caches);
- the files its `# tutorials-reads:` lines declare, anywhere in the project;
- the modules of the folders conf.py puts on sys.path (their `.py` files and packages, conf.py and the
  tutorials excepted), which a stock build's examples can import;
- regular files and folders only: a socket, a FIFO or a device file of the project is never shown (a unix
  socket in the project cannot be connected to); nor a hidden file or an editor's swap or backup file, which
  appear and go as files are edited (site_tree.NOT_INPUTS).

Everything else of the project (other galleries, `_static/`, the site's tests) is hidden: reading it fails with
`No such file or directory`, as for a file that does not exist; the run declares what it needs.
"""

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import project, site_tree


@dataclass(frozen=True)
class Visible:
    """What a run sees of the project: what the sandbox binds, read-only, each at its own path, and every file
    those hold, by path relative to the project (what its fingerprint digests)."""

    binds: tuple[Path, ...]
    files: tuple[str, ...]


def _kind(path: Path) -> str:
    """"dir", "file" or "other" (a socket, FIFO or device, or nothing), links followed."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "other"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _whole(folder: Path, hidden: frozenset[Path]) -> bool:
    """Whether FOLDER holds nothing a run must not see: no hidden script, no socket or other special file, no
    folder builds make (it is then bound whole, and every file in it counts)."""
    for parent, folders, files in os.walk(folder):
        for name in files:
            path = Path(parent, name)
            if path.resolve() in hidden or _kind(path) != "file" or site_tree.NOT_INPUTS.search(name):
                return False
        for name in folders:
            if name in site_tree.NOT_SOURCES or site_tree.made_by_builds(Path(parent, name)):
                return False
    return True


def _files(folder: Path) -> Iterator[Path]:
    for parent, _, files in os.walk(folder):
        yield from (Path(parent, name) for name in files)


def _shown(folder: Path, hidden: frozenset[Path]) -> Iterator[Path]:
    """What of FOLDER a run sees, as few binds as may be: a folder holding nothing hidden is bound whole."""
    for entry in sorted(folder.iterdir()):
        kind = _kind(entry)
        if site_tree.NOT_INPUTS.search(entry.name):
            continue  # an editor's swap or backup file, a hidden file: saved meanwhile, it makes no run stale
        if kind == "file" and entry.resolve() not in hidden:
            yield entry
        elif kind == "dir" and entry.name not in site_tree.NOT_SOURCES and not site_tree.made_by_builds(entry):
            yield from ([entry] if _whole(entry, hidden) else _shown(entry, hidden))


def _module_files(folder: Path, hidden: frozenset[Path]) -> Iterator[Path]:
    """The modules of a sys.path FOLDER: its .py files and its packages (folders with an __init__.py)."""
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        if entry.name == site_tree.CONF or entry.resolve() in hidden:
            continue
        if entry.suffix == ".py" and _kind(entry) == "file":
            yield entry
        elif _kind(entry) == "dir" and (entry / "__init__.py").is_file():
            yield from ([entry] if _whole(entry, hidden) else _shown(entry, hidden))


def visible(site: project.Project, tutorial: project.Tutorial, declared: list[Path], modules: bool = True) -> Visible:
    """What TUTORIAL's run sees of SITE's project (see above), with the files it DECLARED it reads; MODULES: with
    conf.py's sys.path modules (what Sphinx's process, which knows no sys.path of the build's, leaves out)."""
    root = site.root.resolve()
    hidden = frozenset(t.path.resolve() for t in site.tutorials)  # its own is bound apart: the text the build read
    binds = list(_shown(tutorial.path.parent, hidden))
    for folder in map(Path, site.sys_path if modules else ()):
        if folder.resolve().is_relative_to(root):
            binds += _module_files(folder, hidden)
    binds += [path for path in declared if path.resolve() not in hidden]
    binds = [path for path in dict.fromkeys(binds) if path.resolve().is_relative_to(root)]
    files = {path for bind in binds for path in ([bind] if _kind(bind) == "file" else _files(bind))}
    return Visible(tuple(binds), tuple(sorted(os.path.relpath(path, site.root) for path in files
                                              if _kind(path) == "file" and path.resolve().is_relative_to(root))))

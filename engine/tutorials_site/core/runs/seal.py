"""Sealed runs: the stamp of a run lists every file of it by digest, and a run is taken only as it was sealed.

Whatever of a run reaches a page comes from its files: result.json (each block's reST, its texts, the names
for code links), the figures under page/, and what the build reads back (options.json, the output files). The
build seals them all when it stamps the run (Stamp.files: path, sha256 and size of each file but the stamp);
a kept run, one REUSE gives and a shard's are taken, and `tutorials-site check` and `tutorials-site assemble` pass, only where the
run's files are exactly those, none missing, none changed and none added. A run holds folders and regular files
only: a symbolic link anywhere in it, the run folder and the folders above it in the runs folder included, is
never followed, and refuses the run (each step is opened with O_NOFOLLOW, each file checked to be regular).
"""

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from ..errors import SiteError
from ..files import open_regular
from .records import RunFile

# The files of a run its seal leaves out: the stamp that holds the seal, its signature (core.runs.signing), and the
# mark of a copy taken without the key to verify it.
from .run_folder import SIGNATURE as SIGNATURE
from .run_folder import STAMP as STAMP
from .run_folder import UNVERIFIED as UNVERIFIED

_UNSEALED = (STAMP, SIGNATURE, UNVERIFIED)
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class SealError(SiteError):
    """A run that cannot be sealed: it holds a symbolic link, or something else than folders and regular files."""


def _file(folder: int, name: str, path: str) -> RunFile:
    digest, size = hashlib.sha256(), 0
    with os.fdopen(open_regular(name, dir_fd=folder), "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return RunFile(path=path, sha256=digest.hexdigest(), size=size)


def _walk(folder: int, prefix: str, where: Path, found: dict[str, RunFile], odd: list[str]) -> None:
    """Each regular file under the open FOLDER into FOUND (by its path in the run), anything else into ODD."""
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    inner = os.open(entry.name, _FOLDER, dir_fd=folder)
                    try:
                        _walk(inner, f"{path}/", where, found, odd)
                    finally:
                        os.close(inner)
                else:
                    found[path] = _file(folder, entry.name, path)  # a link or a FIFO raises OSError, never followed
            except OSError as error:
                odd.append(f"{where / path}: {error.strerror}; a run holds folders and regular files only")


def _files(runs_root: Path, key: str) -> tuple[dict[str, RunFile] | None, list[str]]:
    """Every regular file of the run KEY under RUNS_ROOT (its stamp included), by its path in the run, and the
    problems of what is not one: a link, a FIFO, a device. None and why, for a run folder (or a folder of KEY)
    that is a link, or none."""
    found: dict[str, RunFile] = {}
    odd: list[str] = []
    step, folder = runs_root, -1
    try:
        folder = os.open(runs_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the build folder's, as given
        for part in PurePosixPath(key).parts:
            step = step / part
            inner = os.open(part, _FOLDER, dir_fd=folder)  # a link at any step of KEY: ELOOP or ENOTDIR
            os.close(folder)
            folder = inner
    except OSError as error:
        odd.append(f"{step}: {'a symbolic link, never followed' if os.path.islink(step) else error.strerror}; "
                   "a run's folder is a folder of its own")
        return None, odd
    else:
        _walk(folder, "", runs_root / key, found, odd)
    finally:
        if folder >= 0:
            os.close(folder)
    return found, odd


def seal(runs_root: Path, key: str) -> tuple[RunFile, ...]:
    """The seal of the run KEY under RUNS_ROOT, for its stamp: each of its files but the stamp, in order.
    SealError naming each link or other entry that is no folder or regular file."""
    found, odd = _files(runs_root, key)
    if found is None or odd:
        raise SealError("; ".join(odd))
    return tuple(found[path] for path in sorted(found) if path not in _UNSEALED)


def verify(runs_root: Path, key: str, sealed: Sequence[RunFile]) -> list[str]:
    """Why the run KEY under RUNS_ROOT is not the run SEALED lists (empty: it is), each problem naming the file
    and what differs: one missing, changed or added, a link or anything else than a folder or regular file.
    The one rule every reader of a kept, reused, shard's or published run applies (core.runs.currency)."""
    found, problems = _files(runs_root, key)
    if found is None:
        return problems
    where = runs_root / key
    expected = {item.path: item for item in sealed}
    for path in sorted(set(expected) | set(found) - set(_UNSEALED)):
        have, want = found.get(path), expected.get(path)
        if want is None:
            problems.append(f"{where / path}: not in its stamp's seal (added after the run?)")
        elif have is None:
            if not any(problem.startswith(f"{where / path}:") for problem in problems):
                problems.append(f"{where / path}: sealed in its stamp, missing")
        elif have != want:
            problems.append(f"{where / path}: not the file its stamp sealed ({have.size} bytes, sha256 "
                            f"{have.sha256[:12]}; sealed: {want.size} bytes, {want.sha256[:12]}): edited after the run?")
    return problems

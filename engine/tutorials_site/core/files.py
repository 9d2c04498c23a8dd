"""Files replaced whole: whoever reads one sees the old contents or the new, never part of either."""

import errno
import os
import secrets
import stat
from pathlib import Path

# What a writer killed before its rename leaves beside the file (see write_atomically).
LEFTOVERS = ".*.tmp"


def write_atomically(path: Path | str, data: str | bytes, *, durable: bool = False) -> None:
    """Replace the file at `path` (and create its folders) with `data`, text written as UTF-8.

    The data goes to a temporary file beside `path`, which one rename puts in its place: a write that
    fails leaves the old file as it was and removes the temporary. Each write has a temporary of its
    own, so two processes writing one file cannot mix their data. `durable` puts the data on disk
    before the rename, so that not even a crash of the machine can leave an empty file (it costs a
    disk flush: for what is published, not for a build's records).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:  # created as any new file is (umask), not private as mkstemp's are
            f.write(data.encode() if isinstance(data, str) else data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_regular(name: Path | str, dir_fd: int | None = None) -> int:
    """A read-only descriptor of the regular file NAME (in the folder DIR_FD where given), never through a
    symbolic link at its last step; OSError saying so for a link, and for a FIFO, device or folder, which a
    record or a run never holds (opened without waiting: a FIFO cannot hang the reader)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link, never followed", str(name)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(name))
    return fd


def read_regular(path: Path | str) -> bytes:
    """The bytes of the regular file at PATH, never read through a symbolic link (open_regular)."""
    with os.fdopen(open_regular(path), "rb") as file:
        return file.read()


def shown(path: Path | str) -> str:
    """PATH as messages show it: as the person who ran the command, at its working folder (the project root,
    usually), types it."""
    path = Path(path)
    here = Path.cwd()
    return str(path.relative_to(here)) if path.is_absolute() and path.is_relative_to(here) else str(path)

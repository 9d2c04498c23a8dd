"""One build at a time in a build folder (BUILDDIR).

Two builds writing one folder would share its runs, logs and staged sources and
mix their output. A build takes the folder's lock exclusively, `make check` and
`make publish` take it shared (they read what a build writes); whoever finds it
taken stops at once with the holder's pid, before changing anything. The lock is
flock(2) on BUILDDIR/build.lock: the kernel drops it when the holding process
ends, however it ends, so a killed build never blocks the next one.
"""

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import SiteError
from .layout import BuildTree


class BuildFolderBusy(SiteError):
    """The build folder is locked by another command."""


def _holders(fd: int) -> list[str]:
    """The processes holding a flock on the file open at FD, as 'pid N (command line)', from /proc/locks."""
    inode = str(os.fstat(fd).st_ino)
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:  # not Linux: the message goes without the pid
        return []
    holders = []
    for fields in (line.split() for line in lines):
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2147036 0 EOF"; a waiter's line has "->" after the number.
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == inode:
            pid = fields[4]
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                command = ""
            holders.append(f"pid {pid}" + (f" ({command.strip()})" if command.strip() else ""))
    return holders


@contextlib.contextmanager
def locked(tree: BuildTree, *, write: bool) -> Iterator[None]:
    """Hold TREE for the duration: alone to WRITE it, beside other readers to read it.

    A reader of a folder no build ever locked (no build.lock: another tree, or none) holds nothing,
    and creates nothing there.
    """
    path = tree.root / "build.lock"
    if write:
        tree.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    else:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            yield
            return
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if write else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            holders = ", ".join(_holders(fd)) or "pid unknown"
            raise BuildFolderBusy(
                f"BUILDDIR={tree.root}: in use by another build or check ({holders}); wait for it to end"
                + (", or build into another folder (BUILDDIR=...)" if write else ", then run this again")
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock

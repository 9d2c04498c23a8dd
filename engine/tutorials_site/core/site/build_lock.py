"""One build at a time in a build folder (BUILDDIR).

Two builds writing one folder would share its runs, logs and staged sources and
mix their output. A build takes the folder's lock exclusively, `tutorials-site check` and
`tutorials-site publish` take it shared (they read what a build writes); whoever finds it
taken stops at once with the holder's pid, before changing anything. The lock is
flock(2) on the folder itself, so nothing is left in it: the kernel drops the
lock when the holding process ends, however it ends (SIGKILL too), so a killed
build never blocks the next one.
"""

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import SiteError
from ..layout import BuildTree


class BuildFolderBusy(SiteError):
    """The build folder is locked by another command."""


def _holders(fd: int) -> list[str]:
    """The processes holding a flock on what FD is open on, as 'pid N (command line)', from /proc/locks."""
    inode = str(os.fstat(fd).st_ino)
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:  # not Linux: the message goes without the pid
        return []
    holders = []
    for fields in (line.split() for line in lines):
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2147036 0 EOF"; a waiter's line has "->" after the number.
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == inode:
            pid = fields[4]  # the process that took the lock; processes it forked hold it with it
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                command = "ended; processes it forked are still finishing"
            holders.append(f"pid {pid}" + (f" ({command.strip()})" if command.strip() else ""))
    return holders


def _open_locked(tree: BuildTree, write: bool) -> int | None:
    """A descriptor of TREE's folder, locked; None for a reader of a folder that does not exist."""
    while True:
        if write:
            tree.root.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(tree.root, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:  # removed since (an empty folder, by the writer that made it)
            if write:
                continue
            return None
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if write else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            with contextlib.suppress(FileNotFoundError):
                if os.path.samestat(os.fstat(fd), os.stat(tree.root)):
                    return fd
        except BlockingIOError:
            holders = ", ".join(_holders(fd)) or "pid unknown"
            os.close(fd)
            raise BuildFolderBusy(
                f"BUILDDIR={tree.root}: in use by another build or check ({holders}); wait for it to end"
                + (", or build into another folder (BUILDDIR=...)" if write else ", then run this again")
            ) from None
        os.close(fd)  # the folder was removed and made again while we opened it: lock the one that is there


@contextlib.contextmanager
def locked(tree: BuildTree, *, write: bool) -> Iterator[None]:
    """Hold TREE's folder for the duration: alone to WRITE it, beside other readers to read it.

    A writer makes the folder, and removes it again if it made it and left it empty (a build refused
    before it wrote anything); a reader of a folder that does not exist holds nothing.
    """
    made = write and not tree.root.exists()
    fd = _open_locked(tree, write)
    try:
        yield
    finally:
        if fd is not None:
            if made:
                with contextlib.suppress(OSError):  # not empty: a build's output
                    tree.root.rmdir()
            os.close(fd)  # releases the lock

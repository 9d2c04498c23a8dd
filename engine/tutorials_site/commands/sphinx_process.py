"""One language's sphinx-build, in a fork of the build's process (Sphinx keeps global state per process),
with what every fork would otherwise import for itself imported once before."""

import io
import multiprocessing
import os
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TextIO, cast

from ..core.text import sphinx_warnings

# The most lines a failed language's build shows of what Sphinx reported after its last warning.
FAILURE_LINES = 100


# What each language's log says first: sphinx-gallery's own summary would read as if nothing ran.
LOG_PREFACE = (
    "# Sphinx's and sphinx-gallery's output for one language. The build shows the warnings and errors below\n"
    "# at their authors' files and lines, and this whole log with VERBOSE=1. The tutorials ran before Sphinx\n"
    "# started, each once for every language (the build's [execute] lines; <builddir>/runs/); sphinx-gallery\n"
    "# renders those runs and executes nothing itself, so where it says that it executed no example\n"
    "# (plot_gallery was False, executed 0 out of 0 files) that is as it should be.\n"
)


def preload() -> None:
    """Import and warm up, once, what every language's build would otherwise do for itself.

    The builds are forked from this process, so each starts with Sphinx, its
    built-in extensions, the theme, sphinx-gallery with matplotlib, MyST, the
    search languages and the Python lexer's compiled rules already in memory.
    """
    import importlib

    import myst_parser.sphinx_ext.main  # noqa: F401
    import pygments.lexers.python
    import sphinx.application
    import sphinx.cmd.build  # noqa: F401
    import sphinx.search.ja  # noqa: F401
    import sphinx.search.zh  # noqa: F401
    import sphinx_rtd_theme  # noqa: F401

    from .. import sphinx_gallery_build

    sphinx_gallery_build.preload()
    for name in sphinx.application.builtin_extensions:
        importlib.import_module(name)
    pygments.lexers.python.PythonLexer()  # compiles its token rules on the class, for every fork


class _Copied(io.TextIOBase):
    """Standard error for Sphinx: written into the log, in order with the rest, and copied: Sphinx reports its
    warnings and, when it fails, what went wrong there."""

    def __init__(self, log: io.TextIOBase) -> None:
        self.log, self.copy = log, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.log.write(text)

    def flush(self) -> None:
        self.log.flush()

    # Sphinx writes what this encoding can take. A property, as in io (whose stubs call it an attribute).
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.log.encoding

    def fileno(self) -> int:
        return 2  # the log too (dup2 below)


# What one language's sphinx-build gives: its exit status, its seconds, and what it reported after its last warning.
SphinxResult = tuple[int, float, list[str]]


class Forked:
    """One language's sphinx-build in a fresh fork of this process (Sphinx keeps global state per process), which
    is no daemon: an extension or conf.py may start processes of its own, as under a plain sphinx-build (a pool's
    daemonic worker may not). Its result comes back through a pipe."""

    def __init__(self, command: list[str], log: Path) -> None:
        context = multiprocessing.get_context("fork")
        self._results, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_send_sphinx, args=(sending, command, log), daemon=False)
        self._process.start()
        sending.close()

    def ready(self, timeout: float = 0) -> bool:
        """Whether its result is there (or its process is gone), waiting at most TIMEOUT seconds."""
        return self._results.poll(timeout) or not self._process.is_alive()

    def get(self) -> SphinxResult:
        """Its result; a process that died without one failed."""
        try:
            result: SphinxResult = self._results.recv()
        except EOFError:
            result = (1, 0.0, [f"its process ended without a result (exit status {self._process.exitcode})"])
        self._process.join()
        return result


def _send_sphinx(sending: Connection, command: list[str], log: Path) -> None:
    sending.send(_sphinx(command, log))
    sending.close()


def _sphinx(command: list[str], log: Path) -> SphinxResult:
    """One language's sphinx-build, in a process forked for it alone; its output goes to `log`.
    Returns its exit status, how long it took and, when it failed, the end of what it reported after its
    last warning (an exception, for example; the warnings are shown at their authors' lines)."""
    from sphinx.cmd.build import build_main

    started = time.perf_counter()
    with open(log, "w") as out:
        out.write(LOG_PREFACE)
        out.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        stdout = open(1, "w", closefd=False)  # noqa: SIM115 (the process ends with the build)
        stderr = _Copied(stdout)
        sys.stdout, sys.stderr = stdout, cast(TextIO, stderr)  # a stream as far as Sphinx writes to it
        os.chdir(command[-2])  # the staged tree, which stands for the site root: as `sphinx-build . _build` there
        # Its progress lines too: they erase and redraw the line where CI or FORCE_COLOR is set, --no-color
        # or not (sphinx.util.display.status_iterator).
        os.environ["NO_COLOR"] = "1"
        status = build_main(command)
        report = sphinx_warnings.after_warnings(stderr.copy.getvalue(), FAILURE_LINES) if status else []
        return status, time.perf_counter() - started, report

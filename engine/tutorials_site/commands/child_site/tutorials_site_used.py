"""What a tutorial's processes import, recorded as they run (Python audit hooks), for its fingerprint (core.runs.used).

The runner installs the hook in its own process and names where to record in the environment
(VARIABLE); sitecustomize.py installs it in every Python process the tutorial starts (spawned ranks,
`subprocess` Pythons), and a forked process (a DataLoader worker) keeps its parent's. Each process
appends to a file of its own, <folder>/<pid>.jsonl, one JSON array a line, each written once:

    ["module", name]  the top-level name of a module it imported or loaded from outside the project
                      (an installed distribution's, or the standard library's)

Python's own module loading opens each source or bytecode file (io.open_code), so modules loaded
with importlib are recorded like `import` statements. The project's files are not recorded here: the
run's fingerprint holds every one it can see (core.runs.visibility), whatever reads it.
"""

import contextlib
import importlib.util
import json
import os
import sys
from typing import Any

VARIABLE = "TUTORIALS_SITE_USED"  # JSON: {"folder": where to record, "root": the project}


def _folder(path: str) -> str:
    return os.path.join(path, "")  # with its trailing separator: /a/b is no folder of /a/bc


class _Recorder:
    def __init__(self, folder: str, root: str) -> None:
        # Compared with the paths opened, links resolved: so are these.
        self.folder, self.root = _folder(os.path.realpath(folder)), _folder(os.path.realpath(root))
        self.seen: set[tuple[str, str]] = set()
        self.pid, self.fd = 0, -1

    def write(self, kind: str, value: str) -> None:
        if (kind, value) in self.seen:
            return
        self.seen.add((kind, value))
        if self.pid != os.getpid():  # the first line, or a forked child's: a file of its own
            if self.fd >= 0:
                os.close(self.fd)  # the parent's, inherited
            self.pid = os.getpid()
            # Its path is under self.folder, which the hook ignores: no event of this open is recorded.
            self.fd = os.open(os.path.join(self.folder, f"{self.pid}.jsonl"),
                              os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        os.write(self.fd, (json.dumps([kind, value]) + "\n").encode())

    def module_of(self, path: str) -> str | None:
        """The top-level module a file outside the project belongs to, from the sys.path folder holding it."""
        for entry in sys.path:
            if entry and path.startswith(_folder(entry)):
                parts = path[len(_folder(entry)):].split(os.sep)
                name = parts[1] if parts[0] == "__pycache__" and len(parts) > 1 else parts[0]
                return name.split(".", 1)[0] or None
        return None

    def opened(self, path: Any) -> None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str) or path.startswith(self.folder):
            return
        full = os.path.realpath(path)
        if full.endswith(".pyc") and f"{os.sep}__pycache__{os.sep}" in full:
            with contextlib.suppress(ValueError):  # a module's bytecode stands for its source
                full = importlib.util.source_from_cache(full)
        module = None if full.startswith(self.root) else self.module_of(full)
        if module:
            self.write("module", module)

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            self.opened(os.fspath(args[0]) if hasattr(args[0], "__fspath__") else args[0])
        elif event == "import":
            self.write("module", str(args[0]).split(".", 1)[0])

    def modules(self) -> None:
        """Record the top-level name of every module loaded now (the runner's own imports included)."""
        for name in list(sys.modules):
            self.write("module", name.split(".", 1)[0])


_recorder: _Recorder | None = None


def install(folder: str, root: str) -> None:
    """Record into FOLDER the modules this process and every process it starts imports from outside ROOT."""
    global _recorder
    os.makedirs(folder, exist_ok=True)
    _recorder = _Recorder(folder, root)
    sys.addaudithook(_recorder.hook)
    os.environ[VARIABLE] = json.dumps({"folder": folder, "root": root})


def install_from_environment() -> None:
    """In a process the tutorial started: record as its runner asked (VARIABLE), if it did."""
    asked = os.environ.get(VARIABLE)
    if asked and _recorder is None:
        settings = json.loads(asked)
        install(settings["folder"], settings["root"])


def finish() -> None:
    """At the end of the run: the modules loaded, which audit events may not all have shown."""
    if _recorder is not None:
        _recorder.modules()

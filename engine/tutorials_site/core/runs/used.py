"""What a run used, and whether it is still what is there: the part of a run's fingerprint that is its own.

While a tutorial runs, each of its Python processes records the modules it imported from outside the project
(commands/child_site/tutorials_site_used.py, into RUNDIR/out/used/<pid>.jsonl). Once it ended, the build makes
the run's Used record (record): each project file the run could see (core.runs.visibility: whatever read it,
Python, `cat` or C), by digest, and each installed distribution it imported, by name and release. A module it looked for and went
without (an optional dependency) is no part of it: installing it later runs nothing again, as installing
any distribution a run did not import. Whether a run is still current, these among the rest, core.runs.currency says.
"""

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

from . import run_folder
from .records import Used, UsedDistribution, UsedFile

FOLDER = run_folder.USED  # in a run folder: one file per process of the run
ABSENT = "absent"  # the digest of a file the run tried to open that does not exist


def release(version: str) -> str:
    """A version without its local label: the software, not the build it was made for."""
    return version.split("+", 1)[0]


def file_digest(path: Path) -> str:
    """The SHA-256 of the file at PATH, ABSENT where there is none."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT


def installed() -> dict[str, str]:
    """{canonical name: release} of each distribution the run's processes import from (sys.path's first)."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        if dist.metadata["Name"]:
            found.setdefault(canonicalize_name(dist.metadata["Name"]), release(dist.version))
    return found


def modules(folder: Path) -> frozenset[str]:
    """The top-level modules the run's processes recorded in FOLDER (none where it does not exist)."""
    found: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                kind, value = json.loads(line)
            except ValueError:
                continue  # a line cut short by a process killed while writing it
            if kind == "module" and isinstance(value, str):
                found.add(value)
    return frozenset(found)


def record(run_dir: Path, root: Path, files: Sequence[str], ignored: Collection[str]) -> Used:
    """The Used record of the run in RUN_DIR of a project at ROOT: FILES (relative to ROOT: what the run could see of
    it, core.runs.visibility), by digest as they are now, the build's own reading; the distributions of the modules
    its processes imported, less IGNORED (those the environment fingerprint counts by their pins), by release as
    installed now."""
    by_module = metadata.packages_distributions()
    versions = installed()
    names = {canonicalize_name(dist) for module in modules(run_dir / FOLDER) for dist in by_module.get(module, ())}
    return Used(files=tuple(UsedFile(path, file_digest(Path(root, path))) for path in sorted(files)),
                distributions=tuple(UsedDistribution(name, versions.get(name, ABSENT))
                                    for name in sorted(names - set(ignored))))


@dataclass(frozen=True)
class Present:
    """What a run's fingerprint is compared with: the project at ROOT and the environment fingerprint now.
    File digests and installed versions are looked up once each, the first time a run asks."""

    root: Path
    environment: str  # core.runs.fingerprint.environment_fingerprint
    sandboxed: bool = True  # the build runs tutorials in their sandbox: a run made without one is not current
    runs_key: bytes = field(default=b"", repr=False)  # TUTORIALS_RUNS_KEY: a run is current only signed with it
    _digests: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    _versions: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def digest(self, path: str) -> str:
        """The digest of the project's file PATH (relative to the root) now."""
        if path not in self._digests:
            self._digests[path] = file_digest(self.root / path)
        return self._digests[path]

    def version(self, name: str) -> str:
        """The release of the distribution NAME installed now, ABSENT where none is."""
        if not self._versions:
            self._versions[""] = ""  # looked up: an environment with no distribution is not looked up again
            self._versions.update(installed())
        return self._versions.get(name, ABSENT)

@dataclass(frozen=True)
class SourceDigest:
    """What a tutorial brings to its run (core.runs.fingerprint.source_digest): its code's digest, and where its code
    blocks start."""

    code: str  # the digest of its code blocks, setting comments and the files it declares it reads
    lines: tuple[int, ...]  # the first line of each code block, as sphinx-gallery numbers it

"""What a run used, and whether it is still what is there: the part of a run's fingerprint that is its own.

While a tutorial runs, each of its Python processes records the files under the project it opened and
the modules it imported (commands/child_site/tutorials_site_used.py, into RUNDIR/out/used/<pid>.jsonl).
Once it ended, the build makes of that the run's Used record (record): each project file it read, by
digest, and each installed distribution it imported, by name and release. A module it looked for and went
without (an optional dependency) is no part of it: installing it later runs nothing again, as installing
any distribution a run did not import. Whether a run is still current, these among the rest, core.runs.currency says.
"""

import hashlib
import json
from collections.abc import Collection, Iterable
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


@dataclass(frozen=True)
class Entries:
    """What a run's processes recorded: the files they read and wrote, the top-level modules they imported."""

    read: frozenset[Path]
    wrote: frozenset[Path]
    modules: frozenset[str]

    @classmethod
    def read_folder(cls, folder: Path) -> "Entries":
        """The entries of every process's file in FOLDER (none where it does not exist)."""
        found: dict[str, set[str]] = {"read": set(), "wrote": set(), "module": set()}
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    kind, value = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a process killed while writing it
                if kind in found and isinstance(value, str):
                    found[kind].add(value)
        return cls(frozenset(map(Path, found["read"])), frozenset(map(Path, found["wrote"])),
                   frozenset(found["module"]))


def record(run_dir: Path, root: Path, skip: Iterable[Path], ignored: Collection[str]) -> Used:
    """The Used record of the run in RUN_DIR of a project at ROOT: the files it read under ROOT, less those
    under SKIP (the build folder, the venv, the engine, the tutorial's own source: each counted elsewhere)
    and those it wrote itself, by digest; the distributions of the modules it imported, less IGNORED
    (those the environment fingerprint counts by their pins), by release as installed now."""
    entries = Entries.read_folder(run_dir / FOLDER)
    root, skipped = Path(root).resolve(), [Path(path).resolve() for path in skip]  # the entries' links are resolved
    files = sorted(path for path in entries.read - entries.wrote
                   if path.is_relative_to(root) and not path.is_dir()
                   and not any(path == s or path.is_relative_to(s) for s in skipped))
    by_module = metadata.packages_distributions()
    versions = installed()
    names = {canonicalize_name(dist) for module in entries.modules for dist in by_module.get(module, ())}
    return Used(files=tuple(UsedFile(path.relative_to(root).as_posix(), file_digest(path)) for path in files),
                distributions=tuple(UsedDistribution(name, versions.get(name, ABSENT))
                                    for name in sorted(names - set(ignored))))


@dataclass(frozen=True)
class Present:
    """What a run's fingerprint is compared with: the project at ROOT and the environment fingerprint now.
    File digests and installed versions are looked up once each, the first time a run asks."""

    root: Path
    environment: str  # core.runs.fingerprint.environment_fingerprint
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

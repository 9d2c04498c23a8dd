"""Whether a language's last build still stands: a digest of everything it reads, a snapshot of what it wrote.

A no-op sphinx-build still costs about a second per language (sphinx-gallery imports matplotlib while
reading its configuration); comparing these costs a few stats.
"""

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import assets, site_tree
from ..assets import PACKAGE  # tutorials_site/: the extensions and what they import
from ..languages import Language
from ..layout import BuildTree
from ..project import Project
from ..runs import runs
from ..runs.used import installed
from . import build_values

RECORD = "inputs.sha256"  # in the language's doctrees: the inputs' digest, then the outputs' snapshot


def files_under(path: Path) -> list[Path]:
    """The files under PATH, in order: PATH itself when it is a file, none when it does not exist."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.exists() else []


def inputs_digest(tree: BuildTree, project: Project, command: Sequence[str], lang: Language, environment: str,
                  skip: Collection[Path] = ()) -> str:
    """A digest of everything a language's build reads, COMMAND (its sphinx-build arguments), the ENVIRONMENT
    fingerprint and every installed distribution included: when it is unchanged, so is the output. The site's
    files (core.site_tree, SKIP: the folders builds make) enter by size and modification time, as Sphinx itself
    tells a changed page; the catalogs, the runs' records and the engine's code by their bytes."""
    digest = hashlib.sha256("\0".join(command).encode())
    digest.update(environment.encode())
    # Every installed distribution: Sphinx, its extensions and the theme render the pages (no run counts them all).
    digest.update(repr(sorted(installed().items())).encode())
    for path in site_tree.files(project.root, (tree.root, *skip)):
        if path.is_relative_to(project.locales):
            continue  # the catalogs count per language, below
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    inputs = [project.locales / lang.code, tree.doctrees(lang) / build_values.FILE]  # the -D values' record
    inputs += [tree.run_dir(t.key) / name for t in project.tutorials for name in (runs.RESULT, runs.STAMP)]
    files = [path for name in inputs for path in files_under(name)]
    files += sorted(PACKAGE.rglob("*.py"))  # a change to the extensions changes the pages (not their bytecode)
    files += assets.files(PACKAGE)  # so do the engine's templates, static files and label catalogs
    for path in files:
        digest.update(f"{path}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def outputs_snapshot(outdir: Path) -> list[str]:
    """Each file under OUTDIR with its size and modification time, one line each, in order."""
    return sorted(f"{p.relative_to(outdir)} {p.stat().st_size} {p.stat().st_mtime_ns}" for p in files_under(outdir))


@dataclass(frozen=True)
class UpToDate:
    """A language's build, true when neither its inputs nor its outputs (its log among them: the build tells
    its warnings from there) changed since its last success (remember); sphinx-build is then skipped."""

    record: Path  # RECORD in the language's doctrees
    outdir: Path  # where its pages are written
    digest: str  # inputs_digest, now
    log: Path | None = None  # its Sphinx log

    @classmethod
    def of(cls, tree: BuildTree, project: Project, lang: Language, command: Sequence[str],
           environment: str, skip: Collection[Path] = (), log: Path | None = None) -> "UpToDate":
        """The cache of LANG's build by the sphinx-build arguments COMMAND (whose last is the output folder),
        whose Sphinx log is LOG."""
        return cls(tree.doctrees(lang) / RECORD, Path(command[-1]),
                   inputs_digest(tree, project, command, lang, environment, skip), log)

    def _snapshot(self) -> list[str]:
        logged = [f"log {self.log.stat().st_size} {self.log.stat().st_mtime_ns}"] if self.log and self.log.is_file() else []
        return [self.digest, *outputs_snapshot(self.outdir), *logged]

    def __bool__(self) -> bool:
        try:
            recorded = self.record.read_text().splitlines()
        except OSError:
            return False
        return recorded == self._snapshot()

    def forget(self) -> None:
        """Make the build not current, before it starts: one cut short must not be taken for current."""
        self.record.unlink(missing_ok=True)

    def remember(self) -> None:
        """Record the build as current, once it succeeded."""
        self.record.write_text("\n".join(self._snapshot()))

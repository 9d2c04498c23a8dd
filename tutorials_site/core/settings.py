"""What the make variables ask for, parsed once and passed down (commands.cli reads the environment)."""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import languages, versions
from .errors import UsageError
from .layout import ROOT, BuildTree


@dataclass(frozen=True)
class Settings:
    tree: BuildTree
    langs: list
    version: str
    strict: bool
    shard: str | None
    pages: Path
    jobs: int

    @property
    def published(self):
        """The versions already published in PAGES, which pages list for readers who open them from disk."""
        try:
            return versions.load(self.pages / "versions.json")["versions"]
        except versions.VersionsError:
            return []


def flag(value):
    return (value or "").strip() not in ("", "0")


def from_environment(environ, builddir=None):
    """Settings from a mapping of make variables (LANGUAGES, VERSION, STRICT, SHARD, BUILDDIR, PAGES, BUILD_JOBS)."""
    jobs = environ.get("BUILD_JOBS", "").strip() or str(os.cpu_count() or 1)
    if not re.fullmatch(r"[1-9]\d*", jobs):
        raise UsageError(f"BUILD_JOBS: {jobs!r} is not a positive number of processes")
    return Settings(
        tree=BuildTree(Path(builddir or environ.get("BUILDDIR") or ROOT / "_build").resolve()),
        langs=languages.select(environ.get("LANGUAGES", "")),
        version=versions.current(environ.get("VERSION", "")),
        strict=flag(environ.get("STRICT")),
        shard=environ.get("SHARD", "").strip() or None,
        pages=Path(environ.get("PAGES") or ROOT / "docs"),
        jobs=int(jobs),
    )

"""What the make variables ask for, parsed once and passed down (commands.cli reads the environment)."""

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import languages
from ..errors import UsageError
from ..layout import BuildTree
from ..runs import needs, sandbox, shards, signing
from ..runs.records import VersionEntry
from ..runs.runs import parse_timeout
from ..terminal import DEFAULT_BLOCK_LIMIT, LIMIT_VARIABLE, OutputLimits, parse_size
from . import versions

DEFAULT_TIMEOUT = 1800  # seconds
DEFAULT_PROGRESS_INTERVAL = 15.0  # seconds a running tutorial may go untold in a build's log without a terminal
DEFAULT_CHROMIUM = "/usr/bin/chromium"


@dataclass(frozen=True)
class Settings:
    """What a command was asked for, from the make variables (from_environment)."""

    root: Path  # the project: the folder of its conf.py
    tree: BuildTree
    langs: list[languages.Language]
    version: str
    strict: bool
    shard: shards.Shard | None  # SHARD: execute this shard's tutorials only, render nothing
    enforce_needs: bool  # NEEDS=strict: a tutorial runs only where its needs are met
    pages: Path
    jobs: int
    timeout: float  # seconds a tutorial may run (TUTORIAL_TIMEOUT), unless it sets its own
    output_limits: OutputLimits  # how much of a tutorial's output is recorded and shown (TUTORIAL_OUTPUT_LIMIT)
    chromium: str  # the browser `tutorials-site audit` drives (CHROMIUM)
    # TUTORIALS: paths or patterns of the only tutorials `tutorials-site html` executes (empty: all); resolved
    # against conf.py's galleries by Project.select.
    tutorials: tuple[str, ...] = ()
    reuse: BuildTree | None = None  # a build folder whose current runs are taken instead of executed (REUSE)
    retry_failed: bool = False  # RETRY_FAILED: a tutorial whose current run failed runs again
    verbose: bool = False  # VERBOSE: Sphinx's own output on the screen too, not only in <builddir>/logs/
    sandboxed: bool = True  # SANDBOX (on, the default, or off): each tutorial runs in a sandbox (core.runs.sandbox)
    served_at: str = ""  # the URL `tutorials-site serve` serves this build at (its builds say so instead of a file to open)
    # PROGRESS_INTERVAL: without a terminal, a line every so many seconds says how a running tutorial goes
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    # TUTORIALS_RUNS_KEY (the environment only, never an option): the key that signs the runs this build stamps,
    # without which it takes no run it did not make (core.runs.signing); b"": none
    runs_key: bytes = field(default=b"", repr=False)
    pythonpath: str = ""  # the builder's PYTHONPATH, which tutorials get: its folders count in their fingerprint

    @property
    def published(self) -> tuple[VersionEntry, ...]:
        """The versions already published in PAGES, which pages list for readers who open them from disk."""
        try:
            return versions.load(self.pages / "versions.json").versions
        except versions.VersionsError:
            return ()


def flag(value: str | None) -> bool:
    """A yes/no make variable: unset, empty or `0` is no."""
    return (value or "").strip() not in ("", "0")


def from_environment(environ: Mapping[str, str], root: Path, builddir: Path | str | None = None,
                     site: languages.SiteLanguages | None = None) -> Settings:
    """Settings from a mapping of make variables (LANGUAGES, VERSION, STRICT, SHARD, NEEDS, BUILDDIR, PAGES,
    BUILD_JOBS, TUTORIAL_TIMEOUT, TUTORIAL_OUTPUT_LIMIT, CHROMIUM, TUTORIALS, REUSE, RETRY_FAILED, VERBOSE, SANDBOX,
    PROGRESS_INTERVAL) for the project at ROOT, whose build folder is ROOT/_build and published tree ROOT/docs unless
    they say otherwise; LANGUAGES names languages of SITE (conf.py's; default: the engine's shipped ones)."""
    jobs = environ.get("BUILD_JOBS", "").strip() or str(os.cpu_count() or 1)
    if not re.fullmatch(r"[1-9]\d*", jobs):
        raise UsageError(f"BUILD_JOBS: {jobs!r} is not a positive number of processes")
    timeout = _seconds(environ, "TUTORIAL_TIMEOUT", DEFAULT_TIMEOUT)
    try:
        enforce_needs = needs.parse_mode(environ.get("NEEDS", ""))
    except ValueError as error:
        raise UsageError(f"NEEDS: {error}") from None
    try:
        sandboxed = sandbox.parse_setting(environ.get(sandbox.SETTING, ""))
    except ValueError as error:
        raise UsageError(f"{sandbox.SETTING}: {error}") from None
    shard = environ.get("SHARD", "").strip()
    output_limit = environ.get(LIMIT_VARIABLE, "").strip() or str(DEFAULT_BLOCK_LIMIT)
    block_limit = parse_size(output_limit)
    if block_limit is None:
        raise UsageError(f"{LIMIT_VARIABLE}: {output_limit!r} is not a positive number of characters "
                         "(a number, or with K or M: 256K)")
    tree = BuildTree(Path(builddir or environ.get("BUILDDIR") or root / "_build").resolve())
    return Settings(
        root=root,
        tree=tree,
        langs=(site or languages.site_languages("en", None)).select(environ.get("LANGUAGES", "")),
        version=versions.current(root, environ.get("VERSION", "")),
        strict=flag(environ.get("STRICT")),
        shard=shards.parse(shard) if shard else None,
        enforce_needs=enforce_needs,
        pages=Path(environ.get("PAGES") or root / "docs"),
        jobs=int(jobs),
        timeout=timeout,
        output_limits=OutputLimits.of_block_limit(block_limit),
        chromium=environ.get("CHROMIUM", "").strip() or DEFAULT_CHROMIUM,
        tutorials=tuple(environ.get("TUTORIALS", "").split()),
        reuse=_reuse(environ.get("REUSE", "").strip(), tree),
        retry_failed=flag(environ.get("RETRY_FAILED")),
        verbose=flag(environ.get("VERBOSE")),
        sandboxed=sandboxed,
        progress_interval=_seconds(environ, "PROGRESS_INTERVAL", DEFAULT_PROGRESS_INTERVAL),
        runs_key=environ.get(signing.VARIABLE, "").strip().encode(),
        pythonpath=environ.get("PYTHONPATH", ""),
    )


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    """The make variable NAME, a number of seconds written as a time limit is (parse_timeout); DEFAULT unset."""
    try:
        return parse_timeout(environ.get(name, "").strip() or str(default))
    except ValueError as error:
        raise UsageError(f"{name}: {error}") from None


def _reuse(value: str, tree: BuildTree) -> BuildTree | None:
    """REUSE's build folder. One that does not exist is no error: CI names where its cache of runs is
    restored to, and there is none before main's first build (the build says it found nothing)."""
    if not value:
        return None
    reuse = BuildTree(Path(value).resolve())
    if reuse.root == tree.root:
        raise UsageError(f"REUSE={value}: the folder being built into; give another build folder (or no REUSE)")
    if reuse.root.exists() and not reuse.runs.is_dir():
        raise UsageError(f"REUSE={value}: not a build folder (no runs/ in it); give the folder that holds runs/, "
                         "such as another BUILDDIR or the folder CI restores its kept runs into")
    return reuse

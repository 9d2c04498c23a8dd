"""Splitting the executions over CI runners: shards, their durations, and merging their runs.

The unit of work is one tutorial (its one run serves every language).
`SHARD=i/N` gives shard i (counting from 1) its share of every tutorial;
`SHARD=<class>:i/N` its share of the tutorials of one runner class (core.runs.needs:
cpu, gpu, multi-gpu), so that each class's shards run on that class's runners.
Tutorials are dealt, longest first, to the shard with the least work so far (by
the durations CI recorded, committed in .github/tutorial-durations.json), so
every runner gets the same lists without talking to the others. Each run's
duration is in its execution stamp; a maintainer refreshes the committed file
from the shards' build folders (`tutorials-site durations`). `tutorials-site shard-matrix` lists
the shards of each class that has tutorials, for CI's matrix.

The deal does not depend on which runs are current: a shard given REUSE (in CI,
the runs main kept) copies the current ones of its share instead of executing
them, and hands them over with the ones it executed, so every shard's share is
the same whatever cache entry each one restored.
"""


import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import project
from ..errors import UsageError
from ..layout import BuildTree
from . import needs, runs, signing, stamping
from .records import RecordError, ShardRecord

DURATIONS = ".github/tutorial-durations.json"  # in the project: what CI last recorded (`tutorials-site durations`)
DEFAULT_SECONDS = 5.0  # for a tutorial never timed


@dataclass(frozen=True)
class Shard:
    """One shard of the executions (SHARD): its index, the shard count, and the runner class it serves."""

    index: int  # from 1
    count: int
    runner_class: str | None  # None: every class's tutorials

    def __str__(self) -> str:
        return f"{self.runner_class + ':' if self.runner_class else ''}{self.index}/{self.count}"


def parse(spec: str) -> Shard:
    """SHARD, `i/N` or `CLASS:i/N`; UsageError saying what is accepted otherwise."""
    match = re.fullmatch(r"\s*(?:([\w-]+)\s*:)?\s*(\d+)\s*/\s*(\d+)\s*", spec or "")
    if not match or not 1 <= int(match[2]) <= int(match[3]):
        raise UsageError(f"SHARD: {spec!r} is not i/N or CLASS:i/N with 1 <= i <= N (for example SHARD=2/4 or "
                         "SHARD=gpu:2/4)")
    if match[1] is not None and match[1] not in needs.CLASSES:
        raise UsageError(f"SHARD: {spec!r}: {match[1]!r} is not a runner class ({', '.join(needs.CLASSES)})")
    return Shard(int(match[2]), int(match[3]), match[1])


def parse_counts(spec: str) -> dict[str, int]:
    """CLASS_SHARDS, `cpu=1 gpu=4 multi-gpu=1`: the most shards each class gets (1 for a class not named)."""
    counts = dict.fromkeys(needs.CLASSES, 1)
    for item in spec.split():
        name, _, count = item.partition("=")
        if name not in needs.CLASSES or not re.fullmatch(r"[1-9][0-9]*", count):
            raise UsageError(f"CLASS_SHARDS: {item!r} is not CLASS=N with a runner class ({', '.join(needs.CLASSES)}) "
                             "and N >= 1 (for example CLASS_SHARDS=\"cpu=1 gpu=4 multi-gpu=1\")")
        counts[name] = int(count)
    return counts


def assign(units: Iterable[str], count: int, durations: Mapping[str, float]) -> list[list[str]]:
    """Longest first, each to the least loaded shard: a list of `count` lists of units."""
    loads = [0.0] * count
    shards: list[list[str]] = [[] for _ in range(count)]
    for unit in sorted(units, key=lambda u: (-durations.get(u, DEFAULT_SECONDS), u)):
        target = loads.index(min(loads))
        shards[target].append(unit)
        loads[target] += durations.get(unit, DEFAULT_SECONDS)
    return shards


def durations_file(site: project.Project) -> Path:
    """Where SITE keeps its tutorials' durations (DURATIONS)."""
    return site.root / DURATIONS


def load_durations(site: project.Project) -> dict[str, float]:
    """SITE's committed durations (DURATIONS), {tutorial key: seconds}; none before the first `tutorials-site durations`."""
    path = durations_file(site)
    durations: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}
    return durations


def _by_class(site: project.Project) -> dict[str, list[project.Tutorial]]:
    """The executed tutorials of each runner class, every class listed."""
    found: dict[str, list[project.Tutorial]] = {name: [] for name in needs.CLASSES}
    for tutorial in (t for t in site.tutorials if t.executed):
        found[needs.of(site, tutorial).runner_class].append(tutorial)
    return found


def selection(site: project.Project, shard: Shard) -> list[project.Tutorial]:
    """The tutorials of SITE that SHARD executes."""
    grouped = _by_class(site)
    tutorials = {t.key: t for name, found in grouped.items() if shard.runner_class in (None, name) for t in found}
    return [tutorials[key] for key in sorted(assign(list(tutorials), shard.count, load_durations(site))[shard.index - 1])]


def matrix(site: project.Project, counts: Mapping[str, int]) -> dict[str, list[dict[str, str | int]]]:
    """CI's execute matrix: the shards of each class that has tutorials, as many as COUNTS allows and never more
    than it has tutorials. A project with none gets one shard, which executes nothing (assemble still runs)."""
    include: list[dict[str, str | int]] = [{"class": name, "shard": index, "shards": min(counts[name], len(found))}
               for name, found in _by_class(site).items()
               for index in range(1, min(counts[name], len(found)) + 1)]
    return {"include": include or [{"class": needs.CLASSES[0], "shard": 1, "shards": 1}]}


def _executed(shard: BuildTree) -> list[str]:
    """The tutorials a shard's build folder has the runs of (its shard.json: executed there or taken from REUSE),
    checked against its runs."""
    try:
        record = ShardRecord.read(shard.shard_record)
    except RecordError as error:
        raise UsageError(f"SHARDS: {error}: give the folders `SHARD=i/N tutorials-site html` made with this version of the "
                         "project") from None
    if record is None:
        raise UsageError(f"SHARDS: {shard.root}: not a shard's build folder (no shard.json in it); "
                         "give the folders `SHARD=i/N tutorials-site html` made")
    listed = list(record.tutorials)
    for stamp in sorted(shard.runs.rglob(runs.STAMP)):
        key = stamp.parent.relative_to(shard.runs).as_posix()
        if key not in listed:
            raise UsageError(f"SHARDS: {shard.root}: holds a run of {key}, which its shard.json does not list "
                             "as executed there; give the shards' build folders as their builds left them")
    return listed


def merge(site: project.Project, shard_builddirs: Sequence[Path | str], tree: BuildTree,
          runs_key: bytes = b"") -> dict[str, str]:
    """Copy the runs the shards made into `tree`; returns {tutorial key: shard folder it came from}.

    From each shard, only the runs of the tutorials its shard.json lists, each tutorial from one shard:
    a run in a shard that did not execute it, one executed by two shards, one whose files are not
    those its stamp sealed (core.runs.seal) or, with RUNS_KEY, one without a valid signature (core.runs.signing)
    is refused before anything is copied; without it, each run is copied marked unverified.
    """
    if not shard_builddirs:
        raise UsageError('SHARDS: no build folder given (SHARDS="dir ..." tutorials-site assemble)')
    executed_by: dict[str, BuildTree] = {}
    for shard in (BuildTree(Path(folder)) for folder in shard_builddirs):
        if shard.root.resolve() == tree.root.resolve():
            raise UsageError(f"SHARDS: {shard.root}: the folder being assembled into; assemble into another "
                             "BUILDDIR")
        for key in _executed(shard):
            if key in executed_by:
                raise UsageError(f"SHARDS: {shard.shard_record}: lists {key}, which {executed_by[key].shard_record} "
                                 "lists too; give each shard of one SHARD=i/N split once")
            executed_by[key] = shard
    taken = {t.key: executed_by[t.key] for t in site.tutorials if t.key in executed_by
             and os.path.lexists(executed_by[t.key].run_dir(t.key) / runs.STAMP)}  # else not kept there: named later
    unsealed = [problem for key, source in taken.items() for problem in runs.unsealed(source.runs, key)]
    if runs_key:
        unsealed += [f"{source.run_dir(key)}: {why}" for key, source in taken.items()
                     for why in [signing.unsigned(runs_key, source.run_dir(key), key)] if why]
    if unsealed:
        raise UsageError("SHARDS: a shard's run is not the one its stamp sealed (changed since it ran), nothing "
                         "copied; give the shards' build folders as their builds left them:\n  " + "\n  ".join(unsealed))
    shutil.rmtree(tree.runs, ignore_errors=True)  # the site shows the shards' runs, none left from before
    for key, source in taken.items():
        shutil.copytree(source.run_dir(key), tree.run_dir(key), symlinks=True)  # verified: no link in it
        if not runs_key:
            signing.mark_unverified(tree.run_dir(key), f"the shard {source.root}")
    return {key: str(source.root) for key, source in taken.items()}


def record(builddirs: Iterable[Path | str]) -> dict[str, float]:
    """The run times in the execution stamps under the build folders, by tutorial.

    Of a shard's folder, only the runs it executed: one it took from REUSE was timed by the build that ran it.
    """
    durations: dict[str, float] = {}
    for tree in (BuildTree(Path(folder)) for folder in builddirs):
        try:
            shard = ShardRecord.read(tree.shard_record)
        except RecordError:
            shard = None  # of another format: its runs are timed by the build that runs them again
        executed = shard.executed if shard else None  # None: not a shard's folder, all its runs were executed there
        for stamp_file in sorted(tree.runs.rglob(runs.STAMP)):
            key = stamp_file.parent.relative_to(tree.runs).as_posix()
            stamp = stamping.stamp_of(stamp_file.parent)  # None: of another format, timed when it runs again
            if stamp and (executed is None or key in executed):
                durations[key] = stamp.seconds
    return durations


@dataclass(frozen=True)
class Expected:
    """How long a tutorial is expected to run, and from what: `its last run` here, or `CI's recorded run`."""

    seconds: float
    source: str


def expected_seconds(site: project.Project, tree: BuildTree, keys: list[str]) -> dict[str, Expected | None]:
    """How long each tutorial (by key) may be expected to run, for what a build says of its time left: its
    last run in TREE (on this machine; stale or not, as long as it was stamped and did not fail, which says
    nothing of a whole run's time), else the duration CI recorded; None for one never timed."""
    recorded = load_durations(site)
    expected: dict[str, Expected | None] = {}
    for key in keys:
        stamp = stamping.stamp_of(tree.run_dir(key))  # None (or of another format): the recorded duration will do
        if stamp and not stamp.failed:
            expected[key] = Expected(stamp.seconds, "its last run")
        else:
            expected[key] = Expected(recorded[key], "CI's recorded run") if key in recorded else None
    return expected

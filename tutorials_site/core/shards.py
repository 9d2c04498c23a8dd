"""Splitting the executions over CI runners: shards, their durations, and merging their runs.

The unit of work is one tutorial (its one run serves every language).
`SHARD=i/N` gives shard i (counting from 1) its share: tutorials are dealt,
longest first, to the shard with the least work so far (by the durations CI
recorded, committed in .github/tutorial-durations.json), so every runner gets
the same lists without talking to the others. Each run's duration is in its
execution stamp; a maintainer refreshes the committed file from the shards'
build folders (`make durations`).
"""


import json
import re
import shutil

from . import project, runs
from .errors import UsageError
from .layout import ROOT, BuildTree
from .records import RecordError, ShardRecord, Stamp

DURATIONS = ROOT / ".github" / "tutorial-durations.json"
DEFAULT_SECONDS = 5.0  # for a tutorial never timed


def parse(spec):
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", spec or "")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(f"SHARD: {spec!r} is not i/N with 1 <= i <= N (for example SHARD=2/4)")
    return int(match[1]), int(match[2])


def assign(units, count, durations):
    """Longest first, each to the least loaded shard: a list of `count` lists of units."""
    loads = [0.0] * count
    shards = [[] for _ in range(count)]
    for unit in sorted(units, key=lambda u: (-durations.get(u, DEFAULT_SECONDS), u)):
        target = loads.index(min(loads))
        shards[target].append(unit)
        loads[target] += durations.get(unit, DEFAULT_SECONDS)
    return shards


def load_durations():
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def selection(spec):
    """The tutorials that shard `spec` executes."""
    index, count = parse(spec)
    tutorials = {t.key: t for t in project.current().tutorials if t.executed}
    return [tutorials[key] for key in sorted(assign(list(tutorials), count, load_durations())[index - 1])]


def _executed(shard):
    """The tutorials a shard's build folder says it executed (its shard.json), checked against its runs."""
    try:
        record = ShardRecord.read(shard.shard_record)
    except RecordError as error:
        raise UsageError(f"SHARDS: {error}: give the folders `make html SHARD=i/N` made with this version of the "
                         "project") from None
    if record is None:
        raise UsageError(f"SHARDS: {shard.root}: not a shard's build folder (no shard.json in it); "
                         "give the folders `make html SHARD=i/N` made")
    listed = list(record.tutorials)
    for stamp in sorted(shard.runs.rglob(runs.STAMP)):
        key = stamp.parent.relative_to(shard.runs).as_posix()
        if key not in listed:
            raise UsageError(f"SHARDS: {shard.root}: holds a run of {key}, which its shard.json does not list "
                             "as executed there; give the shards' build folders as their builds left them")
    return listed


def merge(shard_builddirs, tree):
    """Copy the runs the shards made into `tree`; returns {tutorial key: shard folder it came from}.

    From each shard, only the runs of the tutorials its shard.json lists, each tutorial from one shard:
    a run in a shard that did not execute it, or one executed by two shards, is refused before
    anything is copied.
    """
    if not shard_builddirs:
        raise UsageError('SHARDS: no build folder given (make assemble SHARDS="dir ...")')
    executed_by = {}
    for shard in map(BuildTree, shard_builddirs):
        if shard.root.resolve() == tree.root.resolve():
            raise UsageError(f"SHARDS: {shard.root}: the folder being assembled into; assemble into another "
                             "BUILDDIR")
        for key in _executed(shard):
            if key in executed_by:
                raise UsageError(f"SHARDS: {shard.shard_record}: lists {key}, which {executed_by[key].shard_record} "
                                 "lists too; give each shard of one SHARD=i/N split once")
            executed_by[key] = shard
    merged = {}
    shutil.rmtree(tree.runs, ignore_errors=True)  # the site shows the shards' runs, none left from before
    for tutorial in project.current().tutorials:
        shard = executed_by.get(tutorial.key)
        if shard is None or not (shard.run_dir(tutorial.key) / runs.STAMP).exists():
            continue  # listed by no shard, or failed in its shard: html() names it
        shutil.copytree(shard.run_dir(tutorial.key), tree.run_dir(tutorial.key))
        merged[tutorial.key] = str(shard.root)
    return merged


def record(builddirs):
    """The run times in the execution stamps under the build folders, by tutorial."""
    durations = {}
    for tree in map(BuildTree, builddirs):
        for stamp_file in sorted(tree.runs.rglob(runs.STAMP)):
            try:
                stamp = Stamp.read(stamp_file)
            except RecordError:
                continue  # of another format: its tutorial runs again, and is timed then
            if stamp:
                durations[stamp_file.parent.relative_to(tree.runs).as_posix()] = stamp.seconds
    return durations

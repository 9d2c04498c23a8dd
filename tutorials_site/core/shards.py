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


def merge(shard_builddirs, tree):
    """Copy the runs the shards made into `tree`; returns {tutorial key: shard folder it came from}."""
    merged = {}
    if not shard_builddirs:
        raise UsageError('SHARDS: no build folder given (make assemble SHARDS="dir ...")')
    shard_trees = [BuildTree(d) for d in shard_builddirs]
    for shard in shard_trees:
        if not (shard.shard_record.exists() or shard.runs.is_dir()):
            raise UsageError(f"SHARDS: {shard.root}: not a shard's build folder (no shard.json or runs/ in it)")
    for shard in shard_trees:
        for tutorial in project.current().tutorials:
            run = shard.run_dir(tutorial.key)
            if not (run / runs.STAMP).exists():
                continue  # not executed (or failed) in this shard
            target = tree.run_dir(tutorial.key)
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(run, target)
            merged[tutorial.key] = str(shard.root)
    return merged


def record(builddirs):
    """The run times in the execution stamps under the build folders, by tutorial."""
    durations = {}
    for tree in map(BuildTree, builddirs):
        for stamp_file in sorted(tree.runs.rglob(runs.STAMP)):
            stamp = runs.read_json(stamp_file)
            if stamp:
                durations[stamp_file.parent.relative_to(tree.runs).as_posix()] = stamp["seconds"]
    return durations

"""Splitting the executions over CI runners: shards, their durations, and merging their outputs.

The unit of work is one tutorial in one language. `SHARD=i/N` gives shard i
(counting from 1) its share: units are dealt, longest first, to the shard with
the least work so far (by the durations CI recorded, committed in
.github/tutorial-durations.json), so every runner gets the same lists without
talking to the others. Each run's duration is in its execution stamp; a
maintainer refreshes the committed file from the shards' outputs.
"""

import json
import re
import shutil
from pathlib import Path

from . import languages
from .errors import UsageError
from .layout import GALLERIES, ROOT, tutorial_sources

DURATIONS = ROOT / ".github" / "tutorial-durations.json"
DEFAULT_SECONDS = 5.0  # for a unit never timed


def unit_key(lang, src_dir, path):
    return f"{lang.seg}/{src_dir}/{Path(path).stem}"


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


def selection(spec, langs):
    """{language segment: set of tutorial stems} that shard `spec` executes."""
    index, count = parse(spec)
    units = [unit_key(lang, s, p) for lang in langs for s, p in tutorial_sources()]
    chosen = assign(units, count, load_durations())[index - 1]
    picked = {}
    for unit in chosen:
        seg, _, stem = unit.split("/")
        picked.setdefault(seg, set()).add(stem)
    return picked


def tutorial_outputs(gallery_dir, stem):
    """The files sphinx-gallery made for one tutorial in its gallery folder."""
    gallery_dir = Path(gallery_dir)
    yield from gallery_dir.glob(f"{stem}.*")
    yield from gallery_dir.glob(f"images/sphx_glr_{stem}_*")
    yield from gallery_dir.glob(f"images/thumb/sphx_glr_{stem}_thumb.*")


def merge(shard_builddirs, builddir, langs):
    """Copy every shard's executed tutorials into builddir's staged sources; returns what came from where."""
    merged = {}
    for shard in shard_builddirs:
        for lang in langs:
            for src_dir, path in tutorial_sources():
                gallery = Path(shard, "src", lang.seg, GALLERIES[src_dir])
                if not Path(gallery, f"{path.stem}.stamp.json").exists():
                    continue  # not executed in this shard
                target = Path(builddir, "src", lang.seg, GALLERIES[src_dir])
                for output in tutorial_outputs(gallery, path.stem):
                    destination = target / output.relative_to(gallery)
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(output, destination)
                merged[unit_key(lang, src_dir, path)] = str(shard)
    return merged


def record(builddirs):
    """The run times in the execution stamps under the build folders, by unit."""
    durations = {}
    for builddir in builddirs:
        for lang in languages.ALL:
            for src_dir, path in tutorial_sources():
                stamp = Path(builddir, "src", lang.seg, GALLERIES[src_dir], f"{path.stem}.stamp.json")
                if stamp.exists():
                    durations[unit_key(lang, src_dir, path)] = json.loads(stamp.read_text())["seconds"]
    return durations

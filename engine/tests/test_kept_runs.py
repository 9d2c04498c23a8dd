"""Runs kept across CI runs: the second of two CI runs executes only what the change between them made stale.

benchmarks/ci_runs.py plays the engine's reusable workflow's own steps (execute shards, assemble, the cache restored and saved as a
folder) on a generated git repository of small tutorials; each run's assemble validates the whole site, so a
shard that did not hand over a run of one of its tutorials fails it.
"""

import shutil

import pytest

from benchmarks import ci_runs
from conftest import build, executed, snapshot
from tutorials_site.core.runs import runs, seal, shards

pytestmark = pytest.mark.site  # every test here builds a site


@pytest.fixture(scope="module")
def first(builds_site, tmp_path_factory):
    """(the generated repository, the stand-in torch's folder, the runs its first CI run kept)."""
    work = tmp_path_factory.mktemp("ci")
    repo = ci_runs.generate(work / "repo")
    site = work / "torch-site"
    run, kept = ci_runs.Player(work / "first", site).play(repo, "first", None, ci_runs.torch_version())
    assert run.executed == ci_runs.COUNT  # nothing kept yet: every tutorial runs once
    return repo, site, kept


# The tutorial each change that makes one run stale is about (ci_runs.CHANGES); the others run none again, or all.
STALE = {"one tutorial": 7, "a comment in one tutorial's code": 8, "a distribution one tutorial imports, upgraded":
         ci_runs.IMPORTS, "a helper one tutorial loads with importlib": ci_runs.LOADS}


def together(changes, what):
    """One change made of CHANGES: their edits, engine edits, installs and torch suffixes, all of them."""
    engines = [change.engine for change in changes if change.engine]
    return ci_runs.Change(what, sum(change.target for change in changes),
                          lambda repo: [change.edit(repo) for change in changes],
                          torch_suffix="".join(change.torch_suffix for change in changes),
                          installed=tuple(item for change in changes for item in change.installed),
                          engine=(lambda folder: [edit(folder) for edit in engines]) if engines else None)


# Each change of ci_runs.CHANGES (make bench plays them one by one) in one of four second runs: no change; every
# change that must run nothing, together; every change that must run one tutorial, together (each a tutorial of
# its own, so that each run they make stale is seen); the change that must run them all.
SECOND_RUNS = [
    together([change for change in ci_runs.CHANGES if change.what == "nothing"], "nothing"),
    together([change for change in ci_runs.CHANGES if change.target == 0 and change.what != "nothing"],
             "every change that runs nothing again"),
    together([change for change in ci_runs.CHANGES if 0 < change.target < ci_runs.COUNT],
             "every change that runs one tutorial again"),
    together([change for change in ci_runs.CHANGES if change.target == ci_runs.COUNT], "a change that runs them all"),
]


def test_every_change_is_played_in_one_second_run():
    """A change added to ci_runs.CHANGES is played here too: it runs none, all, or one tutorial of its own (STALE)."""
    for change in ci_runs.CHANGES:
        assert change.target in (0, ci_runs.COUNT) or (change.target == 1 and change.what in STALE), change.what
    assert len(set(STALE.values())) == len(STALE)
    assert sum(change.target for change in SECOND_RUNS) == sum(change.target for change in ci_runs.CHANGES)


@pytest.mark.parametrize("change", SECOND_RUNS, ids=lambda change: change.what)
def test_the_second_ci_run_executes_only_what_the_change_made_stale(first, change, tmp_path):
    repo, site, kept = first
    player = ci_runs.player_after(change, tmp_path, site)
    second = ci_runs.changed(repo, tmp_path / "repo", change)
    run, _ = player.play(second, "second", kept, ci_runs.torch_version() + change.torch_suffix, change.installed)
    assert run.executed == change.target, change.what
    # Only the runs executed count as durations: the taken ones were timed by the run that executed them.
    executed = shards.record(sorted((tmp_path / "second-artifacts").iterdir()))
    if 0 < change.target < ci_runs.COUNT:
        assert sorted(executed) == sorted(f"{ci_runs.GALLERY}/{ci_runs.tutorial_name(n)}" for n in STALE.values())
    assert len(executed) == change.target


def test_a_changed_tutorial_runs_once_and_is_kept_for_the_run_after(first, tmp_path):
    repo, site, kept = first
    [change] = [change for change in ci_runs.CHANGES if change.what == "one tutorial"]
    player = ci_runs.Player(tmp_path, site)
    second = ci_runs.changed(repo, tmp_path / "repo", change)
    run, kept_second = player.play(second, "second", kept, ci_runs.torch_version())
    assert run.executed == 1 and run.run_seconds > 0
    page = tmp_path / "second-assemble" / "_build" / "html" / "en" / "beginner" / f"{ci_runs.tutorial_name(7)}.html"
    assert "small tutorial 07 ran, changed" in page.read_text()
    run, _ = player.play(second, "third", kept_second, ci_runs.torch_version())
    assert run.executed == 0 and run.run_seconds == 0


# --- REUSE as a make variable -------------------------------------------------------------------------

def shard_build(repo, builddir, site, **env):
    """Every tutorial's shard (SHARD=1/1) of the generated repository, in English, with torch as first kept it."""
    ci_runs.write_torch(site, ci_runs.torch_version())
    return build(repo, builddir, env={"LANGUAGES": "en", "SHARD": "1/1", "PYTHONPATH": str(site), **env})


def test_only_current_whole_kept_runs_are_taken(first, tmp_path):
    repo, site, kept = first
    reuse = tmp_path / "kept"
    shutil.copytree(kept, reuse / "runs")
    damaged, cut_short = (reuse / "runs" / ci_runs.GALLERY / ci_runs.tutorial_name(n) for n in (4, 9))
    (damaged / runs.RESULT).write_text("{")
    (cut_short / runs.STAMP).unlink()  # a copy or a run that never finished
    result = shard_build(repo, tmp_path / "build", site, REUSE=str(reuse))
    assert result.returncode == 0, result.stdout + result.stderr
    assert executed(result) == 2
    assert f"; took {ci_runs.COUNT - 2} current run(s) from REUSE={reuse}" in result.stdout
    record = shards.record([tmp_path / "build"])
    assert sorted(record) == [f"{ci_runs.GALLERY}/{ci_runs.tutorial_name(n)}" for n in (4, 9)]
    taken = tmp_path / "build" / "runs" / ci_runs.GALLERY / ci_runs.tutorial_name(1)
    copy = snapshot(taken)
    # taken whole, and marked: without the runs key nothing here can tell who made it (core.runs.signing)
    assert copy.pop(seal.UNVERIFIED).startswith(f"taken from REUSE={reuse} without the runs key".encode())
    kept = snapshot(reuse / "runs" / ci_runs.GALLERY / ci_runs.tutorial_name(1))
    kept.pop(seal.UNVERIFIED, None)  # where the kept run came from a shard: its own mark, outside the seal
    assert copy == kept


def test_reuse_that_names_no_build_folder(first, tmp_path):
    repo, site, kept = first
    builddir = tmp_path / "build"
    shutil.copytree(kept, builddir / "runs")  # every run current: nothing to execute
    before = snapshot(builddir)
    cases = {
        str(builddir): f"error: REUSE={builddir}: the folder being built into; give another build folder (or no REUSE)",
        str(tmp_path): f"error: REUSE={tmp_path}: not a build folder (no runs/ in it); give the folder that holds "
                       "runs/, such as another BUILDDIR or the folder CI restores its kept runs into",
    }
    for value, message in cases.items():
        result = shard_build(repo, builddir, site, REUSE=value)
        assert result.returncode == 1 and result.stderr.strip().splitlines() == [message], result.stderr
        assert snapshot(builddir) == before
    # A folder that is not there is what CI has before main's first build: nothing to take, and it says so.
    missing = tmp_path / "never-restored"
    result = shard_build(repo, builddir, site, REUSE=str(missing))
    assert result.returncode == 0, result.stderr
    assert f"[execute] REUSE={missing}: no such folder, no runs to take from it" in result.stdout
    assert executed(result) == 0

"""Sharded execution: every tutorial runs in exactly one shard, and the assembled site is the single build."""

import json
import os
import subprocess
import sys

import pytest
from test_execution import normalized

from conftest import build, executed
from tutorials_site.core import shards
from tutorials_site.core.errors import UsageError
from tutorials_site.core.project import Project, current
from tutorials_site.core.records import Stamp


def test_a_shard_spec_is_i_of_n():
    assert shards.parse("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "2", "a/b", ""):
        with pytest.raises(UsageError, match="is not i/N"):
            shards.parse(bad)


def test_units_are_dealt_longest_first_to_the_least_loaded_shard():
    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    assert shards.assign(list(durations), 2, durations) == [["a", "d"], ["b", "c", "e"]]  # 14 s and 12 s
    assert sorted(u for s in shards.assign(list("xyz"), 5, {}) for u in s) == ["x", "y", "z"]


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_every_tutorial_is_in_exactly_one_shard_whatever_the_languages(count):
    chosen = [t.path for i in range(1, count + 1) for t in shards.selection(f"{i}/{count}")]
    assert sorted(chosen) == sorted(t.path for t in current().tutorials)


SECOND = '''"""
A second tutorial
=================

Printed, and drawn.
"""

import matplotlib.pyplot as plt

print("second tutorial ran")
_ = plt.plot([1, 2, 3])
'''


def assemble(project, builddir, *shard_dirs):
    return subprocess.run([sys.executable, "-m", "tutorials_site", "assemble", "--builddir", str(builddir),
                           *map(str, shard_dirs)], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "LANGUAGES": "en ja"})


def test_two_shards_assembled_give_the_same_site_as_one_build(project_copy, tmp_path):
    (project_copy / "beginner_source" / "second_tutorial.py").write_text(SECOND)
    env = {"LANGUAGES": "en ja"}
    single = build(project_copy, tmp_path / "single", env=env)
    assert single.returncode == 0, single.stdout + single.stderr
    for i in (1, 2):
        result = build(project_copy, tmp_path / f"shard{i}", env={**env, "SHARD": f"{i}/2"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert executed(result) >= 1 and "sphinx-build" not in result.stdout  # a shard executes, never renders
    executed_by = [set(shards.record([tmp_path / f"shard{i}"])) for i in (1, 2)]
    every = {t.key for t in Project.read(project_copy).tutorials}
    assert not executed_by[0] & executed_by[1] and executed_by[0] | executed_by[1] == every

    result = assemble(project_copy, tmp_path / "assembled", tmp_path / "shard1", tmp_path / "shard2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert executed(result) is None  # nothing executed
    site, assembled = tmp_path / "single" / "html", tmp_path / "assembled" / "html"
    one = {p.relative_to(site): p for p in site.rglob("*") if p.is_file()}
    merged = {p.relative_to(assembled): p for p in assembled.rglob("*") if p.is_file()}
    assert sorted(one) == sorted(merged)
    assert [name for name in one if normalized(one[name]) != normalized(merged[name])] == []
    assert any(name.suffix == ".zip" for name in one) and any(name.name == "searchindex.js" for name in one)


def test_assembling_without_every_shard_executes_nothing_and_says_what_is_missing(project_copy, tmp_path):
    # Shard 2 alone cannot make a site: shard 1's tutorials have no run.
    result = build(project_copy, tmp_path / "shard2", env={"SHARD": "2/2"})
    assert result.returncode == 0
    result = assemble(project_copy, tmp_path / "assembled", tmp_path / "shard2")
    assert result.returncode != 0 and "refusing to execute anything here" in result.stderr
    assert all(t.key in result.stderr for t in shards.selection("1/2"))  # shard 1's share
    assert not (tmp_path / "assembled" / "html").exists()


def test_make_durations_records_each_tutorial_s_run_time(project_copy, tmp_path):
    from conftest import make

    assert build(project_copy, tmp_path / "shard1", env={"SHARD": "1/1"}).returncode == 0
    result = make(project_copy, "durations", FROM=str(tmp_path / "shard1"))
    assert result.returncode == 0, result.stdout + result.stderr
    durations = json.loads((project_copy / ".github" / "tutorial-durations.json").read_text())
    stamp = Stamp.read(tmp_path / "shard1" / "runs" / "beginner_source" / "data_parallel_tutorial" / "stamp.json")
    assert durations["beginner_source/data_parallel_tutorial"] == stamp.seconds > 0


def test_assemble_takes_from_each_shard_only_the_runs_it_executed(project_copy, tmp_path):
    import shutil

    shard = tmp_path / "shard"
    assert build(project_copy, shard, env={"SHARD": "1/1"}).returncode == 0
    key = "beginner_source/data_parallel_tutorial"
    record = json.loads((shard / "shard.json").read_text())
    assert key in record["tutorials"]
    # A shard folder holding a run its shard.json does not list: that run would replace the other shard's.
    other = tmp_path / "other"
    shutil.copytree(shard, other)
    (other / "shard.json").write_text(json.dumps({**record, "tutorials": [k for k in record["tutorials"] if k != key]}))
    assembled = tmp_path / "assembled"
    cases = {
        (shard, other): f"error: SHARDS: {other}: holds a run of {key}, which its shard.json does not list as "
                        "executed there; give the shards' build folders as their builds left them",
        (shard, shard): f"error: SHARDS: {shard}/shard.json: lists {record['tutorials'][0]}, which "
                        f"{shard}/shard.json lists too; give each shard of one SHARD=i/N split once",
        (assembled,): f"error: SHARDS: {assembled}: the folder being assembled into; assemble into another BUILDDIR",
        (tmp_path,): f"error: SHARDS: {tmp_path}: not a shard's build folder (no shard.json in it); "
                     "give the folders `make html SHARD=i/N` made",
    }
    before = {folder: sorted(folder.rglob("*")) for folder in (shard, other)}
    for shard_dirs, message in cases.items():
        result = assemble(project_copy, assembled, *shard_dirs)
        assert result.returncode != 0 and result.stderr.strip().splitlines() == [message], result.stderr
        assert not assembled.exists()  # refused before anything is copied
    assert before == {folder: sorted(folder.rglob("*")) for folder in (shard, other)}

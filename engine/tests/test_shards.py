"""Sharded execution: every tutorial runs in exactly one shard, and the assembled site is the single build."""

import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, build, executed, normalized
from tutorials_site.core.errors import UsageError
from tutorials_site.core.project import Project, current
from tutorials_site.core.runs import shards
from tutorials_site.core.runs.records import Stamp


def test_a_shard_spec_is_i_of_n_of_every_tutorial_or_of_one_runner_class():
    assert shards.parse("2/4") == shards.Shard(2, 4, None) and str(shards.parse(" 2 / 4 ")) == "2/4"
    assert shards.parse("multi-gpu:1/3") == shards.Shard(1, 3, "multi-gpu") and str(shards.parse("gpu:2/2")) == "gpu:2/2"
    for bad in ("0/2", "3/2", "2", "a/b", "", "gpu:", "gpu:0/1", ":1/2"):
        with pytest.raises(UsageError, match=r"is not i/N or CLASS:i/N with 1 <= i <= N \(for example SHARD=2/4 or "
                                             r"SHARD=gpu:2/4\)$"):
            shards.parse(bad)
    with pytest.raises(UsageError, match=r"^SHARD: 'tpu:1/2': 'tpu' is not a runner class \(cpu, gpu, multi-gpu\)$"):
        shards.parse("tpu:1/2")


def test_units_are_dealt_longest_first_to_the_least_loaded_shard():
    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    assert shards.assign(list(durations), 2, durations) == [["a", "d"], ["b", "c", "e"]]  # 14 s and 12 s
    assert sorted(u for s in shards.assign(list("xyz"), 5, {}) for u in s) == ["x", "y", "z"]


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_every_tutorial_is_in_exactly_one_shard_whatever_the_languages(count):
    site = current(FIXTURES)
    chosen = [t.path for i in range(1, count + 1) for t in shards.selection(site, shards.parse(f"{i}/{count}"))]
    assert sorted(chosen) == sorted(t.path for t in site.tutorials)


SECOND = '''"""
A second tutorial
=================

Printed, and drawn.
"""

import matplotlib.pyplot as plt

print("second tutorial ran")
_ = plt.plot([1, 2, 3])
'''


def assemble(project, builddir, *shard_dirs, **env):
    return subprocess.run([sys.executable, "-m", "tutorials_site", "assemble", "--builddir", str(builddir),
                           *map(str, shard_dirs)], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "LANGUAGES": "en ja", **env})


@pytest.mark.site
def test_two_shards_assembled_give_the_same_site_as_one_build(stubbed_copy, tmp_path):
    (stubbed_copy / "beginner_source" / "second_tutorial.py").write_text(SECOND)
    # As in CI, the shards and the assembly hold the runs key: the shards' runs are verified, as the single build's.
    env = {"LANGUAGES": "en ja", "TUTORIALS_RUNS_KEY": "the trusted builds' secret"}
    single = build(stubbed_copy, tmp_path / "single", env=env)
    assert single.returncode == 0, single.stdout + single.stderr
    for i in (1, 2):
        result = build(stubbed_copy, tmp_path / f"shard{i}", env={**env, "SHARD": f"{i}/2"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert executed(result) >= 1 and "sphinx-build" not in result.stdout  # a shard executes, never renders
    executed_by = [set(shards.record([tmp_path / f"shard{i}"])) for i in (1, 2)]
    every = {t.key for t in Project.read(stubbed_copy).tutorials}
    assert not executed_by[0] & executed_by[1] and executed_by[0] | executed_by[1] == every

    result = assemble(stubbed_copy, tmp_path / "assembled", tmp_path / "shard1", tmp_path / "shard2", **env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert executed(result) is None  # nothing executed
    site, assembled = tmp_path / "single" / "html", tmp_path / "assembled" / "html"
    one = {p.relative_to(site): p for p in site.rglob("*") if p.is_file()}
    merged = {p.relative_to(assembled): p for p in assembled.rglob("*") if p.is_file()}
    assert sorted(one) == sorted(merged)
    assert [name for name in one if normalized(one[name]) != normalized(merged[name])] == []
    assert any(name.suffix == ".zip" for name in one) and any(name.name == "searchindex.js" for name in one)


@pytest.mark.site
def test_assembling_without_every_shard_executes_nothing_and_says_what_is_missing(project_copy, tmp_path):
    # Shard 2 alone cannot make a site: shard 1's tutorials have no run.
    result = build(project_copy, tmp_path / "shard2", env={"SHARD": "2/2"})
    assert result.returncode == 0
    result = assemble(project_copy, tmp_path / "assembled", tmp_path / "shard2")
    assert result.returncode != 0 and "refusing to execute anything here" in result.stderr
    assert all(t.key in result.stderr for t in shards.selection(Project.read(project_copy), shards.parse("1/2")))
    assert not (tmp_path / "assembled" / "html").exists()


@pytest.mark.site
def test_make_durations_records_each_tutorial_s_run_time(stubbed_copy, tmp_path):
    from conftest import tutorials_site

    assert build(stubbed_copy, tmp_path / "shard1", env={"SHARD": "1/1"}).returncode == 0
    result = tutorials_site(stubbed_copy, "durations", FROM=str(tmp_path / "shard1"))
    assert result.returncode == 0, result.stdout + result.stderr
    durations = json.loads((stubbed_copy / ".github" / "tutorial-durations.json").read_text())
    stamp = Stamp.read(tmp_path / "shard1" / "runs" / "beginner_source" / "data_parallel_tutorial" / "stamp.json")
    assert durations["beginner_source/data_parallel_tutorial"] == stamp.seconds > 0


@pytest.mark.site
def test_assemble_takes_from_each_shard_only_the_runs_it_executed(stubbed_copy, tmp_path):
    import shutil

    shard = tmp_path / "shard"
    assert build(stubbed_copy, shard, env={"SHARD": "1/1"}).returncode == 0
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
                     "give the folders `SHARD=i/N tutorials-site html` made",
    }
    before = {folder: sorted(folder.rglob("*")) for folder in (shard, other)}
    for shard_dirs, message in cases.items():
        result = assemble(stubbed_copy, assembled, *shard_dirs)
        assert result.returncode != 0 and result.stderr.strip().splitlines() == [message], result.stderr
        assert not assembled.exists()  # refused before anything is copied
    assert before == {folder: sorted(folder.rglob("*")) for folder in (shard, other)}


# --- issue 18: shards by runner class ------------------------------------------------------------------

CLASS_TUTORIAL = '''"""
A {name} tutorial
=================
"""

# tutorials-needs: {needs}
print("{name} tutorial ran")
'''


def _by_class(project_copy):
    """The project copy with a tutorial of each class: cpu and gpu added, multi-gpu DDP and Data Parallelism."""
    for name, declared in (("cpu", "cpu"), ("gpu", "gpu"), ("second_gpu", "gpus=1")):
        (project_copy / "beginner_source" / f"{name}_tutorial.py").write_text(
            CLASS_TUTORIAL.format(name=name, needs=declared))
    return Project.read(project_copy)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_each_class_s_shards_hold_that_class_s_tutorials_each_once(project_copy, count):
    from tutorials_site.core.runs import needs

    site = _by_class(project_copy)
    classes = {name: {t.key for t in site.tutorials if needs.of(site, t).runner_class == name} for name in needs.CLASSES}
    assert {name: len(keys) for name, keys in classes.items()} == {"cpu": 1, "gpu": 2, "multi-gpu": 2}
    for name, keys in classes.items():
        chosen = [t.key for i in range(1, count + 1) for t in shards.selection(site, shards.parse(f"{name}:{i}/{count}"))]
        assert sorted(chosen) == sorted(keys), name  # every tutorial of the class once, none of another class
    # Within a class, by durations: the two GPU tutorials go to two shards when there are two.
    assert [len(shards.selection(site, shards.parse(f"gpu:{i}/2"))) for i in (1, 2)] == [1, 1]
    gpu_shards = min(count, 2)  # two tutorials: never an empty shard
    assert shards.matrix(site, shards.parse_counts(f"cpu={count} gpu={count}")) == {"include": [
        {"class": "cpu", "shard": 1, "shards": 1},
        *({"class": "gpu", "shard": i, "shards": gpu_shards} for i in range(1, gpu_shards + 1)),
        {"class": "multi-gpu", "shard": 1, "shards": 1}]}


def test_a_project_without_tutorials_to_execute_still_gets_one_shard(project_copy):
    conf = project_copy / "conf.py"
    conf.write_text(conf.read_text().replace('"filename_pattern": r"\\.py$"', '"filename_pattern": r"/plot_"'))
    site = Project.read(project_copy)
    assert not any(t.executed for t in site.tutorials)
    assert shards.matrix(site, shards.parse_counts("")) == {"include": [{"class": "cpu", "shard": 1, "shards": 1}]}


@pytest.mark.parametrize("spec", ["gpu", "gpu=0", "gpu=x", "tpu=2", "gpu=2,cpu=1"])
def test_class_shards_is_class_n_pairs(spec):
    with pytest.raises(UsageError, match="^CLASS_SHARDS: '.*' is not CLASS=N with a runner class"):
        shards.parse_counts(spec)
    assert shards.parse_counts("gpu=4") == {"cpu": 1, "gpu": 4, "multi-gpu": 1}


@pytest.mark.site
def test_the_shards_of_every_class_assembled_give_the_whole_site(stubbed_copy, tmp_path):
    (stubbed_copy / "beginner_source" / "cpu_tutorial.py").write_text(CLASS_TUTORIAL.format(name="cpu", needs="cpu"))
    env = {"LANGUAGES": "en"}
    folders = {}
    for spec in ("cpu:1/1", "gpu:1/1", "multi-gpu:1/2", "multi-gpu:2/2"):
        folders[spec] = tmp_path / spec.replace(":", "-").replace("/", "of")
        result = build(stubbed_copy, folders[spec], env={**env, "SHARD": spec})
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads((folders[spec] / "shard.json").read_text())["shard"] == spec
    listed = {spec: json.loads((folder / "shard.json").read_text())["tutorials"] for spec, folder in folders.items()}
    assert listed["cpu:1/1"] == ["beginner_source/cpu_tutorial"] and listed["gpu:1/1"] == []
    assert sorted(listed["multi-gpu:1/2"] + listed["multi-gpu:2/2"]) == ["beginner_source/data_parallel_tutorial",
                                                                          "beginner_source/ddp_tutorial"]
    result = assemble(stubbed_copy, tmp_path / "assembled", *folders.values())
    assert result.returncode == 0, result.stdout + result.stderr
    assert executed(result) is None
    assert "cpu tutorial ran" in (tmp_path / "assembled" / "html" / "en" / "beginner" / "cpu_tutorial.html").read_text()

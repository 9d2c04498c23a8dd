"""Sharded execution: every tutorial x language run in exactly one shard, and the merged site is the single build."""

import pytest
from test_execution import normalized

from conftest import build
from tutorials_site.core import languages, shards
from tutorials_site.core.errors import UsageError
from tutorials_site.core.layout import ROOT


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
def test_every_unit_is_in_exactly_one_shard(count):
    chosen = [shards.selection(f"{i}/{count}", languages.ALL) for i in range(1, count + 1)]
    units = [(seg, stem) for share in chosen for seg, stems in share.items() for stem in stems]
    assert len(units) == len(set(units)) == len(languages.ALL) * len(list(shards.tutorial_sources()))


def test_two_shards_assembled_give_the_same_site_as_one_build(site, tmp_path):
    for i in (1, 2):
        assert build(ROOT, tmp_path / f"shard{i}", env={"SHARD": f"{i}/2"}).returncode == 0
    executed = shards.record([tmp_path / "shard1"]), shards.record([tmp_path / "shard2"])
    assert executed[0] and executed[1] and not set(executed[0]) & set(executed[1])  # each ran its own share

    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "tutorials_site", "assemble", "--builddir",
                             str(tmp_path / "assembled"), str(tmp_path / "shard1"), str(tmp_path / "shard2")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Sphinx-Gallery successfully executed 0 out of 0" in result.stdout
    assembled = tmp_path / "assembled" / "html"
    single = {p.relative_to(site): p for p in site.rglob("*") if p.is_file()}
    merged = {p.relative_to(assembled): p for p in assembled.rglob("*") if p.is_file()}
    assert sorted(single) == sorted(merged)
    assert [name for name in single if normalized(single[name]) != normalized(merged[name])] == []
    assert any(name.suffix == ".zip" for name in single) and any(name.name == "searchindex.js" for name in single)


def test_assembling_without_every_shard_executes_nothing_and_says_what_is_missing(tmp_path):
    import subprocess
    import sys

    assert build(ROOT, tmp_path / "shard1", env={"SHARD": "1/2"}).returncode == 0
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "assemble", "--builddir",
                             str(tmp_path / "assembled"), str(tmp_path / "shard1")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and "refusing to execute anything here" in result.stderr
    missing = set(shards.selection("2/2", languages.ALL))
    assert all(f"{seg}/beginner_source/data_parallel_tutorial" in result.stderr for seg in missing)
    assert not (tmp_path / "assembled" / "html").exists()

"""The records a build keeps: one reader and one writer each, readable JSON, another format never misread."""

import dataclasses
import json

import pytest

from conftest import FIXTURES
from tutorials_site.core.errors import UsageError
from tutorials_site.core.project import Project
from tutorials_site.core.runs import currency, runs, seal, shards
from tutorials_site.core.runs.records import (
    BlockRecord,
    BuildInfo,
    Hardware,
    RecordError,
    RunError,
    RunFile,
    RunRecord,
    ShardRecord,
    Stamp,
    Used,
    UsedDistribution,
    UsedFile,
)
from tutorials_site.core.runs.stamps import outputs_digest
from tutorials_site.core.runs.used import Present, SourceDigest
from tutorials_site.core.site.publish import PublishError, validate

HARDWARE = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0+cpu", cuda=None)
RESULT = RunRecord(blocks=(BlockRecord(line=7, texts=("hello\n",), images=()),),
                   error=RunError(line=9, block_line=8, message="ValueError: no"),
                   code_objects={"print": [{"name": "print"}]}, gpu_peak_bytes=(), seconds=1.5)
STAMP = Stamp(source="s" * 64, environment="e" * 64, outputs=outputs_digest(["hello\n"], []), seconds=1.5,
              failed=True, peak_rss_mb=12.5, gpu_peak_mb=(), hardware=HARDWARE, commit="abc", date="2026-01-01 00:00 UTC",
              files=(RunFile(path="result.json", sha256="0" * 64, size=2),),
              used=Used(files=(UsedFile("beginner_source/data/in.csv", "d" * 64),),
                        distributions=(UsedDistribution("numpy", "2.4.6"),)))
BUILD = BuildInfo(name="main", label="main", release=False, torch="2.13.0", languages=("en", "ko"),
                  built="2026-01-01 00:00 UTC", path="main/", executed=True)
SHARD = ShardRecord(shard="1/2", tutorials=("beginner_source/a", "beginner_source/b"), executed=("beginner_source/a",))


@pytest.mark.parametrize("record", [RESULT, STAMP, BUILD, SHARD], ids=lambda r: type(r).__name__)
def test_each_record_reads_back_as_written_in_readable_json(tmp_path, record):
    path = tmp_path / "record.json"
    record.write(path)
    assert type(record).read(path) == record
    data = json.loads(path.read_text())
    assert data["format"] == type(record).FORMAT and path.read_text().count("\n") > 3  # indented, one key a line
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # written beside, then moved in place
    assert type(record).read(tmp_path / "none.json") is None


@pytest.mark.parametrize("change, message", [
    (lambda data: {**data, "format": 1}, "a run record (result.json) of format 1; this build reads format 2"),
    (lambda data: {k: v for k, v in data.items() if k != "format"},
     "a run record (result.json) of format none; this build reads format 2"),
    (lambda data: {**data, "extra": 1}, "unknown field 'extra'"),
    (lambda data: {k: v for k, v in data.items() if k != "blocks"}, "no 'blocks'"),
    (lambda data: {**data, "blocks": [{**data["blocks"][0], "line": "7"}]}, "blocks[0].line: '7' is not of type int"),
    (lambda data: {**data, "error": {"line": 1}}, "error: no 'block_line'"),
    (lambda data: {**data, "hardware": None}, "unknown field 'hardware'"),  # where it ran is the build's to say
    (lambda data: {**data, "blocks": [{**data["blocks"][0], "rst": ".. raw:: html"}]}, "unknown field 'rst'"),
])
def test_a_damaged_record_or_one_of_another_format_is_refused_naming_the_file(tmp_path, change, message):
    path = tmp_path / "result.json"
    RESULT.write(path)
    path.write_text(json.dumps(change(json.loads(path.read_text()))))
    with pytest.raises(RecordError) as raised:
        RunRecord.read(path)
    assert str(raised.value).startswith(f"{path}") and str(raised.value).endswith(message)


def test_a_record_that_is_not_json_is_refused(tmp_path):
    (tmp_path / "stamp.json").write_text('{"source": ')
    with pytest.raises(RecordError, match=r"stamp\.json: damaged, not JSON \(Expecting value: line 1 column 12"):
        Stamp.read(tmp_path / "stamp.json")


def _run(tmp_path, result=RESULT):
    """A run, "run" under TMP_PATH, of RESULT, sealed in STAMP as it is."""
    run = tmp_path / "run"
    result.write(run / runs.RESULT)
    stamp = dataclasses.replace(STAMP, files=seal.seal(tmp_path, "run"), used=Used(files=(), distributions=()))
    stamp.write(run / runs.STAMP)
    return run


PRESENT = Present(FIXTURES, STAMP.environment)


def test_a_run_whose_record_is_of_another_format_is_not_current_so_it_runs_again(tmp_path):
    run = _run(tmp_path)
    assert currency.problems(SourceDigest(STAMP.source, ()), PRESENT, run=(tmp_path, "run")) == []
    for name in (runs.STAMP, runs.RESULT):
        before = (run / name).read_text()
        (run / name).write_text(before.replace(f'"format": {type(STAMP).FORMAT if name == runs.STAMP else type(RESULT).FORMAT}',
                                               '"format": 9'))
        (problem,) = currency.problems(SourceDigest(STAMP.source, ()), PRESENT, run=(tmp_path, "run"))
        assert problem.startswith(f"its record cannot be used ({run / name}: a ") and "of format 9" in problem
        (run / name).write_text(before)
    (run / runs.STAMP).unlink()
    assert currency.problems(SourceDigest(STAMP.source, ()), PRESENT, run=(tmp_path, "run")) == ["not executed"]


def test_a_run_whose_record_and_stamp_disagree_on_its_failure_is_not_current(tmp_path):
    _run(tmp_path, dataclasses.replace(RESULT, error=None))  # sealed as it is: only the failure disagrees
    assert currency.problems(SourceDigest(STAMP.source, ()), PRESENT, run=(tmp_path, "run")) == [
        "its record and its stamp disagree on whether it failed (edited after the run?)"]


def test_publish_refuses_a_build_record_of_another_format(tmp_path):
    html = tmp_path / "html"
    BUILD.write(html / "build.json")
    (html / "build.json").write_text((html / "build.json").read_text().replace('"format": 1', '"format": 7'))
    with pytest.raises(PublishError) as raised:
        validate(Project.read(FIXTURES), html)
    assert str(raised.value) == (f"refusing to publish {html / 'build.json'}: a build record (build.json) of format 7; "
                                 "this build reads format 1: build it again with `tutorials-site html`")


def test_assemble_refuses_a_shard_record_of_another_format(tmp_path):
    shard = tmp_path / "shard"
    dataclasses.replace(SHARD, tutorials=()).write(shard / "shard.json")
    (shard / "shard.json").write_text((shard / "shard.json").read_text().replace('"format": 1', '"format": 0'))
    with pytest.raises(UsageError) as raised:
        shards.merge(Project.read(FIXTURES), [shard], type("Tree", (), {"root": tmp_path / "assembled"})())
    assert str(raised.value) == (f"SHARDS: {shard / 'shard.json'}: a shard record (shard.json) of format 0; this "
                                 "build reads format 1: give the folders `SHARD=i/N tutorials-site html` made with this "
                                 "version of the project")

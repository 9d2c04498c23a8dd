"""The run protocol's guard (core.runs.protocol): the fixture tutorials of tests/fixtures/protocol/, run through the
runner, record byte for byte what is kept for this PROTOCOL in tests/fixtures/protocol/<PROTOCOL>/, once the figures a
machine or a library release changes are masked. A change of what the runner records or how it runs a tutorial
fails here until PROTOCOL is raised (every site's tutorials then run again once) and the records are kept again:

    TUTORIALS_KEEP_PROTOCOL_RECORDS=1 python -m pytest tests/test_protocol.py

(then say in CHANGELOG.md what the new protocol changes for runs)."""

import json
import os
import re
import struct
from pathlib import Path

import pytest

from conftest import ENGINE
from tutorials_site.commands.execute import RunOptions, run_tutorial, sandbox_here
from tutorials_site.core.runs.protocol import PROTOCOL

pytestmark = pytest.mark.tutorial  # every test here runs tutorials through the runner

FIXTURES = ENGINE / "tests" / "fixtures" / "protocol"
KEPT = FIXTURES / PROTOCOL
TUTORIALS = sorted(FIXTURES.glob("*.py"))
KEEP = os.environ.get("TUTORIALS_KEEP_PROTOCOL_RECORDS") == "1"
# What differs from machine to machine or from run to run, whatever the protocol: how long, how much memory, on what.
MACHINE = ("seconds", "hardware", "gpu_peak_bytes", "peak_rss_bytes")


def _png(data: bytes) -> str:
    """A PNG by what the protocol decides of it (its format and size), not its pixels (a library's release)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "a figure that is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return f"<PNG {width}x{height}>"


def _record(relative: str, data: bytes, root: Path) -> object:
    """One file of a run as the guard compares it."""
    if relative.endswith(".png"):
        return _png(data)
    text = data.decode("utf-8").replace(str(root), "<project>")
    if relative.startswith("out/used/"):  # what the run used: the project's files, not the library's modules
        return [line for line in text.splitlines() if not line.startswith('["module"')]
    if relative.endswith(".json"):
        record = json.loads(text)
        if isinstance(record, dict):
            for name in MACHINE:
                record.pop(name, None)
            if "code_objects" in record:  # names a block defines or uses; their modules are the libraries'
                record["code_objects"] = sorted(record["code_objects"])
        return record
    return text


def recorded(tutorial: Path, tmp_path: Path) -> dict[str, object]:
    """Every file the runner recorded of a run of TUTORIAL (a copy in a project of its own), as the guard sees it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "conf.py").write_text("sphinx_gallery_conf = {}\n", encoding="utf-8")
    script = project / tutorial.name
    script.write_bytes(tutorial.read_bytes())
    outcome = run_tutorial(script, tmp_path / "run", project, RunOptions.defaults(project, "g/images"), timeout=120,
                           label=tutorial.name, confined=sandbox_here(project, ()))
    assert outcome.result is not None, outcome.error
    return {path.relative_to(tmp_path / "run").as_posix(): _record(path.relative_to(tmp_path / "run").as_posix(),
                                                                      path.read_bytes(), project)
            for path in sorted((tmp_path / "run").rglob("*")) if path.is_file()}


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=lambda path: path.stem)
def test_a_fixture_tutorial_records_what_this_protocol_kept(tutorial, tmp_path):
    found = recorded(tutorial, tmp_path)
    kept = KEPT / f"{tutorial.stem}.json"
    if KEEP:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps(found, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    assert kept.is_file(), (f"no records kept for run protocol {PROTOCOL!r}: a new protocol keeps its own "
                            "(TUTORIALS_KEEP_PROTOCOL_RECORDS=1, see above)")
    expected = json.loads(kept.read_text(encoding="utf-8"))
    assert found == expected, (f"{tutorial.name}: the runner records something else than protocol {PROTOCOL!r} kept: "
                               "raise PROTOCOL (core/runs/protocol.py), keep the records again and say so in "
                               "CHANGELOG.md")


def test_the_records_kept_are_those_of_this_protocol_and_of_every_fixture():
    kept = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())
    assert kept == [PROTOCOL], f"records kept for {kept}: only this protocol's ({PROTOCOL!r}) are compared"
    assert sorted(path.stem for path in KEPT.glob("*.json")) == [path.stem for path in TUTORIALS]
    assert re.fullmatch(r"\w+", PROTOCOL)

"""Execution at build time: failures name the tutorial, and stale output never survives a change."""

import os
import re
from pathlib import Path

import pytest

from conftest import TUTORIAL_PAGE, append, build, copy_engine, executed, normalized, with_engine
from conftest import build as build_all
from tutorials_site.core.project import Project
from tutorials_site.core.runs.protocol import PROTOCOL
from tutorials_site.core.site.checks import output_texts as outputs

pytestmark = pytest.mark.site  # every test here builds a site

ENGLISH = {"LANGUAGES": "en"}

BROKEN = '''"""
Broken on purpose
=================

This tutorial raises.
"""

value = 1
print(value / 0)
'''


def test_a_failing_tutorial_fails_the_build_naming_file_line_and_exception(stubbed_copy):
    (stubbed_copy / "beginner_source" / "broken_tutorial.py").write_text(BROKEN)
    result = build(stubbed_copy, stubbed_copy / "_build", env=ENGLISH)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "beginner_source/broken_tutorial.py:9: ERROR: tutorial failed: ZeroDivisionError: division by zero" in output
    assert "[build] failed: beginner_source/broken_tutorial.py" in output


def test_no_op_rebuild_executes_nothing_and_each_trigger_re_executes(project_copy, tmp_path):
    builddir = project_copy / "_build"

    def build(root, builddir, env=None):
        return build_all(root, builddir, env={**ENGLISH, **(env or {})})
    every = len(Project.read(project_copy).tutorials)  # each tutorial, once
    assert executed(build(project_copy, builddir)) == every

    nothing_changed = build(project_copy, builddir)
    assert "[build] en: up to date" in nothing_changed.stdout and executed(nothing_changed) == 0

    # A hand-written page changed: Sphinx runs, the tutorial's run is still current.
    append(project_copy / "index.md", "\nOne more sentence.\n")
    assert executed(build(project_copy, builddir)) == 0

    # conf.py: a setting no run reads changes no run; one the runner reads changes every run.
    append(project_copy / "conf.py", "\n# a change to the configuration\nhtml_title = 'Another title'\n")
    assert executed(build(project_copy, builddir)) == 0
    append(project_copy / "conf.py", '\nsphinx_gallery_conf["capture_repr"] = ("__repr__",)\n')
    assert executed(build(project_copy, builddir)) == every

    # The engine (a copy of its package, first on the path): a release that keeps the run protocol, whatever it
    # changed, runs nothing again, the runner's code included; one that raises the protocol runs every tutorial.
    engine = copy_engine(tmp_path / "engine")
    released = with_engine(engine)
    append(engine / "tutorials_site" / "commands" / "runner.py", "\n# a change to the runner\n")
    assert executed(build(project_copy, builddir, env=released)) == 0
    versioned = engine / "tutorials_site" / "core" / "runs" / "protocol.py"
    versioned.write_text(versioned.read_text().replace(f'PROTOCOL = "{PROTOCOL}"', 'PROTOCOL = "next"'))
    assert executed(build(project_copy, builddir, env=released)) == every
    assert executed(build(project_copy, builddir)) == every  # back to this engine's protocol

    # Another torch version (a dist-info first on the path is what importlib.metadata reports): the tutorials
    # that imported torch run again, the stubs (which import nothing) do not.
    fake = tmp_path / "fake-torch"
    (fake / "torch-99.0.0.dist-info").mkdir(parents=True)
    (fake / "torch-99.0.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 99.0.0\n")
    other_torch = {"PYTHONPATH": f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    assert executed(build(project_copy, builddir, env=other_torch)) == 1
    assert executed(build(project_copy, builddir, env=other_torch)) == 0  # and then it is cached
    assert executed(build(project_copy, builddir)) == 1  # back to the real torch


def test_two_builds_of_the_same_commit_differ_only_in_timing_and_dates(site, site_project, tmp_path):
    again = tmp_path / "again"
    assert build(site_project, again).returncode == 0
    first = {p.relative_to(site): p for p in site.rglob("*") if p.is_file()}
    second = {p.relative_to(again / "html"): p for p in (again / "html").rglob("*") if p.is_file()}
    assert sorted(first) == sorted(second)
    differing = [name for name in first if normalized(first[name]) != normalized(second[name])]
    assert differing == []


# --- one run for every language, in a process of its own ---------------------------------------------

def test_every_language_shows_the_one_run_blocks_figures_and_stamp(site):
    pages = {lang: (site / lang / TUTORIAL_PAGE.relative_to("en")).read_text() for lang in ("en", "ko", "ja", "zh-cn")}
    stamps = {re.search(r'<meta name="tutorial-execution-stamp" content="([^"]+)"', page)[1] for page in pages.values()}
    assert len(stamps) == 1  # one run, the same stamp on every page
    blocks = {lang: outputs(page) for lang, page in pages.items()}
    assert blocks["en"] and all(found == blocks["en"] for found in blocks.values())  # byte for byte
    figures = {lang: sorted((site / lang / "_images").glob("sphx_glr_data_parallel_tutorial_0*.png")) for lang in pages}
    assert figures["en"]
    for found in figures.values():
        assert [f.read_bytes() for f in found] == [f.read_bytes() for f in figures["en"]]


SPAWN = '''"""
Ranks that print
================

Two processes started with ``torch.multiprocessing.spawn``.
"""

import torch.multiprocessing as mp


def hello(rank, world_size):
    print(f"rank {rank} of {world_size} is here")


# %%
# The ranks print below the block that started them.

if __name__ == "__main__":
    mp.spawn(hello, args=(2,), nprocs=2)
    print("both ranks are done")
'''


def test_children_of_a_tutorial_print_on_its_page_under_their_block(project_copy):
    (project_copy / "beginner_source" / "spawn_tutorial.py").write_text(SPAWN)
    result = build(project_copy, project_copy / "_build", env=ENGLISH)
    assert result.returncode == 0, result.stdout + result.stderr
    page = (project_copy / "_build" / "html" / "en" / "beginner" / "spawn_tutorial.html").read_text()
    [block] = outputs(page)
    lines = block.splitlines()
    assert sorted(lines[:2]) == ["rank 0 of 2 is here", "rank 1 of 2 is here"] and lines[2] == "both ranks are done"


HANG = '''"""
Hangs
=====
"""

import multiprocessing
import time


def sleep():
    time.sleep(1000)


# %%
# Starts a worker, then waits for ever.

if __name__ == "__main__":
    multiprocessing.get_context("spawn").Process(target=sleep).start()
    time.sleep(1000)
'''


def _processes_in(folder):
    import psutil

    return [p.info for p in psutil.process_iter(["pid", "cwd", "cmdline"])
            if p.info["cwd"] and Path(p.info["cwd"]).is_relative_to(folder)]


def test_a_hanging_tutorial_fails_the_build_after_its_time_limit_and_leaves_no_process(project_copy):
    # Its own time limit: the other tutorial keeps the default (it may take over 5 s on a busy machine).
    hang = HANG.replace("import multiprocessing", "# tutorials-timeout: 5\nimport multiprocessing", 1)
    (project_copy / "beginner_source" / "hang_tutorial.py").write_text(hang)
    result = build(project_copy, project_copy / "_build", env=ENGLISH)
    line = hang.splitlines().index('if __name__ == "__main__":') + 1  # the block's first line of code
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert re.search(rf"beginner_source/hang_tutorial\.py:{line}: ERROR: tutorial timed out after 5 s", output), output
    # The other tutorial ran and its page is whole; the hanging one's run is kept, its page says how it ended.
    html_dir = project_copy / "_build" / "html" / "en" / "beginner"
    assert "tutorial-provenance" in (html_dir / "data_parallel_tutorial.html").read_text()
    assert "tutorial-provenance" in (html_dir / "hang_tutorial.html").read_text()
    assert outputs((html_dir / "hang_tutorial.html").read_text())[-1].strip() == "tutorial timed out after 5 s"
    assert _processes_in(project_copy) == []


def test_a_tutorial_s_own_time_limit_wins_and_a_crash_names_its_signal(project_copy):
    (project_copy / "beginner_source" / "crash_tutorial.py").write_text(
        '"""\nCrashes\n=======\n"""\n\n# tutorials-timeout: 60\nimport ctypes\n\nctypes.string_at(0)\n')
    result = build(project_copy, project_copy / "_build", env=ENGLISH)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "beginner_source/crash_tutorial.py:6: ERROR: tutorial died from signal SIGSEGV" in output
    assert "[execute] beginner_source/crash_tutorial.py (time limit 60 s)" in output
    page = (project_copy / "_build" / "html" / "en" / "beginner" / "crash_tutorial.html").read_text()
    assert "tutorials-timeout" not in page  # the run's setting is not shown to readers


def test_a_killed_build_leaves_no_tutorial_process(project_copy):
    import signal
    import subprocess
    import sys
    import time

    (project_copy / "beginner_source" / "hang_tutorial.py").write_text(HANG)
    build_process = subprocess.Popen(
        [sys.executable, "-m", "tutorials_site", "html", "--builddir", str(project_copy / "_build")],
        cwd=project_copy, env={**os.environ, **ENGLISH}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_processes_in(project_copy / "_build")) < 2:
        time.sleep(0.2)  # wait until the hanging tutorial and its worker run
    assert len(_processes_in(project_copy / "_build")) >= 2
    build_process.send_signal(signal.SIGTERM)
    build_process.wait(timeout=30)
    time.sleep(1)
    assert _processes_in(project_copy / "_build") == []

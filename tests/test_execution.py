"""Execution at build time: failures name the tutorial, and stale output never survives a change."""

import os
import re
from pathlib import Path

from conftest import build, executed
from conftest import build as build_all

ENGLISH = {"LANGUAGES": "en"}

BROKEN = '''"""
Broken on purpose
=================

This tutorial raises.
"""

value = 1
print(value / 0)
'''


def test_a_failing_tutorial_fails_the_build_naming_file_line_and_exception(project_copy):
    (project_copy / "beginner_source" / "broken_tutorial.py").write_text(BROKEN)
    result = build(project_copy, project_copy / "_build", env=ENGLISH)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "beginner_source/broken_tutorial.py:9: ERROR: tutorial failed: ZeroDivisionError: division by zero" in output
    assert "[build] failed: en" in output


def test_no_op_rebuild_executes_nothing_and_each_trigger_re_executes(project_copy, tmp_path):
    builddir = project_copy / "_build"

    def build(root, builddir, env=None):
        return build_all(root, builddir, env={**ENGLISH, **(env or {})})
    assert executed(build(project_copy, builddir)) == 1

    nothing_changed = build(project_copy, builddir)
    assert "[build] en: up to date" in nothing_changed.stdout and executed(nothing_changed) is None

    # A hand-written page changed: Sphinx runs, sphinx-gallery's md5 cache skips the tutorial.
    with open(project_copy / "index.md", "a") as page:
        page.write("\nOne more sentence.\n")
    assert executed(build(project_copy, builddir)) == 0

    with open(project_copy / "conf.py", "a") as conf:
        conf.write("\n# a change to the configuration\n")
    assert executed(build(project_copy, builddir)) == 1

    with open(project_copy / "tutorials_site" / "layout.py", "a") as module:
        module.write("\n# a change to the project's own package\n")
    assert executed(build(project_copy, builddir)) == 1

    # Another torch version: a dist-info first on the path is what importlib.metadata reports.
    fake = tmp_path / "fake-torch"
    (fake / "torch-99.0.0.dist-info").mkdir(parents=True)
    (fake / "torch-99.0.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 99.0.0\n")
    other_torch = {"PYTHONPATH": f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    assert executed(build(project_copy, builddir, env=other_torch)) == 1
    assert executed(build(project_copy, builddir, env=other_torch)) is None  # and then it is cached
    assert executed(build(project_copy, builddir)) == 1  # back to the real torch


# Lines allowed to differ between two builds of the same commit: run times and dates.
TIMING = [
    (re.compile(r'<p class="sphx-glr-timing">.*?</p>'), "TIME"),  # the page, in every language
    (re.compile(r"\d+ minutes [\d.]+ seconds"), "TIME"),  # its reST source
    (re.compile(r"\d\d:\d\d\.\d{3}"), "TIME"),
    (re.compile(r"(&quot;|\")seconds(&quot;|\"): [\d.]+"), "seconds: TIME"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"), "DATE"),
]


def normalized(path):
    data = path.read_bytes()
    if path.suffix not in {".html", ".txt", ".js", ".json"}:
        return data
    text = re.sub(r"</?span[^>]*>", "", data.decode())  # dates set as code are split into spans
    for pattern, placeholder in TIMING:
        text = pattern.sub(placeholder, text)
    return text


def test_two_builds_of_the_same_commit_differ_only_in_timing_and_dates(site, tmp_path):
    again = tmp_path / "again"
    assert build(Path(__file__).parent.parent, again).returncode == 0
    first = {p.relative_to(site): p for p in site.rglob("*") if p.is_file()}
    second = {p.relative_to(again / "html"): p for p in (again / "html").rglob("*") if p.is_file()}
    assert sorted(first) == sorted(second)
    differing = [name for name in first if normalized(first[name]) != normalized(second[name])]
    assert differing == []

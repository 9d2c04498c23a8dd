"""A prose edit runs nothing: the page in every language is rendered again from the kept run (guides/building.md)."""

import json
import re

import pytest

from conftest import build, executed
from tutorials_site.core.runs.fingerprint import source_digest

pytestmark = [pytest.mark.site, pytest.mark.tutorial]  # builds a site, runs tutorials

KEPT = "beginner_source/data_parallel_tutorial.py"  # its output cites none of its lines
WARNS = "beginner_source/ddp_tutorial.py"  # replaced here by a script whose output is a warning at its line
OUTPUT = "original tensor on cpu, result of .to() on cpu"  # what the kept tutorial prints
PARAGRAPH = "# Pick the device. Without a GPU, everything below runs on the CPU.\n"
WARNING_SCRIPT = '''"""
A warning
=========

Its output cites its own line.
"""

# %%
# Prose above the code.

import warnings

warnings.warn("look at this line")
'''


def _page(builddir, lang, stem):
    return (builddir / "html" / lang / "beginner" / f"{stem}.html").read_text(encoding="utf-8")


def _stamp(builddir, label):
    key = label.removesuffix(".py")
    return json.loads((builddir / "runs" / key / "stamp.json").read_text(encoding="utf-8"))


def _built(project, builddir):
    result = build(project, builddir, env={"LANGUAGES": "en ko"})
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_a_prose_edit_renders_every_language_again_and_executes_nothing(project_copy):
    kept, warns = project_copy / KEPT, project_copy / WARNS
    warns.write_text(WARNING_SCRIPT)
    builddir = project_copy / "_build"
    assert executed(_built(project_copy, builddir)) == 2
    assert _stamp(builddir, WARNS)["cites_lines"] and not _stamp(builddir, KEPT)["cites_lines"]

    # A paragraph edited on its lines: nothing runs; both languages show the new text and the kept output.
    edited = PARAGRAPH.replace("Pick", "Choose")
    kept.write_text(kept.read_text().replace(PARAGRAPH, edited))
    result = _built(project_copy, builddir)
    assert executed(result) == 0, result.stdout
    for lang in ("en", "ko"):
        page = _page(builddir, lang, "data_parallel_tutorial")
        assert "Choose the device." in page and OUTPUT in page, lang
        assert "tutorial-not-executed" not in page  # its provenance line: the run stands for this script

    # More lines of prose above the code: the code moved. The kept tutorial's output cites no line: it runs
    # nothing, its page shows the new paragraph; the one whose warning cites its line runs again.
    lines_before = _stamp(builddir, KEPT)["code_lines"]
    kept.write_text(kept.read_text().replace(edited, "# A new paragraph,\n# on two lines.\n#\n" + edited))
    warns.write_text(WARNING_SCRIPT.replace("# Prose above the code.\n", "# Prose above the code,\n# longer now.\n"))
    result = _built(project_copy, builddir)
    assert executed(result) == 1 and f"[execute] {WARNS} (time limit" in result.stdout, result.stdout
    assert f"[execute] {KEPT} (" not in result.stdout
    for lang in ("en", "ko"):
        page = _page(builddir, lang, "data_parallel_tutorial")
        assert re.search(r"A new paragraph,\s+on two lines\.", page) and OUTPUT in page, lang
    # The kept run, untouched: its stamp holds where its code stood when it ran.
    assert _stamp(builddir, KEPT)["code_lines"] == lines_before != list(source_digest(kept, None, project_copy).lines)
    assert re.search(r"ddp_tutorial\.py:14: UserWarning: look at this line", _page(builddir, "en", "ddp_tutorial"))

    # A comment inside a code block is code: it runs.
    kept.write_text(kept.read_text().replace("def __getitem__(self, index):",
                                             "def __getitem__(self, index):  # one random vector"))
    result = _built(project_copy, builddir)
    assert executed(result) == 1 and f"[execute] {KEPT} (time limit" in result.stdout, result.stdout

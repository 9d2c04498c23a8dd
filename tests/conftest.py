import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tutorials_site.layout import ROOT

TUTORIAL_PAGE = Path("en", "beginner", "data_parallel_tutorial.html")
# What a copy of the project needs to build: what git tracks, minus the heavy or generated parts.
_NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "_build", "docs", "__pycache__", ".pytest_cache")


def build(root, builddir, *args, env=None):
    """Run the build driver of the project at `root`; returns the CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-m", "tutorials_site.build", "html", "--builddir", str(builddir), *args],
        cwd=root,
        env={**os.environ, "LANGUAGES": "", **(env or {})},
        capture_output=True,
        text=True,
    )


def executed(result):
    """How many tutorials sphinx-gallery executed, None if Sphinx did not run at all."""
    found = re.findall(r"Sphinx-Gallery successfully executed (\d+) out of", result.stdout)
    return int(found[-1]) if found else None


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The project built once, executing the tutorials, into a temporary directory."""
    builddir = tmp_path_factory.mktemp("site")
    result = build(ROOT, builddir)
    assert result.returncode == 0, result.stdout + result.stderr
    return builddir / "html"


@pytest.fixture
def project_copy(tmp_path):
    """A throw-away copy of the project, to break or change without touching the real one."""
    copy = tmp_path / "project"
    shutil.copytree(ROOT, copy, ignore=_NOT_COPIED)
    return copy

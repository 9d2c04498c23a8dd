import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from tutorials_site.core.layout import ROOT
from tutorials_site.core.project import Project

TUTORIAL_PAGE = Path("en", "beginner", "data_parallel_tutorial.html")
# What a copy of the project needs to build: what git tracks, minus the heavy or generated parts.
_NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "_build", "docs", "__pycache__", ".pytest_cache")
# Copies of the project keep every tutorial, but all except this one as stubs (prose and comments,
# no code): the tests that build a copy exercise the pipeline, and each of their builds then takes
# seconds. Cross-references and catalogs stay whole; the full site is built once, by `site`.
KEPT_TUTORIAL = "data_parallel_tutorial"
# What a build prints depends on these (commands/build_log.py): the tests' builds print what a build outside
# CI prints, whatever runs the tests, unless a test sets them.
QUIET = {"VERBOSE": "", "GITHUB_ACTIONS": ""}


def _stub(path):
    """Blank every line of code of a tutorial, keeping its prose and its comments (translation units)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for block in split_code_and_text_blocks(str(path))[1]:
        if block.type == "code":
            for row in range(block.lineno - 1, block.lineno - 1 + block.content.count("\n") + 1):
                if lines[row].strip() and not lines[row].lstrip().startswith("#"):
                    lines[row] = ""
    path.write_text("\n".join(lines), encoding="utf-8")


def copy_project(target):
    """The project copied to `target`, to break or change freely; tutorials but one are stubs."""
    shutil.copytree(ROOT, target, ignore=_NOT_COPIED)
    for tutorial in Project.read(target).tutorials:
        if tutorial.path.stem != KEPT_TUTORIAL:
            _stub(tutorial.path)
    return target


def build(root, builddir, *args, env=None):
    """Run the build driver of the project at `root`; returns the CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-m", "tutorials_site", "html-noplot" if "--noplot" in args else "html",
         "--builddir", str(builddir), *(a for a in args if a != "--noplot")],
        cwd=root,
        env={**os.environ, "LANGUAGES": "", **QUIET, **(env or {})},
        capture_output=True,
        text=True,
    )


def executed(result):
    """How many tutorials the build executed, None if it executed nothing at all (html-noplot, assemble)."""
    found = re.findall(r"\[execute\] executed (\d+) of", result.stdout)
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
    return copy_project(tmp_path / "project")


VENV = Path(sys.executable).parent.parent  # the environment running these tests


def make(project, *args, **env):
    """`make ARGS` in a project, with this environment as its .venv; LANGUAGES defaults to all."""
    return subprocess.run(["make", "-s", *args, f"VENV={VENV}"], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "LANGUAGES": "", **QUIET, **env})


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def published(tmp_path_factory):
    """A copy of the project after `VERSION=1.0 make docs` then `VERSION=main make docs`."""
    project = copy_project(tmp_path_factory.mktemp("published") / "project")
    for version in ("1.0", "main"):
        result = make(project, "docs", VERSION=version)
        assert result.returncode == 0, result.stdout + result.stderr
    return project


def git(repo, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def gh_pages(published, tmp_path):
    """A git repository standing in for the gh-pages branch, holding the published tree."""
    repo = tmp_path / "gh-pages"
    shutil.copytree(published / "docs", repo)
    git(repo, "init", "-q", "-b", "gh-pages")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "published")
    return repo


def luminance(rgb):
    """WCAG relative luminance of an sRGB colour given as 0-255 channels."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a, b):
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)

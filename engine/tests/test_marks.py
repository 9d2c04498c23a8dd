"""The marks that keep `make test-fast` to the unit tests (tests/conftest.py): what needs one, and a test
that starts such a process without its mark failing, where a test through a marking fixture is left out."""

import sys
from pathlib import Path

import pytest

from conftest import ENGINE, SITE_COMMAND, marked_process


@pytest.mark.parametrize("argv, mark", [
    ([sys.executable, "-m", "tutorials_site", "html", "--builddir", "x"], "site"),
    ([sys.executable, "-m", "tutorials_site", "html-noplot"], "site"),
    ([sys.executable, "-m", "tutorials_site", "update-po"], "site"),
    ([sys.executable, "-m", "tutorials_site", "check", "x"], None),
    ([sys.executable, "-m", "sphinx", "-b", "html", "a", "b"], "site"),
    ("/usr/bin/sphinx-build -b html a b", "site"),
    (["make", "-s", "docs", "VENV=/x", "LANGUAGES="], "site"),
    (["make", "-s", "VENV=/x"], "site"),  # the first target: html
    (["make", "-s", "lint", "VENV=/x"], None),
    (["make", "-s", "-f", "/x/tutorials-site.mk", "html-noplot"], "site"),
    (["make", "-s", "-f", "/x/tutorials-site.mk", "publish"], None),
    ([str(SITE_COMMAND), "docs"], "site"),
    ([str(SITE_COMMAND), "check"], None),
    (["/usr/bin/chromium", "--headless"], "site"),
    ([sys.executable, "-m", "tutorials_site.commands.runner", "a.py", "run"], "tutorial"),
    ([sys.executable, "-c", "import torch"], None),
    (["git", "status"], None),
    (b"/usr/bin/sphinx-build", "site"),
    (Path("/usr/bin/true"), None),
])
def test_the_processes_that_need_a_mark(argv, mark):
    found = marked_process(argv)
    assert (found[0] if found else None) == mark


def test_an_unmarked_test_that_builds_fails_and_a_marked_one_is_left_out_of_the_fast_set(pytester):
    settings = (ENGINE / "pyproject.toml").read_text().split("[tool.pytest.ini_options]\n", 1)[1]
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\n" + settings.replace('testpaths = ["tests"]\n', ""))
    pytester.makeconftest((ENGINE / "tests" / "conftest.py").read_text())
    pytester.syspathinsert(ENGINE / "tests")  # the conftest's own imports (its fixtures)
    pytester.makepyfile(test_inner="""
        import subprocess, sys
        import pytest

        def test_builds_unmarked():
            subprocess.run([sys.executable, "-m", "sphinx", "--version"], check=True)

        def test_runs_a_tutorial_unmarked():
            subprocess.run([sys.executable, "-m", "tutorials_site.commands.runner"])

        def test_starts_a_harmless_process():
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        @pytest.mark.site
        def test_builds_marked():
            subprocess.run([sys.executable, "-m", "sphinx", "--version"], check=True)

        def test_builds_through_a_fixture(builds_site):
            subprocess.run([sys.executable, "-m", "sphinx", "--version"], check=True)
        """)
    result = pytester.runpytest_subprocess("-m", "not site and not tutorial")
    result.assert_outcomes(passed=1, failed=2, deselected=2)
    result.stdout.fnmatch_lines(["*test_builds_unmarked starts sphinx-build: mark it `@pytest.mark.site`*",
                                 "*test_runs_a_tutorial_unmarked starts the tutorial runner: mark it "
                                 "`@pytest.mark.tutorial`*"])

"""Asking git (core.git): its output, or "" where it has none to give; a run's origin from it."""

from conftest import git as run_git
from tutorials_site.core import git
from tutorials_site.core.runs import stamping


def test_the_output_is_stripped_and_a_failure_is_empty(tmp_path):
    assert git.run(tmp_path, "rev-parse", "HEAD") == ""  # not a repository
    run_git(tmp_path, "init", "-q", "-b", "main")
    assert git.run(tmp_path, "rev-parse", "HEAD") == ""  # no commit yet
    run_git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    head = git.run(tmp_path, "rev-parse", "HEAD")
    assert len(head) == 40 and head == head.strip() and git.run(tmp_path, "rev-parse", "--abbrev-ref", "HEAD") == "main"


def test_a_run_comes_from_the_commit_and_says_when_the_work_tree_differs(tmp_path):
    assert stamping.origin(tmp_path)["commit"] == "unknown"
    run_git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "tutorial.py").write_text("print(1)\n")
    run_git(tmp_path, "add", "tutorial.py")
    run_git(tmp_path, "commit", "-q", "-m", "first")
    short = git.run(tmp_path, "rev-parse", "--short=12", "HEAD")
    assert stamping.origin(tmp_path)["commit"] == short and len(short) == 12
    (tmp_path / "untracked.txt").write_text("not part of the run's source\n")
    assert stamping.origin(tmp_path)["commit"] == short
    (tmp_path / "tutorial.py").write_text("print(2)\n")
    assert stamping.origin(tmp_path)["commit"] == short + "+changes"

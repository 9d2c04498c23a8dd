"""What a build prints (commands/build_log.py): a few lines without a terminal, a live line on one, Sphinx's
own output in files unless VERBOSE=1, folded under GitHub Actions; every warning once, at the author's line."""

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from conftest import build, copy_project
from tutorials_site.commands.build_log import time_left

DDP = Path("beginner_source", "ddp_tutorial.py")
# A text block whose heading's underline is too short: Sphinx warns in every language, the build once.
SHORT = "\n######################################################################\n# A heading\n# ----\n#\n# Text.\n"
# The most lines a build without a terminal prints besides its warnings: per tutorial executed (its start,
# its end, a note that it ran on fewer GPUs than it declares), per language (its start, its end), and
# the build's own (tutorials to run, tutorials executed, done, where to look).
PER_TUTORIAL, PER_LANGUAGE, PER_BUILD = 3, 2, 4


@pytest.fixture(scope="module")
def built(builds_site: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess, str]:
    """A copy of the project with a warning in a tutorial, built into its _build for en and ko, and the
    warning as the build should tell it."""
    project = copy_project(tmp_path_factory.mktemp("build_log") / "project")
    script = project / DDP
    line = len(script.read_text(encoding="utf-8").splitlines()) + 4  # the underline: after a blank, ####, the heading
    script.write_text(script.read_text(encoding="utf-8") + SHORT, encoding="utf-8")
    result = build(project, project / "_build", env={"LANGUAGES": "en ko"})
    assert result.returncode == 0, result.stdout + result.stderr
    return project, result, f"{DDP.as_posix()}:{line}: WARNING: Title underline too short.\n\nA heading\n---- [docutils]"


def told_in(warning: str, languages: str) -> str:
    """WARNING as a build of several languages tells it: the languages that found it end its first line."""
    first, rest = warning.split("\n", 1)
    return f"{first} ({languages})\n{rest}"


def test_the_estimate_counts_what_is_left_of_the_running_tutorial_and_the_untimed() -> None:
    assert time_left([10.0, None, 5.0], 0, 4.0) == (11.0, 1)
    assert time_left([10.0, None, 5.0], 0, 30.0) == (5.0, 1)  # past its time: nothing left of it
    assert time_left([10.0, None, 5.0], 1, 2.0) == (5.0, 1)
    assert time_left([10.0, None, 5.0], 3, 0.0) == (0, 0)


def test_without_a_terminal_a_build_prints_a_few_plain_lines_and_every_warning_once(built) -> None:
    project, result, warning = built
    warning = told_in(warning, "en, ko")
    assert result.stdout.count(f"{warning}\n") == 1, result.stdout  # whole, with the heading docutils quotes
    told = result.stdout.replace(f"{warning}\n", "").splitlines()
    assert "[execute] executed 2 of 2 tutorial(s)" in told
    assert len(told) <= PER_TUTORIAL * 2 + PER_LANGUAGE * 2 + PER_BUILD, result.stdout
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    for lang in ("en", "ko"):
        log = (project / "_build" / "logs" / f"{lang}.log").read_text(encoding="utf-8")
        assert "Title underline too short" in log and "writing output" in log and "\x1b" not in log
        assert "writing output" not in result.stdout
        # Its first lines say why sphinx-gallery reports that it executed nothing.
        assert "executes nothing itself" in log.split("Running Sphinx")[0]
    assert f"[build] open {Path('_build', 'html', 'index.html')}" in result.stdout


def test_a_warning_is_told_again_by_the_next_build_of_the_same_sources(built) -> None:
    project, _, warning = built
    again = build(project, project / "_build", env={"LANGUAGES": "en ko"})
    assert again.returncode == 0 and again.stdout.count(f"{told_in(warning, 'en, ko')}\n") == 1, again.stdout


def test_verbose_shows_sphinx_logs_and_github_actions_folds_them(built) -> None:
    project, _, warning = built
    builddir = project / "_build"
    verbose = build(project, builddir, env={"LANGUAGES": "ja", "VERBOSE": "1"})
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    log = (builddir / "logs" / "ja.log").read_text(encoding="utf-8")
    assert log.rstrip("\n") in verbose.stdout and "writing output" in log
    assert verbose.stdout.count(warning) == 1  # the log's own names the page generated from the script

    actions = build(project, builddir, env={"LANGUAGES": "zh-cn", "GITHUB_ACTIONS": "true"})
    assert actions.returncode == 0, actions.stdout + actions.stderr
    lines = actions.stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("::group::Sphinx's log of zh-cn")))
    end = lines.index("::endgroup::")
    token = lines[start + 1].removeprefix("::stop-commands::")
    assert len(token) >= 32 and lines[end - 1] == f"::{token}::"
    log = (builddir / "logs" / "zh-cn.log").read_text(encoding="utf-8").rstrip("\n").splitlines()
    # Indented: the problem matchers report the warnings the build locates, not the log's.
    assert lines[start + 2:end - 1] == [f"  {line}" for line in log]
    assert actions.stdout.count(warning) == 1


def _under_a_terminal(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """COMMAND's exit status and output, run with a pseudo-terminal of 120 columns as its terminal."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with subprocess.Popen(command, cwd=cwd, env=env, stdin=follower, stdout=follower, stderr=follower) as process:
        os.close(follower)
        output = b""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if select.select([leader], [], [], 1)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the command and its children are gone
                    break
                if not chunk:
                    break
                output += chunk
        else:
            process.kill()
    os.close(leader)
    return process.returncode, output.decode(errors="replace")


def test_on_a_terminal_a_build_shows_its_progress_on_a_live_line(built) -> None:
    project, _, _ = built
    script = project / DDP
    script.write_text(script.read_text(encoding="utf-8") + "\nprint('run again')\n", encoding="utf-8")
    env = {**os.environ, "LANGUAGES": "en", "TERM": "xterm"}  # VERBOSE and GITHUB_ACTIONS cleared by conftest
    status, output = _under_a_terminal([sys.executable, "-m", "tutorials_site", "html"], project, env)
    assert status == 0, output
    # Redrawn in place: each state of the live line ends with a carriage return, never a newline.
    states = output.split("\r")
    assert any(state.startswith("[execute] 0/1 done |") and f"running {DDP.as_posix()} for" in state
               and "in all, about" in state for state in states), output
    assert any(state.startswith("[build] 0/1 languages done |") and "rendering en" in state for state in states)
    assert f"[execute] {DDP.as_posix()}: " in output and "[build] en: done in" in output
    assert "(time limit" not in output  # what the live line said needs no line of its own
    assert output.rstrip().endswith(f"Sphinx's logs are in {Path('_build', 'logs')}/"), output


def test_a_failed_language_shows_what_sphinx_reported(built, tmp_path: Path) -> None:
    project, _, warning = built
    conf = project / "conf.py"
    kept = conf.read_text(encoding="utf-8")
    conf.write_text(kept + "\n\ndef setup(app):\n    app.connect('env-updated', lambda app, env: 1 / 0)\n",
                    encoding="utf-8")
    try:
        result = build(project, tmp_path / "b", "--noplot", env={"LANGUAGES": "en"})
    finally:
        conf.write_text(kept, encoding="utf-8")
    assert result.returncode == 1 and result.stderr.strip() == "[build] failed: en", result.stdout + result.stderr
    failed = result.stdout.split("[build] en: sphinx-build failed (exit status 2)")[1]
    assert "threw an exception (exception: division by zero)" in failed, result.stdout
    assert result.stdout.count(warning) == 1 and "writing output" not in result.stdout

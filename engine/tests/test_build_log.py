"""What a build prints (commands/build_log.py): a few lines without a terminal, a live line on one, Sphinx's
own output in files unless VERBOSE=1, folded under GitHub Actions; every warning once, at the author's line."""

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, build, copy_project
from tutorials_site.commands.build_log import clock, expected_in_all, running
from tutorials_site.core.errors import UsageError
from tutorials_site.core.layout import BuildTree
from tutorials_site.core.project import Project
from tutorials_site.core.runs import runs, shards
from tutorials_site.core.runs.records import Hardware, Stamp
from tutorials_site.core.runs.runs import Progress
from tutorials_site.core.runs.shards import Expected
from tutorials_site.core.site.settings import from_environment

DDP = Path("beginner_source", "ddp_tutorial.py")
# A text block whose heading's underline is too short: Sphinx warns in every language, the build once.
SHORT = "\n######################################################################\n# A heading\n# ----\n#\n# Text.\n"
# The most lines a build without a terminal prints besides its warnings: per tutorial executed (its start,
# its end, a note that it ran on fewer GPUs than it declares), per language (its start, its end), and
# the build's own (tutorials to run, tutorials executed, done, where to look); and, while a tutorial runs,
# one every PROGRESS_INTERVAL seconds (RUNNING).
PER_TUTORIAL, PER_LANGUAGE, PER_BUILD = 3, 2, 4
RUNNING = re.compile(r"\[execute\] \S+\.py: running \d+:\d\d")


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


LAST, CI = Expected(28.0, "its last run"), Expected(27.3, "CI's recorded run")


def test_a_duration_reads_as_a_clock_to_the_second() -> None:
    assert [clock(s) for s in (0, 0.4, 28.2, 59.6, 112, 3723)] == ["0:00", "0:00", "0:28", "1:00", "1:52", "1:02:03"]


def test_a_running_tutorial_is_told_with_its_block_and_the_time_left_by_its_last_run() -> None:
    label = "beginner_source/ddp_tutorial.py"
    assert running(label, 12.2, LAST, Progress(block=2, line=120)) == (
        f"{label}: running 0:12 in block 3 (line 120), about 0:16 left (its last run: 0:28)")
    assert running(label, 20, CI, None) == f"{label}: running 0:20, about 0:08 left (CI's recorded run: 0:27)"
    # Never "0:00 left" while it should still run, and past its time it says so, whatever long it takes.
    assert running(label, 27.9, LAST, None).endswith("about 0:01 left (its last run: 0:28)")
    for elapsed in (28.0, 112.0):
        assert running(label, elapsed, LAST, None) == f"{label}: running {clock(elapsed)}, longer than its last run 0:28"
    assert running(label, 15, None, Progress(block=0, line=9)) == (
        f"{label}: running 0:15 in block 1 (line 9), time left unknown (never run here, no duration recorded by CI)")


def test_the_time_expected_in_all_counts_those_never_timed_apart() -> None:
    assert expected_in_all([LAST, None, Expected(5.0, "its last run")]) == "about 0:33 expected, +1 of unknown time"
    assert expected_in_all([LAST]) == "about 0:28 expected"
    assert expected_in_all([None, None]) == "time unknown (none of them timed before)"


def test_a_tutorial_is_expected_to_take_as_long_as_its_last_run_else_as_ci_recorded(tmp_path, monkeypatch) -> None:
    durations = tmp_path / "tutorial-durations.json"
    durations.write_text(json.dumps({"g/recorded": 27.3, "g/ran": 90.0, "g/failed": 60.0}))
    monkeypatch.setattr(shards, "DURATIONS", str(durations))  # an absolute path: the project's root left out
    tree = BuildTree(tmp_path / "_build")
    hardware = Hardware(device="CPU", gpus=0, machine="x86_64", torch=None, cuda=None)
    for key, failed in [("g/ran", False), ("g/failed", True), ("g/failed-new", True)]:
        Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=4.9, failed=failed, peak_rss_mb=1.0,
              gpu_peak_mb=(), hardware=hardware, commit="c", date="d", files=()).write(tree.run_dir(key) / runs.STAMP)
    # A failed run's time says nothing of a whole run's.
    assert shards.expected_seconds(Project(tmp_path, {}), tree, ["g/ran", "g/recorded", "g/failed", "g/failed-new", "g/new"]) == {
        "g/ran": Expected(4.9, "its last run"), "g/recorded": Expected(27.3, "CI's recorded run"),
        "g/failed": Expected(60.0, "CI's recorded run"), "g/failed-new": None, "g/new": None}


WRITTEN = runs.Progress(block=2, line=40).to_json().encode()  # as the runner writes it


@pytest.mark.parametrize("content", [
    WRITTEN, b"", b"{", b"[" * 5000 + b"]" * 5000, b'{"block": -1, "line": 4, "format": 1}',
    b'{"block": 2, "line": 40}', b'{"block": 2, "line": 40, "format": 2}',  # of no format, or of another
    b'{"block": 1, "line": 4, "x": 0, "format": 1}', b'{"block": true, "line": 4, "format": 1}',
    b'{"block": 1.0, "line": 4, "format": 1}', b'"text"',
    b'{"format": 1, "block": 2, "line": 40, "pad": "' + b"x" * 10_000 + b'"}',  # read no further than a few KB
])
def test_the_progress_of_a_run_is_read_as_the_runner_writes_it_and_anything_else_is_none(tmp_path, content) -> None:
    path = tmp_path / runs.PROGRESS
    path.write_bytes(content)
    assert runs.read_progress(path) == (runs.Progress(block=2, line=40) if content == WRITTEN else None)


def test_a_progress_file_that_is_a_link_a_fifo_or_a_folder_is_never_followed_nor_waited_on(tmp_path) -> None:
    real = tmp_path / "real.json"
    runs.Progress(block=0, line=1).write(real)
    assert runs.read_progress(real) == runs.Progress(block=0, line=1)
    (tmp_path / "link").symlink_to(real)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name in ("link", "fifo", "folder", "missing"):
        assert runs.read_progress(tmp_path / name) is None, name


def test_without_a_terminal_a_build_prints_a_few_plain_lines_and_every_warning_once(built) -> None:
    project, result, warning = built
    warning = told_in(warning, "en, ko")
    assert result.stdout.count(f"{warning}\n") == 1, result.stdout  # whole, with the heading docutils quotes
    told = [line for line in result.stdout.replace(f"{warning}\n", "").splitlines() if not RUNNING.match(line)]
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


def test_a_build_that_changes_nothing_sums_its_warnings_up_and_its_logs_hold_them_all(built) -> None:
    project, _, warning = built
    warning = told_in(warning, "en, ko")
    builddir = project / "_build"
    again = build(project, project / "_build", env={"LANGUAGES": "en ko"})
    assert again.returncode == 0 and warning not in again.stdout, again.stdout
    assert "[build] en: up to date" in again.stdout  # no Sphinx at all
    summary = [line for line in again.stdout.splitlines() if "warning(s)" in line]
    assert len(summary) == 1 and "1 warning(s)" in summary[0] and str(Path("_build", "logs", "warnings.log")) in summary[0]
    assert (builddir / "logs" / "warnings.log").read_text(encoding="utf-8") == f"{warning}\n"
    # Sphinx run again on the same sources reads no page, and still tells the page's warning, in its log.
    for lang in ("en", "ko"):
        (builddir / "doctrees" / lang / "inputs.sha256").unlink()
    again = build(project, project / "_build", env={"LANGUAGES": "en ko"})
    assert warning not in again.stdout and "1 warning(s)" in again.stdout, again.stdout
    for lang in ("en", "ko"):
        log = (builddir / "logs" / f"{lang}.log").read_text(encoding="utf-8")
        assert "0 added, 0 changed, 0 removed" in log and "Title underline too short" in log
    verbose = build(project, project / "_build", env={"LANGUAGES": "en ko", "VERBOSE": "1"})
    assert verbose.stdout.count(f"{warning}\n") == 1, verbose.stdout


def test_a_page_edited_reads_that_page_alone_and_tells_only_what_is_new_in_full(built) -> None:
    project, _, warning = built
    builddir = project / "_build"
    script = project / DDP
    script.write_text(script.read_text(encoding="utf-8") + "\n# %%\n# Another heading\n# ----\n#\n# Text.\n",
                      encoding="utf-8")
    edited = build(project, builddir, env={"LANGUAGES": "en ko"})
    assert edited.returncode == 0, edited.stdout + edited.stderr
    for lang in ("en", "ko"):
        log = (builddir / "logs" / f"{lang}.log").read_text(encoding="utf-8")
        # The tutorial's page, and the landing page, whose card of it shows its intro; nothing else.
        assert set(re.findall(r"^reading sources\.\.\. \[ *\d+%\] (\S+)$", log, re.M)) == {"beginner/ddp_tutorial",
                                                                                           "index"}, log
    assert told_in(warning, "en, ko") not in edited.stdout  # told by the last build
    new = [line for line in edited.stdout.splitlines() if "Title underline too short" in line]
    assert len(new) == 1 and ":" in new[0], edited.stdout  # the new heading's, at its line
    assert "2 warning(s)" in edited.stdout and "1 told by the last build" in edited.stdout


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
    # The running tutorial, its time and its estimate (by its last run, in the built fixture) first.
    estimate = r"(about \d:\d\d left \(its last run: \d:\d\d\)|longer than its last run \d:\d\d)"
    assert any(re.match(rf"\[execute\] {DDP.as_posix()}: running \d:\d\d( in block \d+ \(line \d+\))?, {estimate}", state)
               for state in states), output
    assert any(state.endswith("| 1/1 done") for state in states), output
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


SILENT = '''"""
Silent for a while
==================

Prints nothing while it sleeps.
"""

import time

# %%
# A block that prints nothing for four seconds.

time.sleep(4)
'''
SILENT_LABEL = "beginner_source/silent.py"


def _timed_lines(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, list[tuple[float, str]]]:
    """COMMAND's exit status and each line of its output (through a pipe) with the time it came."""
    lines = []
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append((time.monotonic(), line.rstrip("\n")))
    return process.returncode, lines


def _while_running(lines: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """The lines from SILENT's start to its end, both included."""
    texts = [text for _, text in lines]
    start = texts.index(f"[execute] {SILENT_LABEL} (time limit 1800 s)")
    end = next(k for k, text in enumerate(texts) if re.fullmatch(rf"\[execute\] {SILENT_LABEL}: [\d.]+ s, .*", text))
    return lines[start:end + 1]


@pytest.mark.site
def test_without_a_terminal_a_running_tutorial_is_told_every_interval_with_its_block_and_estimate(project_copy) -> None:
    script = project_copy / SILENT_LABEL
    script.write_text(SILENT, encoding="utf-8")
    command = [sys.executable, "-m", "tutorials_site", "html"]
    env = {**os.environ, "LANGUAGES": "en", "PROGRESS_INTERVAL": "1", "TUTORIALS": SILENT_LABEL}
    status, lines = _timed_lines(command, project_copy, env)
    assert status == 0, lines
    during = _while_running(lines)
    told = [text for _, text in during[1:-1]]
    assert len(told) >= 3, during  # four silent seconds, a line every second
    # None silent for longer than the interval (and some slack for a busy machine).
    assert max(later - earlier for (earlier, _), (later, _) in zip(during, during[1:])) < 2.5, during
    running = rf"\[execute\] {SILENT_LABEL}: running \d:\d\d( in block 2 \(line 13\))?, "
    unknown = "time left unknown (never run here, no duration recorded by CI)"
    assert all(re.fullmatch(running + re.escape(unknown), text) for text in told), told
    assert f"running 0:03 in block 2 (line 13), {unknown}" in "\n".join(told), told

    # Run again: the estimate is its last run's, and past it, it says so.
    script.write_text(SILENT.replace("time.sleep(4)", "time.sleep(6)"), encoding="utf-8")
    status, lines = _timed_lines(command, project_copy, env)
    assert status == 0, lines
    told = [text for _, text in _while_running(lines)[1:-1]]
    estimate = r"(about \d:\d\d left \(its last run: 0:0[4-9]\)|longer than its last run 0:0[4-9])"
    assert all(re.fullmatch(running + estimate, text) for text in told), told
    assert "about" in told[0] and "longer than its last run" in told[-1], told


def test_progress_interval_is_a_positive_number_of_seconds_15_by_default() -> None:
    assert from_environment({}, FIXTURES).progress_interval == 15
    assert from_environment({"PROGRESS_INTERVAL": "2.5"}, FIXTURES).progress_interval == 2.5
    with pytest.raises(UsageError, match="^PROGRESS_INTERVAL: '0' is not a number of seconds"):
        from_environment({"PROGRESS_INTERVAL": "0"}, FIXTURES)

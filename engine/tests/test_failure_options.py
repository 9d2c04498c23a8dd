"""sphinx-gallery's failure options of conf.py, end to end on copies of the project.

expected_failing_examples, only_warn_on_example_error, abort_on_example_error and
run_stale_examples are applied by the build itself (sphinx-gallery executes nothing
here); without any of them, a tutorial that raises fails the build.
"""

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build, copy_project
from tutorials_site.core import assets, languages
from tutorials_site.core.site.checks import page_outputs
from tutorials_site.core.text import catalogs

pytestmark = pytest.mark.site  # every test here builds a site

ENGLISH = {"LANGUAGES": "en"}

# Line 8 prints; line 13, in a second block, prints too, then line 14 raises. The page shows both printed
# lines (sphinx-gallery would drop the failed block's), then the traceback, under a banner.
RAISES = '''"""
Raising on purpose
==================

Prints a sentence, then raises.
"""

print("printed before the error")

# %%
# The next block prints, then raises.

print("printed by the block that raises")
raise ValueError("this tutorial fails on purpose")
'''
RAISES_LINE = 14
PASSES = '''"""
Running cleanly
===============

Prints a sentence and ends.
"""

print("printed by a tutorial that passes")
'''
# The copy's own tutorials, in the order the build executes them (file name order).
OWN = ["beginner_source/data_parallel_tutorial.py", "beginner_source/ddp_tutorial.py"]


def failed_line(label: str, line: int = RAISES_LINE) -> str:
    """The error line the build prints for RAISES saved as `label`."""
    return f"{label}:{line}: ERROR: tutorial failed: ValueError: this tutorial fails on purpose"


def make_copy(tmp_path: Path, tutorials: dict[str, str], *conf_lines: str) -> Path:
    """A copy of the project with these tutorials added to beginner_source/ and lines appended to conf.py."""
    project = copy_project(tmp_path / "project", kept=None)  # their own tutorials, stubs: what torch prints is not theirs to check
    for name, text in tutorials.items():
        (project / "beginner_source" / name).write_text(text, encoding="utf-8")
    with open(project / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\n" + "".join(f"{line}\n" for line in conf_lines))
    return project


def built_copy(tmp_path: Path, tutorials: dict[str, str], *conf_lines: str,
               languages: str = "en") -> tuple[Path, Path, subprocess.CompletedProcess, str]:
    """A copy made by make_copy and built in LANGUAGES: (project, build folder, the process, all it printed)."""
    project = make_copy(tmp_path, tutorials, *conf_lines)
    builddir = project / "_build"
    result = build(project, builddir, env={"LANGUAGES": languages})
    return project, builddir, result, result.stdout + result.stderr


def started(output: str) -> list[str]:
    """The tutorials a build started, in order (its `[execute] <file> (time limit …` lines)."""
    return re.findall(r"^\[execute\] (\S+) \(time limit", output, re.M)


def count_lines(output: str, line: str) -> int:
    """How many lines of `output` are exactly `line` (leading and trailing blanks aside)."""
    return sum(candidate.strip() == line for candidate in output.splitlines())


def assert_page_shows_traceback(page: Path, expected: bool = False) -> None:
    """The page shows what each block printed, the failed one's included, then in an output block of its own the
    traceback of its error; over it, a banner says the tutorial failed (or, EXPECTED, that it fails on purpose)."""
    assert page.is_file(), page
    blocks = page_outputs(page)
    assert blocks[:2] == ["printed before the error\n", "printed by the block that raises\n"], blocks
    assert len(blocks) == 3 and blocks[2].startswith("Traceback (most recent call last)"), blocks
    assert blocks[2].endswith("ValueError: this tutorial fails on purpose\n"), blocks[2]
    html = page.read_text(encoding="utf-8")
    banner = re.search(r'<div class="(tutorial-failed[^"]*)">(.*?)</div>', html, re.S)
    assert banner and ("tutorial-failed-expected" in banner[1]) == expected, html
    assert html.index("tutorial-failed") < html.index("tutorial-provenance") < html.index("printed before the error")


# The engine's labels (its catalog's messages), and one translated as that language's catalog says.
ENGINE_LABELS = [message.id for message in catalogs.load(assets.label_po(languages.BY_CODE["ko"])) if message.id]


def engine_label(code: str, msgid: str) -> str:
    return catalogs.translations(catalogs.load(assets.label_po(languages.BY_CODE[code])))[msgid]


def html_text(page: Path) -> str:
    """A page's text, tags removed, entities resolved."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def check(project: Path, builddir: Path) -> subprocess.CompletedProcess:
    """`python -m tutorials_site check` (make check) on a build folder, English only."""
    return subprocess.run([sys.executable, "-m", "tutorials_site", "check", "--builddir", str(builddir)],
                          cwd=project, env={**os.environ, **ENGLISH}, capture_output=True, text=True)


def last_line(text: str) -> str:
    """The last non-blank line of a command's output."""
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def test_without_options_a_failing_tutorial_fails_the_build_and_the_last_line_repeats_it(tmp_path: Path) -> None:
    project, builddir, result, output = built_copy(tmp_path, {"raises_error.py": RAISES}, languages="en ko")
    assert result.returncode == 1, output
    error = failed_line("beginner_source/raises_error.py")
    assert told_with_traceback(result.stdout), output  # told when it happened, with its traceback, once ...
    assert output.count("Traceback (most recent call last)") == 1, output
    assert last_line(result.stderr) == f"[build] failed: {error}", output  # ... and its line again at the end
    assert started(output) == [*OWN, "beginner_source/raises_error.py"], output
    assert count_lines(output, "[execute] executed 3 of 3 tutorial(s)") == 1, output
    assert "only_warn_on_example_error" not in output and "abort_on_example_error" not in output
    # Its page, in every language: what it printed, its traceback, under a banner that says it failed.
    failed = "This tutorial failed when this page was built"
    for lang, said in [("en", failed), ("ko", engine_label("ko", next(m for m in ENGINE_LABELS if m.startswith(failed))))]:
        page = builddir / "html" / lang / "beginner" / "raises_error.html"
        assert_page_shows_traceback(page)
        assert said in html_text(page), (lang, said)

    checked = check(project, builddir)  # the build failed: check says which tutorial did
    assert checked.returncode == 1 and f"check: {error}" in checked.stdout.splitlines(), checked.stdout + checked.stderr
    assert "no build.json" in last_line(checked.stderr), checked.stderr


def test_expected_failure_is_stamped_shows_its_traceback_and_passes_build_and_check(tmp_path: Path) -> None:
    project, builddir, result, output = built_copy(tmp_path, {"raises_error.py": RAISES},
                        'sphinx_gallery_conf["expected_failing_examples"] = ["beginner_source/raises_error.py"]')
    assert result.returncode == 0, output
    expected = "[execute] beginner_source/raises_error.py: failed, as conf.py's expected_failing_examples expects"
    assert count_lines(result.stdout, expected) == 1, output
    assert "ERROR" not in output, output
    assert started(output) == [*OWN, "beginner_source/raises_error.py"], output
    assert count_lines(output, "[execute] executed 3 of 3 tutorial(s)") == 1, output
    assert (builddir / "runs" / "beginner_source" / "raises_error" / "stamp.json").is_file()
    assert_page_shows_traceback(builddir / "html" / "en" / "beginner" / "raises_error.html", expected=True)

    checked = check(project, builddir)
    check_output = checked.stdout + checked.stderr
    assert checked.returncode == 0, check_output
    assert count_lines(checked.stdout, f"check: {(builddir / 'html').relative_to(project)}: every tutorial executed and stamped, "
                                       "every internal link resolves; 1 failed as conf.py expects or allows "
                                       "(expected_failing_examples, tutorials_allowed_failures): "
                                       "beginner_source/raises_error.py") == 1, check_output


def test_a_tutorial_allowed_to_fail_fails_neither_the_build_nor_check_and_may_pass(tmp_path: Path) -> None:
    project, builddir, result, output = built_copy(
        tmp_path, {"raises_error.py": RAISES, "runs_cleanly.py": PASSES},
        'tutorials_allowed_failures = ["beginner_source/raises_*", "beginner_source/runs_*"]')
    assert result.returncode == 0 and "ERROR" not in output, output
    assert count_lines(result.stdout, "[execute] beginner_source/raises_error.py: failed, which conf.py's "
                                      "tutorials_allowed_failures allows") == 1, output
    page = builddir / "html" / "en" / "beginner" / "raises_error.html"
    assert_page_shows_traceback(page)  # its page says it failed, not that it fails on purpose
    assert "This tutorial failed when this page was built" in html_text(page)
    checked = check(project, builddir)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.rstrip().endswith(": beginner_source/raises_error.py"), checked.stdout


def test_expected_failure_that_runs_without_error_fails_the_build(tmp_path: Path) -> None:
    _, _, result, output = built_copy(tmp_path, {"raises_error.py": RAISES, "runs_cleanly.py": PASSES},
                        'sphinx_gallery_conf["expected_failing_examples"] = '
                        '["beginner_source/raises_error.py", "beginner_source/runs_cleanly.py"]')
    assert result.returncode == 1, output
    error = ("beginner_source/runs_cleanly.py:1: ERROR: listed in conf.py's expected_failing_examples, "
             "but ran without error; remove it from the list")
    assert count_lines(result.stdout, error) == 1, output
    assert last_line(result.stderr) == f"[build] failed: {error}", output
    assert count_lines(result.stdout, "[execute] beginner_source/raises_error.py: failed, as conf.py's "
                                      "expected_failing_examples expects") == 1, output
    assert started(output) == [*OWN, "beginner_source/raises_error.py", "beginner_source/runs_cleanly.py"], output
    assert count_lines(output, "[execute] executed 4 of 4 tutorial(s)") == 1, output


def test_only_warn_builds_the_failed_page_with_its_traceback_and_check_refuses_it(tmp_path: Path) -> None:
    project, builddir, result, output = built_copy(tmp_path, {"raises_error.py": RAISES},
                        'sphinx_gallery_conf["only_warn_on_example_error"] = True')
    assert result.returncode == 0, output
    error = failed_line("beginner_source/raises_error.py")
    lines = result.stdout.splitlines()
    warning = ("[build] WARNING: only_warn_on_example_error: building the pages of these failed tutorials "
               "with their errors (tutorials-site check will refuse them):")
    assert lines.count(warning) == 1, output
    assert lines[lines.index(warning) + 1] == f"  {error}", output
    assert count_lines(result.stdout, error) == 2, output  # when it failed, and under the warning
    assert "[build] failed" not in output, output
    assert started(output) == [*OWN, "beginner_source/raises_error.py"], output
    assert count_lines(output, "[execute] executed 3 of 3 tutorial(s)") == 1, output
    assert (builddir / "runs" / "beginner_source" / "raises_error" / "stamp.json").is_file()  # kept, as failed
    page = builddir / "html" / "en" / "beginner" / "raises_error.html"
    assert_page_shows_traceback(page)

    checked = check(project, builddir)
    check_output = checked.stdout + checked.stderr
    assert checked.returncode == 1, check_output
    problem = (f"{page.relative_to(project).as_posix()}: beginner_source/raises_error.py (en): its run failed (ValueError: "
               "this tutorial fails on purpose; its page shows it), which conf.py does not expect: fix the tutorial, or "
               "list it in conf.py's expected_failing_examples (it must fail) or tutorials_allowed_failures (it may)")
    assert checked.stdout.splitlines().count(problem) == 1, check_output
    assert last_line(checked.stderr) == f"check: 1 problem(s) in {(builddir / 'html').relative_to(project)}", check_output


@pytest.fixture(scope="module")
def aborted(builds_site, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A copy with abort_on_example_error, built once; a_raises.py runs first, z_raises.py last (file name order)."""
    project = make_copy(tmp_path_factory.mktemp("abort"), {"a_raises.py": RAISES, "z_raises.py": RAISES},
                        'sphinx_gallery_conf["abort_on_example_error"] = True')
    builddir = project / "_build"
    result = build(project, builddir, env=ENGLISH)
    return {"builddir": builddir, "result": result, "output": result.stdout + result.stderr}


def test_abort_on_example_error_executes_nothing_after_the_first_failure(aborted: dict) -> None:
    result, output = aborted["result"], aborted["output"]
    assert result.returncode == 1, output
    error = failed_line("beginner_source/a_raises.py")
    assert count_lines(result.stdout, error) == 1, output
    assert count_lines(result.stdout, "[execute] abort_on_example_error: the remaining tutorials are not executed") == 1
    assert started(output) == ["beginner_source/a_raises.py"], output
    assert count_lines(output, "[execute] executed 1 of 4 tutorial(s)") == 1, output
    assert "z_raises.py:" not in output, output  # the second failure is never reached
    assert result.stderr.splitlines()[0] == f"[build] failed: {error}", output
    for stem in ("data_parallel_tutorial", "ddp_tutorial", "z_raises"):
        assert not (aborted["builddir"] / "runs" / "beginner_source" / stem).exists(), stem


def test_abort_on_example_error_ends_with_the_tutorials_error_alone(aborted: dict) -> None:
    result, output = aborted["result"], aborted["output"]
    assert result.returncode == 1, output
    assert "Extension error" not in output, output
    assert last_line(result.stderr) == f"[build] failed: {failed_line('beginner_source/a_raises.py')}", output
    # Built again: the kept failure, as the build that ran it told it, counted in the file that holds it.
    again = build(aborted["builddir"].parent, aborted["builddir"], env=ENGLISH)
    said = again.stdout + again.stderr
    assert again.returncode == 1 and "Extension error" not in said, said
    assert last_line(again.stderr) == (f"[build] failed: 1 error(s) as the last build told them "
                                       f"({Path('_build', 'logs', 'failures.log')})"), said


def test_run_stale_examples_executes_every_tutorial_on_every_build(tmp_path: Path) -> None:
    project = make_copy(tmp_path, {"runs_cleanly.py": PASSES}, 'sphinx_gallery_conf["run_stale_examples"] = True')
    builddir = project / "_build"
    every = [*OWN, "beginner_source/runs_cleanly.py"]
    for attempt in ("first", "second"):
        result = build(project, builddir, env=ENGLISH)
        output = result.stdout + result.stderr
        assert result.returncode == 0, (attempt, output)
        assert started(output) == every, (attempt, output)
        assert count_lines(output, "[execute] executed 3 of 3 tutorial(s)") == 1, (attempt, output)



# --- A failed run is kept like a successful one ---

# Times out after a second: a failure that did not raise, which no expected_failing_examples excuses.
HANGS = '''"""
Hanging on purpose
==================

Prints a sentence, then sleeps past its time limit.
"""
# tutorials-timeout: 1

import time

print("printed before the time limit")
time.sleep(60)
'''


def told_with_traceback(output: str, label: str = "beginner_source/raises_error.py") -> bool:
    """Whether OUTPUT tells the failure of RAISES saved as LABEL once, the tutorial's frames of its traceback
    under it."""
    shown = ["  Traceback (most recent call last):",
             f'    File "{label}", line {RAISES_LINE}, in <module>',
             '      raise ValueError("this tutorial fails on purpose")',
             "  ValueError: this tutorial fails on purpose"]
    lines = output.splitlines()
    error = failed_line(label)
    return lines.count(error) == 1 and lines[lines.index(error) + 1:][:len(shown)] == shown


def test_a_failed_run_is_kept_told_again_and_runs_again_on_a_change_or_when_asked(tmp_path: Path) -> None:
    project, builddir, result, output = built_copy(tmp_path, {"raises_error.py": RAISES, "timed_out.py": HANGS},
                        'sphinx_gallery_conf["expected_failing_examples"] = ["beginner_source/timed_out.py"]')
    timed_out = "beginner_source/timed_out.py:7: ERROR: tutorial timed out after 1 s"
    assert result.returncode == 1 and told_with_traceback(result.stdout), output
    assert count_lines(result.stdout, timed_out) == 1, output  # listed as expected, but it did not raise

    # Nothing changed: nothing runs, and the failures, as the last build told them, are counted in a line that
    # names the file holding them whole; VERBOSE=1 tells them again.
    again = build(project, builddir, env=ENGLISH)
    output = again.stdout + again.stderr
    assert again.returncode == 1 and started(output) == [], output
    assert not told_with_traceback(again.stdout) and count_lines(again.stdout, timed_out) == 0, output
    failures = Path("_build", "logs", "failures.log")
    assert count_lines(again.stdout, "[execute] executed 0 of 4 tutorial(s); 2 failed in a run kept from before, "
                                     "not executed again (RETRY_FAILED=1 runs them); 2 told by the last build as they "
                                     f"are, not again: {failures} holds them all (VERBOSE=1 tells them)") == 1, output
    assert last_line(again.stderr) == f"[build] failed: 2 error(s) as the last build told them ({failures})", output
    assert told_with_traceback((project / failures).read_text()) and timed_out in (project / failures).read_text()
    verbose = build(project, builddir, env={**ENGLISH, "VERBOSE": "1"})
    assert told_with_traceback(verbose.stdout) and count_lines(verbose.stdout, timed_out) == 1, verbose.stdout
    assert verbose.stderr.strip().splitlines()[-2:] == [
        f"[build] failed: {failed_line('beginner_source/raises_error.py')}", f"  {timed_out}"], verbose.stderr
    assert_page_shows_traceback(builddir / "html" / "en" / "beginner" / "raises_error.html")

    # TUTORIALS: the selected one's kept failure is counted (told as it is by the last build), not the other's.
    selected = build(project, builddir, env={**ENGLISH, "TUTORIALS": "beginner_source/timed_out.py"})
    output = selected.stdout + selected.stderr
    assert selected.returncode == 1 and started(output) == [] and "1 failed in a run kept" in selected.stdout, output
    assert "raises_error.py:" not in output, output

    retried = build(project, builddir, env={**ENGLISH, "RETRY_FAILED": "1"})
    output = retried.stdout + retried.stderr
    assert retried.returncode == 1, output
    assert started(output) == ["beginner_source/raises_error.py", "beginner_source/timed_out.py"], output

    (project / "beginner_source" / "raises_error.py").write_text(RAISES + "\n# changed\n", encoding="utf-8")
    changed = build(project, builddir, env=ENGLISH)
    output = changed.stdout + changed.stderr
    assert changed.returncode == 1 and started(output) == ["beginner_source/raises_error.py"], output
    # The one that ran told in full; the kept one as the last build told it, counted.
    assert told_with_traceback(changed.stdout) and count_lines(changed.stdout, timed_out) == 0, output
    assert "1 told by the last build as they are" in changed.stdout, output


def test_a_kept_expected_failure_passes_and_a_kept_failure_in_reuse_is_told(tmp_path: Path) -> None:
    project, builddir, result, output = built_copy(tmp_path, {"raises_error.py": RAISES, "z_raises.py": RAISES},
                        'sphinx_gallery_conf["expected_failing_examples"] = ["beginner_source/raises_error.py"]')
    assert result.returncode == 1 and told_with_traceback(result.stdout, "beginner_source/z_raises.py"), output
    (project / "beginner_source" / "z_raises.py").unlink()
    again = build(project, builddir, env=ENGLISH)
    output = again.stdout + again.stderr
    assert again.returncode == 0 and started(output) == [] and "ERROR" not in output, output

    # REUSE: its failed run is taken, and told, as a kept one here.
    (project / "beginner_source" / "raises_error.py").write_text(RAISES.replace("on purpose", "on purpose too"))
    failed = build(project, builddir, env=ENGLISH)
    assert failed.returncode == 0 and started(failed.stdout) == ["beginner_source/raises_error.py"], failed.stdout
    with open(project / "conf.py", "a", encoding="utf-8") as conf:
        conf.write('sphinx_gallery_conf["expected_failing_examples"] = []\n')
    fresh = project.parent / "fresh"
    taken = build(project, fresh, env={**ENGLISH, "REUSE": str(builddir)})
    output = taken.stdout + taken.stderr
    assert taken.returncode == 1 and started(output) == [], output
    assert count_lines(taken.stdout, failed_line("beginner_source/raises_error.py") + " too") == 1, output
    retried = build(project, fresh, env={**ENGLISH, "REUSE": str(builddir), "RETRY_FAILED": "1"})
    assert started(retried.stdout) == ["beginner_source/raises_error.py"], retried.stdout + retried.stderr


def test_a_kept_failure_with_abort_on_example_error_executes_nothing(aborted: dict, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(aborted["builddir"].parent, project)  # a_raises.py's failed run kept
    result = build(project, project / "_build", env=ENGLISH)
    output = result.stdout + result.stderr
    assert result.returncode == 1 and started(output) == [], output
    assert count_lines(result.stdout, "[execute] abort_on_example_error: a tutorial's kept run failed; no tutorial "
                                      "is executed") == 1, output
    # The kept failure, as the build that ran it told it: counted, in the file that holds it.
    assert last_line(result.stderr) == (f"[build] failed: 1 error(s) as the last build told them "
                                        f"({Path('_build', 'logs', 'failures.log')})"), output


def test_a_shards_failed_run_is_assembled_into_its_page_and_fails_assemble(tmp_path: Path) -> None:
    project = make_copy(tmp_path, {"raises_error.py": RAISES})
    shard = build(project, tmp_path / "shard", env={**ENGLISH, "SHARD": "1/1"})
    assert shard.returncode == 1 and told_with_traceback(shard.stdout), shard.stdout + shard.stderr
    assembled = subprocess.run([sys.executable, "-m", "tutorials_site", "assemble", "--builddir",
                                str(tmp_path / "assembled"), str(tmp_path / "shard")],
                               cwd=project, env={**os.environ, **ENGLISH}, capture_output=True, text=True)
    output = assembled.stdout + assembled.stderr
    assert assembled.returncode == 1 and told_with_traceback(assembled.stdout), output
    assert "[execute] beginner_source" not in output, output  # nothing executed
    assert last_line(assembled.stderr) == f"[build] failed: {failed_line('beginner_source/raises_error.py')}", output
    assert_page_shows_traceback(tmp_path / "assembled" / "html" / "en" / "beginner" / "raises_error.html")

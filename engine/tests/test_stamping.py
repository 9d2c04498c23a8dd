"""The build's side of execution stamps (core.runs.stamping): the stamp a finished run gets, what the build says of
it, and what it reads back from stamps."""

import pytest

from tutorials_site.core.layout import BuildTree
from tutorials_site.core.project import Project
from tutorials_site.core.runs import runs
from tutorials_site.core.runs.needs import Needs
from tutorials_site.core.runs.records import BlockRecord, Hardware, RunError, RunFile, RunRecord, Stamp
from tutorials_site.core.runs.stamping import (
    MB,
    cites_lines,
    excused,
    expectation_errors,
    own_frames,
    ran_on_fewer_gpus,
    run_stamp,
    stamped_lines,
    unexpected_failure,
)
from tutorials_site.core.runs.used import SourceDigest

CPU = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0+cpu", cuda=None)
TWO_GPUS = Hardware(device="NVIDIA H100", gpus=2, machine="x86_64", torch="2.13.0", cuda="13.0")
ORIGIN = {"commit": "0123456789ab+changes", "date": "2026-01-01 00:00 UTC"}
LABEL = "beginner_source/data_parallel_tutorial.py"
FILES = (RunFile(path="result.json", sha256="r" * 64, size=120),)


def _stamp(hardware=CPU, gpu_peak_bytes=(), failed=False, peak_rss_bytes=292 * MB, raised=True):
    error = RunError(line=13, block_line=13, message="ValueError: no") if failed else None
    result = RunRecord(blocks=(), error=error, gpu_peak_bytes=gpu_peak_bytes, seconds=4.8)
    return run_stamp(result, hardware=hardware, raised=raised, source=SourceDigest("s" * 64, (3,)), script="x.py",
                     environment="e" * 64, outputs="o" * 64, files=FILES, seconds=4.93, peak_rss_bytes=peak_rss_bytes,
                     needs_gpus=2, origin=ORIGIN)


def test_a_finished_run_is_stamped_with_what_it_ran_cost_and_ran_on():
    stamp = _stamp(TWO_GPUS, gpu_peak_bytes=(int(1.26 * MB), 3 * MB), peak_rss_bytes=int(291.96 * MB))
    assert stamp == Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=4.93, failed=False,
                          peak_rss_mb=292.0, gpu_peak_mb=(1.3, 3.0), hardware=TWO_GPUS, commit="0123456789ab+changes",
                          date="2026-01-01 00:00 UTC", needs_gpus=2, files=FILES, code_lines=(3,))
    # A failed run is stamped and kept too; one that did not finish (timed out, killed) is told apart.
    assert _stamp(failed=True).failed and not _stamp(failed=True).unfinished
    assert _stamp(failed=True, raised=False).unfinished
    assert not _stamp(raised=False).unfinished  # a run that passed did finish


def test_the_build_says_what_a_run_cost_and_where_it_ran_on_fewer_gpus_than_it_declares():
    need = Needs(2, 4, "its tutorials-needs line")
    assert stamped_lines(LABEL, _stamp(), need) == [
        f"[execute] {LABEL}: 4.9 s, peak memory 292 MB",
        f"[execute] {LABEL}: note: ran on no GPU, written for 2 GPUs (its tutorials-needs line)",
    ]
    assert stamped_lines(LABEL, _stamp(TWO_GPUS, gpu_peak_bytes=(100 * MB, 50 * MB)), need) == [
        f"[execute] {LABEL}: 4.9 s, peak memory 292 MB, GPU 0: 100 MB, GPU 1: 50 MB"]
    assert len(stamped_lines(LABEL, _stamp(), Needs(0, 1, "conf.py's tutorials_needs"))) == 1


def test_a_run_on_fewer_gpus_than_needed_or_without_a_readable_stamp_counts_as_on_fewer(tmp_path):
    assert ran_on_fewer_gpus(tmp_path, 0)  # no stamp
    _stamp(TWO_GPUS).write(tmp_path / runs.STAMP)
    assert not ran_on_fewer_gpus(tmp_path, 2) and ran_on_fewer_gpus(tmp_path, 3)
    (tmp_path / runs.STAMP).write_text('{"format": 99}')
    assert ran_on_fewer_gpus(tmp_path, 0)


@pytest.fixture
def site(tmp_path):
    """A project of four tutorials, three listed as expected to fail and one of those not executed."""
    (tmp_path / "gallery").mkdir()
    (tmp_path / "gallery" / "README.txt").write_text("Gallery\n=======\n")
    for name in ("passes", "fails", "damaged", "unexecuted", "unlisted"):
        (tmp_path / "gallery" / f"plot_{name}.py").write_text('"""Title\n=====\n"""\n')
    listed = [f"gallery/plot_{name}.py" for name in ("passes", "fails", "damaged", "unexecuted")]
    return Project(tmp_path, {"examples_dirs": ["gallery"], "gallery_dirs": ["g"], "expected_failing_examples": listed,
                              "filename_pattern": r"plot_(passes|fails|damaged|unlisted)"})


def test_a_tutorial_expected_to_fail_whose_current_run_passed_is_an_error(tmp_path, site):
    tree = BuildTree(tmp_path / "_build")
    assert expectation_errors(tree, site) == []  # nothing ran
    for tutorial in site.tutorials:
        stamp_path = tree.run_dir(tutorial.key) / runs.STAMP
        stamp_path.parent.mkdir(parents=True)
        _stamp(failed=tutorial.path.stem == "plot_fails").write(stamp_path)
    (tree.run_dir("gallery/plot_damaged") / runs.STAMP).write_text("{")  # not current: never rendered as one
    assert expectation_errors(tree, site) == [
        "gallery/plot_passes.py:1: ERROR: listed in conf.py's expected_failing_examples, but ran without error; "
        "remove it from the list"]


def test_only_a_failure_that_raised_is_excused_by_expected_failing_examples(site):
    tutorials = {t.path.stem: t for t in site.tutorials}
    assert excused(site, tutorials["plot_fails"], _stamp(failed=True))
    assert not excused(site, tutorials["plot_fails"], _stamp(failed=True, raised=False))  # timed out, killed
    assert not excused(site, tutorials["plot_fails"], _stamp())  # passed
    assert not excused(site, tutorials["plot_unlisted"], _stamp(failed=True))


TRACEBACK = """Traceback (most recent call last):
  File "gallery/plot_unlisted.py", line 17, in <module>
    helper()
  File "gallery/plot_unlisted.py", line 10, in helper
    return json.loads("{")
           ^^^^^^^^^^^^^^^
  File ".../python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
  File ".../python3.11/json/decoder.py", line 337, in decode
    obj, end = self.raw_decode(s, idx=_w(s, 0).end())
json.decoder.JSONDecodeError: Expecting value
"""


def test_the_build_shows_the_tutorials_own_frames_of_a_traceback():
    assert own_frames(TRACEBACK, "gallery/plot_unlisted.py") == [
        "Traceback (most recent call last):",
        '  File "gallery/plot_unlisted.py", line 17, in <module>',
        "    helper()",
        '  File "gallery/plot_unlisted.py", line 10, in helper',
        '    return json.loads("{")',
        "           ^^^^^^^^^^^^^^^",
        "  ... 2 frame(s) outside the tutorial, on its page",
        "json.decoder.JSONDecodeError: Expecting value",
    ]
    # A chained exception: each traceback keeps its own header and exception lines.
    chained = TRACEBACK + "\nDuring handling of the above exception, another exception occurred:\n\n" + TRACEBACK
    assert own_frames(chained, "gallery/plot_unlisted.py").count("  ... 2 frame(s) outside the tutorial, on its page") == 2


def _record(run_dir, stamp, error=None, traceback=TRACEBACK):
    run_dir.mkdir(parents=True, exist_ok=True)
    blocks = (BlockRecord(line=8, texts=("printed\n",), images=()),
              BlockRecord(line=17, texts=(traceback,) if traceback else (), images=()))
    RunRecord(blocks=blocks, error=error).write(run_dir / runs.RESULT)
    stamp.write(run_dir / runs.STAMP)


def test_a_kept_failure_is_told_as_when_it_ran_unless_conf_py_expects_it(tmp_path, site):
    tutorials = {t.path.stem: t for t in site.tutorials}
    raised = RunError(line=10, block_line=17, message="json.decoder.JSONDecodeError: Expecting value")
    run_dir = tmp_path / "run"
    _record(run_dir, _stamp(failed=True), raised)
    assert unexpected_failure(run_dir, site, tutorials["plot_unlisted"]) == [
        "gallery/plot_unlisted.py:10: ERROR: tutorial failed: json.decoder.JSONDecodeError: Expecting value",
        *(f"  {line}" for line in own_frames(TRACEBACK, "gallery/plot_unlisted.py"))]
    assert unexpected_failure(run_dir, site, tutorials["plot_fails"]) == []  # expected
    timed_out = RunError(line=17, block_line=17, message="tutorial timed out after 5 s")
    _record(run_dir, _stamp(failed=True, raised=False), timed_out, traceback="")
    assert unexpected_failure(run_dir, site, tutorials["plot_fails"]) == [
        "gallery/plot_fails.py:17: ERROR: tutorial timed out after 5 s"]
    _record(run_dir, _stamp(), None)
    assert unexpected_failure(run_dir, site, tutorials["plot_unlisted"]) == []  # passed
    assert unexpected_failure(tmp_path / "none", site, tutorials["plot_unlisted"]) == []  # no run


@pytest.mark.parametrize("text, cites", [
    ('Traceback (most recent call last):\n  File "beginner_source/x.py", line 12, in <module>\n', True),
    ("/work/run/beginner_source/x.py:30: UserWarning: deprecated\n  y = f()\n", True),
    ("> /work/x.py(4)<module>()\n", True),
    ("x.py is a script; its 3 lines: 1, 2, 3\n", False),  # its name, without a line
    ('  File "beginner_source/plot_x.py", line 12\n.../site-packages/box.py:3: Warning\n', False),  # other files
])
def test_a_run_cites_the_scripts_lines_where_its_output_names_it_with_a_line_or_it_failed(text, cites):
    shown = RunRecord(blocks=(BlockRecord(line=5, texts=(text,), images=()),), error=None)
    assert cites_lines(shown, "x.py") == cites
    failed = RunRecord(blocks=(), error=RunError(line=13, block_line=13, message="ValueError: no"))
    assert cites_lines(failed, "x.py")  # its error is at a line

"""The build's side of execution stamps (core.stamping): the stamp a finished run gets, what the build says of
it, and what it reads back from stamps."""

import pytest

from tutorials_site.core import runs
from tutorials_site.core.layout import BuildTree
from tutorials_site.core.needs import Needs
from tutorials_site.core.project import Project
from tutorials_site.core.records import Hardware, RunRecord, Stamp
from tutorials_site.core.stamping import MB, expectation_errors, ran_on_fewer_gpus, run_stamp, stamped_lines

CPU = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0+cpu", cuda=None)
TWO_GPUS = Hardware(device="NVIDIA H100", gpus=2, machine="x86_64", torch="2.13.0", cuda="13.0")
ORIGIN = {"commit": "0123456789ab+changes", "date": "2026-01-01 00:00 UTC"}
LABEL = "beginner_source/data_parallel_tutorial.py"


def _stamp(hardware=CPU, gpu_peak_bytes=(), failed=False, peak_rss_bytes=292 * MB):
    result = RunRecord(blocks=(), error=None, hardware=hardware, gpu_peak_bytes=gpu_peak_bytes, seconds=4.8)
    return run_stamp(result, source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=4.93, failed=failed,
                     peak_rss_bytes=peak_rss_bytes, needs_gpus=2, origin=ORIGIN)


def test_a_finished_run_is_stamped_with_what_it_ran_cost_and_ran_on():
    stamp = _stamp(TWO_GPUS, gpu_peak_bytes=(int(1.26 * MB), 3 * MB), peak_rss_bytes=int(291.96 * MB))
    assert stamp == Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=4.93, failed=False,
                          peak_rss_mb=292.0, gpu_peak_mb=(1.3, 3.0), hardware=TWO_GPUS, commit="0123456789ab+changes",
                          date="2026-01-01 00:00 UTC", needs_gpus=2)
    assert _stamp(failed=True).failed  # as conf.py's expected_failing_examples expects


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

"""Is this run current? One answer (core.runs.currency.problems) for the build, REUSE, `make assemble`, `make check`
and the provenance directive; here, the one table of what makes a run stale and what does not."""

import dataclasses
from importlib import metadata

import pytest

from conftest import FIXTURES
from tutorials_site.core.runs import currency, runs, seal
from tutorials_site.core.runs.records import (
    OPTIONS,
    BlockRecord,
    Hardware,
    RunError,
    RunOptions,
    RunRecord,
    Stamp,
    Used,
    UsedDistribution,
    UsedFile,
)
from tutorials_site.core.runs.stamps import outputs_digest
from tutorials_site.core.runs.used import Present, SourceDigest, file_digest
from tutorials_site.core.terminal import DEFAULT_LIMITS, OutputLimits

KEY = "g/plot_a"
SOURCE = SourceDigest("s" * 64, (3, 9))
HARDWARE = Hardware(device="CPU", gpus=0, machine="x86_64", torch=None, cuda=None)
RESULT = RunRecord(blocks=(BlockRecord(line=3, texts=("hello\n",), images=()),), error=None, seconds=1.0)
PYTEST = metadata.version("pytest")


class Run:
    """A run of SOURCE sealed as the build seals it, in a project whose data.csv it read; what a row changes."""

    def __init__(self, tmp_path):
        self.project, self.runs = tmp_path / "project", tmp_path / "runs"
        self.project.mkdir()
        (self.project / "data.csv").write_text("1,2\n")
        self.source, self.present, self.limits = SOURCE, Present(self.project, "e" * 64), DEFAULT_LIMITS
        self.folder = self.runs / KEY
        self.record(RESULT)
        RunOptions.defaults(FIXTURES, "g/images").write(self.folder / OPTIONS)
        self.stamp()

    def record(self, result):
        result.write(self.folder / runs.RESULT)

    def stamp(self, **changes):
        """Seal the run as it is now, in a stamp of SOURCE in the environment "e…", with CHANGES."""
        used = Used(files=(UsedFile("data.csv", file_digest(self.project / "data.csv")),),
                    distributions=(UsedDistribution("pytest", PYTEST),))
        stamp = Stamp(source=SOURCE.code, environment="e" * 64, outputs=outputs_digest(["hello\n"], []), seconds=1.0,
                      failed=False, peak_rss_mb=1.0, gpu_peak_mb=(), hardware=HARDWARE, commit="c",
                      date="2026-01-01 00:00 UTC", files=seal.seal(self.runs, KEY), used=used, code_lines=SOURCE.lines)
        dataclasses.replace(stamp, **changes).write(self.folder / runs.STAMP)

    def problems(self):
        return currency.problems(self.source, self.present, run=(self.runs, KEY), limits=self.limits)


def _failed(run):
    run.record(dataclasses.replace(RESULT, error=RunError(line=4, block_line=3, message="ValueError: no")))
    run.stamp(failed=True)


def _moved(run, cites):
    run.stamp(cites_lines=cites)
    run.source = SourceDigest(SOURCE.code, (5, 11))  # a text block above the code grew by two lines


def _set(run, **now):
    for name, value in now.items():
        setattr(run, name, value)


def _other_format(run):
    path = run.folder / runs.STAMP
    path.write_text(path.read_text().replace(f'"format": {Stamp.FORMAT}', '"format": 99'))


STALE = [
    # (what, change, the problem it makes: None where the run stays current)
    ("as it ran", lambda run: None, None),
    ("a prose edit that moves no cited line", lambda run: _moved(run, cites=False), None),
    ("a failed run (kept; its page shows the failure)", _failed, None),
    ("not executed", lambda run: (run.folder / runs.STAMP).unlink(), "not executed"),
    ("a stamp of another format", _other_format, "its record cannot be used ("),
    ("a file added after the seal", lambda run: (run.folder / "extra.txt").write_text("x"), "{folder}/extra.txt: not in"),
    ("a sealed file edited", lambda run: (run.folder / OPTIONS).write_text("{}"), f"{{folder}}/{OPTIONS}: not the file"),
    ("record and stamp disagree on the failure", lambda run: run.stamp(failed=True), "its record and its stamp disagree"),
    ("the output shown is not the run's", lambda run: run.stamp(outputs="o" * 64), "the output shown is not what the run"),
    ("its code changed", lambda run: _set(run, source=SourceDigest("t" * 64, SOURCE.lines)), "output comes from another"),
    ("its cited lines moved", lambda run: _moved(run, cites=True), "its output cites the script's line numbers"),
    ("another environment", lambda run: _set(run, present=Present(run.project, "f" * 64)), "executed in another env"),
    ("a project file it read changed", lambda run: (run.project / "data.csv").write_text("3\n"),
     "a project file it could read changed since: data.csv"),
    ("a distribution it imported changed", lambda run: run.stamp(used=Used(files=(), distributions=(
        UsedDistribution("pytest", "0.1"),))), f"a distribution it imported changed since: pytest 0.1 -> {PYTEST}"),
    ("stamped before runs recorded what they use", lambda run: run.stamp(used=None), "ran before the build recorded"),
    ("a zero-time run", lambda run: run.stamp(seconds=0.0), "zero-time run"),
    ("other output limits", lambda run: _set(run, limits=OutputLimits.of_block_limit(4096)),
     "recorded under other output limits"),
]


@pytest.mark.parametrize("change, problem", [row[1:] for row in STALE], ids=[row[0] for row in STALE])
def test_what_makes_a_run_stale(tmp_path, change, problem):
    run = Run(tmp_path)
    change(run)
    found = run.problems()
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(problem.format(folder=run.folder)), found


def _page(run):
    """The stamp a page of RUN carries, and the outputs digest of what that page shows."""
    return Stamp.read(run.folder / runs.STAMP), outputs_digest(["hello\n"], [])


def test_a_page_s_stamp_is_judged_like_its_run_but_for_what_a_page_cannot_say(tmp_path):
    run = Run(tmp_path)
    stamp, shown = _page(run)
    assert currency.problems(SOURCE, run.present, stamp=stamp, shown=shown) == []  # `make check`
    assert currency.problems(SOURCE, run.present, stamp=stamp, shown="o" * 64) == [
        "the output shown is not what the run produced (edited after the run?)"]
    assert currency.problems(SOURCE, run.present) == ["not executed"]  # a page without a stamp
    # no limits given: not judged (a page does not say them); given, a run folder's are
    other = OutputLimits.of_block_limit(4096)
    assert currency.problems(SOURCE, run.present, stamp=stamp, limits=other) == [
        "recorded under other output limits (TUTORIAL_OUTPUT_LIMIT) than this build's"]
    assert currency.problems(SOURCE, run.present, run=(run.runs, KEY)) == []


def test_without_the_present_only_the_source_is_judged(tmp_path):
    # the provenance directive: the build judged the rest before it put the stamp beside the page
    run = Run(tmp_path)
    (run.project / "data.csv").write_text("3\n")
    stamp, _ = _page(run)
    assert currency.problems(SOURCE, Present(run.project, "f" * 64), stamp=stamp) != []
    assert currency.problems(SOURCE, None, stamp=stamp) == []
    assert currency.problems(SourceDigest("t" * 64, SOURCE.lines), None, stamp=stamp) == [
        "output comes from another version of the source (its code, a setting comment or a file it declares it reads)"]

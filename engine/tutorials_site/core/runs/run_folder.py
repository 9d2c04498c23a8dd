"""A run folder's layout, each name spelled here once: what the runner and the tutorial's processes write there and
what the build reads back (core.runs.runs, core.runs.records, core.runs.seal, commands/runner.py, commands/execute.py,
commands/output_guard.py). Part of the run code: a name changed here is a change of what a run records (raise
core.runs.protocol.PROTOCOL).

    <run>/options.json     what the runner is told (records.RunOptions), written by the build
    <run>/progress.json    the code block now running (runs.Progress), rewritten as each starts
    <run>/out/<k>.txt      what code block k printed, every process of it together
    <run>/out/dropped.json what the output guard cut from each block's file (records.Dropped)
    <run>/out/used/        what each process of the run opened and imported (core.runs.used)
    <run>/page/<gallery>/<section>/images/  its figures, as the staged tree holds them (runs.figures_folder)
    <run>/result.json      what it showed (records.RunRecord)
    <run>/stamp.json       what vouches for it, and its seal (records.Stamp, core.runs.seal), written last
    <run>/stamp.sig        the stamp's signature with the runs key (core.runs.signing)
    <run>/unverified.txt   the mark of a run taken from REUSE or a shard without the key to verify it
"""

from pathlib import Path

OPTIONS = "options.json"
PROGRESS = "progress.json"
OUT = "out"
DROPPED = "dropped.json"  # in OUT
USED = f"{OUT}/used"
PAGE = "page"
RESULT = "result.json"
STAMP = "stamp.json"
SIGNATURE = "stamp.sig"
UNVERIFIED = "unverified.txt"


def output_file(out: Path, block: int) -> Path:
    """Where code block BLOCK's output goes, in a run's OUT folder."""
    return out / f"{block}.txt"

"""Keeps the output a run records on disk within its limits, beside the runner.

    python -m tutorials_site.commands.output_guard OUT BLOCK_LIMIT RUN_LIMIT

The tutorial and every process it starts write straight to OUT/<k>.txt (fds 1
and 2, see runner.py), so nothing written is lost when a process crashes or
the run is killed. Every GUARD_S this process cuts each file back to what it
may record (OutputLimits.recorded_caps) and adds up what it cut in
OUT/dropped.json (core.runs.records.Dropped). The disk a run fills is so bounded by its limits
plus what it can write in GUARD_S, and the tutorial notices nothing: its writes
succeed, at full speed, and whoever reads the files reads no further than the
limits. It ends after a last pass once its stdin is readable: the runner says
it is done, or died.
"""

import os
import select
import sys
from pathlib import Path

from ..core.runs.records import Dropped
from ..core.terminal import OutputLimits

GUARD_S = 0.02


def _cut(out: Path, limits: OutputLimits, dropped: dict[int, int]) -> None:
    """One pass: cut each block's file in OUT back to its cap, and add what was cut to DROPPED."""
    sizes: list[int] = []
    while (out / f"{len(sizes)}.txt").exists():  # the runner makes them in order: 0.txt, 1.txt, ...
        sizes.append((out / f"{len(sizes)}.txt").stat().st_size)
    cut = False
    for k, (size, cap) in enumerate(zip(sizes, limits.recorded_caps(sizes), strict=True)):
        if size > cap:
            # The writers append (O_APPEND): they go on from the new end, which the next pass cuts again.
            os.truncate(out / f"{k}.txt", cap)
            dropped[k] = dropped.get(k, 0) + size - cap
            cut = True
    if cut:
        Dropped(blocks=tuple(dropped.get(k, 0) for k in range(max(dropped) + 1))).write(out / Dropped.FILE)


def main(argv: list[str]) -> None:
    """Guard OUT (argv: OUT BLOCK_LIMIT RUN_LIMIT) until stdin is readable."""
    out, limits = Path(argv[1]), OutputLimits(int(argv[2]), int(argv[3]))
    dropped: dict[int, int] = {}
    while True:
        done = select.select([sys.stdin], [], [], GUARD_S)[0]
        _cut(out, limits, dropped)
        if done:
            return


if __name__ == "__main__":
    main(sys.argv)

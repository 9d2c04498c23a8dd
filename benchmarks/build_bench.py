"""Build benchmark: prints figures measured on this machine in one run (`make bench`).

- clean build: every language selected by LANGUAGES, from an empty build folder;
- no-op rebuild: the same command again, nothing changed;
- each tutorial run as a plain `python` script, for comparison;
- the peak memory of the largest build process.

Targets (issue 2): no-op rebuild <= 20% of a clean build; clean build <= 3x the scripts' own run.
Each figure is the median of --repeat runs.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tutorials_site.layout import tutorial_sources  # noqa: E402


def timed(command, **kwargs):
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - started


def build(builddir):
    return timed([sys.executable, "-m", "tutorials_site.build", "html", "--builddir", str(builddir)], cwd=ROOT)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    clean, noop, scripts = [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as builddir:
            clean.append(build(builddir))
            noop.append(build(builddir))
        env = {**os.environ, "MPLBACKEND": "Agg"}
        with tempfile.TemporaryDirectory() as cwd:
            scripts.append(sum(timed([sys.executable, str(path)], cwd=cwd, env=env) for _, path in tutorial_sources()))
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    clean_s, noop_s, script_s = (statistics.median(x) for x in (clean, noop, scripts))
    langs = os.environ.get("LANGUAGES") or "all"
    print(f"languages: {langs}; median of {args.repeat} runs; {os.cpu_count()} CPUs")
    print(f"clean build              {clean_s:7.2f} s")
    print(f"no-op rebuild            {noop_s:7.2f} s   {noop_s / clean_s:6.1%} of clean (target <= 20%)")
    print(f"tutorials as python      {script_s:7.2f} s   clean build = {clean_s / script_s:.2f}x (target <= 3x)")
    print(f"peak memory (largest build process) {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()

"""Build benchmark: prints figures measured on this machine in one run (`make bench`).

- clean build of every language, and of English alone, from an empty build folder;
- no-op rebuild of every language;
- the rebuild after one translation in one catalog changed, and what it re-ran;
- each tutorial run as a plain `python` script, for comparison;
- the peak memory of the largest build process.

Targets: no-op rebuild <= 20% of a clean build; a clean English build <= 3x the
scripts' own run; four languages <= 2x one language; changing one catalog
rebuilds and re-executes that language only. Figures are medians of --repeat runs.
"""

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tutorials_site.core.layout import tutorial_sources  # noqa: E402


def timed(command, env=None, **kwargs):
    started = time.perf_counter()
    result = subprocess.run(command, check=True, capture_output=True, text=True,
                            env={**os.environ, **(env or {})}, **kwargs)
    return time.perf_counter() - started, result.stdout


def build(builddir, languages="", root=ROOT):
    return timed([sys.executable, "-m", "tutorials_site", "html", "--builddir", str(builddir)],
                 env={"LANGUAGES": languages}, cwd=root)


def catalog_change(tmp):
    """Rebuild time after one Japanese translation changed, and the languages it rebuilt and re-ran."""
    project = Path(tmp, "project")
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(".git", ".venv", "_build", "docs", "__pycache__"))
    build(project / "_build", root=project)
    po = project / "locales" / "ja" / "LC_MESSAGES" / "beginner_source" / "data_parallel_tutorial.po"
    text = po.read_text()
    msgstr = re.search(r'^msgstr "(.+)"$', text, re.M)
    po.write_text(text.replace(msgstr[0], f'msgstr "{msgstr[1]}!"', 1))
    seconds, output = build(project / "_build", root=project)
    rebuilt = re.findall(r"^\[build\] (\S+): sphinx-build", output, re.M)
    executed = re.findall(r"Sphinx-Gallery successfully executed (\d+) out of", output)
    return seconds, rebuilt, sum(map(int, executed))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    figures = {name: [] for name in ("all", "en", "noop", "script", "catalog")}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as builddir:
            figures["all"].append(build(builddir)[0])
            figures["noop"].append(build(builddir)[0])
        with tempfile.TemporaryDirectory() as builddir:
            figures["en"].append(build(builddir, "en")[0])
        env = {"MPLBACKEND": "Agg"}
        with tempfile.TemporaryDirectory() as cwd:
            figures["script"].append(sum(timed([sys.executable, str(path)], env=env, cwd=cwd)[0]
                                         for _, path in tutorial_sources()))
    with tempfile.TemporaryDirectory() as tmp:
        catalog_s, rebuilt, executed = catalog_change(tmp)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    all_s, en_s, noop_s, script_s = (statistics.median(figures[k]) for k in ("all", "en", "noop", "script"))
    print(f"median of {args.repeat} runs; {os.cpu_count()} CPUs")
    print(f"clean build, en ko ja zh-cn  {all_s:7.2f} s   {all_s / en_s:.2f}x English alone (target <= 2x)")
    print(f"clean build, English alone   {en_s:7.2f} s   {en_s / script_s:.2f}x the scripts (target <= 3x)")
    print(f"no-op rebuild, all languages {noop_s:7.2f} s   {noop_s / all_s:6.1%} of clean (target <= 20%)")
    print(f"tutorials as plain python    {script_s:7.2f} s")
    print(f"one ja translation changed   {catalog_s:7.2f} s   rebuilt: {' '.join(rebuilt) or 'nothing'}; "
          f"tutorials re-executed: {executed} (target: ja only)")
    print(f"peak memory (largest build process) {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()

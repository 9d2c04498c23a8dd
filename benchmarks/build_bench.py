"""Build benchmark: prints figures measured on this machine in one run (`make bench`).

- executions per clean build, English alone and all four languages (target: equal,
  one run per tutorial whatever LANGUAGES holds);
- clean build of all four languages against English alone (target <= 1.25x), on the
  site as it is and on a generated set of 8 tutorials (copies of the real one, with
  their catalogs);
- the cost of running a tutorial in its own process against `python tutorial.py`
  (target: <= 0.5 s beyond the script's own run, `import torch` included in both);
- no-op rebuild, and the rebuild after one translation changed (target: executes nothing);
- peak memory: the largest process of the build, and each run's process tree (its stamp).

Figures are medians of --repeat runs.
"""

import argparse
import json
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

from tutorials_site.commands.execute import run_tutorial  # noqa: E402
from tutorials_site.core import languages  # noqa: E402
from tutorials_site.core.layout import BuildTree, tutorial_sources  # noqa: E402

COPY = shutil.ignore_patterns(".git", ".venv", "_build", "docs", "__pycache__")


def timed(command, env=None, **kwargs):
    started = time.perf_counter()
    result = subprocess.run(command, check=True, capture_output=True, text=True,
                            env={**os.environ, **(env or {})}, **kwargs)
    return time.perf_counter() - started, result.stdout


def build(builddir, langs="", root=ROOT):
    """(seconds, tutorials executed) of one `make html`."""
    seconds, output = timed([sys.executable, "-m", "tutorials_site", "html", "--builddir", str(builddir)],
                            env={"LANGUAGES": langs}, cwd=root)
    return seconds, sum(map(int, re.findall(r"^\[execute\] executed (\d+) of", output, re.M))), output


def eight_tutorials(tmp):
    """A copy of the project whose gallery holds 8 copies of the real tutorial, each with its catalogs."""
    project = Path(tmp, "eight")
    shutil.copytree(ROOT, project, ignore=COPY)
    [(src_dir, source)] = list(tutorial_sources(project))[:1]
    for n in range(2, 9):
        shutil.copy(source, source.with_name(f"{source.stem}_{n}.py"))
        for lang in languages.TRANSLATED:
            po = project / "locales" / lang.code / "LC_MESSAGES" / src_dir / f"{source.stem}.po"
            shutil.copy(po, po.with_name(f"{source.stem}_{n}.po"))
    return project


def clean_builds(root, repeat):
    """Medians of clean builds (all languages, English alone) and the executions each made."""
    times = {"all": [], "en": []}
    runs = {}
    for _ in range(repeat):
        for key, langs in (("all", ""), ("en", "en")):
            with tempfile.TemporaryDirectory() as builddir:
                seconds, executed, _ = build(builddir, langs, root)
                times[key].append(seconds)
                runs[key] = executed
    return statistics.median(times["all"]), statistics.median(times["en"]), runs


def process_overhead(repeat):
    """Median seconds of each tutorial as a plain script, and in the runner's process."""
    plain, runner = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            for _, path in tutorial_sources():
                plain.append(timed([sys.executable, str(path)], env={"MPLBACKEND": "Agg"}, cwd=tmp)[0])
                started = time.perf_counter()
                outcome = run_tutorial(path, Path(tmp, "run"), Path(tmp), timeout=600, label=path.name)
                runner.append(time.perf_counter() - started)
                assert outcome.ok, outcome.error
    return statistics.median(plain), statistics.median(runner)


def catalog_change(tmp):
    """Rebuild time after one Japanese translation changed, the languages rebuilt and the tutorials run."""
    project = Path(tmp, "project")
    shutil.copytree(ROOT, project, ignore=COPY)
    build(project / "_build", root=project)
    po = project / "locales" / "ja" / "LC_MESSAGES" / "beginner_source" / "data_parallel_tutorial.po"
    text = po.read_text()
    msgstr = re.search(r'^msgstr "(.+)"$', text, re.M)
    po.write_text(text.replace(msgstr[0], f'msgstr "{msgstr[1]}!"', 1))
    seconds, executed, output = build(project / "_build", root=project)
    return seconds, re.findall(r"^\[build\] (\S+): sphinx-build", output, re.M), executed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    all_s, en_s, runs = clean_builds(ROOT, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        all8_s, en8_s, runs8 = clean_builds(eight_tutorials(tmp), args.repeat)
    with tempfile.TemporaryDirectory() as builddir:
        build(builddir)
        noop_s = statistics.median(build(builddir)[0] for _ in range(args.repeat))
        stamps = [json.loads((BuildTree(Path(builddir)).run_dir(s, p) / "stamp.json").read_text())
                  for s, p in tutorial_sources()]
    plain_s, runner_s = process_overhead(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        catalog_s, rebuilt, executed = catalog_change(tmp)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"median of {args.repeat} runs; {os.cpu_count()} CPUs")
    print(f"executions per clean build     English alone {runs['en']}, all four languages {runs['all']} (target: equal)")
    print(f"clean build, en ko ja zh-cn    {all_s:7.2f} s   {all_s / en_s:.2f}x English alone {en_s:.2f} s (target <= 1.25x)")
    print(f"  8 tutorials, en ko ja zh-cn  {all8_s:7.2f} s   {all8_s / en8_s:.2f}x English alone {en8_s:.2f} s "
          f"(target <= 1.25x); executions {runs8['en']} and {runs8['all']}")
    print(f"one tutorial in its process    {runner_s:7.2f} s   {runner_s - plain_s:+.2f} s against `python tutorial.py` "
          f"{plain_s:.2f} s (target <= +0.5 s)")
    print(f"no-op rebuild, all languages   {noop_s:7.2f} s   {noop_s / all_s:6.1%} of clean")
    print(f"one ja translation changed     {catalog_s:7.2f} s   rebuilt: {' '.join(rebuilt) or 'nothing'}; "
          f"tutorials executed: {executed} (target: 0)")
    print(f"peak memory: largest build process {peak_mib:.0f} MiB; each run's process tree: "
          + ", ".join(f"{stamp['peak_rss_mb']:.0f} MB" for stamp in stamps)
          + "".join(f"; GPU {stamp['gpu_peak_mb']} MB" for stamp in stamps if stamp["gpu_peak_mb"]))


if __name__ == "__main__":
    main()

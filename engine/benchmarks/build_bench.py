"""Build benchmark: prints figures measured on this machine in one run (`make bench`).

- executions per clean build, English alone and all four languages (target: equal,
  one run per tutorial whatever LANGUAGES holds);
- clean build of all four languages against English alone (target <= 1.25x), on the
  site as it is and on a generated set of 8 tutorials (copies of the real one, with
  their catalogs);
- the cost of running a tutorial in its own process against `python tutorial.py`:
  for a 0.5 s script that does not import torch (target: <= +0.3 s) and for one that
  does (target: <= +0.3 s beyond its own `import torch`), and for each real tutorial;
- no-op rebuild, and the rebuild after one translation changed (target: executes nothing);
- the rebuild after an edit of each real tutorial's prose (a paragraph reworded; a line of prose added above
  its code) and of its code (a comment in a code block): what it executed (targets: 0, 0 unless its output
  cites its own lines, and 1) and what it took;
- peak memory: the largest process of the build, and each run's process tree (its stamp);
- the size of a published version of the site, all languages (target: <= 15 MB; stable/ adds nothing, a link);
- `make update-po` on a catalog with one translation of 50k, 100k, 200k characters without a blank
  (benchmarks/catalog_bench.py; target: linear);
- what each run's fingerprint holds: the project files and the distributions it used, of those installed;
- two CI runs in a row (benchmarks/ci_runs.py: the workflow's shards and assemble, its cache carried
  from the first run to the second) on a generated repository of small tutorials, for each change
  between them: the tutorials the second run executes (targets: the issue's) and what it took. Both
  ways of the fingerprint: distributions installed that no tutorial imports (the test tools,
  sphinx-design) run nothing again; a helper loaded with importlib, or a distribution one tutorial
  imports, runs that tutorial alone again.

Figures are medians of --repeat runs. With BENCH_SITE=DIR (a real site that adopted the engine, built once), it
prints that site's rebuilds beside plain sphinx-build's instead (benchmarks/site_bench.py).
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

from benchmarks import catalog_bench, ci_runs  # noqa: E402
from tutorials_site.commands.execute import RunOptions, run_tutorial, sandbox_here  # noqa: E402
from tutorials_site.core import languages, project  # noqa: E402
from tutorials_site.core.layout import BuildTree  # noqa: E402
from tutorials_site.core.runs import fingerprint, used  # noqa: E402
from tutorials_site.core.runs.records import Stamp  # noqa: E402

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


def published_size(htmldir):
    """Bytes of the version `make publish` would copy out of a build's HTML folder (all but its versions.json)."""
    return sum(path.stat().st_size for path in Path(htmldir).rglob("*")
               if path.is_file() and path != Path(htmldir, "versions.json"))


def eight_tutorials(tmp):
    """A copy of the project whose gallery holds 8 copies of the real tutorial, each with its catalogs."""
    copy = Path(tmp, "eight")
    shutil.copytree(ROOT, copy, ignore=COPY)
    first = project.Project.read(copy).tutorials[0]
    source = first.path
    for n in range(2, 9):
        shutil.copy(source, source.with_name(f"{source.stem}_{n}.py"))
        for lang in languages.TRANSLATED:
            po = copy / "locales" / lang.code / "LC_MESSAGES" / f"{first.key}.po"
            shutil.copy(po, po.with_name(f"{source.stem}_{n}.po"))
    return copy


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


# Two small Sphinx-Gallery scripts: one that never imports torch and runs for about half a second,
# and one that does little more than import torch.
PLAIN_SCRIPT = '''"""
A script without torch
======================
"""
import time

time.sleep(0.5)
print("slept")

# %%
# A second block.
sum(range(1000))
'''
TORCH_SCRIPT = '''"""
A script that imports torch
===========================
"""
import torch

print(torch.ones(3).sum())
'''


def _runner_vs_plain(path, tmp):
    """(seconds of `python SCRIPT`, seconds of the runner's process, seconds of the whole supervised run)."""
    plain = timed([sys.executable, str(path)], env={"MPLBACKEND": "agg"}, cwd=tmp)[0]
    options = RunOptions.defaults(ROOT, "bench/images")
    confined = sandbox_here(ROOT, ())  # as a build runs it
    if isinstance(confined, str):
        raise SystemExit(confined)
    started = time.perf_counter()
    outcome = run_tutorial(path, Path(tmp, "run"), Path(tmp), options, timeout=600, label=path.name,
                           confined=confined)
    supervised = time.perf_counter() - started
    assert outcome.ok, outcome.error
    return plain, outcome.seconds, supervised


def process_overhead(repeat):
    """Medians per script: (python SCRIPT, the runner's process, the supervised run), for the two small
    scripts and for the real tutorials together."""
    figures = {"plain": [], "torch": [], "tutorials": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            for key, text in (("plain", PLAIN_SCRIPT), ("torch", TORCH_SCRIPT)):
                path = Path(tmp, f"script_{key}.py")  # not torch.py, which would shadow torch
                path.write_text(text)
                figures[key].append(_runner_vs_plain(path, tmp))
            for tutorial in project.current().tutorials:
                figures["tutorials"].append(_runner_vs_plain(tutorial.path, tmp))
    return {key: [statistics.median(column) for column in zip(*rows)] for key, rows in figures.items()}


def catalog_change(tmp):
    """Rebuild time after one Japanese translation changed, the languages rebuilt and the tutorials run."""
    copy = Path(tmp, "project")
    shutil.copytree(ROOT, copy, ignore=COPY)
    build(copy / "_build", root=copy)
    po = copy / "locales" / "ja" / "LC_MESSAGES" / "beginner_source" / "data_parallel_tutorial.po"
    text = po.read_text()
    msgstr = re.search(r'^msgstr "(.+)"$', text, re.M)
    po.write_text(text.replace(msgstr[0], f'msgstr "{msgstr[1]}!"', 1))
    seconds, executed, output = build(copy / "_build", root=copy)
    return seconds, re.findall(r"^\[build\] (\S+): sphinx-build", output, re.M), executed


# A paragraph's last line: a comment line of a text block (after a `# %%` or `####...` line) that ends a sentence.
_PROSE_LINE = re.compile(r"^(?:# ?%%|#{20,}).*\n(?:#.*\n)*?(# [A-Za-z].*\.)$", re.M)


def _edits(text):
    """(what, edited text) of a tutorial's three edits: a reworded paragraph, a line of prose added, a code comment."""
    line = _PROSE_LINE.search(text)[1]
    code = next(line for _, block in fingerprint.code_blocks(text) for line in block.split("\n")
                if line.strip() and not line.lstrip().startswith("#"))
    return [("prose reworded, same lines", text.replace(line, line + " Reworded.", 1)),
            ("prose, a line added", text.replace(line, line + "\n# A line of prose added.", 1)),
            ("a comment in its code", text.replace(code, code + "  # a comment added", 1))]


def edit_rebuilds(tmp):
    """For each real tutorial and each of its edits (_edits), from a build that is current: (tutorial, what,
    seconds of the rebuild, tutorials it executed, whether the tutorial's run cites its own lines)."""
    copy = Path(tmp, "project")
    shutil.copytree(ROOT, copy, ignore=COPY)
    build(copy / "_build", root=copy)
    found = []
    for tutorial in project.Project.read(copy).tutorials:
        original = tutorial.path.read_text()
        cites = Stamp.read(BuildTree(copy / "_build").run_dir(tutorial.key) / "stamp.json").cites_lines
        for what, text in _edits(original):
            tutorial.path.write_text(text)
            seconds, executed, _ = build(copy / "_build", root=copy)
            found.append((tutorial.path.name, what, seconds, executed, cites))
        tutorial.path.write_text(original)
        build(copy / "_build", root=copy)  # current again (the last edit ran it)
    return found


def kept_runs(tmp):
    """The first CI run of a generated repository, then for each change a second run from the runs it kept."""
    work = Path(tmp)
    repo = ci_runs.generate(work / "repo")
    site = work / "torch-site"
    first, kept = ci_runs.Player(work / "first", site).play(repo, "first", None, ci_runs.torch_version())
    seconds = []
    for n, change in enumerate(ci_runs.CHANGES):
        changed = ci_runs.changed(repo, work / f"repo-{n}", change)
        player = ci_runs.player_after(change, work / f"second-{n}", site)
        run = player.play(changed, "second", kept, ci_runs.torch_version() + change.torch_suffix, change.installed)[0]
        seconds.append((change, run))
    return first, seconds


def _ci_run(run):
    return (f"shards {run.shard_seconds:6.2f} s (the tutorials' runs {run.run_seconds:5.2f} s), "
            f"assemble {run.assemble_seconds:5.2f} s")


def main():
    if os.environ.get("BENCH_SITE"):
        from benchmarks import site_bench

        site_bench.main(Path(os.environ["BENCH_SITE"]).resolve())
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    all_s, en_s, runs = clean_builds(ROOT, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        all8_s, en8_s, runs8 = clean_builds(eight_tutorials(tmp), args.repeat)
    with tempfile.TemporaryDirectory() as builddir:
        build(builddir)
        noop_s = statistics.median(build(builddir)[0] for _ in range(args.repeat))
        size_mb = published_size(Path(builddir, "html")) / 2**20
        stamps = [Stamp.read(BuildTree(Path(builddir)).run_dir(t.key) / "stamp.json")
                  for t in project.current().tutorials]
    overhead = process_overhead(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        catalog_s, rebuilt, executed = catalog_change(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        edits = edit_rebuilds(tmp)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as tmp:
        first_run, second_runs = kept_runs(tmp)

    print(f"median of {args.repeat} runs; {os.cpu_count()} CPUs")
    print(f"executions per clean build     English alone {runs['en']}, all four languages {runs['all']} (target: equal)")
    print(f"clean build, en ko ja zh-cn    {all_s:7.2f} s   {all_s / en_s:.2f}x English alone {en_s:.2f} s (target <= 1.25x)")
    print(f"  8 tutorials, en ko ja zh-cn  {all8_s:7.2f} s   {all8_s / en8_s:.2f}x English alone {en8_s:.2f} s "
          f"(target <= 1.25x); executions {runs8['en']} and {runs8['all']}")
    for key, what in (("plain", "0.5 s script, no torch"), ("torch", "script importing torch"),
                      ("tutorials", "the tutorials (median)")):
        plain_s, runner_s, supervised_s = overhead[key]
        print(f"{what:<30} {runner_s:7.2f} s   {runner_s - plain_s:+.2f} s against `python script.py` "
              f"{plain_s:.2f} s (target <= +0.3 s); with the supervisor's start and end {supervised_s:.2f} s")
    print(f"published version, all languages {size_mb:5.1f} MB (target <= 15 MB; 42 MB with the theme's unused fonts); "
          "stable/ a link to it")
    print(f"no-op rebuild, all languages   {noop_s:7.2f} s   {noop_s / all_s:6.1%} of clean")
    print(f"one ja translation changed     {catalog_s:7.2f} s   rebuilt: {' '.join(rebuilt) or 'nothing'}; "
          f"tutorials executed: {executed} (target: 0)")
    for name, what, seconds, executed, cites in edits:
        target = 1 if what.startswith("a comment") or (cites and "added" in what) else 0
        print(f"  {name}, {what:<27} {seconds:7.2f} s   tutorials executed: {executed} (target: {target}"
              + (", its output cites its lines)" if cites and "prose" in what else ")"))
    print(f"peak memory: largest build process {peak_mib:.0f} MiB; each run's process tree: "
          + ", ".join(f"{stamp.peak_rss_mb:.0f} MB" for stamp in stamps)
          + "".join(f"; GPU {list(stamp.gpu_peak_mb)} MB" for stamp in stamps if stamp.gpu_peak_mb))
    print(f"what a run's fingerprint holds  of {len(used.installed())} distributions installed: " + "; ".join(
        f"{t.path.name} {len(stamp.used.files)} project file(s), {len(stamp.used.distributions)} distributions"
        for t, stamp in zip(project.current().tutorials, stamps) if stamp.used))
    print(f"two CI runs in a row, {ci_runs.COUNT} small tutorials in {ci_runs.SHARDS} shards (LANGUAGES={ci_runs.LANGUAGES}); "
          "the second restores the runs the first kept")
    print(f"  {'first run, nothing kept':<48} executed {first_run.executed:2d}              {_ci_run(first_run)}")
    for change, run in second_runs:
        print(f"  {'then ' + change.what:<48} executed {run.executed:2d} (target {change.target:2d})  {_ci_run(run)}")
    print(catalog_bench.line())


if __name__ == "__main__":
    main()

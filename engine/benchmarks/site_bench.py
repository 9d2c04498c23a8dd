"""Rebuilds of a real site, beside plain sphinx-build on the same machine: `make bench BENCH_SITE=DIR` (or
`python engine/benchmarks/site_bench.py DIR`), DIR a site that adopted the engine (engine/README.md "Adopting it")
and was built once with `tutorials-site html-noplot` (its runs kept or none: nothing executes here).

Prints, for the engine (every language) and for plain sphinx-build (the sources' language, the site's conf.py,
into a folder of its own): a no-op build, a one-sentence edit of a tutorial's prose and of a hand-written page,
each with the documents Sphinx read (from its log), and the edited language alone, first (what `tutorials-site
serve` builds before reloading the page). The edits are undone afterwards (and built again).
"""

import re
import subprocess
import sys
import time
from pathlib import Path

ENGINE = [sys.executable, "-m", "tutorials_site"]
READ = re.compile(r"^reading sources\.\.\. \[ *\d+%\] (\S+)$", re.M)  # Sphinx's line for each document it reads


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Seconds COMMAND took in CWD, and what it printed."""
    import os

    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    return time.perf_counter() - started, done.stdout + done.stderr


def read_by_language(site: Path) -> dict[str, int]:
    """How many documents each language's last Sphinx run read (its log; 0 for a language not run again)."""
    logs = site / "_build" / "logs"
    found = {}
    for log in sorted(logs.glob("*.log")):
        if log.stem in ("warnings", "failures"):
            continue
        found[log.stem] = len(READ.findall(log.read_text(errors="replace")))
    return found


def engine_build(site: Path, langs: str = "") -> tuple[float, dict[str, int]]:
    """(seconds, documents read per language Sphinx ran for) of `tutorials-site html-noplot`."""
    logs = site / "_build" / "logs"
    before = {log: log.stat().st_mtime_ns for log in logs.glob("*.log")}
    seconds, output = timed([*ENGINE, "html-noplot"], site, {"LANGUAGES": langs} if langs else None)
    if "[build] done" not in output:
        raise SystemExit(f"the build failed:\n{output[-3000:]}")
    ran = {log.stem for log in logs.glob("*.log") if before.get(log) != log.stat().st_mtime_ns}
    return seconds, {lang: count for lang, count in read_by_language(site).items() if lang in ran}


def plain_build(site: Path, plain: Path) -> tuple[float, int]:
    """(seconds, documents read) of plain sphinx-build of the sources' language: the staged tree the engine
    builds, with the same arguments (render.sphinx_args), into a doctrees and an output folder of its own under
    PLAIN (made from the engine's last build of that language the first time, so that both start current)."""
    import os
    import shutil

    from tutorials_site.commands.render import sphinx_args
    from tutorials_site.core import project
    from tutorials_site.core.site.settings import from_environment

    found = project.Project.read(site)
    lang = found.languages.source
    settings = from_environment({**os.environ, "LANGUAGES": lang.seg}, site, site / "_build", found.languages)
    if not (plain / "html").is_dir():
        shutil.copytree(settings.tree.doctrees(lang), plain / "doctrees")
        shutil.copytree(settings.tree.html / lang.seg, plain / "html")
    command = sphinx_args(settings, found, lang, settings.tree.src(lang), noplot=True)
    command[command.index("-d") + 1] = str(plain / "doctrees")
    command[-1] = str(plain / "html")
    seconds, output = timed([sys.executable, "-m", "sphinx", *command], settings.tree.src(lang))
    return seconds, len(READ.findall(output))


def edited(path: Path, old: str, new: str) -> str:
    """Replace OLD by NEW in PATH, once; return the text as it was."""
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text


_PROSE = re.compile(r"^(?:# ?%%|#{20,}).*\n(?:#.*\n)*?(# \S.*[.다])$", re.M)


def prose_line(text: str) -> str:
    """A line of a tutorial's prose (a comment line of a text block ending a sentence)."""
    found = _PROSE.search(text)
    assert found is not None
    return found[1]


def _row(what: str, seconds: float, read: dict[str, int], plain_s: float | None = None,
         plain_read: int | None = None) -> None:
    plain_text = f"{plain_s:6.1f} s, {plain_read} read" if plain_s is not None else ""
    read_text = " ".join(f"{lang} {count}" for lang, count in read.items()) or "no Sphinx run"
    print(f"{what:<62} {seconds:6.1f} s  {read_text:<20} {plain_text:>18}", flush=True)


def main(site: Path) -> None:
    from tutorials_site.core import project

    if not (site / "conf.py").is_file():
        raise SystemExit(f"error: BENCH_SITE={site}: no conf.py there: give the folder of a site built once with "
                         "`tutorials-site html-noplot`")
    found = project.Project.read(site)
    tutorial = next(t.path for t in found.tutorials if _PROSE.search(t.path.read_text()))
    page = next(p for p in sorted(site.glob("*.rst")) if p.name != "index.rst" and "\n\n" in p.read_text())
    plain = site.parent / f"{site.name}-plain-build"
    print(f"{site}: {len(found.tutorials)} tutorials, languages {' '.join(lang.seg for lang in found.languages.all)}")
    engine_build(site)  # current before measuring
    print(f"{'build (2 shared cores)':<62} {'engine':>8}  documents read      {'plain sphinx-build':>18}", flush=True)
    seconds, read = engine_build(site)
    plain_s, plain_read = plain_build(site, plain)
    _row("no-op", seconds, read, plain_s, plain_read)
    for what, path, old in (("one sentence of a tutorial's prose", tutorial, prose_line(tutorial.read_text())),
                            ("one sentence of a hand-written page", page, page.read_text().split("\n\n")[1].split("\n")[0])):
        original = edited(path, old, old + " Edited for the benchmark.")
        try:
            first_s, first_read = engine_build(site, found.languages.source.seg)
            rest_s, rest_read = engine_build(site)
            plain_s, plain_read = plain_build(site, plain)
            _row(f"{what}: {found.languages.source.seg} first", first_s, first_read, plain_s, plain_read)
            _row(f"{what}: then the others", rest_s, rest_read, None, None)
        finally:
            path.write_text(original, encoding="utf-8")
        back_s, back_read = engine_build(site)
        plain_build(site, plain)
        _row(f"{what} undone: every language at once", back_s, back_read, None, None)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())

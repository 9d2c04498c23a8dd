"""`tutorials-site <command> [options]`: the engine's one command line, run at a site's root (or with --project).

Each command's options are the settings it reads; each option can also be given as the environment variable of its
name in capitals (`--languages ko` or LANGUAGES=ko), which is how make passes a site's make variables down. They are
read here, once, into Settings; library code raises SiteError, which becomes a one-line message and exit status 1
here.
"""

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path

from .. import __version__
from ..core import languages, project
from ..core.assets import PACKAGE
from ..core.errors import Failed, SiteError, UsageError
from ..core.files import shown
from ..core.layout import BuildTree
from ..core.runs import sandbox, shards
from ..core.site import build_lock, checks, publish
from ..core.site.settings import Settings, flag, from_environment
from . import audit, build, catalogs, init, lint, lock, prepare, serve
from .import_translation import import_translation


@dataclass(frozen=True)
class Variable:
    """A setting a command reads: its option `--<name>` and its environment variable NAME."""

    name: str  # the environment (and make) variable: LANGUAGES
    help: str
    flag: bool = False  # a yes/no setting: `--strict`, STRICT=1

    @property
    def option(self) -> str:
        """Its command-line option: --languages."""
        return "--" + self.name.lower().replace("_", "-")


VARIABLES = {v.name: v for v in (
    Variable("LANGUAGES", "URL segments of the languages to build, space-separated (default: all of conf.py's)"),
    Variable("VERSION", "name of the version being built (default: from git: X.Y at a tag vX.Y, else the branch)"),
    Variable("STRICT", "fail on any passage shown in the source language instead of its translation", flag=True),
    Variable("BUILDDIR", "where builds go (default: _build at the project's root)"),
    Variable("PAGES", "the published tree that publish writes into and audit measures (default: docs at the root)"),
    Variable("SHARD", "i/N: execute only shard i of N of the tutorials, render nothing (CI); CLASS:i/N: of one runner "
                      "class's tutorials (cpu, gpu, multi-gpu: what each tutorial's `# tutorials-needs:` declares)"),
    Variable("NEEDS", "strict: a tutorial runs only where torch sees the GPUs it needs, else the build fails; "
                      "lenient (default): every tutorial runs anyway"),
    Variable("CLASS_SHARDS", "the most shards each runner class gets (default: cpu=1 gpu=4 multi-gpu=1)"),
    Variable("REUSE", "a build folder (another BUILDDIR, or the runs CI kept): a tutorial whose run there is current "
                      "gets a copy of it instead of executing"),
    Variable("RETRY_FAILED", "run again the tutorials whose kept run failed", flag=True),
    Variable("TUTORIAL_TIMEOUT", "seconds a tutorial may run before it is killed (default 1800; a tutorial may set "
                                 "its own with a `# tutorials-timeout: N` line)"),
    Variable("TUTORIAL_OUTPUT_LIMIT", "characters of a code block's output a page shows (default 256K)"),
    Variable("TUTORIALS", "execute only these tutorials (paths from the project root, or patterns like "
                          "'beginner_source/*ddp*'); check and publish then refuse the build"),
    Variable("PORT", "the port serve serves on, at 127.0.0.1 (default 8000)"),
    Variable(sandbox.SETTING, "off: run the tutorials without their sandbox (bubblewrap), where this machine cannot "
                              "make one; the log and each page say so, and ci-build refuses it (default: on)"),
    Variable("VERBOSE", "show each language's Sphinx log on the screen too, not only in BUILDDIR/logs/", flag=True),
    Variable("PROGRESS_INTERVAL", "seconds between the lines saying how a running tutorial goes, without a terminal "
                                  "(default 15)"),
    Variable("BUILD_JOBS", "languages rendered at once (default: the number of cores)"),
    Variable("OVERWRITE", "import-translation replaces the translations the catalogs have (default: kept)", flag=True),
    Variable("CHROMIUM", "the browser audit drives (default: /usr/bin/chromium)"),
    Variable("TORCH_CPU_WHEELS", "where pip finds torch's CPU wheel, when its configuration offers none"),
)}
_BUILDING = ("LANGUAGES", "VERSION", "STRICT", "BUILDDIR", "PAGES", "NEEDS", "REUSE", "RETRY_FAILED", "TUTORIAL_TIMEOUT",
             "TUTORIAL_OUTPUT_LIMIT", "TUTORIALS", sandbox.SETTING, "VERBOSE", "PROGRESS_INTERVAL", "BUILD_JOBS")


@dataclass(frozen=True)
class Command:
    """A subcommand: what it does, the settings it reads, its positional arguments, and what runs it."""

    help: str
    variables: tuple[str, ...]
    run: Callable[[project.Project, Settings, argparse.Namespace], object]
    paths: str = ""  # the help of its positional paths, where it takes some


def _checked_languages(site: project.Project, settings: Settings, htmldir: Path,
                       env: Mapping[str, str]) -> list[languages.Language]:
    """LANGUAGES where given, else each of the site's languages that the build folder holds."""
    if env.get("LANGUAGES", "").strip():
        return settings.langs
    return site.languages.built_in(htmldir) or settings.langs


def _check(site: project.Project, settings: Settings, htmldir: Path, env: Mapping[str, str],
           verified_only: bool = False) -> None:
    whole = checks.whole_build(htmldir)
    if isinstance(whole, str):
        for error in checks.failed_runs(site, htmldir):  # why a build failed, where a tutorial did
            print(f"check: {error}")
        raise Failed(f"check: {whole}")
    problems = (checks.check_stamps(site, htmldir, _checked_languages(site, settings, htmldir, env), settings.runs_key,
                                    sandboxed=settings.sandboxed, verified_only=verified_only,
                                    pythonpath=settings.pythonpath)
                + checks.check_links(htmldir))
    for problem in problems:
        print(problem)
    for label in checks.not_executed(site):
        print(f"check: {label}: not executed: conf.py's filename_pattern leaves it out (shown without output)")
    if problems:
        raise Failed(f"check: {len(problems)} problem(s) in {shown(htmldir)}")
    allowed = checks.failed_as_allowed(site, htmldir)
    print(f"check: {shown(htmldir)}: every tutorial executed and stamped, every internal link resolves"
          + (f"; {len(allowed)} failed as conf.py expects or allows (expected_failing_examples, "
             f"tutorials_allowed_failures): {', '.join(allowed)}" if allowed else ""))


def _publish(site: project.Project, htmldir: Path, pages: Path) -> None:
    new = publish.publish(site, htmldir, pages)
    listed = ", ".join(e.name for e in new.versions)
    print(f"publish: {shown(pages)}: versions {listed}; stable {new.stable}")


def _durations(site: project.Project, builddirs: Sequence[Path | str]) -> None:
    durations = {**shards.load_durations(site), **shards.record(builddirs)}
    path = shards.durations_file(site)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(durations.items())), indent=1) + "\n")
    print(f"durations: {len(durations)} unit(s) in {shown(path)}")


def _i18n_status(site: project.Project, settings: Settings) -> None:
    if not catalogs.status(site, settings.langs, strict=settings.strict):
        raise Failed("i18n-status: STRICT=1 and some translations are below 100%")


def _htmldir(settings: Settings, args: argparse.Namespace) -> Path:
    """The built HTML that check and publish read: the one given, else BUILDDIR's."""
    return Path(args.paths[0]) if args.paths else settings.tree.html


def _ci_build(site: project.Project, settings: Settings, args: argparse.Namespace) -> None:
    """CI's build: every tutorial, in its sandbox, strict about translations and (unless NEEDS says otherwise)
    about the GPUs each needs, then checked."""
    if not settings.sandboxed:
        raise UsageError(f"ci-build: {sandbox.SETTING}=off refused: CI's build runs every tutorial in its sandbox")
    strict = replace(settings, strict=True, enforce_needs=settings.enforce_needs or not args.env.get("NEEDS"))
    with build_lock.locked(settings.tree, write=True):
        build.html(strict)
    _check(site, strict, strict.tree.html, args.env, verified_only=True)


def _docs(site: project.Project, settings: Settings, args: argparse.Namespace) -> None:
    """Build every language of this version, then publish it into the project's docs/ beside the others."""
    with build_lock.locked(settings.tree, write=True):
        build.html(settings)
    _publish(site, settings.tree.html, site.root / "docs")


COMMANDS: dict[str, Command] = {
    "html": Command("build every language, executing the tutorials whose runs are not current",
                    (*_BUILDING, "SHARD"), lambda site, s, a: build.html(s)),
    "html-noplot": Command("build every language without executing anything: pages without output",
                           ("LANGUAGES", "VERSION", "STRICT", "BUILDDIR", "VERBOSE", "BUILD_JOBS"),
                           lambda site, s, a: build.html_noplot(s)),
    "serve": Command("serve the site on 127.0.0.1:PORT, rebuilding it on each save and reloading the browser",
                     (*_BUILDING, "PORT"), lambda site, s, a: serve.serve(site, s, a.env)),
    "check": Command("fail unless every page shows a run of its current source, in this environment, untouched",
                     ("LANGUAGES", "BUILDDIR"), lambda site, s, a: _check(site, s, _htmldir(s, a), a.env),
                     paths="the built HTML (default: BUILDDIR/html)"),
    "ci-build": Command("CI's build in one command: every tutorial, sandboxed, strict (NEEDS strict unless given), "
                        "then checked", _BUILDING, _ci_build),
    "assemble": Command("render every language once from the shards' runs, executing nothing",
                        ("LANGUAGES", "VERSION", "STRICT", "BUILDDIR", "VERBOSE", "BUILD_JOBS"),
                        lambda site, s, a: build.assemble(s, [Path(p).resolve() for p in a.paths]),
                        paths="the shards' build folders"),
    "shard-matrix": Command("CI's execute matrix (JSON): the shards of each runner class that has tutorials",
                            ("CLASS_SHARDS",),
                            lambda site, s, a: print(json.dumps(shards.matrix(
                                site, shards.parse_counts(a.env.get("CLASS_SHARDS", ""))), sort_keys=True))),
    "durations": Command(f"refresh {shards.DURATIONS} from build folders' runs", ("BUILDDIR",),
                         lambda site, s, a: _durations(site, a.paths or [s.tree.root]),
                         paths="the build folders whose runs' durations it records (default: BUILDDIR)"),
    "docs": Command("build every language of this version and publish it into docs/, beside the others",
                    _BUILDING, _docs),
    "publish": Command("add or replace this build's version in PAGES (a gh-pages checkout)", ("PAGES", "BUILDDIR"),
                       lambda site, s, a: _publish(site, _htmldir(s, a), s.pages),
                       paths="the built HTML (default: BUILDDIR/html)"),
    "update-po": Command("extract every translatable unit and merge it into every catalog", ("BUILDDIR",),
                         lambda site, s, a: catalogs.update_po(site, s.tree.logs / "gettext.log",
                                                               prepare.made_by_builds(s))),
    "import-translation": Command(
        "a copy of the site translated in place (FROM) becomes one language's catalogs (LANGUAGES)",
        ("LANGUAGES", "OVERWRITE", "BUILDDIR"),
        lambda site, s, a: import_translation(site, s.langs, a.paths[0] if a.paths else "", flag(a.env.get("OVERWRITE")),
                                              s.tree.logs / "import-translation.log", prepare.made_by_builds(s)),
        paths="FROM: the checkout of the translated copy"),
    "i18n-status": Command("translated / fuzzy / untranslated, per language and catalog", ("LANGUAGES", "STRICT"),
                           lambda site, s, a: _i18n_status(site, s)),
    "lint": Command("sphinx-lint, msgfmt --check, actionlint, zizmor and ruff on the site", ("BUILDDIR", "PAGES"),
                    lambda site, s, a: lint.lint(site, s)),
    "audit": Command("Lighthouse and axe-core on PAGES/stable/, served gzipped: fail over the budget",
                     ("PAGES", "LANGUAGES", "CHROMIUM"), lambda site, s, a: audit.run(site, s)),
    "lock": Command("hashed lock files of the site's requirements.txt (and requirements-test.txt), the torch family "
                    "from one build: requirements-cpu.lock and requirements-cuda.lock", ("TORCH_CPU_WHEELS",),
                    lambda site, s, a: lock.lock_site(site.root, a.env.get("TORCH_CPU_WHEELS", ""))),
    "init": Command("write what a site adds to use the engine (a Makefile include, a workflow calling the reusable "
                    "one), never overwriting a file", (), lambda site, s, a: init.init(site)),
}


# The commands that write a build folder, and those that read a build's HTML (see core.site.build_lock); ci-build
# and docs take the lock themselves, around their build.
WRITERS = ("html", "html-noplot", "assemble")
READERS = ("check", "publish")
# The commands that run Sphinx with sphinx-gallery, which would refuse a wrong option only once it starts (after
# the tutorials ran): checked first, as sphinx-gallery checks it (its import is paid by their Sphinx run anyway).
RENDERERS = (*WRITERS, "serve", "ci-build", "docs", "update-po", "import-translation")


def _check_gallery_conf(site: project.Project) -> None:
    from .. import sphinx_gallery_build

    site.refuse_unknown_options(sphinx_gallery_build.option_names(), sphinx_gallery_build.conf_problem(site.options))


def _holding(settings: Settings, args: argparse.Namespace) -> AbstractContextManager[None]:
    if args.command in WRITERS:
        return build_lock.locked(settings.tree, write=True)
    if args.command in READERS:
        return build_lock.locked(BuildTree(_htmldir(settings, args).resolve().parent), write=False)
    return contextlib.nullcontext()


def parser() -> argparse.ArgumentParser:
    """The command line: a subcommand for each of COMMANDS, each with its settings' options and --help."""
    top = argparse.ArgumentParser(prog="tutorials-site", description="Build a multilingual, executed Sphinx-Gallery "
                                  "site: each tutorial runs once, sandboxed, for every language.")
    top.add_argument("-V", "--engine-version", action="version", version=f"tutorials-site {__version__}")
    top.add_argument("-C", "--project", type=Path, default=Path("."),
                     help="the site's folder, where its conf.py is (default: the current folder)")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        sub = commands.add_parser(name, help=command.help, description=command.help)
        if command.paths:
            sub.add_argument("paths", nargs="*", metavar="PATH", help=command.paths)
        for variable in (VARIABLES[n] for n in command.variables):
            described = f"{variable.help} [{variable.name}]"
            if variable.flag:
                sub.add_argument(variable.option, dest=variable.name, action="store_true", help=described)
            else:
                sub.add_argument(variable.option, dest=variable.name, metavar=variable.name, help=described)
        if name == "html":
            sub.add_argument("--served-at", default="", help=argparse.SUPPRESS)  # serve's builds: where they are served
    return top


def _environment(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, str]:
    """ENVIRON with the settings the command line gives, which win over it."""
    env = dict(environ)
    for name, variable in VARIABLES.items():
        value = getattr(args, name, None)
        if value is not None and value is not False:
            env[name] = "1" if variable.flag else str(value)
    return env


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command the command line names; a SiteError exits with its message and status 1."""
    args = parser().parse_args(argv)
    if os.environ.get("GITHUB_ACTIONS") == "true":  # file:line lines become annotations of the run
        print(f"::add-matcher::{PACKAGE / 'ci' / 'problem-matchers.json'}", flush=True)
    args.env = _environment(args, os.environ)  # SHARDS, FROM, CLASS_SHARDS...: what make passes down
    args.paths = getattr(args, "paths", None) or _listed_paths(args.command, args.env)
    try:
        root = args.project.resolve()
        site = project.current(root)
        if args.command in RENDERERS:
            _check_gallery_conf(site)
        settings = replace(from_environment(args.env, root, None, site.languages),
                           served_at=getattr(args, "served_at", ""))
        with _holding(settings, args):
            COMMANDS[args.command].run(site, settings, args)
    except SiteError as error:
        sys.exit(str(error) if isinstance(error, Failed) else f"error: {error}")


def _listed_paths(command: str, env: Mapping[str, str]) -> list[str]:
    """The paths a make variable gives where the command line gives none: SHARDS (a list) for assemble, FROM for
    durations (a list) and import-translation (one folder, whatever its name holds)."""
    if command == "import-translation":
        return [env["FROM"]] if env.get("FROM", "").strip() else []
    listed = {"assemble": "SHARDS", "durations": "FROM"}.get(command)
    return env.get(listed, "").split() if listed else []

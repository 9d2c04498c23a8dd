"""The one entry of every command: `python -m tutorials_site <command> [arguments]`.

The make variables are read from the environment here, once, and passed down
as Settings; library code raises SiteError, which becomes a one-line message
and exit status 1 here.
"""

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from ..core import languages, project
from ..core.errors import Failed, SiteError
from ..core.layout import ROOT, BuildTree
from ..core.runs import shards
from ..core.site import build_lock, checks, publish
from ..core.site.settings import Settings, flag, from_environment
from . import audit, build, catalogs, lint, prepare, serve
from .build_log import shown
from .import_translation import import_translation


def _checked_languages(settings: Settings, htmldir: Path, env: Mapping[str, str]) -> list[languages.Language]:
    """LANGUAGES where given, else each of the site's languages that the build folder holds."""
    if env.get("LANGUAGES", "").strip():
        return settings.langs
    return project.current().languages.built_in(htmldir) or settings.langs


def _check(settings: Settings, htmldir: Path, env: Mapping[str, str]) -> None:
    whole = checks.whole_build(htmldir)
    if isinstance(whole, str):
        for error in checks.failed_runs(htmldir):  # why a build failed, where a tutorial did
            print(f"check: {error}")
        raise Failed(f"check: {whole}")
    problems = checks.check_stamps(htmldir, _checked_languages(settings, htmldir, env)) + checks.check_links(htmldir)
    for problem in problems:
        print(problem)
    for label in checks.not_executed():
        print(f"check: {label}: not executed: conf.py's filename_pattern leaves it out (shown without output)")
    if problems:
        raise Failed(f"check: {len(problems)} problem(s) in {shown(htmldir)}")
    print(f"check: {shown(htmldir)}: every tutorial executed and stamped, every internal link resolves")


def _publish(htmldir: Path, pages: Path) -> None:
    new = publish.publish(htmldir, pages)
    listed = ", ".join(e.name for e in new.versions)
    print(f"publish: {pages}: versions {listed}; stable {new.stable}")


def _durations(builddirs: Sequence[Path | str]) -> None:
    durations = {**shards.load_durations(), **shards.record(builddirs)}
    shards.DURATIONS.write_text(json.dumps(dict(sorted(durations.items())), indent=1) + "\n")
    print(f"durations: {len(durations)} unit(s) in {shards.DURATIONS.relative_to(ROOT)}")


def _shard_matrix(env: Mapping[str, str]) -> None:
    """CI's execute matrix, one line of JSON: the shards of each runner class (CLASS_SHARDS: the most each gets)."""
    print(json.dumps(shards.matrix(shards.parse_counts(env.get("CLASS_SHARDS", ""))), sort_keys=True))


def _i18n_status(settings: Settings) -> None:
    if not catalogs.status(project.current(), settings.langs, strict=settings.strict):
        raise Failed("i18n-status: STRICT=1 and some translations are below 100%")


def _htmldir(settings: Settings, args: argparse.Namespace) -> Path:
    """The built HTML that check and publish read: the one given, else BUILDDIR's."""
    return Path(args.paths[0]) if args.paths else settings.tree.html


# Each command, given the settings and the command line (with `env`, the environment).
COMMANDS: dict[str, Callable[[Settings, argparse.Namespace], object]] = {
    "html": lambda s, a: build.html(s),
    "html-noplot": lambda s, a: build.html_noplot(s),
    "assemble": lambda s, a: build.assemble(s, [Path(p).resolve() for p in a.paths or a.env.get("SHARDS", "").split()]),
    "check": lambda s, a: _check(s, _htmldir(s, a), a.env),
    "publish": lambda s, a: _publish(_htmldir(s, a), s.pages),
    "shard-matrix": lambda s, a: _shard_matrix(a.env),
    "durations": lambda s, a: _durations(a.paths or a.env.get("FROM", "").split() or [s.tree.root]),
    "update-po": lambda s, a: catalogs.update_po(project.current(), s.tree.logs / "gettext.log", prepare.made_by_builds(s)),
    "i18n-status": lambda s, a: _i18n_status(s),
    "import-translation": lambda s, a: import_translation(
        project.current(), s.langs, a.env.get("FROM", ""), flag(a.env.get("OVERWRITE")),
        s.tree.logs / "import-translation.log", prepare.made_by_builds(s)),
    "lint": lambda s, a: lint.lint(s),
    "audit": lambda s, a: audit.run(s),
    "serve": lambda s, a: serve.serve(s, a.env),  # each of its builds takes the build folder's lock itself
}


# The commands that write a build folder, and those that read a build's HTML (see core.site.build_lock).
WRITERS = ("html", "html-noplot", "assemble")
READERS = ("check", "publish")
# The commands that run Sphinx with sphinx-gallery, which would refuse a wrong option only once it starts (after
# the tutorials ran): checked first, as sphinx-gallery checks it (its import is paid by their Sphinx run anyway).
RENDERERS = (*WRITERS, "serve", "update-po", "import-translation")


def _check_gallery_conf(site: project.Project) -> None:
    from .. import sphinx_gallery_build

    site.refuse_unknown_options(sphinx_gallery_build.option_names(), sphinx_gallery_build.conf_problem(site.options))


def _holding(settings: Settings, args: argparse.Namespace) -> AbstractContextManager[None]:
    if args.command in WRITERS:
        return build_lock.locked(settings.tree, write=True)
    if args.command in READERS:
        return build_lock.locked(BuildTree(_htmldir(settings, args).resolve().parent), write=False)
    return contextlib.nullcontext()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command the command line names; a SiteError exits with its message and status 1."""
    parser = argparse.ArgumentParser(prog="python -m tutorials_site", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("paths", nargs="*",
                        help="assemble: the shards' build folders; check, publish: the built HTML; "
                             "durations: build folders")
    parser.add_argument("--builddir", help="instead of BUILDDIR")
    parser.add_argument("--served-at", default="", help="html: the URL `make serve` serves the build at")
    args = parser.parse_intermixed_args(argv)
    args.env = os.environ  # SHARDS, FROM, CLASS_SHARDS: lists given to make as variables
    try:
        if args.command in RENDERERS:
            _check_gallery_conf(project.current())
        settings = replace(from_environment(args.env, args.builddir, project.current().languages),
                           served_at=args.served_at)
        with _holding(settings, args):
            COMMANDS[args.command](settings, args)
    except SiteError as error:
        sys.exit(str(error) if isinstance(error, Failed) else f"error: {error}")

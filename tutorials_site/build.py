"""Build the site: stage each language's sources, run Sphinx on them, link the languages.

    python -m tutorials_site.build html [--noplot] [--builddir DIR]

Each language gets its own Sphinx source tree under <builddir>/src/<seg>/ and
its own output under <builddir>/html/<seg>/, so that sphinx-gallery's outputs
and caches of one language never mix with another's. English links the
repository's sources in; a translated language gets its tutorial scripts
generated from the English ones and its catalogs (translate.py), and its
compiled site catalogs in _locale/.
"""

import argparse
import hashlib
import io
import json
import multiprocessing
import os
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.mofile import write_mo

from . import catalogs, checks, languages, shards, translate, versions
from .fingerprint import environment_fingerprint, installed_version
from .layout import GALLERIES, PAGES, ROOT

# Besides the staged sources and the environment fingerprint (conf.py, this
# package, installed versions), what a build reads from the project root.
CONF_INPUTS = ("_templates", "_static")


def _link(link, target):
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or link.is_file():
        link.unlink()
    link.symlink_to(target)


def _write_if_changed(path, data):
    """Keeps mtimes (and sphinx-gallery's md5 cache) of unchanged generated files."""
    data = data.encode() if isinstance(data, str) else data
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def _sync_folder(folder, wanted):
    """Make `folder` hold exactly `wanted` ({name: text to write, or a path to link})."""
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for entry in folder.iterdir():
        if entry.name not in wanted:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for name, content in wanted.items():
        if isinstance(content, Path):
            _link(folder / name, content)
        else:
            _write_if_changed(folder / name, content)


def stage(builddir, lang, only=None):
    """The Sphinx source tree of one language; returns (path, translation reports).

    `only`: the tutorial stems to stage (a shard's share); all of them by default.
    """
    src = Path(builddir, "src", lang.seg)
    src.mkdir(parents=True, exist_ok=True)
    for name in PAGES:
        _link(src / name, ROOT / name)
    reports = []
    for src_dir in GALLERIES:
        wanted = {}
        for path in sorted((ROOT / src_dir).iterdir()):
            if path.suffix != ".py":
                wanted[path.name] = path  # the gallery header: translated by Sphinx
            elif only is None or path.stem in only:
                if lang is languages.SOURCE:
                    wanted[path.name] = path
                else:
                    text, report = translate.generate(lang, src_dir, path)
                    wanted[path.name] = text
                    wanted[f"{path.stem}.i18n.json"] = report.as_json()
                    reports.append(report)
        _sync_folder(src / src_dir, wanted)
    if lang is languages.SOURCE:
        return src, reports
    mo_dir = src / "_locale" / lang.code / "LC_MESSAGES"
    mo_dir.mkdir(parents=True, exist_ok=True)
    for domain in catalogs.SITE_DOMAINS:
        po = catalogs.catalog_dir(lang) / f"{domain}.po"
        if po.exists():
            catalog, problems = translate.usable_site_catalog(domain, po)
            reports.append(translate.Report(problems=problems))
            buffer = io.BytesIO()
            write_mo(buffer, catalog, use_fuzzy=False)
            _write_if_changed(mo_dir / f"{domain}.mo", buffer.getvalue())
    return src, reports


def sphinx_args(builddir, lang, src, noplot, strict, langs):
    """The sphinx-build command line of one language."""
    command = [
        "-b", "html", "-W", "--keep-going",
        "-c", str(ROOT),
        "-d", str(Path(builddir, "doctrees", lang.seg)),
        "-D", f"language={lang.code}",
        "-D", f"tutorials_languages={' '.join(l.seg for l in langs)}",
    ]
    if strict:
        command += ["-D", "tutorials_strict=1"]
    if noplot:
        command += ["-D", "plot_gallery=0"]
    return command + [str(src), str(Path(builddir, "html", lang.seg))]


def _files(path):
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.exists() else []


def inputs_digest(command, lang, environment, only=None):
    """A digest of everything a language's build reads: when it is unchanged, so is the output."""
    digest = hashlib.sha256("\0".join(command + sorted(only or [])).encode())
    digest.update(environment.encode())
    # docs/versions.json: pages embed the published list for readers who open them from disk.
    inputs = (*PAGES, *GALLERIES, *CONF_INPUTS, f"locales/{lang.code}", "docs/versions.json")
    for name in inputs:
        for path in _files(ROOT / name):
            digest.update(f"{path.relative_to(ROOT)}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def outputs_snapshot(outdir):
    return sorted(
        f"{p.relative_to(outdir)} {p.stat().st_size} {p.stat().st_mtime_ns}" for p in _files(outdir)
    )


class UpToDate:
    """Skips sphinx-build when neither the inputs nor the outputs changed since the last success.

    A no-op sphinx-build still costs about a second per language (sphinx-gallery
    imports matplotlib while reading its configuration); this costs a few stats.
    """

    def __init__(self, builddir, lang, command, environment, only=None):
        self.record = Path(builddir, "doctrees", lang.seg, "inputs.sha256")
        self.outdir = Path(command[-1])
        self.digest = inputs_digest(command, lang, environment, only)

    def __bool__(self):
        try:
            recorded = self.record.read_text().splitlines()
        except OSError:
            return False
        return recorded == [self.digest, *outputs_snapshot(self.outdir)]

    def forget(self):
        self.record.unlink(missing_ok=True)

    def remember(self):
        self.record.write_text("\n".join([self.digest, *outputs_snapshot(self.outdir)]))


def write_root_index(htmldir, langs):
    Path(htmldir).mkdir(parents=True, exist_ok=True)
    Path(htmldir, "index.html").write_text(languages.chooser_page(langs), encoding="utf-8")


def _preload(noplot):
    """Import once what every language's build imports, before the builds are forked.

    Each build then starts in milliseconds instead of seconds (Sphinx, the
    theme, sphinx-gallery with matplotlib, and torch for the tutorials).
    """
    import myst_parser.sphinx_ext.main  # noqa: F401
    import sphinx.cmd.build  # noqa: F401
    import sphinx_gallery.gen_gallery  # noqa: F401
    import sphinx_rtd_theme  # noqa: F401
    from sphinx_gallery.scrapers import _import_matplotlib

    _import_matplotlib()
    if not noplot:
        import torch  # noqa: F401


def _sphinx(command, log):
    """One language's sphinx-build, in a process forked for it alone; its output goes to `log`."""
    from sphinx.cmd.build import build_main

    with open(log, "w") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        sys.stdout = sys.stderr = open(1, "w", closefd=False)
        os.chdir(ROOT)
        return build_main(command)


def html(builddir, noplot=False, strict=False, shard=None, executed=None):
    """Build the selected languages; with `shard` ("i/N"), only that shard's tutorials, executed."""
    langs = languages.selected()
    versions.current()  # a bad VERSION stops here, before anything is written
    catalogs.check_layout()
    share = shards.selection(shard, langs) if shard else None
    environment = environment_fingerprint()
    failed, todo = [], []
    for lang in langs:
        if share is not None and lang.seg not in share:
            print(f"[build] {lang.seg}: nothing to execute in shard {shard}", flush=True)
            continue
        only = share[lang.seg] if share is not None else None
        src, reports = stage(builddir, lang, only=only)
        for problem in (p for report in reports for p in report.problems):
            print(f"warning: {problem}", flush=True)
        english = sum(report.english for report in reports)
        if strict and english:
            print(f"[build] {lang.seg}: STRICT=1 and {english} tutorial passage(s) would be shown in English",
                  flush=True)
            failed.append(lang.seg)
            continue
        command = sphinx_args(builddir, lang, src, noplot, strict, langs)
        up_to_date = UpToDate(builddir, lang, command, environment, only)
        if up_to_date:
            print(f"[build] {lang.seg}: up to date", flush=True)
            continue
        up_to_date.forget()
        todo.append((lang, command, up_to_date))
    if todo:
        _preload(noplot)
        logs = Path(builddir, "logs")
        logs.mkdir(parents=True, exist_ok=True)
        # A fresh fork per language (maxtasksperchild=1): Sphinx keeps global state per process.
        context = multiprocessing.get_context("fork")
        workers = min(len(todo), int(os.environ.get("BUILD_JOBS", os.cpu_count() or 1)))
        started = time.perf_counter()
        with context.Pool(workers, maxtasksperchild=1) as pool:
            runs = [(lang, up_to_date, logs / f"{lang.seg}.log",
                     pool.apply_async(_sphinx, (command, logs / f"{lang.seg}.log")))
                    for lang, command, up_to_date in todo]
            for lang, up_to_date, log, run in runs:
                status = run.get()
                print(f"[build] {lang.seg}: sphinx-build{' (no execution)' if noplot else ''}", flush=True)
                print(log.read_text(), end="", flush=True)
                if status:
                    failed.append(lang.seg)
                else:
                    up_to_date.remember()
                    print(f"[build] {lang.seg}: done ({time.perf_counter() - started:.1f} s since start)", flush=True)
    write_root_index(Path(builddir, "html"), langs)
    if failed:
        sys.exit(f"[build] failed: {' '.join(failed)} (see the errors above)")
    write_build_info(Path(builddir, "html"), langs, executed=not noplot if executed is None else executed)


def assemble(builddir, shard_builddirs):
    """Render the site once from the shards' executed outputs, executing nothing, and validate it."""
    langs = languages.selected()
    for lang in langs:
        stage(builddir, lang)
    merged = shards.merge(shard_builddirs, builddir, langs)
    print(f"[assemble] {len(merged)} executed tutorial run(s) from {len(shard_builddirs)} shard(s)", flush=True)
    missing = shards.not_current(builddir, langs)
    if missing:
        sys.exit("[assemble] refusing to execute anything here; no current shard output for:\n  "
                 + "\n  ".join(missing))
    # Every output is current, so sphinx-gallery's cache executes nothing: the same build as without shards.
    html(builddir, strict=os.environ.get("STRICT", "") not in ("", "0"), executed=True)
    htmldir = Path(builddir, "html")
    problems = checks.check_stamps(htmldir, langs) + checks.check_links(htmldir)
    if problems:
        print("\n".join(problems))
        sys.exit(f"[assemble] the assembled site does not validate ({len(problems)} problem(s))")
    print(f"[assemble] {htmldir}: every tutorial executed, every language present, every link whole")


def write_build_info(htmldir, langs, executed):
    """What the publish step needs to know about this build: its version entry."""
    name = versions.current()
    info = {
        "name": name, "label": name, "release": versions.is_release(name),
        "torch": installed_version("torch"), "languages": [lang.seg for lang in langs],
        "built": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "path": f"{name}/",
        "executed": executed,
    }
    Path(htmldir, "build.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tutorials_site.build")
    parser.add_argument("target", choices=["html", "assemble"])
    parser.add_argument("--noplot", action="store_true", help="build without executing tutorials")
    parser.add_argument("--builddir", default=os.environ.get("BUILDDIR", ROOT / "_build"))
    parser.add_argument("--shard", default=os.environ.get("SHARD") or None, help="i/N: execute only shard i of N")
    parser.add_argument("shards", nargs="*", help="assemble: the shards' build folders")
    args = parser.parse_intermixed_args(argv)
    strict = os.environ.get("STRICT", "") not in ("", "0")
    try:
        if args.target == "assemble":
            assemble(Path(args.builddir).resolve(), [Path(s).resolve() for s in args.shards])
            return
        html(Path(args.builddir).resolve(), noplot=args.noplot, strict=strict, shard=args.shard)
    except (catalogs.CatalogError, translate.TranslationError) as error:
        sys.exit(f"error: {error}")


if __name__ == "__main__":
    main()

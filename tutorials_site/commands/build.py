"""`make html`, `make html-noplot`, `make assemble`: stage every language, run Sphinx on each.

Each language gets its own Sphinx source tree under <builddir>/src/<seg>/ and
its own output under <builddir>/html/<seg>/, so that sphinx-gallery's outputs
and caches of one language never mix with another's (core.staging).
"""

import hashlib
import json
import multiprocessing
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from sphinx_gallery.gen_rst import md5sum_is_current

from ..core import catalogs, checks, shards, versions
from ..core.errors import Failed
from ..core.fingerprint import environment_fingerprint, installed_version, source_digest
from ..core.layout import GALLERIES, PAGES, ROOT, tutorial_sources
from ..core.site_pages import chooser_page
from ..core.staging import stage
from ..core.stamps import read_stamp, stamp_problems

# Besides the staged sources and the environment fingerprint (conf.py, this
# package, installed versions), what a build reads from the project root.
CONF_INPUTS = ("_templates", "_static")


def sphinx_args(settings, lang, src, noplot):
    """The sphinx-build command line of one language."""
    command = [
        "-b", "html", "-W", "--keep-going",
        "-c", str(ROOT),
        "-d", str(settings.tree.doctrees(lang)),
        "-D", f"language={lang.code}",
        "-D", f"version={settings.version}", "-D", f"release={settings.version}",
        "-D", f"tutorials_languages={' '.join(lang.seg for lang in settings.langs)}",
        "-D", f"tutorials_versions={json.dumps(settings.published, ensure_ascii=False, sort_keys=True)}",
    ]
    if settings.strict:
        command += ["-D", "tutorials_strict=1"]
    if noplot:
        command += ["-D", "plot_gallery=0"]
    return command + [str(src), str(settings.tree.html / lang.seg)]


def _files(path):
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.exists() else []


def inputs_digest(command, lang, environment, only=None):
    """A digest of everything a language's build reads: when it is unchanged, so is the output."""
    digest = hashlib.sha256("\0".join(command + sorted(only or [])).encode())
    digest.update(environment.encode())
    inputs = (*PAGES, *GALLERIES, *CONF_INPUTS, f"locales/{lang.code}")
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

    def __init__(self, tree, lang, command, environment, only=None):
        self.record = tree.doctrees(lang) / "inputs.sha256"
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
    Path(htmldir, "index.html").write_text(chooser_page(langs), encoding="utf-8")


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
        sys.stdout = sys.stderr = open(1, "w", closefd=False)  # noqa: SIM115 (the process ends with the build)
        os.chdir(ROOT)
        return build_main(command)


def html(settings, noplot=False, executed=None):
    """Build the selected languages; with SHARD ("i/N"), only that shard's tutorials, executed."""
    tree, langs, shard, strict = settings.tree, settings.langs, settings.shard, settings.strict
    catalogs.check_layout()
    share = shards.selection(shard, langs) if shard else None
    environment = environment_fingerprint()
    failed, todo = [], []
    for lang in langs:
        if share is not None and lang.seg not in share:
            print(f"[build] {lang.seg}: nothing to execute in shard {shard}", flush=True)
            continue
        only = share[lang.seg] if share is not None else None
        src, reports = stage(tree, lang, only=only)
        for problem in (p for report in reports for p in report.problems):
            print(f"warning: {problem}", flush=True)
        english = sum(report.english for report in reports)
        if strict and english:
            print(f"[build] {lang.seg}: STRICT=1 and {english} tutorial passage(s) would be shown in English",
                  flush=True)
            failed.append(lang.seg)
            continue
        command = sphinx_args(settings, lang, src, noplot)
        up_to_date = UpToDate(tree, lang, command, environment, only)
        if up_to_date:
            print(f"[build] {lang.seg}: up to date", flush=True)
            continue
        up_to_date.forget()
        todo.append((lang, command, up_to_date))
    if todo:
        _preload(noplot)
        logs = tree.logs
        logs.mkdir(parents=True, exist_ok=True)
        # A fresh fork per language (maxtasksperchild=1): Sphinx keeps global state per process.
        context = multiprocessing.get_context("fork")
        workers = min(len(todo), settings.jobs)
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
    write_root_index(tree.html, langs)
    if failed:
        raise Failed(f"[build] failed: {' '.join(failed)} (see the errors above)")
    write_build_info(tree.html, settings.version, langs, executed=not noplot if executed is None else executed)


def not_current(tree, langs):
    """Units whose merged output sphinx-gallery would run again: no run, or one of another source or environment."""
    environment = environment_fingerprint()
    missing = []
    for lang in langs:
        for src_dir, path in tutorial_sources():
            target = tree.gallery_target(lang, src_dir, path)
            stamp = read_stamp(target)
            staged = tree.staged_source(lang, src_dir, path)
            if not (target.exists() and md5sum_is_current(target, mode="t") and stamp
                    and not stamp_problems(stamp, source_digest(staged), environment)):
                missing.append(shards.unit_key(lang, src_dir, path))
    return missing


def assemble(settings, shard_builddirs):
    """Render the site once from the shards' executed outputs, executing nothing, and validate it."""
    tree, langs = settings.tree, settings.langs
    for lang in langs:
        stage(tree, lang)
    merged = shards.merge(shard_builddirs, tree.root, langs)
    print(f"[assemble] {len(merged)} executed tutorial run(s) from {len(shard_builddirs)} shard(s)", flush=True)
    missing = not_current(tree, langs)
    if missing:
        raise Failed("[assemble] refusing to execute anything here; no current shard output for:\n  "
                          + "\n  ".join(missing))
    # Every output is current, so sphinx-gallery's cache executes nothing: the same build as without shards.
    html(settings, executed=True)
    problems = checks.check_stamps(tree.html, langs) + checks.check_links(tree.html)
    if problems:
        print("\n".join(problems))
        raise Failed(f"[assemble] the assembled site does not validate ({len(problems)} problem(s))")
    print(f"[assemble] {tree.html}: every tutorial executed, every language present, every link whole")


def write_build_info(htmldir, name, langs, executed):
    """What the publish step needs to know about this build: its version entry."""
    info = {
        "name": name, "label": name, "release": versions.is_release(name),
        "torch": installed_version("torch"), "languages": [lang.seg for lang in langs],
        "built": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "path": f"{name}/",
        "executed": executed,
    }
    Path(htmldir, "build.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")

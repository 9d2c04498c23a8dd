"""Build the site: stage each language's sources, run Sphinx on them, link the languages.

    python -m tutorials_site.build html [--noplot] [--builddir DIR]

Each language gets its own Sphinx source tree under <builddir>/src/<seg>/ (the
hand-written pages and the tutorial folders, linked in) and its own output
under <builddir>/html/<seg>/, so that sphinx-gallery's outputs and caches of
one language never mix with another's.
"""

import argparse
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from . import languages
from .fingerprint import environment_fingerprint
from .layout import GALLERIES, PAGES, ROOT

# Besides the staged sources and the environment fingerprint (conf.py, this
# package, installed versions), what a build reads from the project root.
CONF_INPUTS = ("_templates", "_static")


def stage(builddir, lang):
    """Link the sources a language's build reads into <builddir>/src/<seg>/."""
    src = Path(builddir, "src", lang.seg)
    src.mkdir(parents=True, exist_ok=True)
    for name in (*PAGES, *GALLERIES):
        link, target = src / name, ROOT / name
        if link.is_symlink() and link.resolve() == target.resolve():
            continue
        if link.is_symlink() or link.is_file():
            link.unlink()
        link.symlink_to(target)
    return src


def sphinx_command(builddir, lang, src, noplot):
    command = [
        sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
        "-c", str(ROOT),
        "-d", str(Path(builddir, "doctrees", lang.seg)),
        "-D", f"language={lang.code}",
    ]
    if noplot:
        command += ["-D", "plot_gallery=0"]
    return command + [str(src), str(Path(builddir, "html", lang.seg))]


def _files(path):
    path = Path(path)
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]


def inputs_digest(command):
    """A digest of everything a language's build reads: when it is unchanged, so is the output."""
    digest = hashlib.sha256("\0".join(command[1:]).encode())
    digest.update(environment_fingerprint().encode())
    for name in (*PAGES, *GALLERIES, *CONF_INPUTS):
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

    def __init__(self, builddir, lang, command):
        self.record = Path(builddir, "doctrees", lang.seg, "inputs.sha256")
        self.outdir = Path(command[-1])
        self.digest = inputs_digest(command)

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


ROOT_INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>PyTorch Tutorials</title>
<meta http-equiv="refresh" content="0; url={seg}/index.html">
<link rel="canonical" href="{seg}/index.html">
</head>
<body><p><a href="{seg}/index.html">PyTorch Tutorials</a></p></body>
</html>
"""


def write_root_index(htmldir, langs):
    Path(htmldir, "index.html").write_text(ROOT_INDEX.format(seg=langs[0].seg))


def html(builddir, noplot=False):
    langs = languages.selected()
    failed = []
    for lang in langs:
        started = time.perf_counter()
        command = sphinx_command(builddir, lang, stage(builddir, lang), noplot)
        up_to_date = UpToDate(builddir, lang, command)
        if up_to_date:
            print(f"[build] {lang.seg}: up to date", flush=True)
            continue
        up_to_date.forget()
        print(f"[build] {lang.seg}: sphinx-build{' (no execution)' if noplot else ''}", flush=True)
        if subprocess.call(command, cwd=ROOT):
            failed.append(lang.seg)
            continue
        up_to_date.remember()
        print(f"[build] {lang.seg}: done in {time.perf_counter() - started:.1f} s", flush=True)
    write_root_index(Path(builddir, "html"), langs)
    if failed:
        sys.exit(f"[build] failed: {' '.join(failed)} (see the errors above)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tutorials_site.build")
    parser.add_argument("target", choices=["html"])
    parser.add_argument("--noplot", action="store_true", help="build without executing tutorials")
    parser.add_argument("--builddir", default=os.environ.get("BUILDDIR", ROOT / "_build"))
    args = parser.parse_args(argv)
    html(Path(args.builddir).resolve(), noplot=args.noplot)


if __name__ == "__main__":
    main()

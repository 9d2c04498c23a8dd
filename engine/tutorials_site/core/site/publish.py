"""Publish a built version into a published tree (a gh-pages checkout, or docs/).

Adds or replaces that one version: every other version stays byte for byte as
it was. The build is validated first (every tutorial executed from the current
sources, every language there, every internal link whole) and refused
otherwise, leaving the target untouched. A corrupt versions.json in the target
is reported and left alone.

Every step leaves a tree that serves: the new version is copied beside the
tree, then swapped in with one rename (an atomic exchange where the old one
existed), stable/ is a link to the stable version's folder (replaced by one
rename), versions.json and the site files are replaced by renames of complete
files, and what was replaced is deleted last. A publish killed anywhere leaves the previous tree (or the new one) whole; its leftovers,
`.publish-*` folders and the temporary of a site file, are removed by the next
publish.
"""

import contextlib
import ctypes
import fcntl
import html
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from .. import languages, project
from ..errors import SiteError
from ..files import LEFTOVERS, write_atomically
from ..runs.records import BuildInfo
from . import checks, versions
from .site_pages import REDIRECT_MARK, chooser_page, not_found_page, redirect_page

STAGING = ".publish-"


class PublishError(SiteError):
    """A build that may not be published, or a target it may not be published into."""


def validate(site: project.Project, htmldir: Path) -> BuildInfo:
    """The build.json of SITE's build that may be published; PublishError saying why not otherwise."""
    info = checks.whole_build(htmldir)
    if isinstance(info, str):
        raise PublishError(f"refusing to publish {info}")
    versions.check_name(info.name)
    problems = []
    if not info.executed:
        problems.append("built without executing the tutorials (html-noplot)")
    site_languages = site.languages.all
    missing = [lang.seg for lang in site_languages if lang.seg not in info.languages
               or not Path(htmldir, lang.seg, "index.html").exists()]
    if missing:
        problems.append(f"language(s) missing: {' '.join(missing)}")
    present = [lang for lang in site_languages if Path(htmldir, lang.seg).is_dir()]
    problems += checks.check_stamps(site, htmldir, present) + checks.check_links(htmldir)
    if problems:
        raise PublishError(f"refusing to publish {htmldir} as {info.name}:\n  " + "\n  ".join(problems))
    return info


def _exchange(a: Path, b: Path) -> None:
    """Swap two directories in one step (Linux renameat2 RENAME_EXCHANGE)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if hasattr(libc, "renameat2"):
        if libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0:
            return
        raise OSError(ctypes.get_errno(), f"cannot exchange {a} and {b}")
    # Elsewhere: two renames, with a moment in between where `b` is missing.
    parked = Path(f"{a}.old")
    os.rename(b, parked)
    os.rename(a, b)
    os.rename(parked, a)


def _install(source: Path, target: Path, pages: Path) -> None:
    """Copy `source` to the directory `target` inside `pages`, replacing it in one step."""
    staged = pages / f"{STAGING}{target.name}"
    shutil.rmtree(staged, ignore_errors=True)
    # A build's own versions.json serves it as a local preview; a published tree has one, at its root.
    shutil.copytree(source, staged, ignore=lambda folder, names: ["versions.json"] if Path(folder) == Path(source) else [])
    if target.exists():
        _exchange(staged, target)  # `staged` now holds the previous version, deleted at the end
    else:
        os.rename(staged, target)


def _link_stable(pages: Path, stable: str) -> None:
    """stable/ as a relative link to the stable version's folder, never a second copy of its files (GitHub Pages
    serves a link to a folder of the site, with the .nojekyll file every publish writes). A tree published
    before, with stable/ a folder of its own, gets the link in one exchange; the folder is deleted at the end."""
    link = pages / "stable"
    if link.is_symlink() and os.readlink(link) == stable:
        return
    staged = pages / f"{STAGING}stable"
    os.symlink(stable, staged)
    if link.is_dir() and not link.is_symlink():
        _exchange(staged, link)
    else:
        os.rename(staged, link)  # rename(2) replaces a link (or nothing) in one step


def site_url(site: project.Project) -> str:
    """conf.py's tutorials_site_url, ending in one slash."""
    url: str = site.conf.get("tutorials_site_url") or ""
    return url.rstrip("/") + "/"


def _sitemap(pages: Path, url: str, site: languages.SiteLanguages) -> str:
    """Every page of the stable version, where search engines should know it from (a release's canonical address:
    versions.published_url), with its other languages as alternates."""
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml"'
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<urlset {ns}>"]
    base = pages / "stable"
    by_lang = {lang: base / lang.seg for lang in site.all if (base / lang.seg).is_dir()}
    for lang, directory in by_lang.items():
        for page in sorted(directory.rglob("*.html")):
            relative = page.relative_to(directory).as_posix()
            if relative.startswith(("_", "genindex", "search")) or _is_redirect(page):
                continue
            lines.append(f"<url><loc>{html.escape(url + 'stable/' + lang.seg + '/' + relative)}</loc>")
            present = [other for other, other_dir in by_lang.items() if (other_dir / relative).exists()]
            for hreflang, other in languages.alternates(present, site.source):  # as the pages say them
                href = html.escape(url + "stable/" + other.seg + "/" + relative)
                lines.append(f'  <xhtml:link rel="alternate" hreflang="{hreflang}" href="{href}"/>')
            lines.append("</url>")
    lines.append("</urlset>")
    return "\n".join(lines) + "\n"


def _is_redirect(page: Path) -> bool:
    """Whether PAGE is a redirect page, the engine's (site_pages.redirect_page) or an extension's
    (sphinx-reredirects': a refresh and nothing else)."""
    with open(page, "rb") as file:
        head = file.read(1024).decode("utf-8", "replace")
    return REDIRECT_MARK in head or ('http-equiv="refresh"' in head and "<body" not in head)


def root_addresses(site: project.Project, manifest: versions.Manifest) -> tuple[str, languages.Language] | None:
    """conf.py's tutorials_root_version and tutorials_root_language: the version and language whose pages the
    site's old addresses (`/<page>`) named; None where it sets none. PublishError where they name none of the
    published versions or the site's languages."""
    version = str(site.conf.get("tutorials_root_version") or "")
    if not version:
        return None
    code = str(site.conf.get("tutorials_root_language") or "") or site.languages.source.code
    names = {"stable", *(entry.name for entry in manifest.versions)}
    lang = next((lang for lang in site.languages.all if lang.code == code), None)
    if version not in names or lang is None:
        raise PublishError(f"conf.py: tutorials_root_version {version!r} and tutorials_root_language {code!r}: "
                           f"a version of the published tree ({', '.join(sorted(names))}) and a language of the site "
                           f"({', '.join(lang.code for lang in site.languages.all)})")
    return version, lang


def old_addresses(site: project.Project, pages: Path, manifest: versions.Manifest, url: str) -> dict[Path, str]:
    """{address under PAGES: its redirect page} for each page of the root version and language (root_addresses),
    at the address it had before the site was versioned, sending its reader to it there; addresses the tree
    keeps for itself (a version's folder, a language's, the site's own files) stay its own."""
    root = root_addresses(site, manifest)
    if root is None:
        return {}
    version, lang = root
    folder = pages / version / lang.seg
    name = next((entry.name for entry in manifest.versions if (pages / entry.name).resolve() == folder.parent.resolve()),
                version)  # stable's release: its pages' addresses are stable's
    reserved = {"stable", "index.html", *versions.RESERVED, *(entry.name for entry in manifest.versions),
                *(other.seg for other in site.languages.all)}
    found = {}
    for page in sorted(folder.rglob("*.html")):
        relative = page.relative_to(folder)
        if relative.parts[0] in reserved or relative.parts[0].startswith(("_", ".")) or _is_redirect(page):
            continue
        target = "../" * (len(relative.parts) - 1) + f"{version}/{lang.seg}/{relative.as_posix()}"
        found[pages / relative] = redirect_page(target, versions.published_url(url, name, lang.seg, relative.as_posix()))
    return found


def _write_old_addresses(pages: Path, found: dict[Path, str], manifest: versions.Manifest) -> None:
    """Write the redirect pages FOUND (old_addresses), and remove those an earlier publish wrote that no page
    needs any more; never anything in a version's folder."""
    versions_here = {"stable", *(entry.name for entry in manifest.versions)}
    for entry in pages.iterdir():
        if entry.name in versions_here or entry.name.startswith(".") or entry.is_symlink():
            continue
        for page in ([entry] if entry.is_file() else sorted(entry.rglob("*.html"))):
            if page.suffix == ".html" and page not in found and REDIRECT_MARK in page.read_text(errors="replace")[:1024]:
                page.unlink()
    for path, text in found.items():
        write_atomically(path, text)


def check_target(pages: Path, root: Path) -> None:
    """A publish target is a folder outside the project at ROOT (its docs/ excepted), or a new one."""
    resolved = pages.resolve()
    if resolved.is_relative_to(root.resolve()) and resolved != (root / "docs").resolve():
        raise PublishError(f"PAGES={pages}: inside the project ({root}); "
                           "publish into its docs/ or a gh-pages checkout outside it")
    if pages.exists() and not pages.is_dir():
        raise PublishError(f"PAGES={pages}: not a folder")


def check_contents(pages: Path) -> None:
    """The target holds a published tree (a valid versions.json), or nothing yet. Checked under the lock only:
    a publish in progress leaves the tree without its versions.json for a moment."""
    if not (pages / "versions.json").exists() and any(entry.name != ".git" for entry in pages.iterdir()):
        raise PublishError(f"PAGES={pages}: not empty and not a published tree (no versions.json); "
                           "give an empty folder or a gh-pages checkout")


@contextlib.contextmanager
def _locked(pages: Path) -> Iterator[None]:
    """One publish at a time into a tree: the next one waits, then publishes on top."""
    fd = os.open(pages, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def publish(site: project.Project, htmldir: Path | str, pages: Path | str) -> versions.Manifest:
    """Publish SITE's build in HTMLDIR into the tree at PAGES (see above); returns the new versions.json."""
    htmldir, pages = Path(htmldir), Path(pages)
    check_target(pages, site.root)
    info = validate(site, htmldir)
    pages.mkdir(parents=True, exist_ok=True)
    with _locked(pages):
        return _publish_locked(site, htmldir, pages, info)


def _publish_locked(site: project.Project, htmldir: Path, pages: Path, info: BuildInfo) -> versions.Manifest:
    check_target(pages, site.root)  # again: another publish may have changed it while we waited
    check_contents(pages)
    manifest_path = pages / "versions.json"
    current = versions.load(manifest_path)  # a corrupt one stops us here, untouched
    # From a publish that was killed (its copies, a site file it was writing): none runs but us.
    for leftover in [*pages.glob(f"{STAGING}*"), *pages.glob(LEFTOVERS)]:
        shutil.rmtree(leftover) if leftover.is_dir() and not leftover.is_symlink() else leftover.unlink()

    name = info.name
    new = versions.manifest([e for e in current.versions if e.name != name] + [info.entry()])
    root_addresses(site, new)  # conf.py's, refused before anything changes
    _install(htmldir, pages / name, pages)
    stable = new.stable
    assert stable is not None  # the versions include the one just added
    _link_stable(pages, stable)
    write_atomically(manifest_path, versions.manifest_text(new), durable=True)

    url = site_url(site)
    langs = site.languages
    stable_langs = [lang for lang in langs.all if (pages / "stable" / lang.seg).is_dir()]
    write_atomically(pages / "index.html",
                     chooser_page(site.conf, stable_langs, langs.source, "stable/",
                                  canonical=f"{url}stable/{langs.source.seg}/index.html", site=url), durable=True)
    write_atomically(pages / "404.html", not_found_page(site.conf, url, stable_langs), durable=True)
    write_atomically(pages / "sitemap.xml", _sitemap(pages, url, langs), durable=True)
    _write_old_addresses(pages, old_addresses(site, pages, new, url), new)
    write_atomically(pages / "robots.txt", f"User-agent: *\nAllow: /\nSitemap: {url}sitemap.xml\n", durable=True)
    write_atomically(pages / ".nojekyll", "", durable=True)

    for leftover in pages.glob(f"{STAGING}*"):  # the versions that were replaced
        shutil.rmtree(leftover)
    return new

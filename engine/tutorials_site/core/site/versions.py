"""Versions: the name of the one being built, the published list (versions.json), and the pages' view of it.

A version is named `X.Y` when HEAD is tagged vX.Y or vX.Y.Z, `main` on the
main branch, the branch name otherwise; VERSION overrides. A name matching
X.Y is a release. The published tree lists its versions in versions.json:
releases newest first, then `main`, then other branches; `stable` is the newest
release (`main` while there is none).

Pages do not trust the list they were built with: served over http(s) they read
versions.json at the site root, so old pages learn of new releases; opened from
disk they use the list the build was given (sphinxext.versions).
"""

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packaging.version import Version

from .. import git, languages
from ..errors import SiteError
from ..runs.fingerprint import installed_version
from ..runs.records import BUILD_RECORD, BuildInfo, RecordError, VersionEntry, from_dict
from ..runs.stamping import now

_TAG = re.compile(r"^v(\d+)\.(\d+)(?:\.\d+)?$")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
RELEASE = re.compile(r"^(\d+)\.(\d+)$")
RESERVED = {"stable", "versions.json", "index.html", "404.html", "sitemap.xml", "robots.txt"}


ENTRY_KEYS = tuple(field.name for field in dataclasses.fields(VersionEntry))  # in declaration order


@dataclasses.dataclass(frozen=True)
class Manifest:
    """versions.json: the stable version's name (None on a site with no version) and the versions, in order."""

    stable: str | None
    versions: tuple[VersionEntry, ...]

    def to_dict(self) -> dict[str, Any]:
        """As versions.json holds it (and a page embeds it)."""
        return {"stable": self.stable, "versions": [dataclasses.asdict(entry) for entry in self.versions]}


class VersionsError(SiteError):
    """A version name or a versions.json we must not use: the message says which and why."""


def check_name(name: str) -> str:
    """NAME, when it can name a version's folder of the published tree; VersionsError otherwise."""
    if not _SAFE.match(name) or ".." in name or name in RESERVED:
        raise VersionsError(f"VERSION: {name!r} is not a usable version name (letters, digits, . _ -)")
    return name


def current(root: Path, requested: str = "") -> str:
    """`requested` (VERSION) if given, else, in the git repository of the project at ROOT, `X.Y` for a commit tagged
    vX.Y[.Z], else the branch name, else `dev`."""
    name = requested.strip()
    if not name:
        for tag in git.run(root, "tag", "--points-at", "HEAD").split():
            match = _TAG.match(tag)
            if match:
                name = f"{match[1]}.{match[2]}"
                break
    if not name:
        name = git.run(root, "rev-parse", "--abbrev-ref", "HEAD")
        name = "" if name == "HEAD" else name.replace("/", "-")
    return check_name(name or "dev")


def is_release(name: str) -> bool:
    """Whether NAME is a release's: X.Y."""
    return bool(RELEASE.match(name))


def folder_url(site_url: str, folder: str, seg: str, page: str) -> str:
    """The absolute URL of a page (or file) of a language in a folder of the published tree."""
    return f"{site_url.rstrip('/')}/{folder}/{seg}/{page}"


def published_url(site_url: str, name: str, seg: str, page: str) -> str:
    """The address of a page of version `name`, as its canonical link, its hreflang alternates, its og:url and the
    sitemap name it: a release's under stable/ (where search engines should know it from, whichever release it
    is in), another version's under its own folder (unindexed)."""
    return folder_url(site_url, "stable" if is_release(name) else name, seg, page)


def order(entries: Sequence[VersionEntry]) -> list[VersionEntry]:
    """Releases newest first (as versions compare: 1.10 after 1.9), then main, then other branches by name."""
    releases = sorted((e for e in entries if is_release(e.name)), key=lambda e: Version(e.name), reverse=True)
    branches = sorted((e for e in entries if not is_release(e.name)), key=lambda e: (e.name != "main", e.name))
    return releases + branches


def stable_of(entries: Sequence[VersionEntry]) -> str | None:
    """The stable version: the newest release, else main, else the first version; None without any."""
    releases = [e.name for e in order(entries) if e.release]
    if releases:
        return releases[0]
    names = [e.name for e in entries]
    return "main" if "main" in names else (names[0] if names else None)


def manifest(entries: Sequence[VersionEntry]) -> Manifest:
    """versions.json's contents for ENTRIES, in the published order."""
    ordered = order(entries)
    return Manifest(stable_of(ordered), tuple(ordered))


def as_built(published: Sequence[VersionEntry], name: str) -> Manifest:
    """The versions a build of `name` knows: those published before it, and itself (its pages embed
    this list, and a local build serves it as its versions.json)."""
    entries = [e for e in published if e.name != name]
    entries.append(VersionEntry(name=name, label=name, release=is_release(name), path=f"{name}/", languages=(),
                                torch="", built=""))
    return manifest(entries)


def load(path: Path | str) -> Manifest:
    """The versions.json at `path`; a missing file is an empty site, anything unreadable an error."""
    path = Path(path)
    if not path.exists():
        return manifest([])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("versions"), list):
            raise ValueError("no list of versions")
        entries = tuple(from_dict(VersionEntry, v, f"versions[{i}]") for i, v in enumerate(data["versions"]))
        for entry in entries:  # pages link to these paths: each version's own folder, nothing else
            check_name(entry.name)
            if entry.path != f"{entry.name}/":
                raise ValueError(f"version {entry.name!r} has path {entry.path!r}, not {entry.name + '/'!r}")
        if data.get("stable") not in {e.name for e in entries} | ({None} if not entries else set()):
            raise ValueError(f"stable {data.get('stable')!r} is not one of the versions")
    except (OSError, UnicodeDecodeError, ValueError, RecordError, VersionsError) as error:
        raise VersionsError(f"{path}: unreadable or corrupt versions.json ({error}); "
                            "fix or remove it by hand, it was not changed") from None
    return Manifest(data.get("stable"), entries)


def manifest_text(manifest: Manifest) -> str:
    """A versions.json's text, as a published tree and a build's HTML folder both hold it."""
    return json.dumps(manifest.to_dict(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def write_as_built(htmldir: Path, published: Sequence[VersionEntry], name: str) -> None:
    """A build's own versions.json (as_built): pages ask the site root for it, and served from the build's
    HTML folder, that folder is the root."""
    Path(htmldir, "versions.json").write_text(manifest_text(as_built(published, name)))


def write_build_info(htmldir: Path, name: str, langs: Sequence[languages.Language], executed: bool,
                     partial: str = "") -> None:
    """What the publish step needs to know about this build: its version entry; `partial`: the TUTORIALS
    it executed alone (`tutorials-site check` and `tutorials-site publish` refuse such a build)."""
    BuildInfo(name=name, label=name, release=is_release(name), torch=installed_version("torch"),
              languages=tuple(lang.seg for lang in langs), built=now(),
              path=f"{name}/", executed=executed, partial=partial).write(Path(htmldir, BUILD_RECORD))

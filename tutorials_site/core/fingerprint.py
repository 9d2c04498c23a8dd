"""What a tutorial's output depends on besides its own source.

sphinx-gallery re-runs a tutorial only when the tutorial file changes. The
environment fingerprint covers the rest: conf.py, this package, and the
installed versions of everything requirements.txt names (torch first of all),
read with importlib.metadata so that no build pays for `import torch`.

It covers what Python runs at every start-up too: each site-packages folder's
`.pth` files and any `sitecustomize` / `usercustomize` module, which a
tutorial (or anything else) could have added to the environment.

It describes software, not hardware: Python's major.minor version and release
versions without their local label (torch 2.13.0+cpu and 2.13.0+cu128 are both
2.13.0), so that a GPU runner's outputs are current on the CPU runner that
assembles the site from them. Where a run happened is in its provenance.
"""

import hashlib
import re
import site
import sys
from importlib import metadata
from importlib.machinery import PathFinder
from pathlib import Path

from .layout import ROOT

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # tutorials_site/, every part of it


def requirement_names(requirements):
    names = []
    for line in Path(requirements).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.append(re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0])
    return names


def installed_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def site_folders() -> list[Path]:
    """The site-packages folders a Python started as this one processes at start-up (their .pth files)."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [Path(folder) for folder in dict.fromkeys(folders) if Path(folder).is_dir()]


def startup_hooks() -> list[Path]:
    """What every Python start-up here runs besides the interpreter: .pth files, sitecustomize, usercustomize."""
    hooks = [path for folder in site_folders() for path in sorted(folder.glob("*.pth"))]
    for name in ("sitecustomize", "usercustomize"):
        spec = PathFinder.find_spec(name)  # found as at start-up, without importing it
        if spec is not None and spec.has_location:
            hooks.append(Path(spec.origin))
    return hooks


def environment_fingerprint(root=ROOT):
    digest = hashlib.sha256()

    def add(label, data):
        digest.update(label.encode() + b"\0" + data + b"\0")

    add("python", f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    add("conf.py", (Path(root) / "conf.py").read_bytes())
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        add(path.relative_to(PACKAGE_DIR).as_posix(), path.read_bytes())
    for name in requirement_names(Path(root) / "requirements.txt"):
        add(name, installed_version(name).split("+", 1)[0].encode())
    for path in startup_hooks():
        add(path.name, path.read_bytes())
    return digest.hexdigest()


def source_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

"""The name of the version being built: VERSION, else what git says about HEAD."""

import os
import re
import subprocess

from .layout import ROOT

_TAG = re.compile(r"^v(\d+)\.(\d+)(?:\.\d+)?$")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _git(root, *args):
    result = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() if result.returncode == 0 else ""


def current(root=ROOT):
    """`X.Y` for a commit tagged vX.Y[.Z], else the branch name (`main`), else `dev`."""
    name = os.environ.get("VERSION", "").strip()
    if not name:
        for tag in _git(root, "tag", "--points-at", "HEAD").split():
            match = _TAG.match(tag)
            if match:
                name = f"{match[1]}.{match[2]}"
                break
    if not name:
        name = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
        name = "" if name == "HEAD" else name.replace("/", "-")
    name = name or "dev"
    if not _SAFE.match(name) or ".." in name:
        raise SystemExit(f"VERSION: {name!r} is not a usable version name (letters, digits, . _ -)")
    return name

"""What git says of the project's work tree: the one way the package asks it."""

import subprocess
from pathlib import Path


def run(root: Path | str, *args: str) -> str:
    """The output of `git ARGS` in `root`, stripped; "" where git fails (not a repository, no commit yet)."""
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return result.stdout.strip() if result.returncode == 0 else ""

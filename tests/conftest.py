"""What the site's tests share: a copy of the site to build, the engine's command, and what torch sees here."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]  # the site: this repository's root
SITE_COMMAND = Path(sys.executable).parent / "tutorials-site"  # the engine's command, in this environment
# What a copy of the site needs to build: the site's files, not the engine, its tests, git or what builds made.
NOT_THE_SITE = shutil.ignore_patterns(".git", ".venv", "_build", "docs", "engine", "tests", "__pycache__",
                                      ".pytest_cache", ".ruff_cache", ".mypy_cache", "_kept")


def site_copy(target: Path) -> Path:
    """The site copied to TARGET, to build without touching the repository."""
    shutil.copytree(ROOT, target, ignore=NOT_THE_SITE)
    return target


# The runs a build of the site made, which the builds of copies below take instead of executing the same scripts
# again (a run that is not current is executed): REUSE where given (CI's .ci/run gives those of `make docs`), else
# the site's own build folder where `make html`, the README's first command, left runs. No other command of these
# tests takes it (at the root, REUSE would be its own build folder).
_BUILT = ROOT / (os.environ.get("BUILDDIR") or "_build")
_KEPT = os.environ.pop("REUSE", "") or (str(_BUILT) if (_BUILT / "runs").is_dir() else "")
REUSE = {"REUSE": _KEPT} if _KEPT else {}


def build(project: Path, builddir: Path, **env: str) -> subprocess.CompletedProcess:
    """`tutorials-site html` of the site at PROJECT into BUILDDIR (every language unless ENV says otherwise)."""
    return subprocess.run([str(SITE_COMMAND), "html", "--builddir", str(builddir)], cwd=project, capture_output=True,
                          text=True, env={**os.environ, "LANGUAGES": "", **REUSE, **env})


PARALLEL = "beginner_source/parallel"  # the "Parallel and distributed training" section


@pytest.fixture(scope="session")
def parallel_site(tmp_path_factory) -> Path:
    """A copy of the site built in every language, executing the parallel section's tutorials alone, on the CPU
    (CUDA hidden: two gloo ranks each); its build folder. In CI, the runs `make docs` made (REUSE) are taken."""
    project = site_copy(tmp_path_factory.mktemp("parallel") / "project")
    result = build(project, project / "_build", TUTORIALS=f"{PARALLEL}/*", CUDA_VISIBLE_DEVICES="")
    assert result.returncode == 0, result.stdout + result.stderr
    return project / "_build"


@pytest.fixture(scope="session")
def machine():
    """What torch reports on this machine, as a tutorial's process sees it: .gpus, .device and .cuda."""
    probe = ("import json, torch; gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0; "
             "print(json.dumps([gpus, torch.cuda.get_device_name(0) if gpus else 'CPU', torch.version.cuda]))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    gpus, device, cuda = json.loads(found)
    return SimpleNamespace(gpus=gpus, device=device, cuda=cuda)

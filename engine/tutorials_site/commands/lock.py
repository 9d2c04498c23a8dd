"""`make lock` and the venv's install step: every torch-family package in the build of torch the lock is for.

python -m tutorials_site.commands.lock compile
    run by `make lock` with pip-tools' venv's Python, at the project's root: requirements-{cpu,cuda,test}.lock
    from requirements.txt and requirements-test.txt, the CPU lock with the CPU build of each family member
    (core.runs.torch_builds), the CUDA lock with PyPI's; a lock holding another build is refused after.
python -m tutorials_site.commands.lock install LOCK COMMAND...
    run by the venv's install step with the venv's Python: removes the family members installed in another
    build than LOCK pins, then runs COMMAND (pip installing LOCK) with the pages of the CPU wheels it needs.

TORCH_CPU_WHEELS (environment, the Makefile's default): where pip finds torch's CPU wheel, and beside it its
family's (core.runs.torch_builds.wheel_pages). Standard library only, like core.runs.torch_builds: the install step
runs before anything else is installed.
"""

import argparse
import contextlib
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

from ..core.errors import Failed, SiteError
from ..core.layout import ROOT
from ..core.runs import torch_builds
from ..core.runs.torch_builds import CPU, Pin

LOCKS = {CPU: "requirements-cpu.lock", None: "requirements-cuda.lock"}  # {torch's local label: its lock}
TEST_LOCK = "requirements-test.lock"
PIP_COMPILE = ("-m", "piptools", "compile", "-q", "--generate-hashes", "--allow-unsafe", "--strip-extras",
               "--no-emit-find-links", "--no-emit-index-url", "--no-emit-trusted-host")


def _pip(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", *args]


def offered(requirement: str, *options: str) -> bool:
    """Whether pip finds a file for REQUIREMENT, with its own configuration (its indexes, find-links) and
    OPTIONS: a dry run without its dependencies."""
    command = _pip("install", "-q", "--dry-run", "--no-deps", *options, requirement)
    return subprocess.run(command, capture_output=True).returncode == 0


def cpu_find_links(pins: Sequence[Pin], torch_wheels: str, source: str) -> list[str]:
    """`--find-links PAGE` for the CPU wheels of PINS (read from SOURCE) that pip's configuration does not
    offer; only those: a find-links page is fetched again for every package pip looks up, so an unreachable
    one would cost retries each time.

    Raises SiteError, before anything is resolved, for a pin whose CPU wheel is found on neither.
    """
    missing = [pin for pin in pins if not offered(torch_builds.cpu_requirement(pin))]
    pages = torch_builds.wheel_pages(torch_wheels, [pin.name for pin in missing]) if missing and torch_wheels else []
    options = [option for page in pages for option in ("--find-links", page)]
    unfound = [pin for pin in missing if not pages or not offered(torch_builds.cpu_requirement(pin), *options)]
    if unfound:
        raise SiteError("\nerror: ".join(
            f"{source}:{pin.line}: {pin.name}=={pin.version}: pip finds no {torch_builds.cpu_requirement(pin)} wheel, neither "
            f"in its configuration nor at {' '.join(pages) or 'TORCH_CPU_WHEELS (empty)'}: point TORCH_CPU_WHEELS at "
            "PyTorch's CPU wheels (torch's page of its CPU index, or a folder holding them all)" for pin in unfound))
    return options


def _pip_compile(root: Path, *args: str, **env: str) -> None:
    environment = {**os.environ, "CUSTOM_COMPILE_COMMAND": "make lock", **env}
    if subprocess.run([sys.executable, *PIP_COMPILE, *args], cwd=root, env=environment).returncode:
        raise Failed(f"lock: pip-compile {' '.join(args)} failed (see above)")


def compile_locks(root: Path, torch_wheels: str) -> None:
    """ROOT's three lock files from its requirements.txt and requirements-test.txt, with pip-tools (this
    Python's); pins the edit does not concern are kept (delete a lock to re-resolve it all).

    Raises SiteError before resolving anything where a family member pinned in requirements.txt has no
    CPU wheel pip finds (cpu_find_links), and after, where the CPU lock holds a member in another build
    than the CPU one (one that came in unpinned) or the CUDA lock one in another than PyPI's.
    """
    cpu_lock, cuda_lock = LOCKS[CPU], LOCKS[None]
    wanted = torch_builds.family_pins(root / "requirements.txt")
    _pip_compile(root, *cpu_find_links(wanted, torch_wheels, "requirements.txt"), "-o", cpu_lock, "requirements.txt")
    # A blank PIP_FIND_LINKS replaces the configured find-links (pip ignores an empty value), where the CPU
    # wheel of the same version would win; fast-deps reads a wheel's metadata by range requests from an index
    # that serves no metadata files, instead of downloading torch and its CUDA libraries.
    _pip_compile(root, "--pip-args=--use-feature=fast-deps", "-o", cuda_lock, "requirements.txt", PIP_FIND_LINKS=" ")
    _pip_compile(root, "-c", cpu_lock, "-o", TEST_LOCK, "requirements-test.txt")
    errors = [error for build, lock in LOCKS.items() for error in torch_builds.wrong_builds(root, lock, build)]
    if errors:
        raise SiteError("\nerror: ".join(errors))


def _installed(names: Sequence[str]) -> dict[str, str]:
    found = {}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def install(lock: Path, command: Sequence[str], torch_wheels: str) -> int:
    """Run COMMAND, which installs LOCK into this Python's environment, after removing the family members
    installed there in another build than LOCK pins, with the pages of the CPU wheels LOCK pins; its status."""
    pins = torch_builds.family_pins(lock)
    stale = torch_builds.other_builds(pins, _installed([pin.name for pin in pins]))
    if stale:
        subprocess.run(_pip("uninstall", "-q", "-y", *stale), check=True)
    cpu = [pin for pin in pins if pin.label == CPU]
    return subprocess.run([*command, *cpu_find_links(cpu, torch_wheels, str(lock))]).returncode


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] = os.environ) -> None:
    """Run the subcommand the command line names; a SiteError exits with its message and status 1."""
    parser = argparse.ArgumentParser(prog="python -m tutorials_site.commands.lock", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("compile", help="regenerate the three lock files (pip-tools' venv)")
    installing = commands.add_parser("install", help="run COMMAND, which installs LOCK, with the CPU wheels it needs")
    installing.add_argument("lock", type=Path)
    installing.add_argument("install_command", nargs=argparse.REMAINDER, metavar="COMMAND")
    args = parser.parse_args(argv)
    torch_wheels = env.get("TORCH_CPU_WHEELS", "")
    try:
        if args.command == "compile":
            compile_locks(ROOT, torch_wheels)
        else:
            sys.exit(install(args.lock, args.install_command, torch_wheels))
    except SiteError as error:
        sys.exit(str(error) if isinstance(error, Failed) else f"error: {error}")


if __name__ == "__main__":
    main()

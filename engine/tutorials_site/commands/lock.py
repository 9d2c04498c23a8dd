"""`tutorials-site lock` and a venv's install step: every torch-family package in the build of torch the lock is for.

tutorials-site lock (lock_site)
    makes a venv of its own with pip-tools (PIP_TOOLS) and runs `compile` there, at the site's root.
python -m tutorials_site.commands.lock compile
    with pip-tools' venv's Python, at the project's root: requirements-{cpu,cuda}.lock from requirements.txt (and
    requirements-test.lock from requirements-test.txt, where the site has one), the CPU lock with the CPU build of
    each family member (core.runs.torch_builds), the CUDA lock with PyPI's; a lock holding another build is refused
    after. A path requirement (`-e ./engine`, `./my_extension`: a package of the project's own) has no file to hash:
    the lock names it in a comment (PATH_REQUIREMENT) and holds its dependencies, hashed.
python -m tutorials_site.commands.lock install LOCK COMMAND...
    with the venv's Python: removes the family members installed in another build than LOCK pins, runs COMMAND (pip
    installing LOCK) with the pages of the CPU wheels it needs, then installs LOCK's path requirements without their
    dependencies (the lock installed them).

TORCH_CPU_WHEELS (environment, the Makefile's default): where pip finds torch's CPU wheel, and beside it its
family's (core.runs.torch_builds.wheel_pages). Standard library only, like core.runs.torch_builds: the install step
runs before anything else is installed.
"""

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

from ..core.errors import Failed, SiteError
from ..core.runs import torch_builds
from ..core.runs.torch_builds import CPU, Pin

LOCKS = {CPU: "requirements-cpu.lock", None: "requirements-cuda.lock"}  # {torch's local label: its lock}
TEST_LOCK = "requirements-test.lock"
# pip-tools, in the venv `tutorials-site lock` makes for it (the locks' headers name its version).
PIP_TOOLS = ("pip==26.3", "pip-tools==7.6.2")
# How a lock names a path requirement of requirements.txt, installed after the lock without its dependencies.
PATH_REQUIREMENT = "# path requirement, installed after this lock without its dependencies: "
# pip-compile's line for a path requirement: the path made absolute, as a file URL.
_COMPILED_PATH = re.compile(r"^(?:-e )?file://\S+$")
_UNHASHED_WARNING = ("# WARNING: pip install will require the following package to be hashed.",
                     "# Consider using a hashable URL")
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
    environment = {**os.environ, "CUSTOM_COMPILE_COMMAND": "tutorials-site lock", **env}
    if subprocess.run([sys.executable, *PIP_COMPILE, *args], cwd=root, env=environment).returncode:
        raise Failed(f"lock: pip-compile {' '.join(args)} failed (see above)")


def path_requirements(requirements: Path) -> dict[Path, str]:
    """The path requirements of a requirements file (`-e ./engine`, `./tools`), as written, by the folder each
    names (resolved from the file's folder)."""
    found = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        written = line.split(" #", 1)[0].strip()
        target = written.removeprefix("-e").strip()
        if target.startswith((".", "/", "file:")):
            found[(requirements.parent / target.removeprefix("file:")).resolve()] = written
    return found


def _keep_paths_out(lock: Path, paths: dict[Path, str]) -> None:
    """LOCK as pip-compile wrote it, each of its path requirements (an absolute file URL there, which no other
    machine has and no hash covers) replaced by a PATH_REQUIREMENT comment naming it as requirements.txt does."""
    out: list[str] = []
    dropping = False
    for line in lock.read_text(encoding="utf-8").splitlines():
        if _COMPILED_PATH.match(line):
            while out and out[-1].startswith(_UNHASHED_WARNING):
                out.pop()  # pip-compile's warning that pip would want it hashed: it never sees it
            target = Path(line.removeprefix("-e ").removeprefix("file://")).resolve()
            out.append(PATH_REQUIREMENT + paths.get(target, line))
            dropping = True
        elif dropping and line.startswith("    #"):
            continue  # the `# via` lines under it
        else:
            dropping = False
            out.append(line)
    lock.write_text("\n".join(out) + "\n", encoding="utf-8")


def compile_locks(root: Path, torch_wheels: str) -> None:
    """ROOT's lock files from its requirements.txt (and requirements-test.txt, where it has one), with pip-tools (this
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
    paths = path_requirements(root / "requirements.txt")
    for lock in (cpu_lock, cuda_lock):
        _keep_paths_out(root / lock, paths)
    if (root / "requirements-test.txt").is_file():
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
    installed there in another build than LOCK pins, with the pages of the CPU wheels LOCK pins; then LOCK's path
    requirements, without their dependencies (LOCK holds them); the status of the first step that failed, else 0."""
    pins = torch_builds.family_pins(lock)
    stale = torch_builds.other_builds(pins, _installed([pin.name for pin in pins]))
    if stale:
        subprocess.run(_pip("uninstall", "-q", "-y", *stale), check=True)
    cpu = [pin for pin in pins if pin.label == CPU]
    status = subprocess.run([*command, *cpu_find_links(cpu, torch_wheels, str(lock))]).returncode
    paths = [line.removeprefix(PATH_REQUIREMENT).split() for line in lock.read_text(encoding="utf-8").splitlines()
             if line.startswith(PATH_REQUIREMENT)]
    for written in paths if status == 0 else []:
        status = subprocess.run(_pip("install", "-q", "--no-deps", *written), cwd=lock.parent).returncode
        if status:
            break
    return status


def lock_site(root: Path, torch_wheels: str) -> None:
    """`tutorials-site lock`: the site's locks (compile_locks) made by pip-tools in a venv of its own, removed after."""
    if not (root / "requirements.txt").is_file():
        raise SiteError(f"lock: {root / 'requirements.txt'}: no such file; the locks are made from it")
    with tempfile.TemporaryDirectory(prefix="tutorials-lock-") as tools:
        python = Path(tools, "bin", "python")
        subprocess.run([sys.executable, "-m", "venv", tools], check=True)
        if subprocess.run([str(python), "-m", "pip", "install", "-q", *PIP_TOOLS]).returncode:
            raise Failed(f"lock: installing {' '.join(PIP_TOOLS)} failed (see above)")
        # This module needs the standard library only: pip-tools' Python runs it from this package's folder.
        engine = Path(__file__).resolve().parents[2]
        done = subprocess.run([str(python), "-m", "tutorials_site.commands.lock", "compile"], cwd=root,
                              env={**os.environ, "PYTHONPATH": str(engine), "TORCH_CPU_WHEELS": torch_wheels})
    if done.returncode:
        raise Failed("lock: the locks could not be made (see above)")
    print(f"lock: {', '.join(name for name in (*LOCKS.values(), TEST_LOCK) if (root / name).is_file())} "
          f"in {root}")


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] = os.environ) -> None:
    """Run the subcommand the command line names; a SiteError exits with its message and status 1."""
    parser = argparse.ArgumentParser(prog="python -m tutorials_site.commands.lock", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("site", help="the site's locks, made in a venv of pip-tools' own (tutorials-site lock)")
    commands.add_parser("compile", help="regenerate the lock files (in pip-tools' venv)")
    installing = commands.add_parser("install", help="run COMMAND, which installs LOCK, with the CPU wheels it needs")
    installing.add_argument("lock", type=Path)
    installing.add_argument("install_command", nargs=argparse.REMAINDER, metavar="COMMAND")
    args = parser.parse_args(argv)
    torch_wheels = env.get("TORCH_CPU_WHEELS", "")
    try:
        if args.command == "site":
            lock_site(Path.cwd(), torch_wheels)
        elif args.command == "compile":
            compile_locks(Path.cwd(), torch_wheels)  # the project's: where `tutorials-site lock` runs it
        else:
            sys.exit(install(args.lock, args.install_command, torch_wheels))
    except SiteError as error:
        sys.exit(str(error) if isinstance(error, Failed) else f"error: {error}")


if __name__ == "__main__":
    main()

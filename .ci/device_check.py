"""`make device-check` and `make device-bundle`: the site's tutorials built on a machine with NVIDIA GPUs.

device-bundle (on a machine that reaches the package registries) gathers in _device/ what a GPU machine without
network needs besides its own Python, torch and the usual compiled packages (numpy, matplotlib, pillow, psutil...):
  _device/wheels/   the pure-Python wheels of requirements-cpu.lock (Sphinx, sphinx-gallery, the theme, Babel, ...),
                    each checked against the lock's hashes; a package with no such wheel is expected on the machine
  _device/debs/     Debian's bubblewrap, for the tutorials' sandbox where the machine has none
at most BUNDLE_LIMIT bytes in all, which is refused past it.

device-check (on the GPU machine, in a copy of the repository with _device/) says in one line that there is no
GPU where nvidia-smi lists none; else it makes _device/venv (the machine's Python and torch, the bundle's wheels,
the engine), finds the sandbox (the machine's bubblewrap, else the bundle's, else none: said in the summary), builds
every language executing the tutorials the GPUs fit, within DEADLINE seconds: with two GPUs or more, each tutorial
whose `# tutorials-needs:` line asks for no more than there are, a process per GPU over nccl, strict about its needs
(the others skipped, with why); with one GPU, every tutorial on that one (a multi-GPU tutorial's one process, as on
a laptop with one GPU: its page says it was written for more). Then it writes
_device/result/: html/ (the pages), build.log, summary.md (provenance, peak GPU memory per GPU, one rank each,
time per tutorial).

The first two steps need the standard library only (the machine's python3 runs them); the build and the summary run
in _device/venv (`python .ci/device_check.py run`), with the engine.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEVICE = ROOT / "_device"
LOCK = ROOT / "requirements-cpu.lock"
BUNDLE_LIMIT = 60 * 2**20
DEADLINE = 8 * 60  # seconds the whole build may take
FAMILY = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*)$")  # the machine's own, in its own builds
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
NO_GPU = "device-check: no NVIDIA GPU on this machine (nvidia-smi lists none): nothing to check here"


def gpus_here() -> int:
    """How many GPUs nvidia-smi lists (0 where it is missing or fails)."""
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(line.startswith("GPU ") for line in listed.stdout.splitlines()) if listed.returncode == 0 else 0


def locked_pins(lock: Path = LOCK) -> list[tuple[str, str, list[str]]]:
    """(name, version, hashes) of each pin of LOCK, the torch family and its CUDA runtime left out."""
    pins: list[tuple[str, str, list[str]]] = []
    for line in lock.read_text(encoding="utf-8").replace("\\\n", " ").splitlines():
        found = _PIN.match(line.strip())
        if found and not FAMILY.match(found[1].lower()):
            pins.append((found[1], found[2], re.findall(r"--hash=(\S+)", line)))
    return pins


def bundle() -> None:
    """device-bundle: the pure-Python wheels of the lock (hash-checked) and bubblewrap's package, into DEVICE."""
    shutil.rmtree(DEVICE / "wheels", ignore_errors=True)
    shutil.rmtree(DEVICE / "debs", ignore_errors=True)
    (DEVICE / "wheels").mkdir(parents=True)
    (DEVICE / "debs").mkdir()
    expected = []
    for name, version, hashes in locked_pins():
        requirement = DEVICE / "one.txt"
        requirement.write_text(f"{name}=={version} " + " ".join(f"--hash={h}" for h in hashes) + "\n")
        got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                              "--platform", "any", "--python-version", "3.12", "--implementation", "py", "--abi", "none",
                              "--require-hashes", "-r", str(requirement), "-d", str(DEVICE / "wheels")],
                             capture_output=True, text=True)
        if got.returncode:
            expected.append(f"{name}=={version}")
    (DEVICE / "one.txt").unlink(missing_ok=True)
    subprocess.run(["apt-get", "download", "bubblewrap"], cwd=DEVICE / "debs", check=True)
    size = sum(path.stat().st_size for path in DEVICE.rglob("*") if path.is_file() and "venv" not in path.parts)
    (DEVICE / "expected-on-the-machine.txt").write_text("\n".join(expected) + "\n")
    if size > BUNDLE_LIMIT:
        sys.exit(f"device-bundle: {size / 2**20:.1f} MB, over the {BUNDLE_LIMIT // 2**20} MB a device check carries")
    print(f"device-bundle: {DEVICE}: {size / 2**20:.1f} MB; expected on the machine (compiled, no wheel carried): "
          f"{', '.join(expected) or 'nothing'}")


def _sandbox_path() -> tuple[dict[str, str], str]:
    """The environment that finds bubblewrap (the machine's, else the bundle's unpacked), and how it was found."""
    if shutil.which("bwrap"):
        return {}, "the machine's bubblewrap"
    debs = sorted((DEVICE / "debs").glob("bubblewrap_*.deb"))
    if not debs:
        return {"SANDBOX": "off"}, "none (no bubblewrap here and none carried): the tutorials ran without a sandbox"
    unpacked = DEVICE / "bwrap-root"
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(unpacked)], check=True)
    env = {"PATH": f"{unpacked / 'usr' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    works = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
                            "true"], env={**os.environ, **env}, capture_output=True)
    if works.returncode:
        return {"SANDBOX": "off"}, "none (the carried bubblewrap cannot make a sandbox here): ran without one"
    return env, "the carried bubblewrap"


def check() -> None:
    """device-check: one line without a GPU; else the venv, then `run` in it."""
    gpus = gpus_here()
    if not gpus:
        print(NO_GPU)
        return
    venv = DEVICE / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
        wheels = sorted(str(path) for path in (DEVICE / "wheels").glob("*.whl"))
        pip = [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        subprocess.run([*pip, *wheels], check=True)
        subprocess.run([*pip, "--no-build-isolation", "-e", str(ROOT / "engine")], check=True)
    env, sandbox = _sandbox_path()
    done = subprocess.run([str(python), __file__, "run", "--gpus", str(gpus), "--sandbox", sandbox],
                          env={**os.environ, **env})
    sys.exit(done.returncode)


def run(gpus: int, sandbox: str) -> int:
    """In the venv: build the tutorials the GPUs fit, then write the result folder; the build's exit status."""
    from tutorials_site.core.project import Project

    site = Project.read(ROOT)
    chosen, skipped = select(site, gpus)
    result, builddir = DEVICE / "result", DEVICE / "build"
    shutil.rmtree(result, ignore_errors=True)
    result.mkdir(parents=True)
    started = time.monotonic()
    command = [str(Path(sys.executable).parent / "tutorials-site"), "html", "--builddir", str(builddir),
               "--needs", "strict" if gpus >= 2 else "lenient", "--tutorials", " ".join(t.label for t in chosen)]
    with open(result / "build.log", "w") as log:
        try:
            status = subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                    env={**os.environ, "LANGUAGES": ""}, timeout=DEADLINE).returncode if chosen else 0
        except subprocess.TimeoutExpired:
            status = 124
    if (builddir / "html").is_dir():
        shutil.copytree(builddir / "html", result / "html")
    text = summary(site, builddir, gpus, chosen, skipped, sandbox, time.monotonic() - started, status)
    (result / "summary.md").write_text(text, encoding="utf-8")
    print(text)
    return status


def select(site, gpus: int):
    """(the tutorials GPUS fit, [(a tutorial left out, why)]), by each one's `# tutorials-needs:` (see above: one GPU
    fits every tutorial, on that one)."""
    from tutorials_site.core.runs import needs

    chosen, skipped = [], []
    for tutorial in (t for t in site.tutorials if t.executed):
        need = needs.of(site, tutorial)
        if need.gpus <= gpus or gpus == 1:
            chosen.append(tutorial)
        else:
            skipped.append((tutorial, f"needs {needs.describe_gpus(need.gpus)}, this machine has "
                                      f"{needs.describe_gpus(gpus)}"))
    return chosen, skipped


def summary(site, builddir: Path, gpus: int, chosen, skipped, sandbox: str, seconds: float, status: int) -> str:
    """summary.md: the machine, then a row per tutorial (ran, failed, skipped), from the runs' stamps."""
    from tutorials_site.core.layout import BuildTree
    from tutorials_site.core.runs import stamping

    tree = BuildTree(builddir)
    lines = [f"# Device check: {gpus} GPU(s), build {'passed' if status == 0 else f'failed (exit {status})'} "
             f"in {seconds:.0f} s", "", f"Sandbox: {sandbox}.", "",
             "| tutorial | result | seconds | ran on | torch | peak GPU memory per GPU (MB) | peak memory (MB) |",
             "|---|---|---|---|---|---|---|"]
    for tutorial in chosen:
        stamp = stamping.stamp_of(tree.run_dir(tutorial.key))
        if stamp is None:
            lines.append(f"| {tutorial.label} | no run (see build.log) | | | | | |")
            continue
        hardware = stamp.hardware
        ran_on = f"{hardware.device} ({hardware.gpus} GPU)" if hardware.gpus else hardware.device
        peaks = ", ".join(f"{peak:.0f}" for peak in stamp.gpu_peak_mb) or "-"
        lines.append(f"| {tutorial.label} | {'failed' if stamp.failed else 'ran'} | {stamp.seconds:.1f} | {ran_on} | "
                     f"{hardware.torch or '-'}{f' (CUDA {hardware.cuda})' if hardware.cuda else ''} | {peaks} | "
                     f"{stamp.peak_rss_mb:.0f} |")
    lines += [f"| {tutorial.label} | skipped: {why} | | | | | |" for tutorial, why in skipped]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("bundle")
    commands.add_parser("check")
    running = commands.add_parser("run")
    running.add_argument("--gpus", type=int, required=True)
    running.add_argument("--sandbox", required=True)
    args = parser.parse_args(argv)
    if args.command == "bundle":
        bundle()
    elif args.command == "check":
        check()
    else:
        sys.exit(run(args.gpus, args.sandbox))


if __name__ == "__main__":
    main()

"""The sandbox a tutorial runs in: the bubblewrap (`bwrap`) command line, and what the build says without one.

A run sees the whole system read-only (`--ro-bind / /`: the repository, the venv,
the engine, the system's files), with, in this order:

- its own /tmp, /dev (with /dev/shm) and /proc, and an empty, read-only /run
  (no socket of the host's);
- a private HOME: a folder of the run's own at the builder's HOME, so that
  `~/.gitconfig`, `~/.ssh` and the caches there are neither read nor planted;
- what the run needs under /tmp or HOME (the repository, the venv, Python
  itself: Sandbox.readable) bound again, read-only;
- the build folder (Sandbox.hidden) an empty, read-only folder: no other run, no
  record, no page, no staged source;
- the project (Sandbox.project) an empty, read-only folder but for what the run sees of it
  (Run.visible, core.runs.visibility: its folder but the other tutorials, its declared files,
  conf.py's sys.path modules), each bound read-only at its own path;
- the GPU devices that exist here (Sandbox.devices), shared as they are;
- writable: its working folder and its output folder (where the runner records),
  fresh folders of the build's, each at its own path;
- the text of the tutorial the build read (Run.copy) seen at the tutorial's path,
  read-only: a save during the run changes nothing the run sees.

It holds no capability (`--cap-drop ALL`), root's builds included, and runs as an unprivileged user where the
builder is root and the machine lets that user make a user namespace (Sandbox.user: bwrap is started as that
user, so that the run's uid is no one's outside either); the parts of /proc whose writes the kernel checks
by uid rather than by capability (PROC_READ_ONLY: /proc/sys, /proc/sysrq-trigger, ...) are read-only; bwrap
sets no_new_privs, and loads the seccomp filter of core.runs.seccomp (mounts, namespaces, ptrace, keyctl, bpf,
perf_event_open, userfaultfd, kexec, modules refused) from the descriptor the command names.

It gets new namespaces of every kind (`--unshare-all`): its own PID namespace,
so it sees and signals only its own processes, and killing its first process
(the namespace's init) kills every process it started; no network but its own
loopback (host names from /etc/hosts alone) unless it declares it needs the
network (`--share-net`). With `--die-with-parent` the kernel kills it when the
thread of the build that started it ends, a SIGKILL of the build included.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SETTING = "SANDBOX"  # the make variable: `off` runs the tutorials without a sandbox
PROGRAM = "bwrap"
# What exists of these is shared with every run: NVIDIA's devices, the DRM render nodes, ROCm's.
GPU_DEVICES = ("/dev/nvidia*", "/dev/dri", "/dev/kfd")
NSSWITCH = "/etc/nsswitch.conf"
PRIVATE_TMP = "/tmp"  # where a run sees its private temporary folder (TMPDIR, TMP and TEMP point there)
# The parts of /proc that a process whose uid is root outside could write without any capability (the kernel checks
# the uid there): bound again read-only over the run's own /proc, where they exist.
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
# The resolver's configuration where the system's resolv.conf points into /run (systemd-resolved).
_RESOLVER = "/run/systemd/resolve"


@dataclass(frozen=True)
class Sandbox:
    """What every run of a build is confined by (one per build)."""

    program: str  # the bwrap program
    home: Path  # the builder's HOME: each run sees an empty one of its own there
    hidden: tuple[Path, ...]  # folders each run sees empty (the build folder)
    readable: tuple[Path, ...]  # folders bound again, read-only, where /tmp or HOME holds them
    devices: tuple[Path, ...]  # the GPU devices that exist here
    seccomp: bytes = b""  # the filter's BPF program (core.runs.seccomp.program)
    user: tuple[int, int] | None = None  # (uid, gid) bwrap runs as, a root builder's runs; None: the builder's own
    # Why a root builder's runs keep root's uid (without capabilities): the unprivileged user's sandbox failed so.
    fallback: str = ""
    project: Path | None = None  # the project: hidden but for what each run sees of it (Run.visible)


@dataclass(frozen=True)
class Run:
    """The folders of one run, fresh for it and removed after it."""

    workdir: Path  # its current directory: writable
    output: Path  # where the runner records: writable; the build takes from it only what a run records
    tmp: Path  # its /tmp: writable
    home: Path  # its HOME: writable
    source: Path  # the tutorial, as the project has it
    copy: Path  # the text of SOURCE as the run started, which it sees at SOURCE
    network: bool  # it declares it needs the network
    nsswitch: Path  # without the network, what it sees as /etc/nsswitch.conf (offline_nsswitch)
    visible: tuple[Path, ...] = ()  # what it sees of the project, bound read-only (core.runs.visibility)


def parse_setting(value: str) -> bool:
    """Whether SANDBOX asks for the sandbox: `on` or nothing does; `off` runs the tutorials without one."""
    value = value.strip()
    if value not in ("", "on", "off"):
        raise ValueError(f"{value!r} is not on (the default: each tutorial runs in a sandbox) or off (run them "
                         "without one, where this machine cannot make one)")
    return value != "off"


def _hides_home(sandbox: Sandbox) -> bool:
    # A HOME of / (some containers) would hide the whole system; one that does not exist holds nothing.
    return sandbox.home != Path("/") and sandbox.home.is_dir()


def _outermost(folders: Sequence[Path]) -> list[Path]:
    """FOLDERS but those inside another one (hidden with it), each once."""
    return [folder for folder in dict.fromkeys(folders)
            if not any(folder != other and folder.is_relative_to(other) for other in folders)]


def _base(sandbox: Sandbox, tmp: Sequence[str], home: Sequence[str]) -> list[str]:
    """The view every run gets: the system read-only, /tmp (bound by the TMP arguments), HOME (by the HOME
    arguments) and the hidden folders empty, what the run needs of /tmp and HOME bound again."""
    argv = [sandbox.program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run",
            "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", *tmp]
    for entry in PROC_READ_ONLY:
        argv += ["--ro-bind-try", entry, entry]
    masked = [Path(PRIVATE_TMP)]
    if _hides_home(sandbox):
        argv += home
        masked.append(sandbox.home)
    if sandbox.project is not None:
        argv += ["--tmpfs", str(sandbox.project)]
        masked.append(sandbox.project)
    # Outer folders first: a folder bound again inside another one bound again stays visible. The project, or a folder
    # holding it, is never bound again whole: a run sees of it what core.runs.visibility shows it.
    project = sandbox.project
    for folder in sorted(sandbox.readable, key=lambda path: len(path.parts)):
        if project is not None and project.is_relative_to(folder):
            continue
        if any(folder.is_relative_to(mask) for mask in masked) and folder.exists():
            argv += ["--ro-bind", str(folder), str(folder)]
    for folder in _outermost(sandbox.hidden):
        argv += ["--tmpfs", str(folder)]
    for device in sandbox.devices:
        argv += ["--dev-bind", str(device), str(device)]
    return argv


def _filter(seccomp_fd: int | None) -> list[str]:
    return [] if seccomp_fd is None else ["--seccomp", str(seccomp_fd)]


def command(sandbox: Sandbox, run: Run, argv: Sequence[str], seccomp_fd: int | None = None) -> list[str]:
    """The command line that runs ARGV in RUN's sandbox, in its working folder; SECCOMP_FD: the descriptor bwrap
    reads the filter from (Sandbox.seccomp, passed to it open)."""
    line = _base(sandbox, ["--bind", str(run.tmp), PRIVATE_TMP], ["--bind", str(run.home), str(sandbox.home)])
    if run.network:
        line += ["--share-net", "--ro-bind-try", _RESOLVER, _RESOLVER]
    else:
        line += ["--ro-bind", str(run.nsswitch), NSSWITCH]
    for path in run.visible:
        line += ["--ro-bind", str(path), str(path)]
    # Where HOME is hidden nowhere, the run's own is a folder of its own, at its own path.
    own_home = () if _hides_home(sandbox) else (run.home,)
    for folder in (run.workdir, run.output, *own_home):
        line += ["--bind", str(folder), str(folder)]
    if own_home:
        line += ["--setenv", "HOME", str(run.home)]
    line += ["--ro-bind", str(run.copy), str(run.source), "--chdir", str(run.workdir)]
    return [*line, *_read_only(sandbox), *_filter(seccomp_fd), "--", *argv]


def offline_nsswitch(system: str) -> str:
    """What a run without the network sees as /etc/nsswitch.conf: the system's SYSTEM, host names looked up
    in /etc/hosts only. A name server cannot be reached there: asked, it fails as a temporary error, where
    a machine that has one answers "no such name" at once (torch's c10d warns, on the page, of every reverse
    lookup of a client's `::ffff:127.0.0.1` that fails so)."""
    lines = [line for line in system.splitlines() if not line.strip().startswith("hosts:")]
    return "\n".join([*lines, "hosts: files"]) + "\n"


def _read_only(sandbox: Sandbox) -> list[str]:
    """The empty folders made read-only, once every folder was bound inside them (not those: not recursive)."""
    hidden = ["/run", *map(str, _outermost(sandbox.hidden))]
    if sandbox.project is not None:
        hidden.append(str(sandbox.project))
    return [arg for folder in hidden for arg in ("--remount-ro", folder)]


def probe(sandbox: Sandbox, check: Sequence[str], seccomp_fd: int | None = None) -> list[str]:
    """A command that succeeds where runs can be sandboxed as `command` does it: CHECK (a command that fails
    where what a run needs cannot be read) run in a sandbox made as a run's is."""
    return [*_base(sandbox, ["--tmpfs", PRIVATE_TMP], ["--tmpfs", str(sandbox.home)]), *_read_only(sandbox),
            *_filter(seccomp_fd), "--", *check]


def gpu_devices(found: Sequence[str]) -> tuple[Path, ...]:
    """The device paths of FOUND (what GPU_DEVICES matched here), each once, in order."""
    return tuple(dict.fromkeys(Path(path) for path in found))


def last_line(failure: str) -> str:
    """The line of a program's FAILURE (its stderr) that says what failed: its last."""
    return failure.strip().splitlines()[-1] if failure.strip() else "no message"


def unavailable(program: str | None, failure: str) -> str:
    """The build's one message where no sandbox can be made: PROGRAM (None: bwrap is not installed) failed
    with FAILURE (its own last line); what to install or allow, or SANDBOX=off."""
    off = (f"or build with {SETTING}=off to run the tutorials without a sandbox (they can then write wherever "
           "you can; `tutorials-site ci-build` refuses it)")
    if program is None:
        return (f"[execute] cannot sandbox the tutorials: bubblewrap ({PROGRAM}) is not installed; install it "
                f"(Debian and Ubuntu: `sudo apt-get install bubblewrap`), {off}")
    reason = last_line(failure)
    userns = re.search(r"namespace|permission|operation not permitted|setting up uid map", reason, re.IGNORECASE)
    fix = ("; this machine does not let unprivileged users make namespaces: on Ubuntu 24.04 and later allow "
           "them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, on older Debian with "
           "`sudo sysctl -w kernel.unprivileged_userns_clone=1`, and in a container start it with "
           "`--security-opt seccomp=unconfined --security-opt apparmor=unconfined` (or run the build as root "
           "there)") if userns else ""
    return f"[execute] cannot sandbox the tutorials: {program} failed: {reason}{fix}; {off}"

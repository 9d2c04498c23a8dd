"""Run one tutorial in a process of its own (commands/runner.py), with a time limit, and say how it went.

Each run gets fresh folders of its own, removed after it (a temporary folder,
a HOME, an output folder, a copy of its source), and, unless SANDBOX=off, runs
in a sandbox (core.runs.sandbox): its own PID namespace, the system read-only,
nothing of the build folder but its working folder and its output folder, no
network unless it declares it needs it. A time limit, or the end of the run,
kills the namespace's first process, and the kernel kills every other with it.

Without the sandbox (SANDBOX=off) the runner is started in a new session, so
the tutorial's whole process tree (DataLoader workers, spawned ranks, pools,
subprocesses) is one process group, which a time limit and the end of the run
kill. A process that leaves the group (setsid, a daemon's double fork) cannot
leave the tree: on Linux this process is the tutorial's subreaper while it
runs (PR_SET_CHILD_SUBREAPER), so every orphan of the tree becomes its child
instead of init's, and is killed and reaped at the end of the run.

While the tutorial runs, the resident memory of the tree is sampled. The
tutorial gets the environment core.runs.isolation allows, never this process's
whole environment.

RUNDIR/options.json (core.runs.records.RunOptions), written here: what the runner
needs of conf.py's sphinx_gallery_conf without evaluating conf.py, and the
output limits; the runner reads a copy in its output folder.

RUNDIR/result.json (core.runs.records.RunRecord) is written here, from the one the
runner wrote in its output folder once it is read as a RunRecord, or from what
the run left when it died or was killed (take_outputs moves what a run records
into RUNDIR first). The run's time is the wall time of the runner's process,
measured here (Outcome.seconds) and added to it.
"""

import base64
import contextlib
import ctypes
import glob
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TypeVar

import psutil

from ..core.errors import SiteError
from ..core.files import LEFTOVERS
from ..core.project import Project, Tutorial
from ..core.runs import run_folder, sandbox, seccomp, shown
from ..core.runs.isolation import tutorial_environment
from ..core.runs.needs import Machine
from ..core.runs.records import OPTIONS, BlockRecord, Dropped, RecordError, RunError, RunOptions, RunRecord
from ..core.runs.runs import (
    PAGE,
    PROGRESS,
    RESULT,
    Progress,
    error_line,
    figures_folder,
    first_code_line,
    parse_timeout,
    read_progress,
    unfinished_reason,
)
from ..core.runs.used import FOLDER as USED
from ..core.sphinx_gallery_formats import GALLERY_OPTIONS, option
from ..core.terminal import OutputLimits, RunOutput
from ..core.tutorial_settings import setting
from ..sphinx_gallery_run import split_code_and_text_blocks
from .runner import recorded_sizes

T = TypeVar("T")
# The folder that holds the tutorials_site package: the runner is started as `-m tutorials_site...`.
_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
_CHILD_SITE = Path(__file__).resolve().parent / "child_site"
_SAMPLE_S = 0.05
_PROBE_TIMEOUT_S = 300
# What a tutorial's process sees of the GPUs, as the runner records it (runner._hardware): torch's count, in a
# process of its own with the tutorial's environment (CUDA_VISIBLE_DEVICES included); no torch: no GPU.
_GPU_PROBE = ("import torch\n"
              "gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
              "print(gpus, torch.cuda.get_device_name(0) if gpus else '')\n")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_LOG_KEPT = 1 << 18  # bytes of the runner's log kept from its start, and as many from its end
_UNPRIVILEGED = "nobody"  # whom a root builder's runs are run as, where the machine lets it make a user namespace
# What the sandbox's probe checks a run can read and search: the folders it names (sys.argv[1:]).
_READABLE_CHECK = ("import os, sys\n"
                   "bad = [p for p in sys.argv[1:] if not os.access(p, os.R_OK | os.X_OK)]\n"
                   "sys.exit(f'cannot read {bad[0]}' if bad else 0)\n")
_REAP_ROUNDS = 10  # each round kills what the last one's deaths orphaned; a tree that outlasts them cannot be killed
# Looked up here, not in the child between fork and exec, where only the simplest calls are safe.
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def run_options(project: Project, tutorial: Tutorial, output_limits: OutputLimits) -> RunOptions:
    """What the runner needs of PROJECT's sphinx_gallery_conf to run TUTORIAL."""
    options = project.options
    capture = option(options, "capture_repr")
    own = (tuple(option(options, "image_scrapers")) != GALLERY_OPTIONS["image_scrapers"].default
           or "reset_argv" in options
           or any(not isinstance(m, str) or m not in GALLERY_OPTIONS["reset_modules"].default
                  for m in option(options, "reset_modules")))
    images = figures_folder(tutorial).as_posix()  # the one folder of page/ a page takes files from
    return RunOptions(root=str(project.root), images=images,
                      capture_repr=(capture,) if isinstance(capture, str) else tuple(capture),
                      ignore_repr_types=option(options, "ignore_repr_types"), own_callables=own,
                      inspect_global_variables=project.flag("inspect_global_variables",
                                                            GALLERY_OPTIONS["inspect_global_variables"].default),
                      default_role=project.conf.get("default_role") or "", output_limits=output_limits,
                      gallery_conf=base64.b64encode(project.gallery_conf_pickle).decode(), sys_path=project.sys_path)


@dataclass
class Outcome:
    """How a run went, as the build reports it."""

    ok: bool
    error: str | None  # one line, `<label>:<line>: ERROR: ...`; None when ok
    raised: bool  # the tutorial raised (not: timed out, died, exited), as an expected failure does
    result: RunRecord
    seconds: float  # wall time of the whole process, as measured here: the run's time
    peak_rss_bytes: int  # peak of the summed RSS of the runner and all its descendants


def timeout_for(source: Path, default: T, label: str | None = None) -> float | T:
    """The time limit set by SOURCE's `# tutorials-timeout: N` comment line (seconds), else DEFAULT.

    LABEL names the file in errors (default: SOURCE).
    """
    found = setting(source, "timeout", parse_timeout, label or str(source))
    return default if found is None else found[1]


def machine(env: Mapping[str, str], devices: Sequence[str] | None = None) -> Machine:
    """The GPUs a tutorial started with ENV would see here: one `import torch` (seconds), where there is a GPU device
    (DEVICES: NVIDIA's or ROCm's found here); none elsewhere, without importing torch."""
    found = devices if devices is not None else [path for pattern in sandbox.GPU_DEVICES if pattern != "/dev/dri"
                                                 for path in glob.glob(pattern)]
    if not found:
        return Machine(0, "")
    try:
        probe = subprocess.run([sys.executable, "-c", _GPU_PROBE], env=env, cwd=tempfile.gettempdir(),
                               capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Machine(0, "")
    gpus, _, device = probe.stdout.strip().partition(" ")
    return Machine(int(gpus), device) if probe.returncode == 0 and gpus.isdigit() else Machine(0, "")


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: if the build dies, the runner gets SIGTERM
    # and kills its own group.
    assert _prctl is not None  # the runner gets this function only where there is prctl
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _descendants(runner: psutil.Process) -> list[psutil.Process]:
    try:
        return runner.children(recursive=True)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def _rss(processes: Iterable[psutil.Process]) -> int:
    """The memory PROCESSES hold together: the sum of their proportional set sizes (a page shared by N of them,
    a forked child's, counts 1/N in each), or of their resident sizes where the PSS cannot be read."""
    total = 0
    for process in processes:
        try:
            total += process.memory_full_info().pss
        except psutil.AccessDenied:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                total += process.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def _kill_all(runner: psutil.Process, seen: dict[int, psutil.Process]) -> None:
    """SIGKILL the runner's process group and every descendant ever SEEN (one that left the group too)."""
    for process in _descendants(runner):
        seen[process.pid] = process
    with contextlib.suppress(ProcessLookupError):
        os.killpg(runner.pid, signal.SIGKILL)  # the runner leads its group: its pid is the group's id
    for process in seen.values():
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            process.kill()  # psutil refuses a pid that was reused by another process since


@contextlib.contextmanager
def _subreaper() -> Iterator[None]:
    """On Linux, adopt every orphan started meanwhile by a descendant, instead of init (restored after)."""
    if _prctl is None:
        yield
        return
    was = ctypes.c_int()
    _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was))
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    try:
        yield
    finally:
        _prctl(_PR_SET_CHILD_SUBREAPER, was.value)


def _kill_adopted(own: set[int]) -> None:
    """SIGKILL and reap every child of this process whose pid is not in OWN (the tutorial's orphans, adopted
    as subreaper), with all their descendants, until none is left; their own orphans come here in turn."""
    me = psutil.Process()
    for _ in range(_REAP_ROUNDS):
        adopted = [child for child in me.children() if child.pid not in own]
        if not adopted:
            return
        for process in adopted:
            for victim in [process, *_descendants(process)]:
                with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                    victim.kill()
        psutil.wait_procs(adopted, timeout=5)  # they are this process's children: this reaps them


def _unfinished_result(source: Path, rundir: Path, limits: OutputLimits, progress: Progress | None,
                       error: RunError, seconds: float) -> RunRecord:
    """What a runner that did not finish leaves: the blocks it started and what they printed so far."""
    blocks: list[BlockRecord] = []
    if progress is not None:
        lines = [first_code_line(block) for block in split_code_and_text_blocks(str(source))[1] if block.type == "code"]
        shown = RunOutput(limits)
        # A progress.json the tutorial wrote may name a block past the last.
        for k, sizes in enumerate(recorded_sizes(rundir / run_folder.OUT, min(progress.block + 1, len(lines)), limits)):
            text = shown.block().show_file(run_folder.output_file(rundir / run_folder.OUT, k), *sizes)
            # Which block saved which figure is only in result.json: none are claimed here.
            blocks.append(BlockRecord(line=lines[k], texts=(text,) if text.strip() else (), images=()))
    return RunRecord(blocks=tuple(blocks), error=error, seconds=seconds)


def _ending_shown(result: RunRecord, error: RunError) -> RunRecord:
    """RESULT of a run that did not finish, with how it ended (ERROR's message) shown under the block that was
    running, where a block that raised shows its traceback: its page, kept, says why its output stops there."""
    if not result.blocks:  # it ended before its first block: the page shows it under that one
        return replace(result, blocks=(BlockRecord(line=error.line, texts=(error.message,), images=(), failed=True),))
    last = result.blocks[-1]
    return replace(result, blocks=(*result.blocks[:-1], replace(last, texts=(*last.texts, error.message),
                                                                 failed=True)))


class OutputRefused(SiteError):
    """A run left in its output folder what no run records: nothing of it is taken."""


# What a run records in its output folder (runner.py), besides the page's figures: out/<k>.txt, what
# output_guard.py left out (out/dropped.json), progress.json, result.json; options.json is the runner's
# input, written here (RUNDIR has its own).
# What a run records: each block's output, what was cut, the block running, what each process used (core.runs.used).
_RECORDED = re.compile(r"out/(?:0|[1-9][0-9]*)\.txt|out/dropped\.json|" + re.escape(PROGRESS) + "|" + re.escape(RESULT)
                       + "|" + re.escape(USED) + r"/[1-9][0-9]*\.jsonl")
_INPUT = OPTIONS


# The most a file of a run's output folder may hold besides a figure (shown.FIGURE_LIMIT): the runner's are far
# smaller (output_guard.py cuts the blocks' output to the output limits); a larger file, or a sparse file of that
# size, is the tutorial's own, refused, never read nor copied.
_RECORD_LIMIT = 64 << 20


def _recorded_files(output: Path, images: str) -> Iterator[tuple[Path, str]]:
    """(path, path relative to OUTPUT) of each file a run recorded in OUTPUT, no link followed; a writer's
    leftovers (a killed write's temporary) skipped. Raises OutputRefused on anything else."""
    pending = [output]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                path = Path(entry.path)
                relative = path.relative_to(output).as_posix()
                info = entry.stat(follow_symlinks=False)
                figure = relative.startswith(f"page/{images}/")
                if stat.S_ISDIR(info.st_mode) and (figure or f"page/{images}/".startswith(relative + "/")
                                                   or relative in (run_folder.OUT, USED)):
                    pending.append(path)
                elif stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                    what = "a link" if stat.S_ISLNK(info.st_mode) else "not a file" if not stat.S_ISREG(
                        info.st_mode) else "a file linked from elsewhere too"
                    raise OutputRefused(f"{relative} ({what})")
                elif figure or _RECORDED.fullmatch(relative):
                    problem = _as_recorded(path, relative, info.st_size, figure)
                    if problem:
                        raise OutputRefused(f"{relative} ({problem})")
                    yield path, relative
                elif relative != _INPUT and not path.match(LEFTOVERS):
                    raise OutputRefused(relative)


def _as_recorded(path: Path, relative: str, size: int, figure: bool) -> str | None:
    """Why the file at PATH (SIZE bytes, a sparse file's included) is not what the runner and output_guard.py write
    there, or None: a FIGURE is an image of a format pages show (core.runs.shown), each file within its size; the
    JSON files the build reads when a run did not finish hold what they write."""
    limit = shown.FIGURE_LIMIT if figure else _RECORD_LIMIT
    if size > limit:
        return f"{size} bytes, over the {limit >> 20} MB a run may record there"
    if figure:
        with open(path, "rb") as file:
            head = file.read(16)
        return None if shown.figure_format(relative, head) else ("not a PNG, JPEG, GIF or WebP image by its bytes, "
                                                                 "the formats a page shows")
    if relative == PROGRESS:
        return None if read_progress(path) is not None else "not as the runner writes it"
    if relative != f"out/{Dropped.FILE}":
        return None
    try:
        dropped = Dropped.read(path)
    except RecordError:
        return "not as the runner writes it"
    return None if dropped is not None and all(size >= 0 for size in dropped.blocks) else "not as the runner writes it"


def take_outputs(output: Path, rundir: Path, images: str) -> RunRecord | None:
    """Copy into RUNDIR what the run that ended recorded in its OUTPUT folder (see runner.py): out/<k>.txt,
    out/dropped.json, progress.json and the figures under page/IMAGES/ (options.images), each a plain file,
    no link followed; and return its result.json read as a RunRecord and validated as data (core.runs.shown; None:
    none, or not one), which is not copied (the caller writes RUNDIR's record). Raises OutputRefused naming anything
    else OUTPUT holds (a link, another file, a figure that is no image, a file over its size), before anything is
    copied."""
    found = list(_recorded_files(output, images))
    record = None
    for path, relative in found:
        if relative == RESULT:
            with contextlib.suppress(RecordError):  # damaged (the runner writes it whole, so by the tutorial)
                record = RunRecord.read(path)
            continue
        (rundir / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, rundir / relative, follow_symlinks=False)
    figures = frozenset(relative.removeprefix(f"{PAGE}/") for _, relative in found if relative.startswith(f"{PAGE}/"))
    return record and shown.validated(record, figures)


def _unprivileged_user() -> tuple[int, int] | None:
    """(uid, gid) a root builder's runs are started as (nobody's); None for any other builder, whose own they keep."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(_UNPRIVILEGED)
    except KeyError:
        return 65534, 65534  # the kernel's overflow uid and gid, no one's
    return entry.pw_uid, entry.pw_gid


def _as_user(user: tuple[int, int] | None) -> tuple[int | None, int | None, list[int] | None]:
    """(user, group, extra_groups) of subprocess.Popen that start bwrap as USER (None: as this process)."""
    return (None, None, None) if user is None else (user[0], user[1], [])


@contextlib.contextmanager
def _filter_fd(program: bytes) -> Iterator[int | None]:
    """A descriptor holding the seccomp PROGRAM from its start, for bwrap's --seccomp (passed open to it)."""
    if not program:
        yield None
        return
    fd = os.memfd_create("tutorials-site-seccomp")
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


def _probe(found: sandbox.Sandbox, needed: Iterable[Path]) -> str | None:
    """Why runs cannot be sandboxed as FOUND says, or None: a sandbox made as a run's, in which Python reads the
    folders a run NEEDED."""
    check = [sys.executable, "-I", "-c", _READABLE_CHECK, *map(str, needed)]
    user, group, groups = _as_user(found.user)
    try:
        with _filter_fd(found.seccomp) as fd:
            probe = subprocess.run(sandbox.probe(found, check, fd), capture_output=True, text=True,
                                   timeout=_PROBE_TIMEOUT_S, pass_fds=() if fd is None else (fd,), user=user,
                                   group=group, extra_groups=groups)
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    return None if probe.returncode == 0 else probe.stderr or f"exit status {probe.returncode}"


def sandbox_here(project_root: Path | str, hidden: Iterable[Path]) -> sandbox.Sandbox | str:
    """The sandbox runs get on this machine, with the folders HIDDEN from them (the build folder); or, where
    none can be made (bwrap or libseccomp missing, or failing to make namespaces), what the build says instead.

    A root builder's runs are run as an unprivileged user where this machine lets that user make the sandbox
    and read what a run needs; elsewhere they keep root's uid, without any capability (Sandbox.fallback says why).
    """
    program = shutil.which(sandbox.PROGRAM)
    if program is None:
        return sandbox.unavailable(None, "")
    try:
        bpf = seccomp.program()
    except seccomp.SeccompUnavailable as error:
        return sandbox.unavailable(program, f"libseccomp cannot be loaded ({error}): install it (Debian and Ubuntu: "
                                            "`sudo apt-get install libseccomp2`)")
    # What a tutorial's Python needs where HOME may hold it: the project, the engine, the interpreter, the venv
    # and every folder on this process's sys.path (a user's site-packages too), as written and as resolved.
    needed = [Path(project_root), _PACKAGE_PARENT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent,
              *(Path(folder) for folder in sys.path if folder and os.path.isdir(folder))]
    # Bound again where HOME or the project hides them: the engine's package itself (not the folder holding it,
    # which may be the project), the interpreter, the venv, sys.path's folders but the project's root.
    readable = tuple(dict.fromkeys(path for folder in [_PACKAGE_PARENT / "tutorials_site", *needed[2:]]
                                   for path in (folder.absolute(), folder.resolve())))
    found = sandbox.Sandbox(program=program, home=Path.home().resolve(), hidden=tuple(Path(p) for p in hidden),
                            readable=readable, project=Path(project_root).resolve(),
                            devices=sandbox.gpu_devices([p for g in sandbox.GPU_DEVICES for p in sorted(glob.glob(g))]),
                            seccomp=bpf, user=_unprivileged_user())
    failure = _probe(found, needed[:4])
    if failure is not None and found.user is not None:
        as_root = replace(found, user=None, fallback=sandbox.last_line(failure))
        failure = _probe(as_root, needed[:4])
        found = as_root
    return found if failure is None else sandbox.unavailable(program, failure)


def run_tutorial(source: Path | str, rundir: Path | str, workdir: Path | str, options: RunOptions, *, timeout: float,
                 label: str, confined: sandbox.Sandbox | None, network: bool = False,
                 env: Mapping[str, str] | None = None, scratch: Path | None = None,
                 tick: Callable[[Path], None] | None = None, visible: tuple[Path, ...] = ()) -> Outcome:
    """Run SOURCE as `python SOURCE` would, in WORKDIR, recording into RUNDIR; LABEL names it in errors.

    CONFINED: the sandbox it runs in (sandbox_here), None to run it without one; NETWORK: it may use the
    network there; VISIBLE: what of the project it sees there (core.runs.visibility), the rest of it hidden.
    ENV: the tutorial's environment (default: what core.runs.isolation allows of this process's).
    Its temporary folder, HOME, output folder and copy of SOURCE are made in a fresh folder under SCRATCH
    (default: the system's temporary folder), removed once it ended. The caller starts no other process while
    it runs (every child this process gains meanwhile is the tutorial's), and the calling thread outlives the
    run (the kernel ends the sandbox with the thread that started it). TICK is called every few hundredths
    of a second while it runs (a build shows the time passing), with the path of the run's progress.json
    (core.runs.runs.read_progress reads it: the tutorial can write there too). Raises OutputRefused where the
    run recorded what no run records (nothing of it is then in RUNDIR).
    """
    source, rundir = Path(source).resolve(), Path(rundir).resolve()
    shutil.rmtree(rundir, ignore_errors=True)
    rundir.mkdir(parents=True)
    options.write(rundir / OPTIONS)
    folder = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    try:
        run = replace(_run_folders(folder, Path(workdir).resolve(), source, network), visible=visible)
        shutil.copyfile(rundir / OPTIONS, run.output / OPTIONS)
        if confined is not None and confined.user is not None:  # its folders become the unprivileged user's
            for own_folder in (folder, run.workdir):
                _give(own_folder, confined.user)
        env = _runner_environment(env, run.tmp if confined is None else Path(sandbox.PRIVATE_TMP))
        own = {child.pid for child in psutil.Process().children()}
        with contextlib.nullcontext() if confined else _subreaper():
            return _supervise(run, rundir, confined, env, own, options, timeout=timeout, label=label,
                              tick=lambda: tick(run.output / PROGRESS) if tick else None)
    finally:
        remove_folder(folder)


def _run_folders(folder: Path, workdir: Path, source: Path, network: bool) -> sandbox.Run:
    """A run's fresh folders in FOLDER, and the copy of SOURCE it runs: the text as it is now."""
    for name in (run_folder.OUT, "tmp", "home", "in"):
        (folder / name).mkdir()
    shutil.copyfile(source, folder / "in" / source.name)
    system = Path(sandbox.NSSWITCH)
    (folder / "in" / "nsswitch.conf").write_text(
        sandbox.offline_nsswitch(system.read_text(encoding="utf-8", errors="replace") if system.is_file() else ""),
        encoding="utf-8")
    return sandbox.Run(workdir=workdir, output=folder / run_folder.OUT, tmp=folder / "tmp", home=folder / "home",
                       source=source, copy=folder / "in" / source.name, network=network,
                       nsswitch=folder / "in" / "nsswitch.conf")


def _give(folder: Path, user: tuple[int, int]) -> None:
    """FOLDER and all it holds owned by USER (uid, gid); a link is given itself, never followed."""
    os.chown(folder, *user, follow_symlinks=False)
    for parent, folders, files in os.walk(folder):
        for name in [*folders, *files]:
            os.chown(os.path.join(parent, name), *user, follow_symlinks=False)


def _runner_environment(env: Mapping[str, str] | None, tmp: Path) -> dict[str, str]:
    """What the runner is started with: ENV (default: what core.runs.isolation allows of this process's), its
    temporary folder TMP, and what the runner itself needs."""
    env = dict(tutorial_environment(os.environ) if env is None else env)
    env.update(TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
    # child_site/sitecustomize.py makes every Python process the tutorial starts write whole lines.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_CHILD_SITE), str(_PACKAGE_PARENT), env.get("PYTHONPATH")]))
    # matplotlib's name for the backend a stock build selects (`agg`), which it also picks itself without a display.
    env.update(PYTHONUNBUFFERED="1", MPLBACKEND="agg")
    # A helper module beside the tutorial is imported from the project, which is read-only to the run.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def remove_folder(folder: Path) -> None:
    """Remove FOLDER and all it holds, also what a run left without write permission (a link: the link)."""
    if folder.is_symlink() or not folder.exists():
        folder.unlink(missing_ok=True)
        return

    def writable_then_again(function: Callable[[str], object], path: str, error: object) -> None:
        with contextlib.suppress(OSError):
            if Path(path) != folder:  # FOLDER's own parent is not the run's to change
                os.chmod(os.path.dirname(path), 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)
                shutil.rmtree(path, ignore_errors=True)
            else:
                function(path)

    shutil.rmtree(folder, onerror=writable_then_again)


@dataclass(frozen=True)
class _Watched:
    """What watching the runner's process tree measured."""

    seconds: float  # the runner's wall time
    peak_rss_bytes: int
    timed_out: bool


def _start_runner(run: sandbox.Run, confined: sandbox.Sandbox | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The runner's process for RUN (in CONFINED's sandbox, else leading a session of its own), its output (its log)
    into a pipe: the run inherits no descriptor of a file of the build's, only its standard streams."""
    argv = [sys.executable, "-m", "tutorials_site.commands.runner", str(run.source), str(run.output)]
    if confined is not None:  # bwrap ends the sandbox with this thread (--die-with-parent)
        user, group, groups = _as_user(confined.user)
        with _filter_fd(confined.seccomp) as fd:
            return subprocess.Popen(sandbox.command(confined, run, argv, fd), env=env, start_new_session=True,
                                    pass_fds=() if fd is None else (fd,), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, user=user, group=group,
                                    extra_groups=groups)
    return subprocess.Popen(argv, cwd=run.workdir, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent if _prctl else None)


class _Log:
    """The runner's log, read from its pipe as it comes: its first and its last _LOG_KEPT bytes kept, whatever
    a run writes there (nothing it does makes the build read or keep more)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self.file, self.pipe = pipe, pipe.fileno()
        self.head, self.tail, self.left_out = bytearray(), bytearray(), 0
        os.set_blocking(self.pipe, False)

    def read(self) -> bool:
        """Take what is in the pipe now; False once it is closed (every writer gone)."""
        while True:
            try:
                data = os.read(self.pipe, 1 << 16)
            except BlockingIOError:
                return True
            if not data:
                return False
            room = _LOG_KEPT - len(self.head)
            self.head += data[:room]
            self.tail += data[room:]
            if len(self.tail) > _LOG_KEPT:
                self.left_out += len(self.tail) - _LOG_KEPT
                del self.tail[:-_LOG_KEPT]

    def finish(self, path: Path, deadline_s: float = 5.0) -> None:
        """Read to the pipe's end (every process of the run is gone: at most DEADLINE_S seconds), write PATH."""
        end = time.monotonic() + deadline_s
        while self.read() and time.monotonic() < end:
            time.sleep(0.01)
        self.file.close()
        gap = f"\n[runner.log: {self.left_out} bytes left out here]\n".encode() if self.left_out else b""
        path.write_bytes(bytes(self.head) + gap + bytes(self.tail))


def _kill_namespace(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the sandbox's first process (its PID namespace's init: the kernel kills every other process of
    the namespace with it) and bwrap, and reap bwrap once the namespace is gone."""
    inits: list[psutil.Process] = []
    with contextlib.suppress(psutil.NoSuchProcess):
        inits = psutil.Process(process.pid).children() if process.poll() is None else []
    for init in inits:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            init.kill()
    psutil.wait_procs(inits, timeout=5)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()


def _watch(process: subprocess.Popen[bytes], started: float, own: set[int], log: _Log, *, sandboxed: bool,
           timeout: float, tick: Callable[[], None]) -> _Watched:
    """Sample the memory of the runner's tree until it ends or TIMEOUT runs out (from STARTED), reading its LOG,
    then kill and reap all that is left of the tree (SANDBOXED: its namespace); OWN: the children this process had
    before the runner, not the tutorial's."""
    runner = psutil.Process(process.pid)  # not reaped before process.poll(): the pid is still the runner's
    peak, timed_out = 0, False
    seen: dict[int, psutil.Process] = {}
    try:
        while process.poll() is None:
            if time.monotonic() - started > timeout:
                timed_out = True
                break
            descendants = _descendants(runner)
            if not sandboxed:
                seen.update((p.pid, p) for p in descendants)
            peak = max(peak, _rss([runner, *descendants]))
            log.read()
            tick()
            time.sleep(_SAMPLE_S)
        seconds = time.monotonic() - started
    finally:
        # However it ended, whatever it started goes with it (a tutorial may leave workers running).
        if sandboxed:
            _kill_namespace(process)
        else:
            _kill_all(runner, seen)
            process.wait()
            _kill_adopted(own)
            # Elsewhere, orphans are reaped by init: return once they are gone, so that no caller ever sees one.
            psutil.wait_procs(list(seen.values()), timeout=5)
    return _Watched(seconds, peak, timed_out)


def _status(returncode: int, sandboxed: bool) -> int:
    """The runner's exit status as Popen gives it (below 0: the signal that killed it): bwrap exits with 128 +
    the signal that killed the process it started."""
    return -(returncode - 128) if sandboxed and 128 < returncode < 128 + signal.NSIG else returncode


def _taken(output: Path, rundir: Path, images: str, label: str) -> RunRecord | None:
    """take_outputs, its refusal said as the build says it of LABEL."""
    try:
        return take_outputs(output, rundir, images)
    except OutputRefused as refused:
        raise OutputRefused(
            f"{label}:1: ERROR: its run left {refused} in its output folder, where a run records only out/<k>.txt, "
            f"out/dropped.json, progress.json, result.json and its figures under page/{images}/: nothing of it "
            "was taken, the run is not stamped (it runs again); a tutorial writes only into its working folder or "
            "a temporary folder") from None


def _supervise(run: sandbox.Run, rundir: Path, confined: sandbox.Sandbox | None, env: dict[str, str], own: set[int],
               options: RunOptions, *, timeout: float, label: str, tick: Callable[[], None]) -> Outcome:
    """Run the runner on RUN and say how it went, from the result it wrote or, where it wrote none (or one
    that disagrees with its exit status), from how it ended and what it left."""
    started = time.monotonic()
    process = _start_runner(run, confined, env)
    assert process.stdout is not None
    log = _Log(process.stdout)
    try:
        watched = _watch(process, started, own, log, sandboxed=confined is not None, timeout=timeout, tick=tick)
    finally:
        log.finish(rundir / "runner.log")
    seconds, peak = watched.seconds, watched.peak_rss_bytes
    status = _status(process.returncode, confined is not None)
    result = _taken(run.output, rundir, options.images, label)
    if not watched.timed_out and result is not None and status == (1 if result.error else 0):
        result = replace(result, seconds=seconds)
        result.write(rundir / RESULT)
        if result.error is None:
            return Outcome(True, None, False, result, seconds, peak)
        return Outcome(False, error_line(label, result.error, raised=True), True, result, seconds, peak)

    message = unfinished_reason(status, timeout if watched.timed_out else None)
    progress = read_progress(rundir / PROGRESS)
    line = progress.line if progress else 1
    error = RunError(line=line, block_line=line, message=message)
    result = _ending_shown(replace(result, error=error, seconds=seconds) if result else _unfinished_result(
        run.copy, rundir, options.output_limits, progress, error, seconds), error)
    result.write(rundir / RESULT)  # the page still shows what the tutorial printed, then how it ended
    return Outcome(False, error_line(label, error, raised=False), False, result, seconds, peak)

"""Run one tutorial in a process of its own, with a time limit, and say what happened.

The runner (commands.runner) is started in a new session, so that the
tutorial's whole process tree (DataLoader workers, spawned ranks, pools) is
one process group: a time limit kills the group, and whatever a finished
tutorial left behind is killed too. While it runs, the resident memory of the
tree is sampled (psutil) for the stamp's peak.

result.json, written by the runner (or made here from what it left when it
was killed): {"blocks": [{"line", "output", "images"}, ...] one per code block
that ran, "error": null or {"line", "block_line", "message"}, "seconds",
"hardware": {"device", "gpus", "machine", "torch", "cuda"}, "gpu_peak_bytes"}.
"""

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..core.runs import RESULT, TIMEOUT_COMMENT

PACKAGE_PARENT = Path(__file__).resolve().parents[2]
POLL_SECONDS = 0.05


@dataclass
class Outcome:
    ok: bool
    error: str | None  # one line: `<file>:<line>: ERROR: ...`, None when ok
    result: dict
    seconds: float  # wall time of the whole process
    peak_rss_bytes: int  # of the runner and all its descendants together


def timeout_for(source, default):
    """The tutorial's own `# tutorials-timeout: N` (seconds), else `default`."""
    text = Path(source).read_text(encoding="utf-8")
    match = TIMEOUT_COMMENT.search(text)
    if match is None:
        return default
    value = match[1].strip()
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0
    if not seconds > 0:
        line = text.count("\n", 0, match.start()) + 1
        raise ValueError(f"{source}:{line}: tutorials-timeout: {value!r} is not a number of seconds")
    return seconds


def _die_with_parent():
    """In the child, before exec: SIGTERM when the build dies, which the runner passes on to its group."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _tree(process):
    try:
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return []


def _rss(processes):
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            total += process.memory_info().rss
    return total


def _kill(pgid, processes):
    """Kill the process group and every descendant seen (one that started its own session included)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(processes, timeout=5)


def _partial(rundir, message):
    """The result of a runner that did not finish: the blocks it started, their output so far."""
    progress = json.loads((rundir / "progress.json").read_text()) if (rundir / "progress.json").exists() else None
    blocks = []
    for index in range((progress["block"] + 1) if progress else 0):
        out = rundir / "out" / f"{index}.txt"
        blocks.append({"line": None, "images": [],
                       "output": out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""})
    line = progress["line"] if progress else 1
    if blocks:
        blocks[-1]["line"] = line
    return {"blocks": blocks, "error": {"line": line, "block_line": line, "message": message},
            "seconds": 0.0, "hardware": {}, "gpu_peak_bytes": []}


def run_tutorial(source, rundir, workdir, *, timeout, label, env=None):
    rundir = Path(rundir)
    if rundir.exists():
        shutil.rmtree(rundir)
    rundir.mkdir(parents=True)
    env = dict(os.environ if env is None else env)
    env.update(PYTHONUNBUFFERED="1", MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_PARENT), env.get("PYTHONPATH")])))
    started = time.perf_counter()
    with open(rundir / "runner.log", "wb") as log:
        runner = subprocess.Popen(
            [sys.executable, "-m", "tutorials_site.commands.runner", str(source), str(rundir)],
            cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    process = psutil.Process(runner.pid)
    peak, seen, timed_out = 0, {}, False
    while runner.poll() is None:
        tree = _tree(process)
        seen.update((p.pid, p) for p in tree)
        peak = max(peak, _rss(tree))
        if time.perf_counter() - started > timeout:
            timed_out = True
            _kill(runner.pid, _tree(process))
            runner.wait()
            break
        time.sleep(POLL_SECONDS)
    seconds = time.perf_counter() - started
    _kill(runner.pid, [p for p in seen.values() if p.is_running()])  # nothing a tutorial started outlives it

    status = runner.returncode
    if timed_out:
        message = f"tutorial timed out after {timeout:g} s"
    elif status < 0:
        name = signal.Signals(-status).name
        message = f"tutorial died from signal {name}" + (" (killed: out of memory?)" if name == "SIGKILL" else "")
    elif (rundir / RESULT).exists():
        result = json.loads((rundir / RESULT).read_text(encoding="utf-8"))
        if result["error"] is None and status == 0:
            return Outcome(True, None, result, seconds, peak)
        if result["error"] is not None:
            error = result["error"]
            return Outcome(False, f"{label}:{error['line']}: ERROR: tutorial failed: {error['message']}",
                           result, seconds, peak)
        message = f"tutorial exited with status {status}"
    else:
        log = (rundir / "runner.log").read_text(errors="replace").strip().splitlines()
        message = f"tutorial exited with status {status} (os._exit, or the runner failed{': ' + log[-1] if log else ''})"
    result = _partial(rundir, message)
    (rundir / RESULT).write_text(json.dumps(result, indent=1), encoding="utf-8")  # the page shows what it printed
    return Outcome(False, f"{label}:{result['error']['line']}: ERROR: {message}", result, seconds, peak)

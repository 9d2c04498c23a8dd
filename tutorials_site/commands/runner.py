"""Run one tutorial the way `python SOURCE` would, one code block at a time.

    python -m tutorials_site.commands.runner SOURCE RUNDIR

execute.py starts this in a fresh process, in its own process group, with the
working directory and environment already set. What it leaves in RUNDIR:

    out/<k>.txt     all that was written to fds 1 and 2 while code block k ran,
                    by this process and by every process started during it
                    (except forkserver children: the server forks them, and they
                    write where it was started, in the block that first used it)
    images/         the figures open after each block: sphx_glr_<stem>_<NNN>.png
    progress.json   {"block": k, "line": lineno} of the block now running
    result.json     the summary, written last (its format: see execute.py)

Exit status: 0 on success, 1 when the tutorial raised.
"""

import ast
import builtins
import codeop
import os
import platform
import random
import signal
import sys
import time
import traceback
import types
from pathlib import Path

from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from ..core.runs import first_code_line, write_json

# How long finished children get to be reaped before their output is read.
_CHILDREN_GRACE_S = 1.0
_mask_before_fork = set()


def _kill_own_group(signum, frame):
    # SIGTERM comes when the supervisor dies (PR_SET_PDEATHSIG): take every worker down too.
    os.killpg(0, signal.SIGKILL)


# A forked worker must not inherit that handler: its terminate() (a Pool's exit, a DataLoader's
# shutdown) must end that worker alone, as by default. Resetting it after the fork leaves a
# moment in which a SIGTERM is caught, then dropped with the child's pending signals, and the
# worker never ends; so SIGTERM stays blocked across the fork until the child has reset it.
def _before_fork():
    global _mask_before_fork
    _mask_before_fork = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _after_fork_in_parent():
    signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before_fork)


def _after_fork_in_child():
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A forked worker writes whole lines, like the processes sitecustomize sets up (see execute.py).
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, write_through=False)
    signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before_fork)


def _become_main(source, doc):
    """Install a fresh `__main__` module for SOURCE, as `python SOURCE` does; returns its namespace."""
    main = types.ModuleType("__main__", doc)
    main.__file__ = source  # spawn and forkserver children re-run this file as __mp_main__
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    sys.argv = [source]
    # `-m` put the working directory first on sys.path; a script gets its own folder there.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    sys.path.insert(0, os.path.dirname(source))
    return main.__dict__


def _seed():
    random.seed(0)
    try:
        import numpy
    except ImportError:
        pass
    else:
        numpy.random.seed(0)
    try:
        import torch
    except ImportError:
        pass
    else:
        torch.manual_seed(0)


def _flush():
    # The streams this process started with, which write straight to fds 1 and 2.
    sys.__stdout__.flush()
    sys.__stderr__.flush()


def _redirect_output(path):
    """Point fds 1 and 2 at PATH, so that C code and child processes write there too."""
    _flush()
    # O_APPEND: this process and its children share the file, and none overwrites another's writes.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    # fds 1 and 2 now hold the file open, and every child started meanwhile holds its own copy,
    # which it keeps writing through after this block ends.
    os.close(fd)


def _run_block(compiler, namespace, source, code, lineno):
    """Execute one code block; print the repr of a final expression, as Sphinx-Gallery shows it."""
    # Padding keeps the file's own line numbers in tracebacks and in linecache lookups.
    tree = ast.parse("\n" * (lineno - 1) + code, source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compiler(tree, source, "exec"), namespace)
    if last is not None:
        value = eval(compiler(ast.Expression(last.value), source, "eval"), namespace)
        if value is not None:
            print(repr(value))


def _save_figures(images, stem, first):
    """Save and close the open matplotlib figures, numbered from FIRST; returns the file names."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    names = []
    for number in plt.get_fignums():
        fig = plt.figure(number)
        name = f"sphx_glr_{stem}_{first + len(names):03d}.png"
        fig.savefig(images / name, facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
        names.append(name)
    plt.close("all")
    return names


def _describe(exc, source, block_line):
    """The traceback to show (without this file's frames), the tutorial line to blame, a one-line message."""
    tb, line = exc.__traceback__, block_line
    while tb is not None and tb.tb_frame.f_globals is globals():
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.filename == source:
        tb, line = None, exc.lineno  # the block did not compile: the frames are the compiler's
    frame = tb
    while frame is not None:
        if frame.tb_frame.f_code.co_filename == source:
            line = frame.tb_lineno
        frame = frame.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    # SyntaxError puts the offending code (indented) before its "Type: message" line; notes come after it.
    summary = next(part for part in traceback.format_exception_only(type(exc), exc) if not part.startswith(" "))
    return text, line, summary.strip().splitlines()[0]


def _wait_for_children():
    """Reap the multiprocessing children that are finishing, so that their output is all written."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:
        return
    deadline = time.monotonic() + _CHILDREN_GRACE_S
    for child in multiprocessing.active_children():
        child.join(max(0.0, deadline - time.monotonic()))


def _hardware():
    """Where the tutorial ran, and the peak GPU memory it allocated on each device."""
    record = {"device": "CPU", "gpus": 0, "machine": platform.machine(), "torch": None, "cuda": None}
    try:
        import torch
    except ImportError:
        return record, []
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    record.update(gpus=gpus, torch=torch.__version__, cuda=torch.version.cuda)
    if gpus:
        record["device"] = torch.cuda.get_device_name(0)
    return record, [torch.cuda.max_memory_allocated(device) for device in range(gpus)]


def main(argv):
    source = os.path.abspath(argv[1])
    rundir = Path(argv[2]).resolve()
    out, images = rundir / "out", rundir / "images"
    out.mkdir(parents=True, exist_ok=True)
    images.mkdir(parents=True, exist_ok=True)

    signal.signal(signal.SIGTERM, _kill_own_group)
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
    _, blocks, tree = split_code_and_text_blocks(source, return_node=True)
    namespace = _become_main(source, ast.get_docstring(tree, clean=False) if tree else None)
    _seed()
    # Unbuffered text, so that this process's writes and its children's interleave in order.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, write_through=True)
    saved = os.dup(1), os.dup(2)  # not inheritable: no child gets these

    # One compiler for all blocks carries `from __future__` imports from one block to the next.
    compiler = codeop.Compile()
    stem = Path(source).stem
    ran, error, saved_images = [], None, 0
    start = time.perf_counter()
    for k, block in enumerate(block for block in blocks if block.type == "code"):
        line = first_code_line(block)
        write_json(rundir / "progress.json", {"block": k, "line": line})
        _redirect_output(out / f"{k}.txt")
        ran.append({"line": line, "images": []})
        try:
            _run_block(compiler, namespace, source, block.content, block.lineno)
            ran[-1]["images"] = _save_figures(images, stem, saved_images + 1)
            saved_images += len(ran[-1]["images"])
        except BaseException as exc:
            if isinstance(exc, SystemExit) and exc.code in (None, 0):
                break  # a clean sys.exit() ends a script successfully
            text, failed_at, message = _describe(exc, source, line)
            sys.__stderr__.write(text)
            error = {"line": failed_at, "block_line": line, "message": message}
            break
    seconds = time.perf_counter() - start

    _flush()
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
    _wait_for_children()
    hardware, gpu_peaks = _hardware()
    write_json(
        rundir / "result.json",
        {
            "blocks": [
                {
                    "line": b["line"],
                    "output": (out / f"{k}.txt").read_text(encoding="utf-8", errors="replace"),
                    "images": b["images"],
                }
                for k, b in enumerate(ran)
            ],
            "error": error,
            "seconds": seconds,
            "hardware": hardware,
            "gpu_peak_bytes": gpu_peaks,
        },
    )
    _flush()
    # Skip interpreter shutdown: it would wait for non-daemon children the tutorial left running
    # (or crash in an extension's teardown) after the result is already complete.
    # The supervisor kills whatever is left.
    os._exit(1 if error else 0)


if __name__ == "__main__":
    main(sys.argv)

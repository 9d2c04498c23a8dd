"""Run one tutorial as `python tutorial.py` would, recording each code block's output and figures.

    python -m tutorials_site.commands.runner SOURCE RUNDIR

Started by commands.execute, one fresh process per tutorial. The tutorial is
this process's `__main__` module, with its `__file__`, so that `spawn` and
`forkserver` children (DataLoader workers, torch.multiprocessing.spawn, Pool)
re-import it and find the functions and classes it defines. Output is caught
at the file-descriptor level: during each code block, descriptors 1 and 2 are
a file of that block's own, which every child started in the block inherits,
so what children print lands under the block that started them, in the
order it was written. Writes RUNDIR/result.json (see commands.execute).
"""

import ast
import json
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

SEED = 0


def _write_json(path, data):
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _become_main(source):
    """Make the tutorial the __main__ module, as the interpreter does for a script."""
    module = types.ModuleType("__main__")
    module.__file__ = str(source)
    module.__builtins__ = __builtins__
    module.__doc__ = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8")), clean=False)
    sys.modules["__main__"] = module
    sys.argv = [str(source)]
    sys.path[0] = str(source.parent)  # `-m` put the working directory there; a script has its folder
    return module


def _seed():
    random.seed(SEED)
    try:
        import numpy
        numpy.random.seed(SEED)
    except ImportError:
        pass
    import torch
    torch.manual_seed(SEED)  # every CUDA device too


def _save_figures(images, stem, count):
    """Save and close every open matplotlib figure; returns their file names."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    names = []
    for number in plt.get_fignums():
        figure = plt.figure(number)
        names.append(f"sphx_glr_{stem}_{count + len(names) + 1:03}.png")
        images.mkdir(exist_ok=True)
        figure.savefig(images / names[-1], facecolor=figure.get_facecolor(), edgecolor=figure.get_edgecolor())
    plt.close("all")
    return names


def _run_block(block, source, namespace):
    """Execute one code block; like Sphinx-Gallery, print the repr of a final expression that is not None."""
    tree = ast.parse("\n" * (block.lineno - 1) + block.content, str(source))
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, str(source), "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), str(source), "eval"), namespace)
        if value is not None:
            print(repr(value))


def _hardware():
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return ({"device": torch.cuda.get_device_name(0) if gpus else "CPU", "gpus": gpus,
             "machine": platform.machine(), "torch": torch.__version__, "cuda": torch.version.cuda},
            [torch.cuda.max_memory_allocated(d) for d in range(gpus)])


def _error(exc, source, first):
    """The line of the innermost frame in the tutorial, and the exception's last line."""
    line = first
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == str(source):
            line = frame.lineno
    message = traceback.format_exception_only(exc)[-1].strip()
    return {"line": line, "block_line": first, "message": message}


def _print_traceback(exc):
    """The traceback from the tutorial's first frame on: this runner's frames say nothing to a reader."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def main(source, rundir):
    source, rundir = Path(source).resolve(), Path(rundir)
    (rundir / "out").mkdir(parents=True, exist_ok=True)
    # Whoever kills this process (the build's time limit, Ctrl-C on make) kills its whole group with it.
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    _, blocks = split_code_and_text_blocks(str(source))
    code = [block for block in blocks if block.type == "code"]
    module = _become_main(source)
    saved = os.dup(1), os.dup(2)
    sys.stdout.reconfigure(line_buffering=True, write_through=True)
    sys.stderr.reconfigure(line_buffering=True, write_through=True)
    _seed()

    records, error, outputs, images = [], None, [], 0
    started = time.perf_counter()
    for index, block in enumerate(code):
        # The block's first line with code on it: where a reader looks for the block that hung or crashed.
        first = block.lineno + block.content.count("\n", 0, len(block.content) - len(block.content.lstrip()))
        _write_json(rundir / "progress.json", {"block": index, "line": first})
        out = os.open(rundir / "out" / f"{index}.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        outputs.append(out)  # kept open: children started here may go on writing into it
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(out, 1), os.dup2(out, 2)
        stop = False
        try:
            _run_block(block, source, module.__dict__)
        except SystemExit as exc:  # the script ends here, as it would under `python`
            stop = True
            if exc.code not in (None, 0):
                error = _error(exc, source, first)
                _print_traceback(exc)
        except BaseException as exc:  # noqa: BLE001 (KeyboardInterrupt too: it is the tutorial's)
            stop, error = True, _error(exc, source, first)
            _print_traceback(exc)
        names = _save_figures(rundir / "images", source.stem, images)
        images += len(names)
        records.append({"line": first, "images": names})
        if stop:
            break
    seconds = time.perf_counter() - started
    sys.stdout.flush(), sys.stderr.flush()
    os.dup2(saved[0], 1), os.dup2(saved[1], 2)
    hardware, gpu_peak = _hardware()

    import multiprocessing

    for child in multiprocessing.active_children():  # finished children's last words reach their block
        child.join(timeout=5)
    for out in outputs:
        os.close(out)
    for index, record in enumerate(records):
        record["output"] = (rundir / "out" / f"{index}.txt").read_text(encoding="utf-8", errors="replace")
    _write_json(rundir / "result.json", {"blocks": records, "error": error, "seconds": seconds,
                                         "hardware": hardware, "gpu_peak_bytes": gpu_peak})
    return 1 if error else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

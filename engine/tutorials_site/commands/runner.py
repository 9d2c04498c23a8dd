"""Run one tutorial the way `python SOURCE` would, one code block at a time.

    python -m tutorials_site.commands.runner SOURCE RUNDIR

execute.py starts this in a fresh process, in the run's sandbox (core.runs.sandbox)
or, under SANDBOX=off, in its own process group, with the working directory
and environment already set, and RUNDIR/options.json (see execute.py) written.
RUNDIR is the run's output folder, from which the build takes only what is
listed here (execute.take_outputs). What it leaves in RUNDIR:

    out/<k>.txt     all that was written to fds 1 and 2 while code block k ran,
                    by this process and by every process started during it
                    (except forkserver children: the server forks them, and they
                    write where it was started, in the block that first used it),
                    as much of it as the output limits let a run keep on disk
                    (output_guard.py cuts the rest, and counts it in dropped.json)
    page/           the figures sphinx-gallery's scrapers saved, where the page wants
                    them: page/<gallery>/<section>/images/sphx_glr_<stem>_<NNN>.png
    progress.json   {"block": k, "line": lineno} of the block now running
    result.json     the summary, written last (core.runs.records.RunRecord)
    out/used/       what each of the tutorial's Python processes opened and imported, one
                    <pid>.jsonl each (child_site/tutorials_site_used.py), for its fingerprint

The texts shown (result.json's and the reST's) are rendered as a terminal shows
them and kept within the limits (core.terminal), with a marker where output
was left out; a traceback shows the project's files relative to its root and
installed packages and the standard library without the machine's folders.
Each block's output is made into reST by sphinx-gallery's own code, as a stock
build makes it: the figures through the configured `image_scrapers` (alt text,
srcset, animations, `sphinx_gallery_defer_figures`, multi-image), the last
expression through `capture_repr` / `ignore_repr_types` (an HTML repr is shown
as HTML), and the text as its output block. Only what is needed is imported:
sphinx-gallery's configuration is filled (which imports matplotlib, as a stock
build does before any example) once the tutorial has imported pyplot, or at
the start when conf.py sets scrapers, `reset_argv` or `reset_modules` of its own.

Exit status: 0 on success, 1 when the tutorial raised.
"""

import ast
import base64
import builtins
import codeop
import contextlib
import importlib.abc
import io
import os
import pickle
import random
import re
import resource
import signal
import site
import subprocess
import sys
import sysconfig
import time
import traceback
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any, TypedDict

from .. import sphinx_gallery_run as sg
from ..core.runs import run_folder
from ..core.runs.records import OPTIONS, BlockRecord, Dropped, RecordError, RunError, RunOptions, RunRecord
from ..core.runs.runs import PROGRESS, CodeBlock, Progress, first_code_line
from ..core.runs.used import FOLDER as USED
from ..core.sphinx_gallery_formats import image_path_template
from ..core.terminal import BlockOutput, OutputLimits, RunOutput, render
from .child_site import tutorials_site_used

# How long finished children get to be reaped before their output is read.
_CHILDREN_GRACE_S = 1.0
_MESSAGE_LIMIT = 1000  # characters of an exception's message the build's error line shows
# The largest file any process of a run may write (RLIMIT_FSIZE, which ftruncate honours too: a sparse file counts by
# its size): a write past it fails with EFBIG, "File too large" (SIGXFSZ is ignored, not fatal).
FILE_LIMIT = 8 << 30
_LOG_FDS = (1, 2)  # the runner's own stdout and stderr (its log), once fds 1 and 2 point at a block's file
_mask_before_fork: set[int | signal.Signals] = set()


class _Ran(TypedDict):
    """What the runner notes of a code block while the tutorial runs, for result.json."""

    line: int  # its first line of code
    images: list[str]  # its figures, relative to page/
    images_rst: str  # sphinx-gallery's reST of them, whose alt texts the record keeps (_alts)
    repr: list[str | None]  # (method, text) of its last expression's repr; None, None without one
    traceback: str | None  # where it raised


def _kill_own_group(signum: int, frame: types.FrameType | None) -> None:
    # SIGTERM comes when the supervisor dies (PR_SET_PDEATHSIG): take every worker down too.
    os.killpg(0, signal.SIGKILL)


# A forked worker must not inherit that handler: its terminate() (a Pool's exit, a DataLoader's
# shutdown) must end that worker alone, as by default. Resetting it after the fork leaves a
# moment in which a SIGTERM is caught, then dropped with the child's pending signals, and the
# worker never ends; so SIGTERM stays blocked across the fork until the child has reset it.
def _before_fork() -> None:
    global _mask_before_fork
    _mask_before_fork = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _after_fork_in_parent() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before_fork)


def _after_fork_in_child() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A forked worker writes whole lines, like the processes sitecustomize sets up (see execute.py).
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # as _write_through() left them, unless the tutorial replaced them
            stream.reconfigure(line_buffering=True, write_through=False)
    signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before_fork)


def _become_main(source: str, doc: str | None, conf_path: Sequence[str]) -> dict[str, Any]:
    """Install a fresh `__main__` module for SOURCE, as `python SOURCE` does; returns its namespace. The folders
    conf.py put on sys.path (CONF_PATH) follow the script's own, as in the Sphinx process of a stock build."""
    main = types.ModuleType("__main__", doc)
    main.__file__ = source  # spawn and forkserver children re-run this file as __mp_main__
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = [source]
    # `-m` put the working directory first on sys.path; a script gets its own folder there.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    sys.path[0:0] = [os.path.dirname(source), *conf_path]
    return main.__dict__


class _SeedOnImport(importlib.abc.MetaPathFinder):
    """Seeds NumPy and torch as the tutorial imports them, not before: a script without torch never pays for it."""

    SEEDS: dict[str, Callable[[types.ModuleType], object]] = {
        "numpy": lambda module: module.random.seed(0), "torch": lambda module: module.manual_seed(0)}

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        """The spec another finder gives NAME, its loader seeding the module once loaded (numpy, torch only)."""
        if name not in self.SEEDS:
            return None
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if finder is not self and hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                load, seed = spec.loader.exec_module, self.SEEDS[name]

                def exec_module(module: types.ModuleType, load: Callable[[types.ModuleType], None] = load,
                                seed: Callable[[types.ModuleType], object] = seed) -> None:
                    load(module)
                    seed(module)

                spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's loader only
                return spec
        return None


def _seed() -> None:
    random.seed(0)
    sys.meta_path.insert(0, _SeedOnImport())
    for name, seed in _SeedOnImport.SEEDS.items():
        if name in sys.modules:  # already imported (by sitecustomize, say): seed it now
            seed(sys.modules[name])


def _flush() -> None:
    # The streams this process started with, which write straight to fds 1 and 2.
    for stream in (sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()


def _redirect_output(path: Path) -> None:
    """Point fds 1 and 2 at PATH, so that C code and child processes write there too."""
    _flush()
    # O_APPEND: this process and its children share the file, and none overwrites another's writes.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    # fds 1 and 2 now hold the file open, and every child started meanwhile holds its own copy,
    # which it keeps writing through after this block ends.
    os.close(fd)


def _start_guard(out: Path, limits: OutputLimits) -> subprocess.Popen[bytes]:
    """output_guard.py, which keeps out/ within the limits while the tutorial writes there; it ends once
    told so on its stdin."""
    return subprocess.Popen([sys.executable, "-m", "tutorials_site.commands.output_guard", str(out),
                             str(limits.block), str(limits.run)], stdin=subprocess.PIPE)


def _dropped(out: Path) -> tuple[int, ...]:
    """The bytes cut from each block's file (output_guard.py); none where it cut nothing, or where what is there
    is not its record (the tutorial can write in OUT too)."""
    try:
        record = Dropped.read(out / Dropped.FILE)
    except RecordError:
        return ()
    return record.blocks if record else ()


def recorded_sizes(out: Path, blocks: int, limits: OutputLimits) -> list[tuple[int, int]]:
    """(bytes recorded, bytes left out) of out/<k>.txt for each of the first BLOCKS blocks, once the run is
    over; each file is cut back to what it may record (output_guard.py did so at intervals while it ran)."""
    sizes = [(out / f"{k}.txt").stat().st_size if (out / f"{k}.txt").exists() else 0 for k in range(blocks)]
    dropped = _dropped(out)
    recorded = []
    for k, (size, cap) in enumerate(zip(sizes, limits.recorded_caps(sizes), strict=True)):
        if size > cap:
            os.truncate(out / f"{k}.txt", cap)
        recorded.append((min(size, cap), (dropped[k] if k < len(dropped) else 0) + max(0, size - cap)))
    return recorded


def _run_block(compiler: codeop.Compile, namespace: dict[str, Any], source: str, code: str,
               lineno: int) -> tuple[bool, Any]:
    """Execute one code block; returns (whether it ends with an expression, that expression's value)."""
    # Padding keeps the file's own line numbers in tracebacks and in linecache lookups.
    tree = ast.parse("\n" * (lineno - 1) + code, source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    # codeop.Compile compiles a syntax tree as compile() does (its stubs take source text only).
    exec(compiler(tree, source, "exec"), namespace)  # type: ignore[arg-type]
    if not isinstance(last, ast.Expr):  # None: the block does not end with an expression
        return False, None
    return True, eval(compiler(ast.Expression(last.value), source, "eval"), namespace)  # type: ignore[arg-type]


@contextlib.contextmanager
def _to_log() -> Iterator[None]:
    """Point fds 1 and 2 at the runner's log for a while (sphinx-gallery's own messages), then back."""
    _flush()
    held = os.dup(1), os.dup(2)
    os.dup2(_LOG_FDS[0], 1), os.dup2(_LOG_FDS[1], 2)
    try:
        yield
    finally:
        _flush()
        os.dup2(held[0], 1), os.dup2(held[1], 2)
        os.close(held[0])
        os.close(held[1])


class _Gallery:
    """sphinx-gallery's view of this run: its configuration, filled when first needed, and the figures saved."""

    def __init__(self, options: RunOptions, source: str, rundir: Path, namespace: dict[str, Any],
                 file_conf: dict[str, Any]) -> None:
        self.options = options
        self.conf: dict[str, Any] | None = None
        page_root = rundir / run_folder.PAGE
        images = page_root / options.images
        images.mkdir(parents=True, exist_ok=True)
        iterator = sg.image_path_iterator(image_path_template(images, Path(source).stem))
        # target_file: where a stock build would have copied the script; scrapers look at its name.
        self.vars = sg.block_vars(iterator, source, str(images.parent / Path(source).name), namespace, file_conf)
        self.page_root = page_root

    def configuration(self) -> dict[str, Any]:
        """sphinx-gallery's configuration of conf.py, filled with its defaults at the first call."""
        if self.conf is None:
            with _to_log():
                # conf.py's sphinx_gallery_conf as the build evaluated it (cloudpickle: its own callables too).
                raw = pickle.loads(base64.b64decode(self.options.gallery_conf))  # noqa: S301 (the build's own)
                # With the page root as the source folder, figure paths in the reST are /<gallery>/<section>/images/...
                self.conf = sg.filled_conf(raw, self.page_root)
        return self.conf

    def start(self, source: str) -> None:
        """What a stock build does before an example runs, when conf.py asks for more than the defaults."""
        if not self.options.own_callables:
            return
        conf = self.configuration()
        sys.argv[1:] = sg.reset_argv(conf, self.vars)
        if conf["reset_modules_order"] in ("before", "both"):
            sg.clean_modules(conf, Path(source).name, "before")

    def figures(self, block: CodeBlock, block_conf: dict[str, Any]) -> str:
        """The block's figures saved by the scrapers, as reST; '' when it has none or defers them."""
        if re.search(r"^[ \t]*#\s*sphinx_gallery_defer_figures[ \t]*\n?", block.content, re.MULTILINE):
            return ""
        if self.conf is None and not self.options.own_callables and "matplotlib.pyplot" not in sys.modules:
            return ""  # the default scraper's only source of figures was never imported
        conf = self.configuration()
        with _to_log():  # what saving prints is not the block's output (a stock build scrapes after capturing)
            return sg.save_figures(block, self.vars, conf, block_conf.get("multi_image_block"))

    def images(self, before: int) -> list[str]:
        """The figure files saved since `before` figures, relative to the page root.

        A scraper may save a figure in another format than the path's (.svg, .webp), or nothing at all
        for an animation embedded as HTML: the files are looked up as sphinx-gallery looks them up.
        """
        found = (sg.saved_image(p) for p in self.vars["image_path_iterator"].paths[before:])
        return [path.relative_to(self.page_root).as_posix() for path in found if path.is_file()]


def _repr(options: RunOptions, file_conf: dict[str, Any], block_conf: dict[str, Any],
          value: Any) -> tuple[str | None, str | None]:
    """(method, text) of a block's last expression, as capture_repr and ignore_repr_types choose it.

    An HTML repr longer than a block's output may be cannot be cut (it is markup): the object's text repr
    is shown instead, within the limits, as a text repr would be.
    """
    capture = tuple(block_conf.get("capture_repr_block", file_conf.get("capture_repr", options.capture_repr)))
    if not capture or (options.ignore_repr_types and re.search(options.ignore_repr_types, str(type(value)))):
        return None, None
    text, method = sg.last_repr(capture, value)
    if method == "_repr_html_" and text is not None and len(text) > options.output_limits.block:
        text, method = sg.last_repr(("__repr__",), value)
    return method, text


def _code_objects(options: RunOptions, blocks: list[CodeBlock], tree: ast.Module | None,
                  namespace: dict[str, Any]) -> dict[str, Any]:
    """The names the script uses, resolved as sphinx-gallery resolves them for code links and backreferences."""
    variables = namespace if options.inspect_global_variables else None
    return sg.code_objects(blocks, options.default_role, variables, tree)


def _machine_folders(root: str) -> dict[str, str]:
    """{folder + "/": what a traceback shows instead}: the project's root, installed packages, the standard library."""
    shown = {os.path.expanduser("~"): "~/"}
    paths = sysconfig.get_paths()
    for folder in (paths["stdlib"], paths["platstdlib"], paths["purelib"], paths["platlib"], *site.getsitepackages(),
                   site.getusersitepackages()):
        shown[folder] = f".../{Path(folder).name}/"  # .../python3.X/, .../site-packages/
    shown[root] = ""
    # A folder may be reached through a link (a venv's lib64, a linked checkout): both spellings.
    shown |= {os.path.realpath(folder): name for folder, name in shown.items()}
    return {folder.rstrip(os.sep) + os.sep: name for folder, name in shown.items() if folder.rstrip(os.sep)}


def short_paths(text: str, root: str) -> str:
    """TEXT with the build machine's folders left out of its paths, the rest of each path kept: the project's
    files relative to ROOT, installed packages under `.../site-packages/`, the standard library under
    `.../python3.X/`, other files in the home folder under `~/`."""
    folders = _machine_folders(root)
    pattern = "|".join(re.escape(folder) for folder in sorted(folders, key=len, reverse=True))
    return re.sub(rf"(?<![\w.~/-])(?:{pattern})", lambda match: folders[match[0]], text)


def _describe(exc: BaseException, source: str, block_line: int, root: str) -> tuple[str, int, str]:
    """The traceback to show (without this file's frames), the tutorial line to blame, a one-line message."""
    tb, line = exc.__traceback__, block_line
    while tb is not None and tb.tb_frame.f_globals is globals():
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.filename == source:
        tb, line = None, exc.lineno or block_line  # the block did not compile: the frames are the compiler's
    frame = tb
    while frame is not None:
        if frame.tb_frame.f_code.co_filename == source:
            line = frame.tb_lineno
        frame = frame.tb_next
    text = short_paths("".join(traceback.format_exception(type(exc), exc, tb)), root)
    # SyntaxError puts the offending code (indented) before its "Type: message" line; notes come after it.
    summary = next(part for part in traceback.format_exception_only(type(exc), exc) if not part.startswith(" "))
    # The message is printed by the build: what a terminal shows of it, as on the page, and not all of a long one.
    summary = render(short_paths(summary, root), _MESSAGE_LIMIT)
    return text, line, (summary.strip().splitlines() or [type(exc).__name__])[0]


_IMAGE_ALT = re.compile(r"\.\. image-sg:: (\S+)\n(?:[ \t]+:[a-z-]+:.*\n)*?[ \t]+:alt: (.*)")


def _alts(images: list[str], images_rst: str) -> tuple[str, ...]:
    """The alt text of each of IMAGES (paths under page/) in the scrapers' IMAGES_RST, "" where it gives none."""
    found = {Path(path).name: alt for path, alt in _IMAGE_ALT.findall(images_rst)}
    return tuple(found.get(Path(image).name, "") for image in images)


def _block_shown(block: BlockOutput, printed_file: Path, sizes: tuple[int, int], record: _Ran) -> BlockRecord:
    """result.json's record of a block that ran to its end: what it printed, then its last expression's text (or
    its HTML repr), and its figures."""
    printed = block.show_file(printed_file, *sizes)
    method, repr_text = record["repr"]
    as_text = method in ("__repr__", "__str__") and repr_text  # an HTML repr is shown as HTML
    if as_text and repr_text:
        repr_text = block.show_text(repr_text)
    shown = f"{printed}\n{repr_text}" if as_text and repr_text else printed
    return BlockRecord(line=record["line"], texts=(shown,) if shown.strip() else (), images=tuple(record["images"]),
                       alts=_alts(record["images"], record["images_rst"]),
                       html=repr_text if method == "_repr_html_" else None)


def _wait_for_children() -> None:
    """Reap the multiprocessing children that are finishing, so that their output is all written."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:
        return
    deadline = time.monotonic() + _CHILDREN_GRACE_S
    for child in multiprocessing.active_children():
        child.join(max(0.0, deadline - time.monotonic()))


def _gpu_peaks() -> list[int]:
    """The peak GPU memory the tutorial allocated on each device (none where it never imported torch)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return []
    return [torch.cuda.max_memory_allocated(device) for device in range(torch.cuda.device_count())]


def _write_through() -> None:
    """Unbuffered text, so that this process's writes and its children's interleave in order."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # as Python opened them
            stream.reconfigure(line_buffering=True, write_through=True)


def _run_blocks(code_blocks: Iterable[CodeBlock], source: str, rundir: Path, options: RunOptions,
                file_conf: dict[str, Any], namespace: dict[str, Any], gallery: _Gallery) -> tuple[list[_Ran], RunError | None]:
    """Run the tutorial's CODE_BLOCKS in NAMESPACE, one after the other, each one's output into out/<k>.txt,
    until one raises: what each block that started left for result.json, and the error that ended the run."""
    # One compiler for all blocks carries `from __future__` imports from one block to the next.
    compiler = codeop.Compile()
    ran: list[_Ran] = []
    error: RunError | None = None
    for k, block in enumerate(code_blocks):
        line = first_code_line(block)
        Progress(block=k, line=line).write(rundir / PROGRESS)
        _redirect_output(run_folder.output_file(rundir / run_folder.OUT, k))
        block_conf = sg.extract_file_config(block.content)
        record: _Ran = {"line": line, "images": [], "images_rst": "", "repr": [None, None], "traceback": None}
        ran.append(record)
        before = len(gallery.vars["image_path_iterator"])
        try:
            is_expression, value = _run_block(compiler, namespace, source, block.content, block.lineno)
            if is_expression:
                record["repr"] = list(_repr(options, file_conf, block_conf, value))
            record["images_rst"] = gallery.figures(block, block_conf)
        except BaseException as exc:
            if isinstance(exc, SystemExit) and exc.code in (None, 0):
                break  # a clean sys.exit() ends a script successfully
            text, failed_at, message = _describe(exc, source, line, options.root)
            record["traceback"] = text
            error = RunError(line=failed_at, block_line=line, message=message)
            break
        finally:
            record["images"] = gallery.images(before)
    return ran, error


def _output_to_log() -> None:
    """Point fds 1 and 2 back at the runner's log, once the tutorial has run."""
    _flush()
    os.dup2(_LOG_FDS[0], 1)
    os.dup2(_LOG_FDS[1], 2)


def _block_records(ran: list[_Ran], out: Path, limits: OutputLimits) -> tuple[BlockRecord, ...]:
    """result.json's record of each block that started: what it showed within the limits."""
    blocks_out: list[BlockRecord] = []
    shown_output = RunOutput(limits)
    for k, (record, sizes) in enumerate(zip(ran, recorded_sizes(out, len(ran), limits), strict=True)):
        block = shown_output.block()
        if record["traceback"] is None:
            blocks_out.append(_block_shown(block, out / f"{k}.txt", sizes, record))
        else:
            blocks_out.append(_block_failed(block, out / f"{k}.txt", sizes, record, record["traceback"]))
    return tuple(blocks_out)


def _block_failed(block: BlockOutput, printed_file: Path, sizes: tuple[int, int], record: _Ran,
                  traceback_text: str) -> BlockRecord:
    """result.json's record of the block that raised: what it printed before, then its traceback. (sphinx-gallery
    shows the traceback alone, and what the block printed is lost: here it explains the error.)"""
    # The traceback first takes its share of the limits: however much the block printed, the error is shown.
    shown_traceback = block.show_text(traceback_text)
    printed = block.show_file(printed_file, *sizes)
    texts = (printed, shown_traceback) if printed.strip() else (shown_traceback,)
    return BlockRecord(line=record["line"], texts=texts, images=tuple(record["images"]), failed=True)


def main(argv: list[str]) -> None:
    """Run the tutorial SOURCE, recording into RUNDIR (argv: SOURCE RUNDIR; see above), and exit."""
    global _LOG_FDS
    source = os.path.abspath(argv[1])
    rundir = Path(argv[2]).resolve()
    options = RunOptions.read(rundir / OPTIONS)
    if options is None:
        raise SystemExit(f"{rundir / OPTIONS}: missing; the build writes it before it starts the runner")
    limits = options.output_limits
    out = rundir / run_folder.OUT
    out.mkdir(parents=True, exist_ok=True)

    signal.signal(signal.SIGTERM, _kill_own_group)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited, ignored, by every process it starts
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))  # none of them can raise it again
    guard = _start_guard(out, limits)  # before the fork handlers: they are the tutorial's
    # What the tutorial's processes import from outside the project, in out/used/.
    tutorials_site_used.install(str(rundir / USED), options.root)
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
    file_conf, blocks, tree = sg.split_code_and_text_blocks(source, return_node=True)
    namespace = _become_main(source, ast.get_docstring(tree, clean=False) if tree else None, options.sys_path)
    _seed()
    _write_through()
    _LOG_FDS = os.dup(1), os.dup(2)  # the runner's log; not inheritable: no child gets these
    gallery = _Gallery(options, source, rundir, namespace, file_conf)
    gallery.start(source)
    ran, error = _run_blocks((block for block in blocks if block.type == "code"), source, rundir, options, file_conf,
                             namespace, gallery)

    _output_to_log()
    _wait_for_children()
    # A line, not the end of the pipe: a forked worker still running holds the pipe open too.
    guard.communicate(b"done\n")
    tutorials_site_used.finish()
    RunRecord(blocks=_block_records(ran, out, limits), error=error, gpu_peak_bytes=tuple(_gpu_peaks()),
              code_objects=_code_objects(options, blocks, tree, namespace),
              images_total=len(gallery.vars["image_path_iterator"])).write(rundir / run_folder.RESULT)
    _flush()
    # Skip interpreter shutdown: it would wait for non-daemon children the tutorial left running
    # (or crash in an extension's teardown) after the result is already complete.
    # The supervisor kills whatever is left.
    os._exit(1 if error else 0)


if __name__ == "__main__":
    main(sys.argv)

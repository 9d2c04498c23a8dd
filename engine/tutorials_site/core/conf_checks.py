"""What conf.py's sphinx_gallery_conf may ask for, checked before anything runs or is deleted (core.project
raises the problems these return, at the option's line).

- A gallery's folders (`examples_dirs`, `gallery_dirs`) are resolved as the system resolves them (`..` and
  symbolic links followed): each must be a folder of the project of its own, apart from the folders the site
  or the build owns (RESERVED, conf.py's static, template and catalog paths, the engine's package where it lies
  inside the project, the build folder), and apart from every other gallery folder. The build deletes and
  rewrites what a gallery's pages folder holds: a gallery folder that is `_static/` would lose or gain files in
  the repository.
- An option the build gives itself (core.project.REFUSED) is refused in every spelling sphinx-gallery takes.
- A pattern is timed while it matches the galleries' file names: one that backtracks catastrophically is
  reported, not paid for at every file.
- Two names of a gallery that differ only by Unicode normalisation (NFC, NFD) are one name to a reader and to
  some file systems, two to others: refused.
"""

import ast
import contextlib
import posixpath
import re
import signal
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import site_tree

# Folders of the site that no gallery may be, be inside of, or hold, whatever conf.py says, with why.
RESERVED = {
    "_build": "the build folder, BUILDDIR's default",
    "_static": "static files, copied as they are into the site",
    "_templates": "the site's templates",
}
# conf.py's lists of folders Sphinx copies or reads as they are, with why.
PATH_OPTIONS = {
    "html_static_path": "conf.py's html_static_path: static files, copied as they are into the site",
    "html_extra_path": "conf.py's html_extra_path: extra files, copied as they are into the site",
    "templates_path": "conf.py's templates_path: the site's templates",
    "locale_dirs": "conf.py's locale_dirs: the translations' catalogs",
}
# Sphinx's own default of the options above that have one.
PATH_DEFAULTS = {"templates_path": [], "html_static_path": [], "html_extra_path": [], "locale_dirs": ["locales"]}
ENGINE = Path(__file__).resolve().parents[1]  # the engine's package: where the project holds it (this repository)
# How long a pattern may take to match every file name of the galleries; a usual one takes microseconds.
PATTERN_SECONDS = 1.0


@dataclass(frozen=True)
class Placed:
    """A gallery folder conf.py names: its option, the value as written, and where it is (resolved)."""

    option: str  # examples_dirs or gallery_dirs
    written: str
    path: Path


def _last_lines(source: str, found: Callable[[ast.AST], Iterable[tuple[str, int]]]) -> dict[str, int]:
    """{name: the last line} of what FOUND finds at each node of conf.py's SOURCE (none where it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        for name, line in found(node):
            lines[name] = max(line, lines.get(name, 0))
    return lines


def option_lines(source: str) -> dict[str, int]:
    """The line at which conf.py's SOURCE last sets each sphinx_gallery_conf option: a key of the dictionary it
    assigns (a literal or dict(...)), an assignment by key, or a key given to update()."""
    return _last_lines(source, _settings)


def _assigned(node: ast.AST) -> Iterable[tuple[str, int]]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        yield node.id, node.lineno


def name_lines(source: str) -> dict[str, int]:
    """The line at which conf.py's SOURCE last assigns each name (`name = ...`, `for name in ...`, ...)."""
    return _last_lines(source, _assigned)


def _is_conf(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "sphinx_gallery_conf"


def _keys(value: ast.expr | None) -> Iterator[tuple[str, int]]:
    """The option names a dictionary literal or a dict(...) call sets, at their lines."""
    if isinstance(value, ast.Dict):
        yield from ((key.value, key.lineno) for key in value.keys
                    if isinstance(key, ast.Constant) and isinstance(key.value, str))
    elif isinstance(value, ast.Call):
        yield from ((word.arg, word.lineno) for word in value.keywords if word.arg)
        for argument in value.args:
            yield from _keys(argument)


def _settings(node: ast.AST) -> Iterator[tuple[str, int]]:
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if _is_conf(target):
                yield from _keys(node.value)
            elif (isinstance(target, ast.Subscript) and _is_conf(target.value)
                  and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                yield target.slice.value, target.lineno
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
          and _is_conf(node.func.value)):
        yield from _keys(node)


def asks_for(name: str, value: Any) -> bool:
    """Whether a refused option's VALUE asks for what the option does, in any spelling (True, 2, "yes", [...]):
    only its off values pass (absent, None, False, empty; `parallel` 0 or 1, which sphinx-gallery runs one file
    after another; `example_extensions` Python scripts only)."""
    if value is None or value is False:
        return False
    if name == "parallel":
        return not (type(value) is int and value in (0, 1))
    if name == "example_extensions" and isinstance(value, set | frozenset | list | tuple):
        return not set(value) <= {".py"}
    return bool(value) if isinstance(value, str | Mapping | set | frozenset | list | tuple) else True


def gallery_folder(root: Path, written: str) -> str | Path:
    """Where a gallery folder conf.py writes (relative to ROOT) is, resolved, or why it cannot be one (a
    phrase that follows the value)."""
    root = root.resolve()
    if posixpath.isabs(written) or Path(written).is_absolute():
        return "is an absolute path: name a folder of the project by its path from the project's root"
    resolved = (root / written).resolve()
    if not resolved.is_relative_to(root):
        return (f"resolves to {resolved}, outside the project ({root}): name a folder inside it, "
                "without '..'")
    if resolved == root:
        return "is the project's root itself: name a folder inside it"
    if (root / posixpath.normpath(written)).resolve() != resolved:  # '..' after a symbolic link
        return (f"resolves to {resolved.relative_to(root).as_posix()}/ ('..' after a symbolic link), not "
                f"{posixpath.normpath(written)}/: write the folder's path without '..'")
    return resolved


def reserved_folders(root: Path, conf: Mapping[str, Any]) -> dict[Path, str]:
    """The folders (resolved) no gallery folder may overlap, with why: RESERVED, the folders of conf.py's
    PATH_OPTIONS, and the engine's package where it lies inside the project."""
    root = root.resolve()
    found = {(root / site_tree.CONF).resolve(): "the site's configuration"}
    if ENGINE.is_relative_to(root):
        found[ENGINE] = "the engine's package"
    found |= {(root / name).resolve(): why for name, why in RESERVED.items()}
    for option, why in PATH_OPTIONS.items():
        listed = conf.get(option, PATH_DEFAULTS[option]) or []
        for name in [listed] if isinstance(listed, str) else listed:
            if isinstance(name, str):
                found[(root / name).resolve()] = why
    return found


def _nfc(path: Path) -> Path:
    return Path(unicodedata.normalize("NFC", str(path)))


def overlap(folder: Path, other: Path) -> str | None:
    """How FOLDER overlaps OTHER ("is", "is inside", "holds"), names compared once NFC-normalised; None if it
    does not."""
    folder, other = _nfc(folder), _nfc(other)
    if folder == other:
        return "is"
    if folder.is_relative_to(other):
        return "is inside"
    return "holds" if other.is_relative_to(folder) else None


def overlap_problem(placed: Sequence[Placed], reserved: Mapping[Path, str],
                    root: Path) -> tuple[Placed, str] | None:
    """The first gallery folder that overlaps a reserved folder or another gallery folder, and how (a phrase
    that follows its value); None when each is a folder of its own."""
    root = root.resolve()
    for index, folder in enumerate(placed):
        for path, why in reserved.items():
            relation = overlap(folder.path, path)
            if relation:
                shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
                return folder, (f"{relation} {shown}{'/' if path.is_dir() or not path.exists() else ''} ({why}): "
                                "a gallery's folders are folders of their own; name another")
        for other in placed[index + 1:]:
            relation = overlap(folder.path, other.path)
            if relation:
                return folder, (f"{relation} {other.written!r} ({other.option}): each gallery folder (examples_dirs "
                                "and gallery_dirs) is a folder of its own, apart from the others; name another")
    return None


def twin_names(folder: Path) -> tuple[Path, Path] | None:
    """Two entries under FOLDER (at any depth) whose names differ only by Unicode normalisation; None if none."""
    for current in [folder, *sorted(p for p in folder.rglob("*") if p.is_dir() and not p.is_symlink())]:
        seen: dict[str, Path] = {}
        for entry in sorted(current.iterdir()):
            key = unicodedata.normalize("NFC", entry.name)
            if key in seen:
                return seen[key], entry
            seen[key] = entry
    return None


class _TooSlow(Exception):
    """Raised by the timer inside a match that ran past its time."""


@contextlib.contextmanager
def _interrupted_after(seconds: float) -> Iterator[None]:
    """Raise _TooSlow in the code run inside once SECONDS have passed (the regular expression engine checks
    for signals while it backtracks). Only the main thread gets signals, and a timer already set (a test
    runner's) is left alone: there, nothing is interrupted."""
    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def slow_match(pattern: re.Pattern[str], texts: Sequence[str], seconds: float = PATTERN_SECONDS) -> str | None:
    """The text PATTERN was matching when its search of every one of TEXTS ran past SECONDS; None if it finished
    in time. (Where no signal can stop it, the whole search is timed, and the last text named.)"""
    current = None
    start = time.monotonic()
    try:
        with _interrupted_after(seconds):
            for current in texts:
                pattern.search(current)
    except _TooSlow:
        return current
    return current if time.monotonic() - start > seconds else None

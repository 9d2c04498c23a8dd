"""What a tutorial's run depends on: the digests and the record a run's stamp holds (core.runs.used compares them).

The environment fingerprint (environment_fingerprint), the same for every tutorial:

- the run protocol (core.runs.protocol.PROTOCOL): the version of how the engine
  runs a tutorial and what its runner records, which changes only when they do;
  not the bytes of the engine's code, so that an engine release that keeps the
  protocol runs no tutorial again;
- Python's major.minor version;
- the accelerator runtime that only the CUDA lock installs (nvidia-*, triton,
  ...), by its pins in requirements-cuda.lock, whatever is installed: torch
  loads it as libraries, which no run records, and by the pins a GPU shard's
  runs are current on the CPU machine that assembles the site from them;
- what every Python start-up runs: each site-packages folder's `.pth` files and
  any `sitecustomize` / `usercustomize` module;
- the modules of no distribution (loose_modules) in the folders of the builder's
  PYTHONPATH outside the project, which tutorials get: a distribution there counts
  by its release in the runs that import it, like any other;
- what conf.py decides of a run (run_configuration): the sphinx_gallery_conf
  options the runner reads (RUN_OPTIONS), Sphinx's `default_role` (code links)
  and the variables tutorials get (`tutorials_environment`); not the theme,
  the templates, the languages or any other setting.

The source digest (source_digest), per tutorial: its code, not its prose; that is,
the code blocks as sphinx-gallery splits the script (code_blocks: their comments
included, each block on its own, not the blank lines around it), every setting
comment line wherever it stands (`# tutorials-*:`, `# sphinx_gallery_*`), the
docstring only where the code names `__doc__`, and the files the script
declares it reads (`# tutorials-reads: PATTERN ...` comment lines, core.runs.runs),
which must lie inside the project: what its run cannot be seen to read (files
read by C code or by programs that are not Python, folders listed). Beside the
digest, the line each code block starts at: a run whose output cites the
script's line numbers depends on them too (core.runs.currency).

And per run, what it used while it ran (core.runs.used, recorded by the run itself):
the project's files it opened or imported, by digest, and the installed
distributions it imported, by name and release (torch 2.13.0+cpu and
2.13.0+cu130 are both 2.13.0). No other distribution counts: installing the
test tools or a Sphinx extension runs nothing again.

Not in any: the values of environment variables (the machine's own), the
hardware, the build folder's layout, and modules of the project that conf.py
names as callables (name them so their module is hashed with a tutorial, or
re-run with run_stale_examples).
"""

import ast
import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import sys
import tokenize
from dataclasses import dataclass
from importlib import metadata
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .. import project, tutorial_settings
from ..errors import SiteError
from ..sphinx_gallery_formats import CONFIG_COMMENT, RUN_OPTIONS, TEXT_BLOCK_HEADER
from . import used, visibility
from .isolation import SETTING, site_folders
from .protocol import PROTOCOL
from .records import Used
from .used import Present, SourceDigest, release

ENGINE = Path(__file__).resolve().parents[2]  # the engine's package: its runs are versioned by PROTOCOL

# The two torch builds' locks: what only the CUDA one installs is the accelerator runtime.
TORCH_LOCKS = ("requirements-cpu.lock", "requirements-cuda.lock")
_WILDCARD = re.compile(r"[*?[]")  # what makes a part of a glob pattern match more than its own name


def installed_version(name: str) -> str:
    """The installed version of the distribution NAME, `not installed` where it is not."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def startup_hooks() -> list[Path]:
    """What every Python start-up here runs besides the interpreter: .pth files, sitecustomize, usercustomize."""
    hooks = [path for folder in site_folders() for path in sorted(folder.glob("*.pth"))]
    for name in ("sitecustomize", "usercustomize"):
        spec = PathFinder.find_spec(name)  # found as at start-up, without importing it
        if spec is not None and spec.has_location and spec.origin is not None:
            hooks.append(Path(spec.origin))
    return hooks


@dataclass(frozen=True)
class RequirementLine:
    """One requirement of a requirements or lock file: what it asks for, and the hashes it accepts."""

    requirement: Requirement
    hashes: tuple[str, ...]  # as written after --hash=: "sha256:<hex>"


def read_requirements(path: Path) -> dict[str, RequirementLine]:
    """{canonical name (PEP 503: Foo_Bar and foo-bar are one): its line} of a requirements or lock file, in
    pip's format: a line continues after a backslash; comments and options (-r, -c, ...) are left out.

    Raises SiteError naming the file and line of a requirement that cannot be read.
    """
    found: dict[str, RequirementLine] = {}
    pending, start = "", 0
    for number, physical in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        start = start if pending else number
        if physical.endswith("\\"):
            pending += physical[:-1] + " "
            continue
        text, pending = (pending + physical).split(" #", 1)[0].strip(), ""
        if not text or text.startswith(("#", "-")):
            continue
        written, *hashes = text.split(" --hash=")
        try:
            requirement = Requirement(written)
        except InvalidRequirement as error:
            raise SiteError(f"{path}:{start}: not a requirement: {error}") from None
        found[canonicalize_name(requirement.name)] = RequirementLine(requirement, tuple(h.strip() for h in hashes))
    return found


def _pins(lock: Path) -> dict[str, str]:
    """{name: version} of the `name==version` lines of a lock."""
    if not lock.exists():
        return {}
    pinned = {}
    for name, line in read_requirements(lock).items():
        exact = [spec.version for spec in line.requirement.specifier if spec.operator == "=="]
        if exact:
            pinned[name] = exact[0]
    return pinned


def accelerator_pins(root: Path) -> dict[str, str]:
    """The distributions only the CUDA build of torch installs, with their pins in its lock."""
    cpu, cuda = (_pins(Path(root) / name) for name in TORCH_LOCKS)
    return {name: release(version) for name, version in cuda.items() if name not in cpu} if cpu else {}


def _named(value: Any) -> str:
    """A callable by its import path (an address would differ in every process), anything else by its repr."""
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '')}.{value.__qualname__}"
    return repr(value)


def canonical_json(value: Any) -> str:
    """VALUE (settings from conf.py) as JSON that is the same in every process: keys sorted, callables named."""
    return json.dumps(value, sort_keys=True, default=_named)


def run_configuration(root: Path) -> str:
    """What conf.py decides of a run, as canonical JSON."""
    site_project = project.current(Path(root))
    chosen = {"sphinx_gallery_conf": {key: site_project.options[key] for key in RUN_OPTIONS
                                      if key in site_project.options},
              "default_role": site_project.conf.get("default_role"), SETTING: site_project.conf.get(SETTING)}
    return canonical_json(chosen)


def loose_modules(folder: Path) -> list[Path]:
    """The files of the modules in FOLDER (a PYTHONPATH folder) that no distribution installed there owns (no
    `*.dist-info` names them): top-level `.py` files and packages (folders with an `__init__.py`), whose changes no
    release number tells; the engine's own package left out (its runs are versioned by PROTOCOL)."""
    owned: set[str] = set()
    for info in Path(folder).glob("*.dist-info"):
        with contextlib.suppress(OSError):
            owned.update((info / "top_level.txt").read_text(encoding="utf-8").split())
        with contextlib.suppress(OSError):
            owned.update(line.split("/", 1)[0].removesuffix(".py")
                         for line in (info / "RECORD").read_text(encoding="utf-8").splitlines())
    files: list[Path] = []
    for entry in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else []:
        if entry.name.removesuffix(".py") in owned or entry.resolve() == ENGINE:  # the engine counts by PROTOCOL
            continue
        if entry.suffix == ".py" and entry.is_file():
            files.append(entry)
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            files += sorted(p for p in entry.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files


def environment_fingerprint(root: Path, pythonpath: str = "") -> str:
    """The digest of what every run depends on (see above), for the project at ROOT, tutorials started with
    PYTHONPATH (the builder's: its folders outside the project count by their loose modules)."""
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(label.encode() + b"\0" + data + b"\0")

    add("python", f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    add("protocol", PROTOCOL.encode())
    for name, version in sorted(accelerator_pins(root).items()):
        add(name, version.encode())
    for path in startup_hooks():
        add(path.name, path.read_bytes())
    add("conf.py", run_configuration(root).encode())
    for folder in (Path(entry) for entry in pythonpath.split(os.pathsep) if entry):
        if not _inside(folder, root):  # the project's own files count in each run's record
            for path in loose_modules(folder):
                add(str(path), path.read_bytes())
    return digest.hexdigest()


def _inside(path: Path, root: Path) -> bool:
    """Whether PATH, its links resolved, lies in the project at ROOT."""
    return path.resolve().is_relative_to(root.resolve())


def declared_reads(source: Path, label: str, root: Path) -> list[Path]:
    """The files SOURCE's `# tutorials-reads:` lines name (a folder: every file in it), sorted.

    Raises SiteError naming LABEL and the line when a pattern names no path, matches nothing, or names a path
    outside the project at ROOT (absolute, through `..`, or by a link that leads out).
    """
    folder, found = Path(source).parent, set()
    text = Path(source).read_text(encoding="utf-8", errors="replace")
    for line, patterns in tutorial_settings.setting_comments(text, "reads"):
        if not patterns.split():
            raise SiteError(f"{label}:{line}: tutorials-reads: no path given; write paths relative to the "
                            "tutorial's folder, globs allowed (# tutorials-reads: data/*.csv)")
        for pattern in patterns.split():
            # Its part before any wildcard (all of an absolute path) must stay inside, whatever matches.
            fixed = Path(*itertools.takewhile(lambda part: not _WILDCARD.search(part), Path(pattern).parts))
            matched = [] if Path(pattern).is_absolute() else sorted(folder.glob(pattern))
            outside = [path for path in [folder / fixed, *matched] if not _inside(path, root)]
            if outside:
                raise SiteError(f"{label}:{line}: tutorials-reads: {pattern!r} names a path outside the project "
                                f"({outside[0].resolve()}); a tutorial declares only the project's files, relative "
                                "to its folder: copy the file into the project")
            files = [f for m in matched for f in ([m] if m.is_file() else sorted(m.rglob("*"))) if f.is_file()]
            leading_out = next((f for f in files if not _inside(f, root)), None)
            if leading_out is not None:
                link = next((part for part in [leading_out, *leading_out.parents] if part.is_symlink()), leading_out)
                raise SiteError(f"{label}:{line}: tutorials-reads: {pattern!r} holds a link that leads outside the "
                                f"project: {os.path.relpath(link, folder)} -> {link.resolve()}; a tutorial declares "
                                "only the project's files: copy the file into the project")
            if not files:
                raise SiteError(f"{label}:{line}: tutorials-reads: {pattern!r} matches no file; paths are relative "
                                "to the tutorial's folder (globs allowed): add the file or fix the line")
            found.update(files)
    return sorted(found)


# The lines of a script, split at "\n" alone, as sphinx-gallery's parser splits them.
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
# Comment lines that are settings, wherever they stand (in a text block too): ours (core.runs.runs) and sphinx-gallery's
# (CONFIG_COMMENT).
_OUR_SETTING_LINE = re.compile(rf"[ \t]*#[ \t]*tutorials-({'|'.join(tutorial_settings.SETTINGS)}):[^\n]*")


def _is_text_header(line: str) -> bool:
    """Whether LINE (with its end) starts a text block: the block is it and the lines right after it that start with
    `#`. sphinx-gallery's parser wants the header's line ended."""
    return line.endswith("\n") and TEXT_BLOCK_HEADER.fullmatch(line[:-1]) is not None


def _is_setting(line: str) -> bool:
    """Whether LINE is a setting comment, ours or sphinx-gallery's."""
    return bool(_OUR_SETTING_LINE.fullmatch(line.rstrip("\n")) or CONFIG_COMMENT.match(line))


def _docstring_rows(text: str) -> int:
    """How many lines the script's docstring takes from the top, as sphinx-gallery finds it (up to the line where
    the first string token ends); 0 where the script has none or cannot be parsed (all of it is then code)."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return 0
    first = module.body[0] if module.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
        return 0
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return next(token.end[0] for token in tokens if token.type == tokenize.STRING)


def code_blocks(text: str) -> list[tuple[int, str]]:
    """(first line, content) of each code block of the script TEXT, as sphinx-gallery splits it
    (tests/test_fingerprint.py holds the two to each other): after the docstring, what lies between text blocks
    and is not blank. A script that cannot be parsed is split the same, from its first line."""
    lines = _LINE.findall(text)
    row = _docstring_rows(text)
    blocks: list[tuple[int, str]] = []
    start, code = row + 1, ""
    while row < len(lines):
        if not _is_text_header(lines[row]):
            code += lines[row]
            row += 1
            continue
        if code.strip():
            blocks.append((start, code))
        row += 1
        while row < len(lines) and lines[row].startswith("#"):
            row += 1
        start, code = row + 1, ""
    if code.strip():
        blocks.append((start, code))
    return blocks


def _code_text(path: Path) -> tuple[bytes, tuple[int, ...]]:
    """What of the script at PATH its run depends on (see above), as bytes, and where its code blocks start."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # read as sphinx-gallery reads it
    except UnicodeDecodeError:
        return data, ()  # never runs (Python refuses it): all of it counts
    blocks, lines, docstring = code_blocks(text), _LINE.findall(text), _docstring_rows(text)
    parts = [("code", content.strip("\n")) for _, content in blocks]
    parts += [("setting", line.strip()) for line in lines[docstring:] if _is_setting(line)]
    if any("__doc__" in part for _, part in parts):
        parts.append(("docstring", "".join(lines[:docstring])))
    return b"".join(f"{kind}\0{part}\0".encode() for kind, part in parts), tuple(line for line, _ in blocks)


def source_digest(path: Path, label: str | None, root: Path, declared: list[Path] | None = None) -> SourceDigest:
    """What a tutorial brings to its run (see above): its code and the files it declares it reads (in the project
    at ROOT; DECLARED where the caller read them already), digested, and where its code blocks start. LABEL names
    the script in errors. What else of the project it sees counts by tutorial_digest and its Used record."""
    path = Path(path)
    code, lines = _code_text(path)
    digest = hashlib.sha256(code)
    for other in declared_reads(path, label or str(path), root) if declared is None else declared:
        digest.update(b"\0" + os.path.relpath(other, path.parent).encode() + b"\0" + other.read_bytes())
    return SourceDigest(digest.hexdigest(), lines)


def present(root: Path, sandboxed: bool = True, runs_key: bytes = b"", pythonpath: str = "") -> Present:
    """The state of the project at ROOT and of the environment that runs are compared with, now, by a build that runs
    tutorials SANDBOXED (or not), with PYTHONPATH, and holds RUNS_KEY (b"": none, core.runs.signing)."""
    return Present(Path(root), environment_fingerprint(root, pythonpath), sandboxed, runs_key)


def seen_by(site: project.Project, tutorial: project.Tutorial) -> visibility.Visible:
    """What of SITE's project TUTORIAL's run sees (core.runs.visibility), its declared files included."""
    return visibility.visible(site, tutorial, declared_reads(tutorial.path, tutorial.label, tutorial.root))


def tutorial_digest(site: project.Project, tutorial: project.Tutorial) -> SourceDigest:
    """What TUTORIAL brings to its run: its source digest, with the names of the project's files its run sees (a file
    added to its folder or taken away makes its run stale; an edit of one does too, by its Used record)."""
    declared = declared_reads(tutorial.path, tutorial.label, tutorial.root)
    base = source_digest(tutorial.path, tutorial.label, tutorial.root, declared)
    # Of its folder and its declared files (conf.py's sys.path modules count by the Used record's digests alone: the
    # provenance directive, in Sphinx's process, computes this digest too, without the build's sys.path).
    names = "\0".join(visibility.visible(site, tutorial, declared, modules=False).files).encode()
    return SourceDigest(hashlib.sha256(base.code.encode() + b"\0seen\0" + names).hexdigest(), base.lines)


def used_by(run_dir: Path, site: project.Project, tutorial: project.Tutorial) -> Used:
    """What TUTORIAL's run in RUN_DIR used (core.runs.used.record): every project file it could see, and the
    distributions it imported, the accelerator runtime counted by its pins instead."""
    return used.record(run_dir, tutorial.root, seen_by(site, tutorial).files, accelerator_pins(tutorial.root))

"""The records a build keeps on disk: each a frozen dataclass with one reader and one writer.

- RunRecord, a run folder's result.json: what the runner recorded of each code block (the
  supervisor adds the run's time, or writes it from what a runner that did not finish left);
- Stamp, a run folder's stamp.json (and a tutorial page's <meta>): what vouches that the run
  stands for the current source in the current environment, with what it used (core.runs.stamps, core.runs.used);
- BuildInfo, <html>/build.json: what `tutorials-site publish` needs to know of a build;
- ShardRecord, <builddir>/shard.json: what a `SHARD=i/N` build executed, for `tutorials-site assemble`;
- RunOptions, a run folder's options.json: what the runner needs of conf.py, written by the build.

The JSON is the dataclass's fields (nested records as objects, tuples as lists) plus `format`, the
version of its layout. A reader refuses a record of another format, a missing or unknown field or a
value of the wrong type (RecordError): a run recorded in another format is run again, never misread.
A change to what a record holds or means raises its FORMAT. A field added with a default, read from a
record written before it existed, gets that default.
"""

import base64
import dataclasses
import json
import pickle
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from ..errors import SiteError
from ..files import read_regular, write_atomically
from ..sphinx_gallery_formats import GALLERY_OPTIONS
from ..terminal import DEFAULT_LIMITS, OutputLimits
from . import run_folder

if TYPE_CHECKING:
    from _typeshed import DataclassInstance  # what dataclasses.fields() takes: a dataclass

T = TypeVar("T", bound="DataclassInstance")


class RecordError(SiteError):
    """A record that cannot be read as its type: damaged, or written in another format."""


def _decode(kind: Any, value: Any, where: str) -> Any:
    """VALUE as type KIND (a dataclass, a tuple[X, ...], X | None, a dict or a plain type), or RecordError."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any:
        return value
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        (inner,) = [arg for arg in args if arg is not type(None)]
        return _decode(inner, value, where)
    if origin is tuple and isinstance(value, list):
        return tuple(_decode(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
    if origin is dict and isinstance(value, dict):
        return value
    if isinstance(kind, type) and dataclasses.is_dataclass(kind) and isinstance(value, dict):
        return _fields(kind, value, where)
    if kind is float and type(value) is int:
        return float(value)
    if isinstance(kind, type) and type(value) is kind:
        return value
    raise RecordError(f"{where}: {value!r} is not of type {getattr(kind, '__name__', kind)}")


def from_dict(cls: type[T], data: dict[str, Any], where: str) -> T:
    """The dataclass CLS of DATA (its fields, as JSON holds them), read as strictly as a record; WHERE names it in
    errors. For JSON that is no record of its own (versions.json's entries, whose layout is public)."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: {data!r} is not of type {cls.__name__}")
    return _fields(cls, data, where)


def _fields(cls: type[T], data: dict[str, Any], where: str) -> T:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RecordError(f"{where}: unknown field {unknown[0]!r}")
    missing = [name for name, f in fields.items() if name not in data
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise RecordError(f"{where}: no {missing[0]!r}")
    return cls(**{name: _decode(hints[name], value, f"{where}.{name}") for name, value in data.items()})


@dataclasses.dataclass(frozen=True)
class Record:
    """The reader and writer of every record type; a subclass sets FORMAT and NAME."""

    FORMAT: ClassVar[int]
    NAME: ClassVar[str]  # what it is, as messages name it

    def to_json(self) -> str:
        """The record as its file holds it: its fields and its format."""
        return json.dumps({**dataclasses.asdict(self), "format": self.FORMAT}, indent=1, sort_keys=True)

    def to_dict(self) -> dict[str, Any]:
        """As its JSON holds it (lists, not tuples)."""
        data: dict[str, Any] = json.loads(self.to_json())
        return data

    @classmethod
    def from_json(cls, text: str | bytes, where: str) -> Self:
        """The record in TEXT; WHERE names it in errors. Raises RecordError."""
        try:
            data = json.loads(text)
        except ValueError as error:
            raise RecordError(f"{where}: damaged, not JSON ({error})") from None
        if not isinstance(data, dict) or data.get("format") != cls.FORMAT:
            found = data.get("format", "none") if isinstance(data, dict) else "none"
            raise RecordError(f"{where}: a {cls.NAME} of format {found}; this build reads format {cls.FORMAT}")
        return _fields(cls, {key: value for key, value in data.items() if key != "format"}, where)

    @classmethod
    def read(cls, path: Path) -> Self | None:
        """The record at PATH; None when there is none. Raises RecordError when it is damaged or of
        another format."""
        try:
            text = read_regular(path)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise RecordError(f"{path}: cannot be read: {error.strerror}") from None
        return cls.from_json(text, str(path))

    def write(self, path: Path) -> None:
        """Atomically: a reader never sees half a record."""
        write_atomically(path, self.to_json() + "\n")


@dataclasses.dataclass(frozen=True)
class Hardware:
    """Where a tutorial ran, as the build saw it (core.runs.stamping.hardware_here), never as the run says."""

    device: str  # "CPU", or the first GPU's name
    gpus: int
    machine: str  # platform.machine()
    torch: str | None  # its version, None where torch is not installed
    cuda: str | None  # torch's CUDA version, None for a CPU build


@dataclasses.dataclass(frozen=True)
class BlockRecord:
    """One code block that ran: data alone, from which the build writes every byte of the page's reST itself (a run
    can write this record too: nothing in it is markup the build trusts)."""

    line: int  # its first line of code
    # The text of each output block the page shows under it: what it printed (with its last value's text repr),
    # and, for a block that failed, its error last (a traceback, or how a run that did not finish ended).
    texts: tuple[str, ...]
    images: tuple[str, ...]  # its figures, relative to the run folder's page/
    alts: tuple[str, ...] = ()  # each figure's alt text (a matplotlib figure's titles), "" where it has none
    html: str | None = None  # its last value's HTML repr, sanitised by the build before a page shows it
    failed: bool = False  # its last text is its error


@dataclasses.dataclass(frozen=True)
class RunFile:
    """One file of a run as its stamp seals it (core.runs.seal): whatever of the run reaches a page is one of these."""

    path: str  # relative to the run folder, with /
    sha256: str
    size: int


@dataclasses.dataclass(frozen=True)
class RunError:
    """Where and how a run failed."""

    line: int  # where it failed (a traceback's last line in the script), or the block that ran
    block_line: int  # the block that was running
    message: str  # one line


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunRecord(Record):
    """result.json: what a run showed."""

    FORMAT: ClassVar[int] = 2  # 2: a block's output as data (texts, figures, alt texts, HTML repr), no reST
    NAME: ClassVar[str] = "run record (result.json)"

    blocks: tuple[BlockRecord, ...]
    error: RunError | None
    images_total: int = 0  # figures saved (sphinx_gallery_thumbnail_number = -1 counts from it)
    code_objects: dict[str, Any] = dataclasses.field(default_factory=dict)  # for code links and backreferences
    gpu_peak_bytes: tuple[int, ...] = ()  # per GPU, as the run says (where it ran, the build says: Stamp.hardware)
    seconds: float = 0.0  # the wall time of the runner's process, set by the supervisor


@dataclasses.dataclass(frozen=True)
class UsedFile:
    """A file of the project a run read, as it was then."""

    path: str  # relative to the project's root
    sha256: str  # core.runs.used.ABSENT: it tried to open it, and there was none


@dataclasses.dataclass(frozen=True)
class UsedDistribution:
    """An installed distribution a run imported, as it was then."""

    name: str  # canonical (PEP 503)
    version: str  # its release, without a local label


@dataclasses.dataclass(frozen=True)
class Used:
    """What a run used while it ran, besides its source and the environment (core.runs.used)."""

    files: tuple[UsedFile, ...]
    distributions: tuple[UsedDistribution, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Stamp(Record):
    """stamp.json: that a run of `source` in `environment` showed `outputs` (core.runs.stamps)."""

    FORMAT: ClassVar[int] = 3  # 3: `source` is of the code alone (prose edits run nothing), with its lines
    NAME: ClassVar[str] = "execution stamp (stamp.json)"

    source: str  # core.runs.fingerprint.source_digest's code: the script's code blocks and settings, the files it declares
    environment: str  # core.runs.fingerprint.environment_fingerprint
    outputs: str  # core.runs.stamps.outputs_digest of what the run shows
    seconds: float
    failed: bool  # ended in an error (result.json's): it raised, or it did not finish (unfinished)
    peak_rss_mb: float  # of the tutorial's whole process tree
    gpu_peak_mb: tuple[float, ...]  # per GPU
    hardware: Hardware
    commit: str  # the commit it ran from, +changes when the work tree differed
    date: str  # "YYYY-MM-DD HH:MM UTC"
    files: tuple[RunFile, ...]  # every file of the run but this stamp, sealed (core.runs.seal); none in a page's copy
    needs_gpus: int = 0  # the GPUs it declares it needs (core.runs.needs); more than hardware.gpus: run on less
    # Failed without raising: timed out, killed, or exited before its end (no expected_failing_examples excuses it).
    unfinished: bool = False
    # Run in its sandbox (core.runs.sandbox), not under SANDBOX=off. (A stamp written before there was one is of
    # another engine's run code: its environment fingerprint is not current, whatever this says.)
    sandboxed: bool = True
    network: bool = False  # its sandbox shared the machine's network (its tutorials-needs line)
    # The project files and distributions it used (core.runs.used); None: stamped before they were recorded (not current).
    used: Used | None = None
    code_lines: tuple[int, ...] = ()  # the first line of each code block of the script that ran
    # Its output cites the script's line numbers (a traceback, a warning) or it failed (its error has a line):
    # it stands for the script only while its code stays on those lines (core.runs.currency).
    cites_lines: bool = False
    # In a page's copy only (core.runs.stamps.page_copy): False where its run was taken from elsewhere (REUSE, a
    # shard) by a build without the runs key, which could not verify who made it (core.runs.signing).
    verified: bool = True


# A build's record beside its pages (BuildInfo): written last, by a build that succeeded.
BUILD_RECORD = "build.json"


@dataclasses.dataclass(frozen=True, kw_only=True)
class VersionEntry:
    """One version in versions.json (core.site.versions): what a build's BuildInfo says of it."""

    name: str
    label: str
    release: bool
    torch: str
    languages: tuple[str, ...]  # URL segments
    built: str  # "YYYY-MM-DD HH:MM UTC"
    path: str  # "<name>/"


@dataclasses.dataclass(frozen=True, kw_only=True)
class BuildInfo(VersionEntry, Record):
    """<html>/build.json: a build's entry in versions.json and whether it executed the tutorials."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "build record (build.json)"

    executed: bool  # false for html-noplot
    partial: str = ""  # TUTORIALS of a build that executed only those (check and publish refuse it)

    def entry(self) -> VersionEntry:
        """Its entry in versions.json."""
        return VersionEntry(**{field.name: getattr(self, field.name) for field in dataclasses.fields(VersionEntry)})


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShardRecord(Record):
    """<builddir>/shard.json: the tutorials (keys) of a SHARD=i/N build's share, whose runs it holds."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "shard record (shard.json)"

    shard: str  # "i/N" or "<class>:i/N"
    tutorials: tuple[str, ...]
    executed: tuple[str, ...]  # those it executed; the others it took from REUSE


@dataclasses.dataclass(frozen=True, kw_only=True)
class Dropped(Record):
    """out/dropped.json: the bytes of each code block's output (by index) cut from its file to keep the run
    within its output limits (commands/output_guard.py writes it, the runner reads it)."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "output cut (dropped.json)"
    FILE: ClassVar[str] = run_folder.DROPPED  # in a run's out/

    blocks: tuple[int, ...]


OPTIONS = run_folder.OPTIONS  # in a run folder, and in the runner's output folder: the RunOptions it reads


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunOptions(Record):
    """options.json: what the runner needs of conf.py, as the build evaluated it (the runner never evaluates
    conf.py), and the output limits the run is recorded under (a run under others is not current)."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = "runner options (options.json)"

    root: str  # the project: tracebacks show its files relative to it
    images: str  # where the page's figures go: <gallery_dir>/<section>/images
    capture_repr: tuple[str, ...]
    ignore_repr_types: str
    own_callables: bool  # conf.py names scrapers, reset_argv or reset_modules of its own
    inspect_global_variables: bool
    default_role: str  # Sphinx's, which decides what a `name` in the text refers to
    output_limits: OutputLimits = DEFAULT_LIMITS  # how much of its output is recorded and shown
    gallery_conf: str = base64.b64encode(pickle.dumps({})).decode()  # Project.gallery_conf_pickle, base64
    sys_path: tuple[str, ...] = ()  # the folders conf.py puts on sys.path

    @classmethod
    def defaults(cls, root: Path | str, images: str, output_limits: OutputLimits = DEFAULT_LIMITS) -> Self:
        """sphinx-gallery's defaults, for a script outside any project's galleries (tests, benchmarks)."""
        return cls(root=str(root), images=images, capture_repr=GALLERY_OPTIONS["capture_repr"].default,
                   ignore_repr_types=GALLERY_OPTIONS["ignore_repr_types"].default, own_callables=False,
                   inspect_global_variables=GALLERY_OPTIONS["inspect_global_variables"].default, default_role="",
                   output_limits=output_limits)

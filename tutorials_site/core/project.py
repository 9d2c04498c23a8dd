"""The project as conf.py declares it: its galleries, their sections and tutorials, and the options.

conf.py's `sphinx_gallery_conf` is the configuration, as in any sphinx-gallery
project; this module is its one reader outside Sphinx. The discovery follows
sphinx-gallery's own rules, so that the tutorials the build executes are the
pages sphinx-gallery renders:

- each `examples_dirs[i]` becomes the gallery `gallery_dirs[i]`; it needs a
  header (GALLERY_HEADER.rst, or README.txt / README.rst);
- a subfolder with a header is a section; sphinx-gallery renders one level of
  them, so a deeper folder, or a subfolder without a header, that holds
  scripts is reported (`Project.ignored_folders`), never skipped in silence;
- a script is a tutorial unless its file name matches `ignore_pattern` (a
  helper module: it stays importable, it gets no page);
- a tutorial is executed when its path matches `filename_pattern`; one that
  does not is shown without output, as sphinx-gallery shows it.
"""

import fnmatch
import os
import re
import runpy
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from .errors import SiteError, UsageError
from .layout import ROOT

# The names sphinx-gallery looks for a gallery header under, in its order (.txt, then the source suffixes sorted).
HEADER_NAMES = tuple(f"{stem}{ext}" for ext in (".txt", ".md", ".rst") for stem in ("GALLERY_HEADER", "README", "readme"))
DEFAULT_FILENAME_PATTERN = r"/plot"
DEFAULT_IGNORE_PATTERN = r"__init__\.py"

# Options whose effect is ours to give, since sphinx-gallery executes nothing here (see README):
# every other option of sphinx-gallery's configuration reference reaches it unchanged.
REFUSED = {
    "parallel": "each tutorial already runs in a process of its own; the build runs them one after "
                "another (sharded over CI runners with SHARD)",
    "junit": "the build reports failures itself, as file:line lines that CI shows as annotations",
    "example_extensions": "only Python scripts (.py) are executed here",
    "filetype_parsers": "only Python scripts (.py) are executed here",
}


class ConfError(SiteError):
    """conf.py declares something the build cannot use: the message names the option."""


@dataclass(frozen=True)
class Gallery:
    """One gallery: a source folder of scripts and the folder of their pages."""

    examples_dir: str  # the source folder, relative to the project root: beginner_source
    gallery_dir: str  # the folder of its pages: beginner


@dataclass(frozen=True)
class Tutorial:
    """One tutorial script of a gallery."""

    root: Path
    gallery: Gallery
    rel: PurePosixPath  # the script, relative to its gallery's source folder: basics/tensorqs_tutorial.py
    executed: bool  # matches filename_pattern

    @property
    def path(self) -> Path:
        """The script's file."""
        return self.root / self.gallery.examples_dir / self.rel

    @property
    def label(self) -> str:
        """The script as messages name it: beginner_source/basics/tensorqs_tutorial.py."""
        return f"{self.gallery.examples_dir}/{self.rel}"

    @property
    def key(self) -> str:
        """Its name in runs, shards and durations: beginner_source/basics/tensorqs_tutorial."""
        return f"{self.gallery.examples_dir}/{self.rel.with_suffix('')}"

    @property
    def page(self) -> str:
        """The docname of its page: beginner/basics/tensorqs_tutorial."""
        return f"{self.gallery.gallery_dir}/{self.rel.with_suffix('')}"

    @property
    def ref_label(self) -> str:
        """sphinx-gallery's reference label of its page: sphx_glr_beginner_basics_tensorqs_tutorial.py."""
        return "sphx_glr_" + f"{self.gallery.gallery_dir}/{self.rel}".replace("/", "_")

    @property
    def section(self) -> PurePosixPath:
        """Its folder inside the gallery ('.' at the gallery's top)."""
        return self.rel.parent


def read_conf(root: Path = ROOT) -> dict[str, Any]:
    """conf.py's names, evaluated as Sphinx evaluates it (its own folder as __file__'s)."""
    path = Path(root) / "conf.py"
    try:
        return runpy.run_path(str(path))
    except SiteError:
        raise
    except Exception as error:  # conf.py is user code: say where it broke
        raise ConfError(f"{path}: could not be evaluated: {type(error).__name__}: {error}") from None


def _as_list(value: Any, name: str) -> list[str]:
    values = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in values):
        raise ConfError(f"conf.py: sphinx_gallery_conf[{name!r}] must be a folder name or a list of them")
    return values


def _pattern(options: Mapping[str, Any], name: str, default: str) -> re.Pattern[str]:
    value = options.get(name, default)
    try:
        return re.compile(value)
    except (re.error, TypeError) as error:
        raise ConfError(f"conf.py: sphinx_gallery_conf[{name!r}] = {value!r} is not a regular expression: {error}") from None


def header(folder: Path) -> Path | None:
    """The gallery header of a folder, as sphinx-gallery looks for it."""
    return next((folder / name for name in HEADER_NAMES if (folder / name).is_file()), None)


@dataclass(frozen=True)
class Project:
    """The project conf.py at ROOT declares (see above)."""

    root: Path
    options: Mapping[str, Any]  # conf.py's sphinx_gallery_conf, as written
    conf: Mapping[str, Any] = field(default_factory=dict, compare=False)  # conf.py's other names

    @classmethod
    def read(cls, root: Path = ROOT) -> "Project":
        """The project at ROOT, from its conf.py; ConfError where conf.py asks for what the build cannot do."""
        conf = read_conf(root)
        options = conf.get("sphinx_gallery_conf")
        if not isinstance(options, Mapping):
            raise ConfError(f"{Path(root) / 'conf.py'}: no sphinx_gallery_conf dictionary")
        for name, why in REFUSED.items():
            if name in options and options[name] not in (False, "", None, {}, 1) and not (
                    name == "example_extensions" and set(options[name]) == {".py"}):
                raise ConfError(f"conf.py: sphinx_gallery_conf[{name!r}] is not supported here: {why}")
        return cls(Path(root), dict(options), {k: v for k, v in conf.items() if not k.startswith("__")})

    @cached_property
    def galleries(self) -> tuple[Gallery, ...]:
        """conf.py's galleries, in its order, each checked to exist inside the project with a header."""
        examples = _as_list(self.options.get("examples_dirs", []), "examples_dirs")
        pages = _as_list(self.options.get("gallery_dirs", []), "gallery_dirs")
        if len(examples) != len(pages) or not examples:
            raise ConfError("conf.py: sphinx_gallery_conf needs as many 'gallery_dirs' as 'examples_dirs' "
                            f"(got {len(examples)} and {len(pages)})")
        galleries = []
        for src, out in zip(examples, pages):
            src, out = PurePosixPath(src).as_posix(), PurePosixPath(out).as_posix()
            if src.startswith(("/", "..")) or out.startswith(("/", "..")):
                raise ConfError(f"conf.py: gallery {src!r} -> {out!r}: folders must be inside the project")
            if not (self.root / src).is_dir():
                raise ConfError(f"conf.py: sphinx_gallery_conf['examples_dirs']: {src}/ does not exist")
            if header(self.root / src) is None and not self._own_index(self.root / src):
                raise ConfError(f"{src}/: a gallery needs a header: GALLERY_HEADER.rst or README.txt "
                                "(reST introducing the gallery)")
            galleries.append(Gallery(src, out))
        return tuple(galleries)

    @cached_property
    def filename_pattern(self) -> re.Pattern[str]:
        """What a script's path matches to be executed."""
        return _pattern(self.options, "filename_pattern", DEFAULT_FILENAME_PATTERN)

    @cached_property
    def ignore_pattern(self) -> re.Pattern[str]:
        """What a script's file name matches to be no tutorial (a helper module)."""
        return _pattern(self.options, "ignore_pattern", DEFAULT_IGNORE_PATTERN)

    def scripts(self, folder: Path) -> list[Path]:
        """The gallery scripts of a folder, as sphinx-gallery collects them (helper modules left out)."""
        return sorted(p for p in folder.glob("*.py") if p.is_file() and not self.ignore_pattern.search(p.name))

    def copied(self, name: str) -> bool:
        """Whether sphinx-gallery copies a file of this name into the gallery's pages (copyfile_regex)."""
        regex = self.options.get("copyfile_regex", "")
        return bool(regex) and bool(re.match(regex, name))

    def _own_index(self, folder: Path) -> bool:
        """A folder with an index.rst of its own that copyfile_regex copies: sphinx-gallery writes none there."""
        return self.copied("index.rst") and (folder / "index.rst").is_file()

    def sections(self, gallery: Gallery) -> list[Path]:
        """The gallery's folder and its sections: subfolders with a header (every subfolder, where the
        gallery has an index.rst of its own), as sphinx-gallery finds them."""
        top = self.root / gallery.examples_dir
        every = self._own_index(top)
        return [top] + sorted(d for d in top.iterdir() if d.is_dir() and d.name != "__pycache__"
                              and (every or header(d) is not None))

    @cached_property
    def tutorials(self) -> tuple[Tutorial, ...]:
        """Every tutorial of every gallery, in a stable order (gallery, section, file name)."""
        found = []
        for gallery in self.galleries:
            top = self.root / gallery.examples_dir
            for section in self.sections(gallery):
                for path in self.scripts(section):
                    found.append(Tutorial(self.root, gallery, PurePosixPath(path.relative_to(top).as_posix()),
                                          bool(self.filename_pattern.search(str(path)))))
        return tuple(found)

    @cached_property
    def ignored_folders(self) -> tuple[str, ...]:
        """Folders holding scripts that no gallery shows: no header, or nested deeper than one section."""
        shown = {section for gallery in self.galleries for section in self.sections(gallery)}
        found = set()
        for gallery in self.galleries:
            for script in (self.root / gallery.examples_dir).rglob("*.py"):
                folder = script.parent
                if folder not in shown and "__pycache__" not in folder.parts and self.scripts(folder):
                    found.add(folder.relative_to(self.root).as_posix())
        return tuple(sorted(found))

    def select(self, patterns: tuple[str, ...]) -> tuple[Tutorial, ...]:
        """The tutorials TUTORIALS names: each a script's path from the project root (or an absolute one inside
        it) or a pattern of them (`*` matches across folders too); one that names none is an error."""
        chosen: set[Tutorial] = set()
        for pattern in patterns:
            path = Path(pattern)
            if path.is_absolute() and path.resolve().is_relative_to(self.root.resolve()):
                pattern = path.resolve().relative_to(self.root.resolve()).as_posix()
            pattern = PurePosixPath(os.path.normpath(pattern)).as_posix()
            matched = {t for t in self.tutorials if fnmatch.fnmatchcase(t.label, pattern)}
            if not matched:
                folders = " ".join(f"{g.examples_dir}/" for g in self.galleries)
                raise UsageError(f"TUTORIALS: {pattern!r} matches no tutorial of conf.py's galleries ({folders}); "
                                 "name a script by its path from the project root (beginner_source/ddp_tutorial.py) "
                                 f"or by a pattern ('beginner_source/*ddp*'): `ls {folders}` shows the scripts")
            chosen |= matched
        return tuple(t for t in self.tutorials if t in chosen)

    def tutorial_of_page(self, docname: str) -> Tutorial | None:
        """The tutorial whose page is DOCNAME; None for any other page."""
        return next((t for t in self.tutorials if t.page == docname), None)

    def expected_to_fail(self, tutorial: Tutorial) -> bool:
        """Listed in expected_failing_examples (paths relative to conf.py's folder, as in sphinx-gallery)."""
        listed = self.options.get("expected_failing_examples", ())
        return any((self.root / p).resolve() == tutorial.path.resolve() for p in listed)

    def flag(self, name: str, default: bool = False) -> bool:
        """A yes/no option of sphinx_gallery_conf; a string counts as yes when it is `true` or `1`."""
        value = self.options.get(name, default)
        return value.lower() in ("true", "1") if isinstance(value, str) else bool(value)


@lru_cache(maxsize=4)
def current(root: Path = ROOT) -> Project:
    """The project at `root`, read once per process (conf.py is evaluated once)."""
    return Project.read(Path(root))

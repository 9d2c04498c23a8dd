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

import atexit
import contextlib
import fnmatch
import os
import re
import runpy
import shutil
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from . import conf_checks, config_values, languages, site_tree
from .errors import SiteError, UsageError, closest, did_you_mean
from .sphinx_gallery_formats import GALLERY_OPTIONS, HEADER_NAMES, page_label

# Options whose effect is ours to give, since sphinx-gallery executes nothing here (see guides/building.md):
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
        return page_label(f"{self.gallery.gallery_dir}/{self.rel}")

    @property
    def section(self) -> PurePosixPath:
        """Its folder inside the gallery ('.' at the gallery's top)."""
        return self.rel.parent


class _Tags(set[str]):
    """What conf.py finds as `tags` while the build reads it: Sphinx's tags before a builder adds its own, none
    (no build passes `-t`); a conf.py that asks `tags.has(...)` gets the answer Sphinx would give it then."""

    def has(self, tag: str) -> bool:
        return tag in self

    def remove(self, tag: str) -> None:  # Sphinx's ignores a tag it lacks
        self.discard(tag)


@dataclass(frozen=True)
class Conf:
    """conf.py evaluated: its names, and the folders it put on sys.path (as paths in the project)."""

    names: Mapping[str, Any]
    sys_path: tuple[str, ...]


def _conf_error(error: BaseException, conf: Path) -> ConfError:
    """conf.py's error at its line (the deepest frame of the traceback in conf.py itself) and, where a module of
    the project that conf.py imports raised it, at that module's line too (paths from the project root)."""
    places = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)]
    if isinstance(error, SyntaxError) and error.filename:
        places.append((error.filename, error.lineno))
    line = next((number for name, number in reversed(places) if name == str(conf)), None)
    where = f"conf.py:{line}" if line else "conf.py"
    project = conf.parent
    inner = next(((name, number) for name, number in reversed(places)
                  if name != str(conf) and Path(name).is_relative_to(project)), None)
    raised = f", raised at {Path(inner[0]).relative_to(project).as_posix()}:{inner[1]}" if inner else ""
    message = error.msg if isinstance(error, SyntaxError) else str(error)
    return ConfError(f"{where}: {type(error).__name__}: {message}{raised} (conf.py is evaluated as Sphinx evaluates "
                     "it, from the project root)")


CONF_FOLDER = "tutorials-conf-"  # <temp>/tutorials-conf-<pid>-<random>/: where a process reads conf.py


def _remove_abandoned_conf_folders() -> None:
    """Remove the folders conf.py was read in by processes that are gone without removing theirs (a build
    killed by a signal runs no exit handler)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{CONF_FOLDER}*-*"):
        pid = folder.name.removeprefix(CONF_FOLDER).partition("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def read_conf(root: Path) -> Conf:
    """conf.py evaluated as Sphinx evaluates it (from its folder, with `tags`), in a folder standing for the
    project root (core.site_tree: its entries linked, conf.py copied), so that what it writes stays out of the
    project. Folders it puts on sys.path in there are kept as the project's own."""
    _remove_abandoned_conf_folders()
    folder = Path(tempfile.mkdtemp(prefix=f"{CONF_FOLDER}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # modules conf.py imported may read it later
    site_tree.mirror(Path(root), folder)
    conf = folder / site_tree.CONF
    if not conf.is_file():
        raise ConfError(f"{Path(root) / site_tree.CONF}: no such file; a site is configured by its conf.py")
    before = list(sys.path)
    try:
        with contextlib.chdir(folder), warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("default")
            names = runpy.run_path(str(conf), init_globals={"tags": _Tags()})
    except (SiteError, KeyboardInterrupt):
        raise
    except BaseException as error:  # conf.py is user code (it may call sys.exit too): say where it broke
        raise _conf_error(error, conf) from None
    for warning in warned:  # shown at conf.py's line, not at the copy it ran from
        where = "conf.py" if warning.filename == str(conf) else warning.filename
        warnings.warn_explicit(warning.message, warning.category, where, warning.lineno)
    added = []
    for index, entry in enumerate(sys.path):
        if entry not in before and Path(entry).is_relative_to(folder):
            sys.path[index] = str((Path(root) / Path(entry).relative_to(folder)).resolve())  # outlives this folder
            added.append(sys.path[index])
    return Conf(names, tuple(added))


def _as_list(value: Any, where: str, name: str) -> list[str]:
    values = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in values):
        raise ConfError(f"{where}: sphinx_gallery_conf[{name!r}] must be a folder name or a list of them")
    return values


def header(folder: Path) -> Path | None:
    """The gallery header of a folder, as sphinx-gallery looks for it."""
    return next((folder / name for name in HEADER_NAMES if (folder / name).is_file()), None)


@dataclass(frozen=True)
class Project:
    """The project its conf.py declares (see above); ROOT is conf.py's folder."""

    root: Path
    options: Mapping[str, Any]  # conf.py's sphinx_gallery_conf, as written
    conf: Mapping[str, Any] = field(default_factory=dict, compare=False)  # conf.py's other names
    sys_path: tuple[str, ...] = ()  # the folders conf.py puts on sys.path (a tutorial's process gets them too)

    @classmethod
    def read(cls, root: Path) -> "Project":
        """The project at ROOT, from its conf.py; ConfError where conf.py asks for what the build cannot do."""
        evaluated = read_conf(root)
        conf = evaluated.names
        options = conf.get("sphinx_gallery_conf")
        if not isinstance(options, Mapping):
            raise ConfError(f"{Path(root) / 'conf.py'}: no sphinx_gallery_conf dictionary")
        site = cls(Path(root), dict(options), {k: v for k, v in conf.items() if not k.startswith("__")},
                   evaluated.sys_path)
        for name, why in REFUSED.items():
            if conf_checks.asks_for(name, options.get(name)):
                raise ConfError(f"{site.where(name)}: sphinx_gallery_conf[{name!r}] = {options[name]!r} is not "
                                f"supported here: {why}; remove it")
        site.refuse_unknown_settings()
        site.languages  # noqa: B018  (checked now: a wrong language stops every command at once)
        return site

    def refuse_unknown_settings(self) -> None:
        """ConfError at the line of the first `tutorials_*` name of conf.py that the engine does not read
        (core.config_values), with the closest one it does, or that the build passes itself."""
        lines = self.name_lines
        for name in sorted((n for n in self.conf if n.startswith(config_values.PREFIX)), key=lambda n: lines.get(n, 0)):
            where = f"conf.py:{lines[name]}" if name in lines else "conf.py"
            if name not in config_values.NAMES:
                # Compared without the prefix they all share, which would make any name close to every one.
                found = closest(name.removeprefix(config_values.PREFIX),
                                [known.removeprefix(config_values.PREFIX) for known in config_values.IN_CONF])
                hint = (f"did you mean {config_values.PREFIX + found!r}?" if found else
                        f"the engine's: {', '.join(config_values.IN_CONF)}")
                raise ConfError(f"{where}: {name}: not a setting of the engine; {hint}")
            if name not in config_values.IN_CONF:
                raise ConfError(f"{where}: {name}: set by the build itself, which replaces conf.py's value; remove it")

    def refuse_unknown_options(self, known: Collection[str], problem: str | None = None) -> None:
        """ConfError at the line of the first sphinx_gallery_conf option not among KNOWN (sphinx-gallery's), with
        the closest known one; then, where sphinx-gallery's own check of the values found a PROBLEM (its message),
        at the line of the option the message names."""
        for option in sorted(self.options, key=lambda o: self.option_lines.get(o, 0)):
            if option not in known:
                hint = did_you_mean(option, known) or "; sphinx-gallery's configuration reference lists its options"
                raise ConfError(f"{self.where(option)}: sphinx_gallery_conf[{option!r}]: unknown option{hint}")
        if problem:
            named = {o: found.start() for o in self.options if (found := re.search(rf"\b{re.escape(o)}\b", problem))}
            if named:
                option = min(named, key=named.__getitem__)
                raise ConfError(f"{self.where(option)}: sphinx_gallery_conf[{option!r}]: {problem}")
            line = self.name_lines.get("sphinx_gallery_conf")
            raise ConfError(f"conf.py{f':{line}' if line else ''}: sphinx_gallery_conf: {problem}")

    @cached_property
    def name_lines(self) -> dict[str, int]:
        """The line of conf.py that last assigns each name (none for a project made in memory)."""
        conf = self.root / site_tree.CONF
        return conf_checks.name_lines(conf.read_text(encoding="utf-8")) if conf.is_file() else {}

    @cached_property
    def option_lines(self) -> dict[str, int]:
        """The line of conf.py that sets each sphinx_gallery_conf option, where conf.py sets it by name (none for
        a project made in memory, without its conf.py)."""
        conf = self.root / site_tree.CONF
        return conf_checks.option_lines(conf.read_text(encoding="utf-8")) if conf.is_file() else {}

    def where(self, option: str) -> str:
        """Where messages about a sphinx_gallery_conf option point: conf.py and the option's line if known."""
        line = self.option_lines.get(option)
        return f"conf.py:{line}" if line else "conf.py"

    @cached_property
    def languages(self) -> languages.SiteLanguages:
        """The site's languages: conf.py's `language` (the sources', default English) first, then those of its
        `tutorials_languages` (Sphinx codes; default: the languages the engine ships its labels in)."""
        source = self.conf.get("language") or "en"
        listed = self.conf.get("tutorials_languages")
        if listed is not None and (isinstance(listed, str) or not all(isinstance(code, str) for code in listed)):
            raise ConfError(f"conf.py: tutorials_languages = {listed!r}: a list of Sphinx language codes, "
                            "such as ['en', 'ko', 'ja', 'zh_CN']")
        try:
            return languages.site_languages(str(source), listed)
        except languages.LanguageError as error:
            raise ConfError(f"conf.py: language / tutorials_languages: {error}") from None

    @cached_property
    def locales(self) -> Path:
        """The folder of the site's catalogs: the first of conf.py's `locale_dirs` (Sphinx's default: locales/),
        where `update-po` writes and every build reads them."""
        listed = self.conf.get("locale_dirs", conf_checks.PATH_DEFAULTS["locale_dirs"])
        folders = [listed] if isinstance(listed, str) else list(listed or ())
        if not folders or not isinstance(folders[0], str):
            line = self.name_lines.get("locale_dirs")
            raise ConfError(f"conf.py{f':{line}' if line else ''}: locale_dirs must name the catalogs' folder "
                            "(a list of folders, the first one this engine's)")
        return self.root / folders[0]

    @cached_property
    def gallery_conf_pickle(self) -> bytes:
        """sphinx_gallery_conf as a tutorial's process gets it (its scrapers, resetters, ...): pickled by cloudpickle,
        which takes a function conf.py defines by value, as sphinx-gallery's own parallel workers receive it."""
        import cloudpickle

        try:
            return bytes(cloudpickle.dumps(dict(self.options)))
        except Exception:  # noqa: BLE001  (found key by key below, to name the one that fails)
            for key, value in self.options.items():
                try:
                    cloudpickle.dumps(value)
                except Exception as error:  # noqa: BLE001
                    raise ConfError(f"conf.py: sphinx_gallery_conf[{key!r}] cannot be handed to a tutorial's process "
                                    f"({type(error).__name__}: {error}); name a callable by its import path "
                                    "('module.function'), as sphinx-gallery allows") from None
            raise

    @cached_property
    def placed(self) -> tuple[conf_checks.Placed, ...]:
        """conf.py's gallery folders, resolved, each checked to be a folder of the project of its own
        (core.conf_checks): examples_dirs[0], gallery_dirs[0], examples_dirs[1], ..."""
        examples = _as_list(self.options.get("examples_dirs", []), self.where("examples_dirs"), "examples_dirs")
        pages = _as_list(self.options.get("gallery_dirs", []), self.where("gallery_dirs"), "gallery_dirs")
        if len(examples) != len(pages) or not examples:
            raise ConfError(f"{self.where('gallery_dirs')}: sphinx_gallery_conf needs as many 'gallery_dirs' as "
                            f"'examples_dirs' (got {len(examples)} and {len(pages)})")
        placed = []
        for src, out in zip(examples, pages):
            for option, written in (("examples_dirs", src), ("gallery_dirs", out)):
                found = conf_checks.gallery_folder(self.root, written)
                if isinstance(found, str):
                    raise ConfError(f"{self.where(option)}: sphinx_gallery_conf[{option!r}]: {written!r} {found}")
                placed.append(conf_checks.Placed(option, written, found))
        self.refuse_overlaps(conf_checks.reserved_folders(self.root, self.conf), placed)
        return tuple(placed)

    def refuse_overlaps(self, reserved: Mapping[Path, str], placed: Sequence[conf_checks.Placed] = ()) -> None:
        """ConfError where a gallery folder (PLACED, default: conf.py's) is, is inside or holds one of RESERVED
        (resolved path -> what it is) or another gallery folder: a build folder, for one, whose files builds
        delete."""
        problem = conf_checks.overlap_problem(placed or self.placed, reserved, self.root)
        if problem:
            folder, how = problem
            raise ConfError(f"{self.where(folder.option)}: sphinx_gallery_conf[{folder.option!r}]: "
                            f"{folder.written!r} {how}")

    @cached_property
    def galleries(self) -> tuple[Gallery, ...]:
        """conf.py's galleries, in its order, each a folder of its own (placed) with a header, with no two
        names in it that differ only by Unicode normalisation."""
        galleries = []
        for source, pages in zip(self.placed[::2], self.placed[1::2]):
            src = os.path.normpath(source.written)
            if not source.path.is_dir():
                raise ConfError(f"{self.where('examples_dirs')}: sphinx_gallery_conf['examples_dirs']: {src}/ "
                                "does not exist")
            if header(source.path) is None and not self._own_index(source.path):
                raise ConfError(f"{src}/: a gallery needs a header: GALLERY_HEADER.rst or README.txt "
                                "(reST introducing the gallery)")
            twins = conf_checks.twin_names(source.path)
            if twins:
                first, second = (f"{src}/{path.relative_to(source.path).as_posix()}" for path in twins)
                raise ConfError(f"{first} and {second}: two names that differ only by Unicode normalisation (NFC "
                                "and NFD), one name to readers and to some file systems: rename one")
            galleries.append(Gallery(src, os.path.normpath(pages.written)))
        return tuple(galleries)

    @cached_property
    def filename_pattern(self) -> re.Pattern[str]:
        """What a script's path matches to be executed."""
        return self._pattern("filename_pattern", GALLERY_OPTIONS["filename_pattern"].default, str)

    @cached_property
    def ignore_pattern(self) -> re.Pattern[str]:
        """What a script's file name matches to be no tutorial (a helper module)."""
        return self._pattern("ignore_pattern", GALLERY_OPTIONS["ignore_pattern"].default, lambda path: path.name)

    def _pattern(self, name: str, default: str, text: Callable[[Path], str]) -> re.Pattern[str]:
        """conf.py's pattern NAME, compiled and timed while it matches TEXT of every script of the galleries."""
        value = self.options.get(name, default)
        try:
            pattern = re.compile(value)
        except (re.error, TypeError) as error:
            raise ConfError(f"{self.where(name)}: sphinx_gallery_conf[{name!r}] = {value!r} is not a regular "
                            f"expression: {error}") from None
        scripts = [path for gallery in self.galleries for path in sorted((self.root / gallery.examples_dir).rglob("*.py"))]
        slow = conf_checks.slow_match(pattern, [text(path) for path in scripts])
        if slow is not None:
            raise ConfError(f"{self.where(name)}: sphinx_gallery_conf[{name!r}] = {value!r} took over "
                            f"{conf_checks.PATTERN_SECONDS:g} s to match {slow!r} (of {len(scripts)} scripts): it "
                            "backtracks catastrophically (a repetition inside a repetition, such as (a+)+); write it "
                            "without one")
        return pattern

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
    def merged_headers(self) -> tuple[str, ...]:
        """A line for each gallery folder or section with two headers or more: sphinx-gallery uses the first in its
        order and ignores the others without a word (a site may mean it: a README.md for GitHub beside the
        header, as PyTorch Korea's tutorials have)."""
        found = []
        for gallery in self.galleries:
            for folder in self.sections(gallery):
                names = [name for name in HEADER_NAMES if (folder / name).is_file()]
                if len(names) > 1:
                    found.append(f"{folder.relative_to(self.root).as_posix()}/: {len(names)} gallery headers, "
                                 f"{' and '.join(names)}; sphinx-gallery shows {names[0]} and ignores "
                                 f"{' and '.join(names[1:])}")
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
                said = f"TUTORIALS: {pattern!r} matches no tutorial of conf.py's galleries ({folders})"
                hint = "" if any(sign in pattern for sign in "*?[") else self._suggested(pattern)  # no guess at a pattern
                raise UsageError(said + hint if hint else
                                 f"{said}; name a script by its path from the project root "
                                 "(beginner_source/ddp_tutorial.py) or by a pattern ('beginner_source/*ddp*'): "
                                 f"`ls {folders}` shows the scripts")
            chosen |= matched
        return tuple(t for t in self.tutorials if t in chosen)

    def _suggested(self, name: str) -> str:
        """"; did you mean ...?" naming the tutorial closest to NAME: by its path from the project root, else by
        its file name (or that name without .py), for a name given without its folder or with a wrong one; "" where
        none is close."""
        names = {n: t.label for t in self.tutorials for n in (t.rel.name, t.rel.stem)}
        found = closest(name, [t.label for t in self.tutorials]) or names.get(
            closest(PurePosixPath(name).name, names) or "")
        return f"; did you mean {found!r}?" if found else ""

    def tutorial_of_page(self, docname: str) -> Tutorial | None:
        """The tutorial whose page is DOCNAME; None for any other page."""
        return next((t for t in self.tutorials if t.page == docname), None)

    def expected_to_fail(self, tutorial: Tutorial) -> bool:
        """Listed in expected_failing_examples (paths relative to conf.py's folder, as in sphinx-gallery)."""
        listed = self.options.get("expected_failing_examples", ())
        return any((self.root / p).resolve() == tutorial.path.resolve() for p in listed)

    def allowed_to_fail(self, tutorial: Tutorial) -> bool:
        """Matched by a pattern of conf.py's tutorials_allowed_failures (paths from the project root, `*` across
        folders too, as TUTORIALS): a tutorial that may fail where the site is built (a GPU, a download, a package
        it needs may be missing) without failing the build or `check`, and may pass too."""
        patterns = self.conf.get("tutorials_allowed_failures") or ()
        return any(fnmatch.fnmatchcase(tutorial.label, PurePosixPath(os.path.normpath(p)).as_posix()) for p in patterns)

    def flag(self, name: str, default: bool = False) -> bool:
        """A yes/no option of sphinx_gallery_conf; a string counts as yes when it is `true` or `1`."""
        value = self.options.get(name, default)
        return value.lower() in ("true", "1") if isinstance(value, str) else bool(value)


def current(root: Path) -> Project:
    """The project at ROOT, read once per process (conf.py is evaluated once, however the root is named)."""
    return _read_once(Path(root).resolve())


@lru_cache(maxsize=4)
def _read_once(root: Path) -> Project:
    return Project.read(root)

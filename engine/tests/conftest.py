"""What the test files share (no test module imports another): copies and builds of the project and their
fixtures, the stand-ins for Sphinx that sphinxext's unit tests use, and the marks that keep `make test-fast`
to the unit tests (at the end: site and tutorial, and the guard that fails a test missing its mark).
"""

from __future__ import annotations

import fcntl
import io
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
import sphinx.locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from tutorials_site import sphinxext
from tutorials_site.core.project import Project
from tutorials_site.core.site import versions

TUTORIAL_PAGE = Path("en", "beginner", "data_parallel_tutorial.html")
# What a copy of a project needs to build: what git tracks, minus the heavy or generated parts.
_NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "_build", "docs", "__pycache__", ".pytest_cache")
# The engine's tests build this team's own site (FIXTURES: conf.py, a landing page, one gallery with the tutorials
# the tests are written against, and their catalogs in three languages), never the repository's: adding, renaming
# or removing a tutorial or a section of the shipped site changes no test of the engine.
FIXTURES = Path(__file__).parent / "fixtures" / "site"
FIXTURE_TUTORIALS = ("beginner_source/data_parallel_tutorial.py", "beginner_source/ddp_tutorial.py")
ENGINE = Path(sphinxext.__file__).resolve().parents[2]  # the engine's folder: its package, tests, guides
# In a copy, all of them except this one are stubs (prose and comments, no code): the tests that build a
# copy exercise the pipeline, and each of their builds then takes seconds. Catalogs stay whole.
KEPT_TUTORIAL = "data_parallel_tutorial"
# What a build prints depends on these (commands/build_log.py), and what it builds and takes on the build
# settings a caller may have set (`make test REUSE=…` in CI, for the site's tests): cleared here, once, so that
# the tests' builds are what a plain build outside CI is, whatever runs the tests, unless a test sets them.
for _name in ("VERBOSE", "GITHUB_ACTIONS", "REUSE", "TUTORIALS", "SHARD", "SHARDS", "LANGUAGES", "NEEDS", "STRICT",
              "RETRY_FAILED", "BUILDDIR", "PAGES", "FROM", "OVERWRITE", "TUTORIALS_RUNS_KEY"):
    os.environ.pop(_name, None)


def _stub(path):
    """Blank every line of code of a tutorial, keeping its prose and its comments (translation units)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for block in split_code_and_text_blocks(str(path))[1]:
        if block.type == "code":
            for row in range(block.lineno - 1, block.lineno - 1 + block.content.count("\n") + 1):
                if lines[row].strip() and not lines[row].lstrip().startswith("#"):
                    lines[row] = ""
    path.write_text("\n".join(lines), encoding="utf-8")


def copy_engine(target):
    """The engine's package copied into TARGET (TARGET/tutorials_site), to change freely: a release of it, which a
    process gets first on its PYTHONPATH (with_engine); returns TARGET."""
    shutil.copytree(ENGINE / "tutorials_site", Path(target, "tutorials_site"), ignore=shutil.ignore_patterns("__pycache__"))
    return Path(target)


def with_engine(engine, env=None):
    """ENV (default: this process's) with the engine copied at ENGINE (copy_engine) first on PYTHONPATH."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(engine), env.get("PYTHONPATH")]))
    return env


def copy_project(target, source=FIXTURES, stubs=True, kept=KEPT_TUTORIAL):
    """The tests' site (or the project at SOURCE) copied to `target`, to break or change freely, all of its
    FIXTURE_TUTORIALS but KEPT (None: every one of them) stubs unless not STUBS."""
    shutil.copytree(source, target, ignore=_NOT_COPIED)
    for label in FIXTURE_TUTORIALS:
        if stubs and Path(label).stem != kept:
            _stub(Path(target, label))
    return target


def build(root, builddir, *args, env=None):
    """Run the build driver of the project at `root`; returns the CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-m", "tutorials_site", "html-noplot" if "--noplot" in args else "html",
         "--builddir", str(builddir), *(a for a in args if a != "--noplot")],
        cwd=root,
        env={**os.environ, "LANGUAGES": "", **(env or {})},
        capture_output=True,
        text=True,
    )


def append(path, text):
    """Append TEXT to an existing file: a file that moved fails the test instead of being created anew."""
    assert Path(path).is_file(), f"{path}: no such file (moved?)"
    with open(path, "a", encoding="utf-8") as file:
        file.write(text)


def one_line_error(result):
    """The last line of a command that failed with a one-line error (no traceback)."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and lines, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return lines[-1]


def executed(result):
    """How many tutorials the build executed, None if it executed nothing at all (html-noplot, assemble)."""
    found = re.findall(r"\[execute\] executed (\d+) of", result.stdout)
    return int(found[-1]) if found else None


@pytest.fixture(scope="session")
def builds_site():
    """Requested by every fixture that builds, serves or browses a site: its tests are marked `site` (see the
    end of this file)."""


def made_once(tmp_path_factory, name, make: Callable[[Path], None]) -> Path:
    """A folder NAME that the session's test processes (pytest-xdist's workers) share: made by MAKE(folder) in the
    first process that asks, waited for by the others, so that a build every process needs is made once."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # a worker's folder is in the session's
    folder = shared / name
    with open(shared / f"{name}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (shared / f"{name}.ready").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a process that failed making it left
            folder.mkdir()
            make(folder)
            (shared / f"{name}.ready").touch()
    return folder


@pytest.fixture(scope="session")
def site_project(tmp_path_factory):
    """A copy of the project with the tests' tutorials whole (FIXTURE_TUTORIALS, no stubs), in a git repository of
    its own (a build names its commit) on a branch named as the repository's version (versions.current), so that
    its build is named as the repository's would be: the project `site` builds and fixture_site reads. Shared by
    the session's processes: not to be changed."""

    def make(folder):
        project = copy_project(folder / "project", stubs=False)
        git(project, "init", "-q", "-b", versions.current(ENGINE))
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "the tests' site")

    return made_once(tmp_path_factory, "site_project", make) / "project"


@pytest.fixture(scope="session")
def site(builds_site, site_project, tmp_path_factory):
    """site_project built once, executing the tutorials, into a temporary directory (shared: not to be changed)."""

    def make(builddir):
        result = build(site_project, builddir)
        assert result.returncode == 0, result.stdout + result.stderr

    return made_once(tmp_path_factory, "site", make) / "html"


@pytest.fixture(scope="session")
def machine():
    """What torch reports on this machine, as a tutorial's process sees it: .gpus, .device (the first GPU's name,
    or "CPU") and .cuda (torch's CUDA version, None for a CPU build). A test of what a page says of the machine
    expects this, so that it passes with a GPU or without."""
    probe = ("import json, torch; gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0; "
             "print(json.dumps([gpus, torch.cuda.get_device_name(0) if gpus else 'CPU', torch.version.cuda]))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    gpus, device, cuda = json.loads(found)
    return SimpleNamespace(gpus=gpus, device=device, cuda=cuda)


@pytest.fixture
def project_copy(tmp_path):
    """A throw-away copy of the project, to break or change without touching the real one."""
    return copy_project(tmp_path / "project")


@pytest.fixture
def stubbed_copy(tmp_path):
    """A throw-away copy of the project whose tutorials are all stubs: for a test of what the build does with runs,
    whatever they print (each run then takes a fraction of a second: no torch to import)."""
    return copy_project(tmp_path / "project", kept=None)


@pytest.fixture(scope="session")
def fixture_site(site_project):
    """site_project read as a Project (its tutorials FIXTURE_TUTORIALS, whole): for the tests that only read it,
    and the project fake_app's pages are of. Not to be changed."""
    return Project.read(site_project)


VENV = Path(sys.executable).parent.parent  # the environment running these tests


SITE_COMMAND = Path(sys.executable).parent / "tutorials-site"  # the engine's console command, in this environment


def tutorials_site(project, *args, **env):
    """`tutorials-site ARGS` at a project's root, as a site's make target runs it: the NAME=VALUE arguments and the
    keyword arguments are its settings (environment variables, as make passes its variables); LANGUAGES defaults
    to all."""
    settings = dict(arg.split("=", 1) for arg in args if "=" in arg)
    return subprocess.run([str(SITE_COMMAND), *(arg for arg in args if "=" not in arg)], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "LANGUAGES": "", **settings, **env})


# make with the engine's make targets (its tutorials-site.mk, which `tutorials-site init` gives a site to include) and
# this environment's command, in the folder make runs in.
MAKE_SITE = ("make", "-s", "-f", str(ENGINE / "tutorials_site" / "ci" / "tutorials-site.mk"),
             f"TUTORIALS_SITE={SITE_COMMAND}")


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def published(builds_site, tmp_path_factory):
    """A copy of the project after `VERSION=1.0 make docs` then `VERSION=main make docs` (shared: not to be changed)."""

    def make(folder):
        project = copy_project(folder / "project")
        for version in ("1.0", "main"):
            result = tutorials_site(project, "docs", VERSION=version)
            assert result.returncode == 0, result.stdout + result.stderr

    return made_once(tmp_path_factory, "published", make) / "project"


@pytest.fixture(scope="session")
def engine_wheel(builds_site, tmp_path_factory):
    """The engine's wheel, built from a copy of its folder as its release is (without reaching the package
    registry: this environment's setuptools), for the tests that install it into an environment of their own."""

    def make(out):
        source = out / "source" / "engine"
        shutil.copytree(ENGINE, source, ignore=shutil.ignore_patterns("tests", "benchmarks", "__pycache__", "*.egg-info",
                                                                      "build", ".pytest_cache", ".mypy_cache", ".ruff_cache"))
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(source)],
                       check=True, capture_output=True)

    [built] = made_once(tmp_path_factory, "engine_wheel", make).glob("tutorials_site-*.whl")
    return built


def git(repo, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def git_repository(root, files, message="the site"):
    """A git repository at ROOT holding FILES ({path: text}), committed on a branch `main`: a site of its own."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


@pytest.fixture
def gh_pages(published, tmp_path):
    """A git repository standing in for the gh-pages branch, holding the published tree."""
    repo = tmp_path / "gh-pages"
    shutil.copytree(published / "docs", repo, symlinks=True)  # stable: the link it is
    git(repo, "init", "-q", "-b", "gh-pages")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "published")
    return repo


def luminance(rgb):
    """WCAG relative luminance of an sRGB colour given as 0-255 channels."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a, b):
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


# --- sphinxext's unit tests: Sphinx stood in for, or a small Sphinx run --------------------------------------


class FakeEnv:
    """What sphinxext's handlers read and write of Sphinx's build environment."""

    def __init__(self, app):
        self.config, self.srcdir = app.config, app.srcdir
        self.docname = ""  # the page being read
        self.metadata = defaultdict(dict)
        self.dependencies = defaultdict(set)
        self.images = {}  # path in the sources -> (docnames, file name in _images/)
        self.found_docs = set()
        self.labels = {}  # the std domain's: label -> (docname, anchor, title)

    def note_dependency(self, filename):
        self.dependencies[self.docname].add(filename)

    def get_domain(self, name):
        assert name == "std"
        return SimpleNamespace(labels=self.labels)


class FakeConfig:
    """What sphinxext's handlers read of Sphinx's configuration: its values as attributes, `name in config` for
    a value it has. Like Sphinx's Config, it takes attributes of other names (gallery keeps its state on it)."""

    def __contains__(self, name):
        return not name.startswith("_") and name in vars(self)


class FakeApp:
    """What sphinxext's handlers use of a Sphinx application. The configuration is what the extension
    declares, set by its own setup() (which runs here, and whose registrations are recorded), with
    conf.py's values and the ones a build passes (language, version), changed by keyword."""

    def __init__(self, srcdir, outdir, **config):
        self.srcdir, self.outdir = Path(srcdir), Path(outdir)
        self.config = FakeConfig()
        self.connected, self.js_files, self.css_files, self.search_languages = [], [], [], []
        self.directives = {}
        self.metadata = sphinxext.setup(self)
        site = Project.read(FIXTURES)
        vars(self.config).update(
            {name: site.conf[name] for name in [*vars(self.config), "project", "copyright", "locale_dirs"]
             if name in site.conf},
            sphinx_gallery_conf=dict(site.options))
        vars(self.config).update({"language": "en", "version": "main", **config})
        self.env = FakeEnv(self)
        self.builder = SimpleNamespace(format="html", imagedir="_images",
                                       templates=SimpleNamespace(environment=SimpleNamespace(filters={})))

    def add_config_value(self, name, default, rebuild, types=()):
        setattr(self.config, name, default)

    def connect(self, event, handler, priority=500):
        self.connected.append((event, handler, priority))

    def add_js_file(self, filename, priority=500, **attributes):
        self.js_files.append((filename, priority, attributes))

    def add_css_file(self, filename, **attributes):
        self.css_files.append(filename)

    def add_directive(self, name, directive):
        self.directives[name] = directive

    def add_search_language(self, language):
        self.search_languages.append(language)


@pytest.fixture
def untranslated(monkeypatch):
    """Sphinx's message catalogs as a build in English has them: every message as written, unless the test
    loads a catalog (sphinx_catalog); none left to the next test."""
    monkeypatch.setattr(sphinx.locale, "translators", {})
    sphinx.locale.init([], "en", "sphinx")


@pytest.fixture
def fake_app(tmp_path, untranslated, fixture_site):
    """fake_app(**config): a FakeApp whose source and output folders are in tmp_path, its tutorials those of
    fixture_site (tutorials_root, as the build driver names the project)."""
    return lambda **config: FakeApp(tmp_path / "src", tmp_path / "out", tutorials_root=str(fixture_site.root), **config)


@pytest.fixture
def sphinx_catalog(tmp_path, untranslated):
    """sphinx_catalog(language, {msgid: msgstr}): that `sphinx` catalog in force for this test, as a build
    in that language loads it (compiled from these messages alone)."""

    def load(language, messages):
        catalog = Catalog(locale=language)
        for msgid, msgstr in messages.items():
            catalog.add(msgid, msgstr)
        mo = tmp_path / "catalog" / language / "LC_MESSAGES" / "sphinx.mo"
        mo.parent.mkdir(parents=True, exist_ok=True)
        with open(mo, "wb") as file:
            write_mo(file, catalog)
        sphinx.locale.init([mo.parents[2]], language, "sphinx")

    return load


@pytest.fixture
def sphinx_app(tmp_path, monkeypatch, untranslated):
    """sphinx_app(files={path: text}, options={name: value}, **confoverrides): (a Sphinx application, its log, its
    warnings) of a small project in tmp_path/project: conf.py with this site's extensions and sphinx_gallery_conf
    (OPTIONS changed in it), an
    index.rst, each gallery's folder with a header, and FILES. Its builder-inited handlers (sphinx-gallery's
    and the site's) have run; app.build() builds it. In process: a second or two."""
    from sphinx.testing.util import SphinxTestApp

    # Sphinx sets its loggers up for its application (handlers writing to its streams) and leaves them so.
    sphinx_logger = logging.getLogger("sphinx")
    monkeypatch.setattr(sphinx_logger, "handlers", sphinx_logger.handlers[:])
    monkeypatch.setattr(sphinx_logger, "propagate", sphinx_logger.propagate)
    monkeypatch.setattr(sphinx_logger, "level", sphinx_logger.level)
    apps = []

    def make(files=None, options=None, **confoverrides):
        src = tmp_path / "project"
        options = {**Project.read(FIXTURES).options, **(options or {})}
        examples = list(options["examples_dirs"])
        files = {"conf.py": f'extensions = ["sphinx_gallery.gen_gallery", "tutorials_site.sphinxext"]\n'
                            f"sphinx_gallery_conf = {options!r}\nexclude_patterns = {examples!r}\n",
                 "index.rst": "A page\n======\n\nA paragraph.\n",
                 **{f"{folder}/GALLERY_HEADER.rst": "Tutorials\n=========\n" for folder in examples},
                 **(files or {})}
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text, encoding="utf-8")
        status, warnings = io.StringIO(), io.StringIO()
        app = SphinxTestApp("html", srcdir=src, status=status, warning=warnings,
                            confoverrides={"plot_gallery": "0", **confoverrides})
        apps.append(app)
        return app, status, warnings

    yield make
    for app in apps:
        app.cleanup()


# --- a minimal DOM of a built page (html.parser), for the tests that compare pages with stock builds --------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self, skip: frozenset[str] = frozenset()):
        """This element and every element under it, in document order, less those with a class in SKIP."""
        if self.classes & skip:
            return
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk(skip)

    def find_all(self, tag: str | None = None, classes: set[str] = frozenset()) -> list[Node]:
        return [n for n in self.walk() if (tag is None or n.tag == tag) and classes <= n.classes]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def inner_html(self) -> str:
        """Children serialized again, attributes sorted: equal markup gives equal strings."""
        out = []
        for child in self.children:
            if isinstance(child, str):
                out.append(escape(child, quote=False))
            else:
                attrs = "".join(f' {k}="{escape(v)}"' for k, v in sorted(child.attrs.items()))
                out.append(f"<{child.tag}{attrs}>" + ("" if child.tag in VOID else f"{child.inner_html()}</{child.tag}>"))
        return "".join(out)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document")
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):
        # Close up to the matching element; a stray end tag is ignored.
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_html(path: Path) -> Node:
    builder = _TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    return builder.root


# --- two builds compared -------------------------------------------------------------------------------

# Lines allowed to differ between two builds of the same commit: run times, memory and dates.
TIMING = [
    (re.compile(r'<p class="sphx-glr-timing">.*?</p>'), "TIME"),  # the page, in every language
    (re.compile(r'(<p class="tutorials-card-facts[^"]*">)[^<]*? · '), r"\1TIME · "),  # the landing card's time to run
    (re.compile(r"\d+ minutes [\d.]+ seconds"), "TIME"),  # its reST source
    (re.compile(r"\d\d:\d\d\.\d{3}"), "TIME"),
    (re.compile(r"(&quot;|\")seconds(&quot;|\"): [\d.]+"), "seconds: TIME"),
    (re.compile(r"(&quot;|\")peak_rss_mb(&quot;|\"): [\d.]+"), "peak_rss_mb: MEMORY"),  # what the run cost
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"), "DATE"),
]
# What the DDP tutorial shows also differs by nature: it measures speed (its table, the time of an all_reduce,
# and its figure).
MEASURED = "ddp_tutorial"
MEASUREMENTS = [
    (re.compile(r"^(\s*)(one process|DataParallel|DDP|DDP, default threads)(\s+\d+){3}\s+\d+\.\d\d\s+\d+$", re.M),
     r"\1\2 RATES"),
    (re.compile(r"all_reduce of (\d+) gradients: \d+\.\d\d ms"), r"all_reduce of \1 gradients: TIME"),  # a block's first line
    (re.compile(r"(&quot;|\")outputs(&quot;|\"): (&quot;|\")[0-9a-f]{64}"), "outputs: DIGEST"),
]


def normalized(path):
    """A built file's bytes, with what may differ between two builds of one commit replaced by placeholders."""
    data = path.read_bytes()
    measured = MEASURED in path.name
    if path.suffix not in {".html", ".txt", ".js", ".json"}:
        return b"MEASURED FIGURE" if measured and path.name.startswith("sphx_glr_") else data
    text = re.sub(r"</?span[^>]*>", "", data.decode())  # dates set as code are split into spans
    for pattern, placeholder in TIMING + (MEASUREMENTS if measured else []):
        text = pattern.sub(placeholder, text)
    return "\n".join(sorted(text.replace("<pre>", "<pre>\n").splitlines())) if measured else text


# --- unit tests, site tests, tutorial runs ------------------------------------------------------------
# `make test-fast` runs `pytest -m "not site and not tutorial"`: the unit tests, a new one included unless
# marked. `site`: the test builds a site (the build driver, sphinx-build, a make target that builds), serves
# one or drives a browser; `tutorial`: it executes tutorials through the runner (a process tree that imports
# torch: seconds each). A test using a fixture that requests `builds_site` or `runs_tutorials` gets the mark
# here; any other must carry it: a test without the mark that starts such a process fails, in every run,
# so that none slips into the fast set unnoticed.

MARKING_FIXTURES = {"builds_site": "site", "runs_tutorials": "tutorial"}
# python -m tutorials_site <command> (update-po reads the whole site with Sphinx's gettext builder)
SITE_COMMANDS = {"html", "html-noplot", "assemble", "serve", "audit", "update-po", "docs", "ci-build",
                 "import-translation"}
SITE_TARGETS = {"html", "html-noplot", "docs", "ci-build", "assemble", "serve", "audit", "update-po", "test", "bench"}
RUNNER = "tutorials_site.commands.runner"


def marked_process(args):
    """(the mark a test needs to start command line ARGS, what it starts), or None for a unit test's process."""
    one = isinstance(args, (str, bytes, os.PathLike))  # a shell line, or a program without arguments
    argv = shlex.split(os.fsdecode(args)) if one else [os.fsdecode(arg) for arg in args]
    names = [Path(arg).name for arg in argv]
    module = argv[argv.index("-m") + 1:] if "-m" in argv[:-1] else []
    if "sphinx-build" in names or module[:1] in (["sphinx"], ["sphinx.cmd.build"]):
        return "site", "sphinx-build"
    if module[:1] == ["tutorials_site"] and len(module) > 1 and module[1] in SITE_COMMANDS:
        return "site", f"python -m tutorials_site {module[1]}"
    if names[:1] == ["tutorials-site"] and len(argv) > 1 and argv[1] in SITE_COMMANDS:
        return "site", f"tutorials-site {argv[1]}"
    if names[:1] == ["make"]:
        makefile = {index + 1 for index, arg in enumerate(argv) if arg in ("-f", "-C")}  # their values: no targets
        targets = [arg for index, arg in enumerate(argv[1:], 1)
                   if not arg.startswith("-") and "=" not in arg and index not in makefile]
        if not targets or set(targets) & SITE_TARGETS:  # no target: the first one, html
            return "site", f"make {' '.join(targets) or 'html'}"
    if any(word in name for name in names for word in ("chromium", "chrome", "lighthouse")):
        return "site", "a browser"
    if module[:1] == [RUNNER]:
        return "tutorial", "the tutorial runner"
    return None


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture, mark in MARKING_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(mark)


@pytest.fixture(scope="session")
def runs_tutorials():
    """Requested by every fixture that executes tutorials through the runner: its tests are marked `tutorial`."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Around a test's setup, call and teardown (its fixtures' included): no process its marks do not allow."""
    allowed = {mark for mark in MARKING_FIXTURES.values() if item.get_closest_marker(mark)}
    if "site" in allowed:  # a build executes tutorials too
        return (yield)

    class Refusing(subprocess.Popen):
        def __init__(self, args, *more, **options):
            needed = marked_process(args)
            if needed and needed[0] not in allowed:
                pytest.fail(f"{item.nodeid} starts {needed[1]}: mark it `@pytest.mark.{needed[0]}` "
                            "(make test-fast leaves those out), or test without it", pytrace=False)
            super().__init__(args, *more, **options)

    with mock.patch.object(subprocess, "Popen", Refusing):
        return (yield)

"""CI runs played on this machine: the engine's reusable workflow's execute and assemble jobs on a generated site.

The steps played are the workflow's own, read from it (REUSABLE_WORKFLOW, in the engine's repository): each
shard, in a fresh clone, gets the kept runs where its actions/cache/restore step unpacks them (a copy of the
folder the last run saved), runs its execute step's command with that step's environment, and hands over the
paths its upload step names; assemble, in another clone, runs its command and then the steps that gather the
runs to keep, and its actions/cache/save step becomes a copy of that path. The site's set-up step is not played:
this environment is the site's. `make bench` prints the figures; tests/test_kept_runs.py checks them against the
targets.

The generated site holds COUNT tutorials that each print a line; one of them also imports a stand-in
distribution (STAND_IN) and another loads a helper module with importlib (HELPER). Every run sees, on
PYTHONPATH, a stand-in torch distribution (metadata only: no tutorial imports it) and STAND_IN, so that
installing or upgrading a distribution is a change made without installing anything; and, for a change of the
engine, a copy of the engine's package, changed, as a new release of it would be installed.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import yaml

from tutorials_site.core.runs import protocol, shards

ENGINE = Path(__file__).resolve().parents[1]  # engine/ in the engine's repository
# The engine's reusable workflow: GitHub reads it in .github/workflows/ of the repository that holds the engine.
REUSABLE_WORKFLOW = ENGINE.parent / ".github" / "workflows" / "tutorials-site.yml"
COUNT = 20
SHARDS = 2
# What the steps' expressions the player does not evaluate give on a push to main (the site's tests/test_workflows.py
# evaluates them per event), and the plan step's count of shards for the generated tutorials' class.
PUSH_TO_MAIN = {"NEEDS": "strict", "CLASS_SHARDS": f"cpu={SHARDS}", "TUTORIALS_RUNS_KEY": ""}
LANGUAGES = "en"  # executing is the same for every language; rendering one keeps each run short
COMMANDS = Path(sys.executable).parent  # this environment's commands: tutorials-site
CONF = """project = "Small tutorials"
extensions = ["myst_parser", "sphinx_gallery.gen_gallery", "tutorials_site.sphinxext"]
sphinx_gallery_conf = {"examples_dirs": ["beginner_source"], "gallery_dirs": ["beginner"], "filename_pattern": r"\\.py$"}
language = "en"
tutorials_languages = ["en", "ko"]
html_theme = "sphinx_rtd_theme"
exclude_patterns = ["beginner_source", "helpers", "_build", "_kept"]
"""
HEADER = "Small tutorials\n===============\n"
TUTORIAL = '''"""
Small tutorial {n}
==================

It prints one line.
"""

# tutorials-needs: cpu
print("small tutorial {n} ran")
'''
TRANSLATED = 3  # the tutorial with a Korean catalog
IMPORTS = 5  # the tutorial that imports STAND_IN's module
LOADS = 6  # the tutorial that loads HELPER with importlib
STAND_IN = ("stand-in-lib", "1.0", "stand_in_lib")  # (name, version, module) of the distribution it imports
HELPER = "helpers/small_helper.py"  # in the repository, outside the galleries
EXTRA = {
    IMPORTS: "import stand_in_lib\nprint(stand_in_lib.VERSION)\n",
    # a file outside its folder: declared, the run sees it (core.runs.visibility), and its fingerprint covers it
    LOADS: "# tutorials-reads: ../helpers/small_helper.py\nimport importlib, os, sys\n"
           "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, 'helpers'))\n"
           "print(importlib.import_module('small_helper').VALUE)\n",
}
CATALOG = '''msgid ""
msgstr ""
"Language: ko\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=utf-8\\n"
"Content-Transfer-Encoding: 8bit\\n"

msgid "Small tutorial {n}"
msgstr "{text}"
'''

# The repository's landing page: the project's links to its sections, which go with their tutorials.
LANDING = """# Small tutorials

```{tutorials-cards}
```

```{toctree}
:hidden:

beginner/index
```
"""


def tutorial_name(n: int) -> str:
    return f"small_{n:02d}"


class StepFailed(Exception):
    """A played step exited non-zero; the message holds its command and output."""


@dataclass(frozen=True)
class CIRun:
    """What one played CI run cost."""

    executed: int  # tutorials the shards executed
    shard_seconds: float  # the shards' execute steps added up: the runner time the run paid for
    run_seconds: float  # of it, the executed tutorials' own runs (their stamps)
    assemble_seconds: float


@dataclass(frozen=True)
class Change:
    """A change between two CI runs, and what the issue sets as the second run's executions."""

    what: str
    target: int
    edit: Callable[[Path], None]  # applied to a clone of the repository, then committed
    torch_suffix: str = ""  # added to torch's version for the second run
    installed: tuple[tuple[str, str, str | None], ...] = ()  # distributions (name, version, module) for the second run
    engine: Callable[[Path], None] | None = None  # applied to a copy of the engine's folder the second run uses


def _nothing(repo: Path) -> None:
    """No change to the repository."""


def _append(relative: str, text: str) -> Callable[[Path], None]:
    def edit(repo: Path) -> None:
        with open(repo / relative, "a", encoding="utf-8") as file:
            file.write(text)
    return edit


def _retitle(relative: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(repo: Path) -> None:
        path = repo / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, (path, old)
        path.write_text(text.replace(old, new), encoding="utf-8")
    return edit


GALLERY = "beginner_source"
CATALOG_PATH = f"locales/ko/LC_MESSAGES/{GALLERY}/{tutorial_name(TRANSLATED)}.po"
CHANGES = (
    Change("nothing", 0, _nothing),
    Change("one tutorial", 1, _retitle(f"{GALLERY}/{tutorial_name(7)}.py", "ran\")", "ran, changed\")")),
    Change("one tutorial's prose, a line longer", 0,
           _retitle(f"{GALLERY}/{tutorial_name(8)}.py", "It prints one line.", "It prints one line,\nand only one.")),
    Change("a comment in one tutorial's code", 1,
           _retitle(f"{GALLERY}/{tutorial_name(8)}.py", "# tutorials-needs: cpu\n", "# tutorials-needs: cpu\n# it prints\n")),
    Change("a translation (.po)", 0, _retitle(CATALOG_PATH, "작은 튜토리얼", "작은 예제")),
    Change("an engine template", 0, _nothing,
           engine=_append("tutorials_site/templates/sphinx_rtd_theme/layout.html", "{#- a template changed #}\n")),
    Change("the engine's CSS", 0, _nothing, engine=_append("tutorials_site/static/tutorials.css", "/* changed */\n")),
    Change("a docstring of the engine (Project.select)", 0, _nothing,
           engine=_retitle("tutorials_site/core/project.py", '"""The tutorials TUTORIALS names', '"""The tutorials it names')),
    Change("an engine release that keeps the run protocol (the runner changed)", 0, _nothing,
           engine=_append("tutorials_site/commands/runner.py", "# the runner changed\n")),
    Change("an engine release that changes the run protocol", COUNT, _nothing,
           engine=_retitle("tutorials_site/core/runs/protocol.py", f'PROTOCOL = "{protocol.PROTOCOL}"', 'PROTOCOL = "next"')),
    Change("test tools and sphinx-design installed", 0, _nothing,
           installed=(("pytest", "9.0.0", None), ("sphinx-design", "0.6.1", None))),
    Change("torch's version (no tutorial imports it)", 0, _nothing, torch_suffix=".post1"),
    Change("a distribution one tutorial imports, upgraded", 1, _nothing,
           installed=((STAND_IN[0], "1.1", STAND_IN[2]),)),
    Change("a helper one tutorial loads with importlib", 1, _append(HELPER, "VALUE = 2\n")),
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout


def generate(target: Path, count: int = COUNT) -> Path:
    """A git repository: a site (CONF) of `count` small tutorials, one translated into Korean."""
    Path(target, GALLERY).mkdir(parents=True)
    Path(target, "conf.py").write_text(CONF, encoding="utf-8")
    Path(target, GALLERY, "GALLERY_HEADER.rst").write_text(HEADER, encoding="utf-8")
    for n in range(1, count + 1):
        Path(target, GALLERY, f"{tutorial_name(n)}.py").write_text(TUTORIAL.format(n=f"{n:02d}") + EXTRA.get(n, ""),
                                                                   encoding="utf-8")
    Path(target, "index.md").write_text(LANDING, encoding="utf-8")
    Path(target, HELPER).parent.mkdir()
    Path(target, HELPER).write_text("VALUE = 1\n", encoding="utf-8")
    catalog = target / CATALOG_PATH
    catalog.parent.mkdir(parents=True)
    catalog.write_text(CATALOG.format(n=f"{TRANSLATED:02d}", text=f"작은 튜토리얼 {TRANSLATED:02d}"), encoding="utf-8")
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "generated tutorials")
    return target


def changed(base: Path, target: Path, change: Change) -> Path:
    """A clone of `base` with `change` committed (a change of torch's version is none of the repository's)."""
    git(base.parent, "clone", "-q", str(base), str(target))
    change.edit(target)
    git(target, "commit", "-q", "--allow-empty", "-am", change.what)
    return target


def write_torch(site: Path, version: str, installed: tuple[tuple[str, str, str | None], ...] = ()) -> None:
    """The stand-in distributions in `site` (put first on PYTHONPATH): torch at `version`, metadata only, STAND_IN,
    and those `installed` (name, version, module: a module of that name with its version), by name over those."""
    shutil.rmtree(site, ignore_errors=True)
    chosen = {name: (version, module) for name, version, module in (("torch", version, None), STAND_IN, *installed)}
    for name, (release, module) in chosen.items():
        info = site / f"{name.replace('-', '_')}-{release}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {release}\n", encoding="utf-8")
        if module:
            (info / "top_level.txt").write_text(f"{module}\n", encoding="utf-8")
            (site / f"{module}.py").write_text(f"VERSION = {release!r}\n", encoding="utf-8")


def torch_version() -> str:
    """The installed torch's release (no local label, after which a suffix would be part of the label)."""
    return metadata.version("torch").split("+", 1)[0]


def _workflow() -> dict:
    return yaml.safe_load(REUSABLE_WORKFLOW.read_text())


def _step(steps: list[dict], test: Callable[[dict], bool]) -> dict:
    [step] = [step for step in steps if test(step)]
    return step


def _uses(action: str) -> Callable[[dict], bool]:
    return lambda step: step.get("uses", "").split("@")[0] == action


def _expand(value: str, known: dict[str, str]) -> str:
    """A workflow value with the expressions the played step uses replaced; any other is an error."""
    for expression, replacement in known.items():
        value = value.replace("${{ " + expression + " }}", replacement)
    if "${{" in value:
        raise ValueError(f"{REUSABLE_WORKFLOW.name}: {value!r}: an expression the player does not know")
    return value


def player_after(change: Change, work: Path, site: Path) -> "Player":
    """The player of the CI run after CHANGE, in WORK: with the engine's release CHANGE makes, where it makes one."""
    engine = engine_copy(work / "engine", change.engine) if change.engine else None
    return Player(work, site, engine)


def engine_copy(target: Path, edit: Callable[[Path], None]) -> Path:
    """A copy of the engine's package in TARGET, changed by EDIT: a release of the engine, first on PYTHONPATH."""
    shutil.copytree(ENGINE / "tutorials_site", target / "tutorials_site", ignore=shutil.ignore_patterns("__pycache__"))
    edit(target)
    return target


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)


class Player:
    """Plays CI runs, as a push to main plays them (its steps that keep the runs included), in folders under
    `work`; `site` is the stand-in torch's folder, the same for every run."""

    def __init__(self, work: Path, site: Path, engine: Path | None = None) -> None:
        self.work, self.site, self.engine = work, site, engine  # ENGINE: the engine's release its runs use
        jobs = _workflow()["jobs"]
        execute, assemble = jobs["execute"]["steps"], jobs["assemble"]["steps"]
        self.plan = _step(jobs["plan"]["steps"], lambda step: "shard-matrix" in step.get("run", ""))
        self.restore = _step(execute, _uses("actions/cache/restore"))["with"]["path"]
        self.execute = _step(execute, lambda step: "SHARD" in step.get("env", {}))
        self.upload = _step(execute, _uses("actions/upload-artifact"))["with"]["path"].split()
        self.download = _step(assemble, _uses("actions/download-artifact"))["with"]["path"]
        self.assemble = _step(assemble, lambda step: "tutorials-site assemble" in step.get("run", ""))
        save = _step(assemble, _uses("actions/cache/save"))
        self.save = save["with"]["path"]
        between = assemble[assemble.index(self.assemble) + 1:assemble.index(save)]
        self.gather = [step for step in between if "run" in step]

    @property
    def pythonpath(self) -> str:
        return os.pathsep.join(filter(None, [str(self.engine or ""), str(self.site), os.environ.get("PYTHONPATH")]))

    def _clone(self, repo: Path, name: str) -> Path:
        clone = self.work / name
        git(self.work, "clone", "-q", str(repo), str(clone))
        return clone

    def _run(self, clone: Path, step: dict, known: dict[str, str]) -> tuple[float, str]:
        env = {**os.environ, "LANGUAGES": LANGUAGES, "PATH": f"{COMMANDS}{os.pathsep}{os.environ['PATH']}",
               "PYTHONPATH": self.pythonpath,
               "GITHUB_OUTPUT": str(clone / ".github-output"),
               **{name: PUSH_TO_MAIN[name] if name in PUSH_TO_MAIN else _expand(str(value), known)
                  for name, value in (step.get("env") or {}).items()}}
        started = time.perf_counter()
        result = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=clone, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if result.returncode:
            raise StepFailed(f"{clone}: {step['run']}: exit status {result.returncode}\n{result.stdout}{result.stderr}")
        return seconds, result.stdout

    def play(self, repo: Path, name: str, kept: Path | None, torch: str,
             installed: tuple[tuple[str, str, str | None], ...] = ()) -> tuple[CIRun, Path]:
        """One CI run of `repo`'s HEAD, named `name`, restoring `kept` (None: nothing kept yet) with torch at
        version `torch` and the stand-ins `installed` (write_torch); returns what it cost and the folder its save
        step kept."""
        self.work.mkdir(parents=True, exist_ok=True)
        write_torch(self.site, torch, installed)
        executed, shard_seconds, run_seconds = 0, 0.0, 0.0
        artifacts = self.work / f"{name}-artifacts"
        clone = self._clone(repo, f"{name}-plan")
        self._run(clone, self.plan, {})
        output = (clone / ".github-output").read_text(encoding="utf-8")
        matrix = json.loads(re.search(r"^matrix=(.*)$", output, re.M)[1])["include"]
        for i, entry in enumerate(matrix, 1):
            clone = self._clone(repo, f"{name}-shard{i}")
            if kept is not None:
                _copy(kept, clone / self.restore)
            seconds, out = self._run(clone, self.execute, {f"matrix.{key}": str(value) for key, value in entry.items()})
            executed += sum(map(int, re.findall(r"^\[execute\] executed (\d+) of", out, re.M)))
            shard_seconds += seconds
            # upload-artifact keeps the paths below their common folder; download-artifact puts each
            # artifact in a folder of its name.
            common = Path(os.path.commonpath(self.upload))
            for path in self.upload:
                _copy(clone / path, artifacts / f"shard-{i}" / Path(path).relative_to(common))
            run_seconds += sum(shards.record([artifacts / f"shard-{i}"]).values())
        clone = self._clone(repo, f"{name}-assemble")
        _copy(artifacts, clone / self.download)
        assemble_seconds, _ = self._run(clone, self.assemble, {})
        for step in self.gather:
            self._run(clone, step, {})
        saved = self.work / f"{name}-cache"
        _copy(clone / self.save, saved)
        return CIRun(executed, shard_seconds, run_seconds, assemble_seconds), saved

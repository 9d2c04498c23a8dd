"""A site adopts the engine where it is (issue 35): the engine's wheel installed into an environment of its own, a
small site in its own git repository keeping its README, Makefile, LICENSE, tests, requirements, workflows and a
gallery named `guides`, with `tutorials_site.sphinxext` in its extensions; `tutorials-site html` at its root builds it
in two languages with its own extension's output and the engine's parts, leaves its repository clean but for the
ignored build folder, and an engine release that only edits a docstring executes nothing again."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ENGINE, executed, git
from tutorials_site.core.runs.stamps import STAMP_META

pytestmark = pytest.mark.site  # every test here builds the engine's wheel and a site

# The site's files, its own (none of them the engine's): what a maintained site has at its root.
SITE = {
    "README.md": "# Wind tutorials\n\nOur README, which stays ours.\n",
    "LICENSE": "Our licence.\n",
    "Makefile": "# our own targets\nhtml:\n\ttutorials-site html\n",
    "requirements.txt": "tutorials-site\nsphinx-rtd-theme\n",
    ".gitignore": "_build/\n__pycache__/\n",
    ".github/workflows/ours.yml": "name: ours\non: push\njobs: {}\n",
    "tests/test_ours.py": "def test_ours():\n    assert True\n",
    "_ext/windrose.py": (
        '"""Our extension: a directive of our own."""\n'
        "from docutils import nodes\nfrom docutils.parsers.rst import Directive\n\n\n"
        "class Windrose(Directive):\n"
        "    def run(self):\n"
        '        return [nodes.paragraph(text="A windrose drawn by our own extension.")]\n\n\n'
        "def setup(app):\n"
        '    app.add_directive("windrose", Windrose)\n'
        '    return {"parallel_read_safe": True}\n'),
    "conf.py": (
        "import os, sys\nsys.path.insert(0, os.path.abspath('_ext'))\n"
        "project = 'Wind tutorials'\n"
        "extensions = ['windrose', 'sphinx_gallery.gen_gallery', 'tutorials_site.sphinxext']\n"
        "sphinx_gallery_conf = {'examples_dirs': ['guides'], 'gallery_dirs': ['auto_guides'],"
        " 'filename_pattern': r'\\.py$'}\n"
        "language = 'en'\ntutorials_languages = ['en', 'ko']\n"
        "html_theme = 'sphinx_rtd_theme'\n"
        "exclude_patterns = ['guides', 'README.md', 'tests', '_build', '.github']\n"),
    "index.rst": "Wind tutorials\n==============\n\n.. windrose::\n\n.. toctree::\n\n   auto_guides/index\n",
    "guides/README.txt": "Guides\n======\n",
    "guides/plot_breeze.py": '"""\nA breeze\n========\n\nIt measures a breeze.\n"""\n\nprint("the breeze blows at", 3, "m/s")\n',
    "locales/ko/LC_MESSAGES/guides/plot_breeze.po": (
        'msgid ""\nmsgstr ""\n"Language: ko\\n"\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "A breeze"\nmsgstr "산들바람"\n'),
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The engine's wheel, built from its folder as its release is (without reaching the package registry)."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "engine"
    shutil.copytree(ENGINE, source, ignore=shutil.ignore_patterns("tests", "benchmarks", "__pycache__", "*.egg-info",
                                                                  "build", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(source)],
                   check=True, capture_output=True)
    [built] = out.glob("tutorials_site-*.whl")
    return built


@pytest.fixture(scope="module")
def environment(wheel, tmp_path_factory):
    """A virtual environment of its own with the engine installed from its wheel; the engine's dependencies are
    this environment's (a path in its site-packages, without their start-up hooks: this checkout's editable engine
    stays out). Returns its bin/ folder."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = venv / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    [packages] = venv.glob("lib/python*/site-packages")
    (packages / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def site_command(bin_folder: Path, site: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_folder / "tutorials-site"), *args], cwd=site, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": "", "LANGUAGES": "", **env})


@pytest.fixture(scope="module")
def site(environment, tmp_path_factory):
    """The small site in its own git repository, built once with the installed engine."""
    root = tmp_path_factory.mktemp("wind") / "site"
    for name, text in SITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "our site")
    result = site_command(environment, root, "html")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_the_wheel_carries_the_engine_s_files_and_its_command(environment):
    probe = ("import tutorials_site, pathlib; from tutorials_site.core import assets; "
             "print(pathlib.Path(tutorials_site.__file__).parent); print(len(assets.files()))")
    found = subprocess.run([str(environment / "python"), "-c", probe], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": ""}).stdout.split()
    assert Path(found[0]).is_relative_to(environment.parent) and int(found[1]) > 10  # templates, static, catalogs
    for shipped in ("ci/problem-matchers.json", "ci/tutorials-site.mk", "commands/child_site/sitecustomize.py"):
        assert (Path(found[0]) / shipped).is_file(), shipped
    result = subprocess.run([str(environment / "tutorials-site"), "--help"], capture_output=True, text=True, check=True)
    assert "html" in result.stdout and "import-translation" in result.stdout


def test_the_site_is_built_where_it_is_and_keeps_every_file_of_its_own(site):
    html = site / "_build" / "html"
    english = (html / "en" / "auto_guides" / "plot_breeze.html").read_text(encoding="utf-8")
    korean = (html / "ko" / "auto_guides" / "plot_breeze.html").read_text(encoding="utf-8")
    assert "the breeze blows at 3 m/s" in english and "the breeze blows at 3 m/s" in korean  # one run, both pages
    assert "산들바람" in korean and "A breeze" in english
    assert "A windrose drawn by our own extension." in (html / "en" / "index.html").read_text(encoding="utf-8")
    for page in (english, korean):
        assert 'data-language="ko"' in page and 'data-language="en"' in page  # the engine's language switcher
        assert f'name="{STAMP_META}"' in page  # its execution stamp
        assert "tutorial-provenance" in page  # its provenance line
    assert not (html / "en" / "README.html").exists()  # the site's README is no page (its exclude_patterns)
    assert git(site, "status", "--porcelain", "--ignored=no") == ""  # nothing of the site changed or added


def test_an_engine_release_that_only_edits_a_docstring_executes_nothing(site, environment, tmp_path):
    installed = subprocess.run([str(environment / "python"), "-c", "import tutorials_site; print(tutorials_site.__file__)"],
                               capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ""})
    release = tmp_path / "release"
    shutil.copytree(Path(installed.stdout.strip()).parent, release / "tutorials_site")
    project = release / "tutorials_site" / "core" / "project.py"
    said = '"""The tutorials TUTORIALS names'
    assert said in project.read_text()
    project.write_text(project.read_text().replace(said, '"""The tutorials which TUTORIALS names'))
    again = site_command(environment, site, "html", PYTHONPATH=str(release))
    assert again.returncode == 0, again.stdout + again.stderr
    assert executed(again) == 0


def test_the_engine_installs_from_its_repository_by_a_git_url(tmp_path):
    # As a site's requirements name an unreleased engine: `tutorials-site @ git+URL@REF#subdirectory=engine`.
    repository = git(ENGINE, "rev-parse", "--show-toplevel").strip()
    commit = git(ENGINE, "rev-parse", "HEAD").strip()
    requirement = f"tutorials-site @ git+file://{repository}@{commit}#subdirectory={ENGINE.name}"
    target = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(target), requirement], check=True, capture_output=True)
    assert (target / "tutorials_site" / "commands" / "cli.py").is_file()
    assert (target / "tutorials_site" / "templates" / "common" / "tutorials-switchers.html").is_file()
    [record] = target.glob("tutorials_site-*.dist-info")
    assert "tutorials-site = tutorials_site.commands.cli:main" in (record / "entry_points.txt").read_text()

"""A language's build cache (core.site.build_cache): it stands while nothing the build reads or wrote changed."""

import pytest

from tutorials_site.core.languages import BY_SEG
from tutorials_site.core.layout import BuildTree
from tutorials_site.core.project import Project
from tutorials_site.core.site import build_cache
from tutorials_site.core.site.build_cache import UpToDate, inputs_digest, outputs_snapshot

KO = BY_SEG["ko"]
KEY = "gallery/demo"
# What the language's build reads, as the project holds it; a run's records as the build folder holds them.
PROJECT_FILES = {
    "index.md": "# Home\n",
    "conf.py": 'html_title = "Home"\n',
    "gallery/README.txt": "Gallery\n=======\n",
    "gallery/demo.py": '"""Demo\n====\n"""\n',
    "_templates/layout.html": "{% extends '!layout.html' %}\n",
    "_static/site.css": "body {}\n",
    "locales/ko/LC_MESSAGES/demo.po": 'msgid "Demo"\nmsgstr "데모"\n',
    "locales/ja/LC_MESSAGES/demo.po": 'msgid "Demo"\nmsgstr "デモ"\n',
}
RUN_FILES = ("result.json", "stamp.json", "runner.log")


@pytest.fixture
def tree(tmp_path):
    return BuildTree(tmp_path / "_build")


@pytest.fixture
def site(tmp_path, tree, monkeypatch):
    """A project of one gallery and one tutorial, its run, and a package of extensions with their bytecode."""
    root = tmp_path / "project"
    for name, text in PROJECT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    tree.run_dir(KEY).mkdir(parents=True)
    for name in RUN_FILES:
        (tree.run_dir(KEY) / name).write_text("{}\n")
    package = tmp_path / "tutorials_site"
    (package / "sphinxext" / "__pycache__").mkdir(parents=True)
    (package / "sphinxext" / "gallery.py").write_text("X = 1\n")
    (package / "sphinxext" / "__pycache__" / "gallery.cpython-311.pyc").write_bytes(b"\0")
    monkeypatch.setattr(build_cache, "PACKAGE", package)
    return Project(root, {"examples_dirs": ["gallery"], "gallery_dirs": ["g"]})


def _command(tree):
    return ["-b", "html", "-D", "language=ko", str(tree.src(KO)), str(tree.html / "ko")]


@pytest.mark.parametrize(("changed", "rebuilds"), [
    ("project/index.md", True),
    ("project/conf.py", True),  # html_title, the theme's options: what every page shows
    ("project/gallery/demo.py", True),
    ("project/gallery/data.csv", True),  # a new file beside the tutorials
    ("project/_templates/layout.html", True),
    ("project/_static/site.css", True),
    ("project/locales/ko/LC_MESSAGES/demo.po", True),
    (f"_build/runs/{KEY}/result.json", True),
    (f"_build/runs/{KEY}/stamp.json", True),
    ("tutorials_site/sphinxext/gallery.py", True),
    ("tutorials_site/templates/sphinx_rtd_theme/layout.html", True),  # the engine's templates, styles, labels
    ("tutorials_site/static/tutorials.css", True),
    ("tutorials_site/locale/ko/LC_MESSAGES/sphinx.po", True),
    ("project/locales/ja/LC_MESSAGES/demo.po", False),  # another language's catalog
    (f"_build/runs/{KEY}/runner.log", False),
    ("tutorials_site/sphinxext/__pycache__/gallery.cpython-311.pyc", False),
])
def test_the_inputs_digest_changes_with_what_the_language_build_reads(tmp_path, tree, site, changed, rebuilds):
    before = inputs_digest(tree, site, _command(tree), KO, "environment")
    path = tmp_path / changed
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((path.read_bytes() if path.exists() else b"") + b"\n# changed\n")
    assert (inputs_digest(tree, site, _command(tree), KO, "environment") != before) == rebuilds


def test_the_inputs_digest_changes_with_the_command_line_and_the_environment(tree, site):
    digest = inputs_digest(tree, site, _command(tree), KO, "environment")
    assert inputs_digest(tree, site, _command(tree), KO, "environment") == digest
    assert inputs_digest(tree, site, ["-W", *_command(tree)], KO, "environment") != digest
    assert inputs_digest(tree, site, _command(tree), KO, "another environment") != digest


def test_the_inputs_digest_changes_with_any_installed_distribution(tree, site, tmp_path, monkeypatch):
    # A Sphinx extension or theme installed renders the pages again, though it runs no tutorial again.
    digest = inputs_digest(tree, site, _command(tree), KO, "environment")
    info = tmp_path / "installed" / "sphinx_design-0.6.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sphinx-design\nVersion: 0.6.1\n")
    monkeypatch.syspath_prepend(str(info.parent))
    assert inputs_digest(tree, site, _command(tree), KO, "environment") != digest


def test_the_outputs_snapshot_lists_each_file_by_its_path_size_and_time(tmp_path):
    (tmp_path / "html" / "ko").mkdir(parents=True)
    (tmp_path / "html" / "index.html").write_text("<p>a</p>")
    (tmp_path / "html" / "ko" / "index.html").write_text("<p>ab</p>")
    times = [(tmp_path / "html" / name).stat().st_mtime_ns for name in ("index.html", "ko/index.html")]
    assert outputs_snapshot(tmp_path / "html") == [f"index.html 8 {times[0]}", f"ko/index.html 9 {times[1]}"]
    assert outputs_snapshot(tmp_path / "none") == []


def test_a_build_stands_from_its_success_until_an_input_or_an_output_changes(tree, site):
    outdir = tree.html / "ko"
    outdir.mkdir(parents=True)
    (outdir / "index.html").write_text("<p>built</p>")
    tree.doctrees(KO).mkdir(parents=True)  # Sphinx's, which holds the record
    cache = UpToDate.of(tree, site, KO, _command(tree), "environment")
    assert (cache.record, cache.outdir) == (tree.doctrees(KO) / "inputs.sha256", outdir)
    assert not cache  # never built
    cache.remember()
    assert UpToDate.of(tree, site, KO, _command(tree), "environment")
    assert not UpToDate.of(tree, site, KO, _command(tree), "another environment")
    (outdir / "index.html").write_text("<p>edited</p>")
    assert not UpToDate.of(tree, site, KO, _command(tree), "environment")
    cache.remember()
    (outdir / "extra.html").write_text("")
    assert not UpToDate.of(tree, site, KO, _command(tree), "environment")
    (outdir / "extra.html").unlink()
    assert UpToDate.of(tree, site, KO, _command(tree), "environment")
    cache.forget()  # a build starts: one cut short is not current
    assert not UpToDate.of(tree, site, KO, _command(tree), "environment")
    cache.forget()  # nothing to forget

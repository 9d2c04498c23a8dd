"""Configuration checked first, with suggestions: conf.py's mistakes, TUTORIALS and LANGUAGES typos and commands run
before any build stop at once, in one line naming the file and line, with the closest right name."""

import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, append, build, one_line_error
from tutorials_site import sphinx_gallery_build as sg
from tutorials_site import sphinxext
from tutorials_site.commands import cli
from tutorials_site.core import config_values, languages, project
from tutorials_site.core.errors import UsageError, did_you_mean
from tutorials_site.core.site import audit

GALLERY = 'sphinx_gallery_conf = {\n    "examples_dirs": ["src"],\n    "gallery_dirs": ["out"],\n}\n'


def site(tmp_path: Path, conf: str, **files: str) -> Path:
    """A site of one gallery (src/, two tutorials) whose conf.py is GALLERY (lines 1-4) then CONF."""
    root = tmp_path / "site"
    (root / "src").mkdir(parents=True)
    (root / "src" / "README.txt").write_text("Gallery\n=======\n")
    for name in ("ddp_tutorial.py", "data_parallel_tutorial.py"):
        (root / "src" / name).write_text('"""\nA tutorial\n==========\n"""\nprint(1)\n')
    (root / "conf.py").write_text(GALLERY + conf)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def refused(root: Path) -> str:
    """The message of the ConfError reading the site at ROOT and checking its sphinx_gallery_conf raises."""
    with pytest.raises(project.ConfError) as raised:
        read = project.Project.read(root)
        read.refuse_unknown_options(sg.option_names(), sg.conf_problem(read.options))
    return str(raised.value)


# --- sphinx_gallery_conf: unknown keys (sphinx-gallery's own list), then sphinx-gallery's check of the values ---


def test_an_unknown_sphinx_gallery_option_is_refused_at_its_line_with_the_closest_known_one(tmp_path):
    assert refused(site(tmp_path / "a", "x = 1\nsphinx_gallery_conf['capture_reprr'] = ()\n")) == (
        "conf.py:6: sphinx_gallery_conf['capture_reprr']: unknown option; did you mean 'capture_repr'?")
    assert refused(site(tmp_path / "b", "sphinx_gallery_conf.update(frobnicate_everything=True)\n")) == (
        "conf.py:5: sphinx_gallery_conf['frobnicate_everything']: unknown option; sphinx-gallery's configuration "
        "reference lists its options")


def test_the_known_options_are_sphinx_gallerys_own():
    known = sg.option_names()
    assert {"capture_repr", "examples_dirs", "filename_pattern", "expected_failing_examples"} <= known
    assert "capture_reprr" not in known
    assert sg.conf_problem({"examples_dirs": ["src"], "gallery_dirs": ["out"]}) is None


@pytest.mark.parametrize("conf, message", [
    ("sphinx_gallery_conf['capture_repr'] = ('__rpr__',)\n",
     "conf.py:5: sphinx_gallery_conf['capture_repr']: All entries in 'capture_repr' must be one of "
     "['__repr__', '__str__', '_repr_html_'], got: __rpr__"),
    ("\nsphinx_gallery_conf['reset_modules_order'] = 'sometimes'\n",
     "conf.py:6: sphinx_gallery_conf['reset_modules_order']: reset_modules_order must be in['before', 'after', "
     "'both'], got 'sometimes'"),
])
def test_a_value_sphinx_gallery_refuses_is_reported_at_the_option_s_line(tmp_path, conf, message):
    assert refused(site(tmp_path, conf)) == message


def test_a_wrong_option_stops_a_build_before_anything_runs(tmp_path):
    root = site(tmp_path, "sphinx_gallery_conf['capture_reprr'] = ()\n")
    builddir = tmp_path / "build"
    with pytest.raises(SystemExit) as exited:
        cli.main(["--project", str(root), "html", "--builddir", str(builddir)])
    assert exited.value.code == ("error: conf.py:5: sphinx_gallery_conf['capture_reprr']: unknown option; did you "
                                 "mean 'capture_repr'?")
    assert not builddir.exists()


@pytest.mark.site
def test_a_build_with_a_misspelt_option_stops_at_its_line_before_any_tutorial_runs(project_copy):
    conf = project_copy / "conf.py"
    line = len(conf.read_text(encoding="utf-8").splitlines()) + 1
    append(conf, 'sphinx_gallery_conf["capture_reprr"] = ("__repr__",)\n')
    result = build(project_copy, project_copy / "_build")
    assert one_line_error(result) == (f"error: conf.py:{line}: sphinx_gallery_conf['capture_reprr']: unknown option; "
                                      "did you mean 'capture_repr'?")
    assert "Configuration error" not in result.stdout + result.stderr
    assert not (project_copy / "_build").exists()  # nothing ran, nothing was written


# --- tutorials_* names: one list, in core; sphinxext registers from it ---


def test_a_misspelt_tutorials_setting_is_refused_at_its_line_with_the_closest_name(tmp_path):
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(site(tmp_path / "a", "language = 'en'\ntutorials_lanugages = ['en']\n"))
    assert str(raised.value) == ("conf.py:6: tutorials_lanugages: not a setting of the engine; did you mean "
                                 "'tutorials_languages'?")
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(site(tmp_path / "b", "tutorials_runs = 'mine'\n"))
    assert str(raised.value) == "conf.py:5: tutorials_runs: set by the build itself, which replaces conf.py's value; remove it"
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(site(tmp_path / "d", "tutorials_qqq = 1\n"))
    assert str(raised.value) == ("conf.py:5: tutorials_qqq: not a setting of the engine; the engine's: "
                                 f"{', '.join(config_values.IN_CONF)}")
    read = project.Project.read(site(tmp_path / "c", "tutorials_github_repo = 'a/b'\ntutorials_needs = 'cpu'\n"))
    assert read.conf["tutorials_github_repo"] == "a/b"


def test_sphinxext_registers_exactly_the_settings_sphinx_reads_from_the_one_list():
    registered = {}

    class App:
        def add_config_value(self, name, default, rebuild, types=()):
            registered[name] = (default, rebuild, tuple(types))

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    sphinxext.setup(App())
    assert registered == {value.name: (value.default, value.rebuild, value.types) for value in config_values.VALUES
                          if value.rebuild is not None}
    assert {"tutorials_environment", "tutorials_needs"} <= set(config_values.IN_CONF) - set(registered)  # commands read them
    # No part registers a setting of its own, outside the list.
    package = Path(cli.__file__).parents[1] / "sphinxext"
    assert [p.name for p in package.glob("*.py") if "add_config_value" in p.read_text()] == ["__init__.py"]


# --- conf.py that raises ---


def test_an_error_raised_in_a_module_conf_py_imports_names_both_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "helper_raising", raising=False)
    root = site(tmp_path, "import os, sys\nsys.path.insert(0, os.path.abspath('_ext'))\nimport helper_raising\n"
                          "helper_raising.setup()\n",
                **{"_ext/helper_raising.py": "def setup():\n    return 1 / 0\n"})
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(root)
    assert str(raised.value).startswith("conf.py:8: ZeroDivisionError: division by zero, raised at "
                                        "_ext/helper_raising.py:2 (conf.py is evaluated as Sphinx evaluates it")


def test_a_name_error_in_conf_py_is_at_its_line(tmp_path):
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(site(tmp_path, "html_theme = theme_name\n"))
    assert str(raised.value).startswith("conf.py:5: NameError: name 'theme_name' is not defined (")


# --- TUTORIALS and LANGUAGES ---


@pytest.mark.parametrize("given, meant", [
    ("src/ddp_tutorail.py", "src/ddp_tutorial.py"),  # a typo
    ("ddp_tutorial.py", "src/ddp_tutorial.py"),  # without its folder
    ("data_parallel_tutorial", "src/data_parallel_tutorial.py"),  # without .py
])
def test_a_tutorials_typo_gets_the_closest_tutorial(tmp_path, given, meant):
    with pytest.raises(UsageError) as raised:
        project.Project.read(site(tmp_path, "")).select((given,))
    assert str(raised.value) == (f"TUTORIALS: {given!r} matches no tutorial of conf.py's galleries (src/); did you "
                                 f"mean {meant!r}?")


def test_a_pattern_matching_nothing_gets_no_guess(tmp_path):
    with pytest.raises(UsageError) as raised:
        project.Project.read(site(tmp_path, "")).select(("src/*nothing*",))
    assert "did you mean" not in str(raised.value) and "`ls src/` shows the scripts" in str(raised.value)


@pytest.mark.parametrize("given, meant", [("kr", "ko"), ("zh_CN", "zh-cn"), ("JA", "ja")])
def test_a_languages_typo_gets_the_closest_segment(given, meant):
    with pytest.raises(UsageError) as raised:
        languages.site_languages("en", ["en", "ko", "ja", "zh_CN"]).select(f"en {given}")
    assert str(raised.value) == (f"LANGUAGES: unknown language segment {given!r}; did you mean {meant!r}? (this "
                                 "site's, from conf.py's tutorials_languages: en ko ja zh-cn)")


def test_nothing_close_is_no_suggestion():
    assert did_you_mean("xyz", ["en", "ko"]) == ""


# --- commands run before any build ---


def test_check_and_publish_before_any_build_say_to_run_make_html_first(tmp_path, monkeypatch):
    builddir = tmp_path / "never_built"
    with pytest.raises(SystemExit) as exited:
        cli.main(["--project", str(FIXTURES), "check", "--builddir", str(builddir)])
    assert exited.value.code == f"check: {builddir / 'html'}: nothing built there yet: run `tutorials-site html` first"
    monkeypatch.setenv("PAGES", str(tmp_path / "pages"))
    with pytest.raises(SystemExit) as exited:
        cli.main(["--project", str(FIXTURES), "publish", "--builddir", str(builddir)])
    assert exited.value.code == (f"error: refusing to publish {builddir / 'html'}: nothing built there yet: run "
                                 "`tutorials-site html` first")


def test_audit_before_anything_is_published_says_to_run_docs_first(tmp_path):
    with pytest.raises(audit.AuditError) as raised:
        audit.stable_languages(project.Project.read(FIXTURES), tmp_path / "docs")
    assert str(raised.value) == (f"PAGES={tmp_path / 'docs'}: nothing published there yet: run `VERSION=1.0 "
                                 "tutorials-site docs` first (it builds every language and publishes them into PAGES "
                                 "as the stable version), then `tutorials-site audit`")

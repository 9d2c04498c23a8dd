"""conf.py read as Sphinx reads it, from a folder standing for the site root; the site's languages; the site tree."""

import os
import re
import sys
import time
import unicodedata
from pathlib import Path, PurePosixPath

import pytest

from tutorials_site.core import languages, project, site_tree
from tutorials_site.core.site import staging

GALLERY = 'sphinx_gallery_conf = {"examples_dirs": ["src"], "gallery_dirs": ["out"]}\n'


def site(tmp_path: Path, conf: str, **files: str) -> Path:
    root = tmp_path / "site"
    (root / "src").mkdir(parents=True)
    (root / "src" / "README.txt").write_text("Gallery\n=======\n")
    (root / "conf.py").write_text(GALLERY + conf)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_conf_py_runs_from_a_folder_standing_for_the_root_and_writes_nothing_into_it(tmp_path, monkeypatch):
    root = site(tmp_path, "import os, sys\nsys.path.insert(0, os.path.abspath('_ext'))\nimport helper\n"
                          "NAME = helper.NAME\nos.makedirs('out', exist_ok=True)\nopen('out/made.rst', 'w').close()\n"
                          "HERE = open('data.txt').read()\nHAS = tags.has('html')\n",
                **{"_ext/helper.py": "NAME = 'from the site'\n", "data.txt": "beside conf.py"})
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "helper", raising=False)
    read = project.Project.read(root)
    assert read.conf["NAME"] == "from the site" and read.conf["HERE"] == "beside conf.py" and read.conf["HAS"] is False
    assert not (root / "out").exists()  # what conf.py wrote stayed in the folder it ran in
    assert read.sys_path == (str((root / "_ext").resolve()),)  # the site's folder, for the tutorials' processes


@pytest.mark.parametrize("conf, where", [
    ("x = 1\ny = undefined_name\n", "conf.py:3: NameError: name 'undefined_name' is not defined"),
    ("import no_such_module_here\n", "conf.py:2: ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("x = (\n", "conf.py:2: SyntaxError: '(' was never closed"),
    ("import sys\nsys.exit(3)\n", "conf.py:3: SystemExit: 3"),
])
def test_a_conf_py_that_raises_is_reported_at_its_line_relative_to_the_project(tmp_path, conf, where):
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(site(tmp_path, conf))
    assert str(raised.value).startswith(where + " (conf.py is evaluated as Sphinx evaluates it")
    assert str(tmp_path) not in str(raised.value)


def test_the_sources_language_comes_first_and_the_site_s_languages_from_conf_py(tmp_path):
    korean = project.Project.read(site(tmp_path, "language = 'ko'\ntutorials_languages = ['en', 'ja']\n"))
    assert [lang.seg for lang in korean.languages.all] == ["ko", "en", "ja"]
    assert korean.languages.source.code == "ko" and [lang.seg for lang in korean.languages.translated] == ["en", "ja"]
    default = project.Project.read(site(tmp_path / "b", ""))
    assert [lang.seg for lang in default.languages.all] == ["en", "ko", "ja", "zh-cn"]  # the engine's shipped ones
    with pytest.raises(project.ConfError, match="unknown language code 'xx_YY'"):
        project.Project.read(site(tmp_path / "c", "tutorials_languages = ['en', 'xx_YY']\n"))


def test_any_language_babel_knows_can_be_a_site_s():
    portuguese, thai = languages.of("pt_BR"), languages.of("th")
    assert (portuguese.seg, portuguese.hreflang, portuguese.spaced) == ("pt-br", "pt-BR", True)
    assert portuguese.name.startswith("Português") and not thai.spaced
    assert languages.name_in(languages.of("en"), languages.of("ko")) == "영어"
    site = languages.site_languages("ko", ["en"])
    with pytest.raises(languages.UsageError, match="unknown language segment 'ja' \\(this site's, .*: ko en\\)"):
        site.select("ja")


def test_a_function_conf_py_defines_reaches_a_tutorial_s_process_by_value(tmp_path):
    import pickle

    root = site(tmp_path, "def reset(gallery_conf, fname):\n    return 'reset ' + fname\n"
                          "sphinx_gallery_conf['reset_modules'] = (reset,)\n")
    options = pickle.loads(project.Project.read(root).gallery_conf_pickle)  # noqa: S301 (made just above)
    assert options["reset_modules"][0]({}, "a.py") == "reset a.py"


def test_the_mirror_links_the_whole_site_copies_conf_py_and_leaves_builds_and_tools_out(tmp_path):
    root = site(tmp_path, "", **{"pages/a.rst": "A\n=\n", "README.md": "the site's", "Makefile": "", "guides/x.md": "",
                                 "tests/test_x.py": "", ".github/workflows/ci.yml": "", ".git/HEAD": "",
                                 ".venv/pyvenv.cfg": "", "__pycache__/x.pyc": "",
                                 "old_build/runs/x": "", "old_build/src/x": "", "nested/out/stale.rst": ""})
    folder = tmp_path / "staged"
    site_tree.mirror(root, folder, claimed={PurePosixPath("src"), PurePosixPath("nested/out")})
    assert (folder / "conf.py").is_file() and not (folder / "conf.py").is_symlink()
    assert (folder / "pages").is_symlink() and (folder / "pages").resolve() == (root / "pages").resolve()
    for name in ("README.md", "Makefile", "guides", "tests", ".github"):  # the site's own, whatever its name
        assert (folder / name).is_symlink(), name
    for name in (".git", ".venv", "__pycache__"):  # git's, a virtual environment, a cache: no site's sources
        assert not (folder / name).exists(), name
    assert not (folder / "old_build").exists()  # another build folder
    assert not (folder / "src").exists()  # claimed: a gallery stages it
    assert (folder / "nested").is_dir() and not (folder / "nested").is_symlink()  # above a claimed path: real
    assert not (folder / "nested" / "out").exists()
    (root / "pages").rename(root / "renamed")
    (folder / "made_by_a_build.txt").write_text("kept")
    site_tree.mirror(root, folder)
    assert not (folder / "pages").exists() and (folder / "renamed").is_symlink()  # a link to what is gone goes
    assert (folder / "made_by_a_build.txt").read_text() == "kept"


@pytest.mark.parametrize("options, staged", [
    ("", {"sg_execution_times.rst"}),
    ('"backreferences_dir": "gen/backrefs", "write_computation_times": False', {"gen/backrefs"}),
])
def test_what_sphinx_gallery_writes_at_the_source_root_is_staged_never_a_link_to_the_site_s(tmp_path, options, staged):
    # sphinx-gallery writes its page of all the computation times, and its backreferences, where it finds them: a
    # link to the site's committed copy would be written through (sphinx-gallery 0.19 does)
    committed = {"sg_execution_times.rst": "committed", "gen/backrefs/x.examples": "committed", "gen/other.txt": ""}
    root = site(tmp_path, f"sphinx_gallery_conf.update({{{options}}})\n", **committed)
    folder = tmp_path / "staged"
    site_tree.mirror(root, folder, claimed=staging._claimed(project.Project.read(root)))
    for name in ("sg_execution_times.rst", "gen/backrefs"):  # a link to the site's (or inside one), or nothing yet
        assert ((folder / name).resolve() == (root / name).resolve()) == (name not in staged), name
    assert (folder / "gen" / "other.txt").resolve() == (root / "gen" / "other.txt").resolve()


def test_a_gallery_folder_with_two_headers_is_reported_without_guessing_why(tmp_path):
    root = site(tmp_path, "", **{"src/README.md": "Read me on GitHub\n"})
    assert project.Project.read(root).merged_headers == (
        "src/: 2 gallery headers, README.txt and README.md; sphinx-gallery shows README.txt and ignores README.md",)


def test_conf_py_is_read_once_however_the_root_is_named_and_its_warnings_are_at_its_lines(tmp_path, monkeypatch):
    root = site(tmp_path, "import warnings\nwarnings.warn('no torchvision here')\nCOUNT = []\n")
    with pytest.warns(UserWarning, match="no torchvision here") as warned:
        first = project.current(root)
    assert [(w.filename, w.lineno) for w in warned] == [("conf.py", 3)]
    assert project.current(Path(str(root) + "/")) is first and project.current(tmp_path / "site" / ".." / "site") is first


def test_a_folder_conf_py_was_read_in_by_a_process_that_is_gone_is_removed(tmp_path, monkeypatch):
    import subprocess
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    abandoned = tmp_path / f"{project.CONF_FOLDER}{gone.stdout.strip()}-abc"  # a killed build's, left behind
    mine = tmp_path / f"{project.CONF_FOLDER}{os.getpid()}-def"  # a running process's: kept
    for folder in (abandoned, mine):
        folder.mkdir()
    project.Project.read(site(tmp_path / "s", ""))
    assert not abandoned.exists() and mine.exists()


# --- conf.py's gallery folders and options, checked before anything runs or is deleted (core.conf_checks) ---

def conf_error(root: Path) -> str:
    with pytest.raises(project.ConfError) as raised:
        project.Project.read(root).tutorials  # noqa: B018
    return str(raised.value)


LAID_OUT = ('sphinx_gallery_conf = {{\n'  # line 1
            '    "examples_dirs": {src!r},\n'  # line 2
            '    "gallery_dirs": {out!r},\n'  # line 3
            '}}\n')


def laid_out(tmp_path: Path, src: object, out: object, conf: str = "", **files: str) -> Path:
    root = site(tmp_path, "", **files)
    (root / "conf.py").write_text(LAID_OUT.format(src=src, out=out) + conf)
    return root


@pytest.mark.parametrize("src, out, message", [
    ("src/../../../tutorials_site", "out", "conf.py:2: sphinx_gallery_conf['examples_dirs']: "
     "'src/../../../tutorials_site' resolves to {outside}/tutorials_site, outside the project"),
    ("src/../guides", "out", "conf.py:2: sphinx_gallery_conf['examples_dirs']: guides/ does not exist"),
    (["src"], ["_static"], "conf.py:3: sphinx_gallery_conf['gallery_dirs']: '_static' is _static/ (static files"),
    (["src"], ["assets/css"], "conf.py:3: sphinx_gallery_conf['gallery_dirs']: 'assets/css' is inside assets/ "
     "(conf.py's html_static_path"),
    (["src"], ["locales/ko"], "conf.py:3: sphinx_gallery_conf['gallery_dirs']: 'locales/ko' is inside locales/ "
     "(conf.py's locale_dirs: the translations' catalogs)"),
    (["src"], ["_build/x"], "conf.py:3: sphinx_gallery_conf['gallery_dirs']: '_build/x' is inside _build/ "
     "(the build folder"),
    (["src"], ["src/out"], "conf.py:2: sphinx_gallery_conf['examples_dirs']: 'src' holds 'src/out' (gallery_dirs): "
     "each gallery folder"),
    (["src", "src"], ["a", "b"], "conf.py:2: sphinx_gallery_conf['examples_dirs']: 'src' is 'src' (examples_dirs)"),
    (["."], ["out"], "conf.py:2: sphinx_gallery_conf['examples_dirs']: '.' is the project's root itself"),
    (["/tmp"], ["out"], "conf.py:2: sphinx_gallery_conf['examples_dirs']: '/tmp' is an absolute path"),
])
def test_a_gallery_folder_must_be_a_folder_of_the_project_of_its_own(tmp_path, src, out, message):
    root = laid_out(tmp_path, src, out, "html_static_path = ['assets']\n")
    assert conf_error(root).startswith(message.format(outside=root.parent.parent.resolve()))


def test_a_gallery_folder_is_checked_where_its_symbolic_links_lead(tmp_path):
    root = laid_out(tmp_path, ["linked"], ["out"])
    (root / "linked").symlink_to(root / "_static", target_is_directory=True)
    assert conf_error(root).startswith("conf.py:2: sphinx_gallery_conf['examples_dirs']: 'linked' is _static/")
    (root / "linked").unlink()
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)  # outside the project
    assert conf_error(root).startswith(f"conf.py:2: sphinx_gallery_conf['examples_dirs']: 'linked' resolves to "
                                       f"{tmp_path.resolve()}, outside the project")
    (root / "linked").unlink()
    (root / "a" / "deep").mkdir(parents=True)
    (root / "linked").symlink_to(root / "a" / "deep", target_is_directory=True)
    (root / "conf.py").write_text(LAID_OUT.format(src=["linked/../src"], out=["out"]))  # .. after a link: a/deep/..
    assert conf_error(root).startswith("conf.py:2: sphinx_gallery_conf['examples_dirs']: 'linked/../src' resolves "
                                       "to a/src/ ('..' after a symbolic link), not src/")


def test_a_gallery_folder_written_with_an_inner_dot_dot_that_stays_inside_is_named_plainly(tmp_path):
    root = laid_out(tmp_path, ["other/../src/"], ["out/."])
    (root / "other").mkdir()
    assert [(g.examples_dir, g.gallery_dir) for g in project.Project.read(root).galleries] == [("src", "out")]


def test_a_build_folder_overlapping_a_gallery_folder_is_refused(tmp_path):
    site_ = project.Project.read(laid_out(tmp_path, ["src"], ["out"]))
    builddir = (site_.root / "src" / "build").resolve()
    with pytest.raises(project.ConfError) as raised:
        site_.refuse_overlaps({builddir: "the build folder, BUILDDIR"})
    assert str(raised.value).startswith("conf.py:2: sphinx_gallery_conf['examples_dirs']: 'src' holds src/build/ "
                                        "(the build folder, BUILDDIR)")
    site_.refuse_overlaps({(tmp_path / "elsewhere").resolve(): "the build folder, BUILDDIR"})  # apart: fine


@pytest.mark.parametrize("value", ["True", "2", "'yes'", "'1'", "1.0", "[2]"])
def test_a_refused_option_is_refused_in_any_spelling_at_its_line(tmp_path, value):
    root = site(tmp_path, f"x = 1\nsphinx_gallery_conf['parallel'] = {value}\n")
    assert conf_error(root).startswith(f"conf.py:3: sphinx_gallery_conf['parallel'] = {value} is not supported here")


@pytest.mark.parametrize("option, value", [("parallel", "False"), ("parallel", "1"), ("parallel", "0"),
                                           ("junit", "''"), ("example_extensions", "{'.py'}"),
                                           ("filetype_parsers", "{}")])
def test_an_off_value_of_a_refused_option_passes(tmp_path, option, value):
    assert project.Project.read(site(tmp_path, f"sphinx_gallery_conf.update({option}={value})\n")).tutorials == ()


def test_an_option_s_line_is_found_however_conf_py_sets_it():
    source = ('sphinx_gallery_conf = dict(examples_dirs=["a"],\n'
              '    gallery_dirs=["b"])\n'
              'sphinx_gallery_conf.update({"junit": "x"})\n'
              'sphinx_gallery_conf["examples_dirs"] = ["c"]\n')
    assert project.conf_checks.option_lines(source) == {"examples_dirs": 4, "gallery_dirs": 2, "junit": 3}


@pytest.mark.parametrize("option", ["ignore_pattern", "filename_pattern"])
def test_a_pattern_that_backtracks_catastrophically_is_reported_at_its_line(tmp_path, option):
    root = site(tmp_path, f"\nsphinx_gallery_conf[{option!r}] = r'(\\w+\\w?)+\\.x$'\n",
                **{"src/a_rather_long_script_name_for_a_tutorial.py": '"""T\n=\n"""\n'})
    started = time.monotonic()
    message = conf_error(root)
    assert time.monotonic() - started < 10
    assert message.startswith(f"conf.py:3: sphinx_gallery_conf[{option!r}] = '(\\\\w+\\\\w?)+\\\\.x$' took over 1 s to "
                              "match "), message
    assert "a_rather_long_script_name_for_a_tutorial.py" in message and "backtracks catastrophically" in message


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_two_names_that_differ_only_by_unicode_normalisation_are_refused_with_both_paths(tmp_path, kind):
    nfc, nfd = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
    assert nfc != nfd
    root = site(tmp_path, "")
    for name in (nfc, nfd):
        if kind == "file":
            (root / "src" / f"{name}.py").write_text('"""T\n=\n"""\n')
        else:
            (root / "src" / "part" / name).mkdir(parents=True)
    where = "src/" if kind == "file" else "src/part/"
    suffix = ".py" if kind == "file" else ""
    first, second = sorted([f"{where}{nfc}{suffix}", f"{where}{nfd}{suffix}"])
    assert conf_error(root) == (f"{first} and {second}: two names that differ only by Unicode normalisation (NFC and "
                                "NFD), one name to readers and to some file systems: rename one")


def test_a_slow_pattern_is_stopped_in_the_main_thread_and_timed_elsewhere():
    from concurrent.futures import ThreadPoolExecutor

    slow, texts = re.compile(r"(a+)+$"), ["ok.py", "a" * 60 + "b", "never_reached.py"]
    started = time.monotonic()
    assert project.conf_checks.slow_match(slow, texts, 0.2) == texts[1]  # would take years: stopped
    assert time.monotonic() - started < 5
    with ThreadPoolExecutor(1) as pool:  # no signal reaches another thread: the whole search is timed
        assert pool.submit(project.conf_checks.slow_match, slow, ["a" * 20 + "b"], 0.01).result() == "a" * 20 + "b"
    assert project.conf_checks.slow_match(re.compile(r"\.py$"), ["ok.py"] * 1000, 0.2) is None


def test_a_script_found_usable_is_not_parsed_again_until_it_changes(tmp_path, monkeypatch):
    from conftest import copy_project
    from tutorials_site.commands import prepare
    from tutorials_site.core.errors import SiteError

    root = copy_project(tmp_path / "project")
    site = project.Project.read(root)
    record = tmp_path / "checked.json"
    prepare.refuse_unusable(site, record)
    checked = []
    monkeypatch.setattr(prepare, "_refuse_if_unusable", lambda site, tutorial: checked.append(tutorial.label))
    prepare.refuse_unusable(site, record)
    assert checked == []  # every script as it was: none parsed again
    monkeypatch.undo()
    script = site.tutorials[0].path
    script.write_text("print('no docstring')\n", encoding="utf-8")
    with pytest.raises(SiteError, match="no docstring"):
        prepare.refuse_unusable(site, record)  # changed: checked again, and refused

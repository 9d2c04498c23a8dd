"""conf.py read as Sphinx reads it, from a folder standing for the site root; the site's languages; the site tree."""

import os
import sys
from pathlib import Path, PurePosixPath

import pytest

from tutorials_site.core import languages, project, site_tree

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
    with pytest.raises(languages.UsageError, match="unknown language segment\\(s\\) ja; this site's .*: ko, en"):
        site.select("ja")


def test_a_function_conf_py_defines_reaches_a_tutorial_s_process_by_value(tmp_path):
    import pickle

    root = site(tmp_path, "def reset(gallery_conf, fname):\n    return 'reset ' + fname\n"
                          "sphinx_gallery_conf['reset_modules'] = (reset,)\n")
    options = pickle.loads(project.Project.read(root).gallery_conf_pickle)  # noqa: S301 (made just above)
    assert options["reset_modules"][0]({}, "a.py") == "reset a.py"


def test_the_mirror_links_the_site_copies_conf_py_and_leaves_the_engine_and_builds_out(tmp_path):
    root = site(tmp_path, "", **{"pages/a.rst": "A\n=\n", "README.md": "engine", "tutorials_site/x.py": "",
                                 "old_build/runs/x": "", "old_build/src/x": "", "nested/out/stale.rst": ""})
    folder = tmp_path / "staged"
    site_tree.mirror(root, folder, claimed={PurePosixPath("src"), PurePosixPath("nested/out")})
    assert (folder / "conf.py").is_file() and not (folder / "conf.py").is_symlink()
    assert (folder / "pages").is_symlink() and (folder / "pages").resolve() == (root / "pages").resolve()
    assert not (folder / "README.md").exists() and not (folder / "tutorials_site").exists()  # the engine's
    assert not (folder / "old_build").exists()  # another build folder
    assert not (folder / "src").exists()  # claimed: a gallery stages it
    assert (folder / "nested").is_dir() and not (folder / "nested").is_symlink()  # above a claimed path: real
    assert not (folder / "nested" / "out").exists()
    (root / "pages").rename(root / "renamed")
    (folder / "made_by_a_build.txt").write_text("kept")
    site_tree.mirror(root, folder)
    assert not (folder / "pages").exists() and (folder / "renamed").is_symlink()  # a link to what is gone goes
    assert (folder / "made_by_a_build.txt").read_text() == "kept"


def test_a_gallery_folder_with_two_headers_is_reported(tmp_path):
    root = site(tmp_path, "", **{"src/GALLERY_HEADER.rst": "Other\n=====\n"})
    assert project.Project.read(root).merged_headers == (
        "src/: 2 gallery headers, README.txt and GALLERY_HEADER.rst; sphinx-gallery shows README.txt only (were two "
        "folders copied onto one?): keep one",)


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

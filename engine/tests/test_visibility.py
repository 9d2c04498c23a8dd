"""core.runs.visibility: what of the project a run sees, which is what its fingerprint covers."""

import socket
from pathlib import Path

from tutorials_site.core import project
from tutorials_site.core.runs import fingerprint, visibility


def _site(root: Path) -> project.Project:
    for folder in ("gallery/data/raw", "gallery/section", "gallery/.venv", "lib/pkg", "other"):
        (root / folder).mkdir(parents=True)
    (root / "conf.py").write_text("import os, sys\nsys.path.insert(0, os.path.abspath('lib'))\n"
                                  "sphinx_gallery_conf = {'examples_dirs': ['gallery'], 'gallery_dirs': ['g']}\n")
    for path, text in {"gallery/GALLERY_HEADER.rst": "G\n=\n", "gallery/section/README.txt": "S\n=\n",
                       "gallery/plot_a.py": '"""\nA\n=\n"""\n', "gallery/plot_b.py": '"""\nB\n=\n"""\n',
                       "gallery/section/plot_c.py": '"""\nC\n=\n"""\n', "gallery/section/helper.csv": "1\n",
                       "gallery/data/raw/x.csv": "1\n", "gallery/.venv/pyvenv.cfg": "", "lib/util.py": "",
                       "lib/pkg/__init__.py": "", "lib/notes.txt": "", "other/declared.txt": "",
                       "other/secret.txt": ""}.items():
        (root / path).write_text(text)
    return project.Project.read(root)


def test_a_run_sees_its_folder_but_other_tutorials_its_declared_files_and_conf_py_s_modules(tmp_path):
    site = _site(tmp_path)
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "gallery" / "server.sock"))
    try:
        tutorial = next(t for t in site.tutorials if t.path.name == "plot_a.py")
        seen = visibility.visible(site, tutorial, [tmp_path / "other" / "declared.txt"])
    finally:
        listening.close()
    assert seen.files == ("gallery/GALLERY_HEADER.rst", "gallery/data/raw/x.csv", "gallery/section/README.txt",
                          "gallery/section/helper.csv", "lib/pkg/__init__.py", "lib/util.py", "other/declared.txt")
    # a folder without a hidden script is bound whole; one with another tutorial file by file
    assert tmp_path / "gallery" / "data" in seen.binds and tmp_path / "gallery" / "section" not in seen.binds
    assert tmp_path / "gallery" / "section" / "helper.csv" in seen.binds


def test_a_file_added_to_what_a_run_sees_changes_its_digest_another_tutorial_does_not(tmp_path):
    site = _site(tmp_path)
    tutorial = next(t for t in site.tutorials if t.path.name == "plot_a.py")
    before = fingerprint.tutorial_digest(site, tutorial)
    (tmp_path / "gallery" / "plot_b.py").write_text('"""\nB changed\n=========\n"""\nprint(1)\n')
    assert fingerprint.tutorial_digest(site, tutorial) == before
    (tmp_path / "gallery" / "data" / "new.csv").write_text("2\n")
    assert fingerprint.tutorial_digest(site, tutorial).code != before.code

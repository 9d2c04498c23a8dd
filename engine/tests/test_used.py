"""What a run used (core.runs.used): recorded while it runs, in every process it starts; a run is current while
each project file it read and each distribution it imported is as it was, and nothing else counts."""

import json
import socket
import textwrap

import pytest

from conftest import append, build, executed, tutorials_site
from tutorials_site.commands.execute import RunOptions, run_tutorial, sandbox_here
from tutorials_site.core import project
from tutorials_site.core.runs import currency, used, visibility
from tutorials_site.core.runs.records import Hardware, Stamp, Used, UsedDistribution, UsedFile
from tutorials_site.core.runs.sandbox import Sandbox


def fake_distribution(site, name, version, module=None):
    """An installed distribution in SITE (a folder on sys.path): its metadata and, with MODULE, that module."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if module:
        (info / "top_level.txt").write_text(f"{module}\n")
        (site / f"{module}.py").write_text(f"VERSION = {version!r}\n")
    return info


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder of installed distributions on sys.path, ahead of the rest, as PYTHONPATH puts one."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def recorded(run_dir, *lines):
    folder = run_dir / used.FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "123.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + '["read", "/cut sh')


def test_the_record_holds_the_files_the_run_could_see_and_the_distributions_it_imported(tmp_path, site):
    root, run_dir = tmp_path / "project", tmp_path / "project" / "_build" / "runs" / "t"
    (root / "data").mkdir(parents=True)
    (root / "data" / "in.csv").write_text("1,2\n")
    fake_distribution(site, "Fake_Dist", "1.2+cpu", module="fake_mod")
    fake_distribution(site, "runtime-lib", "3.0", module="runtime_mod")
    recorded(run_dir, ["read", str(root / "data" / "other.csv")], ["module", "fake_mod"], ["module", "json"],
             ["module", "runtime_mod"], ["module", "optional_dep"], ["module", "__main__"])
    record = used.record(run_dir, root, ["data/in.csv", "gone.json"], ignored={"runtime-lib"})
    # the files it could see, by the build's own reading (a line of another kind, the run's to write, counts for nothing)
    assert record.files == (UsedFile("data/in.csv", used.file_digest(root / "data" / "in.csv")),
                            UsedFile("gone.json", used.ABSENT))
    # by canonical name and release; the standard library is no distribution; an ignored one counts by its pin
    # optional_dep: looked for, went without (no distribution has it): installing it later runs nothing again
    assert record.distributions == (UsedDistribution("fake-dist", "1.2"),)


SOURCE = used.SourceDigest("s", ())


def stamp(used_record):
    return Stamp(source="s", environment="e", outputs="o", seconds=1.0, failed=False, peak_rss_mb=1.0, gpu_peak_mb=(),
                 hardware=Hardware(device="CPU", gpus=0, machine="x86_64", torch=None, cuda=None), commit="c",
                 date="d", files=(), used=used_record)


@pytest.mark.parametrize("cites, moved, current", [
    (False, False, True), (False, True, True),  # its output holds no line number: a prose edit moves nothing shown
    (True, False, True), (True, True, False),  # it cites the script's lines (a traceback, a warning) and they moved
])
def test_a_run_that_cites_the_scripts_lines_is_current_while_its_code_stays_on_them(cites, moved, current):
    import dataclasses

    run = dataclasses.replace(stamp(None), code_lines=(7, 20), cites_lines=cites)
    now = used.SourceDigest("s", (9, 22) if moved else (7, 20))
    assert (currency.problems(now, None, stamp=run) == []) == current
    assert currency.problems(used.SourceDigest("code changed", (7, 20)), None, stamp=run) == [
        "output comes from another version of the source (its code, a setting comment or a file it declares it reads)"]


def test_a_run_is_current_until_a_file_it_read_or_a_distribution_it_imported_changes(tmp_path, site):
    root = tmp_path / "project"
    root.mkdir()
    (root / "helper.py").write_text("VALUE = 1\n")
    imported = fake_distribution(site, "numpy-like", "2.0", module="numpy_like")
    record = Used(files=(UsedFile("helper.py", used.file_digest(root / "helper.py")),),
                  distributions=(UsedDistribution("numpy-like", "2.0"),))
    assert currency.problems(SOURCE, used.Present(root, "e"), stamp=stamp(record)) == []
    # installing what the run did not import (the test tools, a Sphinx extension) changes nothing
    fake_distribution(site, "pytest-like", "8.0", module="pytest_like")
    fake_distribution(site, "sphinx-design", "0.6")
    assert currency.problems(SOURCE, used.Present(root, "e"), stamp=stamp(record)) == []
    # the other parts of the fingerprint, and a record from before records
    other = used.SourceDigest("other source", ())
    assert len(currency.problems(other, used.Present(root, "other env"), stamp=stamp(record))) == 2
    assert currency.problems(SOURCE, used.Present(root, "e"), stamp=stamp(None)) == [
        "ran before the build recorded what a run uses"]
    # a helper it loaded changed; a distribution it imported upgraded
    append(root / "helper.py", "# changed\n")
    assert currency.problems(SOURCE, used.Present(root, "e"), stamp=stamp(record)) == [
        "a project file it could read changed since: helper.py"]
    (root / "helper.py").write_text("VALUE = 1\n")
    upgraded = imported.rename(site / "numpy_like-2.1.dist-info")
    (upgraded / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy-like\nVersion: 2.1\n")
    assert currency.problems(SOURCE, used.Present(root, "e"), stamp=stamp(record)) == [
        "a distribution it imported changed since: numpy-like 2.0 -> 2.1"]


TUTORIAL = '''"""
Uses things
===========
"""
import importlib
import multiprocessing
import socket
import subprocess
import sys

helper = importlib.import_module("loaded_helper")
print(helper.VALUE, subprocess.run(["cat", "data/input.csv"], capture_output=True, text=True).stdout.strip())
for hidden in ("../../other/secret.txt", "plot_other.py", "../../_static/x.txt", "../../conf.py"):
    try:
        open(hidden).read()
        print(hidden, "read")
    except OSError as error:
        print(hidden, error.strerror)
try:
    socket.socket(socket.AF_UNIX).connect("sock")
except OSError as error:
    print("sock", error.strerror)
with open("made_here.txt", "w") as made:
    made.write("its own output")


def work(n):
    import fake_mod  # in a forked worker only
    return n + len(fake_mod.VERSION)


if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(1) as pool:
        print(pool.map(work, [1]))
'''


@pytest.mark.tutorial
def test_a_run_sees_of_the_project_what_its_fingerprint_covers_whatever_reads_it(tmp_path, site, monkeypatch):
    root = tmp_path / "project"
    for folder in ("gallery/data", "other", "_static"):
        (root / folder).mkdir(parents=True)
    (root / "conf.py").write_text("sphinx_gallery_conf = {'examples_dirs': ['gallery'], 'gallery_dirs': ['g'], "
                                  "'ignore_pattern': 'loaded_helper'}\n")
    (root / "gallery" / "GALLERY_HEADER.rst").write_text("Gallery\n=======\n")
    source = root / "gallery" / "plot_uses.py"
    source.write_text(TUTORIAL)
    (root / "gallery" / "plot_other.py").write_text('"""\nOther\n=====\n"""\n')
    (root / "gallery" / "loaded_helper.py").write_text("VALUE = 7\n")
    (root / "gallery" / "data" / "input.csv").write_text("1,2\n")
    (root / "other" / "secret.txt").write_text("not its own")
    (root / "_static" / "x.txt").write_text("not its own")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(root / "gallery" / "sock"))  # a unix socket in the project: a server of the builder's
    listening.listen()
    fake_distribution(site, "fake-dist", "1.0", module="fake_mod")
    site_project = project.Project.read(root)
    tutorial = next(t for t in site_project.tutorials if t.path == source)
    seen = visibility.visible(site_project, tutorial, [])
    # its folder but the other tutorial and the socket (its own script counts by its source digest); no other folder
    assert seen.files == ("gallery/GALLERY_HEADER.rst", "gallery/data/input.csv", "gallery/loaded_helper.py")
    workdir = tmp_path / "build" / "work"
    workdir.mkdir(parents=True)
    for path in (root / "gallery").iterdir():  # the working folder links the tutorial's files, as a build's does
        (workdir / path.name).symlink_to(path)
    run_dir = tmp_path / "build" / "run"
    monkeypatch.syspath_prepend(site)  # in the sandbox as a build's sys.path is (the build runs with it there)
    confined = sandbox_here(root, (tmp_path / "build",))
    assert isinstance(confined, Sandbox), confined
    try:
        outcome = run_tutorial(source, run_dir, workdir, RunOptions.defaults(root, "g/images"), timeout=120,
                               label="t", env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}, confined=confined,
                               visible=seen.binds)
    finally:
        listening.close()
    assert outcome.ok, outcome.result
    assert outcome.result.blocks[0].texts[0].splitlines() == [
        "7 1,2", "../../other/secret.txt No such file or directory", "plot_other.py No such file or directory",
        "../../_static/x.txt No such file or directory", "../../conf.py No such file or directory",
        "sock No such file or directory", "[4]"]
    record = used.record(run_dir, root, seen.files, ignored=())
    assert UsedDistribution("fake-dist", "1.0") in record.distributions
    assert (workdir / "made_here.txt").read_text() == "its own output"  # written there, and no file of its fingerprint


def small_tutorial(n, code):
    return f'"""\nSmall tutorial {n}\n==================\n"""\n# tutorials-needs: cpu\n{textwrap.dedent(code)}'


@pytest.mark.site
@pytest.mark.tutorial
def test_a_build_runs_again_exactly_the_tutorials_whose_files_or_distributions_changed(stubbed_copy, tmp_path):
    gallery = stubbed_copy / "beginner_source"
    append(stubbed_copy / "conf.py", "\nsphinx_gallery_conf['ignore_pattern'] = r'__init__\\.py|fp_helper'\n")
    (gallery / "fp_helper.py").write_text("VALUE = 1\n")
    (gallery / "plot_importlib.py").write_text(small_tutorial(1, """
        import importlib
        print(importlib.import_module("fp_helper").VALUE)
        """))
    (gallery / "plot_imports_dist.py").write_text(small_tutorial(2, "import fake_mod\nprint(fake_mod.VERSION)\n"))
    site = tmp_path / "site"
    info = fake_distribution(site, "fake-dist", "1.0", module="fake_mod")
    env = {"LANGUAGES": "en", "PYTHONPATH": str(site)}
    builddir = stubbed_copy / "_build"
    first = build(stubbed_copy, builddir, env=env)
    assert first.returncode == 0 and executed(first) == 4, first.stdout + first.stderr
    # a distribution no tutorial imports: installed, nothing runs again
    fake_distribution(site, "sphinx-design", "0.6.1", module="sphinx_design_like")
    assert executed(build(stubbed_copy, builddir, env=env)) == 0
    assert tutorials_site(stubbed_copy, "check", **env).returncode == 0
    # the helper loaded with importlib, a file of the gallery folder every tutorial there could read: `check` refuses
    # their pages, and a build runs them again (each, whatever reads the file)
    append(gallery / "fp_helper.py", "VALUE = 2\n")
    check = tutorials_site(stubbed_copy, "check", **env)
    assert check.returncode != 0
    for label in ("plot_importlib", "plot_imports_dist", "data_parallel_tutorial", "ddp_tutorial"):
        assert (f"beginner_source/{label}.py (en): a project file it could read changed since: "
                "beginner_source/fp_helper.py") in check.stdout + check.stderr, label
    again = build(stubbed_copy, builddir, env=env)
    assert executed(again) == 4, again.stdout
    assert "2" in (builddir / "runs" / "beginner_source" / "plot_importlib" / "result.json").read_text()
    # the distribution one tutorial imports, upgraded: that one alone
    info.rename(site / "fake_dist-1.1.dist-info")
    (site / "fake_dist-1.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-dist\nVersion: 1.1\n")
    assert executed(build(stubbed_copy, builddir, env=env)) == 1
    stamped = json.loads((builddir / "runs" / "beginner_source" / "plot_imports_dist" / "stamp.json").read_text())
    assert {"name": "fake-dist", "version": "1.1"} in stamped["used"]["distributions"]

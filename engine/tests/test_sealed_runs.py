"""Sealed runs (issue 27): a run's stamp lists every file of it by digest; a kept, REUSE or shard run, a page and
`make check` take a run only as it was sealed, never through a link; a build that fails leaves no build.json."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, build, copy_project, executed, snapshot
from tutorials_site.core.project import Project
from tutorials_site.core.runs import currency, runs, seal, signing
from tutorials_site.core.runs.records import BlockRecord, BuildInfo, Hardware, RecordError, RunRecord, Stamp, Used
from tutorials_site.core.runs.used import Present, SourceDigest

HARDWARE = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0", cuda=None)
KEY = "gallery/plot_a"
FIGURE = "page/g/images/sphx_glr_plot_a_001.png"
RST = "\n.. rst-class:: sphx-glr-script-out\n\n.. code-block:: none\n\n    hello\n"
# What a forger adds to a page: a script, which the output text and the figures never show.
FORGED_RST = "\n\n.. raw:: html\n\n   <script>forged()</script>\n"


PRESENT = Present(FIXTURES, "e" * 64)  # the environment the test's stamps were made in


def _stamp(files):
    return Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=1.0, failed=False,
                 peak_rss_mb=1.0, gpu_peak_mb=(), hardware=HARDWARE, commit="abc", date="2026-01-01 00:00 UTC",
                 files=files, used=Used(files=(), distributions=()))


@pytest.fixture
def sealed(tmp_path):
    """(runs folder, run folder) of a run sealed in its stamp as the build seals it: result, output, a figure."""
    root = tmp_path / "runs"
    run = root / KEY
    RunRecord(blocks=(BlockRecord(line=3, texts=("hello\n",), images=(FIGURE[5:],)),), error=None,
              seconds=1.0).write(run / runs.RESULT)
    (run / "out").mkdir()
    (run / "out" / "0.txt").write_text("hello\n")
    (run / FIGURE).parent.mkdir(parents=True)
    (run / FIGURE).write_bytes(b"\x89PNG figure")
    _stamp(seal.seal(root, KEY)).write(run / runs.STAMP)
    return root, run


def _forge_rst(run):
    """Add a script to the reST of the run's first block, its output text and figures left as they were."""
    data = json.loads((run / runs.RESULT).read_text())
    data["blocks"][0]["html"] = FORGED_RST
    (run / runs.RESULT).write_text(json.dumps(data))


def test_the_stamp_seals_every_file_of_the_run_but_itself(sealed):
    root, run = sealed
    stamp = Stamp.read(run / runs.STAMP)
    assert [(f.path, f.size) for f in stamp.files] == [
        ("out/0.txt", 6), (FIGURE, 11), (runs.RESULT, (run / runs.RESULT).stat().st_size)]
    assert seal.verify(root, KEY, stamp.files) == []
    assert currency.problems(SourceDigest("s" * 64, ()), PRESENT, run=(root, KEY)) == ["the output shown is not what the run produced "
                                                            "(edited after the run?)"]  # the test's outputs digest


def _link_run_folder(root, run, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run, elsewhere)
    run.symlink_to(elsewhere, target_is_directory=True)


def _link_key_folder(root, run, tmp_path):
    shutil.move(root / "gallery", tmp_path / "elsewhere")
    (root / "gallery").symlink_to(tmp_path / "elsewhere", target_is_directory=True)


@pytest.mark.parametrize("tamper, problem", [
    (lambda root, run, tmp: _forge_rst(run),
     "{run}/result.json: not the file its stamp sealed ("),
    (lambda root, run, tmp: (run / "page" / "g" / "images" / "forged.js").write_text("forged()"),
     "{run}/page/g/images/forged.js: not in its stamp's seal (added after the run?)"),
    (lambda root, run, tmp: (run / "page" / "index.md").symlink_to(tmp / "local-secret.txt"),
     "{run}/page/index.md: a symbolic link, never followed; a run holds folders and regular files only"),
    (lambda root, run, tmp: ((run / FIGURE).unlink(), (run / FIGURE).symlink_to(tmp / "local-secret.txt")),
     f"{{run}}/{FIGURE}: a symbolic link, never followed; a run holds folders and regular files only"),
    (lambda root, run, tmp: (run / "out" / "0.txt").unlink(), "{run}/out/0.txt: sealed in its stamp, missing"),
    (lambda root, run, tmp: os.mkfifo(run / "out" / "1.txt"),
     "{run}/out/1.txt: not a regular file; a run holds folders and regular files only"),
    (_link_run_folder, "{run}: a symbolic link, never followed; a run's folder is a folder of its own"),
    (_link_key_folder, "{root}/gallery: a symbolic link, never followed; a run's folder is a folder of its own"),
], ids=["reST", "extra page file", "link to a local file", "figure linked", "missing", "fifo", "run folder linked",
        "key folder linked"])
def test_a_run_that_is_not_as_sealed_is_refused_naming_the_file(sealed, tmp_path, tamper, problem):
    root, run = sealed
    (tmp_path / "local-secret.txt").write_bytes(b"\x89PNG figure")  # even with the figure's bytes
    stamp = Stamp.read(run / runs.STAMP)
    tamper(root, run, tmp_path)
    problems = seal.verify(root, KEY, stamp.files)
    assert len(problems) == 1 and problems[0].startswith(problem.format(run=run, root=root)), problems
    assert currency.problems(SourceDigest("s" * 64, ()), PRESENT, run=(root, KEY)) == problems  # so it is never taken as current
    assert runs.unsealed(root, KEY) == problems  # what assemble and check say


def test_a_run_holding_a_link_cannot_be_sealed(sealed, tmp_path):
    root, run = sealed
    (run / "page" / "leak.txt").symlink_to(tmp_path / "local-secret.txt")
    with pytest.raises(seal.SealError, match=f"^{run}/page/leak.txt: a symbolic link, never followed"):
        seal.seal(root, KEY)


def test_a_record_is_never_read_through_a_link(tmp_path):
    info = BuildInfo(name="main", label="main", release=False, torch="2", languages=("en",), built="now", path="main/",
                     executed=True)
    info.write(tmp_path / "real.json")
    (tmp_path / "build.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(RecordError, match=r"build\.json: cannot be read: a symbolic link, never followed$"):
        BuildInfo.read(tmp_path / "build.json")


def test_a_run_s_page_folder_holds_its_figures_only(tmp_path):
    (tmp_path / "gallery").mkdir()
    (tmp_path / "gallery" / "README.txt").write_text("Gallery\n=======\n")
    (tmp_path / "gallery" / "plot_a.py").write_text('"""Title\n=====\n"""\n')
    [tutorial] = Project(tmp_path, {"examples_dirs": ["gallery"], "gallery_dirs": ["g"]}).tutorials
    root, run = tmp_path / "runs", tmp_path / "runs" / KEY
    (run / FIGURE).parent.mkdir(parents=True)
    (run / FIGURE).write_bytes(b"figure")
    assert [f.path for f in runs.figures(runs.sealed(root, tutorial), tutorial)] == [FIGURE]
    (run / "page" / "_static").mkdir()
    (run / "page" / "_static" / "tutorials.js").write_text("forged()")
    with pytest.raises(seal.SealError, match=f"^{run}/page/_static/tutorials.js: outside page/g/images/, the one "
                                             "folder of a run its page takes files from"):
        runs.sealed(root, tutorial)


def test_a_link_in_place_of_a_run_is_removed_never_followed(sealed, tmp_path):
    root, run = sealed
    _link_run_folder(root, run, tmp_path)
    before = snapshot(tmp_path / "elsewhere")
    runs.clear(root, KEY)
    assert not os.path.lexists(run) and snapshot(tmp_path / "elsewhere") == before


# --- The build, assemble, check and publish ------------------------------------------------------------

SEALED = '''"""
A sealed tutorial
=================

It prints, and draws.
"""

import matplotlib.pyplot as plt

print("sealed tutorial ran")
_ = plt.plot([1, 2, 3])
'''
SEALED_KEY = "beginner_source/sealed_tutorial"
ENGLISH = {"LANGUAGES": "en"}


def _command(project, *args, **env):
    return subprocess.run([sys.executable, "-m", "tutorials_site", *map(str, args)], cwd=project, capture_output=True,
                          text=True, env={**os.environ, "LANGUAGES": "en", **env})


@pytest.fixture(scope="module")
def shard(builds_site, tmp_path_factory):
    """(project, build folder) of a copy with a tutorial that prints and draws, every run made by SHARD=1/1."""
    work = tmp_path_factory.mktemp("sealed")
    project = copy_project(work / "project", kept=None)  # stubs besides: SEALED is the run the tests look at
    (project / "beginner_source" / "sealed_tutorial.py").write_text(SEALED)
    result = build(project, work / "shard", env={**ENGLISH, "SHARD": "1/1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return project, work / "shard"


def _forge_link(run, tmp_path):
    secret = tmp_path / "local-secret.txt"
    secret.write_text("a local file")
    (run / "page" / "beginner" / "images" / "sphx_glr_sealed_tutorial_002.png").symlink_to(secret)


TAMPERED = {
    "reST": (lambda run, tmp: _forge_rst(run), "{run}/result.json: not the file its stamp sealed"),
    "extra page file": (lambda run, tmp: (run / "page" / "beginner" / "images" / "forged.js").write_text("forged()"),
                        "{run}/page/beginner/images/forged.js: not in its stamp's seal"),
    "link to a local file": (_forge_link, "{run}/page/beginner/images/sphx_glr_sealed_tutorial_002.png: a symbolic "
                                          "link, never followed"),
    "run folder linked": (lambda run, tmp: _link_run_folder(None, run, tmp), "{run}: a symbolic link, never followed"),
}


def _copy(folder, target):
    shutil.copytree(folder, target, symlinks=True)
    return target


@pytest.mark.site
@pytest.mark.parametrize("kind", TAMPERED)
def test_a_tampered_kept_run_is_run_again_and_named(shard, tmp_path, kind):
    project, built = shard
    builddir = _copy(built, tmp_path / "build")
    run = builddir / "runs" / SEALED_KEY
    tamper, problem = TAMPERED[kind]
    tamper(run, tmp_path)
    moved = snapshot(tmp_path / "elsewhere") if (tmp_path / "elsewhere").exists() else None
    result = build(project, builddir, env={**ENGLISH, "SHARD": "1/1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert executed(result) == 1, result.stdout  # that one alone
    told = f"[execute] {SEALED_KEY}.py: its run is not the one its stamp sealed, not taken: {problem.format(run=run)}"
    assert told in result.stdout, result.stdout
    assert not run.is_symlink() and runs.unsealed(builddir / "runs", SEALED_KEY) == []  # run again, sealed
    assert moved is None or snapshot(tmp_path / "elsewhere") == moved  # a linked run's target is never touched


@pytest.mark.site
@pytest.mark.parametrize("kind", ["reST", "run folder linked"])
def test_a_tampered_run_in_reuse_is_not_taken(shard, tmp_path, kind):
    project, built = shard
    reuse = tmp_path / "kept"
    _copy(built / "runs", reuse / "runs")
    tamper, problem = TAMPERED[kind]
    tamper(reuse / "runs" / SEALED_KEY, tmp_path)
    result = build(project, tmp_path / "build", env={**ENGLISH, "SHARD": "1/1", "REUSE": str(reuse)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert executed(result) == 1, result.stdout
    assert problem.format(run=reuse / "runs" / SEALED_KEY) in result.stdout, result.stdout
    page_files = snapshot(tmp_path / "build" / "runs" / SEALED_KEY / "page")
    assert page_files and all(name.endswith(".png") and b"forged" not in data for name, data in page_files.items())


@pytest.mark.site
def test_assemble_refuses_a_tampered_shard_run_naming_it(shard, tmp_path):
    project, built = shard
    copy = _copy(built, tmp_path / "shard")
    run = copy / "runs" / SEALED_KEY
    _forge_rst(run)
    result = _command(project, "assemble", "--builddir", tmp_path / "assembled", copy)
    assert result.returncode != 0
    assert result.stderr.startswith("error: SHARDS: a shard's run is not the one its stamp sealed (changed since it "
                                    "ran), nothing copied"), result.stderr
    assert f"\n  {run}/result.json: not the file its stamp sealed (" in result.stderr, result.stderr
    assert not (tmp_path / "assembled" / "runs").exists()


@pytest.mark.site
def test_check_finds_a_tampered_run_and_a_failed_strict_build_leaves_nothing_to_publish(shard, tmp_path):
    project, built = shard
    assembled = tmp_path / "assembled"
    langs = {"LANGUAGES": "en ko"}
    result = _command(project, "assemble", "--builddir", assembled, built, **langs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _command(project, "check", "--builddir", assembled, **langs).returncode == 0

    run = assembled / "runs" / SEALED_KEY
    sealed_result = (run / runs.RESULT).read_bytes()
    _forge_rst(run)
    checked = _command(project, "check", "--builddir", assembled, **langs)
    page = assembled / "html" / "en" / "beginner" / "sealed_tutorial.html"
    assert checked.returncode != 0
    assert f"{page}: beginner_source/sealed_tutorial.py (en): {run}/result.json: not the file its stamp sealed (" \
           in checked.stdout, checked.stdout
    (run / runs.RESULT).write_bytes(sealed_result)

    # STRICT=1: Korean fails (the new tutorial has no translation), English is rendered anew.
    strict = build(project, assembled, env={**langs, "STRICT": "1"})
    assert strict.returncode != 0 and "[build] ko: STRICT=1 and" in strict.stdout, strict.stdout + strict.stderr
    html = assembled / "html"
    assert not (html / "build.json").exists()
    pages = tmp_path / "pages"
    refused = _command(project, "publish", html, PAGES=pages, **langs)
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: refusing to publish {html}: no build.json: its last build failed or did not finish (a build writes it "
        "last, once every language succeeded, so that pages of two builds are never taken for one); build it with "
        "`tutorials-site html`"), refused.stderr
    assert not pages.exists() or not any(pages.iterdir())
    checked = _command(project, "check", "--builddir", assembled, **langs)
    assert checked.returncode != 0 and f"check: {html}: no build.json" in checked.stderr, checked.stderr



# --- Signed runs (core.runs.signing): the key of a trusted build, or nothing taken from elsewhere is verified ---

RUNS_KEY = {"TUTORIALS_RUNS_KEY": "a trusted build's secret"}


@pytest.fixture(scope="module")
def signed_shard(builds_site, tmp_path_factory):
    """(project, build folder) of a copy whose every run was made by SHARD=1/1 with the runs key: signed."""
    work = tmp_path_factory.mktemp("signed")
    project = copy_project(work / "project", kept=None)  # stubs besides: SEALED is the run the tests look at
    (project / "beginner_source" / "sealed_tutorial.py").write_text(SEALED)
    for glossary in project.glob("locales/*/glossary.md"):  # rendered as pages, with a link `make check` refuses
        glossary.unlink()
    result = build(project, work / "shard", env={**ENGLISH, "SHARD": "1/1", **RUNS_KEY})
    assert result.returncode == 0, result.stdout + result.stderr
    return project, work / "shard"


def _reseal(run):
    """Forge the run, then seal it again with the engine's own function: consistent, but not signed."""
    _forge_rst(run)
    stamp = Stamp.read(run / runs.STAMP)
    Stamp.write(dataclasses.replace(stamp, files=seal.seal(run.parents[1], SEALED_KEY)), run / runs.STAMP)


def _edit_stamp(run):
    stamp = Stamp.read(run / runs.STAMP)
    forged = dataclasses.replace(stamp, commit="0000000", date="2030-01-01 00:00 UTC",
                                 hardware=dataclasses.replace(stamp.hardware, device="NVIDIA H100", gpus=8))
    forged.write(run / runs.STAMP)


FORGERIES = {"re-sealed by hand": (_reseal, "its signature does not match its stamp"),
             "stamp edited by hand": (_edit_stamp, "its signature does not match its stamp"),
             "made without the key": (lambda run: (run / seal.SIGNATURE).unlink(), "not signed by a trusted build")}


@pytest.mark.site
@pytest.mark.parametrize("forgery", FORGERIES)
def test_with_the_key_a_forged_or_unsigned_run_is_never_taken(signed_shard, tmp_path, forgery):
    project, built = signed_shard
    shard_copy = _copy(built, tmp_path / "shard")
    run = shard_copy / "runs" / SEALED_KEY
    forge, why = FORGERIES[forgery]
    forge(run)
    assembled = _command(project, "assemble", "--builddir", tmp_path / "assembled", shard_copy, **RUNS_KEY)
    assert assembled.returncode != 0 and f"{run}: {why}" in assembled.stderr, assembled.stderr
    assert not (tmp_path / "assembled" / "runs").exists()  # nothing copied
    # REUSE (CI's kept runs): not taken, that tutorial runs again and is signed
    again = build(project, tmp_path / "build", env={**ENGLISH, "SHARD": "1/1", "REUSE": str(shard_copy), **RUNS_KEY})
    assert again.returncode == 0 and executed(again) == 1, again.stdout + again.stderr
    assert f"[execute] {SEALED_KEY}.py: its run in {shard_copy / 'runs'} is not taken: {why}" in again.stdout
    assert signing.unsigned(RUNS_KEY["TUTORIALS_RUNS_KEY"].encode(), tmp_path / "build" / "runs" / SEALED_KEY,
                            SEALED_KEY) is None


@pytest.mark.site
def test_without_the_key_runs_taken_are_marked_not_verified_and_ci_build_refuses_them(signed_shard, tmp_path):
    project, built = signed_shard
    shard_copy = _copy(built, tmp_path / "shard")
    _edit_stamp(shard_copy / "runs" / SEALED_KEY)  # nothing without the key can tell
    assembled = _command(project, "assemble", "--builddir", tmp_path / "assembled", shard_copy)
    assert assembled.returncode == 0, assembled.stdout + assembled.stderr
    page = (tmp_path / "assembled" / "html" / "en" / "beginner" / "sealed_tutorial.html").read_text()
    assert "not verified" in page
    ci = _command(project, "ci-build", "--builddir", tmp_path / "ci", REUSE=str(shard_copy), NEEDS="lenient")
    assert ci.returncode != 0, ci.stdout + ci.stderr
    assert ("its run was taken from elsewhere without the runs key to verify it (TUTORIALS_RUNS_KEY unset)"
            in ci.stdout), ci.stdout + ci.stderr


@pytest.mark.site
def test_a_run_made_without_its_sandbox_is_never_current_for_a_sandboxed_build(shard, tmp_path):
    project, _ = shard
    builddir = tmp_path / "build"
    first = build(project, builddir, env={**ENGLISH, "SHARD": "1/1", "SANDBOX": "off"})
    assert first.returncode == 0, first.stdout + first.stderr
    again = build(project, builddir, env={**ENGLISH, "SHARD": "1/1"})
    assert again.returncode == 0 and executed(again) == executed(first), again.stdout + again.stderr

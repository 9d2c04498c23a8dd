"""The author's fast loop: `TUTORIALS=... tutorials-site html` executes only the tutorials named, and `tutorials-site serve`."""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psutil
import pytest

from conftest import build, executed, snapshot
from tutorials_site.commands import serve
from tutorials_site.core import terminal
from tutorials_site.core.errors import UsageError
from tutorials_site.core.runs.stamps import STAMP_META

DATA_PARALLEL = "beginner_source/data_parallel_tutorial.py"
DDP = "beginner_source/ddp_tutorial.py"
NOT_EXECUTED = "tutorial-not-executed"  # the class of the box a page without a current run shows


def _page(builddir, stem):
    return (builddir / "html" / "en" / "beginner" / f"{stem}.html").read_text(encoding="utf-8")


def _command(project, *args, **env):
    return subprocess.run([sys.executable, "-m", "tutorials_site", *args], cwd=project, capture_output=True,
                          text=True, env={**os.environ, "LANGUAGES": "en", **env})


def _one_line(result):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr
    return lines[0]


# --- selecting tutorials ------------------------------------------------------------------------------

@pytest.mark.parametrize("patterns, expected", [
    ((DDP,), [DDP]),
    (("beginner_source/*ddp*",), [DDP]),
    (("beginner_source/*",), [DATA_PARALLEL, DDP]),
    (("./beginner_source/../beginner_source/ddp_tutorial.py", DDP), [DDP]),  # normalised, named once
    ((DDP, DATA_PARALLEL), [DATA_PARALLEL, DDP]),  # in the project's order
])
def test_tutorials_are_selected_by_path_or_pattern(fixture_site, patterns, expected):
    assert [t.label for t in fixture_site.select(patterns)] == expected


def test_an_absolute_path_inside_the_project_selects_its_tutorial(fixture_site):
    site = fixture_site
    assert [t.label for t in site.select((str(site.root / DDP),))] == [DDP]


@pytest.mark.parametrize("pattern", ["beginner_source/nope*", "beginner_source/GALLERY_HEADER.rst"])
def test_a_selection_matching_no_tutorial_is_an_error_naming_it(fixture_site, pattern):
    with pytest.raises(UsageError) as error:
        fixture_site.select((DDP, pattern))
    message = str(error.value)
    assert f"TUTORIALS: {pattern!r} matches no tutorial" in message and "`ls beginner_source/`" in message
    assert "\n" not in message


@pytest.mark.site
def test_a_selection_matching_nothing_stops_the_build_before_anything_runs(stubbed_copy):
    builddir = stubbed_copy / "_build"
    assert build(stubbed_copy, builddir, env={"LANGUAGES": "en"}).returncode == 0
    before = snapshot(builddir)
    result = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "TUTORIALS": f"{DDP} beginner_source/*nope*"})
    assert _one_line(result) == ("error: TUTORIALS: 'beginner_source/*nope*' matches no tutorial of conf.py's "
                                 "galleries (beginner_source/); name a script by its path from the project root "
                                 "(beginner_source/ddp_tutorial.py) or by a pattern ('beginner_source/*ddp*'): "
                                 "`ls beginner_source/` shows the scripts")
    assert snapshot(builddir) == before


@pytest.mark.site
def test_only_make_html_takes_a_selection(project_copy):
    result = build(project_copy, project_copy / "_build", "--noplot", env={"LANGUAGES": "en", "TUTORIALS": DDP})
    assert "TUTORIALS: only `tutorials-site html` executes a selection" in _one_line(result)
    assert not (project_copy / "_build" / "html").exists()


# --- a partial build: refused by check and publish until a whole one -----------------------------------

@pytest.mark.site
def test_a_fresh_clone_executes_only_the_selection_and_is_refused_until_built_whole(stubbed_copy, tmp_path):
    builddir, pages = stubbed_copy / "_build", tmp_path / "pages"
    partial = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "TUTORIALS": DATA_PARALLEL})
    assert partial.returncode == 0, partial.stdout + partial.stderr
    assert executed(partial) == 1 and "[execute] beginner_source/data_parallel_tutorial.py" in partial.stdout
    assert not (builddir / "runs" / "beginner_source" / "ddp_tutorial").exists()
    # The page of the selected tutorial shows its run; the other's says it was not executed, as html-noplot's.
    assert STAMP_META in _page(builddir, "data_parallel_tutorial")
    assert NOT_EXECUTED in _page(builddir, "ddp_tutorial") and STAMP_META not in _page(builddir, "ddp_tutorial")

    refusal = ("_build/html: built with TUTORIALS=beginner_source/data_parallel_tutorial.py, the other tutorials "
               "not executed; build the whole site with `tutorials-site html` (no TUTORIALS), then check or publish it")
    check = _command(stubbed_copy, "check", str(builddir / "html"))
    assert _one_line(check) == f"check: {refusal}"  # the folder named from the project's root
    pages.mkdir()
    (pages / "kept.html").write_text("published before")
    before = snapshot(pages)
    refused = _command(stubbed_copy, "publish", str(builddir / "html"), PAGES=str(pages))
    assert _one_line(refused).startswith("error: refusing to publish ") and _one_line(refused).endswith(f" {refusal}")
    assert snapshot(pages) == before

    # The loop: a saved change runs the tutorial again, and Sphinx reads that page alone again (a page
    # without a run, and so without a stamp, is not read at every build).
    source = stubbed_copy / DATA_PARALLEL
    source.write_text(source.read_text(encoding="utf-8") + "\nprint('edited in the loop')\n", encoding="utf-8")
    again = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "TUTORIALS": DATA_PARALLEL})
    assert again.returncode == 0 and executed(again) == 1, again.stdout + again.stderr
    log = terminal.ESCAPE.sub("", (builddir / "logs" / "en.log").read_text())  # coloured where CI is set
    read = re.findall(r"reading sources\.\.\. \[\s*\d+%\] (\S+)", log)
    # (the gallery's index may be read again too: it shows the run's time)
    assert "beginner/data_parallel_tutorial" in read and "beginner/ddp_tutorial" not in read, read
    assert "edited in the loop" in _page(builddir, "data_parallel_tutorial")

    # A whole build executes what the partial one left out, and only that; then it checks.
    whole = build(stubbed_copy, builddir, env={"LANGUAGES": "en"})
    assert whole.returncode == 0 and executed(whole) == 1, whole.stdout + whole.stderr
    assert NOT_EXECUTED not in _page(builddir, "ddp_tutorial")
    assert _command(stubbed_copy, "check", str(builddir / "html")).returncode == 0


@pytest.mark.site
def test_a_selection_shows_current_runs_of_the_others_and_never_a_stale_one(stubbed_copy):
    builddir = stubbed_copy / "_build"
    assert build(stubbed_copy, builddir, env={"LANGUAGES": "en"}).returncode == 0
    # Every other run is current: its page keeps the run's output (the build is still partial).
    result = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "TUTORIALS": "beginner_source/*ddp*"})
    assert result.returncode == 0 and executed(result) == 0, result.stdout + result.stderr
    assert STAMP_META in _page(builddir, "data_parallel_tutorial")
    assert _command(stubbed_copy, "check", str(builddir / "html")).returncode == 1
    # A changed tutorial left out of the selection shows no output rather than its earlier run's.
    source = stubbed_copy / DATA_PARALLEL
    source.write_text(source.read_text(encoding="utf-8") + "\nprint('changed')\n", encoding="utf-8")
    result = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "TUTORIALS": DDP})
    assert result.returncode == 0 and executed(result) == 0, result.stdout + result.stderr
    page = _page(builddir, "data_parallel_tutorial")
    assert NOT_EXECUTED in page and STAMP_META not in page and "sphx-glr-script-out" not in page
    # The whole build runs it again and renders its output.
    whole = build(stubbed_copy, builddir, env={"LANGUAGES": "en"})
    assert whole.returncode == 0 and executed(whole) == 1, whole.stdout + whole.stderr
    assert "changed" in _page(builddir, "data_parallel_tutorial")
    assert _command(stubbed_copy, "check", str(builddir / "html")).returncode == 0


# --- make serve ---------------------------------------------------------------------------------------

def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def _group_left(pgid):
    """The processes still in the process group PGID."""
    left = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) == pgid:
                left.append(process)
    return left


@pytest.mark.site
def test_serve_rebuilds_a_saved_tutorial_and_reloads_the_page(stubbed_copy, tmp_path):
    from websockets.sync.client import connect

    port = _free_port()
    log = (stubbed_copy / "serve.log").open("w")  # in the project: its own output is no save to rebuild for
    server = subprocess.Popen([sys.executable, "-m", "tutorials_site", "serve"], cwd=stubbed_copy, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True,
                              env={**os.environ, "LANGUAGES": "en", "PORT": str(port)})
    url = f"http://127.0.0.1:{port}/en/beginner/data_parallel_tutorial.html"
    try:
        deadline = time.monotonic() + 240
        while True:  # the first build, then the server
            with contextlib.suppress(OSError):
                page = _get(url)
                break
            assert server.poll() is None and time.monotonic() < deadline, (stubbed_copy / "serve.log").read_text()
            time.sleep(0.5)
        assert f'new WebSocket("ws://127.0.0.1:{port}/websocket-reload")' in page  # the reload script
        assert "saved-while-serving" not in page
        # Only its own pages' websocket, and only by its own names: another site's page or a rebound name reach nothing.
        with pytest.raises(Exception, match="403"):
            connect(f"ws://127.0.0.1:{port}/websocket-reload", origin="http://evil.example")
        foreign = urllib.request.Request(url, headers={"Host": f"evil.example:{port}"})
        with pytest.raises(urllib.error.HTTPError, match="403"):
            urllib.request.urlopen(foreign, timeout=10)
        with connect(f"ws://127.0.0.1:{port}/websocket-reload", origin=f"http://127.0.0.1:{port}") as reloads:
            source = stubbed_copy / DATA_PARALLEL
            for temporary in ("4913", "data_parallel_tutorial.py.tmp", "data_parallel_tutorial.py~"):  # an editor's
                (source.parent / temporary).write_text("x")
            source.write_text(source.read_text(encoding="utf-8") + "\nprint('saved-while-serving')\n",
                              encoding="utf-8")
            assert reloads.recv(timeout=240) == "refresh"  # sent once the rebuild is done
        assert "saved-while-serving" in _get(url)  # executed again: the output of the new line shows
        out = (stubbed_copy / "serve.log").read_text()
        assert "[serve] changed: beginner_source/data_parallel_tutorial.py; building" in out  # not the editor's
        assert out.count("[serve] changed:") == 1  # its own log, written by every build, rebuilt nothing
        assert f"[build] served at http://127.0.0.1:{port}/;" in out and "[build] open" not in out
        assert out.count("[execute] beginner_source/ddp_tutorial.py (time limit") == 1  # only what changed ran
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        finally:
            for process in _group_left(server.pid):
                process.kill()
            log.close()
    assert server.returncode is not None and not _group_left(server.pid)


@pytest.mark.site
@pytest.mark.parametrize("port, said", [
    ("80x", "error: PORT: '80x' is not a port number (1 to 65535; for example PORT=8001)"),
    ("70000", "error: PORT: '70000' is not a port number (1 to 65535; for example PORT=8001)"),
    ("taken", "is in use (another `tutorials-site serve`?); give another port, for example PORT="),
])
def test_serve_refuses_a_port_it_cannot_use_before_building(project_copy, port, said):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        number = str(taken.getsockname()[1]) if port == "taken" else port
        result = _command(project_copy, "serve", PORT=number)
    assert said in _one_line(result)
    assert not (project_copy / "_build").exists()


@pytest.mark.parametrize("path, rebuilds", [
    ("beginner_source/ddp_tutorial.py", True),
    ("locales/ko/LC_MESSAGES/beginner_source/data_parallel_tutorial.po", True),
    ("_static/tutorials.css", True),
    ("beginner_source/__pycache__/helper.cpython-311.pyc", False),
    ("beginner_source/.ddp_tutorial.py.swp", False),
    ("beginner_source/ddp_tutorial.py~", False),
    ("beginner_source/.#ddp_tutorial.py", False),  # Emacs' lock
    ("beginner_source/#ddp_tutorial.py#", False),  # Emacs' autosave
    ("beginner_source/4913", False),  # Vim's test of the folder
    ("beginner_source/ddp_tutorial.py.tmp", False),
    ("beginner_source/ddp_tutorial.py___jb_tmp___", False),
    ("beginner_source/data/4913.csv", True),
])
def test_serve_rebuilds_for_inputs_not_for_an_editor_s_files(path, rebuilds, fixture_site):
    assert serve.is_input(fixture_site.root / path) is rebuilds
    assert any((fixture_site.root / path).is_relative_to(folder) for folder in serve.watched(fixture_site))


def test_serve_builds_a_save_in_the_language_it_was_made_in_first(fixture_site):
    from tutorials_site.commands.serve import first_languages

    source, locales = fixture_site.root / DATA_PARALLEL, fixture_site.locales
    ko_catalog = locales / "ko" / "LC_MESSAGES" / "beginner_source" / "data_parallel_tutorial.po"
    assert first_languages(fixture_site, [source], ()) == ("en",)  # the sources' language, then the others
    assert first_languages(fixture_site, [ko_catalog], ()) == ("ko",)
    assert first_languages(fixture_site, [ko_catalog, source], ()) == ("en", "ko")
    assert first_languages(fixture_site, [ko_catalog], ("ko",)) == ()  # serve builds ko alone anyway
    assert first_languages(fixture_site, [ko_catalog], ("en", "ja")) == ()  # nor one serve does not build

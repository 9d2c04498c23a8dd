"""Bad input and faults: a one-line error naming the file (and line) and what to do, a non-zero exit,
and nothing already built or published changed; or, where the input is harmless, it is handled."""

import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

from conftest import (
    FIXTURES,
    KEPT_TUTORIAL,
    MAKE_SITE,
    VENV,
    append,
    build,
    copy_engine,
    executed,
    one_line_error,
    snapshot,
    tutorials_site,
    with_engine,
)
from conftest import _stub as stub
from tutorials_site.core import languages
from tutorials_site.core.errors import SiteError
from tutorials_site.core.layout import BuildTree
from tutorials_site.core.runs import fingerprint, isolation, sandbox
from tutorials_site.core.runs.records import RunRecord
from tutorials_site.core.site import checks
from tutorials_site.core.text import translate, tutorial_text

KO_PO = "locales/ko/LC_MESSAGES/beginner_source/data_parallel_tutorial.po"
JA_SITE_PO = "locales/ja/LC_MESSAGES/index.po"  # the landing page's catalog
EN_KO = {"LANGUAGES": "en ko"}


def _built(project):
    """PROJECT built in English and Korean, ready to be broken."""
    result = build(project, project / "_build", env=EN_KO)
    assert result.returncode == 0, result.stdout + result.stderr
    return project


@pytest.fixture
def built(builds_site, project_copy):
    """A project copy built in English and Korean, ready to be broken."""
    return _built(project_copy)


@pytest.fixture
def built_stubs(builds_site, stubbed_copy):
    """A copy whose tutorials are all stubs (their prose and catalogs whole), built in English and Korean."""
    return _built(stubbed_copy)


def publish(project, htmldir, pages, **env):
    return subprocess.run([sys.executable, "-m", "tutorials_site", "publish", str(htmldir)], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "PAGES": str(pages), **env})


# --- 1. two publishes into one tree at once ----------------------------------------------------------

def test_concurrent_publishes_into_one_tree_both_complete_and_are_listed(published, tmp_path):
    other = tmp_path / "b3"
    result = tutorials_site(published, "html", VERSION="3.0", BUILDDIR=str(other), REUSE=str(published / "_build"))
    assert result.returncode == 0, result.stdout + result.stderr
    builds = {"main": published / "_build" / "html", "3.0": other / "html"}
    for attempt in range(4):
        pages = tmp_path / f"pages{attempt}"
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(publish, [published] * 2, builds.values(), [pages] * 2))
        assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
        manifest = json.loads((pages / "versions.json").read_text())
        assert sorted(v["name"] for v in manifest["versions"]) == ["3.0", "main"]
        for name, htmldir in builds.items():
            built = snapshot(htmldir)
            del built["versions.json"]  # the build's own, for a local preview: never published
            assert snapshot(pages / name) == built  # every other file, whole
        assert not list(pages.glob(".publish-*"))


# --- 2. a publish target that is not a published tree ------------------------------------------------

@pytest.mark.parametrize("target", [".", "locales", "beginner_source"])
def test_publish_refuses_the_repository_and_folders_inside_it(published, target):
    before = snapshot(published / "locales")
    result = publish(published, published / "_build" / "html", published / target, VERSION="locales")
    assert "inside the project" in one_line_error(result) and "PAGES=" in one_line_error(result)
    assert snapshot(published / "locales") == before


def test_publish_refuses_a_folder_that_is_not_a_published_tree(published, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    result = publish(published, published / "_build" / "html", tmp_path / "notes")
    assert "not empty and not a published tree" in one_line_error(result)
    assert snapshot(tmp_path / "notes") == {"todo.txt": b"mine"}


# --- 3. a translation that points somewhere else ---------------------------------------------------------

def test_a_translation_changing_a_role_target_fails_the_build_naming_catalog_and_line(built_stubs):
    po = built_stubs / KO_PO
    text = po.read_text()
    role = ":class:`torch.nn.DataParallel`"
    at = text.index(role, text.index("msgstr", text.index(role)))  # the role in the Korean translation
    po.write_text(text[:at] + ":class:`torch.optim.SGD`" + text[at + len(role):])
    line = text.count("\n", 0, text.rindex("\nmsgid ", 0, at)) + 2
    before = snapshot(built_stubs / "_build" / "html")
    result = build(built_stubs, built_stubs / "_build", env=EN_KO)
    error = one_line_error(result)
    assert error.startswith(f"error: {KO_PO}:{line}: ") and "the translation refers to" in error
    assert role in error and ":class:`torch.optim.SGD`" in error
    assert snapshot(built_stubs / "_build" / "html") == before


@pytest.mark.parametrize(("english", "translated", "changed"), [
    ("Use ``model.to(device)`` here.", "여기서 ``model.to(cpu)`` 를 씁니다.",
     "the translation has the inline code ``model.to(cpu)`` where the English has the inline code ``model.to(device)``"),
    ("Read `the docs <https://pytorch.org/docs>`_.", "`문서 <https://example.com/>`_ 를 읽으세요.",
     "the translation links to https://example.com/ where the English links to https://pytorch.org/docs"),
    ("See :func:`torch.manual_seed`.", ":func:`torch.seed` 를 보세요.",
     "the translation refers to :func:`torch.seed` where the English refers to :func:`torch.manual_seed`"),
    ("A ``x`` and :class:`Y`.", ":class:`Y` 와 ``x``.", None),  # moved within the sentence: fine
])
def test_translations_keep_role_targets_literals_and_links(english, translated, changed):
    unit = tutorial_text.Unit("paragraph", english, [0])
    found = translate.references_changed(unit, translated)
    assert (found is None) if changed is None else (changed in found)


def test_a_language_may_allow_its_own_translation_of_a_linked_page(project_copy):
    english = "Read `the docs <https://pytorch.org/docs>`_."
    translated = "`문서 <https://pytorch.kr/docs>`_ 를 읽으세요."
    unit = tutorial_text.Unit("paragraph", english, [0])
    assert "the translation links to https://pytorch.kr/docs" in translate.references_changed(unit, translated)
    allowed = {"https://pytorch.org/docs": {"https://pytorch.kr/docs"}}
    assert translate.references_changed(unit, translated, allowed) is None


# --- 4. output edited after the run ------------------------------------------------------------------

def test_edited_generated_output_is_rendered_again_and_never_published_as_executed(built):
    rst = built / "_build" / "src" / "en" / "beginner" / "data_parallel_tutorial.rst"
    rst.chmod(0o644)
    rst.write_text(rst.read_text().replace("In Model: input size", "In Model: EDITED size"))
    with open(built / "index.md", "a") as page:
        page.write("\nAnother sentence.\n")
    result = build(built, built / "_build", env=EN_KO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "EDITED" not in (built / "_build" / "html" / "en" / "beginner" / "data_parallel_tutorial.html").read_text()
    assert tutorials_site(built, "check", **EN_KO).returncode == 0


def test_make_check_recomputes_what_the_page_shows(built):
    page = built / "_build" / "html" / "ko" / "beginner" / "data_parallel_tutorial.html"
    page.write_text(page.read_text().replace("In Model: input size", "In Model: EDITED size"))
    result = tutorials_site(built, "check", **EN_KO)
    assert result.returncode != 0
    assert "ko/beginner/data_parallel_tutorial.html" in result.stdout
    assert "the output shown is not what the run produced" in result.stdout


def test_a_damaged_run_is_executed_again_never_up_to_date(built):
    result_json = built / "_build" / "runs" / "beginner_source" / "data_parallel_tutorial" / "result.json"
    data = json.loads(result_json.read_text())
    data["blocks"][-1]["texts"].append("a line the tutorial never printed\n")
    result_json.write_text(json.dumps(data))
    result = build(built, built / "_build", env=EN_KO)
    assert result.returncode == 0 and re.search(r"\[execute\] executed 1 of \d+", result.stdout)  # that one only
    assert "never printed" not in (built / "_build" / "html" / "en" / "beginner" / "data_parallel_tutorial.html").read_text()


# --- 5, 6. catalogs Babel alone would accept, or could not read -----------------------------------------

def test_a_duplicate_msgid_fails_naming_both_lines(built_stubs):
    po = built_stubs / JA_SITE_PO
    text = po.read_text()
    first = text.index("\nmsgid ", text.index('msgid ""') + 10) + 1
    entry = text[first:text.index("\n\n", first) + 2]
    broken = text + "\n" + entry
    po.write_text(broken)
    first_line = text.count("\n", 0, first) + 1
    duplicate_line = broken.count("\n", 0, len(text) + 1) + 1
    before = snapshot(built_stubs / "_build" / "html")
    error = one_line_error(build(built_stubs, built_stubs / "_build", env={"LANGUAGES": "ja"}))
    assert error == (f"error: {JA_SITE_PO}:{duplicate_line}: duplicate message definition "
                     f"(first at line {first_line}); keep one of the two entries")
    assert snapshot(built_stubs / "_build" / "html") == before


def test_a_catalog_that_is_not_utf8_fails_naming_file_and_line(built_stubs):
    po = built_stubs / KO_PO
    data = po.read_bytes()
    at = data.index("병렬".encode())
    po.write_bytes(data[:at] + "병렬".encode("euc-kr") + data[at + len("병렬".encode()):])
    before = snapshot(built_stubs / "_build" / "html")
    line = data.count(b"\n", 0, at) + 1
    error = one_line_error(build(built_stubs, built_stubs / "_build", env=EN_KO))
    assert error.startswith(f"error: {KO_PO}:{line}: not valid UTF-8")
    assert snapshot(built_stubs / "_build" / "html") == before


# --- 7. the same language twice ----------------------------------------------------------------------

@pytest.mark.site
def test_a_language_named_twice_is_built_once(stubbed_copy):
    result = build(stubbed_copy, stubbed_copy / "_build", env={"LANGUAGES": "en en"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("[build] en: sphinx-build") == 1
    assert [lang.seg for lang in languages.site_languages("en", None).select("en ja en")] == ["en", "ja"]


# --- 8. a versions.json entry pointing outside the site ------------------------------------------------

def test_a_version_path_outside_the_site_is_refused(published, gh_pages):
    manifest = json.loads((gh_pages / "versions.json").read_text())
    manifest["versions"][0]["path"] = "../../../etc/"
    (gh_pages / "versions.json").write_text(json.dumps(manifest))
    before = snapshot(gh_pages)
    error = one_line_error(publish(published, published / "_build" / "html", gh_pages))
    assert "versions.json" in error and "'../../../etc/'" in error and "it was not changed" in error
    assert snapshot(gh_pages) == before


# --- 9. make variables are arguments, never shell -----------------------------------------------------

def test_make_variables_never_reach_a_shell(published, tmp_path):
    marker = tmp_path / "pwned"
    pages = f"{tmp_path}/x; touch {marker}"
    result = subprocess.run([*MAKE_SITE, "publish", f"PAGES={pages}"], cwd=published, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists() and (tmp_path / f"x; touch {marker}" / "versions.json").exists()
    result = subprocess.run([*MAKE_SITE, "assemble", f"SHARDS=nowhere; touch {marker}"],
                            cwd=published, capture_output=True, text=True, env={**os.environ, "LANGUAGES": "en"})
    assert result.returncode != 0 and "not a shard's build folder" in result.stderr and not marker.exists()


# --- issue 17: records, build folder lock, time limits (items 6, 10, 13) --------------------------------

TICKS = '''"""
Ticks
=====

Prints a line, then waits for the go-ahead (a file the test makes in its working folder) before the next two:
the build holds its folder that long, however slow the machine.
"""

# tutorials-timeout: 300
import os
import time

print("tick 1")
while not os.path.exists("go-ahead"):
    time.sleep(0.05)
for tick in (2, 3):
    print(f"tick {tick}")
'''
ENGLISH = {"LANGUAGES": "en"}


def _command(project, builddir, *args):
    return subprocess.run([sys.executable, "-m", "tutorials_site", *args, "--builddir", str(builddir)], cwd=project,
                          capture_output=True, text=True, env={**os.environ, **ENGLISH})


def _start_build(project, builddir):
    """A build in the background, returned once it runs ticks_tutorial.py (it holds the folder's lock then)."""
    import time

    process = subprocess.Popen([sys.executable, "-m", "tutorials_site", "html", "--builddir", str(builddir)],
                               cwd=project, env={**os.environ, **ENGLISH}, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    run_dir = builddir / "runs" / "beginner_source" / "ticks_tutorial"
    deadline = time.monotonic() + 120
    while not run_dir.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert run_dir.exists(), process.communicate()[0] if process.poll() is not None else "no run after 120 s"
    return process


@pytest.mark.site
def test_a_second_build_in_one_folder_is_refused_while_the_first_runs(stubbed_copy):
    from tutorials_site.core.site import checks

    (stubbed_copy / "beginner_source" / "ticks_tutorial.py").write_text(TICKS)
    builddir = stubbed_copy / "_build"
    first = _start_build(stubbed_copy, builddir)
    try:
        for command in (("html",), ("html-noplot",), ("assemble", str(builddir)), ("check",), ("publish",)):
            second = _command(stubbed_copy, builddir, *command)
            assert one_line_error(second) == (
                f"error: BUILDDIR={builddir}: in use by another build or check (pid {first.pid} ({sys.executable} "
                f"-m tutorials_site html --builddir {builddir})); wait for it to end"
                + (", or build into another folder (BUILDDIR=...)" if command[0] not in ("check", "publish")
                   else ", then run this again")), command
            assert "[execute]" not in second.stdout and "sphinx-build" not in second.stdout
        (BuildTree(builddir).work / "beginner_source" / "go-ahead").touch()  # where the tutorial runs
        output, _ = first.communicate(timeout=300)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 0, output
    page = (builddir / "html" / "en" / "beginner" / "ticks_tutorial.html").read_text()
    assert [text.strip() for text in checks.output_texts(page)] == ["tick 1\ntick 2\ntick 3"]  # one run, whole
    assert _command(stubbed_copy, builddir, "check").returncode == 0  # the lock went with the build


@pytest.mark.site
def test_a_killed_build_leaves_its_folder_free(stubbed_copy):
    import signal

    (stubbed_copy / "beginner_source" / "ticks_tutorial.py").write_text(TICKS)
    builddir = stubbed_copy / "_build"
    first = _start_build(stubbed_copy, builddir)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    tutorial = stubbed_copy / "beginner_source" / "ticks_tutorial.py"
    tutorial.write_text(TICKS.replace('os.path.exists("go-ahead")', "True"))  # the next build waits for nothing
    result = build(stubbed_copy, builddir, env=ENGLISH)
    assert result.returncode == 0, result.stdout + result.stderr


LIMITS = '''"""
Time limits
===========

A tutorial sets its own time limit with a comment line of its own::

    # tutorials-timeout: 86401
"""

NOT_A_LIMIT = """
# tutorials-timeout: 1e3
"""
print("ran")
{limit}
'''


@pytest.mark.site
def test_only_a_comment_line_sets_a_time_limit_and_beyond_the_maximum_it_is_refused(stubbed_copy):
    tutorial = stubbed_copy / "beginner_source" / "limits_tutorial.py"
    tutorial.write_text(LIMITS.replace("{limit}", "# tutorials-timeout: 999999999"))
    builddir = stubbed_copy / "_build"
    line = LIMITS.splitlines().index("{limit}") + 1
    result = build(stubbed_copy, builddir, env=ENGLISH)
    assert one_line_error(result) == (f"error: beginner_source/limits_tutorial.py:{line}: tutorials-timeout: "
                                      "'999999999' is not a number of seconds between 0 and 86400 (24 h), "
                                      "written like 600 or 90.5")
    assert "[execute]" not in result.stdout and not builddir.exists()  # refused before anything runs

    result = build(stubbed_copy, builddir, env={**ENGLISH, "TUTORIAL_TIMEOUT": "1e3"})
    assert one_line_error(result) == ("error: TUTORIAL_TIMEOUT: '1e3' is not a number of seconds between 0 and 86400 "
                                      "(24 h), written like 600 or 90.5")
    assert not builddir.exists()

    tutorial.write_text(LIMITS.replace("{limit}", "# tutorials-timeout: 60"))
    result = build(stubbed_copy, builddir, env=ENGLISH)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[execute] beginner_source/limits_tutorial.py (time limit 60 s)" in result.stdout
    page = (builddir / "html" / "en" / "beginner" / "limits_tutorial.html").read_text()
    assert "tutorials-timeout: 86401" in page and "tutorials-timeout: 1e3" in page  # the docstring, the string
    assert "tutorials-timeout: 60" not in page  # the run's own setting is not shown to readers
# --- issue 17: output shown as a terminal shows it, within limits; tracebacks without machine paths ----

OUTPUT_TUTORIAL = '''"""
Output
======
"""

# %%
import os
import sys
print("a\\x00b", "\\x0b", "\\x0c", "\\x07\\x1b", "\\x1b[1;32mgreen\\x1b[0m", "\\x1b]0;title\\x07", "ab\\bc",
      "\\ufffe\\u2028", sep="|", flush=True)
os.write(1, b"not UTF-8: \\xff\\xed\\xa0\\x80\\n")
for percent in range(0, 101, 10):
    print(f"\\r{percent}%", end="")
print()

# %%
print("    indented\\n      more")

# %%
class Odd:
    def __repr__(self):
        return "odd \\ud800"

Odd()

# %%
line = "x" * 99 + "\\n"
for _ in range(500_000):  # 50 MB, as fast as it can
    sys.stdout.write(line)
'''
PEAK_RSS = [sys.executable, "-c", "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)"]


@pytest.mark.site
def test_output_is_shown_as_a_terminal_shows_it_within_limits_and_passes_make_check(project_copy):
    (project_copy / "beginner_source" / "zz_output.py").write_text(OUTPUT_TUTORIAL)
    stub(project_copy / "beginner_source" / f"{KEPT_TUTORIAL}.py")  # no torch: the largest process is the build's
    result = subprocess.run([*PEAK_RSS, sys.executable, "-m", "tutorials_site", "html"], cwd=project_copy,
                            capture_output=True, text=True, env={**os.environ, "LANGUAGES": "en"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert int(result.stderr.split()[-1]) < 300 * 1024  # KB: the 50 MB are never held whole by any process
    page = project_copy / "_build" / "html" / "en" / "beginner" / "zz_output.html"
    assert page.stat().st_size < 1024**2
    shown, indented, odd, flood = checks.page_outputs(page)
    # (ESC and the `|` after it are one escape sequence, as a terminal reads them)
    assert shown == "ab|\n   |\n    |green||ac|\ufffd\n\nnot UTF-8: \ufffd\ufffd\ufffd\ufffd\n100%\n"
    assert indented == "    indented\n      more\n"
    assert odd == "odd \ufffd\n"
    assert flood.startswith(("x" * 99 + "\n") * 10) and flood.count("[output truncated: ") == 2
    assert "characters of output (TUTORIAL_OUTPUT_LIMIT)]" in flood and "printed and not recorded" in flood
    check = tutorials_site(project_copy, "check", LANGUAGES="en")
    assert check.returncode == 0, check.stdout + check.stderr
    # Another limit: the runs are made again, and show what it asks for.
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", "TUTORIAL_OUTPUT_LIMIT": "16K"})
    assert result.returncode == 0 and executed(result) == 3, result.stdout + result.stderr
    flood = checks.page_outputs(page)[-1]
    assert len(flood) < 16 * 1024 + 500 and "at most 16,384 characters of output (TUTORIAL_OUTPUT_LIMIT)]" in flood


@pytest.mark.site
def test_an_output_limit_that_is_not_a_size_is_refused_before_anything_runs(project_copy):
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", "TUTORIAL_OUTPUT_LIMIT": "lots"})
    assert one_line_error(result) == ("error: TUTORIAL_OUTPUT_LIMIT: 'lots' is not a positive number of characters "
                                      "(a number, or with K or M: 256K)")
    assert not (project_copy / "_build").exists()
# --- issue 17: a tutorial's processes, environment and writes -----------------------------------------

HOSTILE = '"""\nA hostile tutorial\n==================\n\nIt does what a tutorial should not.\n"""\n\n'
FIRST_CODE_LINE = HOSTILE.count("\n") + 1
# Only the tests' own tutorials (zz_*) are executed: the copy's are shown without output.
ONLY_OURS = 'sphinx_gallery_conf["filename_pattern"] = r"/zz_"'


def with_tutorials(project, tutorials, *conf_lines):
    """PROJECT with TUTORIALS ({name: code}) added to beginner_source/, each under a title, and lines added to
    its conf.py; only those tutorials are executed."""
    for name, code in tutorials.items():
        (project / "beginner_source" / name).write_text(HOSTILE + textwrap.dedent(code).lstrip(), encoding="utf-8")
    with open(project / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("".join(f"\n{line}\n" for line in (ONLY_OURS, *conf_lines)))
    return project


def with_marker(mark):
    return [p for p in psutil.process_iter(["cmdline"]) if mark in (p.info["cmdline"] or [])]


@pytest.mark.site
def test_processes_a_tutorial_leaves_outside_its_group_and_tree_end_with_its_run(project_copy):
    marker = f"escape-{uuid.uuid4().hex}"
    sleeper = f"[sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}]"
    with_tutorials(project_copy, {"zz_escape.py": f"""
        # tutorials-timeout: 60
        import os, shlex, sys, time
        import psutil
        os.system(shlex.join(["setsid", *{sleeper}]) + " > /dev/null 2>&1 &")
        if os.fork() == 0:  # a daemon: fork, setsid, fork, exec
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, {sleeper})
            os._exit(0)
        os.wait()
        while len([p for p in psutil.process_iter(["cmdline"]) if {marker!r} in (p.info["cmdline"] or [])]) < 2:
            time.sleep(0.05)
        print("two processes left behind")
        """})
    try:
        result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert "two processes left behind" in (project_copy / "_build/html/en/beginner/zz_escape.html").read_text()
        assert with_marker(marker) == []  # gone, not left to init: no zombie either (it has no command line)
    finally:
        for process in with_marker(marker):
            process.kill()


READS_ANCESTORS = """
    import os
    pid = os.getppid()
    while pid > 1:  # the build, make, the shell: every ancestor's environment, as the same user may read it
        with open(f"/proc/{pid}/environ", "rb") as environ:
            for entry in environ.read().split(b"\\0"):
                if entry.startswith(b"GITHUB_TOKEN="):
                    print("found", entry.decode())
        with open(f"/proc/{pid}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
    """


@pytest.mark.site
def test_a_tutorial_gets_only_the_allowed_environment(project_copy):
    token = f"ghp_{secrets.token_hex(18)}"
    with_tutorials(project_copy, {"zz_environment.py": """
        import os
        print("token:", os.environ.get("GITHUB_TOKEN"))
        print("threads:", os.environ.get("OMP_NUM_THREADS"), "allowed:", os.environ.get("TUTORIAL_GREETING"))
        """}, 'tutorials_environment = ["TUTORIAL_GREETING"]')
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", "GITHUB_TOKEN": token,
                                                               "OMP_NUM_THREADS": "1", "TUTORIAL_GREETING": "hello"})
    assert result.returncode == 0, result.stdout + result.stderr
    page = (project_copy / "_build/html/en/beginner/zz_environment.html").read_text()
    assert "token: None" in page and "threads: 1 allowed: hello" in page


@pytest.mark.site
def test_in_the_sandbox_a_tutorial_sees_no_ancestor_s_environment(project_copy):
    token = f"ghp_{secrets.token_hex(18)}"
    with_tutorials(project_copy, {"zz_secret.py": READS_ANCESTORS + "print('parent', os.getppid())\n"})
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", "GITHUB_TOKEN": token})
    assert result.returncode == 0, result.stdout + result.stderr
    # Its parent is its PID namespace's first process: no ancestor of its to read.
    assert checks.page_outputs(project_copy / "_build/html/en/beginner/zz_secret.html") == ["parent 1\n"]


@pytest.mark.site
def test_a_withheld_secret_read_from_an_ancestor_never_reaches_a_page(project_copy):
    token = f"ghp_{secrets.token_hex(18)}"
    with_tutorials(project_copy, {"zz_secret.py": READS_ANCESTORS})
    builddir = project_copy / "_build"
    # Without the sandbox, where the builder's processes are the tutorial's to read.
    result = build(project_copy, builddir, env={"LANGUAGES": "en", "GITHUB_TOKEN": token, "SANDBOX": "off"})
    line = one_line_error(result)
    assert line.endswith(f"beginner_source/zz_secret.py:{FIRST_CODE_LINE}: ERROR: its output shows the value of "
                         "GITHUB_TOKEN, withheld from tutorials (its output is redacted, the run not stamped): print no "
                         "secret; a variable that is none and that tutorials need goes in conf.py's tutorials_environment")
    assert token not in result.stdout + result.stderr
    assert [path for path, data in snapshot(builddir).items() if token.encode() in data] == []
    page = (builddir / "html/en/beginner/zz_secret.html").read_text()
    assert "found GITHUB_TOKEN" not in page and "built without running the tutorial" in page  # a refused run: no output
    assert "found GITHUB_TOKEN=[GITHUB_TOKEN withheld]" in (builddir / "runs/beginner_source/zz_secret/result.json").read_text()
    assert not (builddir / "runs/beginner_source/zz_secret/stamp.json").exists()
    assert tutorials_site(project_copy, "check", LANGUAGES="en").returncode != 0  # and so nothing is published


@pytest.mark.site
def test_tutorials_environment_that_is_not_a_list_of_names_is_refused(project_copy):
    with_tutorials(project_copy, {"zz_environment.py": "print('never run')\n"}, 'tutorials_environment = "PATH"')
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en"})
    assert one_line_error(result) == ("error: conf.py: tutorials_environment: 'PATH': must be a list of variable names, "
                                      "each whole (\"WANDB_MODE\", \"MY_DATA_DIR\"), never a pattern such as \"*\" or "
                                      "\"MY_*\", which would give tutorials the builder's secrets")
    assert not (project_copy / "_build/runs/beginner_source/zz_environment/result.json").exists()


SANDBOXED = """
    import os, site
    here = os.path.dirname(__file__)
    targets = {"the build folder": "../../x", "another run": "../../runs/x", "a page": "../../html/index.html",
               "the staged sources": "../../src/en/index.md", "HOME": "~/.gitconfig",
               "the repository": os.path.join(here, "zz_new.py"), "its folder's header": "GALLERY_HEADER.rst",
               "site-packages": os.path.join(site.getsitepackages()[0], "zz_hook.pth")}
    for name, target in targets.items():
        try:
            with open(os.path.expanduser(target), "a") as file:
                file.write("planted")
            print(name, "written")
        except OSError as error:
            print(name, error.strerror)
    print("HOME holds", sorted(os.listdir(os.path.expanduser("~"))), "and the build folder", os.listdir("../.."))
    written = open("data.txt", "w").write("a file of its own")

    # %%
    open(os.path.join(here, "zz_new.py"), "w")  # unguarded: the run fails
    """
SANDBOX_SAYS = ["the build folder Read-only file system", "another run No such file or directory",
                "a page No such file or directory", "the staged sources No such file or directory", "HOME written",
                "the repository Read-only file system", "its folder's header Read-only file system",
                "site-packages Read-only file system", "HOME holds ['.gitconfig'] and the build folder ['work']"]


@pytest.mark.site
def test_a_tutorial_s_writes_outside_its_folders_are_refused_by_the_sandbox(project_copy, tmp_path):
    builddir, home = project_copy / "_build", tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n")
    assert build(project_copy, builddir, "--noplot", env={"LANGUAGES": "en"}).returncode == 0  # pages to write on
    with_tutorials(project_copy, {"zz_sandboxed.py": SANDBOXED})
    before = {name: data for name, data in snapshot(project_copy).items() if not name.startswith("_build/")}
    [packages] = VENV.glob("lib/python*/site-packages")
    try:
        result = build(project_copy, builddir, env={"LANGUAGES": "en", "HOME": str(home)})
    finally:
        (packages / "zz_hook.pth").unlink(missing_ok=True)  # where a sandbox that failed would have written
    script = (project_copy / "beginner_source/zz_sandboxed.py").read_text().splitlines()
    line = next(number for number, text in enumerate(script, 1) if "unguarded" in text)
    assert (f"beginner_source/zz_sandboxed.py:{line}: ERROR: tutorial failed: OSError: [Errno 30] Read-only file "
            "system: 'beginner_source/zz_new.py'") in result.stdout, result.stdout + result.stderr
    assert checks.page_outputs(builddir / "html/en/beginner/zz_sandboxed.html")[0].splitlines() == SANDBOX_SAYS
    assert {name: data for name, data in snapshot(project_copy).items() if not name.startswith("_build/")} == before
    assert (home / ".gitconfig").read_text() == "[user]\n"  # the one it wrote was its own HOME's
    assert not (packages / "zz_hook.pth").exists()
    assert [name for name, data in snapshot(builddir).items() if data.endswith(b"planted")] == []
    assert not (builddir / "work").exists()  # its working folder, HOME and temporary folder went with the run


@pytest.mark.site
@pytest.mark.parametrize("sandboxed", ["on", "off"])
def test_a_tutorial_writing_into_a_data_folder_beside_it_writes_into_its_working_folder(project_copy, sandboxed):
    (project_copy / "beginner_source/data").mkdir()
    (project_copy / "beginner_source/data/input.txt").write_text("data\n")
    with_tutorials(project_copy, {"zz_data.py": """
        import os
        print(open("data/input.txt").read(), end="")
        open("data/model.pt", "w").write("weights")
        print(os.getcwd().endswith("/_build/work/beginner_source"), open("data/model.pt").read())
        """})
    before = snapshot(project_copy / "beginner_source")
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", "SANDBOX": sandboxed})
    assert result.returncode == 0, result.stdout + result.stderr
    assert snapshot(project_copy / "beginner_source") == before
    assert not (project_copy / "_build/work").exists()  # removed after the run: the next starts afresh
    page = (project_copy / "_build/html/en/beginner/zz_data.html").read_text()
    assert "data\nTrue weights" in page
    said = ("[execute] SANDBOX=off: the tutorials run without a sandbox" in result.stdout,
            "run without a sandbox" in page)
    assert said == ((True, True) if sandboxed == "off" else (False, False))


@pytest.mark.site
def test_saves_while_a_tutorial_runs_never_fail_the_build_and_its_own_makes_its_run_stale(project_copy):
    with_tutorials(project_copy, {"zz_save.py": """
        import os, time
        here = os.path.dirname(__file__)
        open("started", "w").close()
        while open(os.path.join(here, "saved")).read() != "saved":  # a file it sees, as it is now, read-only
            time.sleep(0.05)
        print("the text it runs:", open(__file__).read().endswith("# saved" + "\\n"))
        """})
    builddir, source = project_copy / "_build", project_copy / "beginner_source/zz_save.py"
    (project_copy / "beginner_source/saved").write_text("")  # it sees the files of its folder there when it starts

    def save_while_it_runs():
        while not (builddir / "work/beginner_source/started").exists():
            time.sleep(0.05)
        append(source, "# saved\n")
        append(project_copy / "index.md", "\nSaved meanwhile.\n")
        (project_copy / "beginner_source/saved").write_text("saved")

    saver = threading.Thread(target=save_while_it_runs)
    saver.start()
    result = build(project_copy, builddir, env={"LANGUAGES": "en"})
    saver.join()
    assert result.returncode == 0 and executed(result) == 1, result.stdout + result.stderr
    assert checks.page_outputs(builddir / "html/en/beginner/zz_save.html") == ["the text it runs: False\n"]
    again = build(project_copy, builddir, env={"LANGUAGES": "en"})
    assert again.returncode == 0 and executed(again) == 1, again.stdout + again.stderr  # its run was stale
    assert checks.page_outputs(builddir / "html/en/beginner/zz_save.html") == ["the text it runs: True\n"]


@pytest.mark.site
def test_without_bubblewrap_the_build_says_what_to_install_and_runs_nothing(project_copy, tmp_path):
    with_tutorials(project_copy, {"zz_never.py": "print('never run')\n"})
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "git").symlink_to(shutil.which("git"))  # what the build needs of PATH, bwrap left out
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", "PATH": str(tmp_path / "bin")})
    assert one_line_error(result) == sandbox.unavailable(None, "")
    assert "apt-get install bubblewrap" in one_line_error(result) and "SANDBOX=off" in one_line_error(result)
    assert not (project_copy / "_build/runs/beginner_source/zz_never/result.json").exists()


def test_the_environment_fingerprint_covers_python_startup_hooks(tmp_path, monkeypatch):
    monkeypatch.setattr(fingerprint, "site_folders", lambda: [tmp_path / "site-packages"])
    (tmp_path / "site-packages").mkdir()
    seen = {fingerprint.environment_fingerprint(FIXTURES)}
    (tmp_path / "site-packages" / "zz_hook.pth").write_text("import os\n")
    seen.add(fingerprint.environment_fingerprint(FIXTURES))
    (tmp_path / "site-packages" / "zz_hook.pth").write_text("import sys\n")
    seen.add(fingerprint.environment_fingerprint(FIXTURES))
    (tmp_path / "path").mkdir()
    (tmp_path / "path" / "sitecustomize.py").write_text("")
    monkeypatch.syspath_prepend(tmp_path / "path")
    seen.add(fingerprint.environment_fingerprint(FIXTURES))
    assert len(seen) == 4


def test_the_values_looked_for_in_output_are_those_of_secrets_not_of_ci_or_shell():
    builder = {
        "GITHUB_TOKEN": "ghp_0123456789abcdefghij", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIbPxRfiCYEXAMPLEKEY",
        "DB_PASSWORD": "correcthorse", "WANDB_ORG_ID": "a1b2c3d4e5f6g7h8i9j0", "DATABASE": "postgres://me:pw@db/x",
        # found by chance: torch.hub prints https://github.com/..., a download URL names the repository
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "pytorch/tutorials", "PWD": "/work/tutorials",
        "SHELL_NAME": "bash", "OLDHOME": "/home/someone/else", "HOME": "/home/someone/else",
    }
    given = isolation.tutorial_environment(builder)
    assert sorted(isolation.withheld(builder, given)) == [
        "AWS_SECRET_ACCESS_KEY", "DATABASE", "DB_PASSWORD", "GITHUB_TOKEN", "WANDB_ORG_ID"]


def _printed(*texts, error=None):
    from tutorials_site.core.runs.records import BlockRecord, RunError

    blocks = tuple(BlockRecord(line=10 + index, texts=(text,), images=()) for index, text in enumerate(texts))
    return RunRecord(blocks=blocks, error=error and RunError(line=40, block_line=30, message=error))


@pytest.mark.parametrize("shown, what", [
    (lambda v: v[::-1], "reversed"),
    (lambda v: base64.b64encode(v.encode()).decode(), "base64"),
    (lambda v: base64.b64encode(b"token=" + v.encode() + b"\n").decode(), "base64"),  # inside a longer text
    (lambda v: base64.b64encode(b"x" + v.encode()).decode(), "base64"),  # at another offset
    (lambda v: base64.urlsafe_b64encode(b"xy" + v.encode()).decode(), "base64"),
    (lambda v: v.encode().hex(), "hex"),
    (lambda v: v.encode().hex().upper(), "hex"),
    (lambda v: urllib.parse.quote(v, safe=""), "URL-encoded"),
])
def test_a_withheld_secret_is_found_reversed_and_encoded_and_redacted_in_that_form(tmp_path, shown, what):
    value = "pw+/?ghp_0123456789&abc def~~~"  # characters that each encoding writes differently
    secrets_ = {"GITHUB_TOKEN": value}
    result = _printed("nothing here", f"printed: {shown(value)} (end)")
    assert isolation.leaks(result, secrets_) == [(11, f"GITHUB_TOKEN ({what})")]
    assert isolation.leaks(_printed("nothing here", error=f"ValueError: {shown(value)}"), secrets_) == [
        (40, f"GITHUB_TOKEN ({what})")]
    result.write(tmp_path / "result.json")
    isolation.redact(tmp_path, secrets_)
    assert isolation.leaks(RunRecord.read(tmp_path / "result.json"), secrets_) == []
    assert "[GITHUB_TOKEN withheld]" in (tmp_path / "result.json").read_text()


def test_a_secret_s_value_as_it_is_is_named_plainly_and_short_values_are_not_looked_for():
    assert isolation.leaks(_printed("ghp_0123456789abcdef"), {"T": "ghp_0123456789abcdef"}) == [(10, "T")]
    assert isolation.withheld({"API_KEY": "a" * (isolation.SECRET_MIN_LENGTH - 1)}, {}) == {}  # see the README
    assert all(len(form) >= isolation.SECRET_MIN_LENGTH for form in isolation.shown_forms("abcdefgh"))
# --- issue 17: labels are text, a changed label reaches the pages, a translation's size is limited -----------

# The issue's three payloads: out of an attribute, a tag left open, a tag.
PAYLOADS = (
    '" tabindex="0" autofocus onfocus="document.body.dataset.x=1" data-x="',
    "<img src=x onerror=document.body.dataset.x=2// ",
    "<img src=x onerror=document.body.dataset.x=3>",
)
# All of them in one string, and out of a <style> or <script> too: it runs wherever a template or a script
# would take it as markup.
EVERYWHERE = ('ラベル" tabindex="0" autofocus onfocus="document.body.dataset.x=1" data-x="</style></script>'
              '<img src=x onerror="document.body.dataset.x=2"><img src=y onerror=document.body.dataset.x=3// ')
JA_LABELS = "tutorials_site/locale/ja/LC_MESSAGES/sphinx.po"  # the engine's labels, in a copy of it (copy_engine)
JA = {"LANGUAGES": "ja"}


def site_messages(root=None, with_catalog=False, engine=None):
    """(language, domain, message) of every translated language's page catalogs and sphinx.po, and of the engine's
    label catalog (domain sphinx: labels too), with the catalog's file WITH_CATALOG, in the project at ROOT
    (default: the tests' site, FIXTURES) and the engine copied at ENGINE (default: this one)."""
    from tutorials_site.core import assets, project
    from tutorials_site.core.text import catalogs

    for lang in languages.TRANSLATED:
        site = project.current(FIXTURES)
        found = [(translate.domain_of(name), po) for name, po in catalogs.site_catalogs(site, lang).items()]
        for domain, po in [*found, ("sphinx", assets.label_po(lang))]:
            if root is not None and po.is_relative_to(FIXTURES):
                po = root / po.relative_to(FIXTURES)
            elif engine is not None and po.is_relative_to(assets.PACKAGE):
                po = engine / "tutorials_site" / po.relative_to(assets.PACKAGE)
            if not po.exists():
                continue  # a copy (copy_project) holds the tests' own pages, not the project's sections
            for message in catalogs.load(po):
                if message.id:
                    yield (lang, domain, message, po) if with_catalog else (lang, domain, message)


def set_translations(po, translations):
    """Give entries of a catalog (msgid -> msgstr) new translations, through Babel: written as a translator's tool would."""
    from tutorials_site.core.text import catalogs

    catalog = catalogs.load(po)
    for msgid, msgstr in translations.items():
        catalog[msgid].string = msgstr
    catalogs.save(catalog, po)


def entry_line(po, msgid):
    from tutorials_site.core.text import catalogs

    return catalogs.load(po)[msgid].lineno


@pytest.mark.parametrize("payload", PAYLOADS)
def test_every_label_refuses_the_payloads_and_page_messages_take_them_as_text_only(payload):
    shown_as_text = 0
    for lang, domain, message in site_messages():
        translation = message.string or message.id  # keeps the English placeholders and tags
        attempts = [translation + payload, payload + translation]
        if translate.TAG.search(message.id):  # inside the English's own tag
            attempts.append(translation.replace(">", payload + ">", 1))
        for msgstr in attempts:
            reason = translate.SITE_CHECKS[domain](message, msgstr)
            where = f"{lang.seg} {domain}.po {message.id[:30]!r}: {msgstr!r}"
            if domain == "sphinx":
                assert reason, where
            elif "<" in payload:
                assert reason and ("HTML tag" in reason or "breaks reST" in reason), where
            else:  # text to docutils and MyST, which escape it: proven in Chromium below
                shown_as_text += reason is None
    assert shown_as_text if "<" not in payload else not shown_as_text


@pytest.mark.site
def test_a_label_that_is_not_plain_text_stops_the_build_before_anything_changes(project_copy, tmp_path):
    engine = copy_engine(tmp_path / "engine")
    env = with_engine(engine, JA)
    assert build(project_copy, project_copy / "_build", "--noplot", env=env).returncode == 0
    before = snapshot(project_copy / "_build")
    po = engine / JA_LABELS
    set_translations(po, {"Versions": "バージョン" + PAYLOADS[0], "Color scheme": "配色" + PAYLOADS[1],
                          "Copy to clipboard": PAYLOADS[2]})
    result = build(project_copy, project_copy / "_build", "--noplot", env=env)
    error = one_line_error(result)
    assert error == (f"error: {po}:{entry_line(po, 'Versions')}: msgid 'Versions': not plain text: it has "
                     "'\"', which HTML reads as markup; write it without < > & \" ' ` (typographic quotes and "
                     "apostrophes such as “ ” ’ 「 」 are fine) (and 2 more label(s) in this catalog)")
    assert snapshot(project_copy / "_build") == before


# Labels our own templates print, and those labels.js sets: escaped there, whatever the catalog says. (The
# theme's templates print labels as they are: check_label_translation is what keeps those plain text.)
def our_labels(root, engine):
    from tutorials_site.sphinxext.i18n import SCRIPT_LABELS

    scripts = {label for value in SCRIPT_LABELS.values()
               for label in (value.values() if isinstance(value, dict) else [value])}
    return {message.id for lang, domain, message in site_messages(root, engine=engine)
            if lang.seg == "ja" and domain == "sphinx" and not translate.TAG.search(message.id)
            and (message.id in scripts or any(path.startswith("tutorials_site/templates/") for path, _ in message.locations))}


@pytest.fixture(scope="module")
def hostile_site(builds_site, tmp_path_factory):
    """Japanese pages built with a payload in every page message (accepted as text) and, with the label
    check switched off in this build alone, in every label our templates and labels.js print."""
    from conftest import copy_project

    project = copy_project(tmp_path_factory.mktemp("hostile") / "project")
    engine = copy_engine(tmp_path_factory.mktemp("hostile-engine"))
    pages = {}
    for lang, domain, message, po in site_messages(project, with_catalog=True):
        if lang.seg == "ja" and domain == "site":
            pages.setdefault(po, {})[message.id] = (message.string or message.id) + PAYLOADS[0]
    for po, translations in pages.items():
        set_translations(po, translations)
    labels = our_labels(project, engine)
    set_translations(engine / JA_LABELS, dict.fromkeys(labels, EVERYWHERE))
    unchecked = ("import sys; from tutorials_site.core.text import translate; "
                 "translate.SITE_CHECKS['sphinx'] = lambda message, msgstr: None; "
                 "from tutorials_site.commands.cli import main; main(sys.argv[1:])")
    result = subprocess.run([sys.executable, "-c", unchecked, "html-noplot", "--builddir", str(project / "_build")],
                            cwd=project, capture_output=True, text=True, env=with_engine(engine, {**os.environ, **JA}))
    assert result.returncode == 0 and "warning" not in result.stdout, result.stdout + result.stderr
    return project / "_build" / "html", labels


def open_quietly(page, url):
    """Load a page, let failing images and focus handlers fire; what a payload would have done."""
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(url)
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)
    return dialogs


@pytest.fixture(scope="module")
def hostile_page(hostile_site):
    from playwright.sync_api import sync_playwright

    from tutorials_site.commands.audit import BROWSER_FLAGS, serve

    with serve(hostile_site[0]) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                             args=BROWSER_FLAGS)
        context = browser.new_context()
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        yield lambda path: (context.new_page(), f"{url}/ja/{path}")
        browser.close()


@pytest.mark.parametrize("path", ["index.html", "beginner/index.html", "beginner/data_parallel_tutorial.html"])
def test_payloads_in_page_messages_and_labels_run_nothing_in_chromium(hostile_page, path):
    page, url = hostile_page(path)
    assert open_quietly(page, url) == []
    # Each payload is there, as text.
    if path.endswith("tutorial.html"):
        button = page.locator("button.copybtn").first
        assert button.get_attribute("data-tooltip") == EVERYWHERE
        assert button.locator("svg title").text_content() == EVERYWHERE
        page.locator("div.highlight-Python").first.hover()
        button.click()  # copybutton swaps in its "copied" icon, with the label, as HTML
        page.wait_for_timeout(300)
    else:
        assert PAYLOADS[0].strip() in page.locator("[itemprop=articleBody]").inner_text()
    assert page.locator(".rst-versions").get_attribute("aria-label") == f"{EVERYWHERE} / {EVERYWHERE}"
    assert page.locator("label[for=color-scheme]").text_content() == EVERYWHERE
    # And none of them ran.
    assert page.evaluate("document.body.dataset.x") is None
    assert page.evaluate("document.querySelectorAll('img[src=x], img[src=y], [onfocus], [onerror]').length") == 0


def test_the_hostile_build_put_a_payload_in_every_label_it_meant_to(hostile_site):
    htmldir, labels = hostile_site
    assert {"Versions", "Languages", "Home", "Color scheme", "Out:", "Copy to clipboard", "Copied!"} <= labels
    page = (htmldir / "ja" / "beginner" / "data_parallel_tutorial.html").read_text()
    assert "document.body.dataset.x=1" in page  # written, escaped: the test above shows that nothing ran


# A changed label translation: Sphinx does not count the label catalog among a page's sources.

@pytest.mark.site
def test_a_changed_label_reaches_every_page_and_a_reverted_one_goes_back(project_copy, tmp_path):
    engine = copy_engine(tmp_path / "engine")
    po = engine / JA_LABELS
    original = po.read_bytes()
    pages = [project_copy / "_build" / "html" / "ja" / page for page in ("index.html", "beginner/data_parallel_tutorial.html")]
    not_run = "This page was built without running the tutorial: its output is missing or out of date."
    old = {message.id: message.string for lang, domain, message in site_messages(project_copy, engine=engine)
           if lang.seg == "ja" and domain == "sphinx" and message.id in ("Languages", not_run)}
    new = {"Languages": "ことば", not_run: "実行せずにビルドしたページです。"}  # a template's label, and one added while reading
    for translations, gone in ((None, new), (new, old), (None, new)):
        if translations is None:
            po.write_bytes(original)
        else:
            set_translations(po, translations)
        result = build(project_copy, project_copy / "_build", "--noplot", env=with_engine(engine, JA))
        assert result.returncode == 0, result.stdout + result.stderr
        shown = translations or old
        assert f"<dt>{shown['Languages']}</dt>" in pages[0].read_text()
        assert f"<dt>{shown['Languages']}</dt>" in pages[1].read_text() and shown[not_run] in pages[1].read_text()
        assert f"<dt>{gone['Languages']}</dt>" not in pages[0].read_text() and gone[not_run] not in pages[1].read_text()


# A translation far longer than its English: refused, with the limit and what to do.

SIZE_LIMIT = "longer than a translation of this message may be (4 times its English and 200 more: {limit}); shorten it"


@pytest.mark.parametrize("kind", ["comment", "paragraph", "page", "markdown page", "label"])
def test_every_kind_of_translation_has_one_size_limit(kind):
    from babel.messages.catalog import Message

    english = "Sizes of the toy problem."
    limit = 4 * len(english) + 200
    check = {
        "comment": lambda msgstr: translate.check_translation(tutorial_text.Unit("comment", english, [0]), msgstr),
        "paragraph": lambda msgstr: translate.check_translation(tutorial_text.Unit("paragraph", english, [0]), msgstr),
        "page": lambda msgstr: translate.check_page_translation(Message(english, locations=[("a.rst", 1)]), msgstr),
        "markdown page": lambda msgstr: translate.check_page_translation(Message(english, locations=[("a.md", 1)]), msgstr),
        "label": lambda msgstr: translate.check_label_translation(Message(english), msgstr),
    }[kind]
    assert check("가" * limit) is None
    assert check("가" * (limit + 1)) == f"{limit + 1} characters, " + SIZE_LIMIT.format(limit=limit)
    assert check("가" * 5_000_000).startswith("5000000 characters, longer than")


@pytest.mark.site
def test_a_huge_translation_of_a_code_comment_is_shown_in_english_with_a_warning(project_copy):
    from tutorials_site.core.text import catalogs

    po = project_copy / KO_PO
    english = "Sizes of the toy problem."
    entry = f'msgstr "{catalogs.load(po)[english].string}"\n'
    po.write_text(po.read_text().replace(entry, f'msgstr "{"크기" * 500_000}"\n'))  # (Babel takes minutes to wrap it)
    result = build(project_copy, project_copy / "_build", "--noplot", env={"LANGUAGES": "ko"})
    assert result.returncode == 0, result.stdout + result.stderr
    limit = 4 * len(english) + 200
    assert (f"warning: {KO_PO}:{entry_line(po, english)}: msgid {english!r}: 1000000 characters, "
            + SIZE_LIMIT.format(limit=limit) + "; shown in English") in result.stdout.splitlines()
    html_dir = project_copy / "_build" / "html" / "ko"
    page = html_dir / "beginner" / "data_parallel_tutorial.html"
    notebook, = html_dir.glob("_downloads/*/data_parallel_tutorial.ipynb")
    for path in (page, notebook):
        assert "크기크기" not in path.read_text() and english in path.read_text() and path.stat().st_size < 200_000
    strict = build(project_copy, project_copy / "_build", "--noplot", env={"LANGUAGES": "ko", "STRICT": "1"})
    assert strict.returncode != 0 and "STRICT=1 and 1 tutorial passage(s) would be shown in English" in strict.stdout


@pytest.mark.parametrize(("shown", "what"), [("g h p _ a b c d e f g h i j 1 2 3 4", "spaced out or in another case"),
                                             ("GHP_ABCDEFGHIJ1234", "spaced out or in another case"),
                                             ("tuc_nopqrstuvw1234", "rot13"), ("4321jihgfedcba_phg", "reversed")])
def test_a_withheld_secret_is_found_spaced_out_in_another_case_and_rot13d(tmp_path, shown, what):
    secrets_ = {"GITHUB_TOKEN": "ghp_abcdefghij1234"}
    result = _printed(f"x {shown} y")
    assert isolation.leaks(result, secrets_) == [(10, f"GITHUB_TOKEN ({what})")]
    result.write(tmp_path / "result.json")
    isolation.redact(tmp_path, secrets_)
    assert isolation.leaks(RunRecord.read(tmp_path / "result.json"), secrets_) == []


def test_a_proxy_reaches_tutorials_without_its_password_and_its_password_is_a_secret():
    builder = {"HTTPS_PROXY": "http://user:hunter2pass@proxy:3128", "TORCH_HUB_TOKEN": "x" * 20, "TORCH_HOME": "/t"}
    given = isolation.tutorial_environment(builder, isolation.allowed({}))
    assert given == {"HTTPS_PROXY": "http://proxy:3128", "TORCH_HOME": "/t"}  # a secret's name no pattern gives
    secrets = isolation.withheld(builder, given)
    assert secrets["HTTPS_PROXY's password"] == "hunter2pass" and "TORCH_HUB_TOKEN" in secrets
    assert isolation.tutorial_environment(builder, isolation.allowed({"tutorials_environment": ["TORCH_HUB_TOKEN"]}))[
        "TORCH_HUB_TOKEN"] == "x" * 20  # named whole: given as it is


@pytest.mark.parametrize("listed", [["*"], ["GITHUB_*"], ["A B"], "PATH"])
def test_tutorials_environment_names_variables_never_patterns(listed):
    with pytest.raises(SiteError, match=r"^conf.py: tutorials_environment: .*never a pattern such as"):
        isolation.allowed({"tutorials_environment": listed})


FORGES_ITS_RECORD = """
    import json, os, sys
    first = sys._getframe().f_lineno - 1  # the block's first line of code: the record the page pairs with it
    output = sys.orig_argv[-1]  # the runner's output folder, as /proc/self/cmdline shows it
    forged = (".. literalinclude:: /proc/self/environ\\n\\n.. raw:: html\\n   :file: " + os.path.expanduser("~/.git-credentials")
              + "\\n\\n<script>steal()</script>")
    with open(os.path.join(output, "result.json"), "w") as file:
        json.dump({"format": 2, "blocks": [{"line": first, "texts": [forged], "images": [], "html": forged}], "error": None,
                   "gpu_peak_bytes": [1 << 40] * 8}, file)
    os._exit(0)
    """
REFUSED_RUN = """
    import os, sys, time
    open(os.path.join(sys.orig_argv[-1], "planted.html"), "w").close()
    """


@pytest.mark.site
def test_a_record_the_tutorial_forged_reaches_no_page_as_markup_and_a_refused_run_crashes_nothing(project_copy, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".git-credentials").write_text("https://user:gho_credentialsecret123@github.com\n")
    env = {"LANGUAGES": "en", "HOME": str(home), "SECRET_TOKEN": "tok_0123456789abcdefXYZ"}
    for glossary in project_copy.glob("locales/*/glossary.md"):  # rendered as pages, with a link `make check` refuses
        glossary.unlink()
    with_tutorials(project_copy, {"zz_forged.py": FORGES_ITS_RECORD})
    result = build(project_copy, project_copy / "_build", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    forged = (project_copy / "_build/html/en/beginner/zz_forged.html").read_text()
    assert "tok_0123456789abcdefXYZ" not in forged and "gho_credentialsecret123" not in forged
    assert "<script>steal()" not in forged and "&lt;script&gt;steal()" in forged  # text in a literal block
    assert checks.page_outputs(project_copy / "_build/html/en/beginner/zz_forged.html")[0].startswith(
        ".. literalinclude:: /proc/self/environ")
    assert "H100" not in forged and "Output captured on CPU (no GPU)" in forged  # where the build saw it run
    # make check holds the page to the run's data: its texts and its HTML repr as sanitised
    assert tutorials_site(project_copy, "check", **env).returncode == 0
    html = project_copy / "_build/html/en/beginner/zz_forged.html"
    html.write_text(forged.replace("steal()", "steal(1)", 1))
    assert "the output shown is not what the run produced" in tutorials_site(project_copy, "check", **env).stdout
    with_tutorials(project_copy, {"zz_refused.py": REFUSED_RUN})
    result = build(project_copy, project_copy / "_build", env=env)
    said = result.stdout + result.stderr
    assert result.returncode != 0 and "report this error" not in said and "Traceback" not in said, said
    assert "beginner_source/zz_refused.py:1: ERROR: its run left planted.html in its output folder" in said
    refused = (project_copy / "_build/html/en/beginner/zz_refused.html").read_text()
    assert "built without running the tutorial" in refused  # shown without output, its error the build's

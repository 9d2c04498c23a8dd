"""The fingerprint covers exactly what a run depends on: the run protocol's version (not the engine's code), Python,
the accelerator pins, start-up hooks and conf.py's run settings; per tutorial, its script and the files it declares it
reads (what a run used while it ran: tests/test_used.py)."""

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ENGINE, FIXTURES, append, build, copy_engine, executed, with_engine
from tutorials_site.core import project
from tutorials_site.core.errors import SiteError
from tutorials_site.core.runs import currency, fingerprint, protocol
from tutorials_site.core.runs.records import Hardware, Stamp, Used

FINGERPRINT = ("from pathlib import Path; from tutorials_site.core.runs import fingerprint as f; "
               "print(f.environment_fingerprint(Path({root!r})))")


def fingerprint_with(engine: Path, root: Path) -> str:
    """The environment fingerprint of the project at ROOT as the engine package under ENGINE computes it."""
    code = FINGERPRINT.format(root=str(root))
    return subprocess.run([sys.executable, "-c", code], env=with_engine(engine), check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def engine_copy(tmp_path):
    """The engine's package copied, so that its files can be changed; fingerprint_with runs that copy."""
    return copy_engine(tmp_path / "engine")


def test_an_edit_to_any_engine_module_leaves_the_fingerprint_and_a_new_protocol_changes_it(engine_copy):
    """An engine release that keeps the run protocol runs nothing again, whatever it changed (a docstring of
    Project.select, the runner, the records); one that raises the protocol runs every tutorial again."""
    before = fingerprint_with(engine_copy, FIXTURES)
    assert before == fingerprint.environment_fingerprint(FIXTURES)
    package = engine_copy / "tutorials_site"
    select = package / "core" / "project.py"
    said = '"""The tutorials TUTORIALS names'
    assert said in select.read_text()
    select.write_text(select.read_text().replace(said, '"""The tutorials that TUTORIALS names'))
    for changed in ("commands/runner.py", "core/runs/records.py", "commands/execute.py", "sphinx_gallery_run.py",
                    "commands/child_site/sitecustomize.py"):
        append(package / changed, "\n# changed\n")
    assert fingerprint_with(engine_copy, FIXTURES) == before
    versioned = package / "core" / "runs" / "protocol.py"
    versioned.write_text(versioned.read_text().replace(f'PROTOCOL = "{protocol.PROTOCOL}"', 'PROTOCOL = "next"'))
    assert fingerprint_with(engine_copy, FIXTURES) != before


def _stamped(environment, digest):
    """A stamp of a run of the script whose SOURCE_DIGEST is DIGEST, in ENVIRONMENT, that used no file."""
    hardware = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0+cpu", cuda=None)
    return Stamp(source=digest.code, environment=environment, outputs="o" * 64, seconds=1.0, failed=False,
                 peak_rss_mb=1.0, gpu_peak_mb=(), hardware=hardware, commit="abc", date="2026-01-01 00:00 UTC", files=(),
                 used=Used(files=(), distributions=()), code_lines=digest.lines)


def test_a_run_made_under_another_protocol_is_not_current(tmp_path, monkeypatch):
    script = tmp_path / "plot_demo.py"
    script.write_text('"""\nDemo\n====\n"""\nprint(1)\n')
    (tmp_path / "conf.py").write_text("sphinx_gallery_conf = {}\n")
    digest = fingerprint.source_digest(script, None, tmp_path)
    stamp = _stamped(fingerprint.environment_fingerprint(tmp_path), digest)
    assert currency.problems(digest, fingerprint.present(tmp_path), stamp=stamp) == []
    monkeypatch.setattr(fingerprint, "PROTOCOL", "next")
    assert currency.problems(digest, fingerprint.present(tmp_path), stamp=stamp) == [
        "executed in another environment (the run protocol, Python, start-up hooks, the accelerator pins or "
        "conf.py's run settings changed since)"]


def _dist(folder, name, version):
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return info


def test_no_installed_distribution_counts_for_every_run_the_accelerator_runtime_by_its_lock(tmp_path, monkeypatch):
    packages = tmp_path / "site-packages"
    packages.mkdir()
    root = tmp_path / "project"
    root.mkdir()
    (root / "conf.py").write_text("sphinx_gallery_conf = {}\n")
    (root / "requirements-cpu.lock").write_text("torch==2.13.0+cpu \\\n    --hash=sha256:aa\n")
    (root / "requirements-cuda.lock").write_text("torch==2.13.0 \\\n    --hash=sha256:bb\n"
                                                 "nvidia-cublas==13.1.0.3 \\\n    --hash=sha256:cc\n")
    monkeypatch.setattr(fingerprint, "site_folders", lambda: [packages])
    monkeypatch.setattr(sys, "path", [str(packages), *(p for p in sys.path if "-packages" not in p and p != str(ENGINE))])
    torch = _dist(packages, "torch", "2.13.0+cpu")
    cpu = fingerprint.environment_fingerprint(root)
    # The GPU shard: torch's CUDA build and the CUDA runtime it brings; then any other distribution, a new torch
    # release: each counts only for the runs that imported it (core.runs.used).
    shutil.rmtree(torch)
    _dist(packages, "torch", "2.14.0+cu130")
    _dist(packages, "nvidia-cublas", "1.0")
    _dist(packages, "some-plugin", "0.1")
    assert fingerprint.environment_fingerprint(root) == cpu
    # The CUDA lock's runtime pins count, whatever is installed.
    assert fingerprint.accelerator_pins(root) == {"nvidia-cublas": "13.1.0.3"}
    cuda = root / "requirements-cuda.lock"
    cuda.write_text(cuda.read_text().replace("nvidia-cublas==", "nvidia-cublas==0.0.0.dev0+", 1))
    assert fingerprint.environment_fingerprint(root) != cpu


def test_requirement_files_are_read_as_pip_reads_them(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text(textwrap.dedent("""\
        # written by hand
        -c constraints.txt
        Foo_Bar==1.0+cpu \\
            --hash=sha256:aa \\
            --hash=sha256:bb
            # via -r requirements.txt
        baz>=2 ; python_version >= "3"  # why
        """))
    found = fingerprint.read_requirements(lock)
    assert list(found) == ["foo-bar", "baz"]  # by the name pip compares them by
    assert str(found["foo-bar"].requirement) == "Foo_Bar==1.0+cpu" and found["foo-bar"].hashes == ("sha256:aa", "sha256:bb")
    assert str(found["baz"].requirement.specifier) == ">=2" and found["baz"].requirement.marker and found["baz"].hashes == ()
    lock.write_text("ok==1 \\\n    --hash=sha256:cc\nnot a requirement!\n")
    with pytest.raises(SiteError, match=r"requirements\.lock:3: not a requirement"):
        fingerprint.read_requirements(lock)


def test_only_the_settings_of_conf_py_a_run_reads_change_the_fingerprint(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("locales", "_static", "*_source"))
    conf = root / "conf.py"
    seen = [fingerprint.environment_fingerprint(root)]
    for addition in ("html_title = 'Another'", "html_theme_options = {'a': 1}",
                     "sphinx_gallery_conf['first_notebook_cell'] = '# hi'", "sphinx_gallery_conf['line_numbers'] = True"):
        conf.write_text(conf.read_text() + f"\n{addition}\n")
        project._read_once.cache_clear()
        seen.append(fingerprint.environment_fingerprint(root))
    assert len(set(seen)) == 1
    for addition in ("sphinx_gallery_conf['capture_repr'] = ()", "default_role = 'py:obj'",
                     "tutorials_environment = ['WANDB_MODE']"):
        conf.write_text(conf.read_text() + f"\n{addition}\n")
        project._read_once.cache_clear()
        seen.append(fingerprint.environment_fingerprint(root))
    project._read_once.cache_clear()
    assert len(set(seen)) == 4


def _tutorial(folder, code):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plot_demo.py"
    path.write_text(f'"""\nDemo\n====\n"""\n{textwrap.dedent(code)}')
    return path


def test_the_source_digest_covers_the_script_and_its_declared_files_only(tmp_path):
    path = _tutorial(tmp_path / "gallery", """
        # tutorials-reads: data/*.csv  extra
        import helpers
        text = "# tutorials-reads: not/a/comment.txt"
        """)
    (tmp_path / "gallery" / "data").mkdir()
    (tmp_path / "gallery" / "data" / "a.csv").write_text("1\n")
    (tmp_path / "gallery" / "extra").mkdir()
    (tmp_path / "gallery" / "extra" / "deep.json").write_text("{}")
    (tmp_path / "gallery" / "helpers.py").write_text("")
    (tmp_path / "gallery" / "data" / "notes.txt").write_text("")
    digests = [fingerprint.source_digest(path, None, tmp_path)]
    # a helper it imports is recorded by its run (core.runs.used), not read here; a file neither declared nor read
    for name in ("helpers.py", "data/notes.txt"):
        (tmp_path / "gallery" / name).write_text("changed")
        digests.append(fingerprint.source_digest(path, None, tmp_path))
    assert len(set(digests)) == 1
    for name in ("data/a.csv", "extra/deep.json"):
        (tmp_path / "gallery" / name).write_text((tmp_path / "gallery" / name).read_text() + "\n# changed\n")
        digests.append(fingerprint.source_digest(path, None, tmp_path))
    (tmp_path / "gallery" / "data" / "b.csv").write_text("2\n")  # a new file the pattern matches
    digests.append(fingerprint.source_digest(path, None, tmp_path))
    path.write_text(path.read_text() + "\n# changed\n")
    digests.append(fingerprint.source_digest(path, None, tmp_path))
    assert len(set(digests)) == 5


@pytest.mark.parametrize("line, message", [
    ("# tutorials-reads: data/*.csv", "'data/*.csv' matches no file; paths are relative to the tutorial's folder "
                                      "(globs allowed): add the file or fix the line"),
    ("# tutorials-reads: /etc/hostname", "'/etc/hostname' names a path outside the project (/etc/hostname); a "
                                         "tutorial declares only the project's files, relative to its folder: copy "
                                         "the file into the project"),
    ("# tutorials-reads:", "no path given; write paths relative to the tutorial's folder, globs allowed "
                           "(# tutorials-reads: data/*.csv)"),
])
def test_a_declared_file_that_is_missing_is_an_error_naming_the_line(tmp_path, line, message):
    path = _tutorial(tmp_path, f"x = 1\n{line}\n")
    with pytest.raises(SiteError) as raised:
        fingerprint.source_digest(path, "beginner_source/plot_demo.py", tmp_path)
    assert str(raised.value) == f"beginner_source/plot_demo.py:6: tutorials-reads: {message}"


@pytest.mark.parametrize("pattern", ["../../secret.txt", "../../*.txt", "../../nothing/*.csv", "escape.txt", "linked"])
def test_a_declared_path_outside_the_project_is_refused_at_its_line(tmp_path, pattern):
    root = tmp_path / "project"
    path = _tutorial(root / "gallery", f"x = 1\n# tutorials-reads: {pattern}\n")
    (tmp_path / "secret.txt").write_text("not the project's")
    (root / "gallery" / "escape.txt").symlink_to(tmp_path / "secret.txt")  # a link out of the project
    (root / "gallery" / "linked").mkdir()
    (root / "gallery" / "linked" / "fine.txt").write_text("")
    (root / "gallery" / "linked" / "out.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(SiteError, match=rf"^gallery/plot_demo.py:6: tutorials-reads: {re.escape(repr(pattern))} "
                                        r"(names a path|holds a link that leads) outside the project"):
        fingerprint.declared_reads(path, "gallery/plot_demo.py", root)
    (root / "gallery" / "inside.txt").write_text("")
    path.write_text(path.read_text().replace(pattern, "../gallery/inside.txt"))  # `..` that stays inside is fine
    assert fingerprint.declared_reads(path, "gallery/plot_demo.py", root) == [root / "gallery" / "../gallery/inside.txt"]


@pytest.mark.site
def test_a_build_refuses_a_tutorial_whose_declared_file_is_missing_before_running_anything(project_copy):
    tutorial = project_copy / "beginner_source" / "data_parallel_tutorial.py"
    lines = tutorial.read_text().splitlines(keepends=True)
    at = next(i for i, text in enumerate(lines) if text.startswith("import "))
    tutorial.write_text("".join([*lines[:at], "# tutorials-reads: data/inputs.csv\n", *lines[at:]]))
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en"})
    assert result.returncode != 0
    assert (f"error: beginner_source/data_parallel_tutorial.py:{at + 1}: tutorials-reads: 'data/inputs.csv' "
            "matches no file; paths are relative to the tutorial's folder (globs allowed): add the file or fix "
            "the line") in result.stdout + result.stderr
    assert not (project_copy / "_build" / "runs").exists()
    # Once it exists, the tutorial runs, and its page drops the line with sphinx-gallery's config comments.
    (project_copy / "beginner_source" / "data").mkdir()
    (project_copy / "beginner_source" / "data" / "inputs.csv").write_text("a,b\n")
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en"})
    assert result.returncode == 0, result.stdout + result.stderr
    page = Path(project_copy / "_build" / "html" / "en" / "beginner" / "data_parallel_tutorial.html").read_text()
    assert "tutorials-reads" not in page
    # A change to the file runs again the tutorials that can read it: those of its folder (core.runs.visibility).
    (project_copy / "beginner_source" / "data" / "inputs.csv").write_text("a,b\n1,2\n")
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en"})
    assert result.returncode == 0 and executed(result) == 2, result.stdout + result.stderr
    assert "[execute] beginner_source/data_parallel_tutorial.py (time limit" in result.stdout


# --- the source digest: the code, not the prose ---------------------------------------------------------

PROSE_SCRIPT = '''"""
Demo
====

What this shows.
"""
# tutorials-timeout: 60
import sys

# %%
# A paragraph of prose,
# on two lines.

# a comment of the code
print("hello")  # trailing

######################################################################
# More prose.
# sphinx_gallery_thumbnail_number = 1

value = 2
'''


def _digest(tmp_path, text):
    path = tmp_path / "plot_prose.py"
    path.write_text(text)
    return fingerprint.source_digest(path, None, tmp_path)


@pytest.mark.parametrize("text", [
    PROSE_SCRIPT,
    PROSE_SCRIPT.replace('"""\nDemo', '"""Demo', 1) + "# %%\n",  # a header at the end, nothing after it
    '"""Doc"""; z = 3\nprint(1)\n' + "#" * 25 + "\n#t\n# %%\n# u\n\n\nprint(2)\n",
    'def f(:\n    pass\n# %%\n# text\nx = 1\n',  # cannot be parsed: all of it after line 1 is split the same
    'x = (\n"""\n# %%\n# in a string, still a text block to sphinx-gallery\n"""\n)\n'.replace("x = (", '"""D"""\nx = (', 1),
])
def test_the_code_blocks_are_those_sphinx_gallery_splits(tmp_path, text):
    from tutorials_site import sphinx_gallery_run as sg

    path = tmp_path / "plot_split.py"
    path.write_text(text)
    theirs = [(block.lineno, block.content) for block in sg.split_code_and_text_blocks(str(path))[1]
              if block.type == "code"]
    assert fingerprint.code_blocks(text) == theirs and theirs


@pytest.mark.parametrize("old, new", [
    ("What this shows.", "What this example shows, in a few words."),  # the docstring
    ("# A paragraph of prose,\n# on two lines.", "# A paragraph, edited,\n# on two lines."),  # a text block, same lines
    ("# on two lines.\n", "# on two lines,\n# then on three, then four.\n#\n# And a second paragraph.\n"),  # more lines
    ("# More prose.\n", ""),  # fewer lines
    ("import sys\n\n# %%", "import sys\n\n\n\n# %%"),  # blank lines around a code block
])
def test_a_prose_edit_leaves_the_code_digest_as_it_was(tmp_path, old, new):
    assert old in PROSE_SCRIPT
    before, after = _digest(tmp_path, PROSE_SCRIPT), _digest(tmp_path, PROSE_SCRIPT.replace(old, new, 1))
    assert after.code == before.code
    assert (after.lines == before.lines) == (old.count("\n") == new.count("\n"))


@pytest.mark.parametrize("old, new", [
    ("# a comment of the code", "# a comment of the code, edited"),  # a comment that stays code
    ("# trailing", "# trailing, edited"),
    ('print("hello")', 'print("hello!")'),
    ("# tutorials-timeout: 60", "# tutorials-timeout: 90"),  # a setting
    ("# sphinx_gallery_thumbnail_number = 1", "# sphinx_gallery_thumbnail_number = 2"),  # a setting in a text block
    ("# More prose.\n", "# More prose.\n# tutorials-needs: gpus=1\n"),  # a setting added in a text block
    ("# %%\n# A paragraph", "# A paragraph"),  # a text block made code
    ("print(\"hello\")  # trailing\n", "print(\"hello\")  # trailing\n# %%\n# Prose between.\nx = 1\n"),  # a block split
])
def test_a_code_or_setting_edit_changes_the_code_digest(tmp_path, old, new):
    assert old in PROSE_SCRIPT
    assert _digest(tmp_path, PROSE_SCRIPT.replace(old, new, 1)).code != _digest(tmp_path, PROSE_SCRIPT).code


def test_the_docstring_is_code_where_the_code_names_doc(tmp_path):
    script = PROSE_SCRIPT.replace("value = 2", "value = __doc__")
    assert (_digest(tmp_path, script.replace("What this shows.", "Edited.")).code
            != _digest(tmp_path, script).code)

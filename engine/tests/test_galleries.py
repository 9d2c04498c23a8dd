"""Several galleries, nested sections and conf.py's options, end to end on copies of the project."""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build, copy_engine, copy_project, one_line_error, with_engine
from tutorials_site.core.runs.records import Stamp
from tutorials_site.core.site.checks import page_outputs

TWO_LANGUAGES = {"LANGUAGES": "en ko"}

INTERMEDIATE_HEADER = "Intermediate tutorials\n======================\n\nA second gallery, beside the beginners' one.\n"
INTERMEDIATE = '''"""
Drawing one line
================

Prints a sentence, then draws one figure.
"""

import matplotlib.pyplot as plt

print("printed by the intermediate gallery")
plt.plot([0, 1, 2], [0, 1, 4])
plt.show()
'''
SECTION_HEADER = "Basics section\n--------------\n\nThe section header says: first steps, one at a time.\n"
BASICS = '''"""
Hello from a section
====================

A tutorial one folder down.
"""

print("printed by the nested section")
'''
HELPER = "def helper() -> int:\n    return 1\n"


def add_galleries(project: Path) -> None:
    """A second gallery (intermediate_source) and a section of the first (beginner_source/basics)."""
    (project / "intermediate_source").mkdir()
    (project / "intermediate_source" / "GALLERY_HEADER.rst").write_text(INTERMEDIATE_HEADER)
    (project / "intermediate_source" / "plot_line.py").write_text(INTERMEDIATE)
    (project / "beginner_source" / "basics").mkdir()
    (project / "beginner_source" / "basics" / "README.txt").write_text(SECTION_HEADER)
    (project / "beginner_source" / "basics" / "hello_basics.py").write_text(BASICS)
    conf = project / "conf.py"
    text = conf.read_text()
    for old, new in (('["beginner_source"]', '["beginner_source", "intermediate_source"]'),
                     ('["beginner"]', '["beginner", "intermediate"]')):
        assert old in text
        text = text.replace(old, new, 1)
    conf.write_text(text)
    index = project / "index.md"
    index.write_text(index.read_text().replace("beginner/index\n", "beginner/index\nintermediate/index\n", 1))


def check(project: Path, builddir: Path, *paths: Path, languages: str = "en ko") -> subprocess.CompletedProcess:
    """`python -m tutorials_site check` in a project, on its build folder or on the HTML tree given."""
    return subprocess.run([sys.executable, "-m", "tutorials_site", "check", "--builddir", str(builddir), *map(str, paths)],
                          cwd=project, env={**os.environ, "LANGUAGES": languages}, capture_output=True, text=True)


@pytest.fixture(scope="module")
def galleries(builds_site, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A copy with a second gallery, a section and a header-less folder of scripts, built in en and ko."""
    project = copy_project(tmp_path_factory.mktemp("galleries") / "project")
    add_galleries(project)
    (project / "beginner_source" / "helpers").mkdir()
    (project / "beginner_source" / "helpers" / "util.py").write_text(HELPER)
    builddir = project / "_build"
    result = build(project, builddir, env=TWO_LANGUAGES)
    return {"project": project, "builddir": builddir, "result": result, "output": result.stdout + result.stderr}


PAGES = {  # page -> what its tutorial printed
    "en/intermediate/plot_line.html": "printed by the intermediate gallery",
    "en/beginner/basics/hello_basics.html": "printed by the nested section",
    "ko/beginner/basics/hello_basics.html": "printed by the nested section",
}
KEYS = ("intermediate_source/plot_line", "beginner_source/basics/hello_basics")


def test_second_gallery_and_section_are_built_and_executed_once(galleries: dict) -> None:
    assert galleries["result"].returncode == 0, galleries["output"]
    html_dir = galleries["builddir"] / "html"
    for page, printed in PAGES.items():
        assert (html_dir / page).is_file(), page
        assert any(printed in block for block in page_outputs(html_dir / page)), page
    for key in KEYS:
        run = galleries["builddir"] / "runs" / key
        assert (run / "result.json").is_file() and (run / "stamp.json").is_file(), key
        started = re.findall(rf"^\[execute\] {re.escape(key)}\.py \(time limit", galleries["output"], re.M)
        assert len(started) == 1, (key, galleries["output"])
    page = (html_dir / "en" / "intermediate" / "plot_line.html").read_text(encoding="utf-8")
    assert "sphx_glr_plot_line_001.png" in page, "the intermediate tutorial's figure is on its page"


def test_gallery_index_shows_the_section_and_links_to_its_page(galleries: dict) -> None:
    index = (galleries["builddir"] / "html" / "en" / "beginner" / "index.html").read_text(encoding="utf-8")
    assert "The section header says: first steps, one at a time." in index
    thumbnails = re.findall(r'<div class="sphx-glr-thumbcontainer".*?</div>\s*</div>', index, re.S)
    assert any('href="basics/hello_basics.html' in thumb for thumb in thumbnails), index


def test_check_passes_and_fails_on_a_nested_page_without_stamp(galleries: dict, tmp_path: Path) -> None:
    project, builddir = galleries["project"], galleries["builddir"]
    assert galleries["result"].returncode == 0, galleries["output"]
    passed = check(project, builddir)
    assert passed.returncode == 0, passed.stdout + passed.stderr

    copy = tmp_path / "html"
    shutil.copytree(builddir / "html", copy)
    page = copy / "en" / "beginner" / "basics" / "hello_basics.html"
    text = page.read_text(encoding="utf-8")
    unstamped = re.sub(r'<meta name="tutorial-execution-stamp"[^>]*>\n?', "", text)
    assert unstamped != text
    page.write_text(unstamped, encoding="utf-8")
    failed = check(project, builddir, copy)
    assert failed.returncode != 0
    output = failed.stdout + failed.stderr
    assert f"{page}: beginner_source/basics/hello_basics.py (en): no execution stamp" in output, output


def test_a_folder_of_scripts_without_header_is_reported_and_gets_no_page(galleries: dict) -> None:
    assert galleries["result"].returncode == 0, galleries["output"]
    lines = [line for line in galleries["output"].splitlines()
             if line.startswith("warning: beginner_source/helpers/: holds scripts")]
    assert len(lines) == 1, galleries["output"]
    html_dir = galleries["builddir"] / "html"
    assert not list(html_dir.rglob("util.html"))
    assert not (html_dir / "en" / "beginner" / "helpers").exists()


@pytest.mark.site  # update-po reads the whole project with Sphinx
def test_update_po_creates_a_section_catalog_keyed_by_path(project_copy: Path) -> None:
    add_galleries(project_copy)
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "update-po"], cwd=project_copy,
                            env={**os.environ, "LANGUAGES": ""}, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    po = project_copy / "locales" / "ko" / "LC_MESSAGES" / "beginner_source" / "basics" / "hello_basics.po"
    assert po.is_file()
    assert 'msgid "Hello from a section"' in po.read_text(encoding="utf-8")
    assert (project_copy / "locales" / "ko" / "LC_MESSAGES" / "intermediate_source" / "plot_line.po").is_file()


# Lines 8 and 17 of the script: a heading underlined with one character fewer than it has, in the
# docstring and in a text block after the first code block (below the provenance line the site adds).
SHORT_UNDERLINE = '''"""
A tutorial with a bad title
===========================

Some text before a section.

Too short
--------

More text.
"""

print("underline")

# %%
# Also short
# ---------
#
# Text of the section.

print("again")
'''
WARNING_LINES = ["beginner_source/short_underline.py:8: WARNING: Title underline too short. (en, ja)",
                 "beginner_source/short_underline.py:17: WARNING: Title underline too short. (en, ja)"]


@pytest.mark.site
def test_warning_is_told_once_at_the_authors_line_and_fails_only_with_strict(stubbed_copy: Path) -> None:
    (stubbed_copy / "beginner_source" / "short_underline.py").write_text(SHORT_UNDERLINE)
    builddir = stubbed_copy / "_build"
    result = build(stubbed_copy, builddir, env={"LANGUAGES": "en ja"})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for warning in WARNING_LINES:
        assert sum(line.strip() == warning for line in output.splitlines()) == 1, output
    assert "_build/src/" not in output

    strict = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "STRICT": "1"})
    output = strict.stdout + strict.stderr
    assert strict.returncode != 0, output
    assert WARNING_LINES[0].removesuffix(" (en, ja)") in output.splitlines()  # one language: none named


@pytest.mark.site
def test_parallel_option_is_refused_before_anything_runs(project_copy: Path) -> None:
    conf = project_copy / "conf.py"
    conf.write_text(conf.read_text().replace('"remove_config_comments": True,', '"remove_config_comments": True,\n'
                                             '    "parallel": True,', 1))
    line = conf.read_text().splitlines().index('    "parallel": True,') + 1
    builddir = project_copy / "_build"
    result = build(project_copy, builddir, env={"LANGUAGES": "en"})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    refused = [text for text in output.splitlines()
               if text.startswith(f"error: conf.py:{line}: sphinx_gallery_conf['parallel'] = True is not supported here: ")]
    assert len(refused) == 1, output
    assert "[execute]" not in output
    assert not (builddir / "runs").exists()


@pytest.mark.site
@pytest.mark.parametrize("old, new, builddir, message", [
    ('["beginner_source"]', '["beginner_source/../_static"]', "_build",
     "sphinx_gallery_conf['examples_dirs']: 'beginner_source/../_static' is _static/ ("),
    ('["beginner"]', '["_static"]', "_build", "sphinx_gallery_conf['gallery_dirs']: '_static' is _static/ "),
    (None, None, "beginner_source/_build", "sphinx_gallery_conf['examples_dirs']: 'beginner_source' holds "
     "beginner_source/_build/ (the build folder, BUILDDIR"),
])
def test_a_gallery_folder_that_is_not_a_folder_of_its_own_is_refused_before_anything_runs(
        project_copy: Path, old: str | None, new: str | None, builddir: str, message: str) -> None:
    conf = project_copy / "conf.py"
    if old and new:
        conf.write_text(conf.read_text().replace(old, new, 1))
    option = "gallery_dirs" if "gallery_dirs" in message else "examples_dirs"
    line = next(number for number, text in enumerate(conf.read_text().splitlines(), 1) if f'"{option}"' in text)

    def files() -> dict[Path, bytes]:  # the project's, less Python's caches and the build folder
        return {path: path.read_bytes() for path in sorted(project_copy.rglob("*")) if path.is_file()
                and "__pycache__" not in path.parts and not path.is_relative_to(project_copy / builddir)}

    before = files()
    result = build(project_copy, project_copy / builddir, env={"LANGUAGES": "en"})
    assert one_line_error(result).startswith(f"error: conf.py:{line}: {message}")
    assert "[execute]" not in result.stdout
    assert files() == before


@pytest.mark.site
def test_the_engine_s_package_inside_the_project_is_no_gallery_folder(project_copy: Path) -> None:
    """A site that vendors the engine (its package in a folder of the project) cannot make it a gallery."""
    engine = copy_engine(project_copy / "vendor")
    conf = project_copy / "conf.py"
    conf.write_text(conf.read_text().replace('["beginner_source"]', '["vendor/tutorials_site"]', 1))
    line = next(number for number, text in enumerate(conf.read_text().splitlines(), 1) if '"examples_dirs"' in text)
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en", **with_engine(engine)})
    assert one_line_error(result).startswith(
        f"error: conf.py:{line}: sphinx_gallery_conf['examples_dirs']: 'vendor/tutorials_site' is "
        "vendor/tutorials_site/ (the engine's package)")
    assert "[execute]" not in result.stdout


@pytest.mark.site
def test_a_renamed_tutorial_and_a_removed_section_leave_nothing_behind(stubbed_copy: Path) -> None:
    """sphinx-gallery never deletes what it generated: the build does, for every language, and the old page goes."""
    add_galleries(stubbed_copy)
    builddir = stubbed_copy / "_build"
    first = build(stubbed_copy, builddir, env={"LANGUAGES": "en ko"})
    assert first.returncode == 0, first.stdout + first.stderr
    old = ["src/{}/intermediate/plot_line.rst", "html/{}/intermediate/plot_line.html",
           "src/{}/beginner/basics/index.rst", "html/{}/beginner/basics/hello_basics.html"]
    assert all((builddir / path.format(seg)).exists() for path in old for seg in ("en", "ko"))

    (stubbed_copy / "intermediate_source" / "plot_line.py").rename(stubbed_copy / "intermediate_source" / "plot_curve.py")
    shutil.rmtree(stubbed_copy / "beginner_source" / "basics")
    # STRICT=1: a page Sphinx still found (in no toctree) would be a warning, and so a failure.
    again = build(stubbed_copy, builddir, env={"LANGUAGES": "en", "STRICT": "1"})
    output = again.stdout + again.stderr
    assert again.returncode == 0, output
    assert "plot_line" not in output and "basics" not in output, output
    assert not any((builddir / path.format("en")).exists() for path in old)
    assert not list((builddir / "src" / "en" / "intermediate" / "images").rglob("sphx_glr_plot_line_*"))
    assert page_outputs(builddir / "html/en/intermediate/plot_curve.html") == ["printed by the intermediate gallery\n"]


def built_in_english(project: Path, conf_line: str) -> tuple[Path, subprocess.CompletedProcess, str]:
    """The copy with one line added to its conf.py, built in English: (build folder, process, all it printed)."""
    with (project / "conf.py").open("a") as conf:
        conf.write(f"\n{conf_line}\n")
    builddir = project / "_build"
    result = build(project, builddir, env={"LANGUAGES": "en"})
    return builddir, result, result.stdout + result.stderr


@pytest.mark.site
def test_a_tutorial_filename_pattern_leaves_out_is_shown_without_output_and_listed(project_copy: Path) -> None:
    """As in sphinx-gallery: not executed, its page shows the code alone; make check names it and passes."""
    builddir, result, output = built_in_english(project_copy, 'sphinx_gallery_conf["filename_pattern"] = r"/ddp_"')
    assert result.returncode == 0, output
    assert re.findall(r"^\[execute\] (\S+) \(time limit", result.stdout, re.M) == ["beginner_source/ddp_tutorial.py"]
    page = (builddir / "html" / "en" / "beginner" / "data_parallel_tutorial.html").read_text()
    assert "import torch" in html.unescape(re.sub(r"<[^>]+>", "", page))  # the code is there ...
    assert "sphx-glr-script-out" not in page and "tutorial-execution-stamp" not in page  # ... its output is not
    checked = check(project_copy, builddir, languages="en")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert ("check: beginner_source/data_parallel_tutorial.py: not executed: conf.py's filename_pattern leaves it "
            "out (shown without output)") in checked.stdout.splitlines()


WANTED = ("a tutorial opens with a docstring whose first paragraph, a heading or not, is its title (a helper "
          "module: match it with conf.py's ignore_pattern)")


@pytest.mark.parametrize("name, text, message", [
    ("no_docstring.py", 'print("no docstring")\n',
     f"beginner_source/no_docstring.py:1: no docstring: {WANTED}"),
    ("empty_docstring.py", '"""\n\n"""\nprint("no title")\n',
     f"beginner_source/empty_docstring.py:1: its docstring has no title: {WANTED}"),
    ("comment_only.py", '"""\n.. only a comment\n"""\nprint("no title")\n',
     f"beginner_source/comment_only.py:1: its docstring has no title: {WANTED}"),
    ("rule_only.py", '"""\n======\n"""\nprint("no title")\n',
     f"beginner_source/rule_only.py:1: its docstring has no title: {WANTED}"),
    ("single_quoted.py", '"A docstring in single quotes"\nprint(1)\n',
     "beginner_source/single_quoted.py:1: the docstring must be in triple quotes (\"\"\" or \'\'\')"),
    ("syntax_error.py", '"""\nTitle\n=====\n"""\n\nprint(\n', "beginner_source/syntax_error.py:6: \'(\' was never closed"),
    ("index.py", '"""\nAn index\n========\n"""\n',
     "beginner_source/index.py: a tutorial cannot be named index.py: its page would take the place of the "
     "gallery's index; rename it"),
])
@pytest.mark.site
def test_a_script_sphinx_gallery_cannot_page_is_refused_before_anything_runs(project_copy: Path, name: str,
                                                                             text: str, message: str) -> None:
    (project_copy / "beginner_source" / name).write_text(text)
    builddir = project_copy / "_build"
    result = build(project_copy, builddir, env={"LANGUAGES": "en"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {message}"]
    assert "[execute]" not in result.stdout and not (builddir / "runs").exists()


@pytest.mark.site
def test_show_memory_shows_the_peak_the_supervisor_measured(stubbed_copy: Path) -> None:
    """No memory_profiler needed (it is not installed): the stamp's peak memory, on the page, without a warning."""
    builddir, result, output = built_in_english(stubbed_copy, 'sphinx_gallery_conf["show_memory"] = True')
    assert result.returncode == 0 and "memory_profiler" not in output, output
    stamp = Stamp.read(builddir / "runs" / "beginner_source" / "data_parallel_tutorial" / "stamp.json")
    page = (builddir / "html" / "en" / "beginner" / "data_parallel_tutorial.html").read_text()
    assert f"Estimated memory usage:</strong> {stamp.peak_rss_mb: .0f} MB" in page  # sphinx-gallery's format


NO_HEADING = '''"""
Trains a small model, a helper script without a heading.

It prints one line.
"""

print("the script without a heading ran")

# %%
# A text block, still without a heading.
print("its second block ran")
'''
# The same on one line, a docstring that shares its line with its quotes.
ONE_LINE = NO_HEADING.replace('"""\nTrains a small model, a helper script without a heading.\n\nIt prints one line.\n"""',
                              '"""Trains a small model, a helper script without a heading."""')
NO_HEADING_KO = {"Trains a small model, a helper script without a heading.": "작은 모델을 훈련하는 제목 없는 스크립트.",
                 "It prints one line.": "한 줄을 출력합니다.",
                 "A text block, still without a heading.": "여전히 제목 없는 텍스트 블록."}


@pytest.mark.site
@pytest.mark.parametrize("script", [NO_HEADING, ONE_LINE], ids=["docstring", "one-line docstring"])
def test_a_script_without_a_heading_is_paged_as_sphinx_gallery_pages_it_in_every_language(stubbed_copy: Path,
                                                                                          script: str) -> None:
    """sphinx-gallery takes its first paragraph for its title (tests/test_parity.py: the same page as stock); it is
    translated like any script, its downloads too."""
    from conftest import tutorials_site
    from tutorials_site.core.text import catalogs

    assert script != NO_HEADING or script.count('"""') == 2 and "\nIt prints one line." in script
    (stubbed_copy / "beginner_source" / "no_heading.py").write_text(script)
    updated = tutorials_site(stubbed_copy, "update-po", LANGUAGES="ko")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    po = stubbed_copy / "locales" / "ko" / "LC_MESSAGES" / "beginner_source" / "no_heading.po"
    catalog = catalogs.load(po)
    assert sorted(message.id for message in catalog if message.id) == sorted(m for m in NO_HEADING_KO if m in script)
    for message in (message for message in catalog if message.id):
        message.string = NO_HEADING_KO[message.id]
    catalogs.save(catalog, po)
    builddir = stubbed_copy / "_build"
    result = build(stubbed_copy, builddir, env={"LANGUAGES": "en ko"})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # Sphinx's one warning, as a stock build gives it: the gallery's toctree cannot link a page without a title.
    warnings = {line.partition(": WARNING: ")[2] for line in result.stdout.splitlines() if "WARNING" in line}
    assert warnings == {"toctree contains reference to document 'beginner/no_heading' that doesn't have a title: "
                        "no link will be generated [toc.no_title] (en, ko)"}, output
    for lang, first in (("en", "Trains a small model"), ("ko", "작은 모델을 훈련하는")):
        html_dir = builddir / "html" / lang
        page = (html_dir / "beginner" / "no_heading.html").read_text()
        assert first in page, lang
        assert "the script without a heading ran" in "".join(page_outputs(html_dir / "beginner" / "no_heading.html"))
        assert first in (html_dir / "beginner" / "index.html").read_text(), lang  # its thumbnail's title
        [notebook] = html_dir.glob("_downloads/*/no_heading.ipynb")
        [script] = html_dir.glob("_downloads/*/no_heading.py")
        cells = "".join("".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"])
        assert first in cells and first in script.read_text(), lang


@pytest.mark.site
def test_an_extension_that_starts_a_process_works_in_every_language_s_build(project_copy: Path) -> None:
    # A language builds in a fork of its own, no daemon: an extension may start processes, as under sphinx-build
    # (sphinx-sitemap starts a multiprocessing Manager at builder-inited).
    conf = project_copy / "conf.py"
    conf.write_text(conf.read_text() + (
        "\n\ndef _start_a_process(app):\n    import multiprocessing\n"
        "    child = multiprocessing.get_context('fork').Process(target=print)\n    child.start()\n    child.join()\n"
        "    (app.outdir / 'child.txt').write_text(str(child.exitcode))\n\n\n"
        "def setup(app):\n    app.connect('builder-inited', _start_a_process)\n"))
    result = build(project_copy, project_copy / "_build", "--noplot", env={"LANGUAGES": "en ko"})
    assert result.returncode == 0, result.stdout + result.stderr
    for lang in ("en", "ko"):
        assert (project_copy / "_build" / "html" / lang / "child.txt").read_text() == "0"


@pytest.mark.site
def test_a_build_of_one_language_links_to_the_languages_an_earlier_build_left(project_copy: Path) -> None:
    builddir = project_copy / "_build"
    for langs in ("en ja", "ja"):
        result = build(project_copy, builddir, "--noplot", env={"LANGUAGES": langs})
        assert result.returncode == 0, result.stdout + result.stderr
    page = (builddir / "html" / "ja" / "index.html").read_text(encoding="utf-8")
    assert 'data-language="en"' in page and 'data-language="ko"' not in page  # en is there; ko was never built

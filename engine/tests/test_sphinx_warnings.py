"""Sphinx's warnings told at the author's line: real sphinx-gallery pages, real Sphinx logs."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tutorials_site.core.text import sphinx_warnings, tutorial_text
from tutorials_site.core.text.sphinx_warnings import Warning, merge, rewrite, source_line

CONF = """\
extensions = ["sphinx_gallery.gen_gallery"]
sphinx_gallery_conf = {"examples_dirs": ["ex"], "gallery_dirs": ["gal"], "filename_pattern": "nothing-matches",
                       "remove_config_comments": True}
exclude_patterns = ["_build", "ex"]
"""
INDEX = "Top\n===\n\n.. toctree::\n\n   gal/index\n"
HEADER = "Gallery\n=======\n\nIntro with a bad underline\n-----\n"  # line 5: one character short
SECTION_HEADER = "Basics\n======\n\nThe basics.\n"
# Line numbers the assertions name: 8 (docstring underline), 20 (the line that ends the list; the
# comment block starts with a blank line sphinx-gallery strips), 23 (comment-block underline),
# 25 (the paragraph the catalog translates, at catalog line 11).
ONE = '''\
"""
One title
=========

Some text, then a section.

Short
----
"""
# sphinx_gallery_thumbnail_number = 1
import math

print(math.pi)

######################################################################
#
# Comment block
# -------------
# * item one
# continued badly
#
# Again
# ----
#
# A paragraph the catalog translates.

x = 1
'''
TWO = '''"""Two title
=========

Text
"""
y = 2
'''
PO = '''\
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: ko\\n"

#: ex/basics/one.py:7
msgid "Short"
msgstr ""

#: ex/basics/one.py:25
msgid "A paragraph the catalog translates."
msgstr "*broken emphasis in Korean."
'''


def build(src: Path) -> subprocess.Popen:
    """sphinx-build of a staged tree, its warnings on stderr."""
    return subprocess.Popen([sys.executable, "-m", "sphinx", "-b", "html", "-q", "--keep-going", str(src),
                             str(src / "_build" / "html")], stderr=subprocess.PIPE, text=True)


def stage(src: Path, one: str) -> None:
    (src / "ex" / "basics").mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    (src / "index.rst").write_text(INDEX)
    (src / "ex" / "GALLERY_HEADER.rst").write_text(HEADER)
    (src / "ex" / "basics" / "GALLERY_HEADER.rst").write_text(SECTION_HEADER)
    (src / "ex" / "basics" / "one.py").write_text(one)
    (src / "ex" / "two.py").write_text(TWO)


@pytest.fixture(scope="module")
def site(builds_site, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A repository with one tutorial folder and a Korean catalog, staged and built for en and ko."""
    repo = tmp_path_factory.mktemp("repo")
    stage(repo, ONE)
    po = repo / "locales" / "ko" / "LC_MESSAGES" / "ex" / "basics" / "one.po"
    po.parent.mkdir(parents=True)
    po.write_text(PO)
    english = tutorial_text.parse(repo / "ex" / "basics" / "one.py")
    korean = tutorial_text.render(english, {"A paragraph the catalog translates.": "*broken emphasis in Korean."})
    roots = {"en": repo / "_build" / "src" / "en", "ko": repo / "_build" / "src" / "ko"}
    stage(roots["en"], ONE)
    stage(roots["ko"], korean)
    builds = {seg: build(root) for seg, root in roots.items()}  # both at once: the test stays fast
    logs = {seg: process.communicate()[1] for seg, process in builds.items()}
    return {"repo": repo, "roots": roots, "logs": logs}


def located(site: dict, seg: str) -> list[Warning]:
    catalogs = None if seg == "en" else site["repo"] / "locales" / seg / "LC_MESSAGES"
    locate = sphinx_warnings.locator(site["roots"][seg], {"ex": "gal"}, site["repo"], catalogs)
    return rewrite(site["logs"][seg], locate)


def first_lines(warnings: list[Warning]) -> list[str]:
    return [str(w).splitlines()[0] for w in warnings]


def test_english_warnings_name_the_script_and_header_lines(site: dict) -> None:
    assert first_lines(located(site, "en")) == [
        "ex/basics/one.py:8: WARNING: Title underline too short.",
        "ex/basics/one.py:20: WARNING: Bullet list ends without a blank line; unexpected unindent. [docutils]",
        "ex/basics/one.py:23: WARNING: Title underline too short.",
        "ex/GALLERY_HEADER.rst:5: WARNING: Title underline too short.",
    ]
    # The quoted source stays with its warning.
    assert located(site, "en")[0].message == "Title underline too short.\n\nShort\n---- [docutils]"


def test_a_translated_passage_is_blamed_on_its_catalog_entry_and_english_on_the_script(site: dict) -> None:
    warnings = first_lines(located(site, "ko"))
    assert "locales/ko/LC_MESSAGES/ex/basics/one.po:11: WARNING: Inline emphasis start-string without end-string. " \
           "[docutils]" in warnings
    assert "ex/basics/one.py:8: WARNING: Title underline too short." in warnings  # untranslated: English


def test_languages_sharing_a_warning_report_it_once(site: dict) -> None:
    merged = merge({"en": located(site, "en"), "ko": located(site, "ko")})
    assert first_lines(merged) == [
        "ex/basics/one.py:8: WARNING: Title underline too short. (en, ko)",
        "ex/basics/one.py:20: WARNING: Bullet list ends without a blank line; unexpected unindent. [docutils] (en, ko)",
        "ex/basics/one.py:23: WARNING: Title underline too short. (en, ko)",
        "ex/GALLERY_HEADER.rst:5: WARNING: Title underline too short. (en, ko)",
        "locales/ko/LC_MESSAGES/ex/basics/one.po:11: WARNING: Inline emphasis start-string without end-string. "
        "[docutils] (ko)",
    ]
    assert first_lines(merge({"en": located(site, "en")}))[0] == "ex/basics/one.py:8: WARNING: Title underline too short."


def test_a_status_line_before_a_warning_is_no_part_of_its_place() -> None:
    log = "checking consistency... /src/b.rst: WARNING: document isn't included in any toctree [toc.not_included]\n"
    found = rewrite(log, lambda path, line: ("b.rst", None) if path == "/src/b.rst" else None)
    assert [str(w) for w in found] == ["b.rst: WARNING: document isn't included in any toctree [toc.not_included]"]


def test_generated_lines_map_to_the_script_and_sphinx_gallery_lines_to_nothing(site: dict) -> None:
    gallery = site["roots"]["en"] / "gal"
    rst = (gallery / "basics" / "one.rst").read_text()
    script = (gallery / "basics" / "one.py").read_text()
    lines = rst.splitlines()
    marker = next(i for i, line in enumerate(lines) if line.startswith(".. GENERATED FROM PYTHON SOURCE LINES 10-"))
    code = lines.index("    import math")
    assert source_line(rst, 1, script) is None  # EXAMPLE_HEADER
    assert source_line(rst, lines.index("One title") + 1, script) == 2
    assert source_line(rst, code + 1, script) == 11  # past the config comment sphinx-gallery removed
    assert source_line(rst, code + 3, script) == 13
    assert source_line(rst, marker + 1, script) is None
    assert source_line(rst, lines.index("Comment block") + 1, script) == 17
    assert source_line(rst, lines.index("Comment block") + 1) == 16  # without the script: the stripped line is unknown
    assert source_line(rst, len(lines), script) is None  # the download footer
    two = (gallery / "two.rst").read_text()
    assert source_line(two, two.splitlines().index("Two title") + 1) == 1  # text on the quotes' line


def test_a_staged_copy_of_a_repository_file_is_named_relative_to_it(site: dict, tmp_path: Path) -> None:
    repo = site["repo"]
    shutil.copy(repo / "conf.py", tmp_path / "conf.py")
    locate = sphinx_warnings.locator(site["roots"]["en"], {"ex": "gal"}, repo)
    assert locate(str(repo / "conf.py"), 3) == ("conf.py", 3)
    assert locate(str(tmp_path / "conf.py"), 3) is None  # outside the repository: left as Sphinx said
    made = site["roots"]["en"] / "made_by_conf.rst"  # made in the staged tree (by conf.py): named as the site's
    made.write_text("Made\n====\n")
    assert locate(str(made), 2) == ("made_by_conf.rst", 2)
    assert locate(str(site["roots"]["en"] / "gal" / "basics" / "one.rst"), None) == ("ex/basics/one.py", None)


def test_log_lines_are_read_with_colours_and_without_locations() -> None:
    log = ("reading sources... [ 50%] gal/one\n"
           "\x1b[91m/src/a.rst:3: WARNING: Unknown target name: \"x\". [ref.ref]\x1b[39;49;00m\n"
           "\x1b[91mWARNING: html_static_path entry '_static' does not exist\x1b[39;49;00m\n"
           "/src/b.rst: ERROR: document isn't included in any toctree [toc.not_included]\n"
           "/src/c.rst:9: WARNING: Title underline too short.\n\nT\n-- [docutils]\n"
           "build finished with problems, 4 warnings.\n")
    found = rewrite(log, lambda path, line: ("a.py", 7) if path == "/src/a.rst" else None)
    assert [str(w) for w in found] == [
        "a.py:7: WARNING: Unknown target name: \"x\". [ref.ref]",
        "WARNING: html_static_path entry '_static' does not exist",
        "/src/b.rst: ERROR: document isn't included in any toctree [toc.not_included]",
        "/src/c.rst:9: WARNING: Title underline too short.\n\nT\n-- [docutils]",
    ]
    assert found[1] == Warning(None, None, "WARNING", "html_static_path entry '_static' does not exist")


def test_a_failed_build_shows_the_end_of_its_log_after_the_warnings_it_reported() -> None:
    log = ("reading sources... [100%] gal/one\n"
           "/src/c.rst:9: WARNING: Title underline too short.\n\nT\n-- [docutils]\n"
           "\nExtension error!\n\nTraceback\n=========\n\n    ZeroDivisionError: division by zero\n")
    assert sphinx_warnings.after_warnings(log, 40) == [
        "", "Extension error!", "", "Traceback", "=========", "", "    ZeroDivisionError: division by zero"]
    assert sphinx_warnings.after_warnings(log, 2) == ["", "    ZeroDivisionError: division by zero"]
    assert sphinx_warnings.after_warnings("a\nb\n", 1) == ["b"]  # no warning: the end of the log


def test_a_path_inside_a_message_is_named_as_the_author_s_file_too() -> None:
    log = ("/src/ko/a.rst:3: WARNING: duplicate label x, other instance in /src/ko/b/c.rst [ref.duplicate]\n"
           "/src/ko/a.rst:4: WARNING: image file not readable: /elsewhere/d.png [image.not_readable]\n")
    place = {"/src/ko/a.rst": "a.rst", "/src/ko/b/c.rst": "b/c.rst"}
    found = rewrite(log, lambda path, line: (place[path], line) if path in place else None)
    assert [str(w) for w in found] == [
        "a.rst:3: WARNING: duplicate label x, other instance in b/c.rst [ref.duplicate]",
        "a.rst:4: WARNING: image file not readable: /elsewhere/d.png [image.not_readable]"]

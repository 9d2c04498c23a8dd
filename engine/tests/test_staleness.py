"""A changed English text is never shown with its old translation: it becomes fuzzy and shows English."""

import re
import subprocess
import sys

import pytest
from babel.messages.pofile import read_po

from conftest import build, executed

pytestmark = pytest.mark.site  # every test here builds a site

PAGE = "beginner/data_parallel_tutorial.html"
OLD = "In this tutorial you will:"
NEW = "By the end of this tutorial you will know how to:"


def run(project, *args, env=None):
    import os

    args = ["i18n-status" if a == "status" else a for a in args]
    return subprocess.run([sys.executable, "-m", "tutorials_site", *args], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "LANGUAGES": "", **(env or {})})


def test_a_changed_paragraph_becomes_fuzzy_shows_english_and_fails_strict_mode(project_copy):
    source = project_copy / "beginner_source" / "data_parallel_tutorial.py"
    source.write_text(source.read_text().replace(OLD, NEW))
    assert run(project_copy, "update-po").returncode == 0

    po = project_copy / "locales" / "ja" / "LC_MESSAGES" / "beginner_source" / "data_parallel_tutorial.po"
    with open(po, "rb") as f:
        entry = read_po(f)[NEW]
    assert entry.fuzzy and entry.string  # the old translation is kept, for the translator only
    assert f'#| msgid "{OLD}"\nmsgid "{NEW}"' in po.read_text()  # ... with the English it translated

    status = run(project_copy, "status").stdout
    assert re.search(r"^ja beginner_source/data_parallel_tutorial translated=46 fuzzy=1 untranslated=0 97%$", status, re.M)
    assert run(project_copy, "status", env={"STRICT": "1"}).returncode != 0

    builddir = project_copy / "_build"
    result = build(project_copy, builddir, env={"LANGUAGES": "en ja"})
    assert result.returncode == 0, result.stdout + result.stderr
    page = (builddir / "html" / "ja" / PAGE).read_text()
    assert NEW in page  # the current English, never the outdated Japanese
    banner = re.search(r'<div class="translation-incomplete admonition warning">(.*?)</div>', page, re.S)[1]
    assert "1" in banner and 'href="../../en/beginner/data_parallel_tutorial.html"' in banner

    strict = build(project_copy, builddir, env={"LANGUAGES": "en ja", "STRICT": "1"})
    assert strict.returncode != 0 and "STRICT=1 and 1 tutorial passage(s) would be shown in English" in strict.stdout


def test_a_site_paragraph_without_translation_is_flagged_and_fails_strict_mode(project_copy):
    with open(project_copy / "index.md", "a") as page:
        page.write("\nA paragraph nobody has translated yet.\n")
    builddir = project_copy / "_build"
    result = build(project_copy, builddir, env={"LANGUAGES": "ja"})
    assert result.returncode == 0, result.stdout + result.stderr
    index = (builddir / "html" / "ja" / "index.html").read_text()
    assert "A paragraph nobody has translated yet." in index and "translation-incomplete" in index
    strict = build(project_copy, builddir, env={"LANGUAGES": "ja", "STRICT": "1"})
    assert strict.returncode != 0
    assert "passage(s) not translated into ja, shown in English: 'A paragraph nobody has translated yet.'" in strict.stdout


def test_changing_one_catalog_rebuilds_only_that_language_and_executes_nothing(project_copy):
    builddir = project_copy / "_build"
    env = {"LANGUAGES": "en ja"}
    assert build(project_copy, builddir, env=env).returncode == 0
    po = project_copy / "locales" / "ja" / "LC_MESSAGES" / "beginner_source" / "data_parallel_tutorial.po"
    po.write_text(po.read_text().replace('msgstr "まとめ"', 'msgstr "まとめと次の一歩"', 1))
    result = build(project_copy, builddir, env=env)
    assert "[build] en: up to date" in result.stdout
    assert "[build] ja: sphinx-build" in result.stdout and executed(result) == 0
    assert "まとめと次の一歩" in (builddir / "html" / "ja" / PAGE).read_text()

"""Catalogs: strict reading, layout errors, msgfmt-clean files, status lines."""

import os
import re
import shutil
import subprocess
import sys

import pytest
from babel.messages.catalog import Catalog

from conftest import FIXTURE_TUTORIALS, FIXTURES, copy_engine, snapshot, with_engine
from tutorials_site.core.project import Project
from tutorials_site.core.text import catalogs

BROKEN = '''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "Summary"
msgstr "요약

msgid "Run the model"
msgstr "모델 실행"
'''


def test_only_a_translated_entry_that_is_not_fuzzy_counts_everywhere():
    catalog = Catalog(locale="ko")
    catalog.add("Done", "완료")
    catalog.add("Fuzzy", "흐림", flags=["fuzzy"])
    catalog.add("Untranslated", "")
    assert [m.id for m in catalog if catalogs.is_translated(m)] == ["Done"]  # not the header (msgid "") either
    assert catalogs.translations(catalog) == {"Done": "완료"}
    assert catalogs.counts(catalog, catalog, lambda msgid, msgstr: True) == (1, 1, 1)
    assert catalogs.counts(catalog, catalog, lambda msgid, msgstr: False) == (0, 1, 2)  # refused: untranslated


def test_a_plural_is_passed_over_by_every_reader_of_a_catalog():
    from tutorials_site.core.text import translate

    catalog = Catalog(locale="ko")
    catalog.add("Done", "완료")
    catalog.add(("One file", "{n} files"), ("파일 {n}개",))
    [done, plural] = [m for m in catalog if m.id]
    assert (catalogs.singular(done), catalogs.singular(plural)) == (("Done", "완료"), None)
    assert catalogs.translations(catalog) == {"Done": "완료"}
    assert catalogs.counts(catalog, catalog, lambda msgid, msgstr: True) == (1, 0, 1)
    for check in translate.SITE_CHECKS.values():
        assert check(plural, "파일") == translate.PLURAL


def test_a_syntax_error_names_file_and_line(tmp_path):
    po = tmp_path / "broken.po"
    po.write_text(BROKEN)
    with pytest.raises(catalogs.CatalogError, match=r"broken\.po:6: PO syntax error"):
        catalogs.load(po)


def _layout(project, relative):
    """The site at PROJECT with one more catalog, at RELATIVE in its catalogs' folder; the site as read then."""
    (project / "locales" / relative).parent.mkdir(parents=True, exist_ok=True)
    (project / "locales" / relative).write_text('msgid ""\nmsgstr ""\n')
    return Project.read(project)


def test_a_catalog_for_an_unknown_language_is_an_error(project_copy):
    site = _layout(project_copy, "klingon/LC_MESSAGES/index.po")
    with pytest.raises(catalogs.CatalogError, match="klingon: not one of the site's languages; translated languages: "
                                                    "ko, ja, zh_CN"):
        catalogs.check_layout(site)


def test_a_catalog_for_the_source_language_is_an_error(project_copy):
    site = _layout(project_copy, "en/LC_MESSAGES/index.po")
    with pytest.raises(catalogs.CatalogError, match="en: the site's source language \\(conf.py's language = 'en'\\)"):
        catalogs.check_layout(site)


def test_a_catalog_for_a_tutorial_that_does_not_exist_is_an_error(project_copy):
    site = _layout(project_copy, "ko/LC_MESSAGES/beginner_source/no_such_tutorial.po")
    with pytest.raises(catalogs.CatalogError, match=r"no tutorial beginner_source/no_such_tutorial\.py"):
        catalogs.check_layout(site)


def test_i18n_status_prints_a_line_per_language_and_tutorial_then_a_total(project_copy):
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "i18n-status"], cwd=project_copy,
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "LANGUAGES": ""})
    lines = result.stdout.splitlines()
    pattern = re.compile(r"^(ko|ja|zh-cn) (\S+) translated=(\d+) fuzzy=(\d+) untranslated=(\d+) (\d+)%$")
    body = [pattern.match(line) for line in lines[:-1]]
    assert all(body) and {m[1] for m in body} == {"ko", "ja", "zh-cn"}
    assert "beginner_source/data_parallel_tutorial" in {m[2] for m in body}
    assert re.match(r"^total translated=\d+ fuzzy=\d+ untranslated=\d+ \d+%$", lines[-1])


@pytest.mark.site
def test_a_broken_catalog_fails_the_build_before_anything_is_overwritten(project_copy):
    from conftest import build

    builddir = project_copy / "_build"
    assert build(project_copy, builddir, "--noplot", env={"LANGUAGES": "ja"}).returncode == 0
    before = (builddir / "html" / "ja" / "index.html").read_bytes()
    po = project_copy / "locales" / "ja" / "LC_MESSAGES" / "index.po"
    lines = po.read_text().splitlines()
    broken_at = next(i for i, line in enumerate(lines) if line.startswith("msgstr") and line != 'msgstr ""')
    lines[broken_at] = lines[broken_at].rstrip('"')  # an unterminated string
    po.write_text("\n".join(lines) + "\n")
    result = build(project_copy, builddir, "--noplot", env={"LANGUAGES": "ja"})
    assert result.returncode != 0
    assert f"error: locales/ja/LC_MESSAGES/index.po:{broken_at + 1}: PO syntax error" in result.stderr
    assert (builddir / "html" / "ja" / "index.html").read_bytes() == before


def test_a_header_charset_other_than_utf_8_is_reported_at_its_line(tmp_path):
    po = tmp_path / "sphinx.po"
    text = (FIXTURES / "locales" / "ja" / "LC_MESSAGES" / "sphinx.po").read_text(encoding="utf-8")
    po.write_text(text.replace("charset=utf-8", "charset=ISO-8859-1"), encoding="utf-8")
    line = text.splitlines().index('"Content-Type: text/plain; charset=utf-8\\n"') + 1
    with pytest.raises(catalogs.CatalogError) as raised:
        catalogs.load(po)
    assert str(raised.value) == (f"{po}:{line}: its header declares charset=ISO-8859-1, but catalogs here are UTF-8 "
                                 "(and this one is read as UTF-8): write charset=UTF-8 in its Content-Type")
    po.write_text(text.replace("charset=utf-8", "charset=UTF8"), encoding="utf-8")
    assert catalogs.load(po).charset.lower() in ("utf8", "utf-8")  # another spelling of UTF-8 is UTF-8


def test_a_translation_with_a_long_run_without_blanks_is_wrapped_at_its_blanks_and_read_back_whole(tmp_path):
    long_run = "長い-段落--" * 3000  # 18,000 characters without a blank, hyphens and dashes included
    text = f"{long_run} then words after a blank {long_run}"
    catalog = Catalog(locale="ja")
    catalog.add("A long paragraph.", text)
    po = tmp_path / "long.po"
    catalogs.save(catalog, po)
    assert catalogs.load(po)["A long paragraph."].string == text
    lines = po.read_text(encoding="utf-8").splitlines()
    assert lines.count(f'"{long_run}"') == 2  # each run on a line of its own, unbroken


@pytest.mark.site  # update-po reads the whole project with Sphinx
def test_update_po_rewrites_no_catalog_whose_messages_did_not_change(project_copy):
    """`update-po` on a fresh clone leaves `git status` clean: no catalog changes, even after an edit that moves every
    message's line (code added above them); a changed message does rewrite its catalog, in every language."""
    for label in FIXTURE_TUTORIALS:  # whole, not stubs: a stub loses the comments at the end of code lines
        shutil.copy(FIXTURES / label, project_copy / label)
    ddp = project_copy / "beginner_source" / "ddp_tutorial.py"
    _code_above_every_message(ddp)
    before = snapshot(project_copy / "locales")

    def update_po():
        result = subprocess.run([sys.executable, "-m", "tutorials_site", "update-po"], cwd=project_copy,
                                capture_output=True, text=True, env={**os.environ, "LANGUAGES": ""})
        assert result.returncode == 0, result.stdout + result.stderr
        return snapshot(project_copy / "locales")

    assert update_po() == before
    ddp.write_text(ddp.read_text(encoding="utf-8").replace("How fast, here", "How fast, on this machine"),
                   encoding="utf-8")
    changed = {name for name, data in update_po().items() if before[name] != data}
    assert changed == {f"{lang}/LC_MESSAGES/beginner_source/ddp_tutorial.po" for lang in ("ko", "ja", "zh_CN")}


def _code_above_every_message(path):
    """Three lines added after PATH's docstring: every message below moves."""
    text = path.read_text(encoding="utf-8")
    start = text.index('"""', 3) + 3
    path.write_text(text[:start] + "\n\n\n" + text[start:], encoding="utf-8")


def test_the_engine_s_labels_are_updated_in_its_own_package_and_unchanged_where_only_lines_moved(tmp_path):
    engine = copy_engine(tmp_path / "engine")  # its maintainers' step writes into the package itself
    _code_above_every_message(engine / "tutorials_site" / "sphinxext" / "i18n.py")
    before = snapshot(engine / "tutorials_site" / "locale")
    result = subprocess.run([sys.executable, "-m", "tutorials_site.commands.catalogs"], cwd=tmp_path, capture_output=True,
                            text=True, env=with_engine(engine))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the engine's labels: ko, ja, zh-cn" in result.stdout
    assert snapshot(engine / "tutorials_site" / "locale") == before


def test_a_fixed_entry_loses_the_previous_english_its_fuzzy_flag_kept(tmp_path):
    po = tmp_path / "x.po"
    po.write_text('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                  '#, fuzzy\n#| msgid "old one"\nmsgid "new one"\nmsgstr "새 것"\n\n'
                  '#, fuzzy\n#| msgid "old two"\nmsgid "new two"\nmsgstr "두 번째"\n', encoding="utf-8")
    catalog = catalogs.load(po)
    catalog["new one"].flags.discard("fuzzy")  # its translator fixed it
    catalogs.save(catalog, po)
    text = po.read_text(encoding="utf-8")
    assert "old one" not in text and "old two" in text


@pytest.mark.parametrize("po", sorted(FIXTURES.rglob("*.po")), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_catalog_saved_again_is_wrapped_as_babel_wraps_it(po, tmp_path):
    copy = tmp_path / po.name
    catalogs.save(catalogs.load(po), copy)
    assert copy.read_bytes() == po.read_bytes()


def test_a_fuzzy_entry_s_long_previous_english_stays_whole_through_any_number_of_saves(tmp_path):
    """Babel reads `#| msgid` lines as its translator's comment and would write it back wrapped, its `|` on the first
    line only: the next read then took the rest for words of a comment (`# the`, `# loop is`)."""
    previous = "An English paragraph long enough to be wrapped over several lines of a catalog, " * 3
    po = tmp_path / "x.po"
    catalog = Catalog(locale="ko")
    catalog.add("The new English", "새 번역", flags=["fuzzy"], previous_id=previous, user_comments=["a translator's note"])
    catalog.add("Kept", "유지")
    catalogs.save(catalog, po)
    first = po.read_text(encoding="utf-8")
    for _ in range(3):
        catalogs.save(catalogs.load(po), po)
    assert po.read_text(encoding="utf-8") == first
    entry = first[first.index("# a translator's note"):first.index('msgid "The new English"')].splitlines()
    assert entry[0] == "# a translator's note" and entry[1] == "#, fuzzy" and all(line.startswith("#| ") for line in entry[2:])
    again = catalogs.load(po)
    assert again["The new English"].previous_id == [previous] and again["The new English"].user_comments == [
        "a translator's note"]
    again["The new English"].flags.discard("fuzzy")  # its translator fixed it
    catalogs.save(again, po)
    assert "#|" not in po.read_text(encoding="utf-8") and "# a translator's note" in po.read_text(encoding="utf-8")

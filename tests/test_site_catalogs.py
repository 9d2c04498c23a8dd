"""The site's shipped catalogs, whatever tutorials and pages it has: clean under msgfmt, saved as Babel saves them,
the same set in every language, and every tutorial translated in full (STRICT i18n-status)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tutorials_site.core.project import Project
from tutorials_site.core.text import catalogs

ROOT = Path(__file__).resolve().parents[1]  # the site: this repository's root
SITE = Project.read(ROOT)
ALL_PO = sorted(SITE.locales.rglob("*.po"))


@pytest.mark.parametrize("po", ALL_PO, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_catalog_is_clean_under_msgfmt_check(po):
    result = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(po)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("po", ALL_PO, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_catalog_saved_again_is_wrapped_as_babel_wraps_it(po, tmp_path):
    copy = tmp_path / po.name
    catalogs.save(catalogs.load(po), copy)
    assert copy.read_bytes() == po.read_bytes()


def test_every_language_has_the_same_catalogs_each_for_a_tutorial_a_page_a_gallery_or_the_labels():
    """A tutorial just added has none until `make update-po`, in no language; otherwise every language has one per
    tutorial, page, gallery and section (a section's own page, its header, may have one)."""
    pages = {"index.po"} | {f"{g.gallery_dir}/index.po" for g in SITE.galleries}  # the landing page, the galleries
    sections = {f"{t.gallery.gallery_dir}/{t.section}/index.po" for t in SITE.tutorials if t.section.name}
    found = {lang.code: {p.relative_to(catalogs.catalog_dir(SITE, lang)).as_posix()
                         for p in catalogs.catalog_dir(SITE, lang).rglob("*.po")} for lang in SITE.languages.translated}
    for lang, names in found.items():
        assert {"sphinx.po"} | pages <= names <= {"sphinx.po"} | pages | sections | {f"{t.key}.po" for t in SITE.tutorials}, lang
    assert len({frozenset(names) for names in found.values()}) == 1, found


def test_every_tutorial_and_page_is_translated_in_full_in_every_language():
    command = Path(sys.executable).parent / "tutorials-site"
    result = subprocess.run([str(command), "i18n-status", "--strict"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

"""`make import-translation` end to end (issue #29): a translated checkout in this site's layout becomes the ko
catalogs, its report names what was not imported at the translated file's line, and `LANGUAGES=ko make html`
shows the page in Korean. The tutorial and its Korean copy are the tests' own (tests/fixtures/import/)."""

import shutil
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from conftest import copy_project, tutorials_site
from conftest import parse_html as parse

pytestmark = [pytest.mark.site, pytest.mark.tutorial]  # it builds the site and runs the tutorial it imported

IMPORT = Path(__file__).parent / "fixtures" / "import"
TUTORIAL = "beginner_source/counting_tutorial.py"


@pytest.fixture(scope="module")
def imported(builds_site, tmp_path_factory):
    """A project with the counting tutorial and a translated checkout of it (and of the landing page), imported."""
    root = tmp_path_factory.mktemp("import")
    project = copy_project(root / "project")
    shutil.copyfile(IMPORT / "counting_tutorial.py", project / TUTORIAL)
    checkout = root / "translated"
    (checkout / "beginner_source").mkdir(parents=True)
    shutil.copyfile(IMPORT / "counting_tutorial.ko.py", checkout / TUTORIAL)
    english = (project / "index.md").read_text(encoding="utf-8")
    title = english.splitlines()[0]
    (checkout / "index.md").write_text(english.replace(title, "# PyTorch 튜토리얼", 1), encoding="utf-8")
    (project / "locales/ko/LC_MESSAGES/index.po").unlink()  # the page's catalog is made by the import
    (checkout / "beginner_source/ddp_tutorial.py").write_text("def broken(:\n", encoding="utf-8")
    done = tutorials_site(project, "import-translation", FROM=str(checkout), LANGUAGES="ko")
    return project, checkout, title.lstrip("# "), done


def _catalog(project: Path, name: str):
    with open(project / "locales/ko/LC_MESSAGES" / name, "rb") as f:
        return read_po(f)


def test_the_checkout_becomes_the_catalog_and_the_report_names_the_added_paragraph(imported) -> None:
    project, checkout, _, done = imported
    assert done.returncode == 0, done.stdout + done.stderr
    catalog = _catalog(project, "beginner_source/counting_tutorial.po")
    assert catalog["Counting words in a sentence"].string == "문장의 단어 세기"
    assert catalog["Counting each word"].string == "단어마다 세기"
    assert catalog["Cut the sentence into words."].string == "문장을 단어로 자릅니다."
    assert not catalog["Words that were never seen start at zero, thanks to ``dict.get``."].string
    assert (f"{checkout / TUTORIAL}:24: not imported: a paragraph that matches none of the English units between the "
            "same lines of code") in done.stdout
    assert f"import-translation: {checkout / TUTORIAL}: 9 imported, 0 fuzzy, 1 left in English (of 10)" in done.stdout


def test_a_file_that_cannot_be_read_is_reported_counted_and_the_others_imported(imported) -> None:
    _, checkout, _, done = imported
    broken = checkout / "beginner_source/ddp_tutorial.py"
    assert done.returncode == 0
    assert f"{broken}:1: invalid syntax: not imported: the file cannot be read as a tutorial" in done.stdout
    assert f"import-translation: {broken}: skipped (it cannot be read as a tutorial): 0 imported" in done.stdout
    assert "file(s) into ko (1 skipped):" in done.stdout


def test_a_page_is_imported_too(imported) -> None:
    project, checkout, title, done = imported
    assert _catalog(project, "index.po")[title].string == "PyTorch 튜토리얼"
    assert f"import-translation: {checkout / 'index.md'}: 1 imported" in done.stdout


def test_the_imported_page_is_built_in_korean(imported) -> None:
    project, _, _, _ = imported
    built = tutorials_site(project, "html", LANGUAGES="ko", TUTORIALS=TUTORIAL)
    assert built.returncode == 0, built.stdout + built.stderr
    page = parse(project / "_build/html/ko/beginner/counting_tutorial.html")
    text = page.text()
    assert "문장의 단어 세기" in text and "이 단어를 하나 더 셉니다" in text
    assert "9 words" in text  # its output: it ran


def test_existing_translations_are_kept_unless_overwrite(imported, tmp_path) -> None:
    project, checkout, _, _ = imported
    po = project / "locales/ko/LC_MESSAGES" / TUTORIAL.replace(".py", ".po")
    po.write_text(po.read_text(encoding="utf-8").replace('msgstr "단어마다 세기"', 'msgstr "단어 하나하나 세기"'),
                  encoding="utf-8")
    again = tutorials_site(project, "import-translation", FROM=str(checkout), LANGUAGES="ko")
    assert "kept as the catalog had them" in again.stdout
    assert _catalog(project, TUTORIAL.replace(".py", ".po"))["Counting each word"].string == "단어 하나하나 세기"
    overwritten = tutorials_site(project, "import-translation", FROM=str(checkout), LANGUAGES="ko", OVERWRITE="1")
    assert overwritten.returncode == 0, overwritten.stderr
    assert _catalog(project, TUTORIAL.replace(".py", ".po"))["Counting each word"].string == "단어마다 세기"


@pytest.mark.parametrize(("env", "error"), [
    ({"FROM": "no/such/folder", "LANGUAGES": "ko"}, "no/such/folder: no such folder"),
    ({"FROM": ".", "LANGUAGES": "ko ja"}, "LANGUAGES names the one language"),
    ({"LANGUAGES": "ko"}, "FROM=DIR names the translated checkout"),
    ({"FROM": ".", "LANGUAGES": "ko"}, "FROM=.: the project itself, not a translated copy of it"),
    ({"FROM": "beginner_source", "LANGUAGES": "ko"}, "FROM=beginner_source: a folder inside the project"),
])
def test_a_wrong_checkout_or_language_is_a_clear_error(imported, env, error) -> None:
    project, _, _, _ = imported
    done = tutorials_site(project, "import-translation", **env)
    assert done.returncode != 0 and error in done.stderr, done.stderr


def test_a_folder_that_is_no_translated_copy_is_refused(imported, tmp_path) -> None:
    project, _, _, _ = imported
    done = tutorials_site(project, "import-translation", FROM=str(tmp_path), LANGUAGES="ko")
    assert done.returncode != 0 and "not a checkout of a translated copy of this site" in done.stderr, done.stderr


def test_a_link_out_of_the_checkout_is_never_followed(imported, tmp_path) -> None:
    project, _, _, _ = imported
    secret = tmp_path / "secret.py"
    secret.write_text('"""\nThe builder\'s file\n==================\n"""\nprint("not the checkout\'s")\n')
    checkout = tmp_path / "linked"
    (checkout / "beginner_source").mkdir(parents=True)
    (checkout / TUTORIAL).symlink_to(secret)
    done = tutorials_site(project, "import-translation", FROM=str(checkout), LANGUAGES="ko")
    said = done.stdout + done.stderr
    assert f"{checkout / TUTORIAL}: a link that leads out of FROM ({secret}), never followed: not imported" in said
    assert "The builder's file" not in (project / "locales/ko/LC_MESSAGES/beginner_source/counting_tutorial.po").read_text()

"""Bad input and faults: a one-line error naming the file (and line) and what to do, a non-zero exit,
and nothing already built or published changed; or, where the input is harmless, it is handled."""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import VENV, build, make, snapshot
from tutorials_site.core import languages, translate, tutorial_text

KO_PO = "locales/ko/LC_MESSAGES/beginner_source/data_parallel_tutorial.po"
JA_SITE_PO = "locales/ja/LC_MESSAGES/site.po"
EN_KO = {"LANGUAGES": "en ko"}


@pytest.fixture
def built(project_copy):
    """A project copy built in English and Korean, ready to be broken."""
    result = build(project_copy, project_copy / "_build", env=EN_KO)
    assert result.returncode == 0, result.stdout + result.stderr
    return project_copy


def publish(project, htmldir, pages, **env):
    return subprocess.run([sys.executable, "-m", "tutorials_site", "publish", str(htmldir)], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "PAGES": str(pages), **env})


def one_line_error(result):
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and lines, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return lines[-1]


# --- 1. two publishes into one tree at once ----------------------------------------------------------

def test_concurrent_publishes_into_one_tree_both_complete_and_are_listed(published, tmp_path):
    other = tmp_path / "b3"
    result = make(published, "html", VERSION="3.0", BUILDDIR=str(other))
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
    assert "inside the repository" in one_line_error(result) and "PAGES=" in one_line_error(result)
    assert snapshot(published / "locales") == before


def test_publish_refuses_a_folder_that_is_not_a_published_tree(published, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    result = publish(published, published / "_build" / "html", tmp_path / "notes")
    assert "not empty and not a published tree" in one_line_error(result)
    assert snapshot(tmp_path / "notes") == {"todo.txt": b"mine"}


# --- 3. a translation that points somewhere else ---------------------------------------------------------

def test_a_translation_changing_a_role_target_fails_the_build_naming_catalog_and_line(built):
    po = built / KO_PO
    text = po.read_text()
    role = ":class:`torch.nn.DataParallel`"
    at = text.index(role, text.index("msgstr", text.index(role)))  # the role in the Korean translation
    po.write_text(text[:at] + ":class:`torch.optim.SGD`" + text[at + len(role):])
    line = text.count("\n", 0, text.rindex("\nmsgid ", 0, at)) + 2
    before = snapshot(built / "_build" / "html")
    result = build(built, built / "_build", env=EN_KO)
    error = one_line_error(result)
    assert error.startswith(f"error: {KO_PO}:{line}: ") and "changes a role target" in error
    assert role in error and ":class:`torch.optim.SGD`" in error
    assert snapshot(built / "_build" / "html") == before


@pytest.mark.parametrize(("english", "translated", "changed"), [
    ("Use ``model.to(device)`` here.", "여기서 ``model.to(cpu)`` 를 씁니다.", "inline literal"),
    ("Read `the docs <https://pytorch.org/docs>`_.", "`문서 <https://example.com/>`_ 를 읽으세요.", "link target"),
    ("See :func:`torch.manual_seed`.", ":func:`torch.seed` 를 보세요.", "role target"),
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
    assert "link target" in translate.references_changed(unit, translated)
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
    assert make(built, "check", **EN_KO).returncode == 0


def test_make_check_recomputes_what_the_page_shows(built):
    page = built / "_build" / "html" / "ko" / "beginner" / "data_parallel_tutorial.html"
    page.write_text(page.read_text().replace("In Model: input size", "In Model: EDITED size"))
    result = make(built, "check", **EN_KO)
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

def test_a_duplicate_msgid_fails_naming_both_lines(built):
    po = built / JA_SITE_PO
    text = po.read_text()
    first = text.index("\nmsgid ", text.index('msgid ""') + 10) + 1
    entry = text[first:text.index("\n\n", first) + 2]
    broken = text + "\n" + entry
    po.write_text(broken)
    first_line = text.count("\n", 0, first) + 1
    duplicate_line = broken.count("\n", 0, len(text) + 1) + 1
    before = snapshot(built / "_build" / "html")
    error = one_line_error(build(built, built / "_build", env={"LANGUAGES": "ja"}))
    assert error == (f"error: {JA_SITE_PO}:{duplicate_line}: duplicate message definition "
                     f"(first at line {first_line}); keep one of the two entries")
    assert snapshot(built / "_build" / "html") == before


def test_a_catalog_that_is_not_utf8_fails_naming_file_and_line(built):
    po = built / KO_PO
    data = po.read_bytes()
    at = data.index("병렬".encode())
    po.write_bytes(data[:at] + "병렬".encode("euc-kr") + data[at + len("병렬".encode()):])
    before = snapshot(built / "_build" / "html")
    line = data.count(b"\n", 0, at) + 1
    error = one_line_error(build(built, built / "_build", env=EN_KO))
    assert error.startswith(f"error: {KO_PO}:{line}: not valid UTF-8")
    assert snapshot(built / "_build" / "html") == before


# --- 7. the same language twice ----------------------------------------------------------------------

def test_a_language_named_twice_is_built_once(project_copy):
    result = build(project_copy, project_copy / "_build", env={"LANGUAGES": "en en"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("[build] en: sphinx-build") == 1
    assert [lang.seg for lang in languages.select("en ja en")] == ["en", "ja"]


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
    result = subprocess.run(["make", "-s", "publish", f"PAGES={pages}", f"VENV={VENV}"], cwd=published,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists() and (tmp_path / f"x; touch {marker}" / "versions.json").exists()
    result = subprocess.run(["make", "-s", "assemble", f"SHARDS=nowhere; touch {marker}", f"VENV={VENV}"],
                            cwd=published, capture_output=True, text=True, env={**os.environ, "LANGUAGES": "en"})
    assert result.returncode != 0 and "not a shard's build folder" in result.stderr and not marker.exists()


# --- issue 17: labels are text, a changed label reaches the pages, a translation's size is limited -----------

# The three payloads: out of an attribute, a tag left open, a tag.
PAYLOADS = (
    '" tabindex="0" autofocus onfocus="document.body.dataset.x=1" data-x="',
    "<img src=x onerror=document.body.dataset.x=2// ",
    "<img src=x onerror=document.body.dataset.x=3>",
)
# All of them in one string, and out of a <style> or <script> too: it runs wherever a template or a script
# would take it as markup.
EVERYWHERE = ('ラベル" tabindex="0" autofocus onfocus="document.body.dataset.x=1" data-x="</style></script>'
              '<img src=x onerror="document.body.dataset.x=2"><img src=y onerror=document.body.dataset.x=3// ')
JA_LABELS = "locales/ja/LC_MESSAGES/sphinx.po"
JA = {"LANGUAGES": "ja"}


def site_messages(root=None):
    """(language, domain, message) of every translated language's site.po and sphinx.po."""
    from tutorials_site.core import catalogs

    for lang in languages.TRANSLATED:
        for domain in catalogs.SITE_DOMAINS:
            folder = catalogs.catalog_dir(lang) if root is None else root / "locales" / lang.code / "LC_MESSAGES"
            for message in catalogs.load(folder / f"{domain}.po"):
                if message.id:
                    yield lang, domain, message


def set_translations(po, translations):
    """Give entries of a catalog (msgid -> msgstr) new translations, through Babel: written as a translator's tool would."""
    from tutorials_site.core import catalogs

    catalog = catalogs.load(po)
    for msgid, msgstr in translations.items():
        catalog[msgid].string = msgstr
    catalogs.save(catalog, po)


def entry_line(po, msgid):
    from tutorials_site.core import catalogs

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


def test_a_label_that_is_not_plain_text_stops_the_build_before_anything_changes(project_copy):
    assert build(project_copy, project_copy / "_build", "--noplot", env=JA).returncode == 0
    before = snapshot(project_copy / "_build")
    po = project_copy / JA_LABELS
    set_translations(po, {"Versions": "バージョン" + PAYLOADS[0], "Color scheme": "配色" + PAYLOADS[1],
                          "Copy to clipboard": PAYLOADS[2]})
    result = build(project_copy, project_copy / "_build", "--noplot", env=JA)
    error = one_line_error(result)
    assert error == (f"error: {JA_LABELS}:{entry_line(po, 'Versions')}: msgid 'Versions': not plain text: it has "
                     "'\"', which HTML reads as markup; write it without < > & \" ' ` (typographic quotes and "
                     "apostrophes such as “ ” ’ 「 」 are fine) (and 2 more label(s) in this catalog)")
    assert snapshot(project_copy / "_build") == before


# Labels our own templates print, and those labels.js sets: escaped there, whatever the catalog says. (The
# theme's templates print labels as they are: check_label_translation is what keeps those plain text.)
def our_labels(root):
    from tutorials_site.sphinxext.i18n import SCRIPT_LABELS

    scripts = {label for value in SCRIPT_LABELS.values()
               for label in (value.values() if isinstance(value, dict) else [value])}
    return {message.id for lang, domain, message in site_messages(root)
            if lang.seg == "ja" and domain == "sphinx" and not translate.TAG.search(message.id)
            and (message.id in scripts or any(path.startswith("_templates/") for path, _ in message.locations))}


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """Japanese pages built with a payload in every page message (accepted as text) and, with the label
    check switched off in this build alone, in every label our templates and labels.js print."""
    from conftest import copy_project

    project = copy_project(tmp_path_factory.mktemp("hostile") / "project")
    ja = project / "locales" / "ja" / "LC_MESSAGES"
    set_translations(ja / "site.po", {m.id: (m.string or m.id) + PAYLOADS[0] for lang, domain, m in site_messages(project)
                                      if lang.seg == "ja" and domain == "site"})
    labels = our_labels(project)
    set_translations(ja / "sphinx.po", dict.fromkeys(labels, EVERYWHERE))
    unchecked = ("import sys; from tutorials_site.core import translate; "
                 "translate.SITE_CHECKS['sphinx'] = lambda message, msgstr: None; "
                 "from tutorials_site.commands.cli import main; main(sys.argv[1:])")
    result = subprocess.run([sys.executable, "-c", unchecked, "html-noplot", "--builddir", str(project / "_build")],
                            cwd=project, capture_output=True, text=True, env={**os.environ, **JA})
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

def test_a_changed_label_reaches_every_page_and_a_reverted_one_goes_back(project_copy):
    po = project_copy / JA_LABELS
    original = po.read_bytes()
    pages = [project_copy / "_build" / "html" / "ja" / page for page in ("index.html", "beginner/data_parallel_tutorial.html")]
    not_run = "This page was built without running the tutorial: its output is missing or out of date."
    old = {message.id: message.string for lang, domain, message in site_messages(project_copy)
           if lang.seg == "ja" and domain == "sphinx" and message.id in ("Languages", not_run)}
    new = {"Languages": "ことば", not_run: "実行せずにビルドしたページです。"}  # a template's label, and one added while reading
    for translations, gone in ((None, new), (new, old), (None, new)):
        if translations is None:
            po.write_bytes(original)
        else:
            set_translations(po, translations)
        result = build(project_copy, project_copy / "_build", "--noplot", env=JA)
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


def test_a_huge_translation_of_a_code_comment_is_shown_in_english_with_a_warning(project_copy):
    from tutorials_site.core import catalogs

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

"""A whole Sphinx-Gallery site moved here (issue #26): parity with plain sphinx-build, and the acceptance.

tests/moved_site/ is a small site of our own, written in Korean (conf.py's `language = "ko"`): hand-written pages
in folders with captioned toctrees, a page no toctree reaches, an image in _static/img shown by a page and by a
tutorial, `include`, `literalinclude`, `download` and `only`; a local extension found through a relative
`sys.path` entry, whose `spin` directive is used on pages and in a tutorial's text; `rst_epilog`'s `|site|`;
a `setup(app)` hook (a stylesheet, a source-read handler); a second theme; one gallery with a section.

- Parity: the site built by plain `python -m sphinx -b html` with stock sphinx-gallery (executing its
  examples; the engine's entry dropped from `extensions`), and moved into a copy of this project as the
  acceptance moves it, built by `make html`. A reader of the source language (ko) gets the same pages, with
  the same text, images, figures, downloads and titles, plus what the engine adds on purpose.
- Acceptance (the issue's last paragraph, with ko as the source language, so that en is the translated one):
  both languages built with the site's own parts and the engine's switchers, `make update-po` makes the en
  catalogs, a translation reaches the en page, `make check` passes, and no line points into the build folder.

One stock build and one project copy (built for en and ko, then updated, translated and built for en), shared
by the module.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from difflib import unified_diff
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po
from PIL import Image

from conftest import Node, copy_project, tutorials_site
from conftest import parse_html as parse

pytestmark = pytest.mark.site  # every test here builds a site

SITE = Path(__file__).parent / "moved_site"
SITE_NAME = "바람개비 안내서"  # the site's name, from its extension, through rst_epilog's |site|
SOURCE, TRANSLATED = "ko", "en"  # the site's language, and the one translated from catalogs here
# Every page of the site, by docname: hand-written ones (lost: reached by no toctree), and sphinx-gallery's.
PAGES = ("index", "lost", "guide/intro", "guide/advanced/page",
         "tutorials/index", "tutorials/basics/index",
         "tutorials/plot_hello", "tutorials/plot_curve", "tutorials/basics/plot_count")
# What the site's own parts put on a page.
SPIN = {"index": 3, "guide/intro": 2, "guide/advanced/page": 5, "tutorials/plot_hello": 4}  # its directive
EPILOG = {"index": f"{SITE_NAME}에 오신", "guide/intro": f"{SITE_NAME}의 첫 장", "lost": f"{SITE_NAME}의 다른 쪽",
          "tutorials/plot_hello": f"{SITE_NAME}의 첫 예제"}  # |site| replaced
HOOK_TEXT = ("guide/intro", "오늘 부는 바람은 남서풍입니다.")  # conf.py's source-read handler put the wind in
HOOK_CSS = "_static/pinwheel.css"  # conf.py's setup() added it
# The second theme: whichever of the two is installed (conf.py picks it the same way), by its stylesheet.
THEMES = {"furo": "styles/furo.css", "pydata_sphinx_theme": "styles/pydata-sphinx-theme.css"}
THEME = next((name for name in THEMES if importlib.util.find_spec(name)), None)
NO_THEME = ("neither furo nor pydata-sphinx-theme is installed (another engineer is adding one to "
            "requirements.txt): the site falls back to sphinx_rtd_theme")
# What the project's own site holds and a moved site replaces (the acceptance removes these).
DEMO = ("beginner_source", "locales", "index.md", "conf.py", "_templates")
# The translation written into the en catalog of a hand-written page: its title and one paragraph.
TRANSLATED_PAGE = "guide/intro"
TRANSLATION = {"처음 만나는 바람개비": "Meeting the pinwheel",
               "바람개비는 바람의 방향과 세기를 눈으로 보여 주는 장난감입니다.":
                   "A pinwheel is a toy that shows the direction and the strength of the wind."}
BUILD_ENV = {"MPLBACKEND": "agg"}


# --- what a reader gets from a page ------------------------------------------------------------------------

# Left out of the comparison, by class: what the engine adds to a page on purpose.
ENGINE_ADDITIONS = frozenset({
    "tutorial-provenance",  # the provenance line (where and when the output was captured)
    "sphx-glr-download-colab", "colab-link",  # the Colab link beside the downloads
    "tutorials-report",  # the "Report a problem with this page" link (with tutorials_github_repo set)
    "rst-versions", "site-languages", "site-versions",  # the language and version switchers
    "sphx-glr-timing",  # the run's timing: another run, another time
    # sphinx-gallery's fixed English strings, which the engine translates into the page's language: the note
    # at the top, the download buttons (their files are compared by downloads()) and the signature.
    "sphx-glr-download-link-note", "sphx-glr-footer", "sphx-glr-signature",
})
# A page's "not translated yet" banner is NOT left out: a page of the source language must have none.
BLOCKS = {"address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt", "figcaption",
          "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "nav", "ol", "p", "pre",
          "section", "table", "td", "th", "tr", "ul"}
UNSEEN = {"script", "style", "template", "noscript"}


def main_content(doc: Node) -> Node:
    """The page's main content, without the theme around it: pydata's article, furo's article, the RTD
    theme's articleBody, alabaster's div.body."""
    tests = (lambda n: n.tag == "article" and "bd-article" in n.classes,
             lambda n: n.attrs.get("itemprop") == "articleBody",
             lambda n: n.tag in {"article", "div"} and n.attrs.get("role") == "main")
    for test in tests:
        found = next((n for n in doc.walk() if test(n)), None)
        if found is not None:
            return found
    raise AssertionError("no main content found on the page")


def _lines(node: Node, out: list[str], pre: bool = False) -> None:
    """Append NODE's visible text to OUT: block elements start a line, whitespace collapses outside <pre>."""
    if node.classes & ENGINE_ADDITIONS or node.tag in UNSEEN:
        return
    pre = pre or node.tag == "pre"
    if node.tag in BLOCKS:
        out.append("\n")
    for child in node.children:
        if isinstance(child, Node):
            _lines(child, out, pre)
        else:
            out.append(child if pre else re.sub(r"\s+", " ", child))
    if node.tag in BLOCKS:
        out.append("\n")


def visible_text(content: Node) -> list[str]:
    """The main content's text as a reader sees it, line by line (blank lines dropped)."""
    out: list[str] = []
    _lines(content, out)
    return [line.strip() for line in "".join(out).split("\n") if line.strip()]


def _local(page: Path, ref: str) -> Path:
    return (page.parent / ref.split("#")[0].split("?")[0]).resolve()


def _image_data(path: Path) -> object:
    """What a reader sees of an image file: a bitmap's pixels (PNG metadata aside), else its bytes."""
    if not path.exists():
        return "missing"
    if path.suffix == ".png":
        with Image.open(path) as image:
            return image.size, image.convert("RGBA").tobytes()
    return path.read_bytes()


def images(page: Path, content: Node) -> list[tuple[str, str, object]]:
    """The images the main content shows: (file name, alt text, what the file shows)."""
    return [(Path(img.attrs["src"]).name, img.attrs.get("alt", ""), _image_data(_local(page, img.attrs["src"])))
            for img in content.walk(ENGINE_ADDITIONS) if img.tag == "img"]


def downloads(page: Path, content: Node) -> dict[str, object]:
    """The files the main content offers for download, by name: bytes, except for notebooks and zips, which
    the engine writes itself in plain Markdown on purpose (README: their names only)."""
    found: dict[str, object] = {}
    for link in content.walk():
        href = link.attrs.get("href", "") if link.tag == "a" else ""
        if "_downloads/" in href and "://" not in href:
            name = Path(href).name
            found[name] = name if name.endswith((".ipynb", ".zip")) else _local(page, href).read_bytes()
    return found


@dataclass(frozen=True)
class Page:
    """What a reader gets from one built page."""

    path: Path
    doc: Node

    @classmethod
    def read(cls, html: Path, docname: str) -> Page:
        path = html / f"{docname}.html"
        assert path.is_file(), f"{path}: not built"
        return cls(path, parse(path))

    @property
    def content(self) -> Node:
        return main_content(self.doc)

    @property
    def title(self) -> str:
        return next(n.text().strip() for n in self.doc.walk() if n.tag == "title")

    @property
    def lang(self) -> str:
        return next(n.attrs.get("lang", "") for n in self.doc.walk() if n.tag == "html")

    @property
    def stylesheets(self) -> list[str]:
        return [n.attrs["href"].split("?")[0] for n in self.doc.walk()
                if n.tag == "link" and n.attrs.get("rel") == "stylesheet"]

    def text(self) -> list[str]:
        return visible_text(self.content)

    def heading(self) -> str:
        """The page's first heading, without the link sign after it."""
        h1 = next(n for n in self.content.walk() if n.tag == "h1")
        return "".join(c for c in h1.children if isinstance(c, str)).strip()

    def spins(self) -> list[str]:
        """What the site's `spin` directive wrote on the page."""
        return [" ".join(n.text().split()) for n in self.content.walk() if "pinwheel-spin" in n.classes]


def built_pages(html: Path) -> set[str]:
    """The docnames of the pages a build wrote (Sphinx's index and search pages aside)."""
    return {p.relative_to(html).with_suffix("").as_posix() for p in html.rglob("*.html")
            if not p.relative_to(html).parts[0].startswith("_") and p.stem not in {"genindex", "search"}}


# --- the builds --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """A command run in the project copy: what it printed and its exit status."""

    command: str
    returncode: int
    output: str

    def report(self) -> str:
        return f"{self.command}: exit status {self.returncode}\n{self.output[-8000:]}"


def _run(project: Path, *args: str, **env: str) -> Run:
    result = tutorials_site(project, *args, **BUILD_ENV, **env)
    shown = " ".join(f"{k}={v!r}" for k, v in env.items())
    return Run(f"{shown} make {' '.join(args)}".strip(), result.returncode, result.stdout + result.stderr)


@dataclass(frozen=True)
class Stock:
    html: Path
    output: str


@pytest.fixture(scope="module")
def stock(builds_site, tmp_path_factory) -> Stock:
    """The site built as it is at home: plain sphinx-build, stock sphinx-gallery executing the examples."""
    root = tmp_path_factory.mktemp("stock") / "site"
    shutil.copytree(SITE, root, ignore=shutil.ignore_patterns("__pycache__"))
    with (root / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write('\nextensions.remove("tutorials_site.sphinxext")  # a stock build has no engine\n')
    result = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", ".", "_build/html"], cwd=root,
                            capture_output=True, text=True, env={**os.environ, **BUILD_ENV})
    assert result.returncode == 0, result.stdout + result.stderr
    return Stock(root / "_build" / "html", result.stdout + result.stderr)


def move_in(project: Path) -> None:
    """The acceptance's moving in: the project's own site out, the moved site's files in, as they are."""
    for name in DEMO:
        path = project / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)  # _templates: this site has none now
    shutil.copytree(SITE, project, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


@dataclass(frozen=True)
class Engine:
    project: Path
    build: Run  # LANGUAGES="en ko" make html

    def html(self, lang: str) -> Path:
        return self.project / "_build" / "html" / lang


@pytest.fixture(scope="module")
def engine(builds_site, tmp_path_factory) -> Engine:
    """A copy of this project with the site moved in, built in both languages by `make html`."""
    project = copy_project(tmp_path_factory.mktemp("moved") / "project")
    move_in(project)
    return Engine(project, _run(project, "html", LANGUAGES=f"{TRANSLATED} {SOURCE}"))


@dataclass(frozen=True)
class Translated:
    update_po: Run
    catalog: Path
    translated: dict[str, bool]  # each msgid of TRANSLATION: found in the catalog (and translated there)
    build: Run  # LANGUAGES=en make html, after the translation
    check: Run


def translate(catalog: Path) -> dict[str, bool]:
    """TRANSLATION written into CATALOG (where it exists); which of its messages the catalog had."""
    if not catalog.is_file():
        return dict.fromkeys(TRANSLATION, False)
    with catalog.open("rb") as file:
        po = read_po(file)
    found = {}
    for msgid, msgstr in TRANSLATION.items():
        message = po.get(msgid)
        found[msgid] = message is not None
        if message is not None:
            message.string = msgstr
            message.flags.discard("fuzzy")
    with catalog.open("wb") as file:
        write_po(file, po)
    return found


@pytest.fixture(scope="module")
def translated(engine: Engine) -> Translated:
    """The acceptance's next steps, in the same project: update-po, a translation, an en build, check. Each
    step runs whatever the last one gave: the tests say which failed."""
    update_po = _run(engine.project, "update-po", LANGUAGES=f"{TRANSLATED} {SOURCE}")
    catalog = engine.project / "locales" / TRANSLATED / "LC_MESSAGES" / f"{TRANSLATED_PAGE}.po"
    found = translate(catalog)
    build = _run(engine.project, "html", LANGUAGES=TRANSLATED)
    check = _run(engine.project, "check", LANGUAGES=f"{TRANSLATED} {SOURCE}")
    return Translated(update_po, catalog, found, build, check)


def _built(engine: Engine) -> None:
    assert engine.build.returncode == 0, engine.build.report()


# --- the fixture site, as stock builds it: it has every feature compared -----------------------------------

def test_stock_build_shows_every_part_of_the_site(stock: Stock) -> None:
    assert built_pages(stock.html) == set(PAGES)
    pages = {name: Page.read(stock.html, name) for name in PAGES}
    for name, turns in SPIN.items():
        assert pages[name].spins() == [f"바람개비가 {turns}바퀴 돌았습니다 " + "↻" * turns]
    for name, words in EPILOG.items():
        assert any(words in line for line in pages[name].text()), name
    assert any(HOOK_TEXT[1] in line for line in pages[HOOK_TEXT[0]].text())
    assert all(any(s.endswith(HOOK_CSS) for s in page.stylesheets) for page in pages.values())
    intro = "\n".join(pages["guide/intro"].text())
    assert "압정을 다룰 때는" in intro  # include
    assert "웹 페이지에만" in intro and "인쇄본에만" not in intro  # only
    assert "def balanced(wing_weights):" in "\n".join(pages["guide/advanced/page"].text())  # literalinclude
    assert "winds.csv" in downloads(pages["guide/intro"].path, pages["guide/intro"].content)  # download
    for name in ("guide/intro", "tutorials/plot_hello"):  # the image in _static/img
        assert images(pages[name].path, pages[name].content)[0][:2] == ("pinwheel.svg", "날개가 넷인 바람개비 그림")
    curve = images(pages["tutorials/plot_curve"].path, pages["tutorials/plot_curve"].content)
    assert [(name, alt) for name, alt, _ in curve] == [("sphx_glr_plot_curve_001.png", "Wind speed by hour")]
    assert "날개 4: 서" in pages["tutorials/plot_hello"].text()  # an output
    assert pages["index"].lang == SOURCE
    assert "lost.rst: WARNING: document isn't included in any toctree" in stock.output


def test_stock_build_has_the_second_theme(stock: Stock) -> None:
    if THEME is None:
        pytest.xfail(NO_THEME)
    assert any(s.endswith(THEMES[THEME]) for s in Page.read(stock.html, "index").stylesheets)


def test_the_comparison_sees_a_changed_line(stock: Stock, tmp_path: Path) -> None:
    """The extractor's lines change with a page's words, and not with what it leaves out on purpose."""
    altered = tmp_path / "altered.html"
    original = stock.html / "tutorials" / "plot_hello.html"
    text = original.read_text(encoding="utf-8")
    assert "날개 2: 동" in text and 'class="sphx-glr-timing"' in text
    altered.write_text(re.sub(r"\(0 minutes [\d.]+ seconds\)", "(9 minutes 9.9 seconds)",
                              text.replace("날개 2: 동", "날개 2: 서")), encoding="utf-8")
    before, after = Page(original, parse(original)).text(), Page(altered, parse(altered)).text()
    assert [line for line in after if line not in before] == ["날개 2: 서"]


# --- parity: the source language's pages, as stock renders them --------------------------------------------

def test_engine_builds_the_moved_site(engine: Engine) -> None:
    _built(engine)


def test_engine_builds_the_same_pages(stock: Stock, engine: Engine) -> None:
    assert built_pages(engine.html(SOURCE)) == built_pages(stock.html)


@pytest.mark.parametrize("docname", PAGES)
def test_page_reads_as_in_stock(docname: str, stock: Stock, engine: Engine) -> None:
    """The visible text of the page's main content, line by line, less the engine's additions."""
    ours, theirs = Page.read(engine.html(SOURCE), docname), Page.read(stock.html, docname)
    diff = list(unified_diff(theirs.text(), ours.text(), "stock", "engine", lineterm="", n=1))
    assert not diff, "\n".join(diff)


@pytest.mark.parametrize("docname", PAGES)
def test_page_shows_the_images_and_downloads_of_stock(docname: str, stock: Stock, engine: Engine) -> None:
    """Images and figures (file, alt text, pixels), then downloads (a script's bytes; the engine may offer more)."""
    ours, theirs = Page.read(engine.html(SOURCE), docname), Page.read(stock.html, docname)
    mine, stocks = images(ours.path, ours.content), images(theirs.path, theirs.content)
    assert [i[:2] for i in mine] == [i[:2] for i in stocks]
    assert [name for (name, _, a), (_, _, b) in zip(mine, stocks) if a != b] == []
    offered, expected = downloads(ours.path, ours.content), downloads(theirs.path, theirs.content)
    assert {name: offered.get(name) for name in expected} == expected


@pytest.mark.parametrize("docname", PAGES)
def test_page_has_the_title_head_and_site_parts_of_stock(docname: str, stock: Stock, engine: Engine) -> None:
    """The title, the page's language, the site's directive and stylesheets (its own, its theme's)."""
    ours, theirs = Page.read(engine.html(SOURCE), docname), Page.read(stock.html, docname)
    assert (ours.title, ours.heading(), ours.lang) == (theirs.title, theirs.heading(), theirs.lang)
    assert ours.spins() == theirs.spins()
    # The engine may add stylesheets of its own, and drops sphinx-gallery's for HTML outputs and Binder badges
    # on purpose (sphinxext/gallery.py: drop_unused_css); every other one of stock's is there.
    dropped = {"sg_gallery-binder.css", "sg_gallery-dataframe.css", "sg_gallery-rendered-html.css"}
    assert [s for s in theirs.stylesheets if s not in ours.stylesheets and Path(s).name not in dropped] == []


def test_engine_uses_the_second_theme(engine: Engine) -> None:
    if THEME is None:
        pytest.xfail(NO_THEME)
    for lang in (SOURCE, TRANSLATED):
        assert any(s.endswith(THEMES[THEME]) for s in Page.read(engine.html(lang), "index").stylesheets), lang


# --- acceptance: both languages, a translation, check, the build's messages --------------------------------

@pytest.mark.parametrize("lang", [SOURCE, TRANSLATED])
def test_every_page_built_with_the_sites_own_parts(lang: str, engine: Engine) -> None:
    html = engine.html(lang)
    assert built_pages(html) == set(PAGES)
    pages = {name: Page.read(html, name) for name in PAGES}
    assert {name: page.lang for name, page in pages.items()} == dict.fromkeys(PAGES, lang)
    assert {name: len(pages[name].spins()) for name in SPIN} == dict.fromkeys(SPIN, 1)  # the extension
    for name in EPILOG:  # the epilog: |site| replaced by the site's name, whatever the language
        text = "\n".join(pages[name].text())
        assert "|site|" not in text and SITE_NAME in text, name
    assert "%%바람%%" not in "\n".join(pages[HOOK_TEXT[0]].text())  # the hook's source-read handler
    assert all(any(s.endswith(HOOK_CSS) for s in page.stylesheets) for page in pages.values())  # its stylesheet
    assert all(page.title.endswith(SITE_NAME) for page in pages.values())  # html_title


@pytest.mark.parametrize("lang, other", [(SOURCE, TRANSLATED), (TRANSLATED, SOURCE)])
def test_every_page_links_to_itself_in_the_other_language(lang: str, other: str, engine: Engine) -> None:
    """The engine's language switcher: on every page, a link to the same page in the other language."""
    missing = []
    for name in PAGES:
        page = Page.read(engine.html(lang), name)
        targets = {_local(page.path, a.attrs["href"]) for a in page.doc.walk()
                   if a.tag == "a" and a.attrs.get("hreflang") == other and a.attrs.get("href")}
        if (engine.html(other) / f"{name}.html").resolve() not in targets:
            missing.append(name)
    assert missing == []


def test_source_language_pages_have_no_translation_banner(engine: Engine) -> None:
    bannered = [name for name in PAGES
                if any("translation-incomplete" in n.classes for n in Page.read(engine.html(SOURCE), name).doc.walk())]
    assert bannered == []


TUTORIAL_PAGES = [name for name in PAGES if name.startswith("tutorials/") and not name.endswith("/index")]


@pytest.mark.parametrize("lang", [SOURCE, TRANSLATED])
def test_tutorial_pages_show_their_run(lang: str, engine: Engine) -> None:
    """The engine's provenance line on every tutorial page: its run was found, in the site's own setup (a
    tutorial's process does not evaluate conf.py again from elsewhere)."""
    found = {}
    for name in TUTORIAL_PAGES:
        classes = {c for node in Page.read(engine.html(lang), name).content.walk() for c in node.classes}
        found[name] = ("tutorial-provenance" in classes, "tutorial-not-executed" in classes)
    assert found == dict.fromkeys(TUTORIAL_PAGES, (True, False))


def test_translated_language_pages_say_they_are_not_translated(engine: Engine) -> None:
    """Without a translation, every page of the translated language shows the source's text with a banner
    that links to the page in the source language (not to an English one)."""
    wrong = {}
    for name in PAGES:
        page = Page.read(engine.html(TRANSLATED), name)
        links = {_local(page.path, a.attrs["href"]) for banner in page.doc.walk() if "translation-incomplete" in banner.classes
                 for a in banner.walk() if a.tag == "a" and a.attrs.get("href")}
        if (engine.html(SOURCE) / f"{name}.html").resolve() not in links:
            wrong[name] = sorted(str(link) for link in links) or "no banner"
    assert wrong == {}


def test_update_po_makes_a_catalog_per_page_and_tutorial(translated: Translated, engine: Engine) -> None:
    assert translated.update_po.returncode == 0, translated.update_po.report()
    catalogs = engine.project / "locales" / TRANSLATED / "LC_MESSAGES"
    hand_written = [name for name in PAGES if not name.startswith("tutorials/")]
    tutorials = ["tutorials_source/plot_hello", "tutorials_source/plot_curve", "tutorials_source/basics/plot_count"]
    missing = [f"{name}.po" for name in hand_written + tutorials if not (catalogs / f"{name}.po").is_file()]
    assert missing == [], f"missing under {catalogs}: {missing}; there: " + \
        str(sorted(p.relative_to(catalogs).as_posix() for p in catalogs.rglob("*.po")) if catalogs.is_dir() else "none")
    assert translated.translated == dict.fromkeys(TRANSLATION, True), f"messages of {translated.catalog}"
    with (catalogs / "lost.po").open("rb") as file:
        ids = [message.id for message in read_po(file) if message.id]
    # Neither the epilog's substitution definition (on every page) nor the page's transition is a message.
    assert [i for i in ids if i == SITE_NAME or not re.search(r"\w", i)] == [], ids


def test_translation_reaches_the_translated_page(translated: Translated, engine: Engine) -> None:
    assert translated.build.returncode == 0, translated.build.report()
    page = Page.read(engine.html(TRANSLATED), TRANSLATED_PAGE)
    assert page.heading() == TRANSLATION["처음 만나는 바람개비"]
    assert TRANSLATION["바람개비는 바람의 방향과 세기를 눈으로 보여 주는 장난감입니다."] in page.text()
    source = Page.read(engine.html(SOURCE), TRANSLATED_PAGE)  # the source language's page stays as written
    assert source.heading() == "처음 만나는 바람개비"


def test_make_check_passes(translated: Translated) -> None:
    assert translated.check.returncode == 0, translated.check.report()


def test_unreached_page_is_warned_at_its_own_file_once(engine: Engine) -> None:
    warned = [line for line in engine.build.output.splitlines() if "isn't included in any toctree" in line]
    assert len(warned) == 1 and re.match(r"lost\.rst(:\d+)?: WARNING: ", warned[0]), engine.build.output[-4000:]


def test_no_line_points_into_the_build_folder(engine: Engine, translated: Translated) -> None:
    """No message names a generated file (BUILDDIR is _build here): the lines that say where the pages and
    Sphinx's logs are (_build/html/, _build/logs/) are the build's answer, not a message about a file."""
    runs = [engine.build, translated.update_po, translated.build, translated.check]
    found = [f"{run.command}: {line}" for run in runs for line in run.output.splitlines()
             if re.search(r"_build/(?!html\b|logs\b)", line)]
    assert found == [], "\n".join(found[:40])

"""Checks of a built site that a green sphinx-build does not prove.

- every tutorial page of every built language carries the execution stamp of
  a run of the current English source (every language shows that one run) in
  the current environment, with a non-zero run time: a `plot_gallery=0` build, a skipped file or a stale output
  cannot pass for an executed one; a run that failed passes only where conf.py expects it to;
- where the build folder holds the runs beside the pages (not in a copy of the
  pages alone), each page's run is the one its stamp sealed (core.runs.seal) and the
  one the page shows (the same stamp);
- every internal link and anchor resolves.
"""

from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .. import languages, project
from ..files import shown
from ..layout import BuildTree
from ..runs import currency, runs, signing, stamping
from ..runs.fingerprint import present, tutorial_digest
from ..runs.records import BUILD_RECORD, BuildInfo, RecordError, RunRecord, Stamp
from ..runs.stamps import STAMP_META, outputs_digest, page_copy
from ..sphinx_gallery_formats import OUTPUT_CLASS, figure_name


class _OutputBlocks(HTMLParser):
    """The text of each output block of a page: the <pre> of the <div class="highlight"> just inside a
    <div class="sphx-glr-script-out …">; and the markup of each HTML repr, what is inside a
    <div class="output_html …"> (sphinx-gallery's HTML_HEADER), as the page's source has it.

    That is how Sphinx's HTML writer renders the code blocks sphinx-gallery marks with
    `.. rst-class:: sphx-glr-script-out` (its output and traceback blocks); tests/test_sphinx_gallery_api.py
    reads a page built from sphinx-gallery's own reST with it.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.htmls: list[str] = []
        self._expected: list[tuple[str, str | None]] = []
        self._text: list[str] | None = None
        self._source = ""
        self._html: tuple[int, int] | None = None  # (where the repr's markup starts, <div> depth inside it)

    def feed(self, data: str) -> None:
        """Parse DATA, kept to take HTML reprs from as written."""
        self._source += data
        super().feed(data)

    def _offset(self) -> int:
        """Where in the source the tag being handled starts."""
        line, column = self.getpos()
        return sum(len(text) for text in self._source.splitlines(keepends=True)[:line - 1]) + column

    def _html_tag(self, tag: str, start: bool) -> bool:
        """Follow the <div>s of an HTML repr being read; at its end, keep its markup. Whether TAG was inside one."""
        if self._html is None:
            return False
        begin, depth = self._html
        depth += (1 if start else -1) if tag == "div" else 0
        if depth == 0:
            self.htmls.append(self._source[begin:self._offset()])
            self._html = None
        else:
            self._html = (begin, depth)
        return True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._text is not None or self._html_tag(tag, start=True):
            return  # markup inside the <pre> (highlighting spans), or inside an HTML repr
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and "output_html" in classes:
            self._html = (self._offset() + len(self.get_starttag_text() or ""), 1)
            return
        if tag == "div" and classes[:1] == [OUTPUT_CLASS]:
            self._expected = [("div", "highlight"), ("pre", None)]
        elif self._expected and tag == self._expected[0][0] and self._expected[0][1] in (None, *classes):
            self._expected.pop(0)  # the next element expected, with its class if it needs one
            if not self._expected:
                self._text = []
        else:
            self._expected = []

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._html_tag(tag, start=False):
            return
        if self._text is not None and tag == "pre":
            self.texts.append("".join(self._text))
            self._text = None


class _Page(_OutputBlocks):
    """What the checks need of a page, in one pass: its anchors, its links and images (line, target), its <meta>
    names, and its output blocks' texts."""

    LINK_ATTRS = {"a": "href", "link": "href", "img": "src", "script": "src", "iframe": "src"}

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[int, str]] = []
        self.meta: dict[str, str | None] = {}
        self.images: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Record the tag's anchor, link or <meta>."""
        values = dict(attrs)
        for key in ("id", "name"):
            anchor = values.get(key)
            if anchor and tag != "meta":
                self.ids.add(anchor)
        name = values.get("name")
        if tag == "meta" and name:
            self.meta[name] = values.get("content", "")
        target = values.get(self.LINK_ATTRS.get(tag, ""))
        if target:
            self.links.append((self.getpos()[0], target))
            if tag == "img":
                self.images.append((self.getpos()[0], target))
        super().handle_starttag(tag, attrs)


def parse(path: Path | str) -> _Page:
    """The anchors, links, images, <meta> names and output blocks of the HTML page at PATH."""
    page = _Page()
    page.feed(Path(path).read_text(encoding="utf-8"))
    page.close()
    return page


def check_stamps(site: project.Project, htmldir: Path | str, langs: Sequence[languages.Language],
                 runs_key: bytes = b"", *, sandboxed: bool = True, verified_only: bool = False,
                 pythonpath: str = "") -> list[str]:
    """Problems of SITE's tutorial pages; a tutorial conf.py's filename_pattern does not execute is listed by
    not_executed(), not here. RUNS_KEY: each run beside the pages must be signed with it (core.runs.signing);
    SANDBOXED: a run made without its sandbox is a problem; VERIFIED_ONLY (ci-build): so is a page whose run was
    taken unverified. PYTHONPATH: the builder's, whose folders count in the fingerprint."""
    problems = []
    now = present(site.root, sandboxed, runs_key, pythonpath)
    runs_root = BuildTree(Path(htmldir).parent).runs
    kept: dict[str, Stamp | list[str]] = {}  # each tutorial's run, read and verified once for every language
    for lang in langs:
        for tutorial in (t for t in site.tutorials if t.executed):
            source = tutorial.path
            page = Path(htmldir, lang.seg, tutorial.page + ".html")
            where = f"{_from(site, page)}: {tutorial.label} ({lang.seg})"
            if not page.exists():
                problems.append(f"{where}: page missing")
                continue
            parsed = parse(page)
            raw = parsed.meta.get(STAMP_META)
            if raw is None:
                problems.append(f"{where}: no execution stamp (the tutorial was not executed)")
                continue
            try:
                stamp = Stamp.from_json(raw, f"its {STAMP_META} <meta>")
            except RecordError as error:
                problems.append(f"{where}: {error}; build it again")
                continue
            if verified_only and not stamp.verified:
                problems.append(f"{where}: its run was taken from elsewhere without the runs key to verify it "
                                f"({signing.VARIABLE} unset): ci-build takes only runs signed by a trusted build")
            if stamp.failed and not stamping.excused(site, tutorial, stamp):
                problems.append(f"{where}: {failure(parsed.texts)}, which conf.py does not expect: fix the tutorial, "
                                "or list it in conf.py's expected_failing_examples (it must fail) or "
                                "tutorials_allowed_failures (it may)")
            outputs = shown_outputs(page, parsed, source.stem)
            problems += [f"{where}: {problem}" for problem in
                         currency.problems(tutorial_digest(site, tutorial), now, stamp=stamp, shown=outputs)]
            if runs_root.is_dir():
                if tutorial.key not in kept:
                    kept[tutorial.key] = _sealed_run(runs_root, tutorial.key, runs_key)
                run = kept[tutorial.key]
                problems += [f"{where}: {problem}" for problem in
                             (run if isinstance(run, list) else _shown_run(runs_root, tutorial.key, run, stamp))]
    return problems


def _from(site: project.Project, path: Path) -> str:
    """PATH as messages name it: from the project's root where it is inside it."""
    resolved = path.resolve()
    return resolved.relative_to(site.root.resolve()).as_posix() if resolved.is_relative_to(site.root.resolve()) else str(path)


def failed_as_allowed(site: project.Project, htmldir: Path | str) -> list[str]:
    """The tutorials whose run in the build folder of HTMLDIR failed as conf.py expects or allows: what check
    counts, where it passes."""
    tree = BuildTree(Path(htmldir).parent)
    return [t.label for t in site.tutorials
            if (stamp := stamping.stamp_of(tree.run_dir(t.key))) is not None and stamping.excused(site, t, stamp)]


def failure(texts: Sequence[str]) -> str:
    """What a page of a failed run says of its failure, from its output blocks' TEXTS: the last one ends with
    the error (a traceback's last line, or how a run that did not finish ended)."""
    ending = texts[-1].strip().splitlines()[-1] if texts and texts[-1].strip() else ""
    return f"its run failed ({ending}; its page shows it)" if ending else "its run failed (its page shows the error)"


def _sealed_run(runs_root: Path, key: str, runs_key: bytes) -> Stamp | list[str]:
    """The stamp of the run KEY under RUNS_ROOT where it is the run its stamp sealed (and, with RUNS_KEY, signed);
    else why not."""
    try:
        stamp = Stamp.read(runs_root / key / runs.STAMP)
    except RecordError as error:
        return [f"its run cannot be read: {error}"]
    if stamp is None:
        return [f"its run is not in {shown(runs_root / key)} (a build folder holds the runs its pages show)"]
    unsigned = signing.unsigned(runs_key, runs_root / key, key) if runs_key else None
    return runs.unsealed(runs_root, key) or ([f"its run in {shown(runs_root / key)} is {unsigned}"] if unsigned else stamp)


def _shown_run(runs_root: Path, key: str, run: Stamp, on_page: Stamp) -> list[str]:
    """Whether the page that carries the stamp ON_PAGE shows the run KEY, whose stamp is RUN."""
    if page_copy(run, signing.verified(runs_root / key)) == on_page:
        return []
    return [f"its page shows another run than the one in {shown(runs_root / key)} (its stamp differs): build it again"]


def missing_build(htmldir: Path | str) -> str:
    """What check and publish say of a folder of pages without its build record: a folder with no page of any
    language is one nothing was built into yet."""
    if not any(Path(htmldir).glob("*/index.html")):
        return f"{shown(htmldir)}: nothing built there yet: run `tutorials-site html` first"
    return (f"{shown(htmldir)}: no {BUILD_RECORD}: its last build failed or did not finish (a build writes it last, once "
            "every language succeeded, so that pages of two builds are never taken for one); build it with `tutorials-site html`")


def whole_build(htmldir: Path | str) -> BuildInfo | str:
    """The build record of a build of the whole site, which check and publish accept; else why it is none, in
    one line: it has no build.json (it failed, or did not finish), an unreadable one, or a TUTORIALS build (its
    build.json names the selection) executed only those tutorials."""
    try:
        info = BuildInfo.read(Path(htmldir, BUILD_RECORD))
    except RecordError as error:
        return f"{error}: build it again with `tutorials-site html`"
    if info is None:
        return missing_build(htmldir)
    if not info.partial:
        return info
    return (f"{shown(htmldir)}: built with TUTORIALS={info.partial}, the other tutorials not executed; "
            "build the whole site with `tutorials-site html` (no TUTORIALS), then check or publish it")


def failed_runs(site: project.Project, htmldir: Path | str) -> list[str]:
    """The error line of each tutorial of SITE whose run in the build folder of HTMLDIR failed where conf.py does
    not expect it to, as the build said it: what check names where that build failed (and left no build.json)."""
    tree = BuildTree(Path(htmldir).parent)
    found = []
    for tutorial in site.tutorials:
        stamp = stamping.stamp_of(tree.run_dir(tutorial.key))
        if stamp is None or not stamp.failed or stamping.excused(site, tutorial, stamp):
            continue
        try:
            result = RunRecord.read(tree.run_dir(tutorial.key) / runs.RESULT)
        except RecordError:
            continue  # damaged: the next build runs it again, and says so
        if result is not None and result.error is not None:
            found.append(runs.error_line(tutorial.label, result.error, raised=not stamp.unfinished))
    return found


def not_executed(site: project.Project) -> list[str]:
    """The tutorials conf.py's filename_pattern leaves unexecuted: shown without output, by design."""
    return [t.label for t in site.tutorials if not t.executed]


def output_texts(html_text: str) -> list[str]:
    """The text of each output block a built page shows (sphinx-gallery's sphx-glr-script-out), in order."""
    parser = _OutputBlocks()
    parser.feed(html_text)
    parser.close()
    return parser.texts


def page_outputs(page: Path | str) -> list[str]:
    """output_texts of the built page at `page`."""
    return output_texts(Path(page).read_text(encoding="utf-8"))


def shown_outputs(page: Path | str, parsed: _Page, stem: str) -> str:
    """The outputs digest of what a built page shows: its output blocks' text and its figures' bytes."""
    texts = parsed.texts
    figure = figure_name(stem, srcset=False)
    sources = [link for _, link in parsed.images if figure.fullmatch(unquote(link).rpartition("/")[2])]
    images = [(Path(page).parent / unquote(link)).read_bytes() for link in dict.fromkeys(sources)]
    return outputs_digest(texts, images, parsed.htmls)


# The folders of a build Sphinx copies files into as they are (its static files, a theme's among them: pydata's
# Jinja macros, webpack-macros.html): what they hold is no page of the site, whatever its name.
ASSET_FOLDERS = frozenset({"_static", "_downloads", "_sources", "_images"})


def check_links(htmldir: Path | str) -> list[str]:
    """Each internal link of the built site's pages that points to no file, or to no anchor in its page."""
    htmldir = Path(htmldir).resolve()
    pages = {path: parse(path) for path in sorted(htmldir.rglob("*.html"))}
    problems = []
    for path, page in pages.items():
        if ASSET_FOLDERS.intersection(path.relative_to(htmldir).parts):
            continue
        for line, link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue  # external: not ours to check offline
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(htmldir)}:{line}: {link}"
            if not target.is_relative_to(htmldir) or not target.exists():
                problems.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: no such anchor")
    return problems

"""Gettext catalogs: where they live, reading them strictly, merging, counting.

Per translated language (locales/<code>/LC_MESSAGES/):
- <tutorial folder>/<tutorial>.po: the units of one tutorial script (tutorial_text),
  keyed by the script's path: beginner_source/basics/quickstart.po;
- <docname>.po: the messages of one hand-written page (or gallery index), as
  Sphinx's gettext builder extracts them, keyed by the page's path: intro.po,
  guide/setup.po, beginner/index.po;
- sphinx.po: the site's labels (conf.py's project, copyright and description, its own templates'); the
  engine's labels have catalogs of their own in the package (core.assets).

Babel reads, writes and merges them. A changed English unit becomes fuzzy (with
the previous English kept as `#| msgid`) or untranslated: both show English.
"""

import ast
import contextlib
import io
import re
from collections.abc import Callable, Collection, Iterator
from pathlib import Path, PurePosixPath

from babel.messages import pofile
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import PoFileError, read_po, write_po

from .. import languages, project
from ..errors import SiteError
from ..files import shown, write_atomically
from . import tutorial_text
from .gallery_strings import is_gallery_template

LABELS = "sphinx"  # the labels' catalog: Sphinx's own domain for its templates' strings
# The charset a catalog's header declares; every catalog here is UTF-8.
_CHARSET = re.compile(r'^"Content-Type:[^"]*?charset=([^"\\;\s]*)', re.M | re.I)
_PO_LINE = re.compile(
    r'^(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+)?"(?:[^"\\]|\\.)*"\s*$'
    r"|^#.*$|^\s*$"
)


class CatalogError(SiteError):
    """A catalog that cannot be used: the message names the file and line."""


def catalog_dir(site: project.Project, lang: languages.Language) -> Path:
    """A language's catalogs: <the site's locales>/<code>/LC_MESSAGES/."""
    return site.locales / lang.code / "LC_MESSAGES"


def tutorial_po(site: project.Project, lang: languages.Language, tutorial: project.Tutorial) -> Path:
    """A tutorial's catalog, keyed by its path: <lang>/LC_MESSAGES/beginner_source/basics/<stem>.po."""
    return catalog_dir(site, lang) / f"{tutorial.key}.po"


def load(path: Path | str) -> Catalog:
    """Read a PO file, failing with file:line on anything malformed (Babel alone accepts some)."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        number = data.count(b"\n", 0, error.start) + 1
        raise CatalogError(f"{shown(path)}:{number}: not valid UTF-8 (byte {data[error.start]:#04x}); "
                           "save the catalog as UTF-8") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not _PO_LINE.match(line):
            raise CatalogError(f"{shown(path)}:{number}: PO syntax error: {line.strip()[:60]!r}")
    header_end = text.find("\nmsgid ", text.find('msgid ""') + 1)  # where the second entry starts
    declared = _CHARSET.search(text, 0, len(text) if header_end < 0 else header_end)
    if declared and declared[1].lower().replace("-", "").replace("_", "") != "utf8":
        number = text.count("\n", 0, declared.start()) + 1
        raise CatalogError(f"{shown(path)}:{number}: its header declares charset={declared[1]}, but catalogs "
                           "here are UTF-8 (and this one is read as UTF-8): write charset=UTF-8 in its Content-Type")
    _check_duplicates(path, text)
    try:
        with open(path, "rb") as f:
            catalog = read_po(f, abort_invalid=True)
    except PoFileError as error:
        raise CatalogError(f"{shown(path)}: {error}") from None
    for message in catalog:
        _previous_from_comments(message)
    return catalog


def _previous_from_comments(message: Message) -> None:
    """A fuzzy entry's previous English (`#| msgid "..."`) as Babel keeps it, previous_id, where Babel's reader left
    it among its translator's comments, one comment a line: written back as comments, its lines were wrapped again
    without their `|`, which the next read took for words of a translator's comment (`# the`, `# loop is`). Babel
    writes a long previous English wrapped inside its strings, at spaces: its lines are joined by one again."""
    lines = [comment[2:] for comment in message.user_comments if comment.startswith("| ")]
    written = " ".join(lines).removeprefix("msgid ")
    if not lines or not written.startswith('"'):
        return
    try:
        previous = ast.literal_eval(written)  # adjacent string literals: one string
    except (SyntaxError, ValueError):
        return  # not Babel's: left as the translator's comment it looks like
    if isinstance(previous, str):
        message.previous_id = [previous]
        message.user_comments = [comment for comment in message.user_comments if not comment.startswith("| ")]


def _check_duplicates(path: Path | str, text: str) -> None:
    """Babel keeps the first of two entries with one msgid (and msgctxt); msgfmt rejects the file: so do we."""
    seen: dict[tuple[str | None, str], int] = {}
    parts: dict[str, str] = {}
    field: str | None = None
    start = 0
    for number, line in enumerate(text.splitlines(), 1):
        word = line.split(" ", 1)[0]
        if word in ("msgctxt", "msgid"):
            if word == "msgctxt" or field != "msgctxt":
                parts, start = {}, number
            parts[word], field = line[len(word):].strip(), word
        elif line.startswith('"') and field:
            parts[field] += line.strip()  # a string continued on the next line
        else:
            if word.startswith("msgstr") and parts.get("msgid", '""') != '""':
                key = (parts.get("msgctxt"), parts["msgid"])
                if key in seen:
                    raise CatalogError(f"{shown(path)}:{start}: duplicate message definition (first at "
                                       f"line {seen[key]}); keep one of the two entries")
                seen[key] = start
            parts, field = ({} if word.startswith("msgstr") else parts), None


# Babel wraps a long line where its WORD_SEP splits it: a regular expression whose time is quadratic in the length
# of a run without blanks (a Chinese or Japanese paragraph has none: 100,000 characters took minutes). A line with
# a run longer than this is split at its blanks only, in linear time; every other line as Babel splits it.
LONG_RUN = 400
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN}}}")
_BLANKS = re.compile(r"(\s+)")


class _WordSeparator:
    """What normalize() asks of Babel's WORD_SEP (split), in time linear in a line's length."""

    def __init__(self, babel: re.Pattern[str]) -> None:
        self.babel = babel

    def split(self, line: str) -> list[str]:
        return (_BLANKS if _LONG_RUN.search(line) else self.babel).split(line)


@contextlib.contextmanager
def _linear_wrapping() -> Iterator[None]:
    babel = pofile.WORD_SEP
    pofile.WORD_SEP = _WordSeparator(babel)  # type: ignore[assignment]  # normalize() calls its split() only
    try:
        yield
    finally:
        pofile.WORD_SEP = babel


_CREATED = re.compile(rb'^"POT-Creation-Date: [^"]*"\n', re.M)


def save(catalog: Catalog, path: Path | str) -> None:
    """Write atomically: an interrupted update never leaves half a catalog. A catalog whose content is unchanged
    (its template's creation date aside) is left as it is: an update rewrites no catalog it did not change.
    References name the file without a line: a line number moves with every edit above it (the engine's code,
    a tutorial's code), which would rewrite catalogs whose messages did not change. Babel reads a fuzzy entry's
    previous English (`#| msgid`, read back by load() as its previous_id): once the entry is no longer fuzzy, it goes."""
    for message in catalog:
        if not message.fuzzy:
            message.previous_id = []
    data = io.BytesIO()
    with _linear_wrapping():
        write_po(data, catalog, width=79, include_previous=True, sort_output=False, include_lineno=False)
    path = Path(path)
    if path.is_file() and _CREATED.sub(b"", path.read_bytes()) == _CREATED.sub(b"", data.getvalue()):
        return
    write_atomically(path, data.getvalue())


def is_translated(message: Message) -> bool:
    """Whether a catalog entry counts: translated, and not fuzzy (a fuzzy one is kept for its translator only)."""
    return bool(message.id and message.string and not message.fuzzy)


def singular(message: Message) -> tuple[str, str] | None:
    """The message's (msgid, msgstr); None for a plural (msgid_plural), whose forms Babel reads as tuples: no
    tutorial's text, page or label of the site has one, so every reader of a catalog passes it over."""
    if isinstance(message.id, str) and isinstance(message.string, str):
        return message.id, message.string
    return None


def translations(catalog: Catalog) -> dict[str, str]:
    """msgid -> msgstr for the entries that count (is_translated); plurals (singular) left out."""
    return dict(pair for m in catalog if is_translated(m) and (pair := singular(m)))


def tutorial_template(path: Path, root: Path) -> Catalog:
    """The catalog template of the tutorial script at PATH, in the project at ROOT: each unit of its text
    (tutorial_text), where it is."""
    template = Catalog(project="PyTorch Tutorials", fuzzy=False)
    for unit in tutorial_text.parse(path).units:
        comment = "code comment: plain text, no reST" if "comment" in unit.kind else f"reST {unit.kind}"
        location = (Path(path).relative_to(root).as_posix(), unit.lineno)
        if unit.msgid in template:
            template[unit.msgid].locations.append(location)
        else:
            template.add(unit.msgid, locations=[location], auto_comments=[comment])
    return template


def page_po(site: project.Project, lang: languages.Language, docname: str) -> Path:
    """A hand-written page's catalog, keyed by its path: <lang>/LC_MESSAGES/guide/setup.po."""
    return catalog_dir(site, lang) / f"{docname}.po"


def _is_tutorial_catalog(site: project.Project, relative: PurePosixPath) -> bool:
    """Whether a catalog path (relative to LC_MESSAGES) lies in a gallery's source folder: a tutorial's, or a page
    written there beside the scripts."""
    return any(relative.is_relative_to(g.examples_dir) for g in site.galleries)


def site_catalogs(site: project.Project, lang: languages.Language) -> dict[str, Path]:
    """The catalogs Sphinx translates LANG's pages with, by domain: the labels' and one per hand-written page
    (its docname), tutorials' catalogs aside (they translate the scripts before Sphinx runs)."""
    folder = catalog_dir(site, lang)
    tutorials = {tutorial_po(site, lang, t) for t in site.tutorials}
    found = {}
    for po in sorted(folder.rglob("*.po")) if folder.is_dir() else ():
        if po not in tutorials:
            found[po.relative_to(folder).with_suffix("").as_posix()] = po
    return found


def check_layout(site: project.Project) -> None:
    """Every catalog folder names one of the site's translated languages, and every catalog in a gallery's
    source folder an existing tutorial (or a page written beside it)."""
    if not site.locales.is_dir():
        return
    translated = {lang.code: lang for lang in site.languages.translated}
    for folder in sorted(p for p in site.locales.iterdir() if p.is_dir()):
        if folder.name not in translated:
            source = site.languages.source.code
            why = (f"the site's source language (conf.py's language = {source!r}): its text is the sources'"
                   if folder.name == source else "not one of the site's languages")
            raise CatalogError(f"{shown(folder)}: {why}; translated languages: "
                               f"{', '.join(translated) or 'none'} (conf.py's tutorials_languages)")
        lang = translated[folder.name]
        tutorials = {tutorial_po(site, lang, t) for t in site.tutorials}
        for po in sorted(folder.rglob("*.po")):
            relative = PurePosixPath(po.relative_to(catalog_dir(site, lang)).as_posix())
            written_beside = [p for p in (site.root / relative).parent.glob(f"{relative.stem}.*")
                              if p.suffix not in (".py", ".po")]
            if po not in tutorials and _is_tutorial_catalog(site, relative) and not written_beside:
                raise CatalogError(
                    f"{shown(po)}: no tutorial {relative.with_suffix('.py')} (nor page) to translate: "
                    "a tutorial's catalog is <its folder>/<its name>.po; delete it if its tutorial is gone"
                )


def merge(template: Catalog, path: Path, lang: languages.Language) -> Catalog:
    """Bring the catalog at `path` up to the template; returns the merged catalog."""
    catalog = merged(template, path, lang)
    save(catalog, path)
    return catalog


def merged(template: Catalog, path: Path, lang: languages.Language) -> Catalog:
    """The catalog at `path` (a new one where there is none) brought up to the template, not saved."""
    catalog = load(path) if path.exists() else Catalog(
        locale=lang.code, project="PyTorch Tutorials", copyright_holder="the PyTorch Tutorials site authors",
        language_team=f"PyTorch Tutorials {lang.name} translators", last_translator="",
        header_comment=f"# {lang.name} translation of the PyTorch Tutorials site ({path.name}).\n"
                       "# Distributed under the same license as the project (see LICENSE).",
    )
    catalog.update(template, update_header_comment=False)
    catalog.locale = lang.code
    catalog.fuzzy = False  # the header is complete; only entries are fuzzy
    return catalog


def is_page_message(msgid: str, tutorial_msgids: Collection[str]) -> bool:
    """Whether a message Sphinx extracted from a hand-written page or gallery index belongs in its catalog:
    not sphinx-gallery's own strings, nor a tutorial's text it repeats (its catalog has that), nor a bare
    cross-reference."""
    return not (msgid in tutorial_msgids or is_gallery_template(msgid) or re.fullmatch(r":doc:`[^`]*`", msgid))


def counts(template: Catalog, catalog: Catalog | None, usable: Callable[[str, str], bool]) -> tuple[int, int, int]:
    """(translated, fuzzy, untranslated) of the template's messages in the catalog, by USABLE(msgid, msgstr);
    a plural, which no catalog here has, counts as untranslated."""
    translated = fuzzy = untranslated = 0
    for message in template:
        if not message.id:
            continue
        found = catalog.get(message.id) if catalog is not None else None
        if found is not None and found.string and found.fuzzy:
            fuzzy += 1
        elif found is not None and is_translated(found) and (pair := singular(found)) and usable(*pair):
            translated += 1
        else:
            untranslated += 1
    return translated, fuzzy, untranslated

"""Gettext catalogs: where they live, reading them strictly, merging, counting.

Per language (locales/<code>/LC_MESSAGES/):
- <tutorial folder>/<tutorial>.po: the units of one tutorial script (tutorial_text);
- site.po: the hand-written pages, as Sphinx's gettext builder extracts them;
- sphinx.po: the site's labels (conf.py's project, copyright and description, its own templates'); the
  engine's labels have catalogs of their own in the package (core.assets).

Babel reads, writes and merges them. A changed English unit becomes fuzzy (with
the previous English kept as `#| msgid`) or untranslated: both show English.
"""

import io
import re
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import PoFileError, read_po, write_po

from . import languages, project, tutorial_text
from .errors import SiteError
from .files import write_atomically
from .gallery_strings import is_gallery_template
from .layout import ROOT

LOCALES = ROOT / "locales"
SITE_DOMAINS = ("site", "sphinx")
_PO_LINE = re.compile(
    r'^(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+)?"(?:[^"\\]|\\.)*"\s*$'
    r"|^#.*$|^\s*$"
)


class CatalogError(SiteError):
    """A catalog that cannot be used: the message names the file and line."""


def catalog_dir(lang: languages.Language) -> Path:
    """A language's catalogs: locales/<code>/LC_MESSAGES/."""
    return LOCALES / lang.code / "LC_MESSAGES"


def tutorial_po(lang: languages.Language, tutorial: project.Tutorial) -> Path:
    """A tutorial's catalog, keyed by its path: <lang>/LC_MESSAGES/beginner_source/basics/<stem>.po."""
    return catalog_dir(lang) / f"{tutorial.key}.po"


def display_path(path: Path | str) -> Path:
    """A path as messages show it: relative to the repository when inside it."""
    path = Path(path)
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def load(path: Path | str) -> Catalog:
    """Read a PO file, failing with file:line on anything malformed (Babel alone accepts some)."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        number = data.count(b"\n", 0, error.start) + 1
        raise CatalogError(f"{display_path(path)}:{number}: not valid UTF-8 (byte {data[error.start]:#04x}); "
                           "save the catalog as UTF-8") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not _PO_LINE.match(line):
            raise CatalogError(f"{display_path(path)}:{number}: PO syntax error: {line.strip()[:60]!r}")
    _check_duplicates(path, text)
    try:
        with open(path, "rb") as f:
            return read_po(f, abort_invalid=True)
    except PoFileError as error:
        raise CatalogError(f"{display_path(path)}: {error}") from None


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
                    raise CatalogError(f"{display_path(path)}:{start}: duplicate message definition (first at "
                                       f"line {seen[key]}); keep one of the two entries")
                seen[key] = start
            parts, field = ({} if word.startswith("msgstr") else parts), None


def save(catalog: Catalog, path: Path | str) -> None:
    """Write atomically: an interrupted update never leaves half a catalog."""
    data = io.BytesIO()
    write_po(data, catalog, width=79, include_previous=True, sort_output=False)
    write_atomically(path, data.getvalue())


def is_translated(message: Message) -> bool:
    """Whether a catalog entry counts: translated, and not fuzzy (a fuzzy one is kept for its translator only)."""
    return bool(message.id and message.string and not message.fuzzy)


def translations(catalog: Catalog) -> dict[str, str]:
    """msgid -> msgstr for the entries that count (is_translated); plurals, which no tutorial's text has, left out."""
    return {m.id: m.string for m in catalog if is_translated(m) and isinstance(m.id, str) and isinstance(m.string, str)}


def tutorial_template(path: Path) -> Catalog:
    """The catalog template of the tutorial script at PATH: each unit of its text (tutorial_text), where it is."""
    template = Catalog(project="PyTorch Tutorials", fuzzy=False)
    for unit in tutorial_text.parse(path).units:
        comment = "code comment: plain text, no reST" if "comment" in unit.kind else f"reST {unit.kind}"
        location = (Path(path).relative_to(ROOT).as_posix(), unit.lineno)
        if unit.msgid in template:
            template[unit.msgid].locations.append(location)
        else:
            template.add(unit.msgid, locations=[location], auto_comments=[comment])
    return template


def check_layout() -> None:
    """Every catalog folder names a known language, every tutorial catalog an existing tutorial."""
    if not LOCALES.is_dir():
        return
    tutorials = {tutorial_po(languages.ALL[0], t).relative_to(catalog_dir(languages.ALL[0]))
                 for t in project.current().tutorials}
    for folder in sorted(LOCALES.iterdir()):
        if folder.name not in languages.BY_CODE or folder.name == languages.SOURCE.code:
            known = ", ".join(lang.code for lang in languages.TRANSLATED)
            raise CatalogError(f"{display_path(folder)}: unknown language {folder.name!r} (known: {known})")
        for po in sorted(folder.rglob("*.po")):
            relative = po.relative_to(folder / "LC_MESSAGES")
            if relative.parent.as_posix() == "." and relative.stem in SITE_DOMAINS:
                continue
            if relative not in tutorials:
                raise CatalogError(
                    f"{display_path(po)}: no tutorial {relative.with_suffix('.py')} to translate "
                    f"(tutorial catalogs are <folder>/<tutorial>.po, site catalogs {', '.join(SITE_DOMAINS)})"
                )


def merge(template: Catalog, path: Path, lang: languages.Language) -> Catalog:
    """Bring the catalog at `path` up to the template; returns the merged catalog."""
    catalog = load(path) if path.exists() else Catalog(
        locale=lang.code, project="PyTorch Tutorials", copyright_holder="the PyTorch Tutorials site authors",
        language_team=f"PyTorch Tutorials {lang.name} translators", last_translator="",
        header_comment=f"# {lang.name} translation of the PyTorch Tutorials site ({path.name}).\n"
                       "# Distributed under the same license as the project (see LICENSE).",
    )
    catalog.update(template, update_header_comment=False)
    catalog.locale = lang.code
    catalog.fuzzy = False  # the header is complete; only entries are fuzzy
    save(catalog, path)
    return catalog


def is_site_message(msgid: str, locations: Iterable[tuple[str, int]], tutorial_msgids: Collection[str]) -> bool:
    """Whether a message Sphinx extracted belongs in site.po (the tutorials have catalogs of their own)."""
    example_pages = {t.page for t in project.current().tutorials}
    in_pages = {Path(f).with_suffix("").as_posix() for f, _ in locations}
    return not (
        in_pages <= example_pages
        or msgid in tutorial_msgids
        or is_gallery_template(msgid)
        or re.fullmatch(r":doc:`[^`]*`", msgid)
    )


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
        elif (found is not None and is_translated(found) and isinstance(message.id, str) and isinstance(found.string, str)
              and usable(message.id, found.string)):
            translated += 1
        else:
            untranslated += 1
    return translated, fuzzy, untranslated

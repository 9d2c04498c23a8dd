"""`FROM=DIR LANGUAGES=ko tutorials-site import-translation`: a copy of the site translated in place (DIR: a checkout in
this site's layout, its tutorials and pages translated where they stand) becomes one language's catalogs.

Each tutorial and hand-written page present in both is paired with the English unit by unit (core.text.importing;
a page's units as Sphinx's gettext builder reads them, sphinxext.units), and what pairs becomes translations in
the catalogs `tutorials-site update-po` makes. A catalog's translations are kept unless OVERWRITE=1. The report names,
at the translated file's line, every unit not imported as it is, then what each file and the whole gave.
"""

import json
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from babel.messages.catalog import Catalog, Message

from ..core import languages, project, site_tree
from ..core.errors import Failed, SiteError
from ..core.text import catalogs, importing, sphinx_warnings, tutorial_text
from ..core.text.alignment import CODE, Piece, is_comment
from ..core.text.translate import check_page_translation, check_translation, link_targets, references_changed
from .catalogs import sphinx_gettext, templates_of

PAGE_SUFFIXES = (".rst", ".md", ".txt")  # a hand-written page's, or a gallery header's


@dataclass(frozen=True)
class _Planned:
    """One file's import, before any catalog is written: the report names it as SHOWN."""

    shown: str
    result: importing.Result
    po: Path
    template: Catalog


def _unit(text: str, kind: str) -> tutorial_text.Unit:
    return tutorial_text.Unit("comment" if is_comment(kind) else "paragraph", text, [0])


def script_checks(allowed: Mapping[str, set[str]]) -> tuple[importing.Check, importing.Check]:
    """A tutorial's translation is checked as the build checks its catalog (core.text.translate), ALLOWED: the
    localized link targets its language allows (translate.link_targets)."""
    return (lambda msgid, msgstr, kind: check_translation(_unit(msgid, kind), msgstr),
            lambda msgid, msgstr, kind: references_changed(_unit(msgid, kind), msgstr, allowed))


def _page_checks(source: str) -> tuple[importing.Check, importing.Check]:
    """A page's translation is checked as the build checks its catalog; a reST page's links and literals too."""
    def breaks(msgid: str, msgstr: str, kind: str) -> str | None:
        return check_page_translation(Message(msgid, locations=[(source, 0)]), msgstr)

    def elsewhere(msgid: str, msgstr: str, kind: str) -> str | None:
        return None if source.endswith(".md") else references_changed(_unit(msgid, kind), msgstr)
    return breaks, elsewhere


def _checkout(site: project.Project, given: str) -> Path:
    """The folder GIVEN names, refused unless it holds a translated copy of this site: one of its galleries'
    folders at least."""
    if not given.strip():
        raise SiteError("import-translation: FROM=DIR names the translated checkout to import from")
    folder = Path(given)
    if not folder.is_dir():
        raise SiteError(f"import-translation: {folder}: no such folder (FROM names a checkout of the translated "
                        "copy, in this site's layout)")
    if folder.resolve().is_relative_to(site.root.resolve()):
        what = "the project itself" if folder.resolve() == site.root.resolve() else "a folder inside the project"
        raise SiteError(f"import-translation: FROM={given}: {what}, not a translated copy of it: FROM names another "
                        "checkout (git worktree add ../translated, or a clone of the translation's repository)")
    folders = [g.examples_dir for g in site.galleries]
    if not any((folder / name).is_dir() for name in folders):
        raise SiteError(f"import-translation: {folder}: not a checkout of a translated copy of this site: it has none "
                        f"of the galleries' folders ({', '.join(folders)})")
    return folder


def _unreadable(path: Path, error: Exception) -> str:
    """Why a file cannot be read as a tutorial, as the report says it: its place and what is wrong."""
    if isinstance(error, SiteError):
        return str(error)
    return f"{path}: not UTF-8 text" if isinstance(error, UnicodeDecodeError) else f"{path}: {error}"


def _script(path: Path, lang: languages.Language) -> list[Piece] | str:
    """A script read as pieces (core.text.importing), or why it cannot be."""
    try:
        return importing.script_pieces(tutorial_text.parse(path), lang.spaced)
    except (tutorial_text.TutorialSyntaxError, UnicodeDecodeError, OSError) as error:
        return _unreadable(path, error)


def _within(path: Path, checkout: Path) -> bool:
    """Whether PATH, its links resolved, lies in CHECKOUT: a link out of it (to the builder's files) is never read."""
    return path.resolve().is_relative_to(checkout.resolve())


def pair_script(english: Path, translated: Path, shown: str, lang: languages.Language,
                allowed: Mapping[str, set[str]]) -> importing.Result:
    """What the script TRANSLATED gives the English script ENGLISH (SHOWN: the English as the report names it;
    ALLOWED: the localized link targets LANG allows, translate.link_targets). A file that cannot be read as a
    tutorial is skipped, and the result says why: the other files are still read."""
    pieces, copy = _script(english, languages.of("en")), _script(translated, lang)
    if isinstance(pieces, str):
        return importing.skipped([], pieces)
    if isinstance(copy, str):
        return importing.skipped(pieces, copy)
    return importing.pair_up(pieces, copy, shown, *script_checks(allowed), spaced=lang.spaced)


def _tutorials(site: project.Project, lang: languages.Language, checkout: Path) -> list[_Planned]:
    """The import of each tutorial the checkout has (a file it cannot read, skipped)."""
    planned = []
    allowed = link_targets(site, lang)
    for tutorial in site.tutorials:
        relative = tutorial.path.relative_to(site.root)
        translated = checkout / relative
        if not translated.is_file():
            continue
        if _within(translated, checkout):
            result = pair_script(tutorial.path, translated, relative.as_posix(), lang, allowed)
        else:
            result = importing.skipped(importing.script_pieces(tutorial_text.parse(tutorial.path)),
                                       f"{translated}: a link that leads out of FROM ({translated.resolve()}), "
                                       "never followed")
        planned.append(_Planned(str(translated), result, catalogs.tutorial_po(site, lang, tutorial),
                                catalogs.tutorial_template(tutorial.path, site.root)))
    return planned


def _page_files(site: project.Project, checkout: Path, skip: Collection[Path]) -> dict[PurePosixPath, Path]:
    """The site's pages and gallery headers the checkout has a copy of, by their path from the site's root."""
    generated = [PurePosixPath(g.gallery_dir) for g in site.galleries]
    found = {}
    for path in site_tree.files(site.root, skip):
        relative = PurePosixPath(path.relative_to(site.root).as_posix())
        if (path.suffix in PAGE_SUFFIXES and not any(relative.is_relative_to(g) for g in generated)
                and (checkout / relative).is_file() and _within(checkout / relative, checkout)):
            found[relative] = checkout / relative
    return found


def _pieces(units: Path, docname: str, locate: sphinx_warnings.Locate) -> tuple[list[Piece], list[str]]:
    """A page's pieces as sphinxext.units wrote them, at their authors' lines (LOCATE: a gallery index's text is its
    header's), and the files they come from (paths from the site's root)."""
    path = units / f"{docname}.json"
    if not path.is_file():
        return [], []
    pieces, sources = [], []
    for kind, text, source, line in json.loads(path.read_text(encoding="utf-8")):
        found = locate(source, line) if source else None
        pieces.append(Piece(kind, text, (found[1] or 0) if found else line))
        if found and found[0] not in sources:
            sources.append(found[0])
    return pieces, sources


def _page(docname: str, template: Catalog, english: list[Piece], translated: list[Piece], source: str,
          spaced: bool) -> importing.Result:
    """One page's import. What sphinx-gallery writes into a gallery index (its tutorials' titles, its own labels)
    is the same on both sides and in no template: it is left out of both."""
    generated = {p.text for p in english if p.kind != CODE and p.text not in template}
    english = [p for p in english if p.kind == CODE or p.text in template]
    translated = [p for p in translated if p.kind == CODE or p.text not in generated]
    return importing.pair_up(english, translated, docname, *_page_checks(source), spaced=spaced)


def _pages(site: project.Project, lang: languages.Language, checkout: Path, log: Path,
           skip: Collection[Path]) -> list[_Planned]:
    """The import of each page whose source (or gallery header) the checkout has a translated copy of."""
    files = _page_files(site, checkout, skip)
    if not files:
        return []
    planned = []
    galleries = {g.examples_dir: g.gallery_dir for g in site.galleries}
    with tempfile.TemporaryDirectory() as tmp:
        english_pot, english_src = sphinx_gettext(Path(tmp) / "en", site, tuple(skip), log)
        _, copy_src = sphinx_gettext(Path(tmp) / "copy", site, tuple(skip), log.with_name(f"{log.stem}-copy.log"),
                                     replaced=files)
        for docname, template in templates_of(english_pot, english_src, site).items():
            english, _ = _pieces(Path(tmp) / "en" / "units", docname,
                                 sphinx_warnings.locator(english_src, galleries, site.root))
            translated, sources = _pieces(Path(tmp) / "copy" / "units", docname,
                                          sphinx_warnings.locator(copy_src, galleries, site.root))
            mine = [source for source in sources if PurePosixPath(source) in files]
            if mine:
                result = _page(docname, template, english, translated, mine[0], lang.spaced)
                planned.append(_Planned(str(checkout / mine[0]), result, catalogs.page_po(site, lang, docname), template))
    return planned


def _write(planned: Sequence[_Planned], lang: languages.Language, overwrite: bool) -> list[importing.Applied]:
    """Every catalog merged and given its imports in memory first, then saved: an error leaves none half-done. A
    skipped file's catalog is left as it is."""
    read = [plan for plan in planned if not plan.result.skipped]
    merged = [catalogs.merged(plan.template, plan.po, lang) for plan in read]
    applied = {id(plan): importing.apply(catalog, plan.result.imported, overwrite) for catalog, plan in zip(merged, read)}
    for catalog, plan in zip(merged, read):
        plan.po.parent.mkdir(parents=True, exist_ok=True)
        catalogs.save(catalog, plan.po)
    return [applied.get(id(plan), importing.Applied(0, 0)) for plan in planned]


def summary(shown: str, result: importing.Result, applied: importing.Applied | None = None) -> str:
    """The report's line for a file (or for all: SHOWN names them): what it gave, a skipped one counted too."""
    left = result.units - result.certain - result.fuzzy
    kept = f", {applied.kept} kept as the catalog had them" if applied and applied.kept else ""
    as_is = f", {result.as_is} of them English in the translation too" if result.as_is else ""
    skipped = " skipped (it cannot be read as a tutorial):" if result.skipped else ""
    return (f"import-translation: {shown}:{skipped} {result.certain} imported, {result.fuzzy} fuzzy, {left} left in "
            f"English (of {result.units}{as_is}){kept}")


def import_translation(site: project.Project, langs: Sequence[languages.Language], folder: str, overwrite: bool,
                       log: Path, made: Collection[Path]) -> None:
    """`tutorials-site import-translation`: the checkout FOLDER names into the catalogs of the one language LANGS names."""
    translated = [lang for lang in langs if lang != site.languages.source]
    if len(langs) != 1 or len(translated) != 1:
        raise SiteError("import-translation: LANGUAGES names the one language the checkout is translated into (one "
                        f"run per language): one of {', '.join(lang.seg for lang in site.languages.translated)}")
    lang = translated[0]
    checkout = _checkout(site, folder)
    catalogs.check_layout(site)
    planned = _tutorials(site, lang, checkout)
    planned += _pages(site, lang, checkout, log, made)
    if not planned:
        raise Failed(f"import-translation: {checkout}: none of the site's tutorials or pages is there to import")
    applied = _write(planned, lang, overwrite)
    for plan in planned:
        if plan.result.skipped:
            print(f"{plan.result.skipped}: not imported: the file cannot be read as a tutorial")
        for finding in plan.result.findings:
            print(f"{plan.shown}:{finding.line}: {finding.text}")
    for plan, done in zip(planned, applied):
        print(summary(plan.shown, plan.result, done))
    skipped = sum(bool(plan.result.skipped) for plan in planned)
    print(summary(f"{len(planned)} file(s) into {lang.seg}{f' ({skipped} skipped)' if skipped else ''}",
                  importing.total([plan.result for plan in planned]),
                  importing.Applied(sum(a.written for a in applied), sum(a.kept for a in applied))))

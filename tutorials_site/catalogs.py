"""Gettext catalogs: where they live, reading them strictly, merging, and translation status.

    python -m tutorials_site.catalogs update-po   # extract every unit, merge into every catalog
    python -m tutorials_site.catalogs status      # translated / fuzzy / untranslated per catalog

Per language (locales/<code>/LC_MESSAGES/):
- <tutorial folder>/<tutorial>.po: the units of one tutorial script (tutorial_text);
- site.po: the hand-written pages, as Sphinx's gettext builder extracts them;
- sphinx.po: the labels of the theme, of our templates and of this package
  (sphinx-rtd-theme ships no Korean or Japanese catalog).

Babel reads, writes and merges them. A changed English unit becomes fuzzy (with
the previous English kept as `#| msgid`) or untranslated: both show English.
"""

import os
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import PoFileError, read_po, write_po

from . import languages, tutorial_text
from .layout import ROOT, page_for, tutorial_sources

LOCALES = ROOT / "locales"
SITE_DOMAINS = ("site", "sphinx")
_PO_LINE = re.compile(
    r'^(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+)?"(?:[^"\\]|\\.)*"\s*$'
    r"|^#.*$|^\s*$"
)


class CatalogError(Exception):
    """A catalog that cannot be used: the message names the file and line."""


def catalog_dir(lang):
    return LOCALES / lang.code / "LC_MESSAGES"


def tutorial_po(lang, src_dir, path):
    return catalog_dir(lang) / src_dir / (Path(path).stem + ".po")


def display_path(path):
    """A path as messages show it: relative to the repository when inside it."""
    path = Path(path)
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def load(path):
    """Read a PO file, failing with file:line on anything malformed (Babel alone accepts some)."""
    text = Path(path).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        if not _PO_LINE.match(line):
            raise CatalogError(f"{display_path(path)}:{number}: PO syntax error: {line.strip()[:60]!r}")
    try:
        with open(path, "rb") as f:
            return read_po(f, abort_invalid=True)
    except PoFileError as error:
        raise CatalogError(f"{display_path(path)}: {error}") from None


def save(catalog, path):
    """Write atomically: an interrupted update never leaves half a catalog."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False, suffix=".tmp") as f:
        write_po(f, catalog, width=79, include_previous=True, sort_output=False)
    os.replace(f.name, path)


def translations(catalog):
    """msgid -> msgstr for the entries that count: translated, and not fuzzy."""
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


def tutorial_template(path):
    template = Catalog(project="PyTorch Tutorials", fuzzy=False)
    for unit in tutorial_text.parse(path).units:
        comment = "code comment: plain text, no reST" if "comment" in unit.kind else f"reST {unit.kind}"
        location = (Path(path).relative_to(ROOT).as_posix(), unit.lineno)
        if unit.msgid in template:
            template[unit.msgid].locations.append(location)
        else:
            template.add(unit.msgid, locations=[location], auto_comments=[comment])
    return template


def check_layout():
    """Every catalog folder names a known language, every tutorial catalog an existing tutorial."""
    if not LOCALES.is_dir():
        return
    tutorials = {tutorial_po(languages.ALL[0], s, p).relative_to(catalog_dir(languages.ALL[0]))
                 for s, p in tutorial_sources()}
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


def merge(template, path, lang):
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


# --- site catalogs -------------------------------------------------------------------------------


def _sphinx_gettext(outdir):
    """Run Sphinx's gettext builder on the English pages (without executing anything)."""
    from .build import stage  # the same staging as the HTML build

    src, _ = stage(Path(outdir) / "build", languages.SOURCE)
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-c", str(ROOT), "-D", "plot_gallery=0",
         "-d", str(Path(outdir) / "doctrees"), str(src), str(Path(outdir) / "pot")],
        check=True, cwd=ROOT,
    )
    return Path(outdir) / "pot", src


def is_site_message(msgid, locations, tutorial_msgids):
    """Whether a message Sphinx extracted belongs in site.po (the tutorials have catalogs of their own)."""
    from .i18n import is_gallery_template  # sphinx-gallery's strings are translated as templates

    example_pages = {page_for(s, p) for s, p in tutorial_sources()}
    in_pages = {Path(f).with_suffix("").as_posix() for f, _ in locations}
    return not (
        in_pages <= example_pages
        or msgid in tutorial_msgids
        or is_gallery_template(msgid)
        or re.fullmatch(r":doc:`[^`]*`", msgid)
    )


def site_templates():
    tutorial_msgids = {u.msgid for _, p in tutorial_sources() for u in tutorial_text.parse(p).units}
    with tempfile.TemporaryDirectory() as tmp:
        pot, src = _sphinx_gettext(tmp)
        with open(pot / "site.pot", "rb") as f:
            extracted = read_po(f)
        site = Catalog(project="PyTorch Tutorials", fuzzy=False)
        for message in extracted:
            # Locations relative to the staged source tree: index.md, beginner/index.rst, ...
            locations = [(os.path.relpath(os.path.normpath(pot / file), src), line) for file, line in message.locations]
            if message.id and is_site_message(message.id, locations, tutorial_msgids):
                site.add(message.id, locations=locations, auto_comments=message.auto_comments)
    ui = Catalog(project="PyTorch Tutorials", fuzzy=False)
    theme_pot = Path(__import__("sphinx_rtd_theme").__file__).parent / "locale" / "sphinx.pot"
    with open(theme_pot, "rb") as f:
        for message in read_po(f):
            if message.id:
                ui.add(message.id, locations=[(f"sphinx_rtd_theme/{Path(file).name}", line)
                                              for file, line in message.locations])
    conf = runpy.run_path(str(ROOT / "conf.py"))
    for setting in ("project", "copyright"):  # shown on every page, translated by i18n.add_page_context
        ui.add(conf[setting], locations=[("conf.py", 0)], auto_comments=[f"conf.py: {setting}"])
    ours = [
        (Path(__file__).parent, "tutorials_site", [("**.py", "python")]),
        (ROOT / "_templates", "_templates", [("**.html", "jinja2.ext:babel_extract")]),
    ]
    for folder, label, method_map in ours:
        for filename, lineno, message, comments, _ in extract_from_dir(
            folder, method_map=method_map, keywords={"_": None, "N_": None}
        ):
            if message in ui:
                ui[message].locations.append((f"{label}/{filename}", lineno))
            else:
                ui.add(message, locations=[(f"{label}/{filename}", lineno)], auto_comments=comments)
    return {"site": site, "sphinx": ui}


# --- commands ------------------------------------------------------------------------------------


def update_po():
    check_layout()
    site = site_templates()
    for lang in languages.TRANSLATED:
        for src_dir, path in tutorial_sources():
            merge(tutorial_template(path), tutorial_po(lang, src_dir, path), lang)
        for domain, template in site.items():
            merge(template, catalog_dir(lang) / f"{domain}.po", lang)
        print(f"update-po: {lang.seg}: merged {len(list(tutorial_sources()))} tutorial catalog(s), "
              f"{', '.join(f'{d}.po' for d in site)}")


def counts(template, catalog, usable):
    """(translated, fuzzy, untranslated) of the template's messages in the catalog."""
    translated = fuzzy = untranslated = 0
    for message in template:
        if not message.id:
            continue
        found = catalog.get(message.id) if catalog is not None else None
        if found is not None and found.string and found.fuzzy:
            fuzzy += 1
        elif found is not None and found.string and usable(message.id, found.string):
            translated += 1
        else:
            untranslated += 1
    return translated, fuzzy, untranslated


def status(strict=False, langs=None):
    """Print one line per language and tutorial; returns False when anything is below 100%."""
    from .translate import SITE_CHECKS, check_translation

    langs = [lang for lang in (langs or languages.selected()) if lang is not languages.SOURCE]
    total = [0, 0, 0]
    for lang in langs:
        for src_dir, path in tutorial_sources():
            po = tutorial_po(lang, src_dir, path)
            catalog = load(po) if po.exists() else None
            units = {u.msgid: u for u in tutorial_text.parse(path).units}
            line = counts(tutorial_template(path), catalog,
                          lambda msgid, msgstr, units=units: check_translation(units[msgid], msgstr) is None)
            _print_status(lang.seg, f"{src_dir}/{path.stem}", line, total)
        for domain in SITE_DOMAINS:  # as of the last update-po: Sphinx extracts these, not this command
            po = catalog_dir(lang) / f"{domain}.po"
            catalog = load(po) if po.exists() else Catalog()

            def usable(msgid, msgstr, check=SITE_CHECKS[domain], catalog=catalog):
                return check(catalog[msgid], msgstr) is None

            _print_status(lang.seg, domain, counts(catalog, catalog, usable), total)
    complete = total[0] == sum(total)
    _print_status("total", "", total, None)
    return complete or not strict


def _print_status(seg, name, line, total):
    translated, fuzzy, untranslated = line
    all_ = sum(line)
    percent = 100 * translated // all_ if all_ else 100
    print(" ".join(filter(None, [seg, name, f"translated={translated} fuzzy={fuzzy} untranslated={untranslated}",
                                 f"{percent}%"])))
    if total is not None:
        for k in range(3):
            total[k] += line[k]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else "status"
    try:
        if command == "update-po":
            update_po()
        elif command == "status":
            if not status(strict=os.environ.get("STRICT", "") not in ("", "0")):
                sys.exit("i18n-status: STRICT=1 and some translations are below 100%")
        else:
            sys.exit(f"unknown command {command!r}: update-po or status")
    except (CatalogError, tutorial_text.TutorialSyntaxError) as error:
        sys.exit(f"error: {error}")


if __name__ == "__main__":
    main()

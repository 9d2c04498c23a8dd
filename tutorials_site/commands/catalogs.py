"""`make update-po` and `make i18n-status`.

update-po extracts every translatable unit (tutorials with core.tutorial_text,
the hand-written pages with Sphinx's gettext builder, the site's labels from
conf.py and its templates) and merges it into every language's catalogs; and
the engine's labels (its code's, its templates', the theme's) into the engine's
catalogs (core.assets).
"""

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from ..core import assets, catalogs, languages, project, tutorial_text
from ..core.layout import ROOT, BuildTree
from ..core.staging import stage
from ..core.translate import SITE_CHECKS, SiteCheck, link_targets, refusal


def _sphinx_gettext(outdir: Path | str) -> tuple[Path, Path]:
    """Run Sphinx's gettext builder on the English pages (without executing anything)."""
    src, _ = stage(BuildTree(Path(outdir) / "build"), languages.SOURCE)
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-c", str(ROOT), "-D", "plot_gallery=0",
         "-d", str(Path(outdir) / "doctrees"), str(src), str(Path(outdir) / "pot")],
        check=True, cwd=ROOT,
    )
    return Path(outdir) / "pot", src


def site_templates() -> dict[str, Catalog]:
    """The templates of the site catalogs: site (the hand-written pages) and sphinx (the labels)."""
    tutorial_msgids = {u.msgid for t in project.current().tutorials for u in tutorial_text.parse(t.path).units}
    with tempfile.TemporaryDirectory() as tmp:
        pot, src = _sphinx_gettext(tmp)
        with open(pot / "site.pot", "rb") as f:
            extracted = read_po(f)
        site = Catalog(project="PyTorch Tutorials", fuzzy=False)
        for message in extracted:
            # Locations relative to the staged source tree: index.md, beginner/index.rst, ...
            locations = [(os.path.relpath(os.path.normpath(pot / file), src), line) for file, line in message.locations]
            if message.id and isinstance(message.id, str) and catalogs.is_site_message(message.id, locations, tutorial_msgids):
                site.add(message.id, locations=locations, auto_comments=message.auto_comments)
    return {"site": site, "sphinx": site_labels()}


def _add_extracted(catalog: Catalog, folder: Path, label: str, method_map: list[tuple[str, str]]) -> None:
    """Add the labels (`_()`, `N_()`, `{% trans %}`) of the files under FOLDER, located as <label>/<file>."""
    for filename, lineno, text, comments, _ in extract_from_dir(
        folder, method_map=method_map, keywords={"_": None, "N_": None, "gettext": None}
    ):
        if text in catalog:
            catalog[text].locations.append((f"{label}/{filename}", lineno))
        else:
            catalog.add(text, locations=[(f"{label}/{filename}", lineno)], auto_comments=comments)


def site_labels() -> Catalog:
    """The template of the site's label catalog (sphinx.po): conf.py's names shown on every page, translated
    by the extension (i18n.add_page_context, meta), and the labels of the site's own templates."""
    ui = Catalog(project="PyTorch Tutorials", fuzzy=False)
    conf = project.current().conf
    for setting in ("project", "copyright", "tutorials_site_description"):
        if conf.get(setting):
            ui.add(conf[setting], locations=[("conf.py", 0)], auto_comments=[f"conf.py: {setting}"])
    for folder in conf.get("templates_path", []):
        if (ROOT / folder).is_dir():
            _add_extracted(ui, ROOT / folder, folder, [("**.html", "jinja2.ext:babel_extract")])
    return ui


def engine_labels() -> Catalog:
    """The template of the engine's label catalogs (core.assets): the labels of its code and templates, and
    sphinx-rtd-theme's, which that theme ships no Korean or Japanese translation of."""
    ui = Catalog(project="tutorials_site", fuzzy=False)
    import sphinx_rtd_theme  # only here: the theme is Sphinx's to load

    theme_pot = Path(sphinx_rtd_theme.__file__).parent / "locale" / "sphinx.pot"
    with open(theme_pot, "rb") as f:
        for message in read_po(f):
            if message.id:
                ui.add(message.id, locations=[(f"sphinx_rtd_theme/{Path(file).name}", line)
                                              for file, line in message.locations])
    _add_extracted(ui, assets.PACKAGE, assets.PACKAGE.name,
                   [("templates/**.html", "jinja2.ext:babel_extract"), ("**.py", "python")])
    return ui


def update_po() -> None:
    """`make update-po`: every language's catalogs merged with what the sources say now."""
    catalogs.check_layout()
    site = site_templates()
    engine = engine_labels()
    for lang in languages.TRANSLATED:
        for tutorial in project.current().tutorials:
            catalogs.merge(catalogs.tutorial_template(tutorial.path), catalogs.tutorial_po(lang, tutorial), lang)
        for domain, template in site.items():
            catalogs.merge(template, catalogs.catalog_dir(lang) / f"{domain}.po", lang)
        catalogs.merge(engine, assets.label_po(lang), lang)
        print(f"update-po: {lang.seg}: merged {len(project.current().tutorials)} tutorial catalog(s), "
              f"{', '.join(f'{d}.po' for d in site)}, the engine's labels ({catalogs.display_path(assets.label_po(lang))})")


def status(langs: Sequence[languages.Language], strict: bool = False) -> bool:
    """Print one line per language and tutorial; returns False when anything is below 100%."""
    langs = [lang for lang in langs if lang is not languages.SOURCE]
    total = [0, 0, 0]
    for lang in langs:
        for tutorial in project.current().tutorials:
            path = tutorial.path
            po = catalogs.tutorial_po(lang, tutorial)
            catalog = catalogs.load(po) if po.exists() else None
            units = {u.msgid: u for u in tutorial_text.parse(path).units}
            allowed = link_targets(lang)

            def usable(msgid: str, msgstr: str, units: dict[str, tutorial_text.Unit] = units,
                       allowed: dict[str, set[str]] = allowed) -> bool:
                return refusal(units[msgid], msgstr, allowed) is None

            line = catalogs.counts(catalogs.tutorial_template(path), catalog, usable)
            _print_status(lang.seg, tutorial.key, line, total)
        # As of the last update-po: Sphinx extracts these, not this command. The engine's labels count too.
        label_catalogs = [(domain, catalogs.catalog_dir(lang) / f"{domain}.po", SITE_CHECKS[domain])
                          for domain in catalogs.SITE_DOMAINS] + [("engine", assets.label_po(lang), SITE_CHECKS["sphinx"])]
        for name, po, check in label_catalogs:
            catalog = catalogs.load(po) if po.exists() else Catalog()

            def usable_site(msgid: str, msgstr: str, check: SiteCheck = check, catalog: Catalog = catalog) -> bool:
                return check(catalog[msgid], msgstr) is None

            _print_status(lang.seg, name, catalogs.counts(catalog, catalog, usable_site), total)
    complete = total[0] == sum(total)
    _print_status("total", "", total, None)
    return complete or not strict


def _print_status(seg: str, name: str, line: Sequence[int], total: list[int] | None) -> None:
    translated, fuzzy, untranslated = line
    all_ = sum(line)
    percent = 100 * translated // all_ if all_ else 100
    print(" ".join(filter(None, [seg, name, f"translated={translated} fuzzy={fuzzy} untranslated={untranslated}",
                                 f"{percent}%"])))
    if total is not None:
        for k in range(3):
            total[k] += line[k]

"""`tutorials-site update-po` and `make i18n-status`.

update-po extracts every translatable unit (tutorials with core.text.tutorial_text,
each hand-written page with Sphinx's gettext builder, the site's labels from
conf.py and its templates) and merges it into every translated language's
catalogs: one per tutorial, one per page, one of labels; and the engine's labels
(its code's, its templates', the theme's) into the engine's catalogs (core.assets).
"""

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from ..core import assets, languages, project
from ..core.errors import Failed
from ..core.files import shown
from ..core.layout import BuildTree, is_times_page
from ..core.site import build_values
from ..core.site.build_values import BuildValues
from ..core.site.staging import overlay, stage
from ..core.text import catalogs, sphinx_warnings, tutorial_text
from ..core.text.translate import SITE_CHECKS, SiteCheck, domain_of, link_targets, refusal


def sphinx_gettext(outdir: Path, site: project.Project, skip: Sequence[Path], log: Path,
                   replaced: Mapping[PurePosixPath, Path] | None = None) -> tuple[Path, Path]:
    """Run Sphinx's gettext builder on the source language's pages (without executing anything): one template
    per page (gettext_compact off), in OUTDIR/pot/<docname>.pot, and each page's pieces (sphinxext.units) in
    OUTDIR/units/<docname>.json. REPLACED: pages read from other files (a translated copy's), by their path from the
    site's root. What it prints goes to LOG (the build tells the pages' warnings at their authors' lines); a
    failure says where to read it. Returns (the templates' folder, the staged tree)."""
    tree = BuildTree(outdir / "build")
    src, _ = stage(tree, site, site.languages.source, skip)
    if replaced:
        overlay(tree, site, replaced, skip)
    # From the staged tree, as Sphinx runs at a site's root; the engine is found where this one is.
    path = os.pathsep.join(filter(None, [str(assets.PACKAGE.parent), os.environ.get("PYTHONPATH")]))
    log.parent.mkdir(parents=True, exist_ok=True)
    values = outdir / build_values.FILE
    BuildValues(root=str(site.root), units=str(outdir / "units")).write(values)
    with open(log, "w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-D", "plot_gallery=0", "-D", "gettext_compact=0",
             "-D", f"{build_values.SETTING}={values}", "-d", str(outdir / "doctrees"),
             str(src), str(outdir / "pot")],
            cwd=src, env={**os.environ, "PYTHONPATH": path}, stdout=out, stderr=subprocess.STDOUT,
        )
    if done.returncode:
        raise Failed(f"update-po: Sphinx's gettext builder failed (exit status {done.returncode}); its log: {log}")
    return outdir / "pot", src


def page_templates(site: project.Project, log: Path, skip: Sequence[Path] = ()) -> dict[str, Catalog]:
    """The template of each hand-written page's catalog (and each gallery index's), by docname."""
    with tempfile.TemporaryDirectory() as tmp:
        return templates_of(*sphinx_gettext(Path(tmp), site, skip, log), site)


def templates_of(pot: Path, src: Path, site: project.Project) -> dict[str, Catalog]:
    """The page templates of a gettext run (sphinx_gettext: its templates' folder and staged tree): what Sphinx's
    gettext builder extracted of each page, less what is not the page's to translate (catalogs.is_page_message)."""
    tutorial_msgids = {u.msgid for t in site.tutorials for u in tutorial_text.parse(t.path).units}
    templates = {}
    # Where each message's author wrote it: a gallery index's text in its header file, a page's in the page.
    locate = sphinx_warnings.locator(src, {g.examples_dir: g.gallery_dir for g in site.galleries}, site.root)
    for path in sorted(pot.rglob("*.pot")):
        docname = path.relative_to(pot).with_suffix("").as_posix()
        if site.tutorial_of_page(docname) is not None or docname == catalogs.LABELS or is_times_page(docname):
            continue  # a tutorial's page (its script's catalog translates it), the templates' (site_labels), or
            # sphinx-gallery's timings
        with open(path, "rb") as f:
            extracted = read_po(f)
        template = Catalog(project=site.conf.get("project"), fuzzy=False)
        for message in extracted:
            staged = [(str(Path(os.path.normpath(pot / file))), line) for file, line in message.locations]
            locations = [(str(found[0]), found[1] or 0) if (found := locate(file, line)) else
                         (os.path.relpath(file, src), line) for file, line in staged]
            pair = catalogs.singular(message)
            if pair and pair[0] and catalogs.is_page_message(pair[0], tutorial_msgids):
                template.add(pair[0], locations=locations, auto_comments=message.auto_comments)
        if len(template):
            templates[docname] = template
    return templates


def _add_extracted(catalog: Catalog, folder: Path, label: str, method_map: list[tuple[str, str]]) -> None:
    """Add the labels (`_()`, `N_()`, `{% trans %}`) of the files under FOLDER, located as <label>/<file>."""
    for filename, lineno, text, comments, _ in extract_from_dir(
        folder, method_map=method_map, keywords={"_": None, "N_": None, "gettext": None}
    ):
        if text in catalog:
            catalog[text].locations.append((f"{label}/{filename}", lineno))
        else:
            catalog.add(text, locations=[(f"{label}/{filename}", lineno)], auto_comments=comments)


def site_labels(site: project.Project) -> Catalog:
    """The template of the site's label catalog (sphinx.po): conf.py's names shown on every page, translated
    by the extension (i18n.add_page_context, meta), and the labels of the site's own templates."""
    conf = site.conf
    ui = Catalog(project=str(conf.get("project", "")), fuzzy=False)
    for setting in ("project", "html_title", "copyright", "tutorials_site_description"):
        if conf.get(setting):
            ui.add(conf[setting], locations=[("conf.py", 0)], auto_comments=[f"conf.py: {setting}"])
    for folder in conf.get("templates_path", []):
        if (site.root / folder).is_dir():
            _add_extracted(ui, site.root / folder, folder, [("**.html", "jinja2.ext:babel_extract")])
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


def update_po(site: project.Project, log: Path, made: Mapping[Path, str] | None = None) -> None:
    """`tutorials-site update-po`: every translated language's catalogs merged with what the sources say now.
    MADE: the folders builds make (resolved, with what they are), which no gallery folder may overlap and the
    staged tree leaves out."""
    site.refuse_overlaps(made or {})
    catalogs.check_layout(site)
    pages = page_templates(site, log, tuple(made or ()))
    labels = site_labels(site)
    for lang in site.languages.translated:
        for tutorial in site.tutorials:
            catalogs.merge(catalogs.tutorial_template(tutorial.path, site.root), catalogs.tutorial_po(site, lang, tutorial),
                           lang)
        for docname, template in pages.items():
            catalogs.merge(template, catalogs.page_po(site, lang, docname), lang)
        catalogs.merge(labels, catalogs.catalog_dir(site, lang) / f"{catalogs.LABELS}.po", lang)
        print(f"update-po: {lang.seg}: merged {len(site.tutorials)} tutorial catalog(s), {len(pages)} page "
              f"catalog(s), {catalogs.LABELS}.po")
        for name, po in catalogs.site_catalogs(site, lang).items():
            if name != catalogs.LABELS and name not in pages:
                print(f"update-po: {lang.seg}: {shown(po)}: no page {name} any more (its messages "
                      "are no longer used); delete the catalog if the page is gone")


def update_engine_labels() -> None:
    """The engine's own label catalogs (core.assets) merged with what its code and templates say: its
    maintainers' step, in a checkout of the engine (`python -m tutorials_site.commands.catalogs`)."""
    engine = engine_labels()
    for lang in languages.TRANSLATED:  # the languages the engine ships its labels in
        catalogs.merge(engine, assets.label_po(lang), lang)
    print(f"update-po: the engine's labels: {', '.join(lang.seg for lang in languages.TRANSLATED)} "
          f"({shown(assets.label_po(languages.TRANSLATED[0]).parents[2])})")


def status(site: project.Project, langs: Sequence[languages.Language], strict: bool = False) -> bool:
    """Print one line per language and catalog; returns False when anything is below 100%."""
    langs = [lang for lang in langs if lang != site.languages.source]
    total = [0, 0, 0]
    for lang in langs:
        allowed = link_targets(site, lang)
        for tutorial in site.tutorials:
            po = catalogs.tutorial_po(site, lang, tutorial)
            catalog = catalogs.load(po) if po.exists() else None
            units = {u.msgid: u for u in tutorial_text.parse(tutorial.path).units}

            def usable(msgid: str, msgstr: str, units: dict[str, tutorial_text.Unit] = units,
                       allowed: dict[str, set[str]] = allowed) -> bool:
                return refusal(units[msgid], msgstr, allowed) is None

            line = catalogs.counts(catalogs.tutorial_template(tutorial.path, site.root), catalog, usable)
            _print_status(lang.seg, tutorial.key, line, total)
        # As of the last update-po: Sphinx extracts these, not this command. The engine's labels count too.
        label_catalogs = [(name, po, SITE_CHECKS[domain_of(name)]) for name, po in catalogs.site_catalogs(site, lang).items()]
        if assets.label_po(lang).exists():
            label_catalogs.append(("engine", assets.label_po(lang), SITE_CHECKS["sphinx"]))
        for name, po, check in label_catalogs:
            catalog = catalogs.load(po)

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


if __name__ == "__main__":
    update_engine_labels()

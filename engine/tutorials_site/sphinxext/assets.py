"""The engine's templates, static files and label translations, registered by the extension itself
(core.assets says where they are): a site whose conf.py names the extension gets them all, with no
`_templates/` and no catalogs of its own.

- The engine's template folders come after the site's `templates_path` (the site's templates win), its
  static folder before the site's `html_static_path` (a site's file of the same name is copied over it).
- sphinx_rtd_theme gets the engine's overrides of its templates (the flyout lists the languages and
  versions); any other theme gets the same lists at the top of each page's body, which every theme shows.
- The labels' catalog of the build's language is compiled into the build's doctrees folder (never into
  the package) and added to Sphinx's `sphinx` catalog, which templates and the package's code read: the
  site's catalogs win, then the engine's, then Sphinx's own (whose words of the theme the engine's
  translations were made to replace).
"""

import io
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util.typing import ExtensionMetadata

from .. import __version__
from .. import sphinx_gallery_build as sg
from ..core import assets, languages
from ..core.text import translate
from .head import add_to_head

PARTS_STYLESHEET = "tutorials-parts.css"  # the engine's parts, with any theme
THEME_STYLESHEETS = {"sphinx_rtd_theme": "tutorials.css"}  # the engine's look on top of a theme it knows
# The folder (under _static/) of a theme's stylesheets whose every font the engine's stylesheet replaces: their
# @font-face rules are dropped from the output, and with them the only references to the theme's font files.
REPLACED_FONTS = {"sphinx_rtd_theme": "css"}


def compiled_labels(doctreedir: Path, language: str) -> Path | None:
    """The folder holding the engine's labels compiled for LANGUAGE (<doctreedir>/tutorials_site/locale);
    None where the engine has no catalog of it. A refused label is a CatalogError, as for the site's."""
    lang = languages.BY_CODE.get(language)
    po = assets.label_po(lang) if lang is not None else None
    if po is None or not po.is_file():
        return None
    catalog, _ = translate.usable_site_catalog("sphinx", po)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    locale = doctreedir / "tutorials_site" / "locale"
    mo = locale / language / "LC_MESSAGES" / "sphinx.mo"
    mo.parent.mkdir(parents=True, exist_ok=True)
    if not mo.is_file() or mo.read_bytes() != buffer.getvalue():
        mo.write_bytes(buffer.getvalue())
    return locale


def register(app: Sphinx, config: Config) -> None:
    """Add the engine's template and static folders to the site's, and its labels to Sphinx's (config-inited)."""
    theme = assets.theme_templates(config.html_theme)
    config.templates_path = [*config.templates_path, str(assets.COMMON_TEMPLATES), *([str(theme)] if theme else [])]
    config.html_static_path = [str(assets.STATIC), *config.html_static_path]
    if config.html_theme in THEME_STYLESHEETS:
        app.add_css_file(THEME_STYLESHEETS[config.html_theme], priority=800)
    locale = compiled_labels(Path(app.doctreedir), config.language)
    if locale is not None:
        sg.add_label_catalog(app, locale)


def add_page_parts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                   doctree: nodes.document | None) -> None:
    """With a theme the engine has no overrides of, put the language and version lists at the top of the
    page's body, and the head's additions into its head (html-page-context, after the parts that fill them).
    With sphinx_rtd_theme, its footer's "Built with Sphinx" becomes one translatable sentence
    (templates/sphinx_rtd_theme/footer.html), where conf.py's html_show_sphinx is on."""
    if assets.theme_templates(app.config.html_theme) is not None:
        context["tutorials_built_with"] = context.get("show_sphinx", False)
        context["show_sphinx"] = False  # the theme's three fragments, translated apart
        return
    add_to_head(context, sg.render_template(app, "tutorials-head.html", context))
    if "body" in context:  # a page with text: not the search page nor the index
        context["body"] = sg.render_template(app, "tutorials-switchers.html", context) + context["body"]


def drop_unused_fonts(app: Sphinx, exception: Exception | None) -> None:
    """Remove from the output the font files no page can load (build-finished, after Sphinx copied the static
    files): 6 MB per language with sphinx_rtd_theme, whose pages the engine's stylesheet sets in system fonts."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir, "_static")
    folder = REPLACED_FONTS.get(app.config.html_theme)
    for sheet in sorted((static / folder).glob("*.css")) if folder else []:
        css = sheet.read_text(encoding="utf-8")
        if assets.without_font_faces(css) != css:
            sheet.write_text(assets.without_font_faces(css), encoding="utf-8")
    removed = assets.unused_fonts(static)
    for font in removed:
        font.unlink()
    emptied = {parent for font in removed for parent in font.parents if parent.is_relative_to(static) and parent != static}
    for parent in sorted(emptied, key=lambda path: len(path.parts), reverse=True):  # the deepest first
        if not any(parent.iterdir()):
            parent.rmdir()


def setup(app: Sphinx) -> ExtensionMetadata:
    """Link the engine's stylesheet from every page and register the folders and the catalog when the
    configuration is read."""
    app.add_css_file(PARTS_STYLESHEET, priority=800)  # where conf.py's html_css_files go: after the theme's, before the site's
    app.connect("config-inited", register)
    app.connect("html-page-context", add_page_parts, priority=900)
    app.connect("build-finished", drop_unused_fonts)
    # It edits the configuration once, in the main process, each page's context only, and the output at the end.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

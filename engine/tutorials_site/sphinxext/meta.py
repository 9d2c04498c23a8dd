"""What search engines and link previews read of a page: its description and Open Graph tags.

A page's description is its first paragraph of prose, shortened
(core.site.summaries); a page without one (search, index) gets the site's (conf.py's
`tutorials_site_description`, else its project name). Tags
that need an absolute URL (og:url, og:image) are left out where the site's
address (`tutorials_site_url`) is not set.
"""

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation

from .. import __version__
from .. import sphinx_gallery_build as sg
from ..core.site.summaries import plain_text, site_description, summary
from ..core.site.versions import folder_url, published_url
from ..core.sphinx_gallery_formats import thumbnail_path
from ..sphinx_gallery_build import ExtensionMetadata
from .gallery import example_of
from .head import add_to_head, has_meta, meta, page_language
from .i18n import site_languages

_ = get_translation("sphinx")
OPEN_GRAPH_EXTENSION = "sphinxext.opengraph"  # a site using it gets its Open Graph tags, not a second set of ours
OG_LOCALES = {"en": "en_US", "ko": "ko_KR", "ja": "ja_JP", "zh_CN": "zh_CN"}
# Pages whose title their template sets (Sphinx's genindex.html, search.html), after this runs.
TEMPLATE_TITLES = {"genindex.html": "Index", "search.html": "Search"}


def first_paragraph(doctree: nodes.document) -> str | None:
    """The text of the first paragraph standing in a section: not a banner, a note or the provenance line."""
    for paragraph in doctree.findall(nodes.paragraph):
        if isinstance(paragraph.parent, (nodes.section, nodes.document)) and paragraph.astext().strip():
            return paragraph.astext()
    return None


def thumbnail(app: Sphinx, pagename: str, doctree: nodes.document | None) -> str | None:
    """The file name in _images/ of a tutorial's thumbnail; None when the tutorial draws no figure
    (its thumbnail is then sphinx-gallery's placeholder)."""
    tutorial = example_of(app.config, pagename)
    if tutorial is None or doctree is None or not sg.has_figures(doctree):
        return None
    return sg.built_image(app.env, thumbnail_path(pagename.rpartition("/")[0], tutorial.path.stem))


def page_title(context: dict[str, Any], templatename: str) -> str:
    """The page's title as plain text, where its template sets it too."""
    if templatename in TEMPLATE_TITLES:
        return str(_(TEMPLATE_TITLES[templatename]))
    return plain_text(context.get("title") or "")


def add_page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                     doctree: nodes.document | None) -> None:
    """Add the page's description and Open Graph tags to its metatags (html-page-context)."""
    lang = page_language(app.config)
    paragraph = first_paragraph(doctree) if doctree is not None else None
    site = site_description(app.config.tutorials_site_description, app.config.project)
    description = summary(paragraph, lang.code) if paragraph else str(_(site))
    project = str(_(app.config.project))
    tutorial = example_of(app.config, pagename) is not None
    tags = [("name", "description", description),
            ("property", "og:title", page_title(context, templatename) or project),
            ("property", "og:description", description),
            ("property", "og:type", "article" if tutorial else "website"),
            ("property", "og:site_name", project),
            ("property", "og:locale", OG_LOCALES.get(lang.code, lang.code))]
    tags += [("property", "og:locale:alternate", OG_LOCALES.get(other.code, other.code))
             for other in site_languages(app) if other is not lang]
    site_url = app.config.tutorials_site_url
    if site_url:
        tags.append(("property", "og:url", published_url(site_url, app.config.version, lang.seg, f"{pagename}.html")))
        image = thumbnail(app, pagename, doctree)
        if image:
            # In this version's own folder, where the file surely is.
            tags.append(("property", "og:image", folder_url(site_url, app.config.version, lang.seg,
                                                              f"{app.builder.imagedir}/{image}")))
    if OPEN_GRAPH_EXTENSION in getattr(app, "extensions", {}):
        tags = [tag for tag in tags if not tag[1].startswith("og:")]  # the site's own extension writes those
    if has_meta(context, "description"):
        tags = [tag for tag in tags if tag[1] != "description"]  # the page's own (`.. meta::`, an extension's)
    add_to_head(context, *(meta(kind, name, value) for kind, name, value in tags))


def setup(app: Sphinx) -> ExtensionMetadata:
    """Connect the handler (its setting, tutorials_site_description, translated in the site's catalog like its
    project name, is registered with the others: core.config_values)."""
    app.connect("html-page-context", add_page_context)
    # Nothing at reading; at writing, it reads the environment (whole in every writing process) and edits
    # only its page's context.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

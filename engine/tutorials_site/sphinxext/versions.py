"""The pages' view of the versions: the current one, the published list, the banners' messages.

The build command passes the published list explicitly (`tutorials_versions`,
the entries of PAGES/versions.json, in core.site.build_values' record), for readers who open pages from
disk; served pages read versions.json at the site root instead.
"""

import json
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.locale import get_translation

from .. import __version__
from ..core.site.versions import as_built, is_release, published_url
from ..sphinx_gallery_build import ExtensionMetadata
from .head import add_to_head, meta, page_language

_ = get_translation("sphinx")


def add_page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                     doctree: nodes.document | None) -> None:
    """Give a page's template its version, the versions known, and the banners' messages (html-page-context)."""
    name = app.config.version
    seg = page_language(app.config).seg
    depth = pagename.count("/")
    known = as_built(app.config.tutorials_versions, name)
    context["tutorials_version"] = name
    context["embedded_versions"] = known.to_dict()  # the template writes it as JSON
    context["site_root"] = "../" * (depth + 2)  # <root>/<version>/<lang>/<page>.html
    context["page_file"] = f"{pagename}.html"
    context["page_lang"] = seg
    context["version_messages"] = json.dumps({
        "older": _("You are reading the documentation for version {current}. The stable version is {stable}."),
        "unreleased": _("You are reading an unreleased version ({current}). The stable version is {stable}."),
        "go": _("Read this page in the stable version."),
    }, ensure_ascii=False)
    if not is_release(name):
        add_to_head(context, meta("name", "robots", "noindex"))


def published_base(config: Config) -> str:
    """Where the pages of this build are published: the folder of its version (stable/ for a release) and
    language under the site's address (tutorials_site_url); "" where that is not set."""
    site_url = config.tutorials_site_url
    return published_url(site_url, config.version, page_language(config).seg, "") if site_url else ""


# Other extensions' settings that name where the pages are published (sphinxext-opengraph's og:url,
# sphinx-sitemap's sitemap, through html_baseurl or their own), given the folder the engine publishes them in.
PUBLISHED_AT = ("html_baseurl", "ogp_site_url")


def set_published_base(app: Sphinx, config: Config) -> None:
    """Name where the pages are published, for Sphinx and the extensions that write addresses (config-inited):
    html_baseurl is the folder of this version and language, so Sphinx writes each page's one canonical link
    there (the address its hreflang alternates, og:url and the sitemaps name too), and sphinx-sitemap and
    sphinxext-opengraph, where the site uses them, write the addresses the published tree has."""
    base = published_base(config)
    if base:
        for name in PUBLISHED_AT:
            if name in config:
                setattr(config, name, base)


def setup(app: Sphinx) -> ExtensionMetadata:
    """Connect the handlers (their settings, tutorials_site_url and tutorials_versions, are registered with the
    others: core.config_values)."""
    app.connect("config-inited", set_published_base, priority=900)  # after the site's and others' settings
    app.connect("html-page-context", add_page_context)
    # Nothing at reading; at writing, it edits only its page's context; the configuration, once, in the main
    # process.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

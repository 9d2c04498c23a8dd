"""The pages' view of the versions: the current one, the published list, the banners' messages.

The build command passes the published list explicitly (`tutorials_versions`,
the entries of PAGES/versions.json, in core.site.build_values' record), for readers who open pages from
disk; served pages read versions.json at the site root instead.
"""

import json
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util.typing import ExtensionMetadata

from .. import __version__
from ..core.site.versions import as_built, canonical_url, is_release
from .head import add_to_head, link, meta, page_language

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
    site_url = app.config.tutorials_site_url
    if site_url:
        canonical = canonical_url(site_url, seg, f"{pagename}.html")
        add_to_head(context, link("canonical", canonical))
    if not is_release(name):
        add_to_head(context, meta("name", "robots", "noindex"))


def setup(app: Sphinx) -> ExtensionMetadata:
    """Connect the handler (its settings, tutorials_site_url and tutorials_versions, are registered with the
    others: core.config_values)."""
    app.connect("html-page-context", add_page_context)
    # Nothing at reading; at writing, it edits only its page's context.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx side of the languages: every string on a page in the page's language.

- sphinx-gallery's strings, which it writes in English into the pages it
  generates, are translated as templates with placeholders (file names, times);
- the project name, the copyright line and the language switcher's entries come
  from the `sphinx` catalog; `hreflang` alternates go in every page's head;
- a page with passages still in English (a tutorial's untranslated units, or
  site messages Sphinx found no translation for) gets a banner in its language
  with a link to the English page; with STRICT=1 that is a build error.
"""

import json
from pathlib import Path

from docutils import nodes
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.nodes import extract_messages

from ..core import languages
from ..core.catalogs import is_site_message
from ..core.gallery_strings import match_gallery_template
from .gallery import example_of

_ = get_translation("sphinx")
logger = logging.getLogger(__name__)


def translate_gallery_strings(app, doctree, docname):
    if app.config.language == languages.SOURCE.code:
        return
    for text in list(doctree.findall(nodes.Text)):
        found = match_gallery_template(text.astext())
        if found:
            template, values = found
            raw = text.astext()
            lead, trail = raw[: len(raw) - len(raw.lstrip())], raw[len(raw.rstrip()):]
            text.parent.replace(text, nodes.Text(lead + _(template).format(**values) + trail))


# --- languages of the site ------------------------------------------------------------------------


def site_languages(app):
    """The languages this build links to: LANGUAGES, passed by the build driver."""
    segs = app.config.tutorials_languages.split() or [lang.seg for lang in languages.ALL]
    return [languages.BY_SEG[seg] for seg in segs]


def page_url(from_page, seg, pagename):
    """Relative URL from <lang>/<from_page>.html to <seg>/<pagename>.html (works from disk too)."""
    return "../" * (from_page.count("/") + 1) + f"{seg}/{pagename}.html"


def add_page_context(app, pagename, templatename, context, doctree):
    current = languages.BY_CODE[app.config.language]
    entries = []
    for lang in site_languages(app):
        url = page_url(pagename, lang.seg, pagename)
        entries.append({"seg": lang.seg, "name": lang.name, "hreflang": lang.hreflang, "url": url,
                        "current": lang is current})
        if lang is not current:
            context["metatags"] = context.get("metatags", "") + f'\n<link rel="alternate" hreflang="{lang.hreflang}" href="{url}">'
    context["site_languages"] = entries
    context["current_language"] = current
    context["project"] = context["docstitle"] = _(app.config.project)
    context["copyright"] = _(app.config.copyright)


# --- passages still in English ---------------------------------------------------------------------


def translation_status_path(app, docname):
    """Written by the build driver beside each generated tutorial: {"total": N, "english": N}."""
    example = example_of(app.config, app.srcdir, docname)
    if example is None:
        return None
    path = Path(app.srcdir, example[0], example[1] + ".i18n.json")
    return path if path.exists() else None


def english_passages(app, doctree, docname):
    """How many passages of the page are shown in English, and which messages (site pages)."""
    status = translation_status_path(app, docname)
    if status is not None:
        app.env.note_dependency(str(status))
        return json.loads(status.read_text())["english"], []
    missing = [
        msg for node, msg in extract_messages(doctree)
        if not node.get("translated") and is_site_message(msg, [(docname + ".rst", 0)], set())
    ]
    return len(missing), missing


def mark_untranslated(app, doctree):
    docname = app.env.docname
    if app.config.language == languages.SOURCE.code:
        return
    count, messages = english_passages(app, doctree, docname)
    if not count:
        return
    if app.config.tutorials_strict:
        shown = "; ".join(repr(m[:40]) for m in messages[:3])
        logger.warning("%d passage(s) not translated into %s, shown in English%s", count,
                       app.config.language, f": {shown}" if shown else "", location=docname)
    banner = nodes.warning(classes=["translation-incomplete"])
    paragraph = nodes.paragraph()
    paragraph += nodes.Text(_("{count} passage(s) of this page are not translated yet and are shown in English.")
                            .format(count=count) + " ")
    english = page_url(docname, languages.SOURCE.seg, docname)
    paragraph += nodes.reference("", _("Read the English page."), refuri=english, classes=["english-page"])
    banner += paragraph
    section = next(iter(doctree.findall(nodes.section)), None)
    parent = section if section is not None else doctree
    title_at = next((i for i, child in enumerate(parent.children) if isinstance(child, nodes.title)), -1)
    parent.insert(title_at + 1, banner)


def setup(app):
    app.add_config_value("tutorials_languages", "", "html", types=[str])
    app.add_config_value("tutorials_strict", False, "env", types=[bool])  # re-read: warnings come from reading
    app.connect("doctree-read", mark_untranslated)
    app.connect("doctree-resolved", translate_gallery_strings)
    app.connect("html-page-context", add_page_context)

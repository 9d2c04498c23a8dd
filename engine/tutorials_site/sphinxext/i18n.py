"""Sphinx side of the languages: every string on a page in the page's language.

- sphinx-gallery's strings, which it writes in English into the pages it
  generates, are translated as templates with placeholders (file names, times);
- the project name, the copyright line and the language switcher's entries come
  from the `sphinx` catalog; `hreflang` alternates go in every page's head;
- labels other packages' scripts write in English (sphinx-copybutton's, the
  theme's menu buttons) are set in the page's language by static/labels.js;
  sphinx-gallery's figures get an alt text in it, and its thumbnails' tooltips
  lose the reST it leaves in them;
- a page with passages still in English (a tutorial's untranslated units, or
  site messages Sphinx found no translation for) gets a banner in its language
  with a link to the English page; with STRICT=1 that is a build error.
"""

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeAlias, TypedDict

from docutils import frontend, nodes, utils
from docutils.parsers.rst import Parser, directives, roles
from docutils.parsers.rst import languages as rst_languages
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.locale import get_translation
from sphinx.util import logging

from .. import __version__
from .. import sphinx_gallery_build as sg
from ..core import assets, languages
from ..core.layout import is_times_page
from ..core.site.staging import TranslationStatus
from ..core.site.versions import published_url
from ..core.text.catalogs import is_page_message
from ..core.text.gallery_strings import N_, match_gallery_template
from ..core.text.tutorial_text import is_wide, join_wide_breaks
from ..sphinx_gallery_build import ExtensionMetadata
from .gallery import example_of
from .head import add_to_head, link, page_language

_ = get_translation("sphinx")
logger = logging.getLogger(__name__)
ENGLISH = "en"  # the language sphinx-gallery and the engine write their own strings in
_QUIET = utils.Reporter("", utils.Reporter.SEVERE_LEVEL + 1, utils.Reporter.SEVERE_LEVEL + 1)  # a lookup's reports
# Sphinx's own label (its headings' links), which its catalogs lack in Korean and Japanese: listed
# here, `tutorials-site update-po` keeps it in the engine's label catalogs (sphinxext.assets), which Sphinx reads too.
SPHINX_FALLBACKS = (N_("Link to this heading"),)


def translate_gallery_strings(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Put the English strings sphinx-gallery writes into its pages (times, download links) in the page's
    language, their placeholders filled as they were (doctree-resolved)."""
    if app.config.language == ENGLISH:
        return
    spaced = page_language(app.config).spaced
    for text in list(doctree.findall(nodes.Text)):
        found = match_gallery_template(text.astext())
        if found:
            template, values = found
            raw = text.astext()
            lead, trail = raw[: len(raw) - len(raw.lstrip())], raw[len(raw.rstrip()):]
            translated = _(template).format(**values)
            if not spaced and translated and is_wide(translated[0]) and unicodedata.category(translated[0]).startswith("P"):
                lead = ""  # full-width punctuation carries its own space: "时间：（…）", not "时间： （…）"
            text.parent.replace(text, nodes.Text(lead + translated + trail))


def join_wide_line_breaks(app: Sphinx, doctree: nodes.document) -> None:
    """In a language written without spaces, the line breaks a translated script has between two of its
    characters (tutorial_text.wrap) are no space: remove them from the page's prose, as from its notebook."""
    if page_language(app.config).spaced:
        return
    for text in list(doctree.findall(nodes.Text)):
        # FixedTextElement: literal blocks, raw and comments among them
        if any(isinstance(node, (nodes.FixedTextElement, nodes.literal)) for node in _ancestors(text)):
            continue
        joined = join_wide_breaks(text.astext())
        if joined != text.astext():
            text.parent.replace(text, nodes.Text(joined))


def _ancestors(node: nodes.Node) -> Iterator[nodes.Element]:
    """NODE's parent, its parent's, and so on up to the document."""
    while node.parent is not None:
        node = node.parent
        yield node


def label_figures(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """sphinx-gallery makes a figure's alt text from its file name when the figure has no title: say what it is."""
    section = doctree.next_node(nodes.section)
    title = section.next_node(nodes.title) if section is not None else None
    for image in list(sg.figure_nodes(doctree)):
        if title is None or not sg.has_default_alt(image):
            continue
        sg.set_alt(image, _("Figure {number} of {title}").format(number=sg.figure_number(image), title=title.astext()))


def clean_thumbnail_tooltips(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    r"""sphinx-gallery's thumbnails' tooltips are a tutorial's intro with some of its reST removed; remove
    the rest: escapes (`\ ` before a particle), and a reference without a title, shown as its target's title."""
    for raw in list(doctree.findall(nodes.raw)):
        if sg.is_thumbnail(raw.astext()):
            cleaned = sg.clean_tooltips(raw.astext(), lambda label: sg.label_title(app.env, label))
            raw.replace_self(nodes.raw("", cleaned, format="html"))


# A table of labels: a label by its key, or a table of them by a script's name.
Labels: TypeAlias = Mapping[str, "str | Labels"]
# The labels static/labels.js sets (other packages' scripts write them in English).
SCRIPT_LABELS: Labels = {
    "copybutton": {"copy": N_("Copy"), "copy_to_clipboard": N_("Copy to clipboard"),
                   "copy_success": N_("Copied!"), "copy_failure": N_("Failed to copy")},
    "expand": N_("Open/close menu"),
}


def script_labels(app: Sphinx) -> None:
    """Hand SCRIPT_LABELS, in this build's language, to labels.js: as data (JSON in an attribute Sphinx escapes)."""
    if app.config.language == ENGLISH:
        return

    def translated(labels: Labels) -> dict[str, Any]:
        return {key: _(value) if isinstance(value, str) else translated(value) for key, value in labels.items()}

    # After copybutton.js, whose table of labels it completes.
    app.add_js_file("labels.js", priority=501,
                    **{"data-labels": json.dumps(translated(SCRIPT_LABELS), ensure_ascii=False)})


def css_string(text: str) -> str:
    """`text` as a quoted CSS string, for templates: every character but letters, digits and spaces escaped,
    so that nothing in it can end the string or the <style> element."""
    return '"' + re.sub(r"[^\w ]", lambda m: f"\\{ord(m[0]):x} ", text) + '"'


def add_template_filters(app: Sphinx) -> None:
    """Give the templates css_string as a filter (builder-inited)."""
    sg.add_template_filter(app, "css_string", css_string)


# --- languages of the site ------------------------------------------------------------------------


def source_language(app: Sphinx) -> languages.Language:
    """The language the site's sources are written in: conf.py's own `language` (a build of another language
    overrides the setting, `-D language=ko`, not what conf.py says), English where it sets none."""
    return languages.of(sg.conf_py_value(app.config, "language") or "en")


def site_languages(app: Sphinx) -> list[languages.Language]:
    """The languages this build links to: LANGUAGES, passed by the build driver; else the site's (conf.py's
    `tutorials_languages`, after its source language)."""
    listed = app.config.tutorials_languages
    site = languages.site_languages(source_language(app).code, None if listed is None else list(listed))
    built = list(app.config.tutorials_built_languages)
    return [lang for seg in built if (lang := site.by_seg(seg)) is not None] if built else list(site.all)


def page_url(from_page: str, seg: str, pagename: str) -> str:
    """Relative URL from <lang>/<from_page>.html to <seg>/<pagename>.html (works from disk too)."""
    return "../" * (from_page.count("/") + 1) + f"{seg}/{pagename}.html"


def alternates(app: Sphinx, pagename: str) -> list[tuple[str, str]]:
    """(hreflang, URL) of the page in every language, itself included, and English as the default.

    Absolute, the way versions.published_url says, where the site's address is known; relative otherwise.
    """
    site_url = app.config.tutorials_site_url
    return [(hreflang, published_url(site_url, app.config.version, lang.seg, f"{pagename}.html") if site_url
             else page_url(pagename, lang.seg, pagename))
            for hreflang, lang in languages.alternates(site_languages(app), source_language(app))]


class SwitcherEntry(TypedDict):
    """A language's link in the language switcher (templates/common/tutorials-lists.html)."""

    seg: str
    name: str
    hreflang: str
    url: str
    current: bool


def add_page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                     doctree: nodes.document | None) -> None:
    """Give the page's template the language switcher's entries and the site's names in the page's language,
    and add the page's `hreflang` alternates to its head (html-page-context)."""
    current = page_language(app.config)
    entries: list[SwitcherEntry] = []
    for lang in site_languages(app):  # the switcher's links stay relative: they work from disk too
        url = page_url(pagename, lang.seg, pagename)
        entries.append({"seg": lang.seg, "name": lang.name, "hreflang": lang.hreflang, "url": url,
                        "current": lang is current})
    add_to_head(context, *(link("alternate", url, hreflang) for hreflang, url in alternates(app, pagename)))
    context["site_languages"] = entries
    context["current_language"] = current
    context["project"] = _(app.config.project)
    context["docstitle"] = _(context.get("docstitle") or app.config.project)  # the site's html_title, translated
    context["copyright"] = _(app.config.copyright)


# --- passages still in English ---------------------------------------------------------------------


def translation_status_path(app: Sphinx, docname: str) -> Path | None:
    """Written by the build driver beside each generated tutorial (core.site.staging.TranslationStatus)."""
    tutorial = example_of(app.config, docname)
    if tutorial is None:
        return None
    path = Path(app.srcdir, tutorial.gallery.examples_dir, tutorial.rel.with_suffix(".i18n.json"))
    return path if path.exists() else None


def english_passages(app: Sphinx, doctree: nodes.document, docname: str) -> tuple[int, list[str]]:
    """How many passages of the page are shown in English, and which messages (site pages)."""
    if is_times_page(docname):
        return 0, []  # sphinx-gallery's table of timings: no text of the site's
    status = translation_status_path(app, docname)
    if status is not None:
        app.env.note_dependency(str(status))
        record = TranslationStatus.read(status)  # RecordError: staged by another version, build again
        return (record.english if record else 0), []
    missing = [msg for msg in sg.messages_left_in_english(doctree) if is_page_message(msg, ())]
    return len(missing), missing


def mark_untranslated(app: Sphinx, doctree: nodes.document) -> None:
    """Put a banner under the title of a page that shows passages in English, linking to the English page;
    with STRICT=1 also a warning (doctree-read)."""
    docname = app.env.docname
    if app.config.language == source_language(app).code:
        return
    count, messages = english_passages(app, doctree, docname)
    if not count:
        return
    if app.config.tutorials_strict:
        shown = "; ".join(repr(m[:40]) for m in messages[:3])
        logger.warning("%d passage(s) not translated into %s, shown in English%s", count,
                       app.config.language, f": {shown}" if shown else "", location=docname,
                       type="tutorials", subtype="untranslated")
    banner = nodes.warning(classes=["translation-incomplete"])
    paragraph = nodes.paragraph()
    source = source_language(app)
    language = languages.name_in(source, page_language(app.config))  # "영어" on a Korean page
    paragraph += nodes.Text(_("{count} passage(s) of this page are not translated yet and are shown in {language}.")
                            .format(count=count, language=language) + " ")
    original = page_url(docname, source.seg, docname)
    paragraph += nodes.reference("", _("Read the page in {language}.").format(language=language), refuri=original,
                                 classes=["english-page"])
    banner += paragraph
    section = next(iter(doctree.findall(nodes.section)), None)
    parent = section if section is not None else doctree
    title_at = next((i for i, child in enumerate(parent.children) if isinstance(child, nodes.title)), -1)
    parent.insert(title_at + 1, banner)


def accept_source_directive_names(app: Sphinx, config: Config) -> None:
    """The sources' reST is written in the source language, whose localized directive and role names (`.. 경고::`
    in a Korean site) docutils knows only in a build of that language: a build of another knows them too
    (config-inited; each language builds in a process of its own)."""
    source = source_language(app).code
    if config.language == source:
        return
    # The parser's language modules are what these lookups take (the stubs name docutils' other language modules).
    english: Any = rst_languages.get_language("en")
    written = rst_languages.get_language(source)
    # A document whose reporter keeps the lookups' notes to itself.
    lookups = utils.new_document("<lookup>", frontend.get_default_settings(Parser))  # type: ignore[arg-type]
    lookups.reporter = _QUIET
    for local, canonical in written.directives.items():
        if directives.directive(local, english, lookups)[0] is not None:
            continue  # a name this build knows already (code-block: Sphinx's own, never docutils' `code`)
        directive, _ = directives.directive(canonical, english, lookups)
        if directive is not None:
            directives.register_directive(local, directive)
    for local, canonical in written.roles.items():
        if roles.role(local, english, 0, _QUIET)[0] is not None:
            continue
        role, _ = roles.role(canonical, english, 0, _QUIET)
        if role is not None:
            roles.register_local_role(local, role)


def note_label_catalog(app: Sphinx, config: Config) -> None:
    """Sphinx reads the label catalogs (the site's sphinx.mo, the engine's: sphinxext.assets) for its templates
    and for the text this package adds while reading, but counts them as no page's source: a changed label
    would reach no page ("no targets are out of date"). Their digest, as a value that pages are read with,
    makes every page read and written again."""
    digest = hashlib.sha256()
    lang = languages.BY_CODE.get(config.language)
    engine = [assets.label_po(lang)] if lang is not None else []
    for path in [*(Path(app.srcdir, folder, config.language, "LC_MESSAGES", "sphinx.mo") for folder in config.locale_dirs),
                 *engine]:
        if path.is_file():
            digest.update(path.read_bytes())
    config.tutorials_label_catalog = digest.hexdigest()


def setup(app: Sphinx) -> ExtensionMetadata:
    """Connect the handlers that put every string of a page in its language (its settings are registered with
    the others: core.config_values)."""
    app.connect("config-inited", note_label_catalog)
    app.connect("config-inited", accept_source_directive_names)
    app.connect("doctree-read", mark_untranslated)
    app.connect("doctree-read", join_wide_line_breaks)
    app.connect("doctree-resolved", translate_gallery_strings)
    app.connect("doctree-resolved", label_figures)
    app.connect("doctree-resolved", clean_thumbnail_tooltips)
    app.connect("builder-inited", script_labels)
    app.connect("builder-inited", add_template_filters)
    app.connect("html-page-context", add_page_context)
    # At reading, mark_untranslated keeps what it finds in the doctree and in env.dependencies, which Sphinx
    # merges back from a parallel reader (its warnings too); the doctree-resolved handlers run in the main
    # process, and add_page_context edits only its page's context.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

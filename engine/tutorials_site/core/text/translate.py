"""A language's tutorial sources, generated from the English scripts and their catalogs.

Only text changes: every translation is checked before it is used, and a
translation that would break the page, carry markup we do not allow or run far
longer than its English (size_problem) falls back to English with a warning
naming the catalog, its line and the message; a label that is not plain text
stops the build (usable_site_catalog).
The generated script must then have the same syntax tree as the English one,
line numbers included (the docstring's text aside), or the build stops: no
catalog can change the code that runs.
"""

import ast
import collections
import functools
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docutils.frontend
import docutils.nodes
import docutils.parsers.rst
import docutils.utils
from babel.messages.catalog import Catalog, Message

from .. import assets, languages, project
from ..errors import SiteError
from ..files import shown
from . import catalogs, tutorial_text

# The node types a translated paragraph, heading or list item may contain.
ALLOWED_NODES = {
    "document", "paragraph", "#text", "emphasis", "strong", "literal", "reference", "target",
    "title_reference", "inline",
}
# Sphinx's cross-reference roles: plain docutils does not know them, so a translation is
# checked with each of them read as inline code (any other role is an error).
XREF_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|obj|data|exc|const|ref|doc|term|math):`([^`]*)`")
SAFE_SCHEMES = {"", "http", "https", "mailto"}
HTML_TAG = re.compile(r"<\s*/?\s*[A-Za-z!?]")


# A translation may run longer than its English (German does, and a short label may need a long word), never
# this much longer: one catalog entry must not turn a page or notebook into megabytes.
SIZE_FACTOR, SIZE_SLACK = 4, 200


class TranslationError(SiteError):
    """A generated source that may not run: its code differs from the English script."""


def size_problem(english: str, msgstr: str) -> str | None:
    """None when `msgstr` is of a size a translation of `english` can have, else why not and what to do.

    The one limit of every kind of translated unit: a tutorial's text or comment, a page's message, a label.
    """
    limit = SIZE_FACTOR * len(english) + SIZE_SLACK
    if len(msgstr) <= limit:
        return None
    return (f"{len(msgstr)} characters, longer than a translation of this message may be ({SIZE_FACTOR} times "
            f"its English and {SIZE_SLACK} more: {limit}); shorten it")


@functools.cache
def _rst() -> tuple[docutils.parsers.rst.Parser, docutils.frontend.Values]:
    """One reST parser and its settings for every check: building docutils' settings costs more than a parse."""
    # docutils takes a component's class as well as an instance; its stubs only an instance.
    settings = docutils.frontend.get_default_settings(docutils.parsers.rst.Parser)  # type: ignore[arg-type]
    settings.report_level = settings.halt_level = 5
    settings.file_insertion_enabled = settings.raw_enabled = False
    settings.warning_stream = False
    return docutils.parsers.rst.Parser(), settings


@functools.lru_cache(maxsize=8192)
def _parse_inline(text: str) -> tuple[docutils.nodes.document, list[docutils.nodes.system_message]]:
    """docutils' verdict on one paragraph of reST: (doctree, messages of level >= warning). Read, never change."""
    parser, settings = _rst()
    document = docutils.utils.new_document("<translation>", settings)
    parser.parse(XREF_ROLE.sub(lambda m: "``" + m[1].replace("`", "") + "``", text), document)
    problems = [m for m in document.findall(docutils.nodes.system_message) if m["level"] >= 2]
    return document, problems


def _tagname(node: docutils.nodes.Node) -> str:
    """A node's tag name: every docutils node is a Text (#text) or an Element, and each has one."""
    return node.tagname  # type: ignore[attr-defined,no-any-return]  # the stubs' Node has none


def _as_parsed(text: str) -> str:
    """A unit's text as it parses alone: a paragraph's closing '::' announces the literal block after it, which a
    unit does not hold (docutils would say none was found); its ':' is what the reader sees."""
    return text[:-1] if text.endswith("::") else text


def _structure(document: docutils.nodes.document) -> list[str]:
    return [_tagname(child) for child in document.children]


def check_translation(unit: tutorial_text.Unit, msgstr: str) -> str | None:
    """None when `msgstr` may replace the unit's English text, else the reason it may not."""
    text = " ".join(msgstr.split())
    if not text:
        return "empty"
    too_long = size_problem(unit.msgid, text)
    if too_long:
        return too_long
    if not unit.is_rst:
        return None  # a code comment: plain text, written after '#'
    if unit.msgid.endswith("::") != text.endswith("::"):
        return "a paragraph introducing a literal block must keep its closing '::' (and only then)"
    document, problems = _parse_inline(_as_parsed(text))
    if problems:
        return "breaks reST: " + problems[0].children[0].astext()
    # One paragraph of text; or, where the English text alone reads as more (a heading "1. Install ..." reads as a
    # list), what the English reads as.
    english = _parse_inline(_as_parsed(unit.msgid))[0]
    allowed = ALLOWED_NODES | ({_tagname(node) for node in english.findall()} if _structure(english) != ["paragraph"]
                               else set())
    if _structure(document) not in (["paragraph"], _structure(english)):
        return f"must stay one paragraph of text, became: {', '.join(_structure(document))}"
    for node in document.findall():
        if _tagname(node) not in allowed:
            return f"uses {_tagname(node)!r}, which translations may not contain"
        # (Literal text is shown as code, never as markup: a role's `text <target>` is read as one.)
        if (isinstance(node, docutils.nodes.Text) and not isinstance(node.parent, docutils.nodes.literal)
                and HTML_TAG.search(node.astext())):
            return "contains an HTML tag"
        uri = node.get("refuri") if isinstance(node, docutils.nodes.Element) else None
        if uri and urlsplit(uri).scheme.lower() not in SAFE_SCHEMES:
            return f"links to {uri!r}: only http, https and mailto links are allowed"
    return None


def _references(text: str) -> tuple[collections.Counter[tuple[str, str]], collections.Counter[str], collections.Counter[str]]:
    """What a passage points to: role targets, inline literals and link targets, each counted."""
    roles: collections.Counter[tuple[str, str]] = collections.Counter()
    for match in XREF_ROLE.finditer(text):
        content = match[1]
        roles[(match[0].split("`")[0], content.rsplit("<", 1)[1].rstrip(">").strip() if "<" in content else content)] += 1
    document, _ = _parse_inline(text)
    literals = collections.Counter(node.astext() for node in document.findall(docutils.nodes.literal))
    literals -= collections.Counter(m[1].replace("`", "") for m in XREF_ROLE.finditer(text))  # roles, counted above
    links = collections.Counter(node["refuri"] for node in document.findall(docutils.nodes.reference)
                                if "refuri" in node)
    return roles, literals, links


def references_changed(unit: tutorial_text.Unit, msgstr: str,
                       allowed_links: Mapping[str, set[str]] | None = None) -> str | None:
    """None when the translation points where the English does (a link may go to a localized page the
    language allows, see link_targets), else what changed."""
    if not unit.is_rst:
        return None
    english, translated = _references(unit.msgid), _references(" ".join(msgstr.split()))
    allowed_links = allowed_links or {}
    links = collections.Counter(translated[2])
    for target, count in translated[2].items():
        source = next((e for e, local in allowed_links.items() if target in local and e in english[2]), None)
        if source is not None:
            links[target] -= count
            links[source] += count
    compared: list[tuple[str, collections.Counter[Any], collections.Counter[Any]]] = [
        ("refers to", english[0], translated[0]), ("has the inline code", english[1], translated[1]),
        ("links to", english[2], +links)]
    for says, want, got in compared:
        if want != got:
            return _differs(says, list((want - got).elements()), list((got - want).elements()))
    return None


def _differs(says: str, missing: list[Any], extra: list[Any]) -> str:
    """What references_changed says of a kind of reference (SAYS: what a text with one of them does) that the
    English has and the translation lacks (MISSING), or the other way round (EXTRA)."""
    def shown(found: list[Any]) -> str:
        return ", ".join(f":{r[0].strip(':')}:`{r[1]}`" if isinstance(r, tuple) else
                         f"``{r}``" if says.endswith("code") else str(r) for r in found)
    if missing and extra:
        what = f"the translation {says} {shown(extra)} where the English {says} {shown(missing)}"
    elif extra:
        what = f"the translation {says} {shown(extra)} and the English does not"
    else:
        what = f"the English {says} {shown(missing)} and the translation does not"
    return f"{what}: a translation keeps the English's inline code, links and references as they are"


@dataclass(frozen=True)
class Refusal:
    """Why a tutorial's translation is not used, and whether its page may be built without it."""

    reason: str
    stops_build: bool  # it points elsewhere than the English: a page that would say something else is never built


def refusal(unit: tutorial_text.Unit, msgstr: str, allowed_links: Mapping[str, set[str]] | None = None) -> Refusal | None:
    """None when `msgstr` is used for the unit, else why not: the one rule of the build and of i18n-status.

    A translation that breaks the page (check_translation) is shown in English; one whose links, roles or
    literals differ from the English (references_changed) stops the build.
    """
    reason = check_translation(unit, msgstr)
    if reason:
        return Refusal(reason, stops_build=False)
    changed = references_changed(unit, msgstr, allowed_links)
    return Refusal(changed, stops_build=True) if changed else None


LINK_TARGETS = "link-targets.txt"  # in <the site's locales>/<code>/


def link_targets(site: project.Project, lang: languages.Language) -> dict[str, set[str]]:
    """The localized link targets a language allows, from <the site's locales>/<code>/link-targets.txt:
    one `<English target> <localized target>` pair per line, `#` for comments."""
    path = site.locales / lang.code / LINK_TARGETS
    allowed: collections.defaultdict[str, set[str]] = collections.defaultdict(set)
    if path.exists():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                raise TranslationError(f"{shown(path)}:{number}: expected "
                                       "'<English target> <localized target>'")
            allowed[parts[0]].add(parts[1])
    return allowed


@dataclass
class Report:
    """What a generated source shows: used to tell the reader, and strict mode to fail."""

    total: int = 0
    english: int = 0
    problems: list[str] = field(default_factory=list)  # "file:line: message"


def _code_tree(source: str, filename: str) -> str:
    tree = ast.parse(source, filename=filename)
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body[0].value.value = ""  # the docstring is text, and so is where it ends on its last line
        body[0].end_col_offset = body[0].value.end_col_offset = 0
    return ast.dump(tree, include_attributes=True)


def generate(site: project.Project, lang: languages.Language, tutorial: project.Tutorial) -> tuple[str, Report]:
    """(translated source, Report) of one tutorial of SITE in one language."""
    path = tutorial.path
    english = path.read_text(encoding="utf-8")
    text = tutorial_text.parse(path, english)
    po = catalogs.tutorial_po(site, lang, tutorial)
    catalog = catalogs.load(po) if po.exists() else None
    available = catalogs.translations(catalog) if catalog is not None else {}
    report = Report(total=len(text.units))
    usable: dict[str, str] = {}
    allowed_links = link_targets(site, lang)
    for unit in text.units:
        msgstr = available.get(unit.msgid)
        if msgstr is None:
            report.english += 1
            continue
        refused = refusal(unit, msgstr, allowed_links)
        if refused is None:
            usable[unit.msgid] = msgstr
            continue
        assert catalog is not None  # msgstr was found in it
        where = f"{shown(po)}:{catalog[unit.msgid].lineno}: msgid {unit.msgid[:50]!r}"
        if refused.stops_build:
            raise TranslationError(f"{where}: {refused.reason}")
        report.english += 1
        report.problems.append(f"{where}: {refused.reason}; shown in English")
    translated = tutorial_text.render(text, usable, spaced=lang.spaced)
    if _code_tree(translated, str(path)) != _code_tree(english, str(path)):
        raise TranslationError(
            f"{shown(po)}: the {lang.seg} source generated from it differs from {tutorial.label} "
            "in code or line numbers; refusing to run it"
        )
    return translated, report


# --- the site's catalogs: pages (<docname>.po) and labels (sphinx.po) -------------------------------

MYST_ROLE = re.compile(r"\{[\w:.-]+\}`")
MYST_BLOCK = re.compile(r"^\s*(```|:::|\{)", re.M)
UNSAFE_URI = re.compile(r"(?i)\b(?:javascript|data|vbscript)\s*:")
PLACEHOLDER = re.compile(r"\{\w*\}|%\(\w+\)[sdr]|%[sdr]")
# A %-conversion as Python's % operator reads it: flags, width, precision and all.
PERCENT_FIELD = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d*))?[hlL]?.?", re.S)
TAG = re.compile(r"<[^<>]*>")
CHARACTER_REFERENCE = re.compile(r"&(?:#\d+|#[xX][\da-fA-F]+|[A-Za-z]\w*);")
# What HTML (or a script's template string) reads as markup: a label has none beyond its English's markup.
NOT_TEXT = re.compile(r"""[<>&"'`]""")
# Babel reads a plural's msgid and msgstr as their forms; no page or label of the site has one, nor a check for it.
PLURAL = "a plural (msgid_plural), which the site's catalogs do not have; translate the singular message"


def check_page_translation(message: Message, msgstr: str) -> str | None:
    """Like check_translation, for a message Sphinx extracted from a hand-written page."""
    pair = catalogs.singular(message)
    if pair is None:
        return PLURAL
    english = pair[0]
    if UNSAFE_URI.search(msgstr) and not UNSAFE_URI.search(english):
        return "links to a javascript:, data: or vbscript: URI"
    markdown = any(str(path).endswith(".md") for path, _ in message.locations)
    if not markdown:
        return check_translation(tutorial_text.Unit("paragraph", english, [0]), msgstr)
    too_long = size_problem(english, msgstr)
    if too_long:
        return too_long
    if HTML_TAG.search(msgstr):
        return "contains an HTML tag"
    roles = set(MYST_ROLE.findall(msgstr)) - set(MYST_ROLE.findall(english))
    if roles or MYST_BLOCK.search(msgstr):
        return "adds a MyST role or block the English text does not have"
    return None


def check_label_translation(message: Message, msgstr: str) -> str | None:
    """A label is plain text: the theme prints labels into its HTML as they are, in text and in attributes.

    Only the markup its English has may stay: the same tags, attributes and all (the footer's sentence has
    links), its character references, and the same placeholders.
    """
    pair = catalogs.singular(message)
    if pair is None:
        return PLURAL
    english = pair[0]
    too_long = size_problem(english, msgstr)
    if too_long:
        return too_long
    formatted = format_problem(english, msgstr)
    if formatted:
        return formatted
    if sorted(PLACEHOLDER.findall(msgstr)) != sorted(PLACEHOLDER.findall(english)):
        wanted = " ".join(PLACEHOLDER.findall(english)) or "none"
        return f"placeholders differ from the English ones ({wanted}); keep them as they are"
    if sorted(TAG.findall(msgstr)) != sorted(TAG.findall(english)):
        return "HTML tags differ from the English ones; keep the English tags exactly as they are, or none"
    references = set(CHARACTER_REFERENCE.findall(msgstr)) - set(CHARACTER_REFERENCE.findall(english))
    if references:
        return f"adds the character reference {sorted(references)[0]}; write the character itself"
    english_text = NOT_TEXT.findall(CHARACTER_REFERENCE.sub("", TAG.sub("", english)))
    found = sorted(set(NOT_TEXT.findall(CHARACTER_REFERENCE.sub("", TAG.sub("", msgstr)))) - set(english_text))
    if found:
        return (f"not plain text: it has {', '.join(map(repr, found))}, which HTML reads as markup; write it "
                "without < > & \" ' ` (typographic quotes and apostrophes such as “ ” ’ 「 」 are fine)")
    return None


def format_problem(english: str, msgstr: str) -> str | None:
    """Why a label's placeholders would not be filled in as the English ones are: a label whose English has
    placeholders is formatted (str.format, or %), and a width, precision, conversion or attribute in a placeholder
    (`{minutes:2000000}`, `{title!r}`, `{x.__class__}`, `%(x)999s`) would make the page as long or show what it
    says, not the value. None when each placeholder is written as a bare one."""
    if re.search(r"\{\w*\}", english):
        try:
            fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(msgstr)
                      if name is not None]
        except ValueError as error:
            return f"a brace that is no placeholder ({error}): write {{{{ and }}}} for a brace itself"
        for name, spec, conversion in fields:
            if spec or conversion or not re.fullmatch(r"\w*", name):
                written = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
                return (f"the placeholder {written} has a format width, conversion or attribute; write it as the "
                        "English does, bare: " + (" ".join(sorted(set(re.findall(r"\{\w*\}", english))))))
    if re.search(r"%\(\w+\)[sdr]|%[sdr]", english):
        for field in PERCENT_FIELD.findall(msgstr):
            if field != "%%" and field not in PLACEHOLDER.findall(english):
                return (f"the placeholder {field} has a format width, precision or conversion; write it as the English "
                        "does, bare: " + " ".join(sorted(set(PLACEHOLDER.findall(english)))))
    return None


# Why a translation of a site catalog's message is refused (None: it is used).
SiteCheck = Callable[[Message, str], str | None]
SITE_CHECKS: dict[str, SiteCheck] = {"site": check_page_translation, "sphinx": check_label_translation}


def domain_of(name: str) -> str:
    """The kind of a site catalog by its name (catalogs.site_catalogs): "sphinx" for the labels, "site" for a page's."""
    return "sphinx" if name == catalogs.LABELS else "site"


def usable_site_catalog(domain: str, po: Path) -> tuple[Catalog, list[str]]:
    """The catalog with every refused translation removed (so it shows English), and the problems.

    A page's message is text to docutils or MyST, which escape it: a refused one shows in English with a
    warning. A label goes into the HTML as it is, through templates this project does not own: a refused
    label is an error, before anything is built.
    """
    catalog = catalogs.load(po)
    problems = []
    for message in [m for m in catalog if catalogs.is_translated(m)]:
        pair = catalogs.singular(message)
        reason = SITE_CHECKS[domain](message, pair[1]) if pair else PLURAL
        if reason:
            problems.append(f"{shown(po)}:{message.lineno}: msgid {message.id[:50]!r}: {reason}")
            del catalog[message.id]
    if domain == "sphinx" and problems:
        more = f" (and {len(problems) - 1} more label(s) in this catalog)" if len(problems) > 1 else ""
        raise catalogs.CatalogError(problems[0] + more)
    return catalog, [f"{problem}; shown in English" for problem in problems]


def check_labels(site: project.Project, lang: languages.Language) -> None:
    """Refuse a language's label catalogs (the site's, the engine's) that are not plain text
    (usable_site_catalog), before anything runs."""
    for po in (catalogs.catalog_dir(site, lang) / "sphinx.po", assets.label_po(lang)):
        if po.exists():
            usable_site_catalog("sphinx", po)

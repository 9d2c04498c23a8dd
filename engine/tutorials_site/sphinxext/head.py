"""What the parts share of the page being written: its language, and its `<head>`.

The theme writes the template variable `metatags` into every page's head; the parts add to it here only, so
each tag's attributes are escaped one way and no part replaces what another added. Not an extension: it
has no handler of its own.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from sphinx.config import Config

from ..core import languages


def page_language(config: Config) -> languages.Language:
    """The language of the pages this build writes (conf.py's `language`, or the build's `-D language=`)."""
    return languages.of(config.language)


@dataclass(frozen=True)
class Tag:
    """A `<meta>` or `<link>` of a page's head: its attributes, in order, with their values as text."""

    name: str
    attributes: Sequence[tuple[str, str]]

    def html(self) -> str:
        """The tag as HTML, each value escaped."""
        return f"<{self.name}" + "".join(f' {key}="{escape(value)}"' for key, value in self.attributes) + ">"


def meta(kind: str, name: str, content: str) -> Tag:
    """`<meta KIND="NAME" content="CONTENT">`: KIND is "name" or "property" (Open Graph's)."""
    return Tag("meta", ((kind, name), ("content", content)))


def link(rel: str, href: str, hreflang: str = "") -> Tag:
    """`<link rel="REL" [hreflang="HREFLANG"] href="HREF">`."""
    return Tag("link", (("rel", rel), *((("hreflang", hreflang),) if hreflang else ()), ("href", href)))


# A `<meta name="NAME">` in a page's head, however written (`.. meta::`'s, another extension's): {name}.
_META_NAMED = r"""<meta\b[^>]*\bname=["']{name}["']"""


def has_meta(context: dict[str, Any], name: str) -> bool:
    """Whether the page's head has a `<meta name="NAME">` already."""
    return re.search(_META_NAMED.format(name=re.escape(name)), context.get("metatags", ""), re.I) is not None


def add_to_head(context: dict[str, Any], *parts: Tag | str) -> None:
    """Add to the page's head, after what the parts connected before added: tags, each on a line of its own, or
    HTML a template of the engine rendered (escaped by it) as it is."""
    context["metatags"] = context.get("metatags", "") + "".join(
        f"\n{part.html()}" if isinstance(part, Tag) else part for part in parts)

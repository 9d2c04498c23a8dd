"""The pages the site has besides Sphinx's: the language chooser at a root, the 404 page.

Their HTML is the engine's (core.assets: templates/site/), rendered with Jinja (which Sphinx brings); their
title and description are the site's, from its conf.py.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from .. import languages
from ..assets import SITE_PAGES
from .summaries import site_description

_TEMPLATES = Environment(loader=FileSystemLoader(SITE_PAGES), autoescape=select_autoescape(),
                         keep_trailing_newline=True)


def _site(conf: Mapping[str, Any]) -> dict[str, str]:
    """The site's name and description (from CONF, its conf.py's names), as its pages' <head> shows them."""
    name = str(conf.get("project", ""))
    return {"name": name, "description": site_description(str(conf.get("tutorials_site_description", "")), name)}


def chooser_page(conf: Mapping[str, Any], langs: Sequence[languages.Language], source: languages.Language,
                 prefix: str = "", canonical: str = "", site: str = "") -> str:
    """A page that sends the reader to <prefix><their language>/index.html (it works from disk too), by default to
    the site's SOURCE language's where it is among LANGS.

    Its hreflang alternates are those landing pages, absolute under `site` where given.
    """
    pairs = languages.alternates(langs, source)
    alternates = [(hreflang, f"{site}{prefix}{lang.seg}/index.html") for hreflang, lang in pairs]
    return _TEMPLATES.get_template("language-chooser.html").render(
        segs=[lang.seg for lang in langs], default=pairs[-1][1].seg, prefix=prefix, langs=langs,
        canonical=canonical, alternates=alternates, **_site(conf))


def not_found_page(conf: Mapping[str, Any], url: str, langs: Sequence[languages.Language]) -> str:
    """The 404 page of a published tree: links to the stable version of each language."""
    return _TEMPLATES.get_template("404.html").render(url=url, langs=[[lang.seg, lang.name] for lang in langs],
                                                      **_site(conf))


def redirect_page(target: str, canonical: str) -> str:
    """A page that sends its reader (and search engines, by its canonical link) to TARGET, a relative address,
    whose absolute address is CANONICAL; its query and fragment go along."""
    return _TEMPLATES.get_template("redirect.html").render(target=target, canonical=canonical)


REDIRECT_MARK = '<meta name="tutorials-redirect"'  # what every redirect_page holds, in its first lines


def write_root_index(conf: Mapping[str, Any], htmldir: Path, langs: Sequence[languages.Language],
                     source: languages.Language) -> None:
    """The site root's index.html, which sends a reader to a language's pages (chooser_page)."""
    Path(htmldir).mkdir(parents=True, exist_ok=True)
    Path(htmldir, "index.html").write_text(chooser_page(conf, langs, source), encoding="utf-8")

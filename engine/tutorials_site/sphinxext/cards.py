"""`tutorials-cards`: a card per tutorial, grouped by gallery, for a landing page (index.md).

Each card shows sphinx-gallery's thumbnail of the tutorial, its title (the page's, in the build's language),
the first paragraph of its intro (from this language's script, its names as code) and, from the stamp of its
run, how long it ran and on what. A gallery's heading is its index page's title.
"""

import posixpath
import re
from collections.abc import Mapping
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util.docutils import SphinxDirective

from .. import __version__
from ..core import project
from ..core.runs.records import Stamp
from ..core.runs.stamps import read_stamp, stamp_path
from ..core.sphinx_gallery_formats import thumbnail_path
from ..core.text import tutorial_text
from ..sphinx_gallery_build import ExtensionMetadata
from .gallery import site_project, tutorial_titles

_ = get_translation("sphinx")


def doc_link(docname: str, classes: list[str]) -> nodes.paragraph:
    """A paragraph holding a link to DOCNAME that shows its title, as Sphinx resolves it in this language."""
    xref = addnodes.pending_xref("", nodes.inline("", ""), refdomain="std", reftype="doc",
                                 reftarget=f"/{docname}", refexplicit=False, refwarn=True)
    return nodes.paragraph("", "", xref, classes=classes)


# A paragraph's inline reST, as far as a card shows it: literals, roles (`text <target>` or a target), emphasis.
_INLINE = re.compile(r"``(?P<code>.+?)``|:(?P<role>[\w:.-]+):`(?P<target>[^`]+)`|\*\*(?P<strong>.+?)\*\*|\*(?P<em>[^*]+)\*")
_LINKS = {"ref", "doc", "std:ref", "std:doc"}  # roles naming a page or a section: shown as text, not code


def _role(role: str, target: str, titles: Mapping[str, str]) -> nodes.Node:
    """What a role shows: its explicit title; a tutorial's title for a link to one; a name as code (`~` shortens it)."""
    explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", target, re.S)
    if explicit:
        return nodes.Text(explicit[1]) if role in _LINKS else nodes.literal(text=explicit[1])
    if role in _LINKS:
        return nodes.Text(titles.get(target, target))
    name = target.lstrip("!")
    return nodes.literal(text=name[1:].rsplit(".", 1)[-1] if name.startswith("~") else name)


def inline(text: str, titles: Mapping[str, str]) -> list[nodes.Node]:
    """A paragraph of reST (a catalog's message: one line) as text and code nodes, without links: a card links
    to its tutorial only. TITLES: the tutorials' titles by their reference labels."""
    text = re.sub(r"\\(.)", lambda m: "" if m[1].isspace() else m[1], text)  # reST escapes, as a reader sees them
    parts: list[nodes.Node] = []
    end = 0
    for match in _INLINE.finditer(text):
        parts.append(nodes.Text(text[end:match.start()]))
        if match["code"]:
            parts.append(nodes.literal(text=match["code"]))
        elif match["role"]:
            parts.append(_role(match["role"], match["target"], titles))
        else:
            parts.append(nodes.Text(match["strong"] or match["em"]))
        end = match.end()
    return [*parts, nodes.Text(text[end:])]


def run_facts(stamp: Stamp | None) -> str:
    """How long the tutorial ran and on what, from its stamp; "" without one (a page without a run)."""
    if stamp is None:
        return ""
    seconds = round(stamp.seconds)
    took = _("{seconds} s to run").format(seconds=seconds) if seconds < 90 else \
        _("{minutes} min to run").format(minutes=round(seconds / 60))
    gpus = stamp.hardware.gpus
    if gpus:
        where = (_("{device} ({gpus} GPUs)") if gpus > 1 else _("{device} (1 GPU)")).format(
            device=stamp.hardware.device, gpus=gpus)
    else:
        where = _("CPU (no GPU)")
    return f"{took} · {where}"


class CardsDirective(SphinxDirective):
    """`.. tutorials-cards::`: every gallery's heading and its tutorials' cards."""

    has_content = False

    def card(self, tutorial: project.Tutorial) -> nodes.container:
        """One tutorial's card; the files it reads (this language's script, the run's stamp) are the page's
        dependencies, so that the page is read again when they change."""
        folder, stem = posixpath.dirname(tutorial.page), tutorial.rel.stem
        script = Path(self.env.srcdir, tutorial.gallery.examples_dir, tutorial.rel)  # staged: this language's
        self.env.note_dependency(str(script))
        page_script = Path(self.env.srcdir, f"{tutorial.page}.py")
        if stamp_path(page_script).exists():
            self.env.note_dependency(str(stamp_path(page_script)))
        try:
            intro = next((unit.msgid for unit in tutorial_text.parse(script).units if unit.kind == "paragraph"), "")
        except (OSError, tutorial_text.TutorialSyntaxError):
            intro = ""  # sphinx-gallery reports the script where it reads its page
        card = nodes.container(classes=["tutorials-card"])
        card += nodes.image(uri=f"/{thumbnail_path(folder, stem)}", alt="", classes=["tutorials-card-thumb"])
        card += doc_link(tutorial.page, ["tutorials-card-title"])
        if intro:
            card += nodes.paragraph("", "", *inline(intro, tutorial_titles(self.env.app)), classes=["tutorials-card-text"])
        facts = run_facts(read_stamp(page_script))
        if facts:
            # Measured, not written: Sphinx's search (from 7.3) indexes no text of a "no-search" node.
            card += nodes.paragraph(text=facts, classes=["tutorials-card-facts", "no-search"])
        return card

    def run(self) -> list[nodes.Node]:
        """A heading and a grid of cards per gallery that has tutorials, in conf.py's order."""
        site = site_project(self.config)
        shown: list[nodes.Node] = []
        for gallery in site.galleries:
            tutorials = [tutorial for tutorial in site.tutorials if tutorial.gallery == gallery]
            if not tutorials:
                continue
            group = nodes.container(classes=["tutorials-cards"])
            group += doc_link(f"{gallery.gallery_dir}/index", ["tutorials-cards-gallery"])
            grid = nodes.container(classes=["tutorials-card-grid"])
            grid += [self.card(tutorial) for tutorial in tutorials]
            group += grid
            shown.append(group)
        return shown


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the directive."""
    app.add_directive("tutorials-cards", CardsDirective)
    # The directive reads files and notes them as dependencies, which Sphinx merges back from a parallel reader.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

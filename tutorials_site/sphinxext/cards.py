"""`tutorials-cards`: a card per tutorial, grouped by gallery, for a landing page (index.md).

Each card shows sphinx-gallery's thumbnail of the tutorial, its title (the page's, in the build's language),
its intro as sphinx-gallery's own cards take it (from this language's script) and, from the stamp of its
run, how long it ran and on what. A gallery's heading is its index page's title.
"""

import posixpath
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.locale import get_translation
from sphinx.util.docutils import SphinxDirective
from sphinx.util.typing import ExtensionMetadata

from .. import __version__
from .. import sphinx_gallery_api as sg
from ..core import project
from ..core.records import Stamp
from ..core.stamps import read_stamp, stamp_path
from .gallery import site_project, tutorial_titles

_ = get_translation("sphinx")


def doc_link(docname: str, classes: list[str]) -> nodes.paragraph:
    """A paragraph holding a link to DOCNAME that shows its title, as Sphinx resolves it in this language."""
    xref = addnodes.pending_xref("", nodes.inline("", ""), refdomain="std", reftype="doc",
                                 reftarget=f"/{docname}", refexplicit=False, refwarn=True)
    return nodes.paragraph("", "", xref, classes=classes)


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
            _, blocks = sg.split_code_and_text_blocks(str(script))
            intro, _title = sg.extract_intro_and_title(script, blocks[0].content)
        except (OSError, IndexError, ExtensionError):
            intro = ""  # sphinx-gallery reports the script where it reads its page
        titles = tutorial_titles(self.env.app)
        card = nodes.container(classes=["tutorials-card"])
        card += nodes.image(uri=f"/{sg.thumbnail_path(folder, stem)}", alt="", classes=["tutorials-card-thumb"])
        card += doc_link(tutorial.page, ["tutorials-card-title"])
        if intro:
            card += nodes.paragraph(text=sg.tooltip_text(intro, titles.get), classes=["tutorials-card-text"])
        facts = run_facts(read_stamp(page_script))
        if facts:
            card += nodes.paragraph(text=facts, classes=["tutorials-card-facts"])
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

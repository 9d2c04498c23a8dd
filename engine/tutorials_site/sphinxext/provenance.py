"""Where each tutorial ran, on its page.

Every tutorial page gets a `tutorial-provenance` directive under its intro. It
reads the stamp of the tutorial's run (copied beside the page by
sphinxext.gallery) and renders one line (device, torch, CUDA, commit, date;
the GPUs the tutorial is written for, when it ran on fewer; that it ran without a sandbox, or used
the network) plus the stamp itself as a <meta> tag, which `tutorials-site check` verifies. Over it, a
run that failed gets a banner saying so (and that conf.py expects it, where it does). A page
whose output does not come from a run of its current English source says so
instead.
"""

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util.docutils import SphinxDirective

from .. import __version__
from ..core.project import Tutorial
from ..core.runs import currency
from ..core.runs.fingerprint import tutorial_digest
from ..core.runs.records import Stamp
from ..core.runs.stamping import expected
from ..core.runs.stamps import STAMP_META, read_stamp, stamp_path
from ..core.sphinx_gallery_formats import intro_end
from ..core.text.gallery_strings import split_template
from ..sphinx_gallery_build import ExtensionMetadata
from .gallery import example_of, site_project
from .head import add_to_head, meta

_ = get_translation("sphinx")


def add_directive(app: Sphinx, docname: str, source: list[str]) -> None:
    """Put the provenance directive under a tutorial page's intro (source-read)."""
    if example_of(app.config, docname) is None:
        return
    text = source[0]
    at = intro_end(text)
    if at != -1:
        # In place of the comment line closing the intro, so that every line below keeps its number in warnings.
        end = text.find("\n", at)
        source[0] = text[:at] + ".. tutorial-provenance::" + text[end:]


def _fill(template: str, **values: nodes.Node | list[nodes.Node]) -> list[nodes.Node]:
    """The template's text with each {placeholder} replaced by its node (or text)."""
    parts = []
    for i, piece in enumerate(split_template(template)):
        if i % 2:
            value = values[piece]
            parts += value if isinstance(value, list) else [value]
        elif piece:
            parts.append(nodes.Text(piece))
    return parts


def describe(stamp: Stamp) -> list[nodes.Node]:
    """The provenance line; values from the machine (names, versions, hashes) are set as code."""
    hardware = stamp.hardware
    if hardware.gpus:
        template = _("{device} ({gpus} GPUs)") if hardware.gpus > 1 else _("{device} (1 GPU)")
        where = _fill(template, device=nodes.literal(text=hardware.device), gpus=nodes.Text(str(hardware.gpus)))
    else:
        where = [nodes.Text(_("CPU (no GPU)"))]
    parts = _fill(_("Output captured on {where}"), where=where)
    needed = stamp.needs_gpus
    if needed > hardware.gpus:  # run anyway on less than it declares (NEEDS=lenient): its output may differ there
        written = _("written for {gpus} GPUs") if needed > 1 else _("written for 1 GPU")
        parts += [nodes.Text(" · ")] + _fill(written, gpus=nodes.Text(str(needed)))
    if not stamp.sandboxed:  # SANDBOX=off: nothing kept the run from what it was not given
        parts += [nodes.Text(" · "), nodes.Text(_("run without a sandbox"))]
    if not stamp.verified:  # taken from REUSE or a shard by a build without the runs key (core.runs.signing)
        parts += [nodes.Text(" · "), nodes.Text(_("not verified"))]
    if stamp.network:  # its tutorials-needs line: what it downloaded may differ from one build to the next
        parts += [nodes.Text(" · "), nodes.Text(_("used the network"))]
    parts += [nodes.Text(" · torch "), nodes.literal(text=hardware.torch or "-")]
    if hardware.cuda:
        parts += [nodes.Text(" · CUDA "), nodes.literal(text=hardware.cuda)]
    parts += [nodes.Text(" · ")] + _fill(_("commit {commit}"), commit=nodes.literal(text=stamp.commit))
    parts += [nodes.Text(" · "), nodes.literal(text=stamp.date)]
    return parts


def failure_banner(stamp: Stamp, expected: bool) -> nodes.Element:
    """What a page of a failed run says over its provenance line: that the tutorial failed, or did not finish,
    where the reader sees why; EXPECTED: conf.py lists it in expected_failing_examples (it raised, as listed)."""
    if expected:
        box: nodes.Element = nodes.note(classes=["tutorial-failed", "tutorial-failed-expected"])
        text = _("This tutorial fails on purpose: its output ends with the error, shown under the code block that "
                 "raised it.")
    elif stamp.unfinished:
        box = nodes.error(classes=["tutorial-failed"])
        text = _("This tutorial did not finish when this page was built: its output stops where the run ended, as "
                 "said under the code block that was running.")
    else:
        box = nodes.error(classes=["tutorial-failed"])
        text = _("This tutorial failed when this page was built: its output stops at the error, shown with its "
                 "traceback under the code block that raised it.")
    box += nodes.paragraph(text=text)
    return box


class ProvenanceDirective(SphinxDirective):
    """`.. tutorial-provenance::`: the provenance line of the page's run, or a warning where it has none."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """The line and the stamp's <meta> where the stamp beside the page is of the current English source;
        else a box saying the page was built without running the tutorial."""
        target = Path(self.env.srcdir, self.env.docname + ".py")
        if stamp_path(target).exists():
            # Not a missing one: Sphinx reads a page with a missing dependency again at every build (a
            # page without a run, shown without output). A stamp comes only with a page rendered again.
            self.env.note_dependency(str(stamp_path(target)))
        stamp = read_stamp(target)
        # Every language's page shows the run of the repository's English script.
        tutorial = example_of(self.config, self.env.docname)
        if (stamp and tutorial is not None
                and not currency.problems(tutorial_digest(site_project(self.config), tutorial), None, stamp=stamp)):
            self.env.metadata[self.env.docname][STAMP_META] = stamp.to_json()
            line = nodes.container(classes=["tutorial-provenance"])
            line += nodes.paragraph("", "", *describe(stamp))
            return [*self._failure(stamp, tutorial), line]
        missing = nodes.warning(classes=["tutorial-not-executed"])
        missing += nodes.paragraph(
            text=_("This page was built without running the tutorial: its output is missing or out of date.")
        )
        return [missing]

    def _failure(self, stamp: Stamp, tutorial: Tutorial) -> list[nodes.Node]:
        """The banner of a failed run (none for one that passed)."""
        if not stamp.failed:
            return []
        return [failure_banner(stamp, expected(site_project(self.config), tutorial, stamp))]


def add_stamp_meta(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                   doctree: nodes.document | None) -> None:
    """Put the stamp the directive kept as the page's <meta> tag, which `tutorials-site check` reads (html-page-context)."""
    stamp = (context.get("meta") or {}).get(STAMP_META)
    if stamp:
        add_to_head(context, meta("name", STAMP_META, stamp))


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the directive and the handlers that place it and its stamp."""
    app.add_directive("tutorial-provenance", ProvenanceDirective)
    app.connect("source-read", add_directive)
    app.connect("html-page-context", add_stamp_meta)
    # The directive keeps the stamp in env.metadata and its file in env.dependencies, which Sphinx's own
    # collectors merge back from a parallel reader; add_stamp_meta edits only its page's context.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

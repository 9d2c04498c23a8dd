"""Sphinx side of execution: re-run what a change made stale, show where each tutorial ran.

Every tutorial page gets a `tutorial-provenance` directive under its intro. It
reads the stamp that `execution.record_run` wrote and renders one line (device,
torch, CUDA, commit, date) plus the stamp itself as a <meta> tag, which
`checks` verifies. A page whose output does not come from a run of its current
source says so instead.
"""

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ..core.fingerprint import environment_fingerprint, source_digest
from ..core.stamps import STAMP_META, read_stamp, stamp_path

_ = get_translation("sphinx")
logger = logging.getLogger(__name__)
# sphinx-gallery closes every example's intro with this comment line.
_FIRST_BLOCK = ".. GENERATED FROM PYTHON SOURCE LINES"


def gallery_targets(app):
    """The copies of the tutorial scripts that sphinx-gallery runs, in the staged source tree."""
    conf = app.config.sphinx_gallery_conf
    for gallery in conf["gallery_dirs"]:
        yield from sorted(Path(app.srcdir, gallery).glob("*.py"))


def invalidate_stale_runs(app):
    """Drop sphinx-gallery's md5 of any run made in another environment, so it runs again."""
    current = environment_fingerprint()
    for target in gallery_targets(app):
        md5 = Path(f"{target}.md5")
        stamp = read_stamp(target)
        if md5.exists() and (stamp is None or stamp["environment"] != current):
            logger.info("[provenance] %s: environment changed, will re-execute", target.name)
            md5.unlink()


def _tutorial_target(app, docname):
    galleries = app.config.sphinx_gallery_conf["gallery_dirs"]
    if docname.rpartition("/")[0] not in galleries:
        return None
    target = Path(app.srcdir, docname + ".py")
    return target if target.exists() else None


def add_directive(app, docname, source):
    if _tutorial_target(app, docname) is None:
        return
    text = source[0]
    at = text.find(_FIRST_BLOCK, text.find(".. _sphx_glr_"))
    if at != -1:
        source[0] = text[:at] + ".. tutorial-provenance::\n\n" + text[at:]


def _fill(template, **values):
    """The template's text with each {placeholder} replaced by its node (or text)."""
    parts = []
    for i, piece in enumerate(re.split(r"\{(\w+)\}", template)):
        if i % 2:
            value = values[piece]
            parts += value if isinstance(value, list) else [value]
        elif piece:
            parts.append(nodes.Text(piece))
    return parts


def describe(stamp):
    """The provenance line; values from the machine (names, versions, hashes) are set as code."""
    if stamp["gpus"]:
        template = _("{device} ({gpus} GPUs)") if stamp["gpus"] > 1 else _("{device} (1 GPU)")
        where = _fill(template, device=nodes.literal(text=stamp["device"]), gpus=nodes.Text(str(stamp["gpus"])))
    else:
        where = [nodes.Text(_("CPU (no GPU)"))]
    parts = _fill(_("Output captured on {where}"), where=where)
    parts += [nodes.Text(" · torch "), nodes.literal(text=stamp["torch"])]
    if stamp.get("cuda"):
        parts += [nodes.Text(" · CUDA "), nodes.literal(text=stamp["cuda"])]
    parts += [nodes.Text(" · ")] + _fill(_("commit {commit}"), commit=nodes.literal(text=stamp["commit"]))
    parts += [nodes.Text(" · "), nodes.literal(text=stamp["date"])]
    return parts


class ProvenanceDirective(SphinxDirective):
    has_content = False

    def run(self):
        target = Path(self.env.srcdir, self.env.docname + ".py")
        self.env.note_dependency(str(stamp_path(target)))
        stamp = read_stamp(target)
        if stamp and stamp["source"] == source_digest(target):
            self.env.metadata[self.env.docname][STAMP_META] = json.dumps(stamp, sort_keys=True)
            box = nodes.container(classes=["tutorial-provenance"])
            box += nodes.paragraph("", "", *describe(stamp))
            return [box]
        box = nodes.warning(classes=["tutorial-not-executed"])
        box += nodes.paragraph(
            text=_("This page was built without running the tutorial: its output is missing or out of date.")
        )
        return [box]


def add_stamp_meta(app, pagename, templatename, context, doctree):
    stamp = (context.get("meta") or {}).get(STAMP_META)
    if stamp:
        from html import escape

        context["metatags"] += f'\n<meta name="{STAMP_META}" content="{escape(stamp)}">'


def setup(app):
    app.add_directive("tutorial-provenance", ProvenanceDirective)
    app.connect("builder-inited", invalidate_stale_runs, priority=400)
    app.connect("source-read", add_directive)
    app.connect("html-page-context", add_stamp_meta)

"""A page's pieces for `tutorials-site import-translation`: written where the build asks (`tutorials_units`), by Sphinx's
gettext builder, one JSON file per page.

Each piece is a message exactly as the gettext builder extracts it (sphinx.util.nodes.extract_messages, as its
write_doc does), with its place in the document tree as its kind, or a literal block: code, which a translation
made in place leaves as it is, and which core.text.alignment pairs the two documents by.
"""

import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.nodes import extract_messages

from .. import __version__
from ..core.text.alignment import CODE
from ..sphinx_gallery_build import ExtensionMetadata

UNITS = "tutorials_units"  # core.config_values: the folder the pieces go to (set by the command, never conf.py)


def _place(node: nodes.Element) -> str:
    """Where a node stands: the names of the elements above it, down to its own ("section/bullet_list/...")."""
    names = []
    current: nodes.Element | None = node
    while current is not None and not isinstance(current, nodes.document):
        names.append(current.tagname)
        current = current.parent
    return "/".join(reversed(names))


def _where(node: nodes.Element) -> tuple[str, int]:
    current: nodes.Element | None = node
    while current is not None and not (current.source and current.line):
        current = current.parent
    return (current.source or "", current.line or 0) if current is not None else ("", 0)


def pieces(doctree: nodes.document) -> list[tuple[str, str, str, int]]:
    """(kind, text, source file, line) of each message and code block of a page, in reading order."""
    messages: dict[int, list[str]] = {}
    for node, message in extract_messages(doctree):
        messages.setdefault(id(node), []).append(message)
    found = []
    for node in doctree.findall(nodes.Element):
        if isinstance(node, nodes.literal_block):
            found.append((CODE, node.astext(), *_where(node)))
        found += [(_place(node), message, *_where(node)) for message in messages.get(id(node), ())]
    return found


def _write(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    folder = getattr(app.config, UNITS)
    if not folder or app.builder.name != "gettext":
        return
    path = Path(folder) / f"{docname}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(pieces(doctree), ensure_ascii=False), encoding="utf-8")


def setup(app: Sphinx) -> ExtensionMetadata:
    """Write each page's pieces as the gettext builder resolves it; nothing otherwise."""
    app.connect("doctree-resolved", _write)
    # One file per page, written by the process that writes the page.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

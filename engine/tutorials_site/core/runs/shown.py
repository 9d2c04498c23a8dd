"""What a run shows, as the build takes it: data it validates, never markup it trusts.

A run's record (result.json) and its figures are written by the tutorial's process, which the tutorial controls
whole: it can write them itself and exit. So the build takes from them data alone, and writes every byte of a
page's reST itself (sphinxext.gallery):

- texts (printed output, a text repr, a traceback): shown in literal blocks, with the characters a page cannot
  hold (C0 controls but tab and newline, lone surrogates, noncharacters) replaced; within the run's limits;
- figures: files of the run's figures folder only, each a PNG, JPEG, GIF or WebP image by its bytes (its first
  bytes are the format's signature, and its name's extension that format's), at most FIGURE_LIMIT bytes;
  anything else (an SVG, which a browser runs scripts in when it is opened, HTML named .png) is refused;
- alt texts: one line of plain text, at most ALT_LIMIT characters;
- an HTML repr (a DataFrame's table): sanitised with nh3 (the Ammonia sanitiser): elements and attributes of an
  allow-list, no script, no event handler, no `javascript:` URL, no style, no form; what is left is inert markup
  the theme styles. (Chosen over a sandboxed iframe: a table stays part of the page, themed, searchable and
  readable by a screen reader, without a height to guess; nothing a tutorial shows needs scripts to be read.)
- code objects (the names sphinx-gallery links to the API reference): dotted Python names and flags only.
"""

import dataclasses
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

import nh3

from .records import BlockRecord, RunRecord

FIGURE_LIMIT = 64 << 20  # bytes of one figure
ALT_LIMIT = 500  # characters of a figure's alt text
# A figure's format by its first bytes, and the extensions a file of that format may have.
_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "PNG", (".png",)), (b"\xff\xd8\xff", "JPEG", (".jpg", ".jpeg")),
               (b"GIF87a", "GIF", (".gif",)), (b"GIF89a", "GIF", (".gif",)))
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CODE_OBJECT_FIELDS = {"name": str, "module": str, "module_short": str, "is_class": bool, "is_explicit": bool}
_UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")


def figure_format(name: str, head: bytes) -> str | None:
    """The image format of the figure NAME whose first bytes are HEAD (16 are enough); None where it is not one
    of the formats a page shows, or not the one its extension says."""
    suffix = PurePosixPath(name).suffix.lower()
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP" if suffix == ".webp" else None
    return next((what for signature, what, suffixes in _SIGNATURES
                 if head.startswith(signature) and suffix in suffixes), None)


def text(value: str) -> str:
    """VALUE with what a page cannot hold replaced by U+FFFD (C0 controls but tab and newline, lone surrogates,
    noncharacters), as the runner's own terminal rendering leaves it."""
    return _UNSHOWABLE.sub("\ufffd", value)


def alt(value: str) -> str:
    """A figure's alt text as a page may hold it: one line of text, at most ALT_LIMIT characters."""
    return " ".join(text(value).split())[:ALT_LIMIT]


def html(value: str) -> str:
    """An HTML repr made inert (nh3's allow-list: no script, event handler, style or javascript: URL)."""
    return nh3.clean(text(value))


def code_objects(found: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of FOUND (sphinx-gallery's identify_names) that are what it writes: a dotted name, to a list of
    objects of dotted names and flags; any other entry left out."""
    kept: dict[str, Any] = {}
    for name, entries in found.items():
        if not (isinstance(name, str) and _DOTTED.fullmatch(name) and isinstance(entries, list)):
            continue
        valid = [entry for entry in entries if isinstance(entry, dict) and entry.keys() == _CODE_OBJECT_FIELDS.keys()
                 and all(type(entry[key]) is kind for key, kind in _CODE_OBJECT_FIELDS.items())
                 and all(_DOTTED.fullmatch(entry[key]) for key in ("name", "module", "module_short"))]
        if valid:
            kept[name] = valid
    return kept


def _block(block: BlockRecord, figures: frozenset[str]) -> BlockRecord:
    shown = [(image, alt(block.alts[i]) if i < len(block.alts) else "") for i, image in enumerate(block.images)
             if image in figures]
    return dataclasses.replace(block, texts=tuple(map(text, block.texts)), images=tuple(image for image, _ in shown),
                               alts=tuple(text for _, text in shown),
                               html=None if block.html is None else html(block.html))


def validated(record: RunRecord, figures: frozenset[str]) -> RunRecord:
    """RECORD as a page may show it: its texts, alt texts, HTML and code objects made safe (see above), and of its
    blocks' figures those among FIGURES (the run's figure files, relative to its page/ folder, checked by
    figure_format); the same again for a record already validated."""
    return dataclasses.replace(record, blocks=tuple(_block(block, figures) for block in record.blocks),
                               code_objects=code_objects(record.code_objects),
                               error=record.error and dataclasses.replace(record.error,
                                                                          message=text(record.error.message)))

"""Execution stamps: what vouches that a page's output comes from a run of its current source."""

import dataclasses
import hashlib
from collections.abc import Iterable
from pathlib import Path

from .records import RecordError, Stamp

# The <meta> name under which every tutorial page carries its stamp (checked by `tutorials-site check`).
STAMP_META = "tutorial-execution-stamp"


def stamp_path(target_file: Path | str) -> Path:
    """beginner/x.py -> beginner/x.stamp.json, beside sphinx-gallery's own caches."""
    target_file = Path(target_file)
    return target_file.with_name(target_file.stem + ".stamp.json")


def read_stamp(target_file: Path | str) -> Stamp | None:
    """The stamp copied beside a page's script; None when there is none, or none this build can read."""
    try:
        return Stamp.read(stamp_path(target_file))
    except RecordError:
        return None


def page_copy(stamp: Stamp, verified: bool = True) -> Stamp:
    """The stamp as a page carries it: without the seal, whose digests of the run's own files (its logs, its
    timed record) would make every page of two runs differ, and saying whether its run was VERIFIED; `tutorials-site check`
    holds the run beside the page to it."""
    return dataclasses.replace(stamp, files=(), verified=verified)


def shown_text(output: str) -> str:
    """A code block's output as its page shows it.

    The run's text is already what a terminal shows (core.terminal); of it, a page drops the blank lines
    at its start and end (Pygments) and each line's trailing blanks (docutils).
    """
    return "\n".join(line.rstrip() for line in output.strip("\n").splitlines())


def shown_html(html: str) -> str:
    """An HTML repr as its page holds it: its lines without their indentation (reST indents them), none blank."""
    return "\n".join(line.strip() for line in html.splitlines() if line.strip())


def outputs_digest(outputs: Iterable[str], images: Iterable[bytes], htmls: Iterable[str] = ()) -> str:
    """The digest of what a run shows: each non-empty output block's text, each figure's bytes, each HTML repr
    (sanitised: core.runs.shown).

    Computed from the run when it is stamped, and again from a built page by `tutorials-site check`.
    """
    digest = hashlib.sha256()
    for text in (shown_text(o) for o in outputs):
        if text.strip():
            digest.update(b"text\0" + text.encode() + b"\0")
    for data in images:
        digest.update(b"image\0" + hashlib.sha256(data).digest())
    for html in (shown_html(h) for h in htmls):
        if html:
            digest.update(b"html\0" + html.encode() + b"\0")
    return digest.hexdigest()

"""Execution stamps: what vouches that a page's output comes from a run of its current source."""

import hashlib
import json
from pathlib import Path

# The <meta> name under which every tutorial page carries its stamp (checked by `make check`).
STAMP_META = "tutorial-execution-stamp"


def stamp_path(target_file):
    """beginner/x.py -> beginner/x.stamp.json, beside sphinx-gallery's own caches."""
    target_file = Path(target_file)
    return target_file.with_name(target_file.stem + ".stamp.json")


def read_stamp(target_file):
    try:
        return json.loads(stamp_path(target_file).read_text())
    except (OSError, ValueError):
        return None


def shown_text(output):
    """A code block's output as its page shows it.

    The run's text is already what a terminal shows (core.terminal); of it, a page drops the blank lines
    at its start and end (Pygments) and each line's trailing blanks (docutils).
    """
    return "\n".join(line.rstrip() for line in output.strip("\n").splitlines())


def outputs_digest(outputs, images):
    """The digest of what a run shows: each non-empty output block's text, then each figure's bytes.

    Computed from the run when it is stamped, and again from a built page by `make check`.
    """
    digest = hashlib.sha256()
    for text in (shown_text(o) for o in outputs):
        if text.strip():
            digest.update(b"text\0" + text.encode() + b"\0")
    for data in images:
        digest.update(b"image\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def stamp_problems(stamp, source_digest, environment, outputs=None):
    """Why a stamp does not vouch for the output of `source_digest` run in `environment` (empty: it does).

    `outputs`: the outputs digest of what is shown, when known (it must be the one the run stamped).
    """
    problems = []
    if outputs is not None and stamp.get("outputs") != outputs:
        problems.append("the output shown is not what the run produced (edited after the run?)")
    if stamp["source"] != source_digest:
        problems.append("output comes from another version of the source")
    if stamp["environment"] != environment:
        problems.append("executed in another environment (conf.py, tutorials_site or installed packages changed since)")
    if not stamp["seconds"] > 0:
        problems.append("zero-time run")
    return problems

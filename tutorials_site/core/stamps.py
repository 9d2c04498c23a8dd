"""Execution stamps: what vouches that a page's output comes from a run of its current source."""

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


def stamp_problems(stamp, source_digest, environment):
    """Why a stamp does not vouch for the output of `source_digest` run in `environment` (empty: it does)."""
    problems = []
    if stamp["source"] != source_digest:
        problems.append("output comes from another version of the source")
    if stamp["environment"] != environment:
        problems.append("executed in another environment (conf.py, tutorials_site or installed packages changed since)")
    if not stamp["seconds"] > 0:
        problems.append("zero-time run")
    return problems

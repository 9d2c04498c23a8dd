"""Runs: one execution of a tutorial's English source, shared by every language's page.

A run folder (BuildTree.run_dir) holds what the runner recorded, result.json
(each code block's output and figures, the error if any) and page/ (the
figures, where the page shows them), and,
after a successful run, stamp.json: the digest of the source that ran, the
environment fingerprint, what the run cost and where it ran. A run without a
stamp, or whose stamp does not match the current source and environment, is
not current: the build runs the tutorial again (or `make assemble` refuses).
"""

import json
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from .stamps import outputs_digest, stamp_problems

RESULT = "result.json"
STAMP = "stamp.json"
# A tutorial's own time limit, a comment line in its source: `# tutorials-timeout: 120` (seconds).
TIMEOUT_COMMENT = re.compile(r"^[ \t]*#[ \t]*tutorials-timeout:(.*)\n?", re.MULTILINE)


def first_code_line(block):
    """Where a reader looks for a code block that hung or crashed: its first line that is not blank."""
    content = block.content
    return block.lineno + content.count("\n", 0, len(content) - len(content.lstrip()))


def read_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path, data):
    """Atomically: a reader never sees half a file."""
    tmp = Path(path).with_suffix(".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def outputs(run_dir, result):
    """The outputs digest of a run: its blocks' text and its figures' bytes, in order."""
    images = [Path(run_dir, "page", name).read_bytes() for block in result["blocks"] for name in block["images"]]
    return outputs_digest([text for block in result["blocks"] for text in block["texts"]], images)


def problems(run_dir, source_digest, environment):
    """Why the run in `run_dir` does not stand for `source_digest` in `environment` (empty: it does)."""
    stamp, result = read_json(Path(run_dir, STAMP)), read_json(Path(run_dir, RESULT))
    if stamp is None or result is None:
        return ["not executed"]
    try:
        shown = outputs(run_dir, result)
    except (OSError, KeyError, TypeError):
        return ["the run's record is damaged"]
    return stamp_problems(stamp, source_digest, environment, shown)


def origin(root):
    """The commit the run comes from (+changes when the work tree differs) and the date."""
    def git(*args):
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "+changes"
    return {"commit": commit, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}

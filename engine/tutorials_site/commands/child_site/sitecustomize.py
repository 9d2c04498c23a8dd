"""Run at start-up by every Python process a tutorial starts (the runner puts this folder first on
PYTHONPATH): output a line at a time, each line written whole as soon as it ends, so that the
lines of processes printing at once (DDP ranks, pool workers) come out in the order they were
written and never mixed within a line. (Unbuffered, PYTHONUNBUFFERED, a print writes its text
and its newline apart; the runner itself stays so, for its partial lines to keep their place.)
"""

import io
import sys

for stream in (sys.stdout, sys.stderr):
    if isinstance(stream, io.TextIOWrapper):  # as Python opens them; None without a stream
        stream.reconfigure(line_buffering=True, write_through=False)

# What this process uses joins the tutorial's fingerprint (tutorials_site_used.py, beside this file).
import tutorials_site_used  # type: ignore[import-not-found]  # noqa: E402 (on PYTHONPATH beside this file)

tutorials_site_used.install_from_environment()

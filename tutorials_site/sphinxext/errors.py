"""A failing tutorial reported as `file:line: ERROR: exception`, the form editors and CI annotate.

sphinx-gallery's own summary (a warning here, so that `-W --keep-going`
finishes the build and then fails it) keeps the full traceback; this adds one
line per failure naming the tutorial file in the repository and the line that
raised. Translated sources keep the English line numbers, so the line is right
for every language.
"""

import os
import re

from sphinx.util import logging

logger = logging.getLogger(__name__)


def failure_location(src_file, formatted_exception):
    """(line, last line of the traceback) of the deepest frame inside the tutorial itself."""
    frames = re.findall(rf'File "{re.escape(str(src_file))}", line (\d+)', formatted_exception)
    lines = [line for line in formatted_exception.strip().splitlines() if line.strip()]
    return (int(frames[-1]) if frames else None), (lines[-1].strip() if lines else "")


def report_failures(app, exception):
    conf = app.config.sphinx_gallery_conf
    for src_file, formatted in sorted(conf.get("failing_examples", {}).items()):
        line, error = failure_location(src_file, formatted)
        path = os.path.relpath(src_file, app.srcdir)  # beginner_source/x.py, as in the repository
        logger.error("tutorial failed: %s", error, location=f"{path}:{line}" if line else path)


def setup(app):
    app.connect("build-finished", report_failures, priority=400)

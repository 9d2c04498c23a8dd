"""Sphinx configuration of the pinwheel guide (바람개비 안내서), a small site written in Korean.

tests/test_moved_site.py builds it with plain sphinx-build and stock sphinx-gallery, and moved into a copy of
this project, as the README's "Moving an existing Sphinx-Gallery repository here" moves a site.
"""

import importlib.util
import os
import sys

# The site's own extension and its words, found from this file's folder (Sphinx evaluates conf.py there).
sys.path.insert(0, os.path.abspath("_ext"))

from pinwheel import SITE_NAME  # noqa: E402 (found through the line above)

project = SITE_NAME
copyright = "2026, 바람개비 안내서를 쓴 사람들"
language = "ko"  # the language the pages and the tutorials are written in

extensions = [
    "sphinx_gallery.gen_gallery",
    "pinwheel",
    "tutorials_site.sphinxext",  # the engine: a stock build drops this one entry
]

sphinx_gallery_conf = {
    "examples_dirs": ["tutorials_source"],
    "gallery_dirs": ["tutorials"],
    "write_computation_times": False,
    "download_all_examples": False,
}

# Sphinx reads neither the scripts (sphinx-gallery makes their pages) nor the fragments pages include.
exclude_patterns = ["_build", "tutorials_source", "_snippets"]

# A theme other than the engine's own: furo where installed, else pydata-sphinx-theme (the test says which).
html_theme = next((name for name in ("furo", "pydata_sphinx_theme") if importlib.util.find_spec(name)),
                  "sphinx_rtd_theme")
html_title = SITE_NAME
html_static_path = ["_static"]

rst_epilog = f"\n.. |site| replace:: {SITE_NAME}\n"

# What `%%바람%%` on a page becomes: put in by the source-read handler below.
WIND = "남서풍"


def _name_the_wind(app, docname, source):
    source[0] = source[0].replace("%%바람%%", WIND)


def setup(app):
    app.add_css_file("pinwheel.css")
    app.connect("source-read", _name_the_wind)

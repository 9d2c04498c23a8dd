"""Sphinx configuration of the PyTorch tutorials site.

Built once per language by `python -m tutorials_site html` (the Makefile's
`html` target): the source tree is staged under _build/src/<lang>/ and this file
is shared by every language through `sphinx-build -c`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from tutorials_site.core import layout  # noqa: E402

project = "PyTorch Tutorials"
copyright = "2026, the PyTorch Tutorials site authors"
version = release = ""  # the version being built: passed by the build command
# Where the site is published: the GitHub repository (its gh-pages branch) and the Pages URL.
tutorials_github_repo = "pytorch-tutorials-site/tutorials"
tutorials_site_url = "https://pytorch-tutorials-site.github.io/tutorials/"

extensions = [
    "myst_parser",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "tutorials_site.sphinxext",
]

sphinx_gallery_conf = {
    "examples_dirs": list(layout.GALLERIES),
    "gallery_dirs": list(layout.GALLERIES.values()),
    # Every tutorial has a page, not only plot_*.py. sphinx-gallery executes none of them: the build
    # runs each one once in a process of its own and hands the outputs over (tutorials_site.sphinxext.gallery).
    "filename_pattern": r"\.py$",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "write_computation_times": False,
}

# Languages: the build driver stages each language's sources and compiled catalogs.
locale_dirs = ["_locale"]
gettext_compact = "site"  # the hand-written pages share one catalog per language

templates_path = ["_templates"]
html_static_path = ["_static"]
html_theme = "sphinx_rtd_theme"
html_title = project
html_last_updated_fmt = None
exclude_patterns = list(layout.GALLERIES)  # tutorial scripts reach Sphinx through sphinx-gallery only
copybutton_exclude = ".linenos, .gp, .go"
# Code colours meeting WCAG AA (accessible-pygments); the dark scheme's: tutorials_site/sphinxext/color_scheme.py.
pygments_style = "a11y-light"
html_css_files = ["tutorials.css"]
html_favicon = "_static/favicon.svg"
html_show_sphinx = False  # the footer says it in one translatable sentence (_templates/footer.html)

"""Sphinx configuration of the PyTorch tutorials site: what any Sphinx-Gallery site writes, plus the
engine's extension (`tutorials_site.sphinxext`, from engine/), which brings its own templates, styles and
label translations. `make html` (`tutorials-site html`) builds it in every language; `sphinx-build` alone
builds it too.
"""

from pathlib import Path

project = "PyTorch Tutorials"
copyright = "2026, the PyTorch Tutorials site authors"
version = release = ""  # the version being built: passed by the build command
# Where the site is published: the GitHub repository (its gh-pages branch: Colab links) and the Pages URL.
tutorials_github_repo = "pytorch-tutorials-site/tutorials"
tutorials_site_url = "https://pytorch-tutorials-site.github.io/tutorials/"
# Search results and link previews of the pages without text of their own.
tutorials_site_description = ("PyTorch tutorials in English, Korean, Japanese and Chinese, executed when the site "
                              "is built: every output on a page was printed by the code above it.")

extensions = [
    "myst_parser",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "tutorials_site.sphinxext",
]

# The galleries and their options, as in any sphinx-gallery project (see the README's "Moving an
# existing Sphinx-Gallery repository here"). sphinx-gallery executes none of the tutorials: the
# build runs each one once in a process of its own and sphinx-gallery renders its pages from that run.
sphinx_gallery_conf = {
    "examples_dirs": ["beginner_source"],  # tutorial source folders ...
    "gallery_dirs": ["beginner"],  # ... and the URL segment of each one's pages
    "filename_pattern": r"\.py$",  # every tutorial is executed, not only plot_*.py
    "within_subsection_order": "FileNameSortKey",  # a section's reading order: its file names (1_..., 2_...)
    "remove_config_comments": True,
    "download_all_examples": False,
    "write_computation_times": False,
    # The picture of a tutorial that draws no figure: 6 KB as a thumbnail, where sphinx-gallery's own is 27 KB,
    # most of what a gallery index weighs on a phone.
    "default_thumb_file": str(Path(__file__).parent / "_static" / "thumbnail.png"),
}

# The languages the site is read in: its sources' (`language`) first, the others from locales/<code>/ catalogs.
language = "en"
tutorials_languages = ["en", "ko", "ja", "zh_CN"]

html_theme = "sphinx_rtd_theme"
html_title = project
html_last_updated_fmt = None
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"
# Scripts reach Sphinx through sphinx-gallery only; the rest is the repository's, not pages: its README and
# guides for contributors, the engine (engine/: its own README and guides), the tests, CI files, the catalogs
# folder (its glossaries are Markdown), the builds and the published tree.
exclude_patterns = [*sphinx_gallery_conf["examples_dirs"], "README.md", "CONTRIBUTING.md", "TRANSLATING.md",
                    "engine", "tests", ".github", ".ci", "locales", "_build", "_device", "docs", ".venv"]
copybutton_exclude = ".linenos, .gp, .go"
# Code colours meeting WCAG AA (accessible-pygments); the dark scheme's: tutorials_site/sphinxext/color_scheme.py.
pygments_style = "a11y-light"

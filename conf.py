"""Sphinx configuration of the PyTorch tutorials site.

Built once per language by `python -m tutorials_site html` (the Makefile's
`html` target): the source tree is staged under _build/src/<lang>/ and this file
is shared by every language through `sphinx-build -c`.
"""

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

# The galleries and their options, as in any sphinx-gallery project (see the README's "Moving an
# existing Sphinx-Gallery repository here"). sphinx-gallery executes none of the tutorials: the
# build runs each one once in a process of its own and sphinx-gallery renders its pages from that run.
sphinx_gallery_conf = {
    "examples_dirs": ["beginner_source"],  # tutorial source folders ...
    "gallery_dirs": ["beginner"],  # ... and the URL segment of each one's pages
    "filename_pattern": r"\.py$",  # every tutorial is executed, not only plot_*.py
    "remove_config_comments": True,
    "download_all_examples": False,
    "write_computation_times": False,
}

# The languages the site is read in: its sources' (`language`) first, the others from locales/<code>/ catalogs.
language = "en"
tutorials_languages = ["en", "ko", "ja", "zh_CN"]

templates_path = ["_templates"]
html_static_path = ["_static"]
html_theme = "sphinx_rtd_theme"
html_title = project
html_last_updated_fmt = None
exclude_patterns = list(sphinx_gallery_conf["examples_dirs"])  # scripts reach Sphinx through sphinx-gallery only
copybutton_exclude = ".linenos, .gp, .go"
# Code colours meeting WCAG AA (accessible-pygments); the dark scheme's: tutorials_site/sphinxext/color_scheme.py.
pygments_style = "a11y-light"
html_css_files = ["tutorials.css"]
html_favicon = "_static/favicon.svg"
html_show_sphinx = False  # the footer says it in one translatable sentence (_templates/footer.html)

"""The engine of a multilingual, executed Sphinx-Gallery site, in three parts with imports one way:

- core: plain logic (languages, catalogs, translations, versions, stamps, the build folder);
- sphinxext: what runs inside Sphinx, listed in a site's conf.py as one extension;
- commands: the `tutorials-site` command line (`python -m tutorials_site` too);

and, beside them, sphinx-gallery's door, split by where it runs: sphinx_gallery_run (in a tutorial's process: what
it does is versioned by the run protocol, core.runs.protocol) and sphinx_gallery_build (in Sphinx and the build's
own process); its formats and names, which core/ uses too, are core.sphinx_gallery_formats.
"""

# The engine's release (its distribution's version, which its Sphinx extension reports to conf.py's
# `needs_extensions`); the site's versions are git's (core.site.versions).
__version__ = "2.0.0"

"""The tutorials site's own code, in three parts with imports one way:

- core: plain logic (languages, catalogs, translations, versions, stamps, the build folder);
- sphinxext: what runs inside Sphinx, listed in conf.py as one extension;
- commands: `python -m tutorials_site <command>`, the Makefile's targets;

and, beside them, sphinx-gallery's door, split by where it runs: sphinx_gallery_run (in a tutorial's process, part
of the run code's fingerprint) and sphinx_gallery_build (in Sphinx and the build's own process); its formats and names,
which core/ uses too, are core.sphinx_gallery_formats.
"""

# The package's own version, which its Sphinx extension reports (conf.py's `needs_extensions` reads it);
# the site's versions are git's (core.site.versions).
__version__ = "1.0"

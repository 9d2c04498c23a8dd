"""The tutorials site's own code, in three parts with imports one way:

- core: plain logic (languages, catalogs, translations, versions, stamps, the build folder);
- sphinxext: what runs inside Sphinx, listed in conf.py as one extension;
- commands: `python -m tutorials_site <command>`, the Makefile's targets;

and, beside them, sphinx_gallery_api: the one module that reaches sphinx-gallery, for sphinxext and commands.
"""

# The package's own version, which its Sphinx extension reports (conf.py's `needs_extensions` reads it);
# the site's versions are git's (core.versions).
__version__ = "1.0"

"""The tutorials site's own code, in three parts with imports one way:

- core: plain logic (languages, catalogs, translations, versions, stamps, the build folder);
- sphinxext: what runs inside Sphinx, listed in conf.py as one extension;
- commands: `python -m tutorials_site <command>`, the Makefile's targets.
"""

"""The tutorials site's Sphinx extension, listed in conf.py as "tutorials_site.sphinxext".

Each module wires its own part; they import from tutorials_site.core only.
"""

from . import colab, gallery, i18n, provenance, search, versions


def setup(app):
    colab.setup(app)
    gallery.setup(app)
    i18n.setup(app)
    search.setup(app)
    provenance.setup(app)
    versions.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The tutorials site's Sphinx extension, listed in conf.py as "tutorials_site.sphinxext".

Each module wires its own part; they import from tutorials_site.core only.
"""

from . import colab, color_scheme, gallery, i18n, meta, provenance, search, versions


def setup(app):
    colab.setup(app)
    color_scheme.setup(app)
    gallery.setup(app)
    i18n.setup(app)
    meta.setup(app)
    search.setup(app)
    provenance.setup(app)
    versions.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

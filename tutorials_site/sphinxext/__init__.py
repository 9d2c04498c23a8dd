"""The tutorials site's own Sphinx extension and build helpers.

Listed in conf.py's `extensions` as "tutorials_site"; each module wires its own part.
"""

from . import colab, errors, i18n, provenance, search, versions


def setup(app):
    colab.setup(app)
    errors.setup(app)
    i18n.setup(app)
    search.setup(app)
    provenance.setup(app)
    versions.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

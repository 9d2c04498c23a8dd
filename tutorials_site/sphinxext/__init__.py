"""The tutorials site's Sphinx extension, listed in conf.py as "tutorials_site.sphinxext".

Each module wires its own part; they import from tutorials_site.core only. Each
module's setup says whether its handlers are safe under `sphinx-build -j` and why.
Every warning they log has type "tutorials" and a subtype (guides/building.md: "Warnings"),
so that conf.py's `suppress_warnings = ["tutorials.<subtype>"]` silences it.
"""

from sphinx.application import Sphinx
from sphinx.util.typing import ExtensionMetadata

from .. import __version__
from ..core import config_values
from . import assets, cards, colab, color_scheme, gallery, i18n, meta, page, provenance, search, units, versions

# In this order: the handlers of one event run in the order they were connected (the page's tags follow it).
PARTS = (assets, cards, colab, color_scheme, gallery, i18n, meta, page, search, provenance, versions, units)


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the engine's settings Sphinx reads (core.config_values, their one list), then set every part up;
    the extension is safe in parallel where each of its parts is."""
    for value in config_values.VALUES:
        if value.rebuild is not None:
            app.add_config_value(value.name, value.default, value.rebuild, types=value.types)
    parts: list[ExtensionMetadata] = [part.setup(app) for part in PARTS]
    return {"version": __version__,
            "parallel_read_safe": all(part["parallel_read_safe"] for part in parts),
            "parallel_write_safe": all(part["parallel_write_safe"] for part in parts)}

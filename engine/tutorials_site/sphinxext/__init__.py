"""The tutorials site's Sphinx extension, listed in conf.py as "tutorials_site.sphinxext".

Each module wires its own part; they import from tutorials_site.core only. Each
module's setup says whether its handlers are safe under `sphinx-build -j` and why.
Every warning they log has type "tutorials" and a subtype (guides/building.md: "Warnings"),
so that conf.py's `suppress_warnings = ["tutorials.<subtype>"]` silences it.
"""

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

from .. import __version__
from .. import sphinx_gallery_build as sg
from ..core import config_values
from ..core.runs.records import RecordError
from ..core.site import build_values
from ..sphinx_gallery_build import ExtensionMetadata
from . import assets, cards, colab, color_scheme, gallery, i18n, kept_warnings, meta, page, provenance, search, units, versions

# In this order: the handlers of one event run in the order they were connected (the page's tags follow it).
PARTS = (assets, cards, colab, color_scheme, gallery, i18n, meta, page, search, provenance, versions, units, kept_warnings)
# What the extension keeps on Sphinx's environment (kept_warnings' warnings, gallery's downloads): raised whenever
# that changes, so that Sphinx reads every page again rather than an environment kept by another version.
ENV_VERSION = 1


def take_build_values(app: Sphinx, config: Config) -> None:
    """Set the `tutorials_*` settings the build hands Sphinx from the record `tutorials_build_values` names
    (core.site.build_values), where it names one (config-inited, before every other handler: they read them)."""
    if not config.tutorials_build_values:
        return
    path = Path(config.tutorials_build_values)
    try:
        values = build_values.BuildValues.read(path)
    except RecordError as error:
        raise ConfigError(f"{error}; build again with the make command, which writes it") from None
    if values is None:
        raise ConfigError(f"{path}: no such file ({build_values.SETTING}); build with the make command, which writes it")
    for name, value in values.settings().items():
        setattr(config, name, value)


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the engine's settings Sphinx reads (core.config_values, their one list), then set every part up;
    the extension is safe in parallel where each of its parts is."""
    sg.keep_conf_py_values(app.config)  # before Sphinx 7.2 applies the command line's settings over them
    for value in config_values.VALUES:
        if value.rebuild is not None:
            app.add_config_value(value.name, value.default, value.rebuild, types=value.types)
    app.connect("config-inited", take_build_values, priority=0)
    parts: list[ExtensionMetadata] = [part.setup(app) for part in PARTS]
    return {"version": __version__, "env_version": ENV_VERSION,
            "parallel_read_safe": all(part["parallel_read_safe"] for part in parts),
            "parallel_write_safe": all(part["parallel_write_safe"] for part in parts)}

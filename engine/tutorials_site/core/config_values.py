"""The engine's own conf.py settings, every `tutorials_*` name, in one list: sphinxext registers those Sphinx reads
from it (app.add_config_value), and core.project refuses a `tutorials_*` name of conf.py that is not in it, with
the closest name, before anything runs (Sphinx would ignore a misspelt one without a word).

A setting the build passes itself (`by_build`: in its record, core.site.build_values) is refused in conf.py too: the
build's value would replace it.
"""

from dataclasses import dataclass
from typing import Any, Literal

PREFIX = "tutorials_"


@dataclass(frozen=True)
class ConfigValue:
    """One `tutorials_*` setting: its default and when a change re-renders pages (Sphinx's `rebuild`: "env" reads
    every page again, "html" writes them again; None: read by the commands only, never registered in Sphinx)."""

    name: str
    default: Any
    rebuild: Literal["env", "html"] | None
    types: tuple[type, ...]  # the types Sphinx accepts without a warning (a registered setting's)
    by_build: bool = False  # passed by the build driver on Sphinx's command line, never written in conf.py


VALUES = (
    # conf.py's: where the site is published, what it is, its languages, what tutorials get and need.
    ConfigValue("tutorials_github_repo", "", "html", (str,)),  # sphinxext.colab: the Colab links' repository
    ConfigValue("tutorials_site_url", "", "html", (str,)),  # sphinxext.versions
    ConfigValue("tutorials_site_description", "", "html", (str,)),  # sphinxext.meta
    ConfigValue("tutorials_languages", None, "html", (list, tuple)),  # sphinxext.i18n, core.project
    ConfigValue("tutorials_environment", None, None, ()),  # core.runs.isolation
    ConfigValue("tutorials_needs", None, None, ()),  # core.runs.needs
    ConfigValue("tutorials_commit", "", "html", (str,)),  # sphinxext.page: "View on GitHub" (default: git's HEAD)
    # The version (a name, or "stable") and the language (a code, default the source one) whose pages the site's
    # addresses without version and language named before it was versioned (`/<page>`): `publish` sends each such
    # address to its page there (core.site.publish). Default "": no address of the kind.
    ConfigValue("tutorials_root_version", "", None, ()),
    # Patterns of the tutorials that may fail where the site is built, without failing it (core.project).
    ConfigValue("tutorials_allowed_failures", (), None, ()),
    ConfigValue("tutorials_root_language", "", None, ()),
    # The build's: the languages of this build, the published versions, the runs pages are rendered from.
    # The one `-D` value of the engine's own: the path of the record the next ones come in (core.site.build_values).
    ConfigValue("tutorials_build_values", "", "env", (str,), by_build=True),
    ConfigValue("tutorials_built_languages", (), "html", (tuple, list), by_build=True),  # sphinxext.i18n
    ConfigValue("tutorials_strict", False, "env", (bool,), by_build=True),  # re-read: warnings come from reading
    ConfigValue("tutorials_versions", (), "html", (tuple, list), by_build=True),  # sphinxext.versions
    ConfigValue("tutorials_runs", "", "env", (str,), by_build=True),  # sphinxext.gallery
    ConfigValue("tutorials_root", "", "env", (str,), by_build=True),  # the sources' folder (project_root)
    ConfigValue("tutorials_unrun", (), "env", (tuple, list), by_build=True),  # a TUTORIALS build's others
    # Set by sphinxext itself at config-inited: the label catalogs' digest (i18n), show_memory taken (gallery).
    ConfigValue("tutorials_label_catalog", "", "env", (str,), by_build=True),
    ConfigValue("tutorials_show_memory", False, "env", (bool,), by_build=True),
    ConfigValue("tutorials_repo_prefix", "", "html", (str,), by_build=True),  # page: the site's folder in its repository
    ConfigValue("tutorials_units", "", "env", (str,), by_build=True),  # sphinxext.units: import-translation's pieces
)
NAMES = frozenset(value.name for value in VALUES)
IN_CONF = tuple(value.name for value in VALUES if not value.by_build)  # what conf.py may set

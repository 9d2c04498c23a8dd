"""What the build hands Sphinx: one record (BuildValues) per Sphinx run, whose path is the one `-D` value the
engine passes (`tutorials_build_values`); sphinxext reads it with its one strict reader before any other handler
and sets the `tutorials_*` settings it holds (core.config_values), each with its own rebuild level, so a change of
one renders again what it must and no more. (Sphinx's own settings, `language`, `version`, stay `-D` values.)

Not part of a run's fingerprint: no module that runs a tutorial imports it.
"""

import dataclasses
from typing import Any, ClassVar

from ..config_values import PREFIX
from ..runs.records import Record, VersionEntry

FILE = "tutorials-build-values.json"  # in the Sphinx run's doctrees folder (core.site.build_cache digests it)
SETTING = "tutorials_build_values"  # the `-D` setting that names it


@dataclasses.dataclass(frozen=True, kw_only=True)
class BuildValues(Record):
    """The build's values of the `tutorials_*` settings of one Sphinx run, by name less the prefix."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = f"record of the build's settings for Sphinx ({FILE})"

    root: str  # the sources' folder (project_root); the staged tree holds the translated scripts
    built_languages: tuple[str, ...] = ()  # the URL segments of the languages a page links to (sphinxext.i18n)
    versions: tuple[VersionEntry, ...] = ()  # those already published (versions.json), for pages opened from disk
    runs: str = ""  # the runs folder pages are rendered from; empty: they show no output (sphinxext.gallery)
    unrun: tuple[str, ...] = ()  # the keys of the tutorials a TUTORIALS build shows without output
    strict: bool = False  # STRICT=1: what would be shown untranslated is an error (sphinxext.i18n)
    units: str = ""  # where `tutorials-site import-translation`'s gettext run writes each page's pieces (sphinxext.units)

    def settings(self) -> dict[str, Any]:
        """{setting name: value} of each `tutorials_*` setting it holds."""
        return {PREFIX + field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

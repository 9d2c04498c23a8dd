"""Every build tells all of its warnings, those of the pages it does not read again included.

Sphinx reads again only the pages that changed, and says nothing of the others' warnings: a site that warns would
see its warnings once, then never until each page changes (and this build's driver used to read every page
again to tell them). Here each warning is kept with the page it belongs to, and told again, as it was, by each
build that does not make that page tell it itself:

- reading's warnings on the environment (`env.tutorials_warnings`), as Sphinx keeps what it learns of a page:
  pickled with it, dropped with a page read again or removed (env-purge-doc), merged back from a parallel
  reader (env-merge-info); told again when reading starts, for each page not to be read (env-before-read-docs);
- the consistency check's and writing's, which Sphinx gives after it saved the environment, in a record beside
  it (LATE): the check's all together (it checks every page, and only where a page was read), writing's per
  page written; told again at the end of a build that did not check, or did not write the page.

A warning belongs to the page its location names (a page, or a file of one), else to the page being read or
resolved when it was logged; one that belongs to none is given by every build (configuration, extensions'
set-up) and is not kept. Told again, a warning goes through Sphinx's logging as it first did: suppress_warnings
and -W treat it the same, and Sphinx counts it.
"""

import dataclasses
import logging
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging as sphinx_logging
from sphinx.util.build_phase import BuildPhase

from .. import __version__
from .. import sphinx_gallery_build as sg
from ..core.runs.records import Record, RecordError
from ..sphinx_gallery_build import ExtensionMetadata

logger = sphinx_logging.getLogger(__name__)
ENV_ATTRIBUTE = "tutorials_warnings"  # reading's warnings, {docname: [Kept, ...]}, on the environment
LATE = "tutorials-warnings.json"  # the consistency check's and writing's, beside the environment (doctreedir)
RETOLD = "tutorials_retold"  # a record's attribute: a warning told again, not kept again
_SEEN = "tutorials_seen"  # a record's attribute: kept already (Sphinx hands a postponed warning on twice)
_WRITING = (BuildPhase.RESOLVING, BuildPhase.WRITING)  # RESOLVING is CONSISTENCY_CHECK's value


@dataclasses.dataclass(frozen=True)
class Kept:
    """One warning as it was logged: its level, its text, its type and its location (a page and line, or a
    file's "path:line" as Sphinx gave it, or none)."""

    level: int
    message: str
    type: str | None = None
    subtype: str | None = None
    page: str | None = None
    line: int | None = None
    where: str | None = None

    def tell(self) -> None:
        """Log the warning again, as it was logged."""
        location = (self.page, self.line) if self.page is not None else self.where
        logger.log(self.level, "%s", self.message, type=self.type, subtype=self.subtype, location=location,
                   extra={RETOLD: True})


@dataclasses.dataclass(frozen=True)
class PageWarnings:
    """Warnings given for one page (none: the site's)."""

    docname: str
    warnings: tuple[Kept, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LateWarnings(Record):
    """LATE: the warnings of the last consistency check, and of writing each page, as last given."""

    FORMAT: ClassVar[int] = 1
    NAME: ClassVar[str] = f"record of the warnings given after reading ({LATE})"

    checked: tuple[PageWarnings, ...] = ()
    written: tuple[PageWarnings, ...] = ()


def kept_on(env: BuildEnvironment) -> dict[str, list[Kept]]:
    """Reading's warnings kept on ENV, by page (made where the environment has none yet)."""
    if not hasattr(env, ENV_ATTRIBUTE):
        setattr(env, ENV_ATTRIBUTE, {})
    kept: dict[str, list[Kept]] = getattr(env, ENV_ATTRIBUTE)
    return kept


def page_of(env: BuildEnvironment, location: Any) -> str | None:
    """The page a warning's LOCATION names (Sphinx's forms: a page, (page, line), a node, "path:line"), else the
    page being read or resolved; None for neither."""
    if isinstance(location, tuple):
        return location[0] or None
    if isinstance(location, nodes.Node):
        location = sg.node_location(location)
    if isinstance(location, str) and ":" not in location:
        return location
    if isinstance(location, str):
        path = location.rsplit(":", 1)[0]
        found = env.path2doc(path) if Path(path).is_absolute() else None
        if found is not None:
            return found
    return sg.page_being_read(env)


def kept_from(record: logging.LogRecord) -> Kept:
    """The warning RECORD logged, as it was logged."""
    location = getattr(record, "location", None)
    kept = Kept(level=record.levelno, message=logging.LogRecord.getMessage(record),
                type=getattr(record, "type", None), subtype=getattr(record, "subtype", None))
    if isinstance(location, tuple):
        return dataclasses.replace(kept, page=location[0], line=location[1]) if location[0] else kept
    if isinstance(location, nodes.Node):
        location = sg.node_location(location)
    if isinstance(location, str) and ":" not in location:
        return dataclasses.replace(kept, page=location)
    return dataclasses.replace(kept, where=location)


def _by_page(pages: dict[str, list[Kept]]) -> tuple[PageWarnings, ...]:
    return tuple(PageWarnings(docname, tuple(warnings)) for docname, warnings in sorted(pages.items()) if warnings)


def _tell(pages: dict[str, list[Kept]]) -> None:
    for _, warnings in sorted(pages.items()):
        for warning in warnings:
            warning.tell()


class Keeper(logging.Handler):
    """One application's warnings: it sees each as it is logged (first of Sphinx's handlers), keeps it by phase
    and page, and tells again what this build does not give (see the module's docstring)."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__(logging.WARNING)
        self.app = app
        self.late = LateWarnings()  # as the last build left it
        self.checking_now: dict[str, list[Kept]] = {}  # given in the check's phase, before it ended
        self.checked: dict[str, list[Kept]] | None = None  # this build's consistency check's, once it ended
        self.written: dict[str, list[Kept]] = {}  # this build's writing's, by page written

    def emit(self, record: logging.LogRecord) -> None:
        """Keep RECORD's warning with its page, in its phase's store.

        Sphinx's consistency check and its resolving of references share a phase: a warning of that phase
        belongs to writing where a page is being resolved or written, else to the check, which says that it
        ran once it ended (checking).
        """
        if getattr(record, RETOLD, False) or getattr(record, _SEEN, False):
            return
        setattr(record, _SEEN, True)
        phase, env = self.app.phase, self.app.env
        docname = page_of(env, getattr(record, "location", None))
        if phase == BuildPhase.READING and docname is not None:
            kept_on(env).setdefault(docname, []).append(kept_from(record))
        elif phase in _WRITING and docname is not None and (docname in self.written
                                                           or docname == sg.page_being_read(env)):
            self.written.setdefault(docname, []).append(kept_from(record))
        elif phase == BuildPhase.CONSISTENCY_CHECK and self.checked is None:
            self.checking_now.setdefault(docname or "", []).append(kept_from(record))

    def start(self, app: Sphinx) -> None:
        """builder-inited: see every warning first, and read what the last build gave after reading."""
        sphinx_logger = logging.getLogger(sphinx_logging.NAMESPACE)
        sphinx_logger.handlers.insert(0, self)  # before Sphinx's own handlers change the record
        try:
            self.late = LateWarnings.read(Path(app.doctreedir, LATE)) or LateWarnings()
        except RecordError:
            self.late = LateWarnings()  # another format: what this build gives replaces it
        kept_on(app.env)

    def tell_unread(self, app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
        """env-before-read-docs: tell again reading's warnings of each page not to be read."""
        reading = set(docnames)
        _tell({docname: warnings for docname, warnings in kept_on(env).items()
               if docname not in reading and docname in env.found_docs})

    def checking(self, app: Sphinx, env: BuildEnvironment) -> None:
        """env-check-consistency (at the end of the check): this build checked, its warnings replace the last's."""
        self.checked = self.checking_now

    def writing(self, app: Sphinx, doctree: nodes.document, docname: str) -> None:
        """doctree-resolved: the page is written; what writing it gives replaces what it gave last."""
        self.written.setdefault(docname, [])

    def finish(self, app: Sphinx, exception: Exception | None) -> None:
        """build-finished: tell again what this build did not give after reading, and keep what it gave."""
        logging.getLogger(sphinx_logging.NAMESPACE).removeHandler(self)
        if exception is not None:
            return
        found = app.env.found_docs
        if self.checked is None:  # nothing was read: the last check stands for the pages still there
            self.checked = {page.docname: list(page.warnings) for page in self.late.checked
                            if not page.docname or page.docname in found}
            _tell(self.checked)
        written = {page.docname: list(page.warnings) for page in self.late.written if page.docname in found}
        _tell({docname: warnings for docname, warnings in written.items() if docname not in self.written})
        LateWarnings(checked=_by_page(self.checked), written=_by_page({**written, **self.written})
                     ).write(Path(app.doctreedir, LATE))


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    """env-purge-doc: a page read again or removed gives its warnings afresh, or none."""
    kept_on(env).pop(docname, None)


def merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    """env-merge-info: the warnings a parallel reader kept of its pages (those its logs gave back are kept
    here already, as the main process handled them)."""
    kept, theirs = kept_on(env), kept_on(other)
    for docname in docnames:
        mine = kept.setdefault(docname, [])
        mine += [warning for warning in theirs.get(docname, ()) if warning not in mine]


def setup(app: Sphinx) -> ExtensionMetadata:
    """Keep this application's warnings and tell again those of the pages it does not read or write."""
    keeper = Keeper(app)
    app.connect("builder-inited", keeper.start, priority=0)
    app.connect("env-before-read-docs", keeper.tell_unread, priority=900)  # after what adds pages to read
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("env-check-consistency", keeper.checking, priority=0)
    app.connect("doctree-resolved", keeper.writing, priority=0)
    app.connect("build-finished", keeper.finish, priority=900)
    # The state of the build is on the environment (merged from parallel readers, purged with its pages) and
    # in LATE, written once, in the main process; the keeper belongs to this application, as its handlers.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

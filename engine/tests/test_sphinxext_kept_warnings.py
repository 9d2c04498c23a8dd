"""sphinxext.kept_warnings: every build tells all of its warnings, those of the pages it does not read again
included, once; Sphinx reads only what changed."""

import io
import logging
import pickle
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from sphinx.testing.util import SphinxTestApp

from tutorials_site.sphinxext import kept_warnings
from tutorials_site.sphinxext.kept_warnings import Kept, merge, purge

# A page for each phase that warns: reading (a title's underline too short), the consistency check (a page in
# no toctree) and writing (a reference to no label, resolved as the page is written).
PAGES = {
    "index.rst": "A page\n======\n\n.. toctree::\n\n   reading\n   writing\n",
    "reading.rst": "Reading\n======\n\nA paragraph.\n",
    "writing.rst": "Writing\n=======\n\nSee :ref:`nowhere`.\n",
    "orphan.rst": "Orphan\n======\n\nIn no toctree.\n",
}
SAID = {"reading": "Title underline too short", "writing": "undefined label: 'nowhere'",
        "orphan": "document isn't included in any toctree"}


def rebuild(src: Path) -> tuple[str, str]:
    """(status, warnings) of a build of the project at SRC, as a second sphinx-build there would make it."""
    status, warnings = io.StringIO(), io.StringIO()
    app = SphinxTestApp("html", srcdir=src, status=status, warning=warnings, confoverrides={"plot_gallery": "0"})
    try:
        app.build()
    finally:
        app.cleanup()
    return status.getvalue(), warnings.getvalue()


def told(warnings: str) -> dict[str, int]:
    """How many times each phase's warning was told."""
    return {page: warnings.count(said) for page, said in SAID.items()}


@pytest.fixture
def project(sphinx_app) -> Path:
    """A small project with a warning of each phase, built once."""
    app, _, warnings = sphinx_app(PAGES)
    app.build()
    assert told(warnings.getvalue()) == {"reading": 1, "writing": 1, "orphan": 1}, warnings.getvalue()
    return Path(app.srcdir)


def test_a_build_that_reads_nothing_tells_every_warning_once_at_its_place(project) -> None:
    status, warnings = rebuild(project)
    assert "0 added, 0 changed, 0 removed" in status
    assert told(warnings) == {"reading": 1, "writing": 1, "orphan": 1}, warnings
    # At the place the first build gave, the page's file and line.
    assert re.search(rf"{re.escape(str(project / 'reading.rst'))}:\d+: WARNING: Title underline too short", warnings)
    assert f"{project / 'writing.rst'}:4: WARNING: undefined label: 'nowhere'" in warnings
    counted = re.search(r"succeeded, (\d+) warnings", status)
    assert counted and int(counted[1]) == warnings.count("WARNING:")  # Sphinx counts them, as -W does
    assert told(rebuild(project)[1]) == {"reading": 1, "writing": 1, "orphan": 1}  # and again


def test_a_page_read_again_tells_its_own_warnings_afresh_and_the_others_are_told_again(project) -> None:
    (project / "reading.rst").write_text(PAGES["reading.rst"] + "\nAnother paragraph.\n", encoding="utf-8")
    status, warnings = rebuild(project)
    assert "0 added, 1 changed, 0 removed" in status
    assert told(warnings) == {"reading": 1, "writing": 1, "orphan": 1}, warnings
    (project / "reading.rst").write_text("Reading\n=======\n\nFixed.\n", encoding="utf-8")
    assert told(rebuild(project)[1]) == {"reading": 0, "writing": 1, "orphan": 1}
    assert told(rebuild(project)[1]) == {"reading": 0, "writing": 1, "orphan": 1}  # gone for good


def test_a_page_written_again_or_removed_gives_its_warnings_afresh_or_none(project) -> None:
    (project / "writing.rst").write_text("Writing\n=======\n\nNo reference now.\n", encoding="utf-8")
    assert told(rebuild(project)[1]) == {"reading": 1, "writing": 0, "orphan": 1}
    (project / "orphan.rst").unlink()
    assert told(rebuild(project)[1]) == {"reading": 1, "writing": 0, "orphan": 0}
    assert told(rebuild(project)[1]) == {"reading": 1, "writing": 0, "orphan": 0}


def test_suppress_warnings_applies_to_a_warning_told_again(project) -> None:
    conf = project / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + 'suppress_warnings = ["ref.ref"]\n', encoding="utf-8")
    status, warnings = rebuild(project)  # a new configuration: every page read again
    assert told(warnings)["writing"] == 0
    assert told(rebuild(project)[1])["writing"] == 0  # kept, and suppressed again when told


def _env(kept: dict[str, list[Kept]]) -> SimpleNamespace:
    env = SimpleNamespace()
    setattr(env, kept_warnings.ENV_ATTRIBUTE, kept)
    return env


def test_warnings_are_kept_on_the_environment_purged_with_their_page_and_merged_from_a_parallel_reader() -> None:
    a, b = Kept(logging.WARNING, "in a", page="a", line=3), Kept(logging.WARNING, "in b", where="/x/b.rst:4")
    env = _env({"a": [a], "b": [b]})
    purge(None, env, "a")
    assert kept_warnings.kept_on(env) == {"b": [b]}
    reader = _env({"a": [a], "b": [b], "c": [a]})
    merge(None, env, {"a", "b"}, reader)  # its pages only, none twice
    assert kept_warnings.kept_on(env) == {"a": [a], "b": [b]}
    assert pickle.loads(pickle.dumps(env)).__dict__ == env.__dict__  # pickled with the environment


def test_the_extension_declares_the_version_of_what_it_keeps_on_the_environment(fake_app) -> None:
    from tutorials_site import sphinxext

    assert fake_app().metadata["env_version"] == sphinxext.ENV_VERSION >= 1

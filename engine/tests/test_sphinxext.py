"""The extension as Sphinx sees it: what setup() reports, and warnings a project can silence one kind at a time."""

import ast
import re

import pytest
from sphinx.errors import SphinxError

import tutorials_site
from conftest import ENGINE, FIXTURES
from tutorials_site import sphinxext
from tutorials_site.core.site.build_values import BuildValues

try:
    from sphinx.util.console import strip_escape_sequences
except ImportError:  # Sphinx before 7.3 (the oldest the engine supports: test_oldest_pair.py)
    from sphinx.util.console import strip_colors as strip_escape_sequences

LEVELS = {"warning", "error", "critical", "exception"}  # what suppress_warnings filters (warning and above)
KEYS = {"version", "parallel_read_safe", "parallel_write_safe"}


def test_setup_reports_the_package_version_and_the_parallel_safety_of_every_part(fake_app):
    app = fake_app()
    assert app.metadata == {"version": tutorials_site.__version__, "env_version": sphinxext.ENV_VERSION,
                            "parallel_read_safe": True, "parallel_write_safe": True}
    for part in sphinxext.PARTS:
        found = part.setup(app)
        assert set(found) == KEYS and found["version"] == tutorials_site.__version__, part.__name__
        assert isinstance(found["parallel_read_safe"], bool) and isinstance(found["parallel_write_safe"], bool)


@pytest.mark.parametrize("flag", ["parallel_read_safe", "parallel_write_safe"])
def test_the_extension_is_parallel_safe_only_where_every_part_is(fake_app, monkeypatch, flag):
    part = sphinxext.PARTS[-1]
    original = part.setup
    monkeypatch.setattr(part, "setup", lambda app: {**original(app), flag: False})
    metadata = fake_app().metadata
    assert metadata[flag] is False and all(metadata[key] for key in KEYS - {flag, "version"})


def warning_calls():
    """(file, line, type, subtype) of every call that logs a warning or worse in sphinxext/ (None: not given
    as a constant)."""
    found = []
    for path in sorted((ENGINE / "tutorials_site" / "sphinxext").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LEVELS
                    and "logger" in ast.unparse(node.func.value).lower()):
                given = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
                found.append((path.name, node.lineno, given.get("type"), given.get("subtype")))
    return found


def readme_subtypes():
    """The subtypes the table of warnings in guides/building.md lists."""
    section = (ENGINE / "guides" / "building.md").read_text(encoding="utf-8").split("\n### Warnings\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `tutorials\.([\w-]+)` \|", section, re.M)


def test_every_warning_has_the_type_tutorials_and_a_subtype_the_readme_lists():
    calls = warning_calls()
    assert calls, "no warning found: the search finds none"
    untyped = [(name, line) for name, line, kind, subtype in calls if kind != "tutorials" or not subtype]
    assert untyped == []
    assert sorted({subtype for *_, subtype in calls}) == sorted(readme_subtypes())


@pytest.mark.parametrize("suppress, shown", [([], True), (["tutorials.untranslated"], False), (["tutorials"], False)])
def test_a_suppressed_subtype_is_not_emitted_and_the_page_still_says_it(sphinx_app, suppress, shown):
    app, _, warnings = sphinx_app(language="ko", tutorials_strict=True, suppress_warnings=suppress)
    app.build()
    lines = [line for line in strip_escape_sequences(warnings.getvalue()).splitlines() if "not translated" in line]
    expected = "index.rst: WARNING: 2 passage(s) not translated into ko, shown in English: 'A page'; 'A paragraph.'"
    if getattr(app.config, "show_warning_types", False):  # Sphinx 8's default; before 7.3 it has no such setting
        expected += " [tutorials.untranslated]"
    assert any(line.endswith(expected) for line in lines) is shown, lines
    if not shown:
        assert lines == []
    page = (app.outdir / "index.html").read_text()
    assert "translation-incomplete" in page and '<a class="english-page reference external" href="../en/index.html">' in page



def test_the_build_hands_sphinx_its_settings_in_one_record_read_strictly(sphinx_app, tmp_path):
    values = tmp_path / "values.json"
    BuildValues(root=str(FIXTURES), built_languages=("en", "ko"), unrun=("beginner_source/a",), strict=True).write(values)
    app, _, _ = sphinx_app(tutorials_build_values=str(values))
    assert (app.config.tutorials_built_languages, app.config.tutorials_unrun, app.config.tutorials_strict,
            app.config.tutorials_root) == (("en", "ko"), ("beginner_source/a",), True, str(FIXTURES))
    values.write_text(values.read_text().replace('"format": 1', '"format": 2'))
    with pytest.raises(SphinxError, match=rf"^{values}: a record of the build's settings for Sphinx "
                                          r"\(tutorials-build-values.json\) of format 2; this build reads format 1; build again"):
        sphinx_app(tutorials_build_values=str(values))

"""The package's shape: three kinds of code, imports one way, no circle (imports inside functions counted), short
functions."""

import ast
import collections
import functools
import io
import keyword
import re
import tokenize
from pathlib import Path

import pytest

from conftest import ENGINE
from tutorials_site.commands import lint

ROOT = ENGINE  # the engine's folder: the package, its tests and benchmarks
PACKAGE = ROOT / "tutorials_site"


def module_name(path, root=ROOT):
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path, root=ROOT):
    """Every module a file imports, at any depth of its code: (imported name, line)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.append((module, node.lineno))
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]  # from . import x
    return found


@functools.cache
def graph():
    """{module: its file} of the package, and {module: the package's modules it imports}; read once."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {}
    for name, path in modules.items():
        edges[name] = {target for target, _ in imports(path) if target in modules and target != name}
    return modules, edges


def test_the_import_graph_has_no_circle():
    modules, edges = graph()
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack + [target])
        state[node] = "done"

    for name in sorted(modules):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_imports_go_one_way_core_sphinxext_commands():
    modules, _ = graph()
    wrong = []
    for name, path in modules.items():
        for target, line in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}: {target}"
            if name.startswith("tutorials_site.core") and (
                    target.split(".")[0] in {"sphinx", "sphinx_gallery"}
                    or target.startswith(("tutorials_site.sphinxext", "tutorials_site.commands"))):
                wrong.append(where)
            if name.startswith("tutorials_site.sphinxext") and target.startswith("tutorials_site.commands"):
                wrong.append(where)
    assert wrong == []


# core/'s wings, in their order: a wing imports core/'s own modules and the wings before it, never one after it;
# core/'s own modules (project, layout, languages, ...) import no wing.
WINGS = ("text", "runs", "site")


def _rank(module):
    parts = module.split(".")
    return WINGS.index(parts[2]) + 1 if len(parts) > 3 and parts[2] in WINGS else 0


def wing_arrows(edges):
    """'importer -> imported' for each import in core/ that runs against the wings' order."""
    return sorted(f"{name} -> {target}" for name, targets in edges.items() if name.startswith("tutorials_site.core.")
                  for target in targets if target.startswith("tutorials_site.core.") and _rank(target) > _rank(name))


def test_core_wings_import_one_way_text_runs_site():
    _, edges = graph()
    assert wing_arrows(edges) == []
    folders = {path.name for path in (PACKAGE / "core").iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(WINGS)  # a new folder takes a place in the order first


def test_the_wing_check_sees_each_arrow_against_the_order():
    edges = {"tutorials_site.core.text.a": {"tutorials_site.core.runs.b", "tutorials_site.core.layout"},
             "tutorials_site.core.layout": {"tutorials_site.core.site.c"},
             "tutorials_site.core.site.c": {"tutorials_site.core.text.a", "tutorials_site.core.runs.b"}}
    assert wing_arrows(edges) == ["tutorials_site.core.layout -> tutorials_site.core.site.c",
                                  "tutorials_site.core.text.a -> tutorials_site.core.runs.b"]


DOORS = {"tutorials_site.sphinx_gallery_run", "tutorials_site.sphinx_gallery_build"}  # sphinx-gallery's doors
FORMATS = "tutorials_site.core.sphinx_gallery_formats"  # its formats and names, for every module


def test_only_the_doors_import_sphinx_gallery_and_the_runner_s_door_none_of_the_sphinx_side():
    modules, edges = graph()
    importers = {name for name, path in modules.items() if any(t.split(".")[0] == "sphinx_gallery" for t, _ in imports(path))}
    assert importers == DOORS
    # core/ uses the formats, not the doors; the runner's door (run code: core.runs.fingerprint) brings nothing of
    # the Sphinx side into a tutorial's process, nor into what a run's fingerprint covers.
    assert [name for name in modules if name.startswith("tutorials_site.core") and edges[name] & DOORS] == []
    assert {target for target in edges["tutorials_site.sphinx_gallery_run"]} == {FORMATS}


# What sphinx-gallery writes and reads, spelled in the package's code (docstrings aside) by FORMATS alone.
_FORMAT_WORDS = ("sphx_glr_", "sphx-glr-script-out", "GENERATED FROM PYTHON SOURCE LINES", "sphinx_gallery_start_ignore",
                 "sphinx_gallery_end_ignore", "sg_execution_times", "_thumb", "#{20,}", "__init__\\.py")


def _code_strings(path):
    """(line, text) of each string of a module's code: its docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_module_but_the_formats_spells_a_sphinx_gallery_format():
    modules, _ = graph()
    found = [f"{path.relative_to(ROOT)}:{line}: {word}" for name, path in sorted(modules.items()) if name != FORMATS
             for line, text in _code_strings(path) for word in _FORMAT_WORDS if word in text]
    assert found == []
    formats = "".join(text for _, text in _code_strings(modules[FORMATS]))
    assert [word for word in _FORMAT_WORDS if word not in formats] == []  # each word is a format of it still


def test_core_reads_no_environment_and_exits_nowhere():
    found = []
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                    (node.value.id, node.attr) in {("os", "environ"), ("os", "getenv"), ("sys", "exit")}):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
            if isinstance(node, ast.Name) and node.id == "SystemExit":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: SystemExit")
    assert found == []


def test_the_checker_sees_a_circle_through_a_function_level_import(tmp_path):
    # The graph above must catch what the old package hid: an import inside a function.
    source = tmp_path / "tutorials_site" / "core" / "a.py"
    source.parent.mkdir(parents=True)
    source.write_text("def f():\n    from . import b\n")
    assert ("tutorials_site.core.b", 2) in imports(source, root=tmp_path)


MAX_FUNCTION_LINES = 50


def long_functions(path, root=ROOT, limit=MAX_FUNCTION_LINES):
    """Every function and method of a file (nested ones too) longer than LIMIT lines, counted from its `def` to
    its last line: 'file:line: name (N lines)'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                found.append((node.lineno, f"{path.relative_to(root)}:{node.lineno}: {node.name} ({length} lines)"))
    return [where for _, where in sorted(found)]


def test_no_function_is_over_50_lines():
    found = [where for path in sorted(PACKAGE.rglob("*.py")) for where in long_functions(path)]
    assert found == [], "split these into functions that each do one job:\n" + "\n".join(found)


def test_the_length_checker_counts_from_def_to_the_last_line_methods_and_nested_functions_too(tmp_path):
    def body(indent, count=49):  # with its `def` and a `return`, a function of COUNT + 2 lines
        return [f"{indent}x{k} = {k}" for k in range(count)]

    lines = ["@decorator", "def long():", *body("    "), "    return 0", "",
             "def short():", *body("    ", 48), "    return 0", "",  # 50 lines: not too long
             "class C:", "    async def method(self):", "        def inner():", *body("            "), "            return 0",
             "        return inner"]
    source = tmp_path / "a.py"
    source.write_text("\n".join(lines) + "\n")
    at = {name: lines.index(line) + 1 for name, line in
          [("long", "def long():"), ("method", "    async def method(self):"), ("inner", "        def inner():")]}
    assert long_functions(source, root=tmp_path) == [
        f"a.py:{at['long']}: long (51 lines)", f"a.py:{at['method']}: method (53 lines)", f"a.py:{at['inner']}: inner (51 lines)"]


@pytest.mark.lint
def test_ruff_is_clean():
    code, output = lint.ruff(lint.sources(ENGINE))  # the package, its tests and benchmarks, as engine/ruff.toml says
    assert code == 0, output


def test_the_linters_leave_out_any_build_folder_or_published_tree_wherever_it_is(tmp_path):
    for name in ("src", "out/runs", "out/src/en", "noplot/src", "noplot/doctrees", "pages/stable", "docs", ".venv/lib"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "out" / "src" / "en" / "page.rst").write_text("Generated\n")
    (tmp_path / "pages" / "versions.json").write_text("{}")
    (tmp_path / "src" / "index.rst").write_text("Mine\n")
    (tmp_path / "conf.py").write_text("")
    entries = lint.sources(tmp_path, [tmp_path / "docs"])  # docs: PAGES, still empty
    assert [p.name for p in entries] == ["conf.py", "src"]
    assert lint.hand_written_rst(entries) == [tmp_path / "src" / "index.rst"]


@pytest.mark.lint
def test_mypy_is_clean():
    code, output = lint.mypy()  # as `make lint` runs it: strict on the whole package (engine/mypy.ini)
    assert code == 0, output


def _owned_uses(path):
    """What a module does that one module of the package does for all: evaluate a file (runpy), replace a
    file (os.replace), ask git, measure columns by hand (unicodedata.east_asian_width)."""
    found = {name for name, _ in imports(path) if name == "runpy"}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                (node.value.id, node.attr) in {("os", "replace"), ("unicodedata", "east_asian_width")}):
            found.add(f"{node.value.id}.{node.attr}")
        if isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git":
            found.add("git")
    return found


def modules_by_use(uses):
    """Each of what USES(module) finds the package's modules do -> the modules that do it."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for use in uses(path):
            found.setdefault(use, []).append(path.relative_to(ROOT).as_posix())
    return found


def test_each_piece_of_shared_knowledge_has_one_home():
    assert modules_by_use(_owned_uses) == {
        "runpy": ["tutorials_site/core/project.py"],  # conf.py, outside Sphinx: project.read_conf
        "os.replace": ["tutorials_site/core/files.py"],  # an atomic write: files.write_atomically
        "git": ["tutorials_site/core/git.py"],  # git.run
    }  # and display columns: docutils.utils.column_width


def _json_reads(path):
    """That a module parses JSON itself (json.loads, json.load) rather than through a record's reader."""
    return {"json" for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "json" and node.attr in ("load", "loads")}


def test_what_one_process_writes_for_another_is_read_as_a_typed_record():
    # A file or value crossing a process boundary is a core.runs.records.Record, read by its one strict reader. These
    # parse JSON of other layouts; a new one is a record, or joins this list with the reason it cannot be one.
    assert modules_by_use(_json_reads) == {"json": [
        "tutorials_site/commands/audit.py",  # Lighthouse's report: its layout, not ours
        "tutorials_site/commands/child_site/tutorials_site_used.py",  # the runner's settings, in a tutorial's process
        "tutorials_site/commands/import_translation.py",  # sphinxext.units' pieces: not yet a record (issue 31)
        "tutorials_site/core/runs/records.py",  # every record's reader
        "tutorials_site/core/runs/shards.py",  # durations.json, a file of the repository
        "tutorials_site/core/runs/used.py",  # out/used/<pid>.jsonl: a line per entry, the last cut short by a kill
        "tutorials_site/core/site/versions.py",  # versions.json, whose layout readers' scripts share: entries as records
    ]}


# Each rule of the package's, in the one module that holds it: what a second copy of it would have to write.
# (rule, its home, what gives a copy away: a string constant holding one of PATTERNS, a call or attribute of
# CALLS, a name of NAMES used or imported, or a function of DEFINES defined)
RULES = [
    # which lines of reST are verbatim (comments, directives, literal blocks): translation and notebooks read them
    ("reST region scanner", "core/text/tutorial_text.py", {"patterns": (r"\.\.\s", r"(\.\.|__)"), "defines": ("rst_blocks",),
                                                           "names": ("DIRECTIVE", "EXPLICIT", "ADMONITIONS", "LIST_ITEM")}),
    ("plural filter", "core/text/catalogs.py", {"calls": ("isinstance(.id)", "isinstance(.string)"), "defines": ("singular",)}),
    ("page language", "sphinxext/head.py", {"calls": ("languages.of(.language)",), "defines": ("page_language",)}),
    ("page head", "sphinxext/head.py", {"patterns": ("metatags",), "defines": ("add_to_head",)}),
    ("date format", "core/runs/stamping.py", {"patterns": ("%Y",), "calls": (".strftime", ".strptime"), "defines": ("now",)}),
    ("{name} template splitter", "core/text/gallery_strings.py", {"patterns": (r"\{(\w+)\}",), "defines": ("split_template",)}),
    ("whole-build check", "core/site/checks.py", {"calls": ("BuildInfo.read",), "defines": ("whole_build",)}),
    # whether a run is current: its stamp's source, lines, environment, what it used, its time (tests/test_currency.py)
    ("run currency", "core/runs/currency.py", {"calls": (".cites_lines", ".code_lines", ".used"),
                                              "patterns": ("another environment",),
                                              "defines": ("problems", "source_problems", "fingerprint_problems",
                                                          "stamp_problems")}),
]


def _call_of(node):
    """How RULES' calls name a call or attribute: 'isinstance(.id)', 'languages.of(.language)', '.strftime',
    'BuildInfo.read'; None for any other node."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Attribute):
        called = ast.unparse(node.func)
        if called in ("isinstance", "languages.of"):
            return f"{called}(.{node.args[0].attr})"
    if isinstance(node, ast.Attribute):
        return f"{node.value.id}.{node.attr}" if isinstance(node.value, ast.Name) and node.attr == "read" else f".{node.attr}"
    return None


def rule_uses(path, rules=RULES):
    """The RULES a module writes (or a copy of which it writes)."""
    found = set()
    imported = {name.rpartition(".")[2] for name, _ in imports(path, path.parents[2])}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # prose: they may name it
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
            else None
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        defined = node.name if isinstance(node, ast.FunctionDef) else None
        for rule, _, signs in rules:
            if ((text is not None and any(p in text for p in signs.get("patterns", ())))
                    or _call_of(node) in signs.get("calls", ()) or defined in signs.get("defines", ())
                    or name in signs.get("names", ()) or imported & set(signs.get("names", ()))):
                found.add(rule)
    return found


def test_each_rule_is_written_in_one_module():
    assert modules_by_use(rule_uses) == {rule: [f"tutorials_site/{home}"] for rule, home, _ in RULES}, \
        "call the rule's home instead of writing it again"


def test_the_rule_checker_sees_each_rule_written_again(tmp_path):
    copy = tmp_path / "tutorials_site" / "sphinxext" / "copy.py"
    copy.parent.mkdir(parents=True)
    copy.write_text("\n".join([
        "from ..core.text.tutorial_text import DIRECTIVE",
        "COMMENT = re.compile(r'^(\\s*)\\.\\.\\s')",
        "plural = not isinstance(message.id, str)",
        "lang = languages.of(app.config.language)",
        "context['metatags'] += tag",
        "date = datetime.now(UTC).strftime('%d %b')",
        "parts = re.split(r'\\{(\\w+)\\}', template)",
        "info = BuildInfo.read(path)",
        "current = stamp.source == digest.code and not (stamp.cites_lines and moved)",
    ]) + "\n")
    assert rule_uses(copy) == {rule for rule, _, _ in RULES}
    for line, rule in [("from ..core.text.tutorial_text import DIRECTIVE", "reST region scanner"),
                       ("def singular(message):\n    return None", "plural filter"),
                       ("def fingerprint_problems(stamp):\n    return []", "run currency")]:
        copy.write_text(line + "\n")
        assert rule_uses(copy) == {rule}


SKIPPED_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
                  tokenize.ENDMARKER}


def line_shapes(path):
    """(line, shape) of each line of code that says something: names as N, strings as S, numbers as 0, keywords
    and operators as they are; docstrings, comments, imports and lines of brackets alone left out."""
    text = path.read_text(encoding="utf-8")
    docstrings = {row for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Expr)
                  and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                  for row in range(node.lineno, node.end_lineno + 1)}
    words = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in SKIPPED_TOKENS or token.start[0] in docstrings:
            continue
        word = {tokenize.NAME: "N", tokenize.STRING: "S", tokenize.NUMBER: "0"}.get(token.type, token.string)
        words.setdefault(token.start[0], []).append(token.string if keyword.iskeyword(token.string) else word)
    return [(row, " ".join(line)) for row, line in sorted(words.items())
            if line[0] not in ("import", "from") and not set(line) <= set("()[]{}:,.")]


def repeated_runs(paths, size=6, common=8):
    """Every run of SIZE lines of the same shape (line_shapes) that stands in two places, as 'a:1-8 ~ b:3-9'.
    A run most of whose lines are thin is boilerplate, not listed: a line of five tokens or fewer (a field, a
    return), or a shape that stands in COMMON places or more (a decorator, a class line)."""
    shapes = {path: line_shapes(path) for path in paths}
    counts = collections.Counter(shape for lines in shapes.values() for _, shape in lines)
    first, pairs = {}, []
    for path, lines in shapes.items():
        for k in range(len(lines) - size + 1):
            run = tuple(shape for _, shape in lines[k:k + size])
            if sum(counts[shape] >= common or len(shape.split()) <= 3 for shape in run) * 2 >= size:
                continue
            where = (path, lines[k][0], lines[k + size - 1][0])
            seen = first.setdefault(run, where)
            if seen == where or (seen[0] == path and seen[2] >= where[1]):  # the first place, or overlapping itself
                continue
            last = pairs[-1] if pairs else None
            if last and (last[0][0], last[1][0]) == (seen[0], path) and last[0][2] >= seen[1] and last[1][2] >= where[1]:
                pairs[-1] = ((*last[0][:2], seen[2]), (*last[1][:2], where[2]))  # the same run, one line longer
            else:
                pairs.append((seen, where))
    return [f"{a.name}:{a_start}-{a_end} ~ {b.name}:{b_start}-{b_end}" for (a, a_start, a_end), (b, b_start, b_end) in pairs]


def test_no_run_of_six_lines_stands_twice_in_the_package():
    found = repeated_runs(sorted(PACKAGE.rglob("*.py")))
    assert found == [], "make one function of what these places repeat:\n" + "\n".join(found)


def test_the_repetition_checker_sees_a_run_written_again_with_other_names_and_passes_over_boilerplate(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("def f(rows, limit):\n    total = 0\n    for row in rows:\n        if row.size > limit:\n"
                     "            total += row.size * 2\n        else:\n            total -= len(row.name)\n"
                     "    return total\n")
    second.write_text('"""Another module."""\n\n\ndef g(items, most):\n    # the same, renamed\n    count = 1\n'
                      "    for item in items:\n        if item.width > most:\n            count += item.width * 3\n"
                      "        else:\n            count -= len(item.label)\n    return count\n")
    assert repeated_runs([first, second]) == ["a.py:1-8 ~ b.py:4-12"]
    fields = "@dataclass\nclass {}:\n    a: int\n    b: str\n    c: float\n    d: bool\n    e: int = 0\n"
    first.write_text(fields.format("A"))
    second.write_text(fields.format("B"))
    assert repeated_runs([first, second]) == []


# The engine's tests build their own sites (conftest: FIXTURES, project_copy, fixture_site, fake_app), never the
# repository's: a tutorial of the shipped site added, renamed or removed leaves them green, and they pass in a
# checkout of the engine alone.
_THE_SITE = re.compile(r"ENGINE\.parent\b|Path\(__file__\).*parents\[[2-9]\]")


def test_no_engine_test_reaches_out_of_the_engine_s_folder():
    found = [f"{path.name}:{number}: {line.strip()}" for path in sorted((ROOT / "tests").glob("*.py"))
             if path.name != Path(__file__).name  # this file, which spells the pattern out
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _THE_SITE.search(line)]
    assert found == []

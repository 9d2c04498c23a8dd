"""`make help` lists every target and variable of the Makefile, a line each, from its own comments; the guide's
tables of targets and variables (guides/building.md, "Make targets") name exactly the same."""

import re
import subprocess
import sys

from tutorials_site.commands import make_help
from tutorials_site.core.layout import ROOT

MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")


def shown() -> tuple[dict[str, str], dict[str, str]]:
    """`make help`'s targets and variables, each name with its line, as make prints them (the system's Python)."""
    result = subprocess.run(["make", "-s", "--no-print-directory", "help", f"PYTHON={sys.executable}"], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    sections: list[dict[str, str]] = []
    for line in result.stdout.splitlines():
        if not line.startswith(" "):
            sections.append({})
        else:
            name, _, says = line.strip().partition(" ")
            sections[-1][name] = says.strip()
    targets, variables = sections
    return targets, variables


def guide_tables() -> tuple[set[str], set[str]]:
    """The targets (`make X ...` in the first column) and variables the guide's Make targets section names."""
    guide = (ROOT / "guides" / "building.md").read_text(encoding="utf-8")
    section = guide.split("## Make targets", 1)[1].split("\n## ", 1)[0]
    first = [row.split("|")[1].strip() for row in section.splitlines() if row.startswith("| `")]
    targets = {word for cell in first for word in re.findall(r"`make ([a-z][\w-]*)", cell)}
    variables = {cell.strip("`") for cell in first if re.fullmatch(r"`[A-Z][A-Z0-9_]*`", cell)}
    return targets, variables


def test_every_target_and_variable_of_the_makefile_is_in_make_help_with_a_line():
    targets, variables = shown()
    assert set(make_help.rules(MAKEFILE)) == set(targets)  # every rule, none invented
    exported = set(re.search(r"^export (.+)$", MAKEFILE, re.MULTILINE)[1].split()) - {"PY"}  # PY: $(VENV)/bin/python
    assert exported <= set(variables) and {"TORCH"} <= set(variables)
    assert all(says for says in [*targets.values(), *variables.values()])
    assert variables["SHARD"].endswith("line declares)")  # a continued description is joined into its one line


def test_the_guide_names_what_make_help_lists_and_nothing_else():
    targets, variables = shown()
    guide_targets, guide_variables = guide_tables()
    assert guide_targets == set(targets)
    assert guide_variables == set(variables)


def test_a_rule_without_a_comment_is_a_rule_missing_from_help():
    makefile = "#   NAME  what it is\n#         more of it\nX := 1\nlisted: a  ## does this\nunlisted: b\n$(FILE): c\n"
    assert make_help.rules(makefile) == ["listed", "unlisted"]
    assert make_help.targets(makefile) == [make_help.Entry("listed", "does this")]
    assert make_help.variables(makefile) == [make_help.Entry("NAME", "what it is more of it")]

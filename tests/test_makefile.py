"""The site's Makefile: `make help` lists every target and variable, a line each, from its own comments; every
variable its recipes pass to the engine is named there; every target the engine's command has is a target here."""

import re
import subprocess
import sys
from pathlib import Path

from tutorials_site.commands import cli, make_help

ROOT = Path(__file__).resolve().parents[1]  # the site: this repository's root
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


def test_every_target_and_variable_of_the_makefile_is_in_make_help_with_a_line():
    targets, variables = shown()
    assert set(make_help.rules(MAKEFILE)) - {"sandbox"} == set(targets)  # every rule but the sandbox's install, none invented
    assert all(says for says in [*targets.values(), *variables.values()])
    assert variables["TORCH"].endswith("cpu elsewhere)")  # a continued description is joined into its one line


def test_every_variable_passed_to_the_engine_is_named_in_the_makefile_s_header():
    header = MAKEFILE.split("\nPYTHON ?=", 1)[0]
    exported = set(re.search(r"^export (.+)$", MAKEFILE.replace("\\\n", " "), re.M)[1].split()) - {"PY"}  # $(VENV)/bin/python
    assert {"LANGUAGES", "TUTORIALS", "SHARD", "REUSE"} <= exported
    assert [name for name in sorted(exported) if not re.search(rf"\b{name}\b", header)] == []


def test_each_engine_command_of_a_site_is_a_target():
    targets, _ = shown()
    assert set(cli.COMMANDS) - {"init", "lock"} <= set(targets) and "lock" in targets  # init: a site's first step only


def test_a_rule_without_a_comment_is_a_rule_missing_from_help():
    makefile = "#   NAME  what it is\n#         more of it\nX := 1\nlisted: a  ## does this\nunlisted: b\n$(FILE): c\n"
    assert make_help.rules(makefile) == ["listed", "unlisted"]
    assert make_help.targets(makefile) == [make_help.Entry("listed", "does this")]
    assert make_help.variables(makefile) == [make_help.Entry("NAME", "what it is more of it")]

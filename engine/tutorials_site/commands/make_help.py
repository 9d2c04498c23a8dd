"""`make help`: every target and every variable of the Makefile, one line each, read from the Makefile's own
comments so that the list cannot drift from it: a target's is the `## ...` comment on its rule's line; a
variable's is its entry in the comment block that opens the Makefile (`#   NAME  what it does`, continued on
more deeply indented comment lines, which are joined into its one line).

Run by the system's Python (`python3 -m tutorials_site.commands.make_help Makefile`), before any venv exists: it
imports nothing but the standard library.
"""

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_TARGET = re.compile(r"^([a-z][\w-]*):(?![:=])[^#]*##\s*(\S.*)$")
_RULE = re.compile(r"^([a-z][\w-]*):(?![:=])")
_VARIABLE = re.compile(r"^#   ([A-Z][A-Z0-9_]*)\s{2,}(\S.*)$")
_CONTINUED = re.compile(r"^#\s{4,}(\S.*)$")


@dataclass(frozen=True)
class Entry:
    """A target or a variable, and its one line."""

    name: str
    says: str


def targets(makefile: str) -> list[Entry]:
    """The targets whose rule line carries a `## ...` comment, in the Makefile's order."""
    return [Entry(found[1], found[2].strip()) for line in makefile.splitlines() if (found := _TARGET.match(line))]


def rules(makefile: str) -> list[str]:
    """Every target a rule of the Makefile names by a plain word (not a file made by a rule: `$(DEPS)`)."""
    return [found[1] for line in makefile.splitlines() if (found := _RULE.match(line))]


def variables(makefile: str) -> list[Entry]:
    """The variables of the comment block that opens the Makefile, each with its continuation lines joined."""
    found: list[Entry] = []
    for line in makefile.splitlines():
        if not line.startswith("#"):
            break
        if named := _VARIABLE.match(line):
            found.append(Entry(named[1], named[2].strip()))
        elif found and (more := _CONTINUED.match(line)):
            found[-1] = Entry(found[-1].name, f"{found[-1].says} {more[1].strip()}")
    return found


def render(makefile: str) -> str:
    """The help text: the targets, then the variables, a line each, names aligned."""
    listed, named = targets(makefile), variables(makefile)
    width = max(len(entry.name) for entry in [*listed, *named]) + 2
    return "\n".join([
        "Targets (make TARGET; `make` alone is `make html`):",
        *(f"  {entry.name:<{width}}{entry.says}" for entry in listed),
        "Variables (make TARGET NAME=value, or NAME=value in the environment):",
        *(f"  {entry.name:<{width}}{entry.says}" for entry in named),
    ])


def main(argv: Sequence[str]) -> None:
    """Print the help of the Makefile ARGV names."""
    print(render(Path(argv[0]).read_text(encoding="utf-8")))


if __name__ == "__main__":
    main(sys.argv[1:])

"""A tutorial's own settings: comment lines of its script, in a format of ours (as sphinx-gallery has its own,
core.sphinx_gallery_formats). Its text leaves them untranslated (core.text), its run obeys them (core.runs)."""

import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
# A tutorial's own settings, each a comment line of its own in its source: `# tutorials-timeout: 120` (seconds),
# `# tutorials-needs: gpus=2` (core.runs.needs), `# tutorials-reads: data/*.csv extra.json` (files whose changes make it
# run again, relative to its folder, globs allowed: core.runs.fingerprint.source_digest).
SETTINGS = ("timeout", "needs", "reads")
SETTING_COMMENT = re.compile(rf"#[ \t]*tutorials-({'|'.join(SETTINGS)}):(.*)")


def setting_comments(text: str, name: str) -> list[tuple[int, str]]:
    """(line, value) of each `# tutorials-NAME: value` comment standing alone on its line, in order.

    Python's tokenizer tells a real comment from the same characters in a docstring or string literal.
    A script it cannot read to the end (a syntax error, which the run reports) is searched up to there.
    """
    found = []
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    try:
        for token in tokens:
            match = SETTING_COMMENT.fullmatch(token.string) if token.type == tokenize.COMMENT else None
            if match and match[1] == name and token.line.strip() == token.string.strip():
                found.append((token.start[0], match[2]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def setting(source: Path, name: str, parse: Callable[[str], T], label: str) -> tuple[int, T] | None:
    """(line, parsed value) of SOURCE's `# tutorials-NAME:` line, None without one.

    Raises ValueError naming LABEL and the line when there are two, or when PARSE refuses the value.
    """
    # Bytes that are not UTF-8 cannot be a comment of ours; the run reports them as Python does.
    found = setting_comments(Path(source).read_text(encoding="utf-8", errors="replace"), name)
    if not found:
        return None
    (line, value), *others = found
    if others:
        raise ValueError(f"{label}:{others[0][0]}: a second tutorials-{name} line (the first is line {line}); "
                         "keep one")
    try:
        return line, parse(value)
    except ValueError as error:
        raise ValueError(f"{label}:{line}: tutorials-{name}: {error}") from None

"""The errors library code raises; only the command entry turns them into exit statuses."""

import difflib
from collections.abc import Iterable


class SiteError(Exception):
    """Bad input or a refused operation: the message names the file (and line) and what to do."""


class UsageError(SiteError):
    """A make variable or command argument that cannot be used."""


class Failed(SiteError):
    """A command whose checks or builds failed; the details were printed above, the message sums up."""


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest to WORD: one equal to it but for case and `-`/`_` (`zh_CN` for `zh-cn`), else the
    closest by difflib's ratio (CUTOFF at least); None where none is close enough to suggest."""
    ordered = sorted(set(choices))
    folded = {choice.casefold().replace("_", "-"): choice for choice in ordered}
    return folded.get(word.casefold().replace("_", "-")) or next(
        iter(difflib.get_close_matches(word, ordered, n=1, cutoff=cutoff)), None)


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """"; did you mean 'x'?" naming the closest of CHOICES to WORD; "" where none is close."""
    found = closest(word, choices, cutoff)
    return f"; did you mean {found!r}?" if found else ""

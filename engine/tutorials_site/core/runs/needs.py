"""What a tutorial needs (GPUs, the network), and the runner class that has its GPUs.

A tutorial declares it on a comment line of its own (core.tutorial_settings):

    # tutorials-needs: cpu        no GPU
    # tutorials-needs: gpu        one GPU (the same as gpus=1)
    # tutorials-needs: gpus=2     two GPUs (the same machine)
    # tutorials-needs: network    the network (its sandbox has none otherwise)
    # tutorials-needs: gpu network

Without a GPU need on that line, conf.py's `tutorials_needs` applies (one value for every gallery, or
a dict from a gallery's source folder to a value), else DEFAULT: no GPU. A tutorial that needs
one says so: a page then never claims a GPU that its author did not ask for. A need is a minimum: a machine with
more GPUs meets it. The runner class of a need (CLASSES) is where CI executes
the tutorial: `cpu` (no GPU), `gpu` (one), `multi-gpu` (two or more).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .. import tutorial_settings
from ..errors import SiteError
from ..project import ConfError, Project, Tutorial

CLASSES = ("cpu", "gpu", "multi-gpu")
SETTING = "tutorials_needs"  # conf.py's default, for every gallery or per gallery
DEFAULT = "cpu"
_GPUS = re.compile(r"gpus[ \t]*=[ \t]*([0-9]+)")  # ASCII digits only: gpus=2
MAX_GPUS = 256  # more than any one machine holds
_NAMED = {"cpu": 0, "gpu": 1}
NETWORK = "network"
_NETWORK_WORD = re.compile(rf"(?<!\S){NETWORK}(?!\S)")


def parse(value: str) -> int:
    """The number of GPUs a need written as `cpu`, `gpu` or `gpus=N` asks for.

    Raises ValueError saying what is accepted; the caller names where the value came from.
    """
    value = value.strip()
    match = _GPUS.fullmatch(value)
    if match and len(match[1]) <= len(str(MAX_GPUS)) and int(match[1]) <= MAX_GPUS:
        return int(match[1])
    if match:
        raise ValueError(f"{value!r} asks for more GPUs than one machine has (at most gpus={MAX_GPUS})")
    if value in _NAMED:
        return _NAMED[value]
    raise ValueError(f"{value!r} is not cpu, gpu or gpus=N (a whole number of GPUs), written like gpus=2")


def parse_line(value: str) -> tuple[int | None, bool]:
    """(GPUs, network) of a `# tutorials-needs:` line: `network` and at most one GPU need (parse), either
    one alone; GPUs None where the line names none. Raises ValueError as parse does."""
    network = _NETWORK_WORD.search(value) is not None
    rest = _NETWORK_WORD.sub(" ", value, count=1).strip()
    if not rest:
        if not network:
            raise ValueError("names nothing: write cpu, gpu or gpus=N, and network where it downloads")
        return None, True
    try:
        return parse(rest), network
    except ValueError:
        raise ValueError(f"{rest!r} is not cpu, gpu or gpus=N (a whole number of GPUs), written like gpus=2, "
                         f"nor {NETWORK}") from None


def describe_gpus(count: int) -> str:
    """`no GPU`, `1 GPU`, `2 GPUs`."""
    return "no GPU" if count == 0 else "1 GPU" if count == 1 else f"{count} GPUs"


@dataclass(frozen=True)
class Needs:
    """What hardware a tutorial needs, and where that was declared."""

    gpus: int  # the fewest GPUs the tutorial is written for; 0: the CPU is enough
    line: int  # its `# tutorials-needs:` line; 1 where it has none
    origin: str  # where the need was declared, for messages
    network: bool = False  # its line says it needs the network: its sandbox shares the machine's

    @property
    def runner_class(self) -> str:
        """The runner class that has the GPUs it needs (CLASSES)."""
        return CLASSES[min(self.gpus, 2)]

    def unmet(self, label: str, machine: "Machine") -> str | None:
        """The one-line error of LABEL on MACHINE when MACHINE has fewer GPUs than needed; None when it has enough."""
        if machine.gpus >= self.gpus:
            return None
        return (f"{label}:{self.line}: ERROR: needs {describe_gpus(self.gpus)} ({self.origin}), got "
                f"{machine.describe()}; not run: NEEDS=strict runs a tutorial only where its needs are met "
                f"(a {self.runner_class} runner; NEEDS=lenient runs it anyway)")


@dataclass(frozen=True)
class Machine:
    """The GPUs a tutorial's process sees here (as torch counts them)."""

    gpus: int
    device: str  # the first GPU's name; "" without one

    def describe(self) -> str:
        """`2 GPUs (NVIDIA H100)`, `no GPU`."""
        return describe_gpus(self.gpus) + (f" ({self.device})" if self.device else "")


def _defaults(project: Project) -> dict[str, int]:
    """{gallery source folder: the GPUs its tutorials need by default}, from conf.py's tutorials_needs; checked."""
    setting = project.conf.get(SETTING, DEFAULT)
    galleries = [gallery.examples_dir for gallery in project.galleries]
    per_gallery = setting if isinstance(setting, Mapping) else dict.fromkeys(galleries, setting)
    defaults = dict.fromkeys(galleries, parse(DEFAULT))
    for folder, value in per_gallery.items():
        if folder not in galleries:
            raise ConfError(f"conf.py: {SETTING}: {folder!r} is not a gallery's source folder "
                            f"(examples_dirs: {', '.join(galleries)})")
        try:
            if not isinstance(value, str):
                raise ValueError(f"{value!r} is not cpu, gpu or gpus=N, nor a dict of them by gallery")
            defaults[folder] = parse(value)
        except ValueError as error:
            raise ConfError(f"conf.py: {SETTING}: {error}") from None
    return defaults


def of(project: Project, tutorial: Tutorial) -> Needs:
    """What TUTORIAL needs: its own line, else conf.py's tutorials_needs, else DEFAULT.

    Raises SiteError naming the file (the tutorial's line, or conf.py) and the fix.
    """
    try:
        declared = tutorial_settings.setting(tutorial.path, "needs", parse_line, tutorial.label)
    except ValueError as error:
        raise SiteError(str(error)) from None
    line, (gpus, network) = declared or (1, (None, False))
    if gpus is not None:
        return Needs(gpus, line, "its tutorials-needs line", network)
    origin = f"conf.py's {SETTING}" if SETTING in project.conf else f"no tutorials-needs line: the default, {DEFAULT}"
    return Needs(_defaults(project)[tutorial.gallery.examples_dir], 1, origin, network)


def parse_mode(value: str) -> bool:
    """Whether NEEDS asks to enforce the tutorials' needs: `strict`; `lenient` or nothing runs every one anyway."""
    value = value.strip()
    if value not in ("", "strict", "lenient"):
        raise ValueError(f"{value!r} is not strict (run a tutorial only where its needs are met) or lenient (run "
                         "every one anyway, the default)")
    return value == "strict"

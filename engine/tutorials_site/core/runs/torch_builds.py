"""The torch family: the packages PyTorch publishes in two builds of one version, and which build a lock holds.

PyPI's Linux wheel of torch is the CUDA build (with its CUDA libraries as dependencies); the CPU build is
the same version with the local label `+cpu`, on PyTorch's own wheel index, one page per package. Its
companions are published the same way, and a companion of one build does not load in the other
(`operator torchvision::nms does not exist`): requirements-cpu.lock holds the CPU build of every member,
requirements-cuda.lock PyPI's build of every member.

Standard library only: the venv's install step runs this before any other package is installed.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# The one list of the family (the lock command, the venv's install step and the lock tests read it).
FAMILY = ("torch", "torchvision", "torchaudio")
CPU = "cpu"  # the local label of the CPU builds
# `name==version` at the start of a line of a requirements or lock file (a lock's version ends at ` \`).
_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#\\]+)")


@dataclass(frozen=True)
class Pin:
    """One family member's `name==version` line of a requirements or lock file."""

    name: str  # canonical (PEP 503)
    version: str  # as written, its local label included
    line: int

    @property
    def label(self) -> str | None:
        """The build the version names after its `+` (`cpu`), None for a plain version (PyPI's build)."""
        return label(self.version)

    @property
    def release(self) -> str:
        """The version without its local label."""
        return self.version.partition("+")[0]


def label(version: str) -> str | None:
    """The local label of VERSION (`2.13.0+cpu`: `cpu`), None where it has none."""
    return version.partition("+")[2] or None


def family_pins(path: Path) -> list[Pin]:
    """The family's `==` pins in the requirements or lock file PATH, in the file's order."""
    pins = []
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        found = _PIN.match(text)
        name = re.sub(r"[-_.]+", "-", found.group(1)).lower() if found else ""
        if found and name in FAMILY:
            pins.append(Pin(name, found.group(2), number))
    return pins


def cpu_requirement(pin: Pin) -> str:
    """The requirement that only the CPU build of PIN's release satisfies."""
    return f"{pin.name}=={pin.release}+{CPU}"


def wheel_pages(torch_wheels: str, names: Iterable[str]) -> list[str]:
    """Where pip finds the CPU wheels of NAMES, given where it finds torch's (TORCH_CPU_WHEELS).

    A location whose last segment is `torch` is torch's page (or folder) of an index with one per
    package, as PyTorch's is: each member's page is beside it. Any other location (a folder of
    wheels, a page listing them all) is taken to hold every member's wheels.
    """
    head, _, last = torch_wheels.rstrip("/").rpartition("/")
    if last != "torch":
        return [torch_wheels]
    return [f"{head}/{name}/" for name in names]


def wrong_builds(root: Path, lock: str, build: str | None) -> list[str]:
    """'lock:line: ...' for each family member the lock file ROOT/LOCK pins in another build than BUILD (a
    local label, None for PyPI's), each saying what to do."""
    if build:
        wanted, fix = f"a +{build} build", f"with == in requirements.txt, its +{build} wheel reachable (TORCH_CPU_WHEELS)"
    else:
        wanted, fix = "PyPI's build (no local label)", "without a local label in requirements.txt"
    return [f"{lock}:{pin.line}: {pin.name}=={pin.version} is not {wanted}, as torch and its family must be there: "
            f"pin {pin.name} {fix}, then run `tutorials-site lock`" for pin in family_pins(root / lock) if pin.label != build]


def other_builds(pins: Iterable[Pin], installed: Mapping[str, str]) -> list[str]:
    """The members of PINS that INSTALLED ({name: version}) holds in another build than the pinned one: pip
    would keep them, since `2.13.0+cpu` satisfies `==2.13.0`."""
    return [pin.name for pin in pins if pin.name in installed and label(installed[pin.name]) != pin.label]

"""Where things live: the repository's tutorial folders and the build folder's layout."""

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Tutorial source folder -> folder of the generated pages, as PyTorch's tutorials lay it out.
GALLERIES = {"beginner_source": "beginner"}

# Hand-written pages, staged beside the galleries for every language.
PAGES = ("index.md",)


def tutorial_sources(root=ROOT):
    """Every tutorial script, as (gallery source folder, path) pairs, in a stable order."""
    for src_dir in GALLERIES:
        for path in sorted((Path(root) / src_dir).glob("*.py")):
            yield src_dir, path


def page_for(src_dir, path):
    """The docname of a tutorial's page: beginner_source/x.py -> beginner/x."""
    return f"{GALLERIES[src_dir]}/{Path(path).stem}"


def tutorial_key(src_dir, path):
    """A tutorial's name in shards and durations: beginner_source/x."""
    return f"{src_dir}/{Path(path).stem}"


@dataclass(frozen=True)
class BuildTree:
    """The one place that knows the paths inside a build folder (BUILDDIR)."""

    root: Path

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root))  # given as a string by a command line too

    @property
    def html(self):
        return self.root / "html"

    @property
    def logs(self):
        return self.root / "logs"

    def src(self, lang):
        """The Sphinx source tree staged for one language."""
        return self.root / "src" / lang.seg

    def doctrees(self, lang):
        return self.root / "doctrees" / lang.seg

    @property
    def runs(self):
        """Every tutorial's run, as runs/<tutorial key>/ (see tutorial_key)."""
        return self.root / "runs"

    def run_dir(self, src_dir, path):
        """One tutorial's run, shared by every language: <builddir>/runs/<src_dir>/<stem>/."""
        return self.runs / tutorial_key(src_dir, path)

    def workdir(self, src_dir):
        """The working directory tutorials of a folder run in: links to the folder's files, writes stay here."""
        return self.root / "work" / src_dir

    @property
    def shard_record(self):
        """What a SHARD=i/N build executed, for `make assemble`."""
        return self.root / "shard.json"

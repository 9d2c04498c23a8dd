"""Where things live in a build folder."""

from dataclasses import dataclass
from pathlib import Path

from .languages import Language
from .sphinx_gallery_formats import TIMES_PAGE


def is_times_page(docname: str) -> bool:
    """Whether a page is one of sphinx-gallery's tables of computation times: its text is sphinx-gallery's and this
    build's timings, nobody's to translate."""
    return docname.rpartition("/")[2] == TIMES_PAGE


@dataclass(frozen=True)
class BuildTree:
    """The one place that knows the paths inside a build folder (BUILDDIR)."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))  # given as a string by a command line too

    @property
    def html(self) -> Path:
        """The built site: <builddir>/html/<seg>/ for each language."""
        return self.root / "html"

    @property
    def logs(self) -> Path:
        """Sphinx's log of each language's build: <builddir>/logs/<seg>.log."""
        return self.root / "logs"

    def src(self, lang: Language) -> Path:
        """The Sphinx source tree staged for one language."""
        return self.root / "src" / lang.seg

    def doctrees(self, lang: Language) -> Path:
        """Sphinx's doctrees (its cache of parsed pages) of one language."""
        return self.root / "doctrees" / lang.seg

    @property
    def runs(self) -> Path:
        """Every tutorial's run, as runs/<tutorial key>/ (see Tutorial.key)."""
        return self.root / "runs"

    def run_dir(self, key: str) -> Path:
        """One tutorial's run, shared by every language: <builddir>/runs/beginner_source/basics/<stem>/."""
        return self.runs / key

    @property
    def work(self) -> Path:
        """The folders of the run going on, made fresh for each run and removed after it: its working folder
        (work/<its folder>/) and the others (its temporary folder, HOME, output) in work/run-*/."""
        return self.root / "work"

    @property
    def shard_record(self) -> Path:
        """What a SHARD=i/N build executed, for `tutorials-site assemble`."""
        return self.root / "shard.json"

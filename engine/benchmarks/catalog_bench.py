"""What `make update-po` does to a catalog (read it, merge it, write it back), timed for one translation of a
growing length without a blank (a Chinese or Japanese paragraph): the time must grow linearly with the length
(Babel's own wrapping took minutes at 100,000 characters; core.text.catalogs wraps such a line in linear time).

`python benchmarks/catalog_bench.py` prints one line; `make bench` prints it too.
"""

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from babel.messages.catalog import Catalog  # noqa: E402

from tutorials_site.core import languages  # noqa: E402
from tutorials_site.core.text import catalogs  # noqa: E402

LENGTHS = (50_000, 100_000, 200_000)


def merge_seconds(length: int, folder: Path) -> float:
    """The time of merging (loading, updating, saving) a catalog whose one translation is LENGTH characters."""
    lang = languages.of("ja")
    template = Catalog(project="PyTorch Tutorials", fuzzy=False)
    template.add("A long paragraph.", locations=[("beginner_source/long.py", 3)])
    path = folder / f"long-{length}.po"
    catalog = catalogs.merge(template, path, lang)
    catalog["A long paragraph."].string = "長" * length
    catalogs.save(catalog, path)
    start = time.perf_counter()
    catalogs.merge(template, path, lang)
    return time.perf_counter() - start


def line() -> str:
    """The benchmark's line: the time at each of LENGTHS, and per 100,000 characters."""
    with tempfile.TemporaryDirectory() as tmp:
        seconds = {length: merge_seconds(length, Path(tmp)) for length in LENGTHS}
    shown = ", ".join(f"{length // 1000}k {s:.3f} s" for length, s in seconds.items())
    per = ", ".join(f"{s / length * 100_000:.3f}" for length, s in seconds.items())
    return (f"update-po, one translation without a blank: {shown}; per 100k characters {per} s "
            "(target: linear, the same figure at every length)")


if __name__ == "__main__":
    print(line())

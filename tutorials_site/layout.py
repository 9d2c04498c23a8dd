"""Where things live: the one place that maps tutorial folders to their pages."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

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

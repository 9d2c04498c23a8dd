"""`tutorials-site init`: what a site adds to build with the engine, written beside its own files and never over one.

- tutorials-site.mk: the engine's commands as make targets, for a site whose Makefile includes it;
- .github/workflows/tutorials-site.yml: a workflow calling the engine's reusable one, at this engine's release.

The rest of adopting the engine is the site's own two lines: the distribution in its requirements and
`"tutorials_site.sphinxext"` in conf.py's extensions; init says so where they are missing.
"""


from .. import __version__
from ..core import project
from ..core.assets import PACKAGE
from ..core.files import shown, write_atomically

ENGINE_REPOSITORY = "pytorch-tutorials-site/tutorials"  # where the engine, and its reusable workflow, live
RELEASE_TAG = f"engine-v{__version__}"  # the engine's releases are tagged apart from the first site's versions
FILES = {"tutorials-site.mk": "tutorials-site.mk", ".github/workflows/tutorials-site.yml": "workflow.yml"}
EXTENSION = "tutorials_site.sphinxext"


def written(name: str) -> str:
    """The text init writes at NAME (a key of FILES), for this release of the engine."""
    text = (PACKAGE / "ci" / FILES[name]).read_text(encoding="utf-8")
    return text.replace("{repository}", ENGINE_REPOSITORY).replace("{tag}", RELEASE_TAG)


def init(site: project.Project) -> None:
    """Write each of FILES the site lacks (one it has is left as it is, and named), then say what is still
    missing of the two lines a site writes itself."""
    for name in FILES:
        path = site.root / name
        if path.exists() or path.is_symlink():
            print(f"init: {shown(path)}: already there, left as it is")
            continue
        write_atomically(path, written(name))
        print(f"init: {shown(path)}: written")
    if EXTENSION not in site.conf.get("extensions", []):
        print(f'init: conf.py: add "{EXTENSION}" to extensions (after "sphinx_gallery.gen_gallery")')
    requirements = site.root / "requirements.txt"
    if requirements.is_file() and "tutorials-site" not in requirements.read_text(encoding="utf-8"):
        print(f"init: {shown(requirements)}: add the engine, tutorials-site=={__version__}")

"""The engine's own files besides its code, shipped in the package as Sphinx ships its own: templates,
static files and the translations of its labels.

- templates/common/: the parts every theme gets (language and version lists, their scripts);
- templates/<html_theme>/: overrides of one theme's templates (sphinx_rtd_theme's), used with that theme only;
- templates/site/: the pages of a published tree outside Sphinx (core.site.site_pages);
- static/: CSS and JS, linked from every page;
- locale/<code>/LC_MESSAGES/sphinx.po: the engine's labels (its code's, its templates', and the theme's
  where the theme ships no translation), compiled by the extension into the build's own folder.
"""

import re
from importlib import resources
from pathlib import Path

from . import languages

# The installed package's folder: Sphinx reads templates and static files from folders, so a package that is not
# a folder of files (imported from a zip) is refused here, at import, rather than half-working.
_FOUND = resources.files("tutorials_site")
if not isinstance(_FOUND, Path):
    raise ImportError(f"tutorials_site: installed as {_FOUND!r}, not as a folder of files; install it with pip")
PACKAGE = _FOUND
TEMPLATES = PACKAGE / "templates"
COMMON_TEMPLATES = TEMPLATES / "common"
SITE_PAGES = TEMPLATES / "site"
STATIC = PACKAGE / "static"
LOCALE = PACKAGE / "locale"
FOLDERS = (TEMPLATES, STATIC, LOCALE)


def theme_templates(theme: str) -> Path | None:
    """The engine's overrides of THEME's templates, where it has some."""
    folder = TEMPLATES / theme
    return folder if theme and folder.name not in ("common", "site") and folder.is_dir() else None


def label_po(lang: languages.Language) -> Path:
    """The engine's label catalog of a language."""
    return LOCALE / lang.code / "LC_MESSAGES" / "sphinx.po"


def files(package: Path = PACKAGE) -> list[Path]:
    """Every file of the engine's templates, static files and catalogs (in PACKAGE, the package's folder), in order."""
    folders = [package / folder.relative_to(PACKAGE) for folder in FOLDERS]
    return sorted(path for folder in folders for path in folder.rglob("*") if path.is_file())


# Font files a theme may ship; an SVG counts only inside a folder named "fonts" (elsewhere it is an image).
FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".otf", ".eot")
_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}")
_URL = re.compile(r"""url\(\s*['"]?([^'")?#]+)""")


def without_font_faces(css: str) -> str:
    """A stylesheet without its @font-face rules: for a theme's stylesheet whose every font the engine's own
    stylesheet replaces (system fonts for text, text for icons), so that its font files are referenced nowhere."""
    return _FONT_FACE.sub("", css)


def _is_font(path: Path) -> bool:
    return path.suffix in FONT_SUFFIXES or (path.suffix == ".svg" and "fonts" in path.parent.parts)


def unused_fonts(static: Path) -> list[Path]:
    """The font files under STATIC (a build's _static/) that no stylesheet under it names in a url(): files a
    page can never load. Sorted."""
    referenced: set[Path] = set()
    for sheet in static.rglob("*.css"):
        for target in _URL.findall(sheet.read_text(encoding="utf-8", errors="replace")):
            referenced.add((sheet.parent / target).resolve())
    return sorted(path for path in static.rglob("*") if path.is_file() and _is_font(path)
                  and path.resolve() not in referenced)

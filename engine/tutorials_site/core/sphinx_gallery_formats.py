"""sphinx-gallery's formats and names, each spelled once: what it reads of a script and a gallery, what it names
the files and labels it writes, how it lays out a page. Plain values and string logic, so that core/ can use them
(it imports no sphinx-gallery: the doors do, sphinx_gallery_run and sphinx_gallery_build), and so that the
doors and every other module use them instead of writing a format again.

Part of the run code's fingerprint (the runner names its figures with it, core.project finds the tutorials with
it): what a run writes follows these names. What only the Sphinx side needs stays in sphinx_gallery_build.

Each is held to sphinx-gallery's own code by tests/test_sphinx_gallery_api.py: its defaults, its parser's
patterns, the files its functions write, the pages they make. Marked as in the doors: *documented* (its user
guide), *reference* (its API reference only), *internal* (neither).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Of every file and label it names for a tutorial (documented: the figures' names).
PREFIX = "sphx_glr_"

# --- its configuration: the options the engine reads itself, with their defaults ---------------------------------


@dataclass(frozen=True)
class Option:
    """One of sphinx_gallery_conf's options the engine reads: sphinx-gallery's default (internal:
    gen_gallery.DEFAULT_GALLERY_CONF, which tests/test_sphinx_gallery_api.py holds this table to), and whether it
    changes what a run records (a run's fingerprint then holds it: core.runs.fingerprint)."""

    default: Any
    run: bool = True


# The one table of them. reset_argv's default is a callable of sphinx-gallery's (None here: conf.py gives its own).
GALLERY_OPTIONS = {
    "filename_pattern": Option(r"/plot", run=False),  # re.escape(os.sep) + "plot", on the systems that build here
    "ignore_pattern": Option(r"__init__\.py", run=False),
    "capture_repr": Option(("_repr_html_", "__repr__")),
    "ignore_repr_types": Option(""),
    "image_scrapers": Option(("matplotlib",)),
    "reset_argv": Option(None),
    "reset_modules": Option(("matplotlib", "seaborn")),
    "reset_modules_order": Option("before"),
    "inspect_global_variables": Option(True),
    "image_srcset": Option(()),
    "matplotlib_animations": Option(False),
}
RUN_OPTIONS = tuple(name for name, option in GALLERY_OPTIONS.items() if option.run)  # what a run's fingerprint holds


def option(options: Mapping[str, Any], name: str) -> Any:
    """The option NAME of GALLERY_OPTIONS as conf.py's sphinx_gallery_conf (OPTIONS) gives it, else
    sphinx-gallery's default."""
    return options.get(name, GALLERY_OPTIONS[name].default)

# The names it looks for a gallery header under, in its order (.txt, then the source suffixes sorted; internal:
# utils.iter_gallery_header_filenames, with the site's .md and .rst).
HEADER_NAMES = tuple(f"{stem}{ext}" for ext in (".txt", ".md", ".rst") for stem in ("GALLERY_HEADER", "README", "readme"))
# Its pages of computation times (internal: write_computation_times), at the source root and in each gallery.
TIMES_PAGE = "sg_execution_times"

# --- a script, as it reads it (internal: py_source_parser) ------------------------------------------------------

# A line that starts a text block: 20 or more `#`, or `# %%` (its split_code_and_text_blocks' pattern); a line
# without its end.
TEXT_BLOCK_HEADER = re.compile(r"#{20,}.*|# ?%%.*")
# A setting comment (`# sphinx_gallery_<name> = value`) and the lines that open and close an ignored part of a
# code block: its FLAG_START, INFILE_CONFIG_PATTERN, START_IGNORE_FLAG and END_IGNORE_FLAG, matched at a line's start.
CONFIG_COMMENT = re.compile(r"[ \t]*#\s*sphinx_gallery_\w+")
IGNORE_START = re.compile(r"[ \t]*#\s*sphinx_gallery_start_ignore")
IGNORE_END = re.compile(r"[ \t]*#\s*sphinx_gallery_end_ignore")


def kept_code_lines(lines: Sequence[str]) -> list[int]:
    """The indexes of the LINES of a code block that its page shows: ignored parts and setting comments removed
    (internal: gen_rst._clean_script_blocks, by remove_ignore_blocks and remove_config_comments)."""
    kept, ignoring = [], False
    for index, line in enumerate(lines):
        if IGNORE_START.match(line):
            ignoring = True
        elif IGNORE_END.match(line):
            ignoring = False
        elif not ignoring and not CONFIG_COMMENT.match(line):
            kept.append(index)
    return kept


def paragraph_starts(docstring: str) -> list[int]:
    """Where each paragraph of a script's docstring that it reads starts in DOCSTRING: the first is the title, the
    second the intro (a thumbnail's tooltip). Reference: extract_intro_and_title splits the docstring, stripped on
    the left, at empty lines and leaves out the empty parts and those that start with `.. `."""
    offset = len(docstring) - len(docstring.lstrip())
    starts = []
    for part in docstring[offset:].split("\n\n"):
        if part and not part.startswith(".. "):
            starts.append(offset + len(part) - len(part.lstrip("\n")))
        offset += len(part) + 2
    return starts


# --- the files it writes for a tutorial ------------------------------------------------------------------------


def image_path_template(images: Path, stem: str) -> str:
    """Where a tutorial's figures go: `sphx_glr_<stem>_<NNN>.png` in its gallery's images/, numbered from 1
    (documented: what the `image_path_iterator` a scraper is given yields)."""
    return str(images / f"{PREFIX}{stem}_{{0:03}}.png")


def figure_name(stem: str, srcset: bool = True) -> re.Pattern[str]:
    """The names of tutorial STEM's figure files in any format: sphx_glr_<stem>_<NNN>.<ext>, with SRCSET their
    srcset variants too (sphx_glr_<stem>_001_2_00x.png, internal); not those of <stem>_2, nor the thumbnail."""
    variants = r"(_\d+_\d+x)?" if srcset else ""
    return re.compile(rf"{PREFIX}{re.escape(stem)}_\d{{3}}{variants}\.\w+")


def figure_files(images: Path, stem: str) -> list[Path]:
    """Tutorial STEM's figures in a gallery's images/, their srcset variants included (figure_name)."""
    own = figure_name(stem)
    return sorted(path for path in Path(images).glob(f"{PREFIX}*") if own.fullmatch(path.name))


def figure_number(path: str) -> int:
    """A figure's number in its tutorial, from its file's name (documented: sphx_glr_<stem>_<NNN>)."""
    return int(Path(path).stem[-3:])


def default_alt(path: str) -> str:
    """The alt text figure_rst gives a figure without a title, made of its file's name (internal: the name without
    sphx_glr_ and _<NNN>, "-", "," and "_" as spaces)."""
    return re.sub(r"[-,_]", " ", Path(path).stem[len(PREFIX):-4])


def thumbnail_name(stem: str, suffix: str = ".png") -> str:
    """The name of the thumbnail save_thumbnail writes for tutorial STEM (internal: sphx_glr_<stem>_thumb, a PNG
    unless conf.py's `thumbnail_format` says otherwise)."""
    return f"{PREFIX}{stem}_thumb{suffix}"


# The option naming the picture sphinx-gallery scales into the thumbnail of a tutorial without a figure (documented).
PLACEHOLDER_OPTION = "default_thumb_file"


def thumbnail_path(folder: str, stem: str) -> str:
    """The thumbnail of a tutorial of a gallery folder, as a path from the source root (internal: in images/thumb/,
    where its gallery's thumbnails look too)."""
    return f"{folder}/images/thumb/{thumbnail_name(stem)}"


def page_label(page_path: str) -> str:
    """The reference label of a tutorial's page (documented): sphx_glr_<its path from the source root, with "_"
    for "/">, e.g. sphx_glr_beginner_basics_tensorqs_tutorial.py."""
    return PREFIX + page_path.replace("/", "_")


# --- the page it generates (internal: gen_rst.rst_blocks, save_rst_example, CODE_OUTPUT) --------------------------

# The comment line before every block of a page but the first (the title and intro), which the page's label
# `.. _sphx_glr_<path>:` just precedes; followed by " <first>-<last>", the block's lines in the script.
BLOCK_COMMENT = ".. GENERATED FROM PYTHON SOURCE LINES"
# The class of a code block's output (and a traceback's), `.. rst-class:: sphx-glr-script-out`, and of its HTML.
OUTPUT_CLASS = "sphx-glr-script-out"


def intro_end(page_rst: str) -> int:
    """Where, in a page sphinx-gallery generated, the comment line closing the intro starts; -1 if none."""
    return page_rst.find(BLOCK_COMMENT, page_rst.find(f".. _{PREFIX}"))

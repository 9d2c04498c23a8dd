"""sphinx-gallery's door for the runner: what a tutorial's own process needs of it.

One of the package's two modules that import sphinx_gallery (tests/test_package.py checks it); the other,
sphinx_gallery_build, is the Sphinx side's and the build's. This one is imported by the runner
(commands/runner.py) and the supervisor (commands/execute.py), so it is part of the run code's fingerprint
(core.runs.fingerprint): an edit to it runs every tutorial again, an edit to the Sphinx side runs none. It holds what
a run makes of a script with sphinx-gallery's code (its blocks, its figures through the scrapers, its output
blocks' reST) and nothing a run does not use. sphinx-gallery's formats and names, which core/ uses too, are in
core.sphinx_gallery_formats. sphinx-gallery's modules are imported where they are used, so that a tutorial's
process loads no more of it than it needs.

Each use says what sphinx-gallery promises about it, as in sphinx_gallery_build: *documented* (its user guide),
*reference* (its API reference only, which says these "will typically not be needed by end users"), *internal*
(neither: underscore names, the reST it writes). Each reference or internal use has a test in
tests/test_sphinx_gallery_api.py, which fails when an upgrade changes what it relies on; a private function says
there why no public one serves.
"""

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sphinx_gallery import py_source_parser

from .core.sphinx_gallery_formats import OUTPUT_CLASS

# --- a script, as sphinx-gallery reads it (reference) ------------------------------------------------------

Block = py_source_parser.Block  # a NamedTuple (type, content, lineno)
split_code_and_text_blocks = py_source_parser.split_code_and_text_blocks
extract_file_config = py_source_parser.extract_file_config


# --- its configuration, outside Sphinx (internal) -----------------------------------------------------------


def filled_conf(options: Mapping[str, Any], src_dir: Path) -> dict[str, Any]:
    """sphinx-gallery's configuration as an HTML build holds it once its builder has started, made from
    conf.py's `sphinx_gallery_conf` without a Sphinx application (the runner's).

    Internal: `_fill_gallery_conf_defaults(conf, app=None, check_keys=False)` fills the defaults, as
    `fill_gallery_conf_defaults` does at config-inited; `src_dir`, `builder_name` and `plot_gallery` are what
    `update_gallery_conf_builder_inited` sets at builder-inited.
    """
    from sphinx_gallery.gen_gallery import _fill_gallery_conf_defaults

    conf: dict[str, Any] = _fill_gallery_conf_defaults(options, app=None, check_keys=False)
    conf.update(src_dir=str(src_dir), builder_name="html", plot_gallery=True)
    return conf


# --- a code block's output, made in the runner --------------------------------------------------------------


def image_path_iterator(template: str) -> Any:
    """sphinx-gallery's `ImagePathIterator` over TEMPLATE (documented: a scraper's `block_vars`)."""
    from sphinx_gallery.scrapers import ImagePathIterator

    return ImagePathIterator(template)


def block_vars(iterator: Any, src_file: str, target_file: str, namespace: dict[str, Any],
               file_conf: Mapping[str, Any]) -> dict[str, Any]:
    """What the scrapers are given of a tutorial (`block_vars`): documented, `image_path_iterator` and
    `src_file`; internal, `target_file` (where a build copies the script), `example_globals` (where the matplotlib
    scraper looks for animations) and `file_conf` (the script's `sphinx_gallery_*` settings)."""
    return {"image_path_iterator": iterator, "src_file": src_file, "target_file": target_file,
            "example_globals": namespace, "file_conf": file_conf}


def reset_argv(conf: Mapping[str, Any], script_vars: Mapping[str, Any]) -> list[str]:
    """The arguments conf.py's `reset_argv` gives a tutorial (documented option; internal: `_get_callables(conf,
    "reset_argv")` resolves it, a name written as a string included)."""
    from sphinx_gallery.gen_rst import _get_callables

    (function,) = _get_callables(conf, "reset_argv")
    arguments: list[str] = function(conf, script_vars)
    return arguments


def clean_modules(conf: Mapping[str, Any], name: str, when: str) -> None:
    """conf.py's `reset_modules`, before or after a tutorial (documented)."""
    from sphinx_gallery.scrapers import clean_modules

    clean_modules(conf, name, when)


def save_figures(block: Any, variables: dict[str, Any], conf: Mapping[str, Any], multi_image: str | None) -> str:
    """The reST of the figures a block left open, saved by the configured scrapers (documented: `save_figures`).

    Internal: `block_vars["multi_image"]` holds the block's `sphinx_gallery_multi_image_block`, as
    `execute_code_block` sets it.
    """
    from sphinx_gallery.scrapers import save_figures

    variables["multi_image"] = multi_image
    return str(save_figures(block, variables, conf))


def saved_image(path: str) -> Path:
    """The file a scraper saved for PATH, in whichever format it chose (.svg, .webp…), looked up as
    sphinx-gallery looks it up (internal: `_find_image_ext(path)[0]`)."""
    from sphinx_gallery.scrapers import _find_image_ext

    return Path(_find_image_ext(path)[0])


def last_repr(capture: tuple[str, ...], value: Any) -> tuple[str | None, str | None]:
    """(text, method) of a block's last value by the first of CAPTURE's methods it has (`capture_repr`);
    internal: `_get_last_repr(capture_repr, value)`."""
    from sphinx_gallery.gen_rst import _get_last_repr

    text, method = _get_last_repr(capture, value)
    return text, method


def output_rst(text: str, images_rst: str = "", repr_method: str | None = None, repr_text: str | None = None) -> str:
    r"""The reST sphinx-gallery writes under a code block: its figures, what it printed (with its last value's
    text repr) and its last value's HTML repr, made by sphinx-gallery's own function from what was recorded.

    Internal: `_get_code_output(is_last_expr, example_globals, gallery_conf, logging_tee, images_rst,
    capture_repr)`, which reads the printed text from `logging_tee.output.getvalue()` and the last value from
    `example_globals["___"]`, and lays it out as "\n<figures>\n\n" + CODE_OUTPUT + HTML; CODE_OUTPUT's header
    is `.. rst-class:: sphx-glr-script-out` over a `.. code-block:: none` indented by one space.
    """
    from sphinx_gallery.gen_rst import CODE_OUTPUT, _get_code_output

    recorded = type("Recorded", (), {repr_method: lambda self: repr_text})() if repr_method else None
    tee = SimpleNamespace(output=SimpleNamespace(getvalue=lambda: text))
    capture = (repr_method,) if repr_method else ()
    rst = str(_get_code_output(repr_method is not None, {"___": recorded}, {"ignore_repr_types": ""}, tee,
                               images_rst, capture))
    # docutils strips the indentation all lines of a directive's content share: output whose every line
    # is indented would lose it. An option line indented one less keeps it (as sphinx-gallery's code blocks).
    figures, header = f"\n{images_rst}\n\n", CODE_OUTPUT.split("{0}")[0]
    if rst.startswith(figures + header):  # the text's block follows the figures
        kept = header.replace(" .. code-block:: none\n", " .. code-block:: none\n   :dedent: 1\n")
        rst = figures + kept + rst[len(figures + header):]
    return rst


def error_rst(traceback_text: str) -> str:
    r"""A failed block's traceback, as sphinx-gallery shows it (reference: `codestr2rst(text, lang="pytb")`).

    Internal: the layout of `handle_exception`'s reST (`.. rst-class:: sphx-glr-script-out` over the traceback's
    code block) and of `execute_code_block`'s around it ("\n" before, "\n\n\n\n" after).
    """
    from sphinx_gallery.gen_rst import codestr2rst

    return f"\n.. rst-class:: {OUTPUT_CLASS}\n\n{codestr2rst(traceback_text, lang='pytb')}\n\n\n\n"


def code_objects(blocks: list[Any], default_role: str, variables: dict[str, Any] | None, tree: Any) -> dict[str, Any]:
    """The names a script uses, resolved as sphinx-gallery resolves them for code links and backreferences
    (reference: `identify_names(script_blocks, ref_regex, global_variables, node)`; internal: `_make_ref_regex(
    default_role)`, the references it finds in the prose)."""
    from sphinx_gallery.backreferences import _make_ref_regex, identify_names

    names: dict[str, Any] = identify_names(blocks, _make_ref_regex(default_role), variables, tree)
    return names

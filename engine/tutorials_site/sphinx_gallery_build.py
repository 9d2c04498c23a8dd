"""sphinx-gallery's door for the Sphinx side and the build: what runs in Sphinx (sphinxext) and in the build's
own process (commands: its checks of a script and of conf.py), never in a tutorial's; and Sphinx beyond its
documented API.

One of the package's two modules that import sphinx_gallery (tests/test_package.py checks it); the other,
sphinx_gallery_run, holds what the runner needs and is part of the run code's fingerprint. This one is not (no
module of the runner imports it: tests/test_fingerprint.py checks an edit to it runs nothing again), so an edit
here re-renders pages and executes no tutorial. sphinx-gallery's formats and names, which core/ uses too, are in
core.sphinx_gallery_formats. Every use says what sphinx-gallery promises about it:

- *documented*: described in sphinx-gallery's user guide (configuration, writing a scraper);
- *reference*: listed in its API reference, which it generates from its code and which says these "will
  typically not be needed by end users": `extract_intro_and_title`, `rst_blocks`, `save_rst_example`,
  `save_thumbnail`, `jupyter_notebook`, `save_notebook`, `imgsgnode`;
- *internal*: neither: names with a leading underscore, `sphinx_gallery.utils`' `zip_files` and `get_md5sum`,
  module constants, the caches it keeps beside a page (`.md5`, `.cost.json`, `.codeobj.json`), the reST and
  HTML it writes, the priorities of its event handlers, its error messages.

Of Sphinx, what its documentation does not describe is here too, each marked "Sphinx internal": a page's
`css_files` entries, `env.images`, the standard domain's `labels`, `extract_messages` and the `translated` flag
of its i18n transform, the builder's Jinja environment, the order and registry of its `sphinx` catalogs.

Each reference or internal use has a test in tests/test_sphinx_gallery_api.py that runs it on a small input, or
reads what this module writes with sphinx-gallery's own reader, and fails when an upgrade changes what it relies
on; a private function says there why no public one serves. None of them builds the site. What core/ knows of
sphinx-gallery's output stays in core/ (it imports no Sphinx) and is tested there against sphinx-gallery's real
output too: its formats and names (core.sphinx_gallery_formats), its English strings (core.text.gallery_strings), the
output blocks of a built page (core.site.checks).
"""

import html
import inspect
import json
import re
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from textwrap import indent
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx_gallery import py_source_parser

from .core import sphinx_gallery_formats as formats

if TYPE_CHECKING:
    from sphinx.util.typing import ExtensionMetadata as ExtensionMetadata
else:
    # What an extension's setup() returns: a TypedDict from Sphinx 7.3, a plain dict before (7.2 has no such name).
    ExtensionMetadata = dict

# --- a script, as the build checks it before anything runs (reference) --------------------------------------


def extract_intro_and_title(filename: Path, docstring: str) -> tuple[str, str]:
    """(intro, title) of a script's docstring (reference); raises sphinx's ExtensionError where it has none."""
    from sphinx_gallery.gen_rst import extract_intro_and_title

    intro, title = extract_intro_and_title(filename, docstring)
    return intro, title


def docstring_problem(error: Exception) -> str:
    """What is wrong with a script sphinx-gallery refused, in a few words, from its error.

    Internal: its messages, "Could not find docstring in file …" and ones naming the title ("…should have a
    header for the example title…", "Could not find a title in first paragraph…").
    """
    said = str(error)
    if said.startswith("Could not find docstring"):
        return "no docstring"
    if "title" in said:
        return "its docstring has no title"
    return said.strip().splitlines()[0]


# --- its configuration, outside Sphinx (internal) -----------------------------------------------------------


def option_names() -> frozenset[str]:
    """The options sphinx-gallery knows. Internal: the keys of `gen_gallery.DEFAULT_GALLERY_CONF`, which its
    `_fill_gallery_conf_defaults` checks a configuration's keys against (and suggests from) at config-inited."""
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF

    return frozenset(DEFAULT_GALLERY_CONF)


def conf_problem(options: Mapping[str, Any]) -> str | None:
    """What sphinx-gallery's own check of the options' values refuses (its message, on one line); None where they
    pass. Internal: `_fill_gallery_conf_defaults(conf, app=None, check_keys=False)` raises Sphinx's ConfigError, as
    `fill_gallery_conf_defaults` would at config-inited, once the tutorials ran. `show_memory` is left out: the
    extension takes it before sphinx-gallery sees it (sphinxext.gallery.take_show_memory)."""
    from sphinx.errors import ConfigError
    from sphinx_gallery.gen_gallery import _fill_gallery_conf_defaults

    try:
        _fill_gallery_conf_defaults({k: v for k, v in options.items() if k != "show_memory"}, app=None, check_keys=False)
    except ConfigError as error:
        return " ".join(str(error).split())
    return None


def examples_it_ran(conf: Mapping[str, Any]) -> list[str]:
    """The examples sphinx-gallery executed itself in this build (internal: the `passing_examples` and
    `failing_examples` entries its generation fills in the configuration)."""
    return sorted({*conf["passing_examples"], *conf["failing_examples"]})


# Internal: the priorities sphinx-gallery's setup() connects its handlers at (Sphinx's default is 500).
FILLS_CONF = 10  # config-inited: fill_gallery_conf_defaults
STARTS_BUILDER = 10  # builder-inited: update_gallery_conf_builder_inited, which sets src_dir
GENERATES_GALLERIES = 500  # builder-inited: generate_gallery_rst, which writes the pages it finds stale

# Internal: sphinx-gallery's stylesheets (the names its `css` option knows) for HTML outputs (rendered HTML,
# DataFrames) and Binder badges.
OUTPUT_STYLESHEETS = frozenset({"sg_gallery-binder.css", "sg_gallery-dataframe.css", "sg_gallery-rendered-html.css"})


def without_stylesheets(css_files: Sequence[Any], names: frozenset[str]) -> list[Any]:
    """A page's `css_files` (html-page-context) without those named NAMES.

    Sphinx internal: each entry carries its path as `.filename` (sphinx.builders.html._assets).
    """
    return [css for css in css_files if Path(css.filename).name not in names]


# --- a page, written from a run (gallery.py) ------------------------------------------------------------------

# The language sphinx-gallery names .py examples in (internal: its _get_parser), which their code blocks are
# highlighted as.
LANGUAGE = "Python"


def clean_blocks(conf: Mapping[str, Any], blocks: list[Any], outputs: list[str]) -> tuple[list[Any], list[str]]:
    """The blocks and outputs a page and a notebook show, as generate_file_rst cleans them: ignore blocks and
    (with `remove_config_comments`) config comments removed, a last block left empty dropped with its output.

    Internal: `_clean_script_blocks(gallery_conf, parser module, script_blocks, output_blocks)`.
    """
    from sphinx_gallery.gen_rst import _clean_script_blocks

    cleaned, kept = _clean_script_blocks(conf, py_source_parser, blocks, outputs)
    return cleaned, kept


def figures_rst(images: Sequence[Path], alts: Sequence[str], src_dir: Path, image_srcset: Sequence[float],
                multi_image: bool) -> str:
    """The reST sphinx-gallery's matplotlib scraper writes for a block's figures IMAGES (in SRC_DIR), made here, by
    the build, from what a run recorded: each with its alt text (ALTS; "": sphinx-gallery's default, from its name),
    its srcset variants for IMAGE_SRCSET that exist beside it, several in a horizontal list, MULTI_IMAGE (not
    `sphinx_gallery_multi_image = "single"`) side by side.

    Reference: `figure_rst(figures, src_dir, titles, srcsetpaths)`. Internal: the scraper's layout of several
    figures (`HLIST_HEADER`, `HLIST_IMAGE_MATPLOTLIB`, the class `sphx-glr-multi-img`) and its srcset file names
    (`<stem>_<mult:.2f with _ for .>x<suffix>`).
    """
    from sphinx_gallery.scrapers import HLIST_HEADER, HLIST_IMAGE_MATPLOTLIB, figure_rst

    rsts = []
    for image, alt in zip(images, alts, strict=True):
        variants = {mult: image.with_name(f"{image.stem}_{f'{mult:.2f}'.replace('.', '_')}x{image.suffix}")
                    for mult in image_srcset}
        srcset = {0: image, **{mult: path for mult, path in variants.items() if path.is_file()}}
        rsts.append(str(figure_rst([image], str(src_dir), alt, srcsetpaths=[srcset])))
    if len(rsts) < 2:
        return "".join(rsts)
    if multi_image:
        rsts = [rst.replace(":class: sphx-glr-single-img", ":class: sphx-glr-multi-img") for rst in rsts]
    return str(HLIST_HEADER) + "".join(HLIST_IMAGE_MATPLOTLIB + indent(rst, " " * 6) for rst in rsts)


def save_page(target: Path, blocks: list[Any], outputs: list[str], file_conf: Mapping[str, Any],
              conf: Mapping[str, Any], seconds: float, memory: float) -> None:
    """Write the page of the script copied at TARGET (TARGET.rst, with sphinx-gallery's header and footer).

    Reference: `rst_blocks(script_blocks, output_blocks, file_conf, gallery_conf, language=)`, then
    `save_rst_example(example_rst, example_file, time_elapsed, memory_used, gallery_conf, language=, file_conf=)`;
    `file_conf` (for the script's tags) from 0.21, where tags came.
    """
    from sphinx_gallery.gen_rst import rst_blocks, save_rst_example

    example_rst = rst_blocks(blocks, outputs, file_conf, conf, language=LANGUAGE)
    tags = {"file_conf": file_conf} if "file_conf" in inspect.signature(save_rst_example).parameters else {}
    save_rst_example(example_rst, target, seconds, memory, conf, language=LANGUAGE, **tags)


def save_thumbnail(template: str, src_file: Path, script_vars: Mapping[str, Any], file_conf: Mapping[str, Any],
                   conf: Mapping[str, Any]) -> None:
    """The tutorial's thumbnail, made from its figures as sphinx-gallery chooses them (reference:
    `save_thumbnail(image_path_template, src_file, script_vars, file_conf, gallery_conf)`; `script_vars` holds the
    run's `image_path_iterator`, and `formatted_exception` when the run failed)."""
    from sphinx_gallery.gen_rst import save_thumbnail

    save_thumbnail(template, src_file, script_vars, file_conf, conf)


def md5_file(target: Path) -> Path:
    """The checksum beside the copy of a script (internal: `<name>.py.md5`)."""
    return Path(f"{target}.md5")


def write_md5(target: Path) -> None:
    """Tell sphinx-gallery the page of the script copied at TARGET is current, so that it executes nothing.

    Internal: `md5sum_is_current(target, mode="t")` compares `get_md5sum(target, mode="t")` with `<target>.md5`.
    """
    from sphinx_gallery.utils import get_md5sum

    md5_file(target).write_text(get_md5sum(target, mode="t"))


def write_cost(target: Path, seconds: float, memory: float) -> None:
    """The cost sphinx-gallery reports for an example it skips (its computation times).

    Internal: `<stem>.cost.json`, {"time": s, "memory": MB}, read by `_read_cached_cost`.
    """
    target.with_name(f"{target.stem}.cost.json").write_text(json.dumps({"time": seconds, "memory": memory}))


def write_code_objects(target: Path, code_objects: Mapping[str, Any] | None) -> None:
    """The names a script uses, for sphinx-gallery's code links and backreferences of an example it skips.

    Internal: `<stem>.codeobj.json`, what `identify_names` returns, read by `_read_cached_backrefs` and by the code
    links' `_load_code_obj`; none when the script uses no name.
    """
    path = target.with_name(f"{target.stem}.codeobj.json")
    if code_objects:
        path.write_text(json.dumps(code_objects, sort_keys=True))
    else:
        path.unlink(missing_ok=True)


def _cost_of(target: Path) -> tuple[float, float] | None:
    """The cost write_cost left beside the copy of a script; None where it left none (or one cut short)."""
    try:
        cost = json.loads(target.with_name(f"{target.stem}.cost.json").read_text())
        return float(cost["time"]), float(cost["memory"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _backrefs_of(conf: Mapping[str, Any], target: Path) -> set[str]:
    """The backreferences of the names write_code_objects left beside the copy of a script, named as
    sphinx-gallery names them (internal: its `_get_backreferences`' rule, `_backrefs_from_codeobj` from 0.22:
    names of `doc_module`, by their full name where `prefer_full_module` matches it, and implicit uses left out
    where `exclude_implicit_doc_regex` matches them; `prefer_full_module` is read where the release has it)."""
    try:
        code_objects = json.loads(target.with_name(f"{target.stem}.codeobj.json").read_text())
    except (OSError, ValueError):
        return set()
    excluded = conf["exclude_implicit_doc_regex"]

    def name(cobj: Mapping[str, Any]) -> str:
        full = f"{cobj['module']}.{cobj['name']}"
        return full if any(re.search(pattern, full) for pattern in conf.get("prefer_full_module", ())) else (
            f"{cobj['module_short']}.{cobj['name']}")

    return {name(cobj) for cobjs in code_objects.values() for cobj in cobjs
            if cobj["module"].startswith(conf["doc_module"])
            and (cobj["is_explicit"] or not excluded or not excluded.search(f"{cobj['module']}.{cobj['name']}"))}


def report_cached_examples() -> None:
    """Make a sphinx-gallery release before 0.22 report, for an example it skips (its md5 is current: a page
    rendered from a run), the cost and the backreferences it reports from 0.22 on, from write_cost's and
    write_code_objects' files. It reports (0, 0) and none there, so its computation times and mini-galleries would
    leave out every tutorial the runner executed. Nothing to do from 0.22 on, nor twice.

    Internal: gen_rst's `generate_dir_rst` calls `generate_file_rst(fname, target_dir, src_dir, gallery_conf)` by its
    module's name, which returns (intro, title, (time, memory), out_vars), out_vars without "backrefs" where it
    skipped the example; 0.22 reads both files there (`_read_cached_cost`, `_read_cached_backrefs`).
    """
    from sphinx_gallery import gen_rst

    generate = gen_rst.generate_file_rst
    if hasattr(gen_rst, "_read_cached_cost") or hasattr(generate, "reports_cached_examples"):
        return

    def generate_file_rst(fname: str, target_dir: str, src_dir: str, conf: dict[str, Any]) -> tuple[Any, ...]:
        intro, title, cost, out_vars = generate(fname, target_dir, src_dir, conf)
        if "backrefs" not in out_vars:  # skipped
            target = Path(target_dir, fname)
            cost = _cost_of(target) or cost
            out_vars["backrefs"] = _backrefs_of(conf, target)
        return intro, title, cost, out_vars

    generate_file_rst.reports_cached_examples = True  # type: ignore[attr-defined]
    gen_rst.generate_file_rst = generate_file_rst


def notebook(blocks: list[Any], conf: Mapping[str, Any], target_dir: Path) -> dict[str, Any]:
    """The notebook of BLOCKS (reference: `jupyter_notebook(script_blocks, gallery_conf, target_dir)`)."""
    from sphinx_gallery.notebook import jupyter_notebook

    content: dict[str, Any] = jupyter_notebook(blocks, conf, target_dir)
    return content


def save_notebook(content: Mapping[str, Any], path: Path) -> None:
    """Reference: `save_notebook(work_notebook, write_file)`."""
    from sphinx_gallery.notebook import save_notebook

    save_notebook(content, path)


def zip_files(files: Sequence[Path], archive: Path, relative_to: Path) -> Path:
    """A zip of FILES named as from RELATIVE_TO (internal: `sphinx_gallery.utils.zip_files(file_list, zipname,
    relative_to)`, which returns the zip's path)."""
    from sphinx_gallery.utils import zip_files

    return Path(zip_files(files, archive, relative_to))


def preload() -> None:
    """Import sphinx-gallery's extension and matplotlib, set up as sphinx-gallery sets it up (its agg backend),
    once, before the builds are forked (internal: `scrapers._import_matplotlib()`)."""
    import sphinx_gallery.gen_gallery  # noqa: F401
    from sphinx_gallery.scrapers import _import_matplotlib

    _import_matplotlib()


# --- reading the pages it generated -------------------------------------------------------------------------


def figure_nodes(doctree: nodes.Node) -> Iterator[nodes.Element]:
    """The figures of a page: the `image-sg` directive's nodes (reference: `imgsgnode`)."""
    from sphinx_gallery.directives import imgsgnode

    return doctree.findall(imgsgnode)


def has_figures(doctree: nodes.Node) -> bool:
    """Whether the page shows any of sphinx-gallery's figures."""
    return next(iter(figure_nodes(doctree)), None) is not None


def has_default_alt(figure: nodes.Element) -> bool:
    """Whether a figure's alt text is the one `figure_rst` makes of its file name when the figure has no title."""
    return bool(figure["alt"] == formats.default_alt(figure["uri"]))


def figure_number(figure: nodes.Element) -> int:
    """A figure's number in its tutorial, from its file name."""
    return formats.figure_number(figure["uri"])


def set_alt(figure: nodes.Element, alt: str) -> None:
    """Give a figure an alt text. Internal: with a srcset, `visit_imgsg_html` writes the alt text into the page
    as it is, so it is escaped here."""
    figure["alt"] = html.escape(alt) if figure["srcset"] is not None else alt


def notebook_downloads(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, nodes.Element]]:
    """(link, box) of each notebook download of a page: its `:download:` reference and the container it sits in.

    Internal: save_rst_example writes each download as a paragraph holding the link, alone in a
    `.. container:: sphx-glr-download sphx-glr-download-<kind>`.
    """
    from sphinx import addnodes

    for link in doctree.findall(addnodes.download_reference):
        if link.get("reftarget", "").endswith(".ipynb") and "filename" in link:
            yield link, link.parent.parent


def download_box(*content: nodes.Node, kind: str) -> nodes.container:
    """A download box as sphinx-gallery's footer lays them out (internal: its classes, which its stylesheet
    styles), holding CONTENT in a paragraph."""
    box = nodes.container(classes=["sphx-glr-download", f"sphx-glr-download-{kind}"])
    box += nodes.paragraph("", "", *content)
    return box


def download_footer(doctree: nodes.Node) -> nodes.Element | None:
    """The container of an example page's download boxes; None on any other page.

    Internal: save_rst_example writes them, with the download note's target, in a
    `.. container:: sphx-glr-footer sphx-glr-footer-example` at the end of the page.
    """
    return next((node for node in doctree.findall(nodes.container) if _FOOTER in node["classes"]), None)


def download_note(doctree: nodes.Node) -> nodes.Element | None:
    """The note at the top of an example page that sends the reader to the download boxes at its end; None
    where there is none. Internal: an admonition of class `sphx-glr-download-link-note` (see EXAMPLE_PAGE_MARK)."""
    return next((node for node in doctree.findall(nodes.Element) if _NOTE in node["classes"]), None)


def built_image(env: Any, path: str) -> str | None:
    """The name in the build's _images/ of an image a page shows, given as a path from the source root; None
    when no page shows it. Sphinx internal: `env.images` maps it to (documents, name)."""
    found = env.images.get(path)
    return found[1] if found else None


# --- a gallery's thumbnails ------------------------------------------------------------------------------------

# Internal: a gallery's index holds each thumbnail as raw HTML, `<div class="sphx-glr-thumbcontainer"
# tooltip="<intro>">`, the intro with the reST sphinx-gallery's intro extraction leaves in it.
_THUMBNAIL = "sphx-glr-thumbcontainer"


def is_thumbnail(raw_html: str) -> bool:
    """Whether a raw HTML node holds sphinx-gallery's thumbnails (a gallery index's cards)."""
    return _THUMBNAIL in raw_html


class _Thumbnails(HTMLParser):
    """The start tags of the thumbnails in a piece of HTML, as written, with their attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "div" and _THUMBNAIL in (values.get("class") or "").split() and values.get("tooltip") is not None:
            self.found.append((self.get_starttag_text() or "", attrs))


def tooltip_text(text: str, title_of: Callable[[str], str | None]) -> str:
    r"""A thumbnail's tooltip without the reST left in it: escapes (`\ ` before a particle) and references
    without a title, shown as their label (`sphx_glr_<path>.py`, sphinx-gallery's label of a tutorial) and here
    as the title TITLE_OF gives that label."""
    text = re.sub(r"\\(.)", lambda m: "" if m[1].isspace() else m[1], text)

    def title(match: re.Match[str]) -> str:
        found = title_of(match[0])
        return match[0] if found is None else found

    return re.sub(rf"{formats.PREFIX}\w+\.py", title, text)


def clean_tooltips(raw_html: str, title_of: Callable[[str], str | None]) -> str:
    """RAW_HTML with each thumbnail's tooltip made plain text (tooltip_text), read with an HTML parser."""
    parser = _Thumbnails()
    parser.feed(raw_html)
    parser.close()
    for written, attrs in parser.found:
        values = [(name, tooltip_text(value, title_of) if name == "tooltip" and value is not None else value)
                  for name, value in attrs]
        tag = "<div" + "".join(f' {name}="{html.escape(value)}"' if value is not None else f" {name}"
                               for name, value in values) + ">"
        raw_html = raw_html.replace(written, tag, 1)
    return raw_html


def messages_left_in_english(doctree: nodes.Element) -> Iterator[str]:
    """The texts of a page Sphinx looks up in a catalog and found no translation for.

    Sphinx internal: `sphinx.util.nodes.extract_messages` gives (node, text) of what its i18n transform looks up;
    that transform sets `node["translated"]` where it used a translation.
    """
    from sphinx.util.nodes import extract_messages

    return (message for node, message in extract_messages(doctree) if not node.get("translated"))


# Internal: what every HTML page sphinx-gallery renders from an example carries (its footer's download box).
_NOTE = "sphx-glr-download-link-note"
_FOOTER = "sphx-glr-footer"
EXAMPLE_PAGE_MARK = _FOOTER  # on every example page's HTML, wherever the page puts its download boxes


# conf.py's own settings, by the configuration they are of (see keep_conf_py_values). Keyed weakly on it.
_conf_py: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def keep_conf_py_values(config: Any) -> None:
    """Keep conf.py's own settings, before Sphinx applies the command line's (at an extension's setup).

    Sphinx internal: Config keeps conf.py's namespace as `_raw_config`, which Sphinx before 7.3 overwrites with
    the overrides (`-D language=ko`) in `init_values`, after the extensions' setup and before config-inited.
    """
    _conf_py[config] = dict(getattr(config, "_raw_config", {}))


def conf_py_value(config: Any, name: str) -> Any:
    """A setting as conf.py itself wrote it, whatever a command line overrode (`-D language=ko`); None where
    conf.py sets none (or the configuration is not Sphinx's). Sphinx internal: `_raw_config`, as it was when
    keep_conf_py_values kept it."""
    return _conf_py.get(config, getattr(config, "_raw_config", {})).get(name)


def add_template_filter(app: Any, name: str, function: Callable[..., Any]) -> None:
    """A filter for the HTML templates; a builder without templates is left alone.

    Sphinx internal: the builder's `templates` (its template bridge) holds the Jinja environment as
    `.environment`.
    """
    templates = getattr(app.builder, "templates", None)
    if templates is not None:
        templates.environment.filters[name] = function


def add_label_catalog(app: Any, locale_dir: Path) -> None:
    """Make the `sphinx` catalog, which the templates and `get_translation("sphinx")` read, again with the
    catalogs in LOCALE_DIR (<language>/LC_MESSAGES/sphinx.mo) after the project's and before Sphinx's own:
    `app.add_message_catalog("sphinx", …)` would put them after Sphinx's, whose translations of the same
    words (a theme's) would then win.

    Sphinx internal: the order `Sphinx._init_i18n` loads catalogs in (the project's `locale_dirs`, the
    system's, Sphinx's package's), `sphinx.locale.translators`, and `app.translator`, which the builder,
    created after config-inited, hands to its templates.
    """
    import sphinx
    from sphinx import locale
    from sphinx.util.i18n import CatalogRepository

    config = app.config
    project = CatalogRepository(app.srcdir, config.locale_dirs, config.language, config.source_encoding)
    locale.translators.pop(("general", "sphinx"), None)
    app.translator, _ = locale.init([*project.locale_dirs, locale_dir, None, Path(sphinx.package_dir, "locale")],
                                    config.language)

def render_template(app: Any, name: str, context: dict[str, Any]) -> str:
    """The HTML builder's template NAME rendered with a page's CONTEXT, as the builder renders its pages.

    Sphinx internal: the builder's `templates` attribute (its TemplateBridge, whose `render` is documented).
    """
    return str(app.builder.templates.render(name, context))

def label_title(env: Any, label: str) -> str | None:
    """The title of the section a reference label names (Sphinx internal: the standard domain's `labels`,
    label -> (document, anchor, title))."""
    labels = env.get_domain("std").labels
    return labels[label][2] if label in labels else None


def node_location(node: nodes.Node) -> str | None:
    """Where a node was written, as Sphinx's warnings name it ("path:line", "path:", "<unknown>:line").

    Sphinx internal: `sphinx.util.logging.get_node_location`, what its warning handler turns a node location into.
    """
    from sphinx.util.logging import get_node_location

    return get_node_location(node)


def page_being_read(env: Any) -> str | None:
    """The page Sphinx is reading, or resolving for writing; None between pages. `env.docname` is documented;
    Sphinx 7 keeps it in `temp_data`, which has no entry between pages (Sphinx internal)."""
    try:
        docname = env.docname
    except KeyError:
        return None
    return str(docname) if docname else None

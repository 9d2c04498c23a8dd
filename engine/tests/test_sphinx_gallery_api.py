"""What the site relies on of sphinx-gallery beyond its user guide, each on a small input: an upgrade that changes
a signature, a file format, a string or a layout fails here, in seconds, not in a site build.

The pages these tests read are made by sphinx-gallery's own functions, through its two doors (the modules that import
sphinx_gallery: tutorials_site.sphinx_gallery_run, the runner's, and tutorials_site.sphinx_gallery_build, the
Sphinx side's), and one of them is built by Sphinx, alone. What core.sphinx_gallery_formats spells of its formats is
held here to sphinx-gallery's own code.
"""

import ast
import gettext
import html
import inspect
import io
import json
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
import sphinx
import sphinx.locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import docutils_namespace, patch_docutils
from sphinx_gallery import backreferences, gen_gallery, gen_rst, notebook, scrapers, utils

from conftest import ENGINE
from tutorials_site import sphinx_gallery_build as sg
from tutorials_site import sphinx_gallery_run as sgr
from tutorials_site.core import assets, languages
from tutorials_site.core import sphinx_gallery_formats as formats
from tutorials_site.core.site import checks, staging
from tutorials_site.core.sphinx_gallery_formats import figure_files
from tutorials_site.core.text import catalogs
from tutorials_site.core.text.gallery_strings import GALLERY_TEMPLATES, match_gallery_template
from tutorials_site.sphinxext import gallery

PACKAGE = ENGINE / "tutorials_site"
DOORS = (PACKAGE / "sphinx_gallery_run.py", PACKAGE / "sphinx_gallery_build.py")

# The private names of sphinx-gallery's the doors use, each with why no public name serves.
PRIVATE = {
    # Fills conf.py's options with the defaults as config-inited does; the public fill_gallery_conf_defaults takes a
    # Sphinx application and its config, which the runner and the build's check of conf.py have not.
    "gen_gallery._fill_gallery_conf_defaults",
    # Removes ignored parts and setting comments from all blocks and drops a last block left empty with its output;
    # the public remove_ignore_blocks and remove_config_comments do one block, not that last step.
    "gen_rst._clean_script_blocks",
    # Resolves conf.py's reset_argv, given as a callable or as "module.name"; no public function resolves it.
    "gen_rst._get_callables",
    # The repr a block's last value is shown by (capture_repr, ignore_repr_types); only execute_code_block, which
    # runs the code in Sphinx's own process, calls it.
    "gen_rst._get_last_repr",
    # The reST of a block's output, laid out as sphinx-gallery lays it out; only execute_code_block, which runs the
    # code itself, calls it: output_rst hands it the run's recorded text and value in place of its tee and globals.
    "gen_rst._get_code_output",
    # The file a scraper saved for an image path, in whichever format it chose; no public lookup.
    "scrapers._find_image_ext",
    # matplotlib on its agg backend, set up as a build sets it up; the public scraper does it at its first figure,
    # after the builds are forked.
    "scrapers._import_matplotlib",
    # The pattern of the references identify_names looks for in the prose; identify_names takes it made.
    "backreferences._make_ref_regex",
}


def test_the_private_names_the_doors_use_are_those_pinned_here():
    used = {f"{node.module.removeprefix('sphinx_gallery.')}.{alias.name}" for door in DOORS
            for node in ast.walk(ast.parse(door.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sphinx_gallery.")
            for alias in node.names if alias.name.startswith("_")}
    assert used == PRIVATE


# Every function of sphinx-gallery's the doors call, with the parameters it passes them (a keyword-only one
# after "*"; "?": passed where the installed release has it): a renamed, removed or reordered parameter fails here.
CALLED = [
    (gen_gallery._fill_gallery_conf_defaults, "sphinx_gallery_conf app check_keys"),
    (gen_gallery._update_gallery_conf_builder_inited, "sphinx_gallery_conf src_dir plot_gallery abort_on_example_error "
                                                      "builder_name"),
    (gen_rst._clean_script_blocks, "gallery_conf parser script_blocks output_blocks"),
    (gen_rst.rst_blocks, "script_blocks output_blocks file_conf gallery_conf * language"),
    (gen_rst.save_rst_example, "example_rst example_file time_elapsed memory_used gallery_conf * language file_conf?"),
    (gen_rst.save_thumbnail, "image_path_template src_file script_vars file_conf gallery_conf"),
    (gen_rst.extract_intro_and_title, "filename docstring"),
    (gen_rst._get_callables, "gallery_conf key src_dir"),
    (gen_rst._get_last_repr, "capture_repr ___"),
    (gen_rst._get_code_output, "is_last_expr example_globals gallery_conf logging_tee images_rst capture_repr"),
    (gen_rst.codestr2rst, "codestr lang lineno"),
    (gen_rst.md5sum_is_current, "src_file mode"),
    (gen_rst.generate_file_rst, "fname target_dir src_dir gallery_conf"),
    (notebook.jupyter_notebook, "script_blocks gallery_conf target_dir"),
    (notebook.save_notebook, "work_notebook write_file"),
    (utils.zip_files, "file_list zipname relative_to extension"),
    (utils.get_md5sum, "src_file mode"),
    (scrapers.ImagePathIterator, "image_path"),
    (scrapers.save_figures, "block block_vars gallery_conf"),
    (scrapers.clean_modules, "gallery_conf fname when"),
    (scrapers._find_image_ext, "path"),
    (scrapers._import_matplotlib, ""),
    (backreferences.identify_names, "script_blocks ref_regex global_variables node"),
    (backreferences._make_ref_regex, "default_role"),
]


@pytest.mark.parametrize("function, parameters", CALLED, ids=[f.__qualname__ for f, _ in CALLED])
def test_the_functions_called_take_the_parameters_passed(function, parameters):
    written = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in written:
            written.append("*")
        written.append(parameter.name)
    passed = [name.rstrip("?") for name in parameters.split() if not name.endswith("?") or name[:-1] in written]
    assert written == passed


def test_a_block_and_the_language_of_a_script_are_what_sphinx_gallery_makes(tmp_path):
    assert sgr.Block._fields == ("type", "content", "lineno")  # built positionally by gallery.py
    assert gen_rst._get_parser("demo.py", sgr.filled_conf({}, tmp_path))[1] == sg.LANGUAGE


# --- one page, made by sphinx-gallery's functions as gallery.render makes it, then built by Sphinx ---------------

SCRIPT = '''"""
A demo
======

What the demo shows.
"""

print("hello")

# %%
# Some prose.

for line in ("  indented", "  also"):
    print(line)

# %%
raise ValueError("boom")
'''
TRACEBACK = 'Traceback (most recent call last):\n  File "plot_demo.py", line 17\nValueError: boom\n'
ALT = 'a <figure> & "more"'


def _png(path, size=(40, 30)):
    from PIL import Image

    Image.new("RGB", size, "red").save(path)


def _shown_alt(app, doctree, docname):
    for figure in sg.figure_nodes(doctree):
        sg.set_alt(figure, ALT)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """g/plot_demo.py's page (a figure and printed text, indented text, a traceback), its notebook, zip and
    thumbnail, in a Sphinx project that shows the thumbnail too; built to HTML."""
    src = tmp_path_factory.mktemp("sphinx_gallery_api") / "src"
    images = src / "g" / "images"
    images.mkdir(parents=True)
    script = src / "g" / "plot_demo.py"
    script.write_text(SCRIPT, encoding="utf-8")
    conf = sgr.filled_conf({}, src)
    template = formats.image_path_template(images, "plot_demo")
    produced = sgr.image_path_iterator(template)
    figure = next(produced)
    _png(figure)
    file_conf, blocks = sgr.split_code_and_text_blocks(str(script))
    code_outputs = iter([sgr.output_rst("hello\n", scrapers.figure_rst([figure], str(src))),
                         sgr.output_rst("  indented\n  also\n"), sgr.error_rst(TRACEBACK)])
    outputs = [next(code_outputs) if block.type == "code" else "" for block in blocks]
    blocks, outputs = sg.clean_blocks(conf, blocks, outputs)
    sg.save_page(script, blocks, outputs, file_conf, conf, seconds=1.5, memory=0.0)
    sg.save_thumbnail(template, script, {"image_path_iterator": produced}, file_conf, conf)
    notebook_file = script.with_suffix(".ipynb")
    sg.save_notebook(sg.notebook(blocks, conf, script.parent), notebook_file)
    archive = sg.zip_files([script, notebook_file], script.with_suffix(".zip"), script.parent)
    (src / "conf.py").write_text('extensions = ["sphinx_gallery.gen_gallery"]\n'
                                 'sphinx_gallery_conf = {"examples_dirs": [], "gallery_dirs": []}\n'
                                 'language = "fr"\nlocale_dirs = ["locales"]\ngettext_compact = False\n')
    catalog = Catalog(locale="fr")
    catalog.add("Some prose.", "De la prose.")
    (src / "locales" / "fr" / "LC_MESSAGES" / "g").mkdir(parents=True)
    with open(src / "locales" / "fr" / "LC_MESSAGES" / "g" / "plot_demo.mo", "wb") as mo:
        write_mo(mo, catalog)
    (src / "index.rst").write_text("Index\n=====\n\n.. toctree::\n\n   g/plot_demo\n\n"
                                   f".. image:: /{formats.thumbnail_path('g', 'plot_demo')}\n")
    out = src.parent / "html"
    translators = dict(sphinx.locale.translators)  # Sphinx installs its French ones for the whole process
    try:
        with patch_docutils(src), docutils_namespace():
            app = Sphinx(src, src, out, src.parent / "doctrees", "html", status=None, warning=io.StringIO(),
                         freshenv=True)
            app.connect("doctree-resolved", _shown_alt)
            app.build()
    finally:
        sphinx.locale.translators.clear()
        sphinx.locale.translators.update(translators)
    return SimpleNamespace(src=src, out=out, app=app, rst=script.with_suffix(".rst").read_text(encoding="utf-8"),
                           doctree=app.env.get_doctree("g/plot_demo"), html=(out / "g" / "plot_demo.html"),
                           figure=Path(figure), archive=archive, notebook=notebook_file, script=script)


def test_the_page_shows_each_output_block_as_the_checks_read_it(page):
    # core.site.checks reads what Sphinx writes of sphinx-gallery's output blocks; output whose every line is
    # indented keeps its indentation (output_rst's :dedent:); a traceback is an output block too.
    assert checks.page_outputs(page.html) == ["hello\n", "  indented\n  also\n", TRACEBACK]


def test_the_intro_ends_at_the_first_generated_block_comment(page):
    at = formats.intro_end(page.rst)
    assert page.rst[at:].startswith(".. GENERATED FROM PYTHON SOURCE LINES")
    intro = page.rst[:at]
    assert f".. _{formats.page_label('g/plot_demo.py')}:" == ".. _sphx_glr_g_plot_demo.py:"
    assert ".. _sphx_glr_g_plot_demo.py:" in intro and "What the demo shows." in intro and "hello" not in intro


def test_every_gallery_string_is_a_text_of_the_page(page):
    # i18n translates sphinx-gallery's English strings where they stand alone in a text node.
    found = {match_gallery_template(text.astext())[0] for text in page.doctree.findall(nodes.Text)
             if match_gallery_template(text.astext())}
    assert found == set(GALLERY_TEMPLATES)


def test_the_notebook_download_is_a_link_alone_in_its_box_of_the_footer(page):
    (link, box), = sg.notebook_downloads(page.doctree)
    assert link["reftarget"] == page.notebook.name
    assert "sphx-glr-download-jupyter" in box["classes"] and "sphx-glr-footer" in box.parent["classes"]
    assert box.astext() == f"Download Jupyter notebook: {page.notebook.name}"
    # The box beside it (colab) is styled as sphinx-gallery's: it shares their class.
    assert set(sg.download_box(nodes.Text("x"), kind="colab")["classes"]) & set(box["classes"]) == {"sphx-glr-download"}


def test_the_download_footer_and_the_note_pointing_at_it_are_found(page):
    footer, note = sg.download_footer(page.doctree), sg.download_note(page.doctree)
    (_, box), = sg.notebook_downloads(page.doctree)
    assert footer is box.parent
    assert note is not None and note.astext().startswith("Go to the end")
    assert sg.EXAMPLE_PAGE_MARK in page.html.read_text(encoding="utf-8")
    assert sg.download_footer(nodes.section()) is None and sg.download_note(nodes.section()) is None


def test_a_figure_is_found_by_its_node_numbered_and_named_by_its_file(page):
    (figure,) = sg.figure_nodes(page.doctree)
    assert sg.has_figures(page.doctree) and sg.figure_number(figure) == 1
    assert sg.has_default_alt(figure), figure["alt"]  # figure_rst's alt text, made of the file's name
    assert figure_files(page.figure.parent, "plot_demo") == [page.figure]


class _Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.alts = {}

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.alts[Path(dict(attrs)["src"]).name] = dict(attrs).get("alt")


def test_an_alt_text_set_on_a_figure_is_what_the_page_shows(page):
    images = _Images()
    images.feed(page.html.read_text(encoding="utf-8"))
    assert images.alts[page.figure.name] == ALT


def test_what_staging_takes_for_a_tutorials_generated_files_is_what_sphinx_gallery_wrote(page):
    written = {path for path in (page.src / "g").rglob("*") if path.is_file()}
    assert set(staging._generated(page.src / "g", "plot_demo")) == written


def test_the_thumbnail_is_where_the_gallery_looks_and_sphinx_names_it(page):
    assert (page.src / formats.thumbnail_path("g", "plot_demo")).is_file()
    name = sg.built_image(page.app.env, formats.thumbnail_path("g", "plot_demo"))
    assert name and (page.out / "_images" / name).is_file()
    assert sg.built_image(page.app.env, "g/images/thumb/none.png") is None


def test_the_texts_left_in_english_are_those_without_a_translation(page):
    left = list(sg.messages_left_in_english(page.doctree))
    assert "What the demo shows." in left and "Some prose." not in left
    assert "De la prose." in page.html.read_text(encoding="utf-8")


def test_a_template_filter_is_used_by_the_html_templates(page):
    sg.add_template_filter(page.app, "shout", str.upper)
    assert page.app.builder.templates.render_string("{{ 'quiet'|shout }}", {}) == "QUIET"
    sg.add_template_filter(SimpleNamespace(builder=SimpleNamespace()), "shout", str.upper)  # no templates: nothing


def test_a_template_is_rendered_with_a_page_s_context(page):
    assert sg.render_template(page.app, "!searchbox.html", {"pagename": "index", "builder": "html",
                                                             "pathto": lambda *_: "search.html"}).count("<form") == 1


def test_a_label_catalog_comes_after_the_site_s_and_before_sphinx_s_own(sphinx_app):
    labels = catalogs.translations(catalogs.load(assets.label_po(languages.BY_CODE["zh_CN"])))
    sphinx_own = gettext.translation("sphinx", Path(sphinx.package_dir, "locale"), ["zh_CN"]).gettext
    # a label Sphinx's own catalog translates otherwise (which labels, depends on the release)
    label = min(msgid for msgid, text in labels.items() if text and sphinx_own(msgid) not in (msgid, text))
    engine = labels[label]
    ours = "站点自己的译文"
    site_po = f'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Languages"\nmsgstr "{ours}"\n'
    app, _, _ = sphinx_app({"locales/zh_CN/LC_MESSAGES/sphinx.po": site_po}, language="zh_CN", locale_dirs=["locales"])
    translate = sphinx.locale.get_translation("sphinx")
    assert translate(label) == engine and translate("Languages") == ours
    assert app.builder.templates.render_string("{{ _('" + label + "') }} {{ _('Languages') }}", {}) == f"{engine} {ours}"


def test_a_tutorials_label_names_its_title(page):
    assert sg.label_title(page.app.env, "sphx_glr_g_plot_demo.py") == "A demo"
    assert sg.label_title(page.app.env, "sphx_glr_g_missing.py") is None


def _code_links_of(src, docname):
    """The names sphinx-gallery links in a page's code, as its code links read them (internal: from 0.22
    `_doctree_links._load_code_obj(app, docname)`, before it docs_resolv's `_read_json` of `<page>.codeobj.json`)."""
    try:
        from sphinx_gallery._doctree_links import _load_code_obj
    except ImportError:
        path = src / f"{docname}.codeobj.json"
        return utils._read_json(path) if path.exists() else None
    return _load_code_obj(SimpleNamespace(srcdir=src), docname)


def test_the_caches_are_read_by_sphinx_gallerys_readers(tmp_path):
    script = tmp_path / "g" / "demo.py"
    script.parent.mkdir()
    (tmp_path / "src").mkdir()
    script.write_text('"""\nT\n=\n"""\nimport os\n\nprint(os.path.join("a", "b"))\n')
    # the md5 that makes sphinx-gallery skip the example, until the script changes
    sg.write_md5(script)
    assert gen_rst.md5sum_is_current(script, mode="t")
    script.write_text(script.read_text() + "# changed\n")
    assert not gen_rst.md5sum_is_current(script, mode="t")
    # the names for its code links
    _, blocks, tree = sgr.split_code_and_text_blocks(str(script), return_node=True)
    names = sgr.code_objects(blocks, "", None, tree)
    assert names["os.path.join"][0].keys() >= {"name", "module", "module_short", "is_class", "is_explicit"}
    sg.write_code_objects(script, names)
    assert _code_links_of(tmp_path, "g/demo") == names
    # the cost and the backreferences it reports for it, skipping it: as it generates a gallery (its copy of the
    # script, already there, with its md5)
    (tmp_path / "src" / "demo.py").write_text(script.read_text())
    sg.write_md5(script)
    sg.write_cost(script, 2.5, 120.0)
    sg.report_cached_examples()
    conf = sgr.filled_conf({"doc_module": ("os",), "backreferences_dir": "gen"}, tmp_path)
    _, _, cost, out_vars = gen_rst.generate_file_rst("demo.py", str(script.parent), str(tmp_path / "src"), conf)
    assert cost == (2.5, 120.0) and out_vars["backrefs"] == {"os.path.join"}
    sg.write_code_objects(script, {})  # no name used: no file
    assert _code_links_of(tmp_path, "g/demo") is None
    assert gen_rst.generate_file_rst("demo.py", str(script.parent), str(tmp_path / "src"), conf)[3]["backrefs"] == set()


def test_the_downloads_are_a_notebook_and_a_zip_named_from_the_gallery(page):
    assert json.loads(page.notebook.read_text())["nbformat"] == 4
    with zipfile.ZipFile(page.archive) as archive:
        assert sorted(archive.namelist()) == ["plot_demo.ipynb", "plot_demo.py"]


def test_the_pages_it_would_have_executed_are_none(page):
    assert sg.examples_it_ran(page.app.config.sphinx_gallery_conf) == []
    assert sg.examples_it_ran({"passing_examples": ["b.py"], "failing_examples": {"a.py": "trace"}}) == ["a.py", "b.py"]


# --- without a build -------------------------------------------------------------------------------------------


def test_the_configuration_is_filled_as_a_builder_start_fills_it(tmp_path):
    conf = sgr.filled_conf({"line_numbers": True}, tmp_path)
    assert conf["line_numbers"] is True and conf["capture_repr"] == ("_repr_html_", "__repr__")
    set_at_start = {}
    gen_gallery._update_gallery_conf_builder_inited(set_at_start, tmp_path)  # its defaults: HTML, plotting
    assert set(set_at_start) == {"src_dir", "builder_name", "plot_gallery", "abort_on_example_error"}
    ours = ("src_dir", "builder_name", "plot_gallery")  # abort_on_example_error: the runner never aborts
    assert {key: str(conf[key]) for key in ours} == {key: str(set_at_start[key]) for key in ours}


def test_cleaning_drops_ignored_lines_config_comments_and_a_last_empty_block(tmp_path):
    script = tmp_path / "demo.py"
    script.write_text('"""\nT\n=\n"""\n\n# sphinx_gallery_start_ignore\nhidden = 1\n# sphinx_gallery_end_ignore\n'
                      'shown = 2\n\n# %%\n# Prose.\n\n# sphinx_gallery_thumbnail_number = 1\n')
    _, blocks = sgr.split_code_and_text_blocks(str(script))
    assert [block.type for block in blocks] == ["text", "code", "text", "code"]
    conf = sgr.filled_conf({"remove_config_comments": True}, tmp_path)
    cleaned, outputs = sg.clean_blocks(conf, blocks, [f"out{k}" for k in range(len(blocks))])
    assert [block.type for block in cleaned] == ["text", "code", "text"] and outputs == ["out0", "out1", "out2"]
    assert "hidden" not in cleaned[1].content and "shown = 2" in cleaned[1].content


def test_an_output_block_keeps_its_figures_text_and_html_as_sphinx_gallery_lays_them_out():
    rst = sgr.output_rst("printed\n", ".. image-sg:: /x.png", "__repr__", "'value'")
    assert rst.startswith("\n.. image-sg:: /x.png\n\n.. rst-class:: sphx-glr-script-out\n\n .. code-block:: none\n"
                          "   :dedent: 1\n\n")
    assert "    printed\n\n    'value'" in rst
    html_repr = sgr.output_rst("", "", "_repr_html_", "<b>bold</b>")
    assert ".. raw:: html" in html_repr and "<b>bold</b>" in html_repr and "sphx-glr-script-out" not in html_repr
    assert sgr.output_rst("").strip() == ""


def test_a_traceback_is_shown_as_sphinx_gallerys_handle_exception_shows_it(tmp_path):
    conf = sgr.filled_conf({}, tmp_path)
    script_vars = {}
    try:
        raise ValueError("boom")
    except ValueError:
        shown = gen_rst.handle_exception(sys.exc_info(), str(tmp_path / "demo.py"), script_vars, conf)
    assert sgr.error_rst(script_vars["formatted_exception"]) == f"\n{shown}\n\n\n\n"


def test_the_last_value_is_shown_by_the_first_method_captured():
    class Value:
        def _repr_html_(self):
            return "<b>v</b>"

        def __repr__(self):
            return "v"

    assert sgr.last_repr(("_repr_html_", "__repr__"), Value()) == ("<b>v</b>", "_repr_html_")
    assert sgr.last_repr(("__repr__",), Value()) == ("v", "__repr__")
    assert sgr.last_repr(("__repr__",), None) == ("None", None)  # as after print(): nothing shown


def test_a_figure_saved_in_another_format_is_found(tmp_path):
    (tmp_path / "sphx_glr_demo_001.svg").write_text("<svg/>")
    assert sgr.saved_image(str(tmp_path / "sphx_glr_demo_001.png")) == tmp_path / "sphx_glr_demo_001.svg"
    assert sgr.saved_image(str(tmp_path / "sphx_glr_demo_002.png")) == tmp_path / "sphx_glr_demo_002.png"


def test_the_scrapers_save_a_blocks_figures_with_our_block_vars(tmp_path):
    sg.preload()  # matplotlib on agg, as a stock build sets it up
    import matplotlib
    import matplotlib.pyplot as plt

    assert matplotlib.get_backend().lower() == "agg"
    images = tmp_path / "g" / "images"
    images.mkdir(parents=True)
    conf = sgr.filled_conf({"image_srcset": ["2x"]}, tmp_path)
    iterator = sgr.image_path_iterator(formats.image_path_template(images, "demo"))
    variables = sgr.block_vars(iterator, str(tmp_path / "demo.py"), str(tmp_path / "g" / "demo.py"), {}, {})
    block = sgr.Block("code", "plt.plot([1, 2])\n", 1)
    for multi_image, expected in ((None, "sphx-glr-horizontal"), ("single", "sphx-glr-single-img")):
        plt.figure()
        plt.figure()
        rst = sgr.save_figures(block, variables, conf, multi_image)
        assert expected in rst and rst.count(".. image-sg::") == 2
    assert [path.name for path in figure_files(images, "demo")] == [
        f"sphx_glr_demo_00{n}{variant}.png" for n in (1, 2, 3, 4) for variant in ("", "_2_00x")]
    assert len(iterator) == 4


def test_reset_argv_is_called_with_the_configuration_and_the_tutorials_vars(tmp_path):
    conf = sgr.filled_conf({"reset_argv": lambda conf, script_vars: ["--from", Path(script_vars["src_file"]).name]},
                          tmp_path)
    assert sgr.reset_argv(conf, {"src_file": "demo.py"}) == ["--from", "demo.py"]


def _setup_calls(setup):
    """(event, handler name, priority) of each handler a Sphinx extension's setup() connects."""
    connected = []

    class App:
        extensions = {}

        def connect(self, event, handler, priority=500):
            connected.append((event, handler.__name__, priority))

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    setup(App())
    return connected


def test_our_handlers_run_before_and_after_sphinx_gallerys_as_intended():
    theirs = _setup_calls(gen_gallery.setup)
    assert ("config-inited", "fill_gallery_conf_defaults", sg.FILLS_CONF) in theirs
    assert ("builder-inited", "update_gallery_conf_builder_inited", sg.STARTS_BUILDER) in theirs
    assert ("builder-inited", "generate_gallery_rst", sg.GENERATES_GALLERIES) in theirs
    ours = {(event, name): priority for event, name, priority in _setup_calls(gallery.setup)}
    assert ours[("config-inited", "take_show_memory")] < sg.FILLS_CONF
    assert sg.STARTS_BUILDER < ours[("builder-inited", "render_galleries")] < sg.GENERATES_GALLERIES
    assert ours[("builder-inited", "refuse_own_execution")] > sg.GENERATES_GALLERIES


def test_the_stylesheets_left_out_are_sphinx_gallerys_and_named_as_sphinx_holds_them():
    assert {name.removesuffix(".css") for name in sg.OUTPUT_STYLESHEETS} < set(gen_gallery._KNOWN_CSS)
    static = Path(gen_gallery.__file__).parent / "_static"
    assert all((static / name).is_file() for name in sg.OUTPUT_STYLESHEETS)
    from sphinx.builders.html._assets import _CascadingStyleSheet

    css_files = [_CascadingStyleSheet(f"_static/{name}") for name in ("sg_gallery.css", *sorted(sg.OUTPUT_STYLESHEETS))]
    assert [css.filename for css in sg.without_stylesheets(css_files, sg.OUTPUT_STYLESHEETS)] == ["_static/sg_gallery.css"]


@pytest.mark.parametrize("text, problem", [
    ("print(1)\n", "no docstring"),
    ('"""\n.. only a comment\n"""\nprint(1)\n', "its docstring has no title"),
    ('"""\n======\n"""\nprint(1)\n', "its docstring has no title"),
])
def test_a_script_sphinx_gallery_refuses_is_said_why(tmp_path, text, problem):
    script = tmp_path / "demo.py"
    script.write_text(text)
    with pytest.raises(ExtensionError) as refused:
        _, blocks = sgr.split_code_and_text_blocks(str(script))
        sg.extract_intro_and_title(script, blocks[0].content)
    assert sg.docstring_problem(refused.value) == problem


def test_a_thumbnails_tooltip_loses_the_rest_left_in_it(tmp_path):
    docstring = "Title\n=====\n\nThe\\ *first* paragraph, after :ref:`sphx_glr_g_other.py` & more."
    intro, _ = sg.extract_intro_and_title(tmp_path / "demo.py", docstring)
    thumbnail = backreferences._thumbnail_div(tmp_path / "g", tmp_path, "demo.py", intro, "Title", check=False)
    raw = next(line for line in thumbnail.splitlines() if "<div" in line)
    assert sg.is_thumbnail(raw)
    cleaned = sg.clean_tooltips(raw, {"sphx_glr_g_other.py": "Other <tutorial>"}.get)

    class Tooltip(HTMLParser):
        def handle_starttag(self, tag, attrs):
            self.value = dict(attrs).get("tooltip", getattr(self, "value", None))

    found = Tooltip()
    found.feed(cleaned)
    assert "\\" not in found.value and "Other <tutorial>" in found.value and "& more" in found.value
    # the tag is written again as it was, the tooltip aside
    assert cleaned == raw.replace(f'tooltip="{html.escape(intro)}"', f'tooltip="{html.escape(found.value)}"')


# --- its formats, as core.sphinx_gallery_formats spells them ------------------------------------------------------


def test_the_defaults_of_the_options_the_engine_reads_are_sphinx_gallerys(tmp_path):
    defaults = gen_gallery.DEFAULT_GALLERY_CONF
    for name, option in formats.GALLERY_OPTIONS.items():
        theirs = defaults[name]
        if name == "reset_argv":  # a callable of sphinx-gallery's: an argument list of its own making
            assert callable(theirs) and option.default is None
            continue
        assert (tuple(theirs) if isinstance(theirs, list) else theirs) == option.default, name
    # The options the runner reads (RunOptions) and the fingerprint holds are those the table marks.
    assert set(formats.RUN_OPTIONS) == set(formats.GALLERY_OPTIONS) - {"filename_pattern", "ignore_pattern"}
    # the header it takes in a folder holding every name, then without that one, ... (conf.py's source_suffix: the site's)
    conf = {**sgr.filled_conf({}, tmp_path), "source_suffix": {".rst": "restructuredtext", ".md": "markdown"}}
    (tmp_path / "h").mkdir()
    for name in formats.HEADER_NAMES:
        (tmp_path / "h" / name).write_text("T\n=\n")
    taken = []
    while (found := gen_rst._get_gallery_header(tmp_path / "h", conf, raise_error=False)) is not None:
        taken.append(Path(found).name)
        Path(found).unlink()
    assert tuple(taken) == formats.HEADER_NAMES
    (tmp_path / "g").mkdir()
    gen_gallery.write_computation_times(sgr.filled_conf({}, tmp_path), tmp_path / "g", [])
    assert [path.name for path in (tmp_path / "g").iterdir()] == [f"{formats.TIMES_PAGE}.rst"]


@pytest.mark.parametrize("line", ["#" * 20, "#" * 30 + " title", "#" * 19, "# %%", "#%% a title", "# %", "## %%",
                                  "  # %%", "# %% [markdown]"])
def test_a_text_block_starts_where_sphinx_gallery_starts_one(tmp_path, line):
    script = tmp_path / "demo.py"
    script.write_text(f'"""\nT\n=\n"""\nx = 1\n{line}\n# prose\ny = 2\n')
    _, blocks = sgr.split_code_and_text_blocks(str(script))
    assert bool(formats.TEXT_BLOCK_HEADER.fullmatch(line)) == ("text" in [block.type for block in blocks[1:]])


def test_a_code_block_keeps_the_lines_sphinx_gallery_keeps(tmp_path):
    code = ["a = 1\n", "# sphinx_gallery_thumbnail_number = 2\n", "  #sphinx_gallery_defer_figures\n",
            "# sphinx_gallery_start_ignore\n", "hidden = 2\n", "  # sphinx_gallery_end_ignore\n", "b = 3\n",
            "# sphinx gallery, no setting\n", "c = 4\n"]
    script = tmp_path / "demo.py"
    script.write_text('"""\nT\n=\n"""\n' + "".join(code))
    _, blocks = sgr.split_code_and_text_blocks(str(script))
    cleaned, _ = sg.clean_blocks(sgr.filled_conf({"remove_config_comments": True}, tmp_path), blocks, ["", ""])
    assert "".join(code[k] for k in formats.kept_code_lines(code)) == cleaned[1].content
    assert formats.kept_code_lines(code) == [0, 6, 7, 8]


@pytest.mark.parametrize("docstring", [
    "\nTitle\n=====\n\nThe intro,\non two lines.\n\nMore prose.\n",
    "Title\n=====\n\n.. note a comment\n\nThe intro.\n",
    "\n\n.. _a-label:\n\nTitle\n=====\n\n\n\nThe intro, after blank lines.\n",
    "Only a title\n============\n",
])
def test_the_intro_is_the_paragraph_sphinx_gallery_takes(tmp_path, docstring):
    intro, title = sg.extract_intro_and_title(tmp_path / "demo.py", docstring)
    starts = formats.paragraph_starts(docstring)
    assert docstring[starts[0]:].startswith(title)
    ours = docstring[starts[1]:].split("\n\n")[0] if len(starts) > 1 else title
    assert " ".join(ours.split()) == " ".join(intro.split())

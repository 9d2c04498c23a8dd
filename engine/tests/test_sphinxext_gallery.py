"""sphinxext.gallery: every tutorial's page rendered from its one run, and sphinx-gallery kept from executing."""

import dataclasses
import hashlib
import json
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from sphinx.errors import ExtensionError

from tutorials_site.core.runs import seal
from tutorials_site.core.runs.records import BlockRecord, Hardware, RunRecord, Stamp
from tutorials_site.core.runs.runs import RESULT, STAMP
from tutorials_site.core.runs.stamps import stamp_path
from tutorials_site.sphinxext import gallery
from tutorials_site.sphinxext.gallery import (
    drop_removed_pages,
    drop_unused_css,
    refuse_own_execution,
    render_galleries,
    site_project,
    take_show_memory,
)


def test_refuse_own_execution_names_what_sphinx_gallery_ran(fake_app):
    app = fake_app()
    app.config.sphinx_gallery_conf = {"passing_examples": ["/x/a.py"], "failing_examples": {}}
    with pytest.raises(ExtensionError, match=r"a\.py"):
        refuse_own_execution(app)
    app.config.sphinx_gallery_conf = {"passing_examples": [], "failing_examples": {}}
    refuse_own_execution(app)


def test_the_project_is_discovered_once_per_configuration_and_kept_on_it_never_pickled(fake_app):
    app, other = fake_app(), fake_app()
    project = site_project(app.config)
    assert site_project(app.config) is project
    assert site_project(other.config) is not project  # another configuration, even with equal values
    app.config.sphinx_gallery_conf = dict(app.config.sphinx_gallery_conf)
    assert site_project(app.config) is not project  # sphinx_gallery_conf replaced: discovered from the new one
    # On the configuration itself, under a name Sphinx's Config leaves out of the pickled environment.
    assert gallery.STATE.startswith("_") and vars(app.config)[gallery.STATE].project is site_project(app.config)


def test_no_part_of_the_extension_keeps_a_build_s_state_in_its_module():
    import weakref

    from tutorials_site import sphinxext

    for part in sphinxext.PARTS:
        state = [name for name, value in vars(part).items() if not name.startswith("__") and not name.isupper()
                 and isinstance(value, (dict, list, set, weakref.WeakKeyDictionary, weakref.WeakValueDictionary))]
        assert not state, f"{part.__name__}: {state}"


# --- conf.py's options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value, shown", [(True, True), (False, False), (None, False), (print, False)])
def test_show_memory_is_taken_from_sphinx_gallery_and_shown_from_the_supervisor_s_measure(fake_app, value, shown):
    app = fake_app()
    conf = {"examples_dirs": ["beginner_source"], **({"show_memory": value} if value is not None else {})}
    app.config.sphinx_gallery_conf = conf
    take_show_memory(app, app.config)
    assert app.config.tutorials_show_memory is shown
    # sphinx-gallery measures nothing where it is ours (a function of the user's own is left to sphinx-gallery).
    assert app.config.sphinx_gallery_conf == ({**conf, "show_memory": False} if shown else conf)
    assert conf.get("show_memory") is value  # conf.py's dictionary itself unchanged


def test_sphinx_gallery_s_stylesheets_for_outputs_no_run_gives_are_left_out(fake_app):
    css = [SimpleNamespace(filename=f"_static/{name}") for name in
           ("pygments.css", "sg_gallery.css", "sg_gallery-binder.css", "sg_gallery-dataframe.css",
            "sg_gallery-rendered-html.css", "tutorials.css")]
    context = {"css_files": css}
    drop_unused_css(fake_app(), "index", "page.html", context, None)
    assert [Path(c.filename).name for c in context["css_files"]] == ["pygments.css", "sg_gallery.css", "tutorials.css"]


# --- pages of tutorials that are gone ------------------------------------------------------------------

@pytest.fixture
def built_pages(fake_app):
    """An HTML output with the pages of a gallery (one of them gone from the sources) and of another folder."""
    from tutorials_site.sphinx_gallery_build import EXAMPLE_PAGE_MARK

    app = fake_app()
    for name in ("beginner/index.html", "beginner/kept.html", "beginner/gone.html", "beginner/[odd].html",
                 "_sources/beginner/gone.rst.txt", "_sources/beginner/gone.py.txt", "_sources/beginner/kept.rst.txt",
                 "_sources/beginner/[odd].rst.txt", "notes/gone.html", "beginner/moved.html"):
        (app.outdir / name).parent.mkdir(parents=True, exist_ok=True)
        # sphinx-gallery's example pages carry its mark; beginner/moved.html is another extension's redirect stub
        (app.outdir / name).write_text("x" if name == "beginner/moved.html" else f'<p class="{EXAMPLE_PAGE_MARK}">')
    app.env.found_docs = {"beginner/index", "beginner/kept", "notes/other"}
    return app


def files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_gone_tutorial_s_page_and_its_sources_are_removed_after_the_build(built_pages):
    drop_removed_pages(built_pages, None)
    assert files(built_pages.outdir) == ["_sources/beginner/kept.rst.txt", "beginner/index.html", "beginner/kept.html",
                                         "beginner/moved.html",  # no example page of sphinx-gallery's
                                         "notes/gone.html"]  # outside the galleries: not ours to remove


@pytest.mark.parametrize("failed, builder", [(True, "html"), (False, "latex")])
def test_nothing_is_removed_after_a_failed_build_or_by_another_builder(built_pages, failed, builder):
    before = files(built_pages.outdir)
    built_pages.builder.format = builder
    drop_removed_pages(built_pages, RuntimeError("failed") if failed else None)
    assert files(built_pages.outdir) == before


# --- rendering from the runs (a small Sphinx project, sphinx-gallery's configuration whole) -------------------

SCRIPT = '''"""
A tiny tutorial
===============

Prints one line.
"""

print("hello from the run")
'''
KEY = "beginner_source/data_parallel_tutorial"  # a tutorial of conf.py's galleries, this script in its place
UNRUN = ("beginner_source/ddp_tutorial",)  # the other one: shown without output here
HARDWARE = Hardware(device="CPU", gpus=0, machine="x86_64", torch="2.13.0", cuda=None)


def record_run(runs, text, seconds=1.25):
    """A run of SCRIPT as the runner records it: its output, and its stamp."""
    run_dir = runs / KEY
    RunRecord(blocks=(BlockRecord(line=8, texts=(text,), images=()),), error=None,
              seconds=seconds).write(run_dir / RESULT)
    stamp = Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=seconds, failed=False,
                  peak_rss_mb=50.0, gpu_peak_mb=(), hardware=HARDWARE, commit="abc", date="2025-06-01 12:00 UTC",
                  files=seal.seal(runs, KEY))
    stamp.write(run_dir / STAMP)
    return stamp


def test_a_run_becomes_the_page_sphinx_gallery_keeps_and_is_not_rendered_again(sphinx_app, tmp_path):
    stamp = record_run(tmp_path / "runs", "hello from the run\n")
    files = {"beginner_source/data_parallel_tutorial.py": SCRIPT}
    app, log, _ = sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    target = app.srcdir / "beginner" / "data_parallel_tutorial.py"
    rendering = "[gallery] data_parallel_tutorial.py: rendering the run's output"
    assert rendering in log.getvalue()
    rst = target.with_suffix(".rst").read_text()
    assert "sphx-glr-script-out" in rst and "    hello from the run" in rst and "(0 minutes 1.250 seconds)" in rst
    assert target.read_text() == SCRIPT
    assert Path(f"{target}.md5").read_text() == hashlib.md5(SCRIPT.encode()).hexdigest()  # sphinx-gallery skips it
    assert Stamp.read(stamp_path(target)) == dataclasses.replace(stamp, files=())  # the page's copy, without the seal
    notebook = json.loads(target.with_suffix(".ipynb").read_text())
    assert any('print("hello from the run")' in "".join(cell["source"]) for cell in notebook["cells"])
    with zipfile.ZipFile(target.with_suffix(".zip")) as archive:
        assert sorted(archive.namelist()) == ["data_parallel_tutorial.ipynb", "data_parallel_tutorial.py"]
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}  # equal sources, equal bytes
    assert app.config.sphinx_gallery_conf["passing_examples"] == []  # sphinx-gallery executed nothing

    _, log, _ = sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    assert rendering not in log.getvalue()  # the same run, the same script: nothing to write again
    record_run(tmp_path / "runs", "hello from another run\n")
    _, log, _ = sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    assert rendering in log.getvalue() and "    hello from another run" in target.with_suffix(".rst").read_text()


def test_a_change_of_sphinx_gallery_s_settings_renders_the_page_and_its_thumbnail_again(sphinx_app, tmp_path):
    from PIL import Image

    from tutorials_site.core.sphinx_gallery_formats import thumbnail_name

    record_run(tmp_path / "runs", "hello from the run\n")
    placeholder = tmp_path / "placeholder.png"
    Image.new("RGB", (60, 60), "red").save(placeholder)

    def build(**options):
        files = {"beginner_source/data_parallel_tutorial.py": SCRIPT}
        app, log, _ = sphinx_app(files, options, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
        thumb = app.srcdir / "beginner" / "images" / "thumb" / thumbnail_name("data_parallel_tutorial")
        with Image.open(thumb) as image:
            return "rendering the run's output" in log.getvalue(), image.size, image.getpixel((image.width // 2, 0))

    assert build()[:2] == (True, (400, 280))  # sphinx-gallery's defaults: its own placeholder, 400 x 280
    assert build()[0] is False
    rendered, size, _ = build(thumbnail_size=(200, 140))
    assert (rendered, size) == (True, (200, 140))
    rendered, size, top = build(thumbnail_size=(200, 140), default_thumb_file=str(placeholder))
    assert (rendered, size, top[:3]) == (True, (200, 140), (255, 0, 0))  # the new placeholder, not the kept one
    assert build(thumbnail_size=(200, 140), default_thumb_file=str(placeholder))[0] is False
    Image.new("RGB", (60, 60), "blue").save(placeholder)  # the same setting, another picture
    rendered, _, top = build(thumbnail_size=(200, 140), default_thumb_file=str(placeholder))
    assert (rendered, top[:3]) == (True, (0, 0, 255))


def test_a_page_left_unrun_forgets_the_run_it_was_rendered_from(sphinx_app, tmp_path):
    record_run(tmp_path / "runs", "hello from the run\n")
    files = {"beginner_source/data_parallel_tutorial.py": SCRIPT}
    app, _, _ = sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    target = app.srcdir / "beginner" / "data_parallel_tutorial.py"
    assert stamp_path(target).exists()
    sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=(KEY, *UNRUN))
    assert not stamp_path(target).exists() and not target.with_name(f"{target.stem}.run.json").exists()
    assert "sphx-glr-script-out" not in target.with_suffix(".rst").read_text()  # sphinx-gallery's page: no output


def test_a_tutorial_without_its_run_or_with_a_damaged_one_stops_the_build(sphinx_app, tmp_path):
    files = {"beginner_source/data_parallel_tutorial.py": SCRIPT}
    (tmp_path / "runs").mkdir()
    with pytest.raises(ExtensionError, match=f"{KEY}.py: no run in .*runs/{KEY}; tutorials are executed by "):
        sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    record_run(tmp_path / "runs", "hello\n")
    (tmp_path / "runs" / KEY / RESULT).write_text("{")
    with pytest.raises(ExtensionError, match=f"{KEY}.py: .*damaged, not JSON.*build again with"):
        sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)


def test_a_page_is_never_rendered_from_a_run_that_is_not_as_sealed(sphinx_app, tmp_path):
    files = {"beginner_source/data_parallel_tutorial.py": SCRIPT}
    record_run(tmp_path / "runs", "hello\n")
    forged = tmp_path / "runs" / KEY / "page" / "beginner" / "images" / "forged.js"
    forged.parent.mkdir(parents=True)
    forged.write_text("forged()")
    with pytest.raises(ExtensionError, match=f"^{KEY}.py: its run is not the one its stamp sealed: {forged}: not in "
                                             "its stamp's seal \\(added after the run\\?\\); build again with"):
        sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)


def test_html_noplot_renders_nothing_from_runs(fake_app, tmp_path):
    app = fake_app(tutorials_runs="")
    render_galleries(app)
    assert not app.srcdir.exists()


def test_every_notebook_is_written_in_plain_markdown_with_a_tutorial_s_title_for_its_label(sphinx_app, tmp_path):
    record_run(tmp_path / "runs", "hello from the run\n")
    script = SCRIPT.replace("Prints one line.", "Prints one line. See :class:`~torch.nn.DataParallel`\\\\ , and "
                            ":ref:`sphx_glr_beginner_ddp_tutorial.py`.")
    ddp = '"""\nDDP, in short\n=============\n\nWith :func:`torch.distributed.init_process_group`.\n"""\nx = 1\n'
    files = {"beginner_source/data_parallel_tutorial.py": script, "beginner_source/ddp_tutorial.py": ddp}
    app, _, _ = sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    for stem, wanted in (("data_parallel_tutorial", "Prints one line. See ``DataParallel``, and DDP, in short."),
                         ("ddp_tutorial", "With ``torch.distributed.init_process_group``.")):
        notebook = app.srcdir / "beginner" / f"{stem}.ipynb"  # rendered from its run, or written by sphinx-gallery
        markdown = "".join("".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]
                           if cell["cell_type"] == "markdown")
        assert wanted in markdown and ":class:" not in markdown and ":func:" not in markdown, markdown
        with zipfile.ZipFile(notebook.with_suffix(".zip")) as archive:
            assert archive.read(notebook.name) == notebook.read_bytes()


def test_a_zip_holds_the_script_as_it_is_where_the_notebook_did_not_change(sphinx_app, tmp_path):
    record_run(tmp_path / "runs", "hello from the run\n")
    plain = '"""\nPlain\n=====\n\nNo role, no escape.\n"""\nx = 1\n'  # its page is sphinx-gallery's (unrun)
    files = {"beginner_source/data_parallel_tutorial.py": SCRIPT, "beginner_source/ddp_tutorial.py": plain}
    app, _, _ = sphinx_app(files, tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    target = app.srcdir / "beginner" / "data_parallel_tutorial.py"
    notebook = target.with_suffix(".ipynb").read_bytes()
    # A setting comment: the script changes, its notebook does not (the comment is not shown).
    changed = SCRIPT.replace('print("hello', '# tutorials-timeout: 60\nprint("hello')
    sphinx_app({**files, "beginner_source/data_parallel_tutorial.py": changed},
               tutorials_runs=str(tmp_path / "runs"), tutorials_unrun=UNRUN)
    assert target.with_suffix(".ipynb").read_bytes() == notebook
    with zipfile.ZipFile(target.with_suffix(".zip")) as archive:
        assert archive.read(target.name).decode() == changed
    # The page sphinx-gallery writes again each build: its zip is ours again, normalized.
    with zipfile.ZipFile(app.srcdir / "beginner" / "ddp_tutorial.zip") as archive:
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_each_code_block_shows_the_output_the_run_recorded_of_that_block_wherever_prose_moved_it():
    from tutorials_site.sphinx_gallery_run import Block

    def record(line, text):
        return BlockRecord(line=line, texts=(text,), images=())

    conf = {"src_dir": "/nowhere", "image_srcset": ()}

    def shown(text):  # the reST a block shows of a record that printed TEXT
        return gallery._output_rst(record(0, text), Block("code", "", 1), {}, conf)

    # The script that ran: code blocks at lines 5 and 12 (the second's code from line 13, after a blank line).
    result = RunRecord(blocks=(record(5, "first"), record(13, "second")), error=None)
    stamp = Stamp(source="s" * 64, environment="e" * 64, outputs="o" * 64, seconds=1.0, failed=False, peak_rss_mb=1.0,
                  gpu_peak_mb=(), hardware=HARDWARE, commit="abc", date="2025-06-01 12:00 UTC", files=(),
                  code_lines=(5, 12))
    # A prose edit since: three more lines of text above the second block.
    blocks = [Block("text", "Title\n", 1), Block("code", "a = 1\n", 5), Block("text", "Prose\n", 7),
              Block("code", "\nb = 2\n", 15)]
    assert "first" in shown("first") and "second" in shown("second")
    assert gallery._outputs(blocks, result, stamp, {}, conf) == ["", shown("first"), "", shown("second")]
    # A run that failed in its first block recorded nothing of the second: shown without output, never shifted.
    failed = RunRecord(blocks=(record(5, "first"),), error=None)
    assert gallery._outputs(blocks[:2] + [Block("code", "c = 3\n", 6)] + blocks[2:], failed,
                            dataclasses.replace(stamp, code_lines=(5, 6, 12)), {}, conf) == ["", shown("first"), "", "", ""]

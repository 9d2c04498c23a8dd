"""Sphinx-Gallery renders every language's page from the one run of each tutorial.

The build command runs each tutorial once, in a process of its own, before
Sphinx (core.runs). Here, at `builder-inited` (after sphinx-gallery has filled
its configuration, before it generates the galleries), each tutorial's
outputs are handed to sphinx-gallery through its documented cache: the page's
reST, notebook, zip and thumbnail are written with sphinx-gallery's own
functions from this language's script and the run's outputs, and the `.md5`
beside the copy of the script tells sphinx-gallery the example is current, so
it executes nothing and keeps what it finds. The figures are the run's image
files, copied byte for byte.
"""

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path
from textwrap import indent

from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx_gallery import py_source_parser
from sphinx_gallery.gen_rst import CODE_OUTPUT, rst_blocks, save_rst_example, save_thumbnail
from sphinx_gallery.notebook import jupyter_notebook, save_notebook
from sphinx_gallery.scrapers import ImagePathIterator, figure_rst
from sphinx_gallery.utils import get_md5sum, zip_files

from ..core import runs
from ..core.stamps import ANSI, stamp_path

logger = logging.getLogger(__name__)


def example_of(config, srcdir, docname):
    """(examples folder, stem) of the tutorial a page renders; None for any other page (a gallery index)."""
    conf = config.sphinx_gallery_conf
    folder, _, name = docname.rpartition("/")
    if folder not in conf["gallery_dirs"]:
        return None
    examples = conf["examples_dirs"][conf["gallery_dirs"].index(folder)]
    return (examples, name) if Path(srcdir, examples, f"{name}.py").exists() else None


def render_galleries(app):
    conf = app.config.sphinx_gallery_conf
    if not conf["plot_gallery"]:
        return
    runs_root = Path(app.config.tutorials_runs)
    for examples_dir, gallery_dir in zip(conf["examples_dirs"], conf["gallery_dirs"]):
        for src_file in sorted(Path(app.srcdir, examples_dir).glob("*.py")):
            run_dir = runs_root / examples_dir / src_file.stem
            if runs.read_json(run_dir / runs.RESULT) is None:
                raise ExtensionError(f"{examples_dir}/{src_file.name}: no run in {run_dir}; "
                                     "tutorials are executed by `python -m tutorials_site html`, never inside Sphinx")
            render(src_file, Path(app.srcdir, gallery_dir), run_dir, conf)


def _code_output(record, images, conf):
    """The reST sphinx-gallery gives a code block's output: its figures, then what it printed."""
    images_rst = figure_rst([str(images / name) for name in record["images"]], conf["src_dir"]) if record["images"] else ""
    text = ANSI.sub("", record["output"].expandtabs())
    printed = CODE_OUTPUT.format(indent(text, " " * 4)) if text.strip() else ""
    return f"\n{images_rst}\n\n{printed}\n\n\n"


def _clean(blocks, conf):
    """What the page shows of the script: without ignore blocks, config comments or the run's timeout line."""
    cleaned = []
    for block in blocks:
        content = py_source_parser.remove_ignore_blocks(block.content)
        if conf["remove_config_comments"]:
            content = runs.TIMEOUT_COMMENT.sub("", py_source_parser.remove_config_comments(content))
        cleaned.append(py_source_parser.Block(block.type, content, block.lineno))
    return cleaned


def render(src_file, target_dir, run_dir, conf):
    result_bytes = (run_dir / runs.RESULT).read_bytes()
    stamp = runs.read_json(run_dir / runs.STAMP)
    target = target_dir / src_file.name
    key = hashlib.sha256(src_file.read_bytes() + b"\0" + result_bytes + b"\0" + json.dumps(stamp).encode()).hexdigest()
    marker = target.with_name(f"{target.stem}.run.json")
    if runs.read_json(marker) == {"key": key, "rendered": _rendered(target)} and Path(f"{target}.md5").exists():
        return  # rendered from this run and this script, and untouched since
    logger.info("[gallery] %s: rendering the run's output", target.name)
    result = json.loads(result_bytes)
    images = target_dir / "images"
    images.mkdir(parents=True, exist_ok=True)
    for old in _figures(images, target.stem):
        old.unlink()
    shutil.copyfile(src_file, target)

    file_conf, blocks = py_source_parser.split_code_and_text_blocks(str(src_file))
    records = iter(result["blocks"])
    outputs = []
    for block in blocks:
        record = next(records, None) if block.type == "code" else None
        if record is not None:
            for name in record["images"]:
                shutil.copyfile(run_dir / "images" / name, images / name)
        outputs.append(_code_output(record, images, conf) if record is not None else "")
    blocks = _clean(blocks, conf)
    if blocks[-1].content.isspace():
        blocks, outputs = blocks[:-1], outputs[:-1]

    seconds = result["seconds"]
    memory = (stamp or {}).get("peak_rss_mb", 0.0)
    # "Python": the language sphinx-gallery names .py examples in, which their code blocks are highlighted as.
    example_rst = rst_blocks(blocks, outputs, file_conf, conf, language="Python")
    save_rst_example(example_rst, target, seconds, memory, conf, language="Python", file_conf=file_conf)
    template = str(images / f"sphx_glr_{target.stem}_{{0:03}}.png")
    produced = ImagePathIterator(template)
    for _ in (name for record in result["blocks"] for name in record["images"]):
        next(produced)
    script_vars = {"image_path_iterator": produced}
    if result["error"]:
        script_vars["formatted_exception"] = result["error"]["message"]
    save_thumbnail(template, src_file, script_vars, file_conf, conf)
    save_notebook(jupyter_notebook(blocks, conf, target_dir), target.with_suffix(".ipynb"))
    _normalize_zip(Path(zip_files([target, target.with_suffix(".ipynb")], target.with_suffix(".zip"), target_dir)))

    # sphinx-gallery's cache: the cost it reports for a skipped example, and the md5 that makes it skip.
    target.with_name(f"{target.stem}.cost.json").write_text(json.dumps({"time": seconds, "memory": memory}))
    Path(f"{target}.md5").write_text(get_md5sum(target, mode="t"))
    if stamp is not None:
        runs.write_json(stamp_path(target), stamp)
    else:
        stamp_path(target).unlink(missing_ok=True)
    runs.write_json(marker, {"key": key, "rendered": _rendered(target)})


def _figures(images, stem):
    """A tutorial's figures in a gallery's images/ (sphx_glr_<stem>_001.png, ...; not those of <stem>_2)."""
    return sorted(images.glob(f"sphx_glr_{stem}_[0-9][0-9][0-9].*"))


def _rendered(target):
    """A digest of the page sphinx-gallery will read: its reST and the figures it shows."""
    digest = hashlib.sha256()
    for path in [target.with_suffix(".rst"), *_figures(target.parent / "images", target.stem)]:
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"missing"))
    return digest.hexdigest()


def _normalize_zip(path):
    """Rewrite sphinx-gallery's zip with fixed entry dates, so equal sources give equal bytes."""
    with zipfile.ZipFile(path) as old:
        entries = [(info.filename, old.read(info)) for info in old.infolist()]
    tmp = path.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as new:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            new.writestr(info, data)
    os.replace(tmp, path)


# sphinx-gallery's stylesheets for HTML outputs (rendered HTML, DataFrames) and Binder badges: a run
# hands over text and figures only and no badge is configured, so they would style nothing and
# only hold back every page's first paint.
UNUSED_CSS = {"sg_gallery-binder.css", "sg_gallery-dataframe.css", "sg_gallery-rendered-html.css"}


def drop_unused_css(app, pagename, templatename, context, doctree):
    context["css_files"] = [css for css in context["css_files"] if Path(css.filename).name not in UNUSED_CSS]


def setup(app):
    app.add_config_value("tutorials_runs", "", "env", types=[str])
    app.connect("html-page-context", drop_unused_css)
    # After sphinx-gallery's own builder-inited setup (priority 10), before it generates the galleries (500).
    app.connect("builder-inited", render_galleries, priority=400)

"""core.runs.shown and the reST the build writes from a run: what a run records is data, never markup."""

import json
from pathlib import Path

import pytest

from tutorials_site.core.runs import shown
from tutorials_site.core.runs.records import BlockRecord, RunRecord
from tutorials_site.sphinxext.gallery import _output_rst

PNG = b"\x89PNG\r\n\x1a\n" + bytes(8)
# What a tutorial that writes its own record would put in it: directives that read the builder's files.
FORGED = ("\n.. literalinclude:: /proc/self/environ\n\n.. raw:: html\n   :file: /root/.git-credentials\n\n"
          ":download:`x </etc/passwd>` <script>alert(1)</script>\n")


@pytest.mark.parametrize(("name", "head", "what"), [
    ("a.png", PNG, "PNG"), ("a.jpg", b"\xff\xd8\xff\xe0" + bytes(12), "JPEG"), ("a.gif", b"GIF89a" + bytes(10), "GIF"),
    ("a.webp", b"RIFF\0\0\0\0WEBPVP8 ", "WebP"), ("a.svg", b"<svg onload='x'>", None), ("a.png", b"<html><script>", None),
    ("a.jpg", PNG, None),  # a PNG named .jpg: its extension must say its format
])
def test_a_figure_is_an_image_of_a_format_pages_show_by_its_bytes(name, head, what):
    assert shown.figure_format(name, head) == what


def test_a_forged_record_becomes_literal_text_and_inert_html_on_the_page(tmp_path):
    record = RunRecord(blocks=(BlockRecord(line=3, texts=(FORGED + "\x1b[2J\ud800",), images=("g/images/x.png", "../../etc/x"),
                                           alts=("a title\n.. raw:: html", ""), html=FORGED),),
                       error=None, code_objects={"os": [{"name": "environ", "module": "os", "module_short": "os",
                                                         "is_class": False, "is_explicit": False}],
                                                 "../../x": [], "y": [{"name": "a\n.. raw::"}]})
    data = shown.validated(record, frozenset({"g/images/x.png"}))
    assert shown.validated(data, frozenset({"g/images/x.png"})) == data  # the same again: kept runs check out
    (block,) = data.blocks
    assert block.images == ("g/images/x.png",) and block.alts == ("a title .. raw:: html",)
    assert "<script" not in block.html and "\ud800" not in block.texts[0] and "\x1b" not in block.texts[0]
    assert list(data.code_objects) == ["os"]
    (tmp_path / "g" / "images").mkdir(parents=True)
    (tmp_path / "g" / "images" / "x.png").write_bytes(PNG)
    block_source = type("Block", (), {"content": "print()\n"})()
    rst = _output_rst(block, block_source, {}, {"src_dir": str(tmp_path), "image_srcset": []})
    # Every line the run chose is inside a literal block, an option's value or the sanitised HTML: no directive
    # or role of its own starts a line, and nothing names a file outside the page's figures.
    own = [line.strip() for line in rst.splitlines() if line.startswith((".. ", " .. "))]  # not in a block's content
    assert own == [".. image-sg:: /g/images/x.png", ".. rst-class:: sphx-glr-script-out", ".. code-block:: none",
                   ".. raw:: html"], own
    raw = rst[rst.rindex("\n.. raw:: html"):]  # the build's own, after the literal block
    assert "<script" not in raw and ":file:" not in rst.split(".. code-block:: none")[0]
    assert json.dumps(rst)  # a page's text: no lone surrogate


def test_a_failed_block_shows_what_it_printed_then_its_error_as_a_traceback():
    block = BlockRecord(line=3, texts=("printed\n", "Traceback ...\nValueError: no"), images=(), failed=True)
    rst = _output_rst(block, type("Block", (), {"content": ""})(), {}, {"src_dir": "/x", "image_srcset": []})
    assert rst.index("printed") < rst.index(".. code-block:: pytb") < rst.index("ValueError: no")


def test_a_figure_s_srcset_variants_are_those_the_run_saved(tmp_path):
    for name in ("sphx_glr_x_001.png", "sphx_glr_x_001_2_00x.png"):
        (tmp_path / name).write_bytes(PNG)
    block = BlockRecord(line=3, texts=(), images=("sphx_glr_x_001.png",), alts=("Sine",))
    rst = _output_rst(block, type("Block", (), {"content": ""})(), {}, {"src_dir": str(tmp_path), "image_srcset": [2.0, 3.0]})
    assert ":srcset: /sphx_glr_x_001.png, /sphx_glr_x_001_2_00x.png 2.00x" in rst and ":alt: Sine" in rst
    assert Path(tmp_path, "sphx_glr_x_001_3_00x.png").exists() is False

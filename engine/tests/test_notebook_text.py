"""A tutorial's text blocks as the reST that sphinx-gallery's conversion turns into plain Markdown."""

from markdown_it import MarkdownIt

from tutorials_site.core.text.notebook_text import for_markdown

TITLES = {"sphx_glr_beginner_data_parallel_tutorial.py": "Optional: Data Parallelism"}


def shown(markdown: str) -> str:
    """The HTML a CommonMark renderer (Jupyter's kind) makes of the Markdown."""
    return MarkdownIt("commonmark").render(markdown)


def test_roles_read_as_the_page_shows_them():
    text = for_markdown(":class:`torch.nn.DataParallel` wraps it; :meth:`~torch.Tensor.chunk` splits; "
                        ":func:`!torch.cuda.device_count`; see :ref:`the tutorial <label>` and "
                        ":ref:`sphx_glr_beginner_data_parallel_tutorial.py`; :math:`a^2`.", titles=TITLES)
    assert text == ("``torch.nn.DataParallel`` wraps it; ``chunk`` splits; ``torch.cuda.device_count``; see the "
                    "tutorial and Optional: Data Parallelism; :math:`a^2`.")
    assert "<code>chunk</code>" in shown(text)


def test_escaped_spaces_go_and_emphasis_that_commonmark_would_miss_becomes_html():
    text = for_markdown("``DataParallel``\\ 은 **랭크**\\ (rank) 와 **(rank)**\\ 은 *x*\\ 는")
    assert text == "``DataParallel``은 **랭크**(rank) 와 <strong>(rank)</strong>은 *x*는"
    html = shown(text)
    assert "\\" not in html and "*" not in html
    assert html.count("<strong>") == 2 and "<em>x</em>" in html


def test_literals_and_literal_blocks_are_left_as_written():
    rst = "Run ``a\\ b`` like this::\n\n    x = 1\\ 2  # :func:`f`\n\nAnd *then*.\n\n.. code-block:: python\n\n   y = :func:`z`\\ q\n"
    assert for_markdown(rst) == rst


def test_an_admonition_body_is_prose():
    rst = ".. note::\n   ``spawn``\\ 方式で起動します。:func:`f` を呼びます。"
    assert for_markdown(rst, spaced=False) == ".. note::\n   ``spawn``方式で起動します。``f`` を呼びます。"


def test_line_breaks_between_japanese_characters_go_where_the_language_has_no_spaces():
    rst = "1 台のマシンに搭載された複数の GPU\nに各バッチを分散させ\nました。"
    assert for_markdown(rst, spaced=False) == "1 台のマシンに搭載された複数の GPU\nに各バッチを分散させました。"
    assert for_markdown(rst) == rst  # Korean and English keep every line break: each is a space


# A comment naming a role, its indented continuation, then prose: the comment is verbatim everywhere.
COMMENT_THEN_PROSE = (".. a comment naming :class:`torch.Tensor`\n   and :func:`torch.add` on its next line\n\n"
                      "See :class:`torch.Tensor`.")


def test_a_comment_and_its_continuation_are_left_as_written_as_translation_leaves_them():
    from tutorials_site.core.text.tutorial_text import parse

    assert for_markdown(COMMENT_THEN_PROSE) == COMMENT_THEN_PROSE.replace("See :class:`torch.Tensor`", "See ``torch.Tensor``")
    script = '"""\nTitle\n=====\n\n' + COMMENT_THEN_PROSE + '\n"""\n' + "# %%\n" + "".join(
        f"# {line}".rstrip() + "\n" for line in COMMENT_THEN_PROSE.splitlines())
    units = [unit.msgid for unit in parse("plot_comment.py", script).units]
    assert units == ["Title", "See :class:`torch.Tensor`.", "See :class:`torch.Tensor`."]

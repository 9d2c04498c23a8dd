"""sphinxext.units: a page's pieces for `make import-translation`, in reading order, as Sphinx's gettext builder
extracts its messages, with its code blocks between them."""

from tutorials_site.core.text.alignment import CODE
from tutorials_site.sphinxext import units

PAGE = """A page
======

A paragraph before the code.

.. code-block:: python

   x = 1  # the code stays as it is

- an item
- another item

.. note:: A note's text.

Second part
-----------

The last paragraph.
"""


def test_a_page_s_pieces_are_its_messages_and_code_blocks_in_reading_order(sphinx_app) -> None:
    app, _, _ = sphinx_app({"index.rst": PAGE})
    app.build()
    doctree = app.env.get_doctree("index")
    found = [(kind, text) for kind, text, _, _ in units.pieces(doctree)]
    assert found == [
        ("section/title", "A page"),
        ("section/paragraph", "A paragraph before the code."),
        (CODE, "x = 1  # the code stays as it is"),
        ("section/bullet_list/list_item/paragraph", "an item"),
        ("section/bullet_list/list_item/paragraph", "another item"),
        ("section/note/paragraph", "A note's text."),
        ("section/section/title", "Second part"),
        ("section/section/paragraph", "The last paragraph."),
    ]
    lines = [line for _, _, _, line in units.pieces(doctree)]
    assert lines == sorted(lines) and lines[1] == 4  # where each is written

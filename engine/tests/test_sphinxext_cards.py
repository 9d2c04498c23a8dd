"""sphinxext.cards: what a landing page's card says of a tutorial (its intro's inline reST, its run's facts)."""

import dataclasses

from docutils import nodes
from test_sphinxext_provenance import CPU, stamp

from tutorials_site.sphinxext import cards

TITLES = {"sphx_glr_beginner_a.py": "Tutorial A"}


def shown(text):
    return [(type(node).__name__, node.astext()) for node in cards.inline(text, TITLES) if node.astext()]


def test_a_card_shows_names_as_code_and_links_as_their_text():
    assert shown("Use ``x.y`` with :class:`~torch.nn.Linear` and :func:`torch.cat`, unlike :ref:`sphx_glr_beginner_a.py` "
                 "or :ref:`the B tutorial <sphx_glr_beginner_b.py>`: **one** *step*\\ s.") == [
        ("Text", "Use "), ("literal", "x.y"), ("Text", " with "), ("literal", "Linear"), ("Text", " and "),
        ("literal", "torch.cat"), ("Text", ", unlike "), ("Text", "Tutorial A"), ("Text", " or "),
        ("Text", "the B tutorial"), ("Text", ": "), ("Text", "one"), ("Text", " "), ("Text", "step"), ("Text", "s.")]
    assert all(isinstance(node, (nodes.Text, nodes.literal)) for node in cards.inline(":doc:`x`", TITLES))


def test_the_facts_say_how_long_it_ran_and_on_what(untranslated):
    assert cards.run_facts(stamp()) == "2 s to run · CPU (no GPU)"
    two_gpus = dataclasses.replace(CPU, device="NVIDIA H100", gpus=2)
    assert cards.run_facts(dataclasses.replace(stamp(two_gpus), seconds=150.0)) == "2 min to run · NVIDIA H100 (2 GPUs)"
    assert cards.run_facts(None) == ""

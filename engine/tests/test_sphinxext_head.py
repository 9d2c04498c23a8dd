"""The page's language and head, shared by every part of the extension (sphinxext/head.py)."""

from tutorials_site.sphinxext.head import add_to_head, link, meta


def test_every_part_adds_to_the_head_through_one_writer_that_escapes_each_value_and_keeps_what_was_there():
    context = {"metatags": '<meta charset="utf-8">'}
    add_to_head(context, meta("name", "description", 'a "b" <c>'), link("alternate", "p.html?a=1&b=2", "ko"))
    add_to_head(context, "\n<style>x</style>")  # a template's HTML, as it rendered it
    assert context["metatags"] == ('<meta charset="utf-8">\n<meta name="description" content="a &quot;b&quot; &lt;c&gt;">'
                                   '\n<link rel="alternate" hreflang="ko" href="p.html?a=1&amp;b=2">\n<style>x</style>')

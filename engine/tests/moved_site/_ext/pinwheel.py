"""The pinwheel guide's own Sphinx extension: the `spin` directive, and the site's name.

``.. spin:: 3`` shows a line saying how many turns the pinwheel made, in a box of class ``pinwheel-spin``.
"""

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

SITE_NAME = "바람개비 안내서"


class Spin(SphinxDirective):
    required_arguments = 1  # the number of turns

    def run(self):
        turns = directives.nonnegative_int(self.arguments[0])
        line = nodes.paragraph(text=f"바람개비가 {turns}바퀴 돌았습니다 " + "↻" * turns)
        return [nodes.container("", line, classes=["pinwheel-spin"])]


def setup(app):
    app.add_directive("spin", Spin)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

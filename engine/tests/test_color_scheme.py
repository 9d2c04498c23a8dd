"""The code colours of both colour schemes: WCAG AA, and the dark ones only where the page is dark."""

import re

import pytest
from pygments.formatters import HtmlFormatter
from pygments.styles import get_style_by_name
from pygments.token import Whitespace

from conftest import FIXTURES, contrast
from tutorials_site.core.project import current
from tutorials_site.sphinxext import color_scheme

LIGHT_STYLE = current(FIXTURES).conf["pygments_style"]


def rgb(hex_colour):
    value = hex_colour.lstrip("#")
    value = "".join(c * 2 for c in value) if len(value) == 3 else value[:6]
    return [int(value[i:i + 2], 16) for i in (0, 2, 4)]


@pytest.mark.parametrize("name", [LIGHT_STYLE, color_scheme.DARK_STYLE])
def test_every_code_colour_meets_wcag_aa_on_its_background(name):
    style = get_style_by_name(name)
    low = [(str(token), definition["color"]) for token, definition in style
           if definition["color"] and token not in Whitespace
           and contrast(rgb(definition["color"]), rgb(definition["bgcolor"] or style.background_color)) < 4.5]
    assert low == [], f"{name} on {style.background_color}: {low}"


def test_the_dark_code_colours_apply_only_in_the_dark_scheme_and_replace_every_light_one():
    css = color_scheme.dark_stylesheet()
    picked, system = re.fullmatch(r"/\*.*?\*/\n@media screen \{\n(.*?)\n\}\n"
                                  r"@media screen and \(prefers-color-scheme: dark\) \{\n(.*?)\n\}\n", css, re.S).groups()
    light = set(re.findall(r"^(\.highlight[^{]*?) \{", HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".highlight"), re.M))
    for scope, rules in ((color_scheme.PICKED, picked), (color_scheme.SYSTEM, system)):
        selectors = re.findall(r"^(.*?) \{", rules, re.M)
        assert selectors and all(s.startswith(f":where({scope}) .highlight") for s in selectors)
        assert light <= {s.removeprefix(f":where({scope}) ") for s in selectors}


def test_the_dark_stylesheet_is_written_for_html_builds_and_linked_from_every_page_of_the_rtd_theme(fake_app):
    app = fake_app(html_theme="sphinx_rtd_theme")
    assert ("config-inited", color_scheme.link_dark_stylesheet, 500) in app.connected
    assert ("builder-inited", color_scheme.write_dark_stylesheet, 500) in app.connected
    color_scheme.link_dark_stylesheet(app, app.config)
    assert app.css_files.count(color_scheme.STYLESHEET) == 1
    furo = fake_app(html_theme="furo")  # a theme with colour schemes of its own
    color_scheme.link_dark_stylesheet(furo, furo.config)
    assert color_scheme.STYLESHEET not in furo.css_files
    color_scheme.write_dark_stylesheet(app)
    assert (app.outdir / "_static" / color_scheme.STYLESHEET).read_text() == color_scheme.dark_stylesheet()
    other = fake_app()
    other.outdir = app.outdir.parent / "latex"
    other.builder.format = "latex"
    color_scheme.write_dark_stylesheet(other)
    assert not other.outdir.exists()

"""sphinxext.colab: an "Open in Colab" link after a tutorial page's notebook download."""

import pytest
from docutils import nodes
from sphinx import addnodes

from tutorials_site.sphinxext import colab


def download_box(target, filename=None):
    """A download link as sphinx-gallery's page has it: in a paragraph in a container of its own (no filename:
    a file Sphinx did not find)."""
    ref = addnodes.download_reference("", "", reftarget=target, **({"filename": filename} if filename else {}))
    return nodes.container("", nodes.paragraph("", "", ref), classes=["sphx-glr-download"])


def downloads_page():
    """A page's footer with the .py, .ipynb and .zip downloads, in this order."""
    footer = nodes.container(classes=["sphx-glr-footer"])
    footer += download_box("demo.py", "0a1b/demo.py")
    footer += download_box("demo.ipynb", "2c3d/demo.ipynb")
    footer += download_box("demo.zip", "4e5f/demo.zip")
    document = nodes.document(None, None)
    document += nodes.section("", footer)
    return document, footer


@pytest.mark.parametrize("language, seg", [("en", "en"), ("zh_CN", "zh-cn")])
def test_the_link_follows_the_notebook_download_and_opens_its_published_copy(fake_app, language, seg):
    app = fake_app(language=language, version="2.1", tutorials_github_repo="owner/repo")
    document, footer = downloads_page()
    colab.add_colab_link(app, document, "beginner/demo")
    assert [box["classes"] for box in footer.children] == [
        ["sphx-glr-download"], ["sphx-glr-download"], ["sphx-glr-download", "sphx-glr-download-colab"],
        ["sphx-glr-download"]]
    [link] = footer.children[2].findall(nodes.reference)
    assert link["refuri"] == f"https://colab.research.google.com/github/owner/repo/blob/gh-pages/2.1/{seg}/_downloads/2c3d/demo.ipynb"
    assert link["classes"] == ["colab-link"] and link.astext() == "Open in Colab"


def test_the_label_is_in_the_page_s_language(fake_app, sphinx_catalog):
    sphinx_catalog("ko", {"Open in Colab": "Colab에서 열기"})
    document, footer = downloads_page()
    colab.add_colab_link(fake_app(language="ko"), document, "beginner/demo")
    assert [link.astext() for link in footer.findall(nodes.reference) if "colab-link" in link["classes"]] == [
        "Colab에서 열기"]


def test_a_page_without_a_notebook_download_gets_no_link(fake_app):
    document = nodes.document(None, None)
    document += nodes.section("", download_box("demo.py", "0a1b/demo.py"), download_box("other.ipynb"))
    before = document.pformat()
    colab.add_colab_link(fake_app(), document, "beginner/demo")
    assert document.pformat() == before


def test_setup_declares_the_repository_and_connects_the_link(fake_app):
    app = fake_app()
    assert app.config.tutorials_github_repo == "pytorch-tutorials-site/tutorials"  # conf.py's
    assert ("doctree-resolved", colab.add_colab_link, 500) in app.connected

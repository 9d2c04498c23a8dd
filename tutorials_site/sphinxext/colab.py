"""An "Open in Colab" link beside the notebook download of every tutorial page.

Colab opens notebooks straight from GitHub, so the link points at the copy of
the notebook that the published site keeps on the gh-pages branch:
<repo>/blob/gh-pages/<version>/<lang segment>/_downloads/<path Sphinx gave it>.
"""

from docutils import nodes
from sphinx.locale import get_translation

from .. import sphinx_gallery_api as sg
from ..core.languages import BY_CODE

_ = get_translation("sphinx")


def colab_url(repo, version, seg, download_path):
    return (
        f"https://colab.research.google.com/github/{repo}/blob/gh-pages/"
        f"{version}/{seg}/_downloads/{download_path}"
    )


def add_colab_link(app, doctree, docname):
    for ref, download_box in sg.notebook_downloads(doctree):
        seg = BY_CODE[app.config.language].seg
        url = colab_url(app.config.tutorials_github_repo, app.config.version, seg, ref["filename"])
        link = nodes.reference("", _("Open in Colab"), refuri=url, classes=["colab-link"])
        download_box.parent.insert(download_box.parent.index(download_box) + 1, sg.download_box(link, kind="colab"))
        return


def setup(app):
    app.add_config_value("tutorials_github_repo", "", "html", types=[str])
    app.connect("doctree-resolved", add_colab_link)

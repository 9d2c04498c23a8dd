"""An "Open in Colab" link beside the notebook download of every tutorial page.

Colab opens notebooks straight from GitHub, so the link points at the copy of
the notebook that the published site keeps on the gh-pages branch:
<repo>/blob/gh-pages/<version>/<lang segment>/_downloads/<path Sphinx gave it>.
"""

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util.typing import ExtensionMetadata

from .. import __version__
from .. import sphinx_gallery_build as sg
from .head import page_language

_ = get_translation("sphinx")


def colab_url(repo: str, version: str, seg: str, download_path: str) -> str:
    """Colab's address of the notebook the published site keeps at <version>/<seg>/_downloads/<download_path>."""
    return (
        f"https://colab.research.google.com/github/{repo}/blob/gh-pages/"
        f"{version}/{seg}/_downloads/{download_path}"
    )


def add_colab_link(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Put an "Open in Colab" link after the page's notebook download (doctree-resolved); none where the
    site's GitHub repository (tutorials_github_repo) is not set, since Colab would find no notebook."""
    if not app.config.tutorials_github_repo:
        return
    for ref, download_box in sg.notebook_downloads(doctree):
        seg = page_language(app.config).seg
        url = colab_url(app.config.tutorials_github_repo, app.config.version, seg, ref["filename"])
        link = nodes.reference("", _("Open in Colab"), refuri=url, classes=["colab-link"])
        download_box.parent.insert(download_box.parent.index(download_box) + 1, sg.download_box(link, kind="colab"))
        return


def setup(app: Sphinx) -> ExtensionMetadata:
    """Connect the handler (the link's setting, tutorials_github_repo, is registered with the others:
    core.config_values)."""
    app.connect("doctree-resolved", add_colab_link)
    # Nothing at reading; at writing, it edits only the doctree it is given (resolved in the main process).
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

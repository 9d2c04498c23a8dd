"""What a tutorial page leads with, and how a reader reports a problem with any page.

- Under a tutorial's title, one row of buttons: sphinx-gallery's downloads (.ipynb, .py, zip), "Open in
  Colab" (sphinxext.colab) and "View on GitHub", the tutorial's `.py` at the commit the site was built
  from. sphinx-gallery's download boxes are moved there, ids and all, so the page holds them once; its
  note saying "Go to the end to download" goes.
- At the end of every page, "Report a problem with this page": a new GitHub issue prefilled with the
  page's address, language, version and commit.

Both need the site's GitHub repository (tutorials_github_repo); the commit is `git rev-parse HEAD` of the
site's folder unless tutorials_commit names one.
"""

import re
from html import escape, unescape
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.locale import get_translation
from sphinx.util.typing import ExtensionMetadata

from .. import __version__
from .. import sphinx_gallery_build as sg
from ..core import git
from ..core.site import page_links, versions
from .gallery import example_of, project_root
from .head import page_language

_ = get_translation("sphinx")

ACTIONS = "tutorial-actions"  # the class of the row of buttons under a tutorial's title


def find_commit(app: Sphinx, config: Config) -> None:
    """The commit the pages link to, and the site's folder inside its git repository (config-inited)."""
    root = project_root(config)
    config.tutorials_commit = config.tutorials_commit or git.run(root, "rev-parse", "HEAD")
    config.tutorials_repo_prefix = git.run(root, "rev-parse", "--show-prefix")


def lead_with_actions(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Move a tutorial page's download boxes under its title, with a "View on GitHub" box (doctree-resolved,
    after sphinxext.colab added its box)."""
    tutorial = example_of(app.config, docname)
    footer = sg.download_footer(doctree)
    section = doctree.next_node(nodes.section)
    if tutorial is None or footer is None or section is None:
        return
    note = sg.download_note(doctree)
    if note is not None:
        note.parent.remove(note)
    repo, commit = app.config.tutorials_github_repo, app.config.tutorials_commit
    if repo and commit:
        path = app.config.tutorials_repo_prefix + tutorial.label  # the English script, from the repository's root
        link = nodes.reference("", _("View on GitHub"), refuri=page_links.github_source_url(repo, commit, path),
                               classes=["github-link"])
        footer += sg.download_box(link, kind="github")
    footer.parent.remove(footer)
    footer["classes"].append(ACTIONS)
    section.insert(1, footer)  # right after the title


def report_url(app: Sphinx, pagename: str, title: str) -> str:
    """The "Report a problem" address of a page: its published address where the site's is set, else its path."""
    config = app.config
    seg = page_language(config).seg
    page = f"{pagename}.html"
    where = (versions.folder_url(config.tutorials_site_url, config.version, seg, page)
             if config.tutorials_site_url and config.version else f"{seg}/{page}")
    return page_links.report_issue_url(config.tutorials_github_repo, title=f"Problem with the page: {title}",
                                       page=where, language=config.language, version=config.version,
                                       commit=config.tutorials_commit)


def add_report_link(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                    doctree: nodes.document | None) -> None:
    """End every page with text (not the search page nor the index) with "Report a problem with this page"
    (html-page-context), where the site's GitHub repository is set."""
    if not app.config.tutorials_github_repo or doctree is None or "body" not in context:
        return
    title = unescape(re.sub(r"<[^>]*>", "", str(context.get("title") or pagename)))  # the theme's title is HTML
    url = report_url(app, pagename, title)
    label = _("Report a problem with this page")
    context["body"] += f'<p class="tutorials-report"><a href="{escape(url)}" rel="nofollow">{escape(label)}</a></p>'


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the handlers (the settings are core.config_values')."""
    app.connect("config-inited", find_commit)
    app.connect("doctree-resolved", lead_with_actions, priority=600)
    app.connect("html-page-context", add_report_link)
    # Once per build in the main process; at writing, it edits only the doctree or the context it is given.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

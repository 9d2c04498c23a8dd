"""The addresses a page links to on GitHub: its tutorial's source at the build's commit, and a new issue
prefilled with what the maintainers need to find the page again."""

from urllib.parse import quote, urlencode


def github_source_url(repo: str, commit: str, path: str) -> str:
    """The file PATH (from the repository's root, "/"-separated) of REPO ("owner/name") at COMMIT."""
    return f"https://github.com/{repo}/blob/{quote(commit, safe='')}/{quote(path)}"


def report_issue_url(repo: str, *, title: str, page: str, language: str, version: str, commit: str) -> str:
    """A new issue of REPO, its title and body filled in: the page (its address or path), its language, the
    version and the commit it was built from, one per line, and room for the reader's words."""
    body = "\n".join([f"Page: {page}", f"Language: {language}", f"Version: {version or '-'}",
                      f"Commit: {commit or '-'}", "", ""])
    return f"https://github.com/{repo}/issues/new?" + urlencode({"title": title, "body": body}, quote_via=quote)

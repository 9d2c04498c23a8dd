"""The addresses a page links to on GitHub (core.site.page_links), the font files a build keeps (core.assets) and
stable/ as a link (core.site.publish): plain logic, no build."""

import os
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tutorials_site.core import assets
from tutorials_site.core.site import page_links, publish


def test_the_source_link_names_the_file_at_the_commit():
    url = page_links.github_source_url("owner/site", "0123abc", "sub dir/beginner_source/ddp_tutorial.py")
    assert url == "https://github.com/owner/site/blob/0123abc/sub%20dir/beginner_source/ddp_tutorial.py"


def test_the_report_link_opens_a_new_issue_filled_with_page_language_version_and_commit():
    url = page_links.report_issue_url("owner/site", title="Problem with the page: Données & co",
                                      page="https://x.io/1.0/ko/beginner/t.html", language="ko", version="1.0",
                                      commit="0123abc")
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("github.com", "/owner/site/issues/new")
    query = parse_qs(parts.query)
    assert query["title"] == ["Problem with the page: Données & co"]
    assert query["body"][0].splitlines()[:4] == ["Page: https://x.io/1.0/ko/beginner/t.html", "Language: ko",
                                                 "Version: 1.0", "Commit: 0123abc"]
    unversioned = parse_qs(urlsplit(page_links.report_issue_url("o/s", title="t", page="en/index.html",
                                                                language="en", version="", commit="")).query)
    assert "Version: -\nCommit: -" in unversioned["body"][0]


def _write(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_only_the_fonts_no_stylesheet_names_are_unused(tmp_path):
    static = tmp_path / "_static"
    sheet = _write(static / "css" / "theme.css",
                   "@font-face{font-family:Lato;src:url(fonts/lato.woff2?v=1) format('woff2'),url('fonts/lato.woff')}"
                   "body{font-family:Lato}")
    kept = [_write(static / "css" / "fonts" / name) for name in ("lato.woff2", "lato.woff")]
    dropped = [_write(static / "fonts" / "Lato" / "lato-bold.ttf"), _write(static / "css" / "fonts" / "icons.svg")]
    image = _write(static / "logo.svg")  # an SVG outside a fonts folder is an image
    assert assets.unused_fonts(static) == sorted(dropped)
    sheet.write_text(assets.without_font_faces(sheet.read_text()))
    assert sheet.read_text() == "body{font-family:Lato}"
    assert assets.unused_fonts(static) == sorted(dropped + kept) and image not in assets.unused_fonts(static)


def test_stable_becomes_a_link_to_the_stable_version_in_place_of_a_copy(tmp_path):
    for name in ("1.0", "1.1"):
        _write(tmp_path / name / "en" / "index.html", name)
    _write(tmp_path / "stable" / "en" / "index.html", "1.0")  # a tree published before: a copy
    publish._link_stable(tmp_path, "1.0")
    assert os.readlink(tmp_path / "stable") == "1.0" and (tmp_path / "stable" / "en" / "index.html").read_text() == "1.0"
    old_copy = tmp_path / f"{publish.STAGING}stable"  # the copy, swapped out in one step; the publish deletes it last
    assert old_copy.is_dir() and not old_copy.is_symlink()
    shutil.rmtree(old_copy)
    publish._link_stable(tmp_path, "1.1")
    assert os.readlink(tmp_path / "stable") == "1.1" and (tmp_path / "stable" / "en" / "index.html").read_text() == "1.1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1.0", "1.1", "stable"]

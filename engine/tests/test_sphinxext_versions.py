"""sphinxext.versions: what each page knows of the versions (its own, the published ones) and its banners' words."""

import json

import pytest

from tutorials_site.core.runs.records import VersionEntry
from tutorials_site.sphinxext import versions

PUBLISHED = [VersionEntry(name="1.0", label="1.0", release=True, path="1.0/", languages=("en",), torch="2.0",
                           built="2025-01-01 00:00 UTC")]


def context_of(app, pagename="beginner/demo"):
    context = {"metatags": "<meta charset=x>"}
    versions.add_page_context(app, pagename, "page.html", context, None)
    return context


@pytest.mark.parametrize("pagename, root", [("index", "../../"), ("beginner/demo", "../../../"),
                                            ("beginner/basics/demo", "../../../../")])
def test_a_page_knows_its_version_language_file_and_the_site_root(fake_app, pagename, root):
    context = context_of(fake_app(language="zh_CN", version="main"), pagename)
    assert (context["tutorials_version"], context["page_lang"], context["page_file"], context["site_root"]) == (
        "main", "zh-cn", f"{pagename}.html", root)  # <root>/<version>/<lang>/<page>.html


def test_the_embedded_versions_are_the_published_ones_and_this_build(fake_app):
    context = context_of(fake_app(version="main", tutorials_versions=tuple(PUBLISHED)))
    assert context["embedded_versions"]["stable"] == "1.0"
    assert [(v["name"], v["release"]) for v in context["embedded_versions"]["versions"]] == [("1.0", True),
                                                                                            ("main", False)]
    assert context_of(fake_app(version="2.0"))["embedded_versions"]["stable"] == "2.0"  # nothing published yet


def test_the_banners_messages_are_in_the_page_s_language(fake_app, sphinx_catalog):
    sphinx_catalog("ja", {"Read this page in the stable version.": "安定版でこのページを読む。"})
    messages = json.loads(context_of(fake_app(language="ja"))["version_messages"])
    assert set(messages) == {"older", "unreleased", "go"} and messages["go"] == "安定版でこのページを読む。"
    assert "{current}" in messages["older"] and "{stable}" in messages["unreleased"]  # the script fills them


def test_a_release_is_indexed_other_versions_are_not(fake_app):
    release = context_of(fake_app(version="1.0", language="ko", tutorials_site_url="https://example.org/site/"))
    assert release["metatags"] == '<meta charset=x>'  # its canonical link: Sphinx's, from html_baseurl
    branch = context_of(fake_app(version="main", tutorials_site_url=""))
    assert branch["metatags"] == '<meta charset=x>\n<meta name="robots" content="noindex">'


@pytest.mark.parametrize("version, folder", [("1.0", "stable"), ("main", "main")])
def test_the_pages_are_published_in_their_version_s_and_language_s_folder_for_sphinx_and_extensions(
        fake_app, version, folder):
    app = fake_app(version=version, language="zh_CN", tutorials_site_url="https://example.org/site/",
                   html_baseurl="https://example.org/site/", ogp_site_url="https://example.org/site/")
    versions.set_published_base(app, app.config)
    # Sphinx's canonical link, sphinxext-opengraph's og:url and sphinx-sitemap's addresses: the published ones.
    assert app.config.html_baseurl == app.config.ogp_site_url == f"https://example.org/site/{folder}/zh-cn/"
    bare = fake_app(tutorials_site_url="")
    versions.set_published_base(bare, bare.config)
    assert not hasattr(bare.config, "html_baseurl")  # no address known: nothing named


def test_setup_declares_its_values_and_connects_the_context(fake_app):
    app = fake_app()
    assert app.config.tutorials_site_url == "https://pytorch-tutorials-site.github.io/tutorials/"  # conf.py's
    assert app.config.tutorials_versions == ()  # the build passes the published list
    assert ("html-page-context", versions.add_page_context, 500) in app.connected

"""The "Open in Colab" link points at the notebook where the published site keeps it."""

import os
import re
import subprocess

import pytest

from conftest import ENGINE, FIXTURES, MAKE_SITE, TUTORIAL_PAGE
from tutorials_site.core.project import current
from tutorials_site.core.site import versions

REPO = current(FIXTURES).conf["tutorials_github_repo"]


def colab_link(page):
    return re.search(r'<a class="colab-link reference external" href="([^"]+)"', page.read_text())[1]


def test_link_opens_this_pages_notebook_on_the_gh_pages_branch(site):
    url = colab_link(site / TUTORIAL_PAGE)
    version = versions.current(ENGINE, os.environ.get("VERSION", ""))
    prefix = f"https://colab.research.google.com/github/{REPO}/blob/gh-pages/{version}/"
    assert url.startswith(prefix)
    published = url[len(prefix):]  # <lang>/_downloads/<hash>/data_parallel_tutorial.ipynb
    assert published.startswith("en/_downloads/") and published.endswith("/data_parallel_tutorial.ipynb")
    assert (site / published).is_file()


@pytest.mark.site
@pytest.mark.parametrize("how", ["make argument", "environment variable"])
def test_makefile_variables_work_both_ways(project_copy, tmp_path, how):
    settings = {"VERSION": "9.9", "LANGUAGES": "en", "BUILDDIR": str(tmp_path / "build")}
    command = [*MAKE_SITE, "html-noplot"]
    env = dict(os.environ)
    if how == "make argument":
        command += [f"{key}={value}" for key, value in settings.items()]
        for key in settings:
            env.pop(key, None)
    else:
        env.update(settings)
    result = subprocess.run(command, cwd=project_copy, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "/blob/gh-pages/9.9/en/_downloads/" in colab_link(tmp_path / "build" / "html" / TUTORIAL_PAGE)

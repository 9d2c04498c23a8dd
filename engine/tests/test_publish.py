"""Versioned publishing: `make docs` per version, side by side, atomic, and never over a bad build."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build, git, snapshot, tutorials_site
from tutorials_site.core import assets, files, languages
from tutorials_site.core.runs.records import VersionEntry
from tutorials_site.core.site import versions

PAGE = "beginner/data_parallel_tutorial.html"


def test_both_versions_side_by_side_with_the_site_files(published):
    docs = published / "docs"
    manifest = json.loads((docs / "versions.json").read_text())
    assert manifest["stable"] == "1.0"
    assert [v["name"] for v in manifest["versions"]] == ["1.0", "main"]
    for entry in manifest["versions"]:
        assert set(entry) == set(versions.ENTRY_KEYS) and entry["path"] == entry["name"] + "/"
        assert entry["languages"] == [lang.seg for lang in languages.ALL] and entry["torch"]
        for lang in languages.ALL:
            assert (docs / entry["name"] / lang.seg / PAGE).is_file()
    assert snapshot(docs / "stable") == snapshot(docs / "1.0")
    assert os.readlink(docs / "stable") == "1.0"  # a link, not a second copy of its files
    assert (docs / ".nojekyll").exists() and "Sitemap: " in (docs / "robots.txt").read_text()
    sitemap = (docs / "sitemap.xml").read_text()
    # Each page at its canonical address alone: a release's under stable/ (not 1.0/ too), main's nowhere (noindex).
    assert "/stable/ko/beginner/data_parallel_tutorial.html" in sitemap and "/1.0/" not in sitemap
    assert 'hreflang="zh-CN"' in sitemap and "/main/" not in sitemap
    main_page = (docs / "main" / "en" / PAGE).read_text()
    release_page = (docs / "1.0" / "en" / PAGE).read_text()
    assert '<meta name="robots" content="noindex">' in main_page and "noindex" not in release_page
    # One canonical link, one description; the canonical link, og:url and hreflang name the same version folder.
    for page, folder in ((release_page, "stable"), (main_page, "main")):
        url = f"https://pytorch-tutorials-site.github.io/tutorials/{folder}/en/{PAGE}"
        assert page.count('rel="canonical"') == 1 and f'<link rel="canonical" href="{url}"' in page
        assert f'<meta property="og:url" content="{url}">' in page and f'hreflang="en" href="{url}"' in page
        assert page.count('name="description"') == 1


def test_a_published_version_stays_within_its_size_budget(published):
    """Today's site (four languages) published as one version: at most 15 MB, with no font file a page cannot load
    (42 MB before: the theme's fonts, 9.4 MB per language, shipped unused)."""
    version = published / "docs" / "1.0"
    size = sum(path.stat().st_size for path in version.rglob("*") if path.is_file())
    assert size <= 15 * 2**20, f"{version}: {size / 2**20:.1f} MB"
    assert not [path for path in version.rglob("*") if path.suffix in assets.FONT_SUFFIXES]


def test_version_order_is_numeric_releases_first_then_main_then_branches():
    names = ["main", "1.9", "feature-x", "1.10", "2.0", "a-branch"]
    entries = [VersionEntry(name=n, label=n, release=versions.is_release(n), torch="", languages=(), built="",
                            path=f"{n}/") for n in names]
    assert [e.name for e in versions.order(entries)] == ["2.0", "1.10", "1.9", "main", "a-branch", "feature-x"]
    assert versions.stable_of(entries) == "2.0"
    assert versions.stable_of([e for e in entries if not e.release]) == "main"


def publish(published, pages, **env):
    return tutorials_site(published, "publish", f"PAGES={pages}", **env)


def test_republishing_one_version_leaves_the_other_byte_identical(published, gh_pages):
    before = snapshot(gh_pages / "1.0")
    assert publish(published, gh_pages).returncode == 0  # the last build is main
    assert snapshot(gh_pages / "1.0") == before
    changed = {line[3:].split("/")[0] for line in git(gh_pages, "status", "--porcelain").splitlines()}
    assert changed <= {"main", "versions.json"}
    assert not list(gh_pages.glob(".publish-*"))


# A publish killed before each of its changes to the tree, in one process that forks a publish for each: the child
# runs publish() with an audit hook (Python's own events, raised before each operation) counting what publish does
# to an entry of PAGES itself (copies a folder to it, deletes one, renames onto it, opens it for writing, or
# exchanges two folders) and exits at the N-th as SIGKILL would leave it; N=0 kills nowhere and counts the changes.
# The driver says (a JSON line) how each child ended; after each kill it waits for the test to have looked at the
# tree (a line on its input), then forks the next publish, without the hook, into that tree.
KILLER = """
import json, os, shutil, sys
from pathlib import Path
from tutorials_site.core.project import Project
from tutorials_site.core.site import publish as publishing

htmldir, tree, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
site = Project.read(Path.cwd())
info = publishing.validate(site, htmldir)  # the build, validated once (test_checks): every publish here is of it
publishing.validate = lambda *_: info

def in_pages(path, pages):
    return isinstance(path, (str, bytes, os.PathLike)) and Path(os.fsdecode(path)).is_absolute() \\
        and Path(os.fsdecode(path)).resolve().parent == pages

def forked_publish(pages, kill_at=None):
    \"\"\"How a child publishing into PAGES ended: its exit status, and the changes it counted (killed before
    change KILL_AT; None: no hook).\"\"\"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        changes = []
        def hook(event, args):
            if (event in ("shutil.copytree", "os.rename") and in_pages(args[1], pages)
                    or event in ("shutil.rmtree", "os.remove") and in_pages(args[0], pages)
                    or event == "open" and in_pages(args[0], pages) and args[2] & (os.O_WRONLY | os.O_RDWR)
                    or event == "ctypes.dlsym" and args[1] == "renameat2"):
                changes.append(event)
                if len(changes) == kill_at:
                    os._exit(137)
        if kill_at is not None:
            sys.addaudithook(hook)
        try:
            publishing.publish(site, htmldir, pages)
        except BaseException as error:
            os.write(2, f"{type(error).__name__}: {error}\\n".encode())
            os._exit(1)
        os.write(write, str(len(changes)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as counted:
        changes = counted.read()
    return {"status": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), "changes": int(changes or 0)}

def say(ended):
    print(json.dumps(ended), flush=True)

counted = forked_publish(shutil.copytree(tree, work / "counted", symlinks=True).resolve(), kill_at=0)
say(counted)
for at in range(1, counted["changes"] + 1):
    pages = shutil.copytree(tree, work / f"killed-{at}", symlinks=True).resolve()
    say({**forked_publish(pages, kill_at=at), "pages": str(pages)})
    sys.stdin.readline()
    say(forked_publish(pages))
"""


def test_a_publish_killed_at_any_step_leaves_a_serving_tree(published, gh_pages, tmp_path, subtests):
    before = snapshot(gh_pages)
    driver = subprocess.Popen([sys.executable, "-c", KILLER, str(published / "_build" / "html"), str(gh_pages),
                               str(tmp_path)], cwd=published, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ended():
        line = driver.stdout.readline()
        assert line, "the driver ended"  # its traceback is in the test's output
        return json.loads(line)

    try:
        counted = ended()
        assert counted["status"] == 0
        # At least: the version copied beside the tree, swapped in, the old one deleted, five files written and renamed.
        assert counted["changes"] >= 13
        for at in range(1, counted["changes"] + 1):
            with subtests.test(killed_before_change=at):
                killed = ended()
                try:
                    assert killed["status"] == 137
                    pages = Path(killed["pages"])
                    manifest = versions.load(pages / "versions.json")  # whole, old or new
                    for name in [entry.name for entry in manifest.versions] + ["stable"]:
                        for lang in languages.ALL:
                            assert (pages / name / lang.seg / PAGE).is_file(), name
                    after = snapshot(pages)
                    assert {k: v for k, v in after.items() if k.startswith("1.0/")} == \
                           {k: v for k, v in before.items() if k.startswith("1.0/")}
                finally:  # whatever failed, the driver goes on to the next publish, then the next kill
                    driver.stdin.write("looked\n")
                    driver.stdin.flush()
                    cleaned = ended()
                assert cleaned["status"] == 0  # and the next publish cleans up
                assert not list(pages.glob(".publish-*"))
    finally:
        driver.stdin.close()
        assert driver.wait(timeout=60) == 0


def test_a_publish_killed_while_writing_versions_json_leaves_it_whole_and_its_temporary_to_the_next(published, gh_pages):
    before = (gh_pages / "versions.json").read_bytes()
    killer = ("import os; from pathlib import Path; from tutorials_site.core import files; "
              "from tutorials_site.core.project import Project; from tutorials_site.core.site import publish as p; "
              "files.os.fsync = lambda fd: os._exit(137); "  # the data written, not yet renamed into place
              f"p.publish(Project.read(Path.cwd()), {str(published / '_build' / 'html')!r}, {str(gh_pages)!r})")
    result = subprocess.run([sys.executable, "-c", killer], cwd=published, capture_output=True, text=True)
    assert result.returncode == 137, result.stderr
    assert (gh_pages / "versions.json").read_bytes() == before
    [leftover] = gh_pages.glob(files.LEFTOVERS)
    assert leftover.name.startswith(".versions.json.")
    assert publish(published, gh_pages).returncode == 0
    assert list(gh_pages.glob(files.LEFTOVERS)) == [] and not list(gh_pages.glob(".publish-*"))


def test_a_corrupt_versions_json_is_reported_and_left_alone(published, gh_pages):
    (gh_pages / "versions.json").write_text('{"stable": "1.0", "versions": [')
    before = snapshot(gh_pages)
    result = publish(published, gh_pages)
    assert result.returncode != 0 and "unreadable or corrupt versions.json" in result.stderr
    assert snapshot(gh_pages) == before


def test_a_build_that_fails_validation_is_refused_and_the_target_untouched(published, gh_pages, tmp_path):
    before = snapshot(gh_pages)
    broken = tmp_path / "broken"
    shutil.copytree(published / "_build" / "html", broken)
    (broken / "en" / "beginner" / "index.html").unlink()
    shutil.rmtree(broken / "zh-cn")
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "publish", str(broken)],
                            cwd=published, capture_output=True, text=True, env={**os.environ, "PAGES": str(gh_pages)})
    assert result.returncode != 0
    assert "language(s) missing: zh-cn" in result.stderr and "beginner/index.html: no such file" in result.stderr
    noplot = tmp_path / "noplot"
    assert build(published, noplot, "--noplot").returncode == 0
    result = subprocess.run([sys.executable, "-m", "tutorials_site", "publish", str(noplot / "html")],
                            cwd=published, capture_output=True, text=True, env={**os.environ, "PAGES": str(gh_pages)})
    assert "built without executing the tutorials" in result.stderr and "no execution stamp" in result.stderr
    assert snapshot(gh_pages) == before


@pytest.mark.parametrize("name", ["../evil", "a/b", "with space", "stable"])
def test_a_version_name_with_path_characters_is_refused(published, tmp_path, name):
    result = tutorials_site(published, "html-noplot", VERSION=name, BUILDDIR=str(tmp_path), LANGUAGES="en")
    assert result.returncode != 0 and "is not a usable version name" in result.stdout + result.stderr


def test_old_addresses_are_sent_to_their_page_in_the_version_and_language_conf_py_names(tmp_path):
    from conftest import copy_project
    from tutorials_site.core.project import Project
    from tutorials_site.core.site import publish

    project = copy_project(tmp_path / "project")
    with open(project / "conf.py", "a", encoding="utf-8") as conf:
        conf.write('tutorials_root_version = "stable"\ntutorials_root_language = "ko"\n')
    site = Project.read(project)
    pages = tmp_path / "pages"
    for name in ("index.html", "a.html", "guide/b.html", "_static/c.html", "_downloads/d.html"):
        (pages / "1.0" / "ko" / name).parent.mkdir(parents=True, exist_ok=True)
        (pages / "1.0" / "ko" / name).write_text("<html><body>page</body></html>")
    (pages / "stable").symlink_to("1.0")
    entry = VersionEntry(name="1.0", label="1.0", release=True, path="1.0/", languages=("ko",), torch="", built="")
    manifest = versions.manifest([entry])
    found = publish.old_addresses(site, pages, manifest, "https://example.org/")
    # Every page, at the address it had before the site was versioned; the root's index and the build's own
    # folders stay the tree's.
    assert sorted(path.relative_to(pages).as_posix() for path in found) == ["a.html", "guide/b.html"]
    b = found[pages / "guide" / "b.html"]
    assert 'location.replace("../stable/ko/guide/b.html"' in b and 'url=../stable/ko/guide/b.html"' in b
    assert '<link rel="canonical" href="https://example.org/stable/ko/guide/b.html">' in b and "noindex" in b
    publish._write_old_addresses(pages, found, manifest)
    assert (pages / "guide" / "b.html").read_text() == b
    (pages / "1.0" / "ko" / "guide" / "b.html").unlink()  # gone from the version: its old address goes too
    publish._write_old_addresses(pages, publish.old_addresses(site, pages, manifest, "https://example.org/"), manifest)
    assert not (pages / "guide" / "b.html").exists() and (pages / "a.html").exists()
    assert (pages / "1.0" / "ko" / "a.html").read_text() == "<html><body>page</body></html>"  # never a version's


def test_a_root_version_or_language_the_site_has_not_is_refused(tmp_path):
    from conftest import copy_project
    from tutorials_site.core.project import Project
    from tutorials_site.core.site import publish

    project = copy_project(tmp_path / "project")
    with open(project / "conf.py", "a", encoding="utf-8") as conf:
        conf.write('tutorials_root_version = "2.0"\n')
    with pytest.raises(publish.PublishError, match=r"tutorials_root_version '2\.0'.*\(1\.0, stable\)"):
        publish.root_addresses(Project.read(project), versions.manifest([VersionEntry(
            name="1.0", label="1.0", release=True, path="1.0/", languages=("ko",), torch="", built="")]))

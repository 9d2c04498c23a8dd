"""Version names from git: vX.Y[.Z] tags give X.Y, branches give their name, VERSION overrides."""

import json
import subprocess

import pytest

from tutorials_site.core.runs.records import VersionEntry
from tutorials_site.core.site import versions


def entry(name, label=""):
    return VersionEntry(name=name, label=label or name, release=versions.is_release(name), torch="", languages=(),
                        built="", path=f"{name}/")


@pytest.fixture
def repo(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "first")
    return tmp_path, git


def test_branch_tag_and_override(repo):
    root, git = repo
    assert versions.current(root, "") == "main"
    git("checkout", "-q", "-b", "feature/faster-loader")
    assert versions.current(root, "") == "feature-faster-loader"
    git("tag", "v2.13.1")
    assert versions.current(root, "") == "2.13"
    assert versions.current(root, "1.0") == "1.0"


@pytest.mark.parametrize("name", ["../evil", "a/b", "with space", ".hidden"])
def test_a_version_name_with_path_characters_is_refused(repo, name):
    with pytest.raises(versions.VersionsError, match="not a usable version name"):
        versions.current(repo[0], name)


def test_releases_sort_as_versions_newest_first_then_main_then_branches_by_name():
    names = ["feature", "1.9", "main", "10.0", "0.99", "2.0", "1.10", "a-branch"]
    entries = [entry(n) for n in names]
    assert [e.name for e in versions.order(entries)] == ["10.0", "2.0", "1.10", "1.9", "0.99", "main", "a-branch",
                                                         "feature"]
    same = [entry("1.10", label="first"), entry("1.010")]  # one version written twice: kept in the given order
    assert versions.order(same) == same and versions.order(same[::-1]) == same[::-1]


@pytest.mark.parametrize("change, message", [
    (lambda e: {**e, "extra": 1}, "versions[0]: unknown field 'extra'"),
    (lambda e: {k: v for k, v in e.items() if k != "torch"}, "versions[0]: no 'torch'"),
    (lambda e: {**e, "release": "yes"}, "versions[0].release: 'yes' is not of type bool"),
    (lambda e: {**e, "path": "../"}, "version '1.0' has path '../', not '1.0/'"),
])
def test_versions_json_is_read_as_typed_entries_and_a_damaged_one_refused(tmp_path, change, message):
    path = tmp_path / "versions.json"
    path.write_text(json.dumps(versions.manifest([entry("1.0")]).to_dict()))
    assert versions.load(path) == versions.manifest([entry("1.0")])  # read back as written
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "versions": [change(data["versions"][0])]}))
    with pytest.raises(versions.VersionsError) as raised:
        versions.load(path)
    assert str(raised.value) == (f"{path}: unreadable or corrupt versions.json ({message}); fix or remove it by hand, "
                                 "it was not changed")

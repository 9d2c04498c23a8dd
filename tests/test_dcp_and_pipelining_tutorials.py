"""The distributed-checkpoint and pipeline-parallel tutorials of the parallel track, each run through the runner
(in this machine's sandbox) from a copy in a temporary folder: their CPU path on a machine without a GPU (two
ranks over gloo), a rank per GPU where there are GPUs. What their ranks print, tagged and in rank order, what they
check, and the pipeline's timeline figure."""

import re
import shutil

import pytest

from tutorials_site.commands.execute import RunOptions, run_tutorial, sandbox_here
from tutorials_site.core.layout import ROOT

SHIPPED = ROOT / "beginner_source" / "parallel"  # the shipped tutorials, copied: a test never runs them in place


@pytest.fixture(scope="module")
def world(machine):
    """The ranks the tutorials start on this machine: one per GPU, two on the CPU."""
    return machine.gpus or 2


@pytest.fixture(scope="module")
def ran(runs_tutorials, tmp_path_factory):
    """ran(name) -> (the run's outcome, its run folder): the shipped tutorial NAME, copied and run once per module."""
    outcomes = {}

    def ran(name):
        if not (SHIPPED / f"{name}.py").is_file():  # renamed or removed: nothing of the site's left to test
            pytest.skip(f"the site ships no {SHIPPED.name}/{name}.py")
        if name not in outcomes:
            folder = tmp_path_factory.mktemp(name)
            source = shutil.copy(SHIPPED / f"{name}.py", folder / f"{name}.py")
            options = RunOptions.defaults(ROOT, "beginner/parallel/images")
            outcome = run_tutorial(source, folder / "run", folder, options, timeout=300,
                                   label=f"beginner_source/parallel/{name}.py", confined=sandbox_here(ROOT, ()))
            assert outcome.ok, outcome.error
            outcomes[name] = outcome, folder / "run"
        return outcomes[name]

    return ran


def outputs(outcome):
    return ["".join(block.texts) for block in outcome.result.blocks]


def ranks_in_order(text, world):
    """Every line of TEXT is tagged with a rank, and the ranks come in order, each in one run of lines."""
    tags = [re.match(r"\[rank (\d+)\] ", line) for line in text.splitlines()]
    assert all(tags), text
    order = [int(tag[1]) for tag in tags]
    assert order == sorted(order) and set(order) == set(range(world)), text


def test_dcp_saves_from_every_rank_and_loads_equal_in_one_process_and_resharded(ran, world):
    saved, listing, alone, resharded = [text for text in outputs(ran("4_dcp_tutorial")[0]) if text]
    for block in (saved, resharded):
        ranks_in_order(block, world)
    for rank in range(world):
        assert re.search(rf"^\[rank {rank}\] saved my shards in \d+ ms$", saved, re.M), saved
        assert re.search(rf"^\[rank {rank}\]   0\.weight   whole \[32, 16\]\s+here \[\d+, 16\]$", saved, re.M)
        assert f"[rank {rank}] every piece equal to the saved one: True" in resharded
        assert re.search(rf"^\[rank {rank}\]   2\.weight   Shard\(dim=1\)\s+here \[4, \d+\]$", resharded, re.M)
    files = re.findall(r"^(\S+)\s+(\d+) bytes$", listing, re.M)
    assert sorted(name for name, _ in files) == sorted([".metadata", *(f"__{rank}_0.distcp" for rank in range(world))])
    assert all(int(size) > 0 for _, size in files)
    assert alone.strip() == "one process: 4 tensors loaded, all equal to the saved ones: True"


def test_pipelining_matches_the_uncut_model_with_both_schedules_and_draws_their_timeline(ran, world):
    outcome, run = ran("5_pipelining_tutorial")
    (printed,) = [text for text in outputs(outcome) if text]
    steps = re.split(r"(?m)^(?=\[rank 0\] Schedule)", printed)
    assert steps[0] == "" and len(steps) == 3, printed
    for schedule, step in zip(("ScheduleGPipe", "Schedule1F1B"), steps[1:]):
        ranks_in_order(step, world)
        for rank in range(world):
            assert f"[rank {rank}] {schedule}: stage {rank} of {world}," in step
            assert f"[rank {rank}] gradients of my layers equal the uncut model's: True" in step
        last = world - 1
        pipeline = float(re.search(rf"^\[rank {last}\] mean loss of the \d+ micro-batches: (\d+\.\d+)$", step, re.M)[1])
        uncut = float(re.search(rf"^\[rank {last}\] loss of the uncut model:\s+(\d+\.\d+)$", step, re.M)[1])
        assert abs(pipeline - uncut) < 1e-5, step
    (images,) = [list(block.images) for block in outcome.result.blocks if block.images]
    assert images == ["beginner/parallel/images/sphx_glr_5_pipelining_tutorial_001.png"]
    assert (run / "page" / images[0]).read_bytes().startswith(b"\x89PNG")
